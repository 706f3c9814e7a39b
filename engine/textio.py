"""Reading memory files safely (any bytes) and writing them atomically."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

MAX_FILE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class DecodedText:
    """Text decoded from a file, with how many bytes could not be decoded."""

    text: str
    errors: int
    binary: bool = False


def decode_bytes(data: bytes) -> DecodedText:
    """Decode file bytes as UTF-8 (BOM stripped, CRLF folded), counting undecodable bytes.

    Args:
        data: the raw bytes.

    Returns:
        The decoded text; ``binary`` is set when the data looks like a binary file
        (NUL bytes in the first 8 KiB).
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
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
        max_bytes: read at most this many bytes (the rest is ignored and counted as errors).

    Raises:
        OSError: the file cannot be opened or read.
    """
    with open(path, "rb") as fh:
        data = fh.read(max_bytes + 1)
    truncated = len(data) > max_bytes
    decoded = decode_bytes(data[:max_bytes])
    if truncated:
        return DecodedText(decoded.text, decoded.errors + 1, decoded.binary)
    return decoded


def atomic_write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically: temp file in the same folder, fsync, rename.

    The file's permission bits are kept; a new file gets 0644 (minus the umask).
    A crash at any moment leaves either the old or the new content, never a mix.
    """
    _atomic_write_raw(Path(path), text.encode("utf-8"))


def atomic_append_text(path: Path, text: str) -> None:
    """Append ``text`` to ``path`` atomically (the whole file is rewritten via a temp file).

    A blank line separates the new text from existing content that does not end in one.
    """
    path = Path(path)
    try:
        existing = path.read_bytes().decode("utf-8", errors="surrogateescape")
    except FileNotFoundError:
        existing = ""
    if existing and not existing.endswith("\n"):
        existing += "\n"
    if existing and not existing.endswith("\n\n"):
        existing += "\n"
    combined = existing + text
    if not combined.endswith("\n"):
        combined += "\n"
    _atomic_write_raw(path, combined.encode("utf-8", errors="surrogateescape"))


def _atomic_write_raw(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(folder: Path) -> None:
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
