"""Recovery copies: unsaved editor text kept in memdeck's data dir when the TUI is stopped by a signal.

One JSON file per buffer in ``<data dir>/recovery/``, written atomically with mode 0600 (it holds memory text):
the workspace and the note's rel, the text, why and when it was kept, and the stamp (mtime, size, SHA-256) of
the note as the editor had read it — so the next start can tell whether the note changed on disk since.
Nothing in the data dir is indexed, so a copy is never found as a duplicate memory.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from engine.clock import Clock
from engine.config import Config
from engine.errors import MemdeckError
from engine.textio import DiskStamp, atomic_write_bytes, make_private_dir, read_stamp

RECOVERY_DIR = "recovery"
"""memdeck's data-dir folder for recovery copies."""

RECOVERY_VERSION = 1
MAX_RECOVERY_BYTES = 64 * 1024 * 1024  # the editor refuses files this big long before; anything bigger is not ours

log = logging.getLogger(__name__)

DiskState = Literal["unchanged", "changed", "missing", "new"]
"""The note now, against the stamp kept with the copy: ``new`` the note did not exist when it was edited."""


@dataclass(frozen=True)
class RecoveryCopy:
    """One kept buffer.

    Attributes:
        id: the copy's name in the recovery folder (what :func:`discard_recovery` takes).
        rel: the note's path as the editor named it (workspace-relative, or absolute for an extra path).
        text: the unsaved text.
        reason: why it was kept (``SIGTERM``, ``SIGHUP``…).
        saved_at: when it was kept (the wall time in ``[memory] timezone``, ISO 8601, no offset).
        original: the note's stamp when the editor read it (None: the note did not exist yet).
        path: the copy's file.
    """

    id: str
    rel: str
    text: str
    reason: str
    saved_at: str
    original: DiskStamp | None
    path: Path


@dataclass(frozen=True)
class RecoveryListing:
    """This workspace's recovery copies, and the files in the recovery folder that could not be read.

    Attributes:
        copies: the copies, oldest first.
        unreadable: ``(path, why)`` of each copy that is damaged or names no memory file (left where it is).
    """

    copies: list[RecoveryCopy]
    unreadable: list[tuple[Path, str]]


class RecoveryError(MemdeckError):
    """A recovery copy cannot be written or removed."""


def recovery_dir(config: Config) -> Path:
    """The folder of recovery copies: ``recovery/`` in memdeck's data dir."""
    return config.home / RECOVERY_DIR


def _workspace_key(config: Config) -> str:
    return str(Path(config.workspace).expanduser().resolve())


def save_recovery(config: Config, rel: str, text: str, original: DiskStamp | None, reason: str,
                  now: datetime | None = None) -> Path:
    """Keep an unsaved buffer; returns the copy's path (a new file each time: never over another copy).

    Raises:
        OSError: the copy cannot be written (the data dir is not writable, the disk is full).
    """
    when = now
    if when is None:
        try:
            when = Clock.for_config(config).now()  # the one clock: its day names the copy
        except ValueError:  # a bad MEMDECK_TODAY/MEMDECK_NOW must not cost the unsaved text
            when = datetime.now()
    folder = recovery_dir(config)
    make_private_dir(folder)
    digest = hashlib.sha256(f"{_workspace_key(config)}\0{rel}".encode()).hexdigest()[:12]
    record: dict[str, Any] = {
        "version": RECOVERY_VERSION,
        "workspace": _workspace_key(config),
        "rel": rel,
        "reason": reason,
        "saved_at": when.replace(tzinfo=None).isoformat(timespec="seconds"),  # the wall time, as the name
        "original": None if original is None else {
            "mtime_ns": original.mtime_ns, "size": original.size, "sha256": original.digest},
        "text": text,
    }
    # ensure_ascii: a lone surrogate in the buffer is kept as its escape, never an encoding error here
    data = json.dumps(record, ensure_ascii=True, indent=1).encode("ascii")
    for n in range(1, 100_000):  # a new name per copy, however many a second
        target = folder / f"{when:%Y%m%d-%H%M%S}-{digest}-{os.getpid()}-{n:05d}.json"  # names sort oldest first
        if not target.exists():
            atomic_write_bytes(target, data, mode=0o600)
            return target
    raise RecoveryError(f"no free name for a recovery copy of {rel} in {folder}")


def list_recovery(config: Config) -> list[RecoveryCopy]:
    """The recovery copies of this workspace, oldest first (see :func:`recovery_listing`). Never raises."""
    return recovery_listing(config).copies


def recovery_listing(config: Config) -> RecoveryListing:
    """The recovery copies of this workspace, and the unreadable ones. Never raises.

    A copy that is not valid JSON, lacks a field, or names a path that is not a memory file of this workspace
    (a hand-edited or damaged copy) is listed as unreadable — logged, and left where it is for the user to look
    at — never offered: recovering it could only fail, at every start. Copies of other workspaces are not listed.
    """
    # deferred: the workspace rules pull in the index modules
    from engine.workspace import resolve_memory_path

    folder = recovery_dir(config)
    try:
        names = sorted(p for p in folder.iterdir() if p.suffix == ".json" and not p.name.startswith("."))
    except OSError:
        return RecoveryListing([], [])
    workspace = _workspace_key(config)
    listing = RecoveryListing([], [])
    for path in names:
        try:
            copy = _read(path)
            if copy is not None and copy[0] == workspace:
                resolve_memory_path(config, copy[1].rel)
        except (OSError, ValueError, KeyError, TypeError, MemdeckError) as exc:
            log.warning("skipping the unreadable recovery copy %s: %s", path, exc)
            listing.unreadable.append((path, str(exc) or type(exc).__name__))
            continue
        if copy is not None and copy[0] == workspace:
            listing.copies.append(copy[1])
    return listing


def _read(path: Path) -> tuple[str, RecoveryCopy] | None:
    if path.stat().st_size > MAX_RECOVERY_BYTES:
        raise ValueError("too big for a recovery copy")
    record = json.loads(path.read_text(encoding="ascii"))
    if not isinstance(record, dict) or record.get("version") != RECOVERY_VERSION:
        return None
    original = record["original"]
    stamp = None if original is None else DiskStamp(int(original["mtime_ns"]), int(original["size"]),
                                                   str(original["sha256"]))
    copy = RecoveryCopy(path.stem, str(record["rel"]), str(record["text"]), str(record["reason"]),
                        str(record["saved_at"]), stamp, path)
    return str(record["workspace"]), copy


def recovery_disk_state(config: Config, copy: RecoveryCopy) -> DiskState:
    """Whether the note changed on disk since the copy's text was read from it (by content, not mtime alone)."""
    # deferred: the workspace rules pull in the index modules
    from engine.workspace import resolve_memory_path

    try:
        _, path = resolve_memory_path(config, copy.rel)
    except MemdeckError:
        return "missing"
    now = read_stamp(path)
    if copy.original is None:
        return "new" if now is None else "changed"
    if now is None:
        return "missing"
    return "unchanged" if now.digest == copy.original.digest else "changed"


def discard_recovery(config: Config, copy_id: str) -> None:
    """Remove a recovery copy (one already gone is fine).

    Raises:
        RecoveryError: ``copy_id`` is not a copy's name, or it cannot be removed.
    """
    if not copy_id or "/" in copy_id or "\\" in copy_id or copy_id.startswith("."):
        raise RecoveryError(f"not a recovery copy: {copy_id!r}")
    try:
        (recovery_dir(config) / f"{copy_id}.json").unlink(missing_ok=True)
    except OSError as exc:
        raise RecoveryError(f"cannot remove the recovery copy {copy_id}: {exc}") from exc
