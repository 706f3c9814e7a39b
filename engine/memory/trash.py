"""Deleting a memory file into memdeck's trash (``<data dir>/trash/<time>/<rel>``, with its record), listing
what is there, and putting a file back (never over a file)."""

from __future__ import annotations

import json
import os
import shutil
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from engine.clock import Clock
from engine.config import Config
from engine.errors import MemdeckError, PathRefused
from engine.memory.names import aside_rel
from engine.textio import atomic_write_text, create_new_file, fsync_dir, make_private_dir
from engine.workspace import resolve_memory_path

TRASH_DIR = "trash"
"""memdeck's data-dir folder for deleted memory files: ``trash/<timestamp>/<rel>``, each with its record."""

_TRASH_RECORD = "deleted.json"  # beside the file's rel in its entry folder (a rel always ends in .md)


@dataclass(frozen=True)
class Deleted:
    """A memory file in memdeck's trash.

    Attributes:
        rel: the memory file it was.
        path: where it was (and goes back to).
        trashed: where it is now: ``<data dir>/trash/<entry>/<rel>``.
        entry: the trash entry's name (its deletion time, ``YYYYmmdd-HHMMSS-ffffff``); :func:`restore_deleted`
            takes it.
        deleted_at: when it was deleted (UTC).
    """

    rel: str
    path: Path
    trashed: Path
    entry: str
    deleted_at: datetime


def trash_dir(config: Config) -> Path:
    """memdeck's trash: ``<data dir>/trash``."""
    return config.home / TRASH_DIR


def _workspace_key(config: Config) -> str:
    return str(config.workspace.resolve())


def _move_file(source: Path, target: Path) -> None:
    """Move a file to a path that does not exist, atomically on one file system (never over a file).

    Across file systems the bytes are copied first (fsynced), then the source is removed only if it did not
    change meanwhile (an agent appending to it must not lose the append).

    Raises:
        MemdeckError: the target exists, or the source changed while it was copied (nothing removed).
        OSError: the move failed (the source is intact).
    """
    try:
        os.link(source, target)  # one file system: atomic, and never over an existing file
    except FileExistsError:
        raise MemdeckError(f"{target} already exists") from None
    except OSError:
        before = os.lstat(source)
        with open(source, "rb") as fh:
            data = fh.read()
        if not create_new_file(target, data):
            raise MemdeckError(f"{target} already exists") from None
        after = os.lstat(source)
        if (after.st_ino, after.st_size, after.st_mtime_ns) != (before.st_ino, before.st_size, before.st_mtime_ns):
            os.unlink(target)
            raise MemdeckError(f"{source} changed while it was moved; nothing was removed") from None
    os.unlink(source)
    fsync_dir(source.parent)


def delete_note(config: Config, rel: str, now: datetime | None = None) -> Deleted:
    """Delete a memory file by moving it to memdeck's trash (``<data dir>/trash/<time>/<rel>``), recoverably.

    The next sync drops it from the index; :func:`restore_deleted` puts it back.

    Raises:
        PathRefused: not a memory file, or not a regular file.
        OSError: it cannot be moved (e.g. it is gone already); the file is where it was.
    """
    rel, path = resolve_memory_path(config, rel)
    if not stat.S_ISREG(os.lstat(path).st_mode):  # FileNotFoundError when it is gone
        raise PathRefused(f"{rel} is not a regular file")
    when = (now if now is not None else Clock.for_config(config).now()).astimezone(UTC)
    root = trash_dir(config)
    make_private_dir(root)
    for n in range(1, 100):
        entry = f"{when:%Y%m%d-%H%M%S-%f}" + ("" if n == 1 else f"-{n}")
        try:
            (root / entry).mkdir(mode=0o700)
        except FileExistsError:
            continue
        break
    else:
        raise MemdeckError(f"no free trash entry in {root}")
    folder = root / entry
    trashed = folder / aside_rel(config, rel)
    record = {"version": 1, "workspace": _workspace_key(config), "rel": rel, "path": str(path),
              "deleted_at": when.isoformat()}
    try:
        make_private_dir(trashed.parent)
        atomic_write_text(folder / _TRASH_RECORD, json.dumps(record, indent=2, ensure_ascii=False) + "\n",
                          mode=0o600)
        _move_file(path, trashed)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)  # ours, just made: the file is still where it was
        raise
    return Deleted(rel, path, trashed, entry, when)


def list_deleted(config: Config) -> list[Deleted]:
    """This workspace's memory files in the trash, the most recently deleted first (unreadable entries skipped)."""
    root = trash_dir(config)
    try:
        names = sorted(os.listdir(root), reverse=True)
    except OSError:
        return []
    workspace = _workspace_key(config)
    found: list[Deleted] = []
    for entry in names:
        try:
            record = json.loads((root / entry / _TRASH_RECORD).read_text(encoding="utf-8"))
            if record.get("workspace") != workspace:
                continue
            rel = str(record["rel"])
            deleted = Deleted(rel, Path(record["path"]), root / entry / aside_rel(config, rel), entry,
                              datetime.fromisoformat(str(record["deleted_at"])))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
        if os.path.isfile(deleted.trashed):
            found.append(deleted)
    return found


def restore_deleted(config: Config, entry: str | None = None) -> Deleted:
    """Put a deleted memory file back where it was (the most recent deletion by default); never over a file.

    Raises:
        MemdeckError: nothing to restore, or a file of that name exists again (the trashed one stays).
        PathRefused: the old path is no longer a memory file (e.g. a symlink on the way now).
        OSError: the move failed (the trashed file stays).
    """
    deleted = list_deleted(config)
    chosen = next((d for d in deleted if entry is None or d.entry == entry), None)
    if chosen is None:
        raise MemdeckError("nothing to restore: the trash has no deleted memory file of this workspace"
                           if entry is None else f"no trash entry {entry!r} for this workspace")
    rel, path = resolve_memory_path(config, chosen.rel)
    if os.path.lexists(path):
        raise MemdeckError(f"{rel} exists again; the deleted version stays in {chosen.trashed}")
    path.parent.mkdir(parents=True, exist_ok=True)
    _move_file(chosen.trashed, path)
    shutil.rmtree(trash_dir(config) / chosen.entry, ignore_errors=True)  # the record and empty folders
    return chosen
