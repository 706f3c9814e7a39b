"""Memory notes: where daily notes live and their one first line, dated-note names, topics, session notes,
and reading, creating, appending to, saving, renaming and deleting notes (every write atomic, none over
another writer's change)."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo
from pathlib import Path

from engine.config import Config
from engine.errors import MemdeckError, PathRefused
from engine.health.secrets import redact_secrets
from engine.lexicon import FUNCTION_WORDS as FUNCTION_WORDS  # drafting reads it here
from engine.lexicon import SLUG_STOP_WORDS
from engine.sessions.model import Transcript
from engine.textio import (
    UTF8_LF,
    ChangedOnDisk,
    DiskStamp,
    TextFormat,
    atomic_append,
    atomic_write_text,
    clean_note_text,
    create_new_file,
    decode_bytes,
    encode_edit,
    fsync_dir,
    make_private_dir,
    read_stamp,
    read_text_file,
    replace_if_unchanged,
    stamp_bytes,
)
from engine.workspace import ROOT_MEMORY_FILES, resolve_memory_path

NOTE_MESSAGE_CHARS = 4000
SLUG_MAX_CHARS = 30


class FlushError(MemdeckError):
    """A flush or session note could not be written (nothing was changed)."""


class SaveConflict(MemdeckError):
    """The file changed on disk since the editor read it; nothing was written.

    Attributes:
        rel: the memory file.
        disk_text: what is on disk now (None: the file is gone).
        stamp: the disk's stamp now (None: the file is gone).
    """

    def __init__(self, rel: str, disk_text: str | None, stamp: DiskStamp | None) -> None:
        super().__init__(f"{rel} changed on disk since it was opened")
        self.rel = rel
        self.disk_text = disk_text
        self.stamp = stamp


@dataclass(frozen=True)
class Note:
    """A memory file read for editing (any bytes: undecodable ones are counted, binary files flagged).

    ``format`` is how the file stores its text (``format.label``: ``UTF-16 LE · BOM · CRLF``); :func:`save_note`
    keeps it, and the bytes of every line the new text did not change. ``nul``: the file has NUL bytes somewhere
    (not in ``text``; ``binary`` looks at the first 8 KiB only).
    """

    rel: str
    path: Path
    text: str
    stamp: DiskStamp | None
    decode_errors: int = 0
    binary: bool = False
    format: TextFormat = UTF8_LF
    nul: bool = False


@dataclass(frozen=True)
class SaveResult:
    """A save that happened, and whether the new text is searchable yet."""

    rel: str
    stamp: DiskStamp
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Appended:
    """Text appended to a memory file: where it landed (1-based lines, the new heading included)."""

    rel: str
    path: Path
    start_line: int
    end_line: int
    created: bool

    @property
    def citation(self) -> str:
        """``memory/2026-01-12.md#L4-L9`` (``#L4`` for one line)."""
        if self.start_line == self.end_line:
            return f"{self.rel}#L{self.start_line}"
        return f"{self.rel}#L{self.start_line}-L{self.end_line}"


# ---------------------------------------------------------------------------------------------
# Dated notes: the daily log and session notes

DATED_NOTE = re.compile(r"^memory/([0-9]{4})-([0-9]{2})-([0-9]{2})(?:-([^/]+))?\.md$")
"""The one rule for dated notes: ``memory/YYYY-MM-DD.md`` (a daily note) or ``memory/YYYY-MM-DD-<slug>.md``
(a session note), in ASCII digits (OpenClaw's names). Groups: year, month, day, slug (None for a daily note)."""

_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


@dataclass(frozen=True)
class DatedNote:
    """What a dated note's name says: its day, and the slug of a session note (None for the daily note)."""

    day: date
    slug: str | None = None

    @property
    def is_daily(self) -> bool:
        """True for ``memory/YYYY-MM-DD.md`` itself."""
        return self.slug is None


def dated_note(rel: str) -> DatedNote | None:
    """Read a dated note's name (see :data:`DATED_NOTE`); None for other files and impossible dates."""
    match = DATED_NOTE.match(rel)
    if match is None:
        return None
    try:
        day = date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return None
    return DatedNote(day, match.group(4))


# A name that reads as a date: a 4-digit year, then month and day of 1 or 2 digits in any script (``2026-1-5``,
# full-width ``２０２６-１１-２７``), before ``.md`` or a ``-slug``.
_DATED_LOOKING = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})(?=[-.])")
_CANONICAL_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def check_dated_name(rel: str) -> None:
    """Refuse a name a write would make but no date rule would read as meant.

    - a name that reads as a date but names no real day (``memory/2026-13-45.md``, ``2026-02-30-x.md``): a daily
      note for a day that does not exist, never "today", never found by a date;
    - a date not written ``YYYY-MM-DD`` in ASCII digits (``memory/2026-1-5.md``, full-width digits): neither
      memdeck nor OpenClaw would take it for that day's note; the message names the form that is;
    - a hidden or blank name (``memory/.md``, ``memory/.x.md``, ``memory/ .md``): the scan and the watcher skip
      dot files, so what is written there would never be found.

    Raises:
        PathRefused: saying what is wrong and what a name looks like.
    """
    parts = rel.split("/")
    name = parts[-1]
    if any(part.startswith(".") for part in parts) or not name.removesuffix(".md").strip():
        raise PathRefused(f"path refused: {rel!r} is a hidden or blank name, which the index never reads; "
                          "name the note with letters or digits (memory/<topic>.md)")
    match = _DATED_LOOKING.match(name)
    if match is None:
        return
    try:
        day = date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        raise PathRefused(
            f"path refused: {rel} is named for {match.group()}, which is not a calendar date; "
            "dated notes are memory/YYYY-MM-DD.md (or memory/YYYY-MM-DD-<slug>.md) for a real day"
        ) from None
    if _CANONICAL_DATE.fullmatch(match.group()) is None:
        raise PathRefused(
            f"path refused: {rel} writes the date {match.group()} in a form no date rule reads; "
            f"that day's note is {daily_rel(day)} (or memory/{day:%Y-%m-%d}-<slug>.md)"
        )


def daily_rel(day: date) -> str:
    """The daily note for ``day``: ``memory/YYYY-MM-DD.md``."""
    return f"memory/{day:%Y-%m-%d}.md"


def daily_file(workspace: Path, day: date) -> Path:
    """The daily log for ``day``: ``<workspace>/memory/YYYY-MM-DD.md``."""
    return Path(workspace) / daily_rel(day)


def daily_heading(day: date) -> str:
    """The first line of every new daily note, whoever creates it: ``# 2026-11-27 — Friday, 27 November 2026``.

    English names whatever the locale, as the demo's notes have them (``%A``/``%B`` would follow the locale).
    """
    return f"# {day:%Y-%m-%d} — {_WEEKDAYS[day.weekday()]}, {day.day} {_MONTHS[day.month - 1]} {day.year}"


def _heading_for(rel: str) -> str | None:
    dated = dated_note(rel)
    return daily_heading(dated.day) if dated is not None and dated.is_daily else None


# ---------------------------------------------------------------------------------------------
# Topics


def topic_rel(name: str) -> str:
    """Turn what the user typed into ``memory/<name>.md`` (sub-folders allowed, nothing else).

    Raises:
        PathRefused: nothing usable is left of the name.
    """
    text = name.strip().replace("\\", "/")
    if text.startswith("memory/"):
        text = text[len("memory/") :]
    if text.endswith(".md"):
        text = text[:-3]
    parts = []
    for part in text.split("/"):
        slug = re.sub(r"[^\w.-]+", "-", part.strip(), flags=re.UNICODE).strip("-.").lower()
        if slug:
            parts.append(slug)
    if not parts:
        raise PathRefused("a topic needs a name (letters, digits, - or _)")
    return "memory/" + "/".join(parts) + ".md"


def topic_heading(rel: str) -> str:
    """A new topic file's first line: ``# Travel plans`` for ``memory/travel-plans.md``."""
    title = Path(rel).stem.replace("-", " ").replace("_", " ").strip().capitalize() or "Topic"
    return f"# {title}"


# ---------------------------------------------------------------------------------------------
# Reading and writing notes

_APPEND_LOCK = threading.Lock()  # one append at a time in this process, so the line numbers reported are ours


def _line_count(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def read_note(config: Config, rel: str) -> Note:
    """Read a memory file for the editor (any bytes; a missing file reads as empty, with no stamp).

    Raises:
        PathRefused: not a memory file.
        OSError: the file exists but cannot be read.
    """
    rel, path = resolve_memory_path(config, rel)
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            data = fh.read()
    except FileNotFoundError:
        return Note(rel, path, "", None)
    decoded = decode_bytes(data)
    return Note(rel, path, decoded.text, stamp_bytes(data, st), decoded.errors, decoded.binary, decoded.format,
                decoded.nul)


def disk_stamp(config: Config, rel: str) -> DiskStamp | None:
    """A memory file's stamp now (None: it does not exist).

    Raises:
        PathRefused: not a memory file.
    """
    return read_stamp(resolve_memory_path(config, rel)[1])


def save_note(config: Config, rel: str, text: str | bytes, expected: DiskStamp | None) -> SaveResult:
    """Write a note's new text atomically, unless the file changed on disk since ``expected`` was read.

    The file keeps its encoding, byte-order mark and line endings, and every line ``text`` did not change keeps its
    exact bytes (:func:`engine.textio.encode_edit`): saving a note's :attr:`Note.text` unchanged writes the same
    bytes, and one edited line changes only that line. ``bytes`` are written as they are (the review's undo).

    Raises:
        SaveConflict: the file on disk is not what the editor read (nothing written); it carries the disk text.
        PathRefused: not a memory file.
        OSError: the write failed (the old file is intact).
    """
    rel, path = resolve_memory_path(config, rel)
    try:
        stamp = replace_if_unchanged(path, text, expected)
    except ChangedOnDisk as exc:
        disk_text = read_text_file(path).text if exc.stamp is not None else None
        raise SaveConflict(rel, disk_text, exc.stamp) from None
    return SaveResult(rel, stamp)


CONFLICT_COPIES_DIR = "conflict-copies"
"""memdeck's data-dir folder for "keep mine as a copy": outside the workspace, so neither memdeck nor OpenClaw
indexes a copy as a duplicate memory."""

TRASH_DIR = "trash"
"""memdeck's data-dir folder for deleted memory files: ``trash/<timestamp>/<rel>``, each with its record."""

_TRASH_RECORD = "deleted.json"  # beside the file's rel in its entry folder (a rel always ends in .md)


def _aside_rel(config: Config, rel: str) -> str:
    """Where a memory file's rel goes under a data-dir folder: the rel itself; ``extra/<path>`` for extra paths."""
    return rel if not Path(rel).is_absolute() else "extra/" + Path(rel).as_posix().lstrip("/")


def write_copy(config: Config, rel: str, text: str, now: datetime | None = None) -> Path:
    """Keep text aside in memdeck's data dir: ``conflict-copies/<rel minus .md>.mine-YYYYmmdd-HHMMSS.md``.

    Not next to the note: there the copy would be memory too, indexed (by OpenClaw as well) and found as a
    duplicate of the note. Never over a file. The copy is written like the note on disk (encoding, BOM, line
    endings). Returns the copy's path.

    Raises:
        PathRefused: not a memory file.
        MemdeckError: no free name.
        OSError: the copy cannot be written.
    """
    rel, path = resolve_memory_path(config, rel)
    when = now or datetime.now()
    aside = config.home / CONFLICT_COPIES_DIR / _aside_rel(config, rel)
    stem = aside.name[:-3] if aside.name.endswith(".md") else aside.name
    try:
        disk: bytes | None = path.read_bytes()
    except OSError:  # gone (or unreadable): the copy is plain UTF-8
        disk = None
    # What saving over the disk's version would have written: its encoding, BOM and line endings, and the exact
    # bytes of the lines both share, so the copy diffs against the note line by line.
    data = encode_edit(disk, text)
    make_private_dir(aside.parent)
    for n in range(1, 100):
        target = aside.with_name(f"{stem}.mine-{when:%Y%m%d-%H%M%S}{'' if n == 1 else f'-{n}'}.md")
        if create_new_file(target, data):
            return target
    raise MemdeckError(f"no free name for a copy of {rel}")


def _create(config: Config, rel: str, text: str) -> tuple[str, bool]:
    rel, path = resolve_memory_path(config, rel)
    path.parent.mkdir(parents=True, exist_ok=True)
    return rel, create_new_file(path, text.encode("utf-8"))


def create_daily(config: Config, day: date) -> tuple[str, bool]:
    """The daily note for ``day``, created with :func:`daily_heading` when missing. Returns ``(rel, created)``.

    Raises:
        PathRefused: the memory folder goes through a symlink.
        OSError: the note cannot be created.
    """
    return _create(config, daily_rel(day), daily_heading(day) + "\n\n")


def create_topic(config: Config, name: str) -> str:
    """A new topic file ``memory/<name>.md`` with a heading (see :func:`topic_rel`); returns its rel.

    Raises:
        MemdeckError: it exists already (nothing is overwritten).
        PathRefused: the name leaves nothing usable, or the path is refused.
        OSError: it cannot be created.
    """
    wanted = topic_rel(name)
    rel, created = _create(config, wanted, topic_heading(wanted) + "\n\n")
    if not created:
        raise MemdeckError(f"{rel} already exists")
    return rel


# White space and the zero-width characters that draw nothing (a text of only these appends nothing one can see).
_INVISIBLE = re.compile(r"[\s\u200b-\u200d\u2060\ufeff]+")


def append_or_create(path: Path, body: str, heading: str | None = None) -> tuple[str, bool]:
    """Append ``body`` to a note atomically (after a blank line), or create the note with ``heading`` first.

    The existing bytes are never changed (see :func:`engine.textio.atomic_append`).

    Returns:
        ``(written, created)``: the text that was added (the heading included when the note was created).

    ``body`` is made plain first (:func:`engine.textio.clean_note_text`: no control characters, every line
    break a ``\n``), so the note still opens for editing and the lines counted here are the editor's.

    Raises:
        MemdeckError: nothing is left of ``body`` to append.
        WriteRefused: the note is a symlink or not a regular file, or kept changing.
        OSError: the folder cannot be written.
    """
    body = clean_note_text(body).strip("\n")
    if not _INVISIBLE.sub("", body):
        raise MemdeckError("nothing to append: the text is empty (control characters are not written)")
    if not os.path.lexists(path):
        text = f"{heading}\n\n{body}" if heading else body
        path.parent.mkdir(parents=True, exist_ok=True)
        if create_new_file(path, (text if text.endswith("\n") else text + "\n").encode("utf-8")):
            return text, True
    atomic_append(path, body)
    return body, False


def append_note(config: Config, rel: str, text: str) -> Appended:
    """Append text to a memory file (a missing daily note is created with its heading), atomically.

    The text is made plain first (see :func:`append_or_create`).

    Raises:
        PathRefused: not a memory file, or a dated name that is no real day (``memory/2026-13-45.md``).
        MemdeckError: nothing is left of the text to append.
        WriteRefused: the file is a symlink or not a regular file, or kept changing.
        OSError: it cannot be written.
    """
    rel, path = resolve_memory_path(config, rel)
    check_dated_name(rel)
    with _APPEND_LOCK:
        written, created = append_or_create(path, text, _heading_for(rel))
        total = _line_count(read_text_file(path).text)
    start = total - _line_count(written + "\n") + 1
    return Appended(rel, path, start, total, created)


@dataclass(frozen=True)
class RenamePlan:
    """What a rename will do, worked out before it is asked for, so a confirmation can show it exactly.

    Attributes:
        rel: the file now.
        new_rel: the file it becomes (``.md`` added, the name cleaned: see ``rules``).
        rules: each rule that changed what was typed, in words (``.md added: memory files end in .md``).
    """

    rel: str
    new_rel: str
    rules: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        """Where the new name is: ``root`` (the workspace root), else its folder (``memory/``, ``memory/x/``)."""
        if "/" not in self.new_rel:
            return "root"
        return self.new_rel.rsplit("/", 1)[0] + "/"


def plan_rename(config: Config, rel: str, new_name: str) -> RenamePlan:
    """Work out where a rename of ``rel`` to what the user typed goes, refusing what would surprise them.

    - ``MEMORY.md`` / ``memory.md``: the root file of that name.
    - A ``memory/…`` path: exactly there (each part cleaned as :func:`topic_rel` does).
    - A plain name renames within the file's own folder: a root file stays at the root — where only
      ``MEMORY.md`` and ``memory.md`` are memory, so anything else is refused with how to move it into
      ``memory/`` —, ``memory/projects/a.md`` + ``b`` is ``memory/projects/b.md``.
    - A name with ``/`` for a file in ``memory/`` is a path under ``memory/``; an absolute path is taken as it is
      (an extra path's file), if it is a memory file.
    - A name without ``.md`` gets it; the rules applied are listed in :attr:`RenamePlan.rules`.

    Raises:
        PathRefused: the name leaves nothing usable, or the result would not be a memory file.
        MemdeckError: the new name is taken.
    """
    rel, path = resolve_memory_path(config, rel)
    typed = new_name.strip().replace("\\", "/")
    if not typed:
        raise PathRefused("a new name is needed")
    rules: list[str] = []
    if not typed.endswith(".md"):
        rules.append(".md added: memory files end in .md")
    root_name = typed if typed.endswith(".md") else typed + ".md"
    if root_name in ROOT_MEMORY_FILES:
        wanted = root_name
    elif typed.startswith("memory/"):
        wanted = topic_rel(typed)
    elif Path(typed).is_absolute():  # an exact path (an extra path's file); resolve_memory_path decides
        wanted = typed if typed.endswith(".md") else typed + ".md"
    elif Path(rel).is_absolute():  # an extra path: a plain name stays in its folder
        if "/" in typed:
            raise PathRefused(f"type a plain name to rename {rel} in its folder, or a memory/… path")
        wanted = str(path.with_name(topic_rel(typed).removeprefix("memory/")))
    elif "/" not in rel:
        shown = root_name
        raise PathRefused(f"{shown} cannot be a memory file at the workspace root (only "
                          f"{' and '.join(ROOT_MEMORY_FILES)} are); type memory/{typed.removeprefix('/')} "
                          "to move it into memory/")
    else:
        folder = rel.removeprefix("memory/").rpartition("/")[0]
        wanted = topic_rel(typed if "/" in typed or not folder else f"{folder}/{typed}")
    new_rel, target = resolve_memory_path(config, wanted)
    typed_stem = Path(root_name).name.removesuffix(".md")
    if Path(new_rel).name.removesuffix(".md") != typed_stem:
        rules.append("name cleaned: lower-case letters, digits, - _ and . only")
    old_folder, new_folder = rel.rpartition("/")[0], new_rel.rpartition("/")[0]
    if old_folder != new_folder:
        rules.append(f"moves from {old_folder + '/' if old_folder else 'the workspace root'} to "
                     f"{new_folder + '/' if new_folder else 'the workspace root'}")
    if new_rel != rel and (os.path.lexists(target)):
        raise MemdeckError(f"{new_rel} already exists")
    return RenamePlan(rel, new_rel, tuple(rules))


def rename_note(config: Config, rel: str, new_name: str) -> str:
    """Rename a memory file as :func:`plan_rename` says (never over an existing one); returns the new rel.

    Raises:
        MemdeckError: the new name is taken.
        PathRefused: either path is refused.
        OSError: the rename failed (the file keeps its old name).
    """
    plan = plan_rename(config, rel, new_name)
    path = resolve_memory_path(config, plan.rel)[1]
    new_rel, target = resolve_memory_path(config, plan.new_rel)
    if new_rel == plan.rel:
        return new_rel
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(path, target)  # fails if the target appeared meanwhile: never overwrite
    except FileExistsError:
        raise MemdeckError(f"{new_rel} already exists") from None
    os.unlink(path)
    return new_rel


# ---------------------------------------------------------------------------------------------
# Deleting: into memdeck's trash, and back


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
    when = (now or datetime.now(UTC)).astimezone(UTC)
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
    trashed = folder / _aside_rel(config, rel)
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
            deleted = Deleted(rel, Path(record["path"]), root / entry / _aside_rel(config, rel), entry,
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


# ---------------------------------------------------------------------------------------------
# The clock notes are written by

_UTC_NAMES = frozenset({"UTC", "Etc/UTC", "Etc/UCT", "UCT", "Etc/Zulu", "Zulu", "Universal", "Etc/Universal",
                        "Etc/GMT", "GMT", "Etc/Greenwich"})


def _system_zone_name() -> str | None:
    """The system's IANA zone name: what ``TZ`` names, else what ``/etc/localtime`` links to (None: unknown)."""
    raw = os.environ.get("TZ")
    if raw is not None:
        name = raw.lstrip(":")
        if "/zoneinfo/" in name:
            name = name.split("/zoneinfo/", 1)[1]
        # A POSIX rule ("CET-1CEST") passes this too; ZoneInfo then refuses it and the offset is used.
        return name if re.fullmatch(r"[A-Za-z0-9_+-]+(?:/[A-Za-z0-9_+-]+)*", name) else None
    target = os.path.realpath("/etc/localtime")
    return target.split("/zoneinfo/", 1)[1] if "/zoneinfo/" in target else None


def note_timezone(name: str = "") -> tzinfo:
    """The zone memory notes are dated in: ``name`` (an IANA name), else the system's local zone.

    The system zone is used by its IANA name when it has one (so a past or future time gets its own offset);
    otherwise its current offset.

    Raises:
        ValueError: ``name`` is not a known zone (the config rule refuses such a value before this).
    """
    import zoneinfo  # deferred: only a note or a flush needs it

    wanted = name.strip() or _system_zone_name()
    if wanted:
        try:
            return zoneinfo.ZoneInfo(wanted)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
            if name.strip():
                raise ValueError(f"unknown time zone {name!r}") from None
    local = datetime.now().astimezone().tzinfo
    return local if local is not None else UTC


def zone_label(when: datetime) -> str:
    """How a note's header names its zone: ``UTC``, the IANA name (``Europe/Berlin``), else its abbreviation."""
    key = getattr(when.tzinfo, "key", None)
    if isinstance(key, str) and key:
        return "UTC" if key in _UTC_NAMES else key
    name = when.tzname()
    if when.utcoffset() == timedelta(0) and (not name or name in _UTC_NAMES):
        return "UTC"
    return name or when.strftime("UTC%z")


def _in_zone(now: datetime | None, tz: tzinfo | None) -> datetime:
    """``now`` (default: now) in ``tz`` (None: UTC, the name and header rule before OpenClaw 2026.9)."""
    zone = tz if tz is not None else UTC
    return (now or datetime.now(zone)).astimezone(zone)


# ---------------------------------------------------------------------------------------------
# Session notes (§9, but never overwriting)

_STOP_WORDS = SLUG_STOP_WORDS  # engine.lexicon: the function words plus chat filler

WORD = re.compile(r"[a-z0-9][a-z0-9'-]*[a-z0-9]|[a-z0-9]")
"""A word of lower-cased text (inner apostrophes and hyphens kept)."""


def clean_slug(text: str) -> str:
    """Clean text into a file-name slug as OpenClaw does.

    Lower-case, ``[^a-z0-9-]`` → ``-``, runs of ``-`` collapsed, leading/trailing ``-`` removed,
    cut to 30 characters (at a ``-`` when possible).
    """
    slug = re.sub(r"[^a-z0-9-]", "-", text.strip().lower())
    slug = re.sub(r"-{2,}", "-", slug).strip("-")
    if len(slug) > SLUG_MAX_CHARS:
        cut = slug[:SLUG_MAX_CHARS]
        slug = cut.rsplit("-", 1)[0] if "-" in cut and slug[SLUG_MAX_CHARS] != "-" else cut
        slug = slug.strip("-")
    return slug


def keyword_slug(text: str, words: int = 3) -> str:
    """A slug from the most frequent distinct non-stop-words of ``text`` (ties: first seen first)."""
    counts: Counter[str] = Counter()
    first_seen: dict[str, int] = {}
    for index, match in enumerate(WORD.finditer(text.lower())):
        word = match.group(0).strip("'-")
        if len(word) < 3 or word in _STOP_WORDS or word.isdigit() or "'" in word:
            continue
        counts[word] += 1
        first_seen.setdefault(word, index)
    ranked = sorted(counts, key=lambda word: (-counts[word], first_seen[word]))
    return clean_slug("-".join(ranked[:words]))


def _note_messages(transcript: Transcript, messages: int) -> list[tuple[str, str]]:
    kept: list[tuple[str, str]] = []
    for entry in transcript.messages():
        message = entry.message
        if message is None or message.role not in ("user", "assistant"):
            continue
        if message.role == "user" and message.provenance_kind == "inter_session":
            continue
        text = message.text.strip()
        if not text or text.startswith("/"):
            continue
        kept.append((message.role, text))
    return kept[-messages:] if messages > 0 else []


def _note_line(role: str, text: str) -> str:
    if len(text) > NOTE_MESSAGE_CHARS:
        text = text[:NOTE_MESSAGE_CHARS].rstrip() + " …"
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    # Continuation lines are indented so a message's "# ..." never becomes a heading of the note.
    return "\n".join([f"{role}: {lines[0]}", *(f"    {line}" for line in lines[1:])])


def build_session_note(
    transcript: Transcript,
    session_key: str = "unknown",
    source: str = "unknown",
    messages: int = 15,
    now: datetime | None = None,
    *,
    redact: bool = True,
    tz: tzinfo | None = None,
) -> str:
    """Render a session note like OpenClaw's session-memory hook.

    Keeps user/assistant messages with text, drops forwarded (``inter_session``) user messages and
    ``/commands``, then takes the last ``messages``. Secrets are masked unless ``redact`` is False.

    Args:
        transcript: the session.
        session_key: e.g. ``agent:main:main``.
        source: where the session came from (e.g. ``telegram``).
        messages: how many messages to keep (after filtering).
        now: the event time; defaults to now.
        redact: mask secrets in message text.
        tz: the zone of the header, ``# Session: <date> <time> <zone>`` (see :func:`note_timezone`; None: UTC).

    Returns:
        The Markdown note, ending with a newline.
    """
    when = _in_zone(now, tz)
    lines = [
        f"# Session: {when:%Y-%m-%d %H:%M:%S} {zone_label(when)}",
        "",
        f"- **Session Key**: {session_key or 'unknown'}",
        f"- **Session ID**: {transcript.session_id or 'unknown'}",
        f"- **Source**: {source or 'unknown'}",
        "",
    ]
    kept = _note_messages(transcript, messages)
    if kept:
        lines += ["## Conversation Summary", ""]
        for role, text in kept:
            lines.append(_note_line(role, redact_secrets(text) if redact else text))
        lines.append("")
    return "\n".join(lines) + "\n"


def note_slug(
    transcript: Transcript,
    messages: int = 15,
    now: datetime | None = None,
    *,
    slug: str | None = None,
    slugger: Callable[[str], str] | None = None,
    keywords: bool = True,
    tz: tzinfo | None = None,
) -> str:
    """Choose a session note's slug.

    ``slug`` if given (cleaned), else ``slugger(conversation)`` (e.g. an LLM; an exception or an
    empty answer falls through), else (with ``keywords``) the conversation's top keywords, else the ``HHMM``
    of ``now`` in ``tz`` — OpenClaw 2026.9's name when no LLM slug is made (``keywords=False``).

    Args:
        transcript: the session.
        messages: how many messages the note keeps (the slug looks at the same ones).
        now: the event time; defaults to now.
        slug: an explicit slug.
        slugger: makes a slug from the conversation text (secrets already masked).
        keywords: fall back to the conversation's keywords before the time.
        tz: the zone of the ``HHMM`` (None: UTC).
    """
    when = _in_zone(now, tz)
    conversation = "\n".join(f"{role}: {text}" for role, text in _note_messages(transcript, messages))
    chosen = clean_slug(slug) if slug else ""
    if not chosen and slugger is not None and conversation:
        try:
            chosen = clean_slug(slugger(redact_secrets(conversation)))
        except Exception:  # an LLM failure must not lose the note; keywords (or the time) stand in
            chosen = ""
    if not chosen and keywords:
        chosen = keyword_slug(conversation)
    return chosen or f"{when:%H%M}"


def _note_candidates(folder: Path, stem: str) -> Iterable[Path]:
    for counter in range(1, 1000):
        yield folder / (f"{stem}.md" if counter == 1 else f"{stem}-{counter}.md")


def session_note_path(workspace: Path, slug: str, now: datetime | None = None, tz: tzinfo | None = None) -> Path:
    """The path a session note with ``slug`` would get now (the first name not taken; the date in ``tz``)."""
    when = _in_zone(now, tz)
    folder = Path(workspace) / "memory"
    stem = f"{when:%Y-%m-%d}-{slug}"
    for candidate in _note_candidates(folder, stem):
        if not candidate.exists() and not candidate.is_symlink():
            return candidate
    raise FlushError(f"no free file name for {stem}.md in {folder}")


def write_session_note(
    workspace: Path,
    transcript: Transcript,
    session_key: str = "unknown",
    source: str = "unknown",
    messages: int = 15,
    now: datetime | None = None,
    *,
    slug: str | None = None,
    slugger: Callable[[str], str] | None = None,
    redact: bool = True,
    keywords: bool = True,
    tz: tzinfo | None = None,
) -> Path:
    """Write a session note to ``memory/YYYY-MM-DD-<slug>.md`` (the date in ``tz``), never overwriting.

    The slug comes from :func:`note_slug`. When the name is taken, ``-2``, ``-3``, … is appended;
    the file is created atomically and only if it does not exist. OpenClaw 2026.9's names are
    ``keywords=False`` with the user's zone: ``memory/YYYY-MM-DD-HHMM.md``, or an LLM's slug for ``HHMM``.

    Args:
        workspace: the workspace root (``memory/`` is created if missing).
        transcript: the session.
        session_key: e.g. ``agent:main:main``.
        source: where the session came from.
        messages: how many messages to keep.
        now: the event time; defaults to now.
        slug: an explicit slug (cleaned).
        slugger: makes a slug from the conversation text (e.g. :func:`engine.memory.llm.slug_with_llm`).
        redact: mask secrets in the note.
        keywords: let the conversation's keywords name the note when there is no slug (see :func:`note_slug`).
        tz: the zone of the date, the ``HHMM`` and the header (None: UTC).

    Returns:
        The path written.

    Raises:
        FlushError: no free file name could be found.
        OSError: the memory folder cannot be written.
    """
    when = _in_zone(now, tz)
    note = build_session_note(transcript, session_key, source, messages, when, redact=redact, tz=tz)
    chosen = note_slug(transcript, messages, when, slug=slug, slugger=slugger, keywords=keywords, tz=tz)
    folder = Path(workspace) / "memory"
    folder.mkdir(parents=True, exist_ok=True)
    data = note.encode("utf-8")
    stem = f"{when:%Y-%m-%d}-{chosen}"
    for target in _note_candidates(folder, stem):
        if create_new_file(target, data):
            return target
    raise FlushError(f"no free file name for {stem}.md in {folder}")


# ---------------------------------------------------------------------------------------------
# The extractive drafter
