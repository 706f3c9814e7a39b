"""Reading a memory file for the editor and writing notes: saving over it (never over another writer's change),
a copy kept aside, new daily notes and topics, and appends (every write atomic)."""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from engine.clock import Clock
from engine.config import Config
from engine.errors import MemdeckError
from engine.memory.names import (
    aside_rel,
    check_dated_name,
    daily_heading,
    daily_rel,
    heading_for,
    topic_heading,
    topic_rel,
)
from engine.textio import (
    UTF8_LF,
    ChangedOnDisk,
    DiskStamp,
    TextFormat,
    atomic_append,
    clean_note_text,
    create_new_file,
    decode_bytes,
    encode_edit,
    make_private_dir,
    read_stamp,
    read_text_file,
    replace_if_unchanged,
    stamp_bytes,
)
from engine.workspace import resolve_memory_path


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
    when = now if now is not None else Clock.for_config(config).now()
    aside = config.home / CONFLICT_COPIES_DIR / aside_rel(config, rel)
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
        written, created = append_or_create(path, text, heading_for(rel))
        total = _line_count(read_text_file(path).text)
    start = total - _line_count(written + "\n") + 1
    return Appended(rel, path, start, total, created)
