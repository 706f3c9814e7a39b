"""Reading memory files safely (any bytes) and writing them atomically (temp file, fsync, rename)."""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import MemdeckError

MAX_FILE_BYTES = 64 * 1024 * 1024


class WriteRefused(MemdeckError):
    """A write was refused: the target is a symlink or not a regular file, or kept changing."""


@dataclass(frozen=True)
class DiskStamp:
    """What a file looked like on disk: enough to tell whether someone else changed it."""

    mtime_ns: int
    size: int
    digest: str


class ChangedOnDisk(WriteRefused):
    """The file is not what the writer last read (someone else changed it); nothing was written.

    Attributes:
        stamp: what is on disk now (None: the file is gone).
    """

    def __init__(self, path: Path, stamp: DiskStamp | None) -> None:
        super().__init__(f"{path} changed on disk since it was read")
        self.stamp = stamp


@dataclass(frozen=True)
class DecodedText:
    """Text decoded from a file, with how many bytes could not be decoded.

    ``truncated`` is set when the file was larger than the read limit and only its start was read.
    """

    text: str
    errors: int
    binary: bool = False
    truncated: bool = False


def decode_bytes(data: bytes) -> DecodedText:
    """Decode file bytes as UTF-8 (BOM stripped, CRLF folded), counting undecodable bytes.

    Args:
        data: the raw bytes.

    Returns:
        The decoded text; ``binary`` is set when the data looks like a binary file
        (NUL bytes in the first 8 KiB). UTF-16 with a byte-order mark is decoded as such.
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    elif data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        # UTF-16 with a BOM (Windows Notepad's "Unicode"): text, not binary.
        text = data.decode("utf-16", errors="replace")
        text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
        return DecodedText(text=text, errors=text.count("\ufffd"))
    binary = b"\x00" in data[:8192]
    try:
        text = data.decode("utf-8")
        errors = 0
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        errors = text.count("\ufffd") - data.decode("utf-8", errors="ignore").count("\ufffd")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x00" in text:
        text = text.replace("\x00", "")
    return DecodedText(text=text, errors=errors, binary=binary)


def read_text_file(path: Path, max_bytes: int = MAX_FILE_BYTES) -> DecodedText:
    """Read a file as text, never raising on content problems.

    Args:
        path: the file.
        max_bytes: read at most this many bytes (the rest is ignored; ``truncated`` says so).

    Raises:
        OSError: the file cannot be opened or read.
    """
    with open(path, "rb") as fh:
        data = fh.read(max_bytes + 1)
    truncated = len(data) > max_bytes
    decoded = decode_bytes(data[:max_bytes])
    if truncated:
        return DecodedText(decoded.text, decoded.errors, decoded.binary, truncated=True)
    return decoded


def make_private_dir(path: Path) -> None:
    """Create ``path`` and any missing parents as 0700 folders (folders that already exist are left alone).

    Raises:
        OSError: a folder cannot be created.
    """
    path = Path(path)
    missing: list[Path] = []
    probe = path
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            continue
        os.chmod(folder, 0o700)  # mkdir's mode is filtered by the umask
    if not path.is_dir():
        raise NotADirectoryError(20, "not a directory", str(path))


def atomic_write_text(path: Path, text: str, mode: int | None = None) -> None:
    """Replace ``path`` with ``text`` atomically: temp file in the same folder, fsync, rename.

    The file's permission bits are kept (``mode`` sets them instead, with no moment at other bits).
    A crash at any moment leaves either the old or the new content.
    """
    atomic_write_bytes(Path(path), text.encode("utf-8"), mode)


def atomic_append_text(path: Path, text: str) -> int:
    """Append ``text`` to ``path`` atomically, after a blank line; returns the bytes added."""
    return atomic_append(Path(path), text)


def fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_temp(folder: Path, name: str, data: bytes, mode: int) -> str:
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def atomic_write_bytes(path: Path, data: bytes, mode: int | None = None) -> None:
    """Replace ``path`` with ``data``: temp file in the same folder, fsync, ``os.replace``.

    ``mode`` sets the permission bits; by default an existing file keeps its own and a new one gets 0644.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except FileNotFoundError:
            mode = 0o644
    tmp = _write_temp(path.parent, path.name, data, mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def atomic_append(path: Path, text: str, *, blank_line: bool = True, attempts: int = 3) -> int:
    """Append ``text`` to ``path`` so that a crash leaves either the old file or the new one.

    The existing bytes are copied unchanged into a temp file in the same folder, the addition
    follows (after a blank line when ``blank_line``; CRLF if the file uses CRLF), the temp file is
    fsynced and renamed over the original. If the file changes on disk meanwhile, it retries.

    Returns:
        The number of bytes added.

    Raises:
        WriteRefused: the target is a symlink or not a regular file, or kept changing.
        OSError: the folder cannot be written.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(attempts):
        try:
            before = path.lstat()
        except FileNotFoundError:
            before = None
        if before is not None and stat.S_ISLNK(before.st_mode):
            raise WriteRefused(f"refusing to write through a symlink: {path}")
        if before is not None and not stat.S_ISREG(before.st_mode):
            raise WriteRefused(f"not a regular file: {path}")
        existing = path.read_bytes() if before is not None else b""
        newline = b"\r\n" if b"\r\n" in existing else b"\n"
        addition = text.encode("utf-8").replace(b"\r\n", b"\n")
        if not addition.endswith(b"\n"):
            addition += b"\n"
        if newline == b"\r\n":
            addition = addition.replace(b"\n", b"\r\n")
        separator = b""
        if existing:
            if not existing.endswith(b"\n"):
                separator = newline + newline if blank_line else newline
            elif blank_line and not existing.endswith(newline + newline):
                separator = newline
        mode = stat.S_IMODE(before.st_mode) if before is not None else 0o644
        tmp = _write_temp(path.parent, path.name, existing + separator + addition, mode)
        try:
            try:
                now = path.lstat()
            except FileNotFoundError:
                now = None
            unchanged = (before is None and now is None) or (
                before is not None
                and now is not None
                and (now.st_size, now.st_mtime_ns, now.st_ino)
                == (before.st_size, before.st_mtime_ns, before.st_ino)
            )
            if not unchanged:
                os.unlink(tmp)
                continue
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        fsync_dir(path.parent)
        return len(separator) + len(addition)
    raise WriteRefused(f"{path} kept changing while appending; nothing was written")


def stamp_bytes(data: bytes, st: os.stat_result) -> DiskStamp:
    """A stamp for file contents read together with their stat."""
    import hashlib  # deferred: nothing on the first screen hashes

    return DiskStamp(st.st_mtime_ns, st.st_size, hashlib.sha256(data).hexdigest())


def read_stamp(path: Path) -> DiskStamp | None:
    """The file's current stamp, or None when it does not exist."""
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            data = fh.read()
    except FileNotFoundError:
        return None
    return stamp_bytes(data, st)


def same_content(a: DiskStamp | None, b: DiskStamp | None) -> bool:
    """Whether two stamps describe the same bytes (a touched but unchanged file counts as the same)."""
    if a is None or b is None:
        return a is b
    return a.digest == b.digest


def replace_if_unchanged(path: Path, text: str, expected: DiskStamp | None) -> DiskStamp:
    """Replace ``path`` with ``text`` atomically, but only if its bytes are still those ``expected`` describes.

    ``expected`` None means "the file must not exist". The content is compared first, then the file's size
    and mtime once more just before the rename, so a save someone else made meanwhile is never overwritten.
    The permission bits of an existing file are kept.

    Returns:
        The stamp of what was written.

    Raises:
        ChangedOnDisk: the file on disk is not the expected one (nothing written).
        WriteRefused: the target is a symlink or not a regular file.
        OSError: the write failed (the old file is intact).
    """
    path = Path(path)
    try:
        st = path.lstat()
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise WriteRefused(f"refusing to write through a symlink: {path}" if stat.S_ISLNK(st.st_mode)
                           else f"not a regular file: {path}")
    current = read_stamp(path)
    if not same_content(current, expected):
        raise ChangedOnDisk(path, current)
    data = text.encode("utf-8")
    mode = stat.S_IMODE(st.st_mode) if st is not None else 0o644
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _write_temp(path.parent, path.name, data, mode)
    try:
        try:
            now: os.stat_result | None = path.lstat()
        except FileNotFoundError:
            now = None
        # The file compared above must still be there as it was (size and mtime of the bytes that were read).
        unchanged = (now is None and current is None) or (
            now is not None and current is not None and (now.st_size, now.st_mtime_ns) == (current.size, current.mtime_ns))
        if not unchanged:
            raise ChangedOnDisk(path, read_stamp(path))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)
    return stamp_bytes(data, os.stat(path))


def create_new_file(path: Path, data: bytes) -> bool:
    """Create ``path`` with ``data`` atomically unless it exists; False when it exists."""
    tmp = _write_temp(path.parent, path.name, data, 0o644)
    try:
        os.link(tmp, path)  # fails if path exists: never overwrite
    except FileExistsError:
        return False
    except OSError:
        # A file system without hard links: fall back to exclusive create.
        try:
            with open(path, "xb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        except FileExistsError:
            return False
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    fsync_dir(path.parent)
    return True


# ---------------------------------------------------------------------------------------------
# Text from outside: no lone surrogates

REPLACEMENT_CHARACTER = "\ufffd"
"""What stands in for text that could not be kept (U+FFFD)."""

_SURROGATES = re.compile("[\ud800-\udfff]")
_SURROGATE_OR_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]")


def _mend_surrogate(match: re.Match[str]) -> str:
    found = match.group()
    if len(found) == 2:  # a high and a low half side by side: the character they stand for
        return chr(0x10000 + ((ord(found[0]) - 0xD800) << 10) + (ord(found[1]) - 0xDC00))
    return REPLACEMENT_CHARACTER


def scrub_surrogates(text: str) -> str:
    """``text`` with every lone surrogate (half an emoji from a ``"\\ud83d"`` JSON escape) replaced by U+FFFD.

    A Python string can hold code points UTF-8 cannot encode; one of them in a transcript, an LLM answer or a
    request would fail every later ``encode`` (the index, the terminal, a JSON reply). Text that enters from
    outside passes through this once, where it is decoded; a high and a low half next to each other become
    the character they stand for. Text without surrogates is returned as is (one scan, no copy).

    File *names* are not text content: ``os.fsdecode`` keeps undecodable bytes as surrogates on purpose
    (``surrogateescape``), and those must not be scrubbed.
    """
    if _SURROGATES.search(text) is None:
        return text
    return _SURROGATE_OR_PAIR.sub(_mend_surrogate, text)


def scrub_json(value: Any) -> Any:
    """A parsed JSON value with :func:`scrub_surrogates` applied to every string in it (keys included).

    Values without surrogates come back as the same objects; nesting is walked without recursion, so a
    deeply nested document cannot overflow the stack.
    """
    if isinstance(value, str):
        return scrub_surrogates(value)
    if not isinstance(value, (dict, list)):
        return value
    root: list[Any] = [value]
    stack: list[tuple[Any, Any, Any]] = [(root, 0, value)]  # (container, key, node)
    while stack:
        container, key, node = stack.pop()
        if isinstance(node, str):
            clean = scrub_surrogates(node)
            if clean is not node:
                container[key] = clean
        elif isinstance(node, list):
            stack.extend((node, index, item) for index, item in enumerate(node) if isinstance(item, (str, list, dict)))
        elif isinstance(node, dict):
            items = list(node.items())
            if any(isinstance(name, str) and _SURROGATES.search(name) for name, _ in items):
                node.clear()
                node.update((scrub_surrogates(name), item) for name, item in items)
            stack.extend((node, name, item) for name, item in node.items() if isinstance(item, (str, list, dict)))
    return root[0]


# Characters a note must not be given (what engine.display.safe_text would show as escapes, so an editor
# opens the note read-only): C0 controls but tab and newline, DEL, C1 controls, the bidi embeddings,
# overrides and isolates. ESC's whole sequence goes (``ESC[31m``), not only the ESC.
_ESCAPE_SEQUENCE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_LINE_BREAKS = re.compile("\r\n|[\r\u0085\u2028\u2029]")
_UNSAFE_IN_NOTES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def clean_note_text(text: str) -> str:
    """Text an agent or a flush appends to a note, made plain: it opens for editing and keeps its line numbers.

    - every line break other than ``\\n`` (CRLF, CR, NEL, U+2028 LINE SEPARATOR, U+2029 PARAGRAPH SEPARATOR)
      becomes ``\\n``: editors and ``str.splitlines`` break lines there, so a raw one would make the lines an
      editor shows differ from the lines a citation counts;
    - terminal escape sequences and the other control characters (NUL, ESC, BEL, C1…; not tab) are removed,
      and so are the bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) that reorder
      what is shown;
    - lone surrogates become U+FFFD (:func:`scrub_surrogates`).

    Plain text comes back unchanged.
    """
    text = scrub_surrogates(text)
    if text.isprintable() or (_UNSAFE_IN_NOTES.search(text) is None and _LINE_BREAKS.search(text) is None):
        return text
    text = _LINE_BREAKS.sub("\n", text)
    text = _ESCAPE_SEQUENCE.sub("", text)
    return _UNSAFE_IN_NOTES.sub("", text)
