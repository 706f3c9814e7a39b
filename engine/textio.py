"""Reading memory files safely (any bytes) and writing them atomically (temp file, fsync, rename)."""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO

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


_CODECS = {"utf-8": "UTF-8", "utf-16-le": "UTF-16 LE", "utf-16-be": "UTF-16 BE", "utf-32-le": "UTF-32 LE",
           "utf-32-be": "UTF-32 BE"}
# UTF-32 LE's mark starts with UTF-16 LE's: the longer marks are tried first.
_BOMS = {"utf-8": b"\xef\xbb\xbf", "utf-32-le": b"\xff\xfe\x00\x00", "utf-32-be": b"\x00\x00\xfe\xff",
         "utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff"}
_UNIT = {"utf-8": 1, "utf-16-le": 2, "utf-16-be": 2, "utf-32-le": 4, "utf-32-be": 4}
_ENDING_NAMES = {"\r\n": "CRLF", "\n": "LF", "\r": "CR"}
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def line_ending(crlf: int, lf: int, cr: int) -> str:
    """The line ending new lines get in a file with that many CRLF, lone LF and lone CR endings.

    The one rule for every write that adds lines (the editor's save, appends, the review's actions): CRLF if the
    file has any, else LF if it has any, else CR if it has any, else LF.
    """
    if crlf:
        return "\r\n"
    if lf or not cr:
        return "\n"
    return "\r"


@dataclass(frozen=True)
class TextFormat:
    """How a file's text is stored: its encoding, whether it starts with a byte-order mark, and its line endings.

    Attributes:
        encoding: the codec: ``utf-8``, ``utf-16-le``, ``utf-16-be``, ``utf-32-le`` or ``utf-32-be``.
        bom: the file starts with a byte-order mark.
        newline: the ending a new line gets (:func:`line_ending`).
        endings: the kinds of line ending in the file, the most frequent first (empty: one line, no ending).
    """

    encoding: str = "utf-8"
    bom: bool = False
    newline: str = "\n"
    endings: tuple[str, ...] = ()

    @property
    def mixed(self) -> bool:
        """The file has more than one kind of line ending."""
        return len(self.endings) > 1

    @property
    def codec_name(self) -> str:
        """The encoding as people name it: ``UTF-8``, ``UTF-16 LE``."""
        return _CODECS.get(self.encoding, self.encoding.upper())

    @property
    def label(self) -> str:
        """For a status bar: ``UTF-8 · LF``, ``UTF-16 LE · BOM · CRLF``, ``UTF-8 · mixed CRLF/LF``."""
        parts = [self.codec_name]
        if self.bom:
            parts.append("BOM")
        if self.mixed:
            parts.append("mixed " + "/".join(_ENDING_NAMES[e] for e in self.endings))
        else:
            parts.append(_ENDING_NAMES[self.newline])
        return " · ".join(parts)


UTF8_LF = TextFormat()
"""A new file's format (and that of a file with only LF endings and no BOM)."""


def _format_of(encoding: str, bom: bool, crlf: int, lf: int, cr: int) -> TextFormat:
    lone_lf, lone_cr = lf - crlf, cr - crlf
    counts = sorted(((n, e) for n, e in ((crlf, "\r\n"), (lone_lf, "\n"), (lone_cr, "\r")) if n),
                    key=lambda ne: -ne[0])
    return TextFormat(encoding, bom, line_ending(crlf, lone_lf, lone_cr), tuple(e for _, e in counts))


def _split_encoding(data: bytes) -> tuple[str, bytes]:
    """``(codec, bytes after the BOM)``: UTF-16 and UTF-32 are recognised by their BOM (UTF-16 also without one,
    see :func:`_bomless_utf16`), anything else is UTF-8."""
    for codec, bom in _BOMS.items():
        if data.startswith(bom):
            return codec, data[len(bom):]
    bomless = _bomless_utf16(data) if b"\x00" in data[:_SNIFF_BYTES] else None
    return bomless or "utf-8", data


_SNIFF_BYTES = 8192
_NOT_TEXT = re.compile("[\x00-\x08\x0e-\x1f\ud800-\udfff]")


def _bomless_utf16(data: bytes) -> str | None:
    """The codec of UTF-16 without a byte-order mark (what some Windows tools write), or None when it is not that.

    Text of mostly Latin letters in UTF-16 has a zero byte in every other place: in the odd places for LE, the
    even ones for BE. It is taken for UTF-16 only when its start reads as such — three units in four or more with
    that zero byte, few with the zero on the other side, and no NUL, other control character or lone surrogate —
    so a binary file stays binary (as UTF-8 it would be, for its NUL bytes).
    """
    sample = data[:_SNIFF_BYTES]
    sample = sample[:len(sample) - len(sample) % 2]
    units = len(sample) // 2
    if not units:
        return None
    zero_odd, zero_even = sample[1::2].count(0), sample[0::2].count(0)
    for codec, zeros, others in (("utf-16-le", zero_odd, zero_even), ("utf-16-be", zero_even, zero_odd)):
        if zeros * 4 < units * 3 or others * 4 > zeros:  # (a few U+xx00 like 一 U+4E00: zero on the other side)
            continue
        try:
            text = sample.decode(codec)
        except UnicodeDecodeError as exc:  # a pair cut at the sample's end is fine
            if exc.start < len(sample) - 2:
                continue
            text = sample[:exc.start].decode(codec)
        if _NOT_TEXT.search(text) is None:
            return codec
    return None


def text_format(data: bytes) -> TextFormat:
    """The format of a file's bytes: encoding, BOM and line endings (see :class:`TextFormat`)."""
    codec, body = _split_encoding(data)
    bom = len(body) != len(data)
    if codec == "utf-8":
        return _format_of(codec, bom, body.count(b"\r\n"), body.count(b"\n"), body.count(b"\r"))
    text = body.decode(codec, errors="replace")
    return _format_of(codec, bom, text.count("\r\n"), text.count("\n"), text.count("\r"))


@dataclass(frozen=True)
class ByteLines:
    """How to find a file's lines in its bytes without decoding it all (a viewer of big files), by the rule
    :func:`decode_bytes` counts them: a line ends at ``\n``, ``\r\n`` or ``\r`` as the file's encoding stores them.

    Attributes:
        codec: the file's encoding (:attr:`TextFormat.encoding`).
        start: where the first line starts (after a byte-order mark).
        unit: bytes per code unit (1, 2 or 4): a break counts only at ``start + k * unit``.
        cr: a carriage return as stored (a block that ends with one waits for the next: it may be a CRLF).
        breaks: the pattern of one line break as stored.
    """

    codec: str
    start: int
    unit: int
    cr: bytes
    breaks: re.Pattern[bytes]

    def ends(self, data: bytes, offset: int) -> list[int]:
        """The offsets where lines end (just after their break) in ``data``, which starts at byte ``offset``."""
        unit, start = self.unit, self.start
        # A match off the unit grid (the zero byte of one character and the next's) is not a break; it can never
        # hide one that is on the grid (only one byte of a break's units is not zero).
        return [offset + m.end() for m in self.breaks.finditer(data) if (offset + m.start() - start) % unit == 0]

    def scan(self, fh: BinaryIO, block_bytes: int) -> Iterator[tuple[list[int], int]]:
        """Read ``fh`` from where it is (its start) ``block_bytes`` at a time; for each block, the offsets where lines
        end in it (:meth:`ends`) and how many bytes are scanned so far."""
        offset, carry = 0, b""
        cr, unit = self.cr, self.unit
        while True:
            chunk = fh.read(block_bytes)
            data, carry = carry + chunk, b""
            if chunk and data.endswith(cr) and (offset + len(data) - len(cr) - self.start) % unit == 0:
                data, carry = data[:-len(cr)], cr  # a CR that ends the block may be a CRLF's first half
            if not data:
                if carry:
                    continue
                return
            yield self.ends(data, offset), offset + len(data)
            offset += len(data)
            if not chunk:
                return

    def decode(self, data: bytes) -> str:
        """One line's bytes as text (undecodable bytes as U+FFFD)."""
        return data.decode(self.codec, errors="replace")


def byte_lines(head: bytes) -> ByteLines:
    """:class:`ByteLines` for a file that starts with ``head`` (its first 8 KiB or more)."""
    codec, body = _split_encoding(head)
    cr, lf = "\r".encode(codec), "\n".encode(codec)
    pattern = re.compile(re.escape(cr) + b"(?:" + re.escape(lf) + b")?|" + re.escape(lf))
    return ByteLines(codec, len(head) - len(body), _UNIT[codec], cr, pattern)


@dataclass(frozen=True)
class DecodedText:
    """Text decoded from a file, with how many bytes could not be decoded.

    ``truncated`` is set when the file was larger than the read limit and only its start was read.
    ``format`` is how the file stores its text (encoding, BOM, line endings): a save keeps it.
    ``nul`` is set when the file has NUL characters anywhere (``binary`` looks at the first 8 KiB only): they
    are not in ``text``, so an edit of their line would drop them — editors open such a file read-only.
    """

    text: str
    errors: int
    binary: bool = False
    truncated: bool = False
    format: TextFormat = UTF8_LF
    nul: bool = False

    @property
    def editable(self) -> bool:
        """Whether the text can be edited and saved without losing bytes: no undecodable bytes, no NUL.

        (Lines an edit does not touch keep their bytes whatever they are, see :func:`encode_edit`; this is about
        the lines it does.)
        """
        return not (self.errors or self.binary or self.nul)


def _shown(raw: str) -> str:
    """Exact text of a line (surrogate-escaped) → what the engine's decode shows of it."""
    if "\x00" in raw:
        raw = raw.replace("\x00", "")
    return raw


def decode_bytes(data: bytes) -> DecodedText:
    """Decode file bytes as UTF-8 (BOM stripped, CRLF and CR folded to LF), counting undecodable bytes.

    Args:
        data: the raw bytes.

    Returns:
        The decoded text; ``binary`` is set when the data looks like a binary file
        (NUL bytes in the first 8 KiB), ``nul`` when it has NUL bytes anywhere. UTF-16 and UTF-32 with a
        byte-order mark are decoded as such, and so is UTF-16 without one (:func:`_bomless_utf16`). Lines are what
        ``\n``, ``\r\n`` and ``\r`` end — never U+2028/U+2029, which stay inside their line — and ``format``
        says how the file stores them, so :func:`encode_edit` can write the text back the same way.
    """
    fmt = text_format(data)
    codec, body = _split_encoding(data)
    if codec != "utf-8":
        # UTF-16 with a BOM (Windows Notepad's "Unicode"): text, not binary.
        text = body.decode(codec, errors="replace")
        errors = text.count("\ufffd") - body.decode(codec, errors="ignore").count("\ufffd")  # not a real U+FFFD
        nul = "\x00" in text
        text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
        return DecodedText(text=text, errors=errors, format=fmt, nul=nul)
    binary = b"\x00" in body[:8192]
    try:
        text = body.decode("utf-8")
        errors = 0
    except UnicodeDecodeError:
        text = body.decode("utf-8", errors="replace")
        errors = text.count("\ufffd") - body.decode("utf-8", errors="ignore").count("\ufffd")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    nul = "\x00" in text
    if nul:
        text = text.replace("\x00", "")
    return DecodedText(text=text, errors=errors, binary=binary, format=fmt, nul=nul)


def _exact_lines(data: bytes) -> tuple[str, list[tuple[str, bytes, bytes]]]:
    """A file's lines exactly: ``(codec, [(shown text, exact bytes, exact ending), ...])``.

    The shown texts joined by ``\n`` are :func:`decode_bytes`'s text; the bytes and endings joined (after the BOM)
    are the file's. The last entry is what follows the last line ending (``("", b"", b"")`` when the file ends
    with one).
    """
    codec, body = _split_encoding(data)
    if codec == "utf-8":
        exact, errors = body.decode("utf-8", errors="surrogateescape"), "surrogateescape"
        odd = b""
    else:
        whole = len(body) - len(body) % _UNIT[codec]
        exact, errors = body[:whole].decode(codec, errors="surrogatepass"), "surrogatepass"
        odd = body[whole:]  # the stray bytes of a last unit cut short: kept with the last line
    lines: list[tuple[str, bytes, bytes]] = []
    start = 0
    for m in _LINE_BREAK.finditer(exact):
        raw = exact[start:m.start()].encode(codec, errors)
        lines.append((_shown(raw.decode(codec, errors="replace")), raw, m.group().encode(codec)))
        start = m.end()
    raw = exact[start:].encode(codec, errors) + odd
    lines.append((_shown(raw.decode(codec, errors="replace")), raw, b""))
    return codec, lines


def encode_edit(original: bytes | None, text: str) -> bytes:
    """The bytes to write for ``text`` over a file that held ``original``: only the lines that changed change.

    The file's encoding, byte-order mark and line endings are kept (:func:`text_format`): every line of ``text``
    that is a line of the original (as :func:`decode_bytes` shows it) keeps its exact bytes — its own line ending,
    NUL bytes and all — and new or changed lines are encoded like the file, ending with the ending of the line
    they replace (or the file's :func:`line_ending`). So ``encode_edit(data, decode_bytes(data).text) == data``.

    Args:
        original: the file's bytes (None or empty: a new file, written as UTF-8 with LF endings).
        text: the new text; ``\r\n`` and ``\r`` count as line breaks like ``\n`` (U+2028/U+2029 do not). A
            leading U+FEFF where the file has a byte-order mark is taken for that mark.

    Raises:
        UnicodeEncodeError: ``text`` cannot be encoded in the file's encoding (a lone surrogate).
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not original:
        return text.encode("utf-8")
    if decode_bytes(original).text == text:
        return original  # nothing changed (the common save): the very same bytes
    fmt = text_format(original)
    codec, old = _exact_lines(original)
    if fmt.bom and text.startswith("\ufeff") and not old[0][0].startswith("\ufeff"):
        text = text[1:]  # the caller read the mark as a character (a strict UTF-8 decode keeps it)
    new = text.split("\n")
    newline = fmt.newline.encode(codec)
    old_shown = [shown for shown, _, _ in old]
    # The lines both share at the start and at the end are matched directly; only the middle is diffed.
    head = 0
    limit = min(len(old), len(new))
    while head < limit and old_shown[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old_shown[-1 - tail] == new[-1 - tail]:
        tail += 1
    # (old line, new line, whether the old line is the same text: else only its ending is kept; None: none)
    pairs: list[tuple[int | None, int, bool]] = [(i, i, True) for i in range(head)]
    if head < len(new) - tail or head < len(old) - tail:
        import difflib  # deferred: only a save that changed something diffs

        a, b = old_shown[head:len(old) - tail], new[head:len(new) - tail]
        for op, a0, a1, b0, b1 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
            for k in range(b1 - b0):
                replaced = op == "replace" and k < a1 - a0
                pairs.append((head + a0 + k if op == "equal" or replaced else None, head + b0 + k, op == "equal"))
    pairs.extend((len(old) - tail + k, len(new) - tail + k, True) for k in range(tail))
    out = [_BOMS[codec]] if fmt.bom else []
    last = len(new) - 1
    cr, lf = "\r".encode(codec), "\n".encode(codec)
    previous = b""
    for at, row, same in pairs:
        _, raw, ending = old[at] if at is not None else ("", b"", b"")
        body = raw if same else new[row].encode(codec)
        ending = b"" if row == last else ending or newline
        if previous == cr and not body and ending == lf:
            # After a line that ends with a lone CR, an empty LF-ended line would join it into one CRLF ending
            # (the line would vanish): it ends like the file instead (CR where the file uses LF).
            ending = newline if newline != lf else cr
        out.append(body + ending)
        previous = ending
    data = b"".join(out)
    if codec != "utf-8" and not fmt.bom and _split_encoding(data)[0] != codec:
        # UTF-16 without a BOM is recognised by its zero bytes; an edit that leaves too few of them (lines of CJK at
        # the top) would make the next read take it for UTF-8 and binary: the file gets its BOM instead.
        data = _BOMS[codec] + data
    return data


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
        return replace(decoded, truncated=True)
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


def _about(path: Path, exc: OSError) -> OSError:
    """The error of a write, naming the file being written — never memdeck's temp file beside it, which the user
    has never heard of (``.MEMORY.md.x1y2.tmp: Permission denied`` becomes ``MEMORY.md: Permission denied``)."""
    if exc.errno is None:
        return exc
    return OSError(exc.errno, exc.strerror, str(path))  # OSError picks the subclass (PermissionError, ...)


def _write_temp(folder: Path, name: str, data: bytes, mode: int) -> str:
    """Write ``data`` to a new temp file beside ``folder/name``, fsynced with ``mode``; its errors name the file."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise _about(folder / name, exc) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise _about(folder / name, exc) from None
        raise
    return tmp


def _replace(tmp: str, path: Path) -> None:
    """Rename the temp file over ``path`` (removing it when that fails); its errors name ``path``."""
    try:
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise _about(path, exc) from None
        raise


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
    _replace(tmp, path)
    fsync_dir(path.parent)


def atomic_append(path: Path, text: str, *, blank_line: bool = True, attempts: int = 3) -> int:
    """Append ``text`` to ``path`` so that a crash leaves either the old file or the new one.

    The existing bytes are copied unchanged into a temp file in the same folder, the addition
    follows (after a blank line when ``blank_line``), written like the file: its encoding and its
    :func:`line_ending` (CRLF if the file uses CRLF). The temp file is fsynced and renamed over the original. If the file changes on disk meanwhile, it retries.

    Returns:
        The number of bytes added.

    Raises:
        WriteRefused: the target is a symlink, not a regular file or read-only, or kept changing.
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
        if before is not None and (not before.st_mode & 0o222 or not os.access(path, os.W_OK)):
            # The rename below would replace it regardless (it needs only the folder): a file its owner made
            # read-only is left alone. The mode bits too, as root passes os.access.
            raise WriteRefused(f"{path} is read-only (chmod u+w to let memdeck append to it)")
        existing = path.read_bytes() if before is not None else b""
        fmt = text_format(existing)  # the file's encoding and line ending: the addition is written like the file
        nl = fmt.newline.encode(fmt.encoding)
        body = text.replace("\r\n", "\n").replace("\r", "\n")
        if not body.endswith("\n"):
            body += "\n"
        addition = body.replace("\n", fmt.newline).encode(fmt.encoding)
        ends = [e.encode(fmt.encoding) for e in ("\n", "\r")]
        after_bom = existing[len(_BOMS[fmt.encoding]):] if fmt.bom else existing
        separator = b""
        if after_bom:
            if not any(existing.endswith(e) for e in ends):
                separator = nl + nl if blank_line else nl
            elif blank_line and not existing.endswith(nl + nl):
                separator = nl
        mode = stat.S_IMODE(before.st_mode) if before is not None else 0o644
        data = existing + separator + addition
        if fmt.encoding != "utf-8" and not fmt.bom and _split_encoding(data)[0] != fmt.encoding:
            data = _BOMS[fmt.encoding] + data  # UTF-16 without a BOM that would stop looking like it (see encode_edit)
        tmp = _write_temp(path.parent, path.name, data, mode)
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
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        _replace(tmp, path)
        fsync_dir(path.parent)
        return len(data) - len(existing)
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


def replace_if_unchanged(path: Path, text: str | bytes, expected: DiskStamp | None) -> DiskStamp:
    """Replace ``path`` with ``text`` atomically, but only if its bytes are still those ``expected`` describes.

    ``expected`` None means "the file must not exist". The content is compared first, then the file's size
    and mtime once more just before the rename, so a save someone else made meanwhile is never overwritten.
    The permission bits of an existing file are kept, and so are its encoding, byte-order mark and line endings:
    only the lines ``text`` changed are written anew (:func:`encode_edit`), so saving the text :func:`decode_bytes`
    gave writes the same bytes. ``bytes`` are written as they are (an undo putting a file's exact bytes back).

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
    original: bytes | None = None
    current: DiskStamp | None = None
    with contextlib.suppress(FileNotFoundError), open(path, "rb") as fh:
        original = fh.read()
        current = stamp_bytes(original, os.fstat(fh.fileno()))
    if not same_content(current, expected):
        raise ChangedOnDisk(path, current)
    # The file's encoding, BOM and line endings; untouched lines as they were.
    data = text if isinstance(text, bytes) else encode_edit(original, text)
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
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _replace(tmp, path)
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
