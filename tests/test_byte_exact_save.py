"""Saves change only the bytes that were edited: encoding, BOM, line endings (mixed too), U+2028/U+2029 and the
exact bytes of untouched lines survive; write errors name the note, not memdeck's temp file."""

from __future__ import annotations

import errno
import io
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.memory.files import MemoryFiles
from engine.textio import _exact_lines, byte_lines, decode_bytes, encode_edit, text_format
from tests.helpers import hash_config

BOMS = {"utf-8": b"", "utf-8-sig": b"\xef\xbb\xbf", "utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff",
        "utf-32-le": b"\xff\xfe\x00\x00", "utf-32-be": b"\x00\x00\xfe\xff"}
CODEC = {"utf-8": "utf-8", "utf-8-sig": "utf-8", "utf-16-le": "utf-16-le", "utf-16-be": "utf-16-be",
         "utf-32-le": "utf-32-le", "utf-32-be": "utf-32-be", "utf-16-le-nobom": "utf-16-le",
         "utf-16-be-nobom": "utf-16-be"}


def _bytes(encoding: str, text: str) -> bytes:
    return BOMS.get(encoding, b"") + text.encode(CODEC[encoding])


# -- table: files opened and saved unchanged are byte-identical; the format is read right --------------------------

CASES = {
    "lf": ("utf-8", "# Title\n\n- a\n- b\n", "UTF-8 · LF"),
    "crlf": ("utf-8", "# Title\r\n\r\n- a\r\n", "UTF-8 · CRLF"),
    "cr": ("utf-8", "# Title\r- a\r", "UTF-8 · CR"),
    "mixed": ("utf-8", "a\r\nb\nc\rd\r\ne", "UTF-8 · mixed CRLF/LF/CR"),
    "bom-crlf": ("utf-8-sig", "# Windows\r\n- x\r\n", "UTF-8 · BOM · CRLF"),
    "double-bom": ("utf-8-sig", "\ufeff# twice\n", "UTF-8 · BOM · LF"),
    "utf16le": ("utf-16-le", "# Notepad\r\n- ü\u2028ß\r\n", "UTF-16 LE · BOM · CRLF"),
    "utf16be": ("utf-16-be", "# Mac\n- 中文\n", "UTF-16 BE · BOM · LF"),
    "separators": ("utf-8", "- one\u2028two\u2029three\n- four\n", "UTF-8 · LF"),
    "no-final-newline": ("utf-8", "only line", "UTF-8 · LF"),
    "empty": ("utf-8", "", "UTF-8 · LF"),
    "bom-only": ("utf-8-sig", "", "UTF-8 · BOM · LF"),
    # round 2
    "only-cr": ("utf-8", "\r", "UTF-8 · CR"),
    "only-crlf-crlf": ("utf-8", "\r\n\r\n", "UTF-8 · CRLF"),
    "two-final-newlines": ("utf-8", "# T\n- a\n\n", "UTF-8 · LF"),
    "lone-cr-inside-a-line": ("utf-8", "# T\n- a\rb\n", "UTF-8 · mixed LF/CR"),
    "trailing-blanks-and-tabs": ("utf-8", "# T  \n\t- a\t \n", "UTF-8 · LF"),
    "zwnbsp-in-a-line": ("utf-8", "- a\ufeffb\n", "UTF-8 · LF"),
    "nel-vt-ff-in-lines": ("utf-8", "- a\x85b\n- c\x0bd\x0ce\n", "UTF-8 · LF"),
    "separator-at-the-end": ("utf-8", "- a\n\u2028", "UTF-8 · LF"),
    "utf16le-no-bom": ("utf-16-le-nobom", "# Notes\r\n- caf\u00e9 \u4e00\r\n", "UTF-16 LE · CRLF"),
    "utf16be-no-bom": ("utf-16-be-nobom", "# Notes\n- plain\n", "UTF-16 BE · LF"),
    "utf32le-bom": ("utf-32-le", "# UTF-32\r\n- \U0001f600 x\r\n", "UTF-32 LE · BOM · CRLF"),
    "utf32be-bom": ("utf-32-be", "# UTF-32\n- y\n", "UTF-32 BE · BOM · LF"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_saving_a_note_unchanged_writes_the_same_bytes(tmp_path: Path, name: str) -> None:
    encoding, text, label = CASES[name]
    data = _bytes(encoding, text)
    (tmp_path / "memory").mkdir()
    path = tmp_path / "memory" / "note.md"
    path.write_bytes(data)
    files = MemoryFiles(hash_config(tmp_path))
    note = files.read_note("memory/note.md")
    assert note.format.label == label
    # Citation lines: \n, \r\n and \r break lines; U+2028/U+2029 do not.
    assert note.text.count("\n") == len(re.findall(r"\r\n|\r|\n", text))
    files.save_note("memory/note.md", note.text, note.stamp)
    assert path.read_bytes() == data


# -- table: an edit changes only the bytes of the lines it changed ------------------------------------------------

def _set(row: int, line: str) -> Callable[[list[str]], list[str]]:
    return lambda lines: [*lines[:row], line, *lines[row + 1:]] if row >= 0 else [*lines[:row], line]


EDITS: dict[str, tuple[bytes, Callable[[list[str]], list[str]], bytes]] = {
    # name: (file, edit of its lines, what is saved)
    "last-line-without-newline": (b"a\r\nb", _set(-1, "B"), b"a\r\nB"),
    "append-after-a-last-line-without-newline": (b"a\r\nb", lambda ls: [*ls, "c"], b"a\r\nb\r\nc"),
    "two-final-newlines": (b"a\n\n", _set(0, "A"), b"A\n\n"),
    "only-cr": (b"\r", _set(0, "x"), b"x\r"),
    "only-crlf-crlf": (b"\r\n\r\n", _set(1, "x"), b"\r\nx\r\n"),
    "adjacent-lf-and-crlf-lines": (b"a\r\nb\nc\r\nd\n", lambda ls: ["a", "B", "C", "d", ""],
                                   b"a\r\nB\nC\r\nd\n"),
    "enter-in-a-crlf-line": (b"# T\r\n- ab cd\r\n", lambda ls: ["# T", "- ab", " cd", ""], b"# T\r\n- ab\r\n cd\r\n"),
    "pasted-crlf-into-lf": (b"# T\n- a\n", lambda ls: ["# T", "- a", "x\r\ny\rz", ""], b"# T\n- a\nx\ny\nz\n"),
    "untouched-latin-1-line": (b"caf\xe9\nok\n", _set(1, "OK"), b"caf\xe9\nOK\n"),
    "untouched-nul-line": (b"a\x00b\nc\n", _set(1, "C"), b"a\x00b\nC\n"),
    "utf16-odd-last-byte": (b"\xff\xfe" + "ab\n".encode("utf-16-le") + b"c", _set(0, "AB"),
                            b"\xff\xfe" + "AB\n".encode("utf-16-le") + b"c"),
    "utf32le-edit": (b"\xff\xfe\x00\x00" + "ab\ncd\n".encode("utf-32-le"), _set(0, "AB"),
                     b"\xff\xfe\x00\x00" + "AB\ncd\n".encode("utf-32-le")),
    "utf16le-no-bom-edit": ("# a\r\n- b\r\n".encode("utf-16-le"), _set(1, "- B"),
                            "# a\r\n- B\r\n".encode("utf-16-le")),
    "utf16le-no-bom-would-stop-looking-like-it": ("# a\n".encode("utf-16-le"), _set(0, "# \u4e2d\u6587\u7b14\u8bb0"),
                                                  b"\xff\xfe" + "# \u4e2d\u6587\u7b14\u8bb0\n".encode("utf-16-le")),
    "separator-at-the-end": ("a\n\u2028".encode(), _set(0, "A"), "A\n\u2028".encode()),
    "zwnbsp-kept-in-an-edited-line": ("a\ufeffb\nc\n".encode(), _set(0, "a\ufeffB"), "a\ufeffB\nc\n".encode()),
}


@pytest.mark.parametrize("name", sorted(EDITS))
def test_an_edit_writes_only_the_lines_it_changed(name: str) -> None:
    original, edit, expected = EDITS[name]
    lines = decode_bytes(original).text.split("\n")
    assert encode_edit(original, "\n".join(edit(lines))) == expected


# What the editor may edit (and the review may change): a file whose edited lines keep every byte. Undecodable
# bytes show as U+FFFD and NUL bytes not at all, so a file with either opens read-only (lines an edit does not
# touch keep their bytes whatever they are, see the table above); UTF-16 without a BOM is text, not binary.
EDITABLE = {
    "utf8": (b"# a\n", True),
    "latin-1-byte": (b"caf\xe9\n", False),
    "nul-in-the-first-8k": (b"a\x00b\n", False),
    "nul-after-8k": (b"x" * 9000 + b"\na\x00b\n", False),
    "utf16-nul-character": (b"\xff\xfe" + "a\x00b\n".encode("utf-16-le"), False),
    "utf16-odd-byte-count": (b"\xff\xfe" + "ab\n".encode("utf-16-le") + b"c", False),
    "utf16-lone-surrogate": (b"\xff\xfe\x00\xd8a\x00", False),
    "utf16le-no-bom": ("# Notes\n- x\n".encode("utf-16-le"), True),
    "utf16be-no-bom": ("# Notes\n- x\n".encode("utf-16-be"), True),
    "utf32le-bom": (b"\xff\xfe\x00\x00" + "# N\n".encode("utf-32-le"), True),
    "binary-with-zero-pairs": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", False),
}


@pytest.mark.parametrize("name", sorted(EDITABLE))
def test_a_file_is_editable_only_when_its_edited_lines_keep_their_bytes(name: str) -> None:
    data, editable = EDITABLE[name]
    decoded = decode_bytes(data)
    assert decoded.editable is editable
    assert encode_edit(data, decoded.text) == data


def test_one_edited_line_keeps_every_other_lines_bytes(tmp_path: Path) -> None:
    data = b"\xef\xbb\xbfone\r\ntwo\x00\nthree\rfour"
    (tmp_path / "MEMORY.md").write_bytes(data)
    files = MemoryFiles(hash_config(tmp_path))
    note = files.read_note("MEMORY.md")
    lines = note.text.split("\n")
    assert lines == ["one", "two", "three", "four"]  # the NUL is not shown; its line is untouched, so it stays
    lines[2] = "THREE"
    lines.insert(1, "inserted")
    files.save_note("MEMORY.md", "\n".join(lines), note.stamp)
    assert (tmp_path / "MEMORY.md").read_bytes() == b"\xef\xbb\xbfone\r\ninserted\r\ntwo\x00\nTHREE\rfour"


def test_a_bom_read_as_a_character_is_not_written_twice() -> None:
    # The review reads files with a strict UTF-8 decode, which keeps the BOM as U+FEFF in its text.
    data = b"\xef\xbb\xbf# Memory\r\n- a\r\n"
    text = data.decode("utf-8") + "- b\r\n"
    assert encode_edit(data, text) == b"\xef\xbb\xbf# Memory\r\n- a\r\n- b\r\n"


def test_an_append_is_written_like_the_file(tmp_path: Path) -> None:
    path = tmp_path / "memory" / "2026-01-12.md"
    path.parent.mkdir()
    data = b"\xff\xfe" + "# Monday\r\n".encode("utf-16-le")
    path.write_bytes(data)
    MemoryFiles(hash_config(tmp_path)).append_note("memory/2026-01-12.md", "- new point")
    assert path.read_bytes() == data + "\r\n- new point\r\n".encode("utf-16-le")


@pytest.mark.parametrize(("data", "added"), [
    ("# Monday\r\n".encode("utf-16-le"), "\r\n- new point\r\n".encode("utf-16-le")),
    (b"\x00\x00\xfe\xff" + "# Monday\n".encode("utf-32-be"), "\n- new point\n".encode("utf-32-be")),
    (b"# Monday\r", b"\r- new point\r"),
], ids=["utf16le-no-bom", "utf32be-bom", "cr-only"])
def test_appends_are_written_like_the_file_in_every_format(tmp_path: Path, data: bytes, added: bytes) -> None:
    path = tmp_path / "memory" / "2026-01-12.md"
    path.parent.mkdir()
    path.write_bytes(data)
    MemoryFiles(hash_config(tmp_path)).append_note("memory/2026-01-12.md", "- new point")
    assert path.read_bytes() == data + added


def test_an_append_keeps_utf16_without_a_bom_readable_as_utf16(tmp_path: Path) -> None:
    path = tmp_path / "memory" / "2026-01-12.md"
    path.parent.mkdir()
    path.write_bytes("# M\n".encode("utf-16-le"))
    MemoryFiles(hash_config(tmp_path)).append_note("memory/2026-01-12.md", "- \u4e2d\u6587\u7b14\u8bb0\u5f88\u591a")
    assert decode_bytes(path.read_bytes()).text == "# M\n\n- \u4e2d\u6587\u7b14\u8bb0\u5f88\u591a\n"
    assert path.read_bytes().startswith(b"\xff\xfe")  # it got its BOM: without, it would read as binary


UTF16_CRLF = b"\xff\xfe" + "# Windows\r\n- a\r\n- b\n".encode("utf-16-le")


def test_rename_trash_and_restore_move_the_bytes_as_they_are(tmp_path: Path) -> None:
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "win.md").write_bytes(UTF16_CRLF)
    files = MemoryFiles(hash_config(tmp_path))
    rel = files.rename_note("memory/win.md", "windows")
    assert (tmp_path / rel).read_bytes() == UTF16_CRLF
    deleted = files.delete_note(rel)
    assert deleted.trashed.read_bytes() == UTF16_CRLF
    files.restore_deleted()
    assert (tmp_path / rel).read_bytes() == UTF16_CRLF


def test_a_conflict_copy_is_written_like_the_note(tmp_path: Path) -> None:
    (tmp_path / "memory").mkdir()
    path = tmp_path / "memory" / "win.md"
    path.write_bytes(UTF16_CRLF)
    files = MemoryFiles(hash_config(tmp_path))
    mine = files.read_note("memory/win.md").text.replace("- a", "- mine")
    copy = files.write_copy("memory/win.md", mine)
    assert copy.read_bytes() == UTF16_CRLF.replace("- a".encode("utf-16-le"), "- mine".encode("utf-16-le"))


# -- property: any text, any supported encoding and line endings ---------------------------------------------------

_chars = st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\x00")
_body = st.text(st.one_of(_chars, st.sampled_from("\u2028\u2029 #-\ufeff")), max_size=12)
_endings = {"LF": ["\n"], "CRLF": ["\r\n"], "CR": ["\r"], "mixed": ["\n", "\r\n", "\r"]}


@st.composite
def _files(draw: st.DrawFn) -> tuple[str, str]:
    encoding = draw(st.sampled_from(sorted(BOMS)))
    endings = _endings[draw(st.sampled_from(sorted(_endings)))]
    bodies = draw(st.lists(_body, max_size=8))
    text = "".join(body + draw(st.sampled_from(endings)) for body in bodies) + draw(_body)
    if encoding == "utf-8" and text.startswith("\ufeff"):
        encoding = "utf-8-sig"  # those bytes are a UTF-8 file with a BOM
        text = text[1:]
    return encoding, text


@settings(max_examples=150, deadline=None)
@given(_files(), st.data())
def test_decode_then_save_is_byte_exact_and_an_edit_touches_one_line(file: tuple[str, str], data: st.DataObject) \
        -> None:
    encoding, text = file
    original = _bytes(encoding, text)
    decoded = decode_bytes(original)
    assert decoded.errors == 0 and not decoded.binary
    assert decoded.format == text_format(original)
    assert encode_edit(original, decoded.text) == original
    # The lines a changed save matches against: what the decode shows of each, and its exact bytes.
    _codec, exact = _exact_lines(original)
    assert "\n".join(shown for shown, _, _ in exact) == decoded.text
    assert BOMS[encoding] + b"".join(raw + ending for _, raw, ending in exact) == original

    # The file's own lines, split independently: body + ending, U+2028/U+2029 inside bodies.
    parts = re.split(r"(\r\n|\r|\n)", text)
    bodies, endings = parts[0::2], [*parts[1::2], ""]
    shown = decoded.text.split("\n")
    assert shown == bodies
    row = data.draw(st.integers(0, len(bodies) - 1))
    new_line = data.draw(_body.filter(lambda s: s != bodies[row]))
    edited = list(shown)
    edited[row] = new_line
    out = encode_edit(original, "\n".join(edited))
    expected = list(bodies)
    expected[row] = new_line
    assert decode_bytes(out).text == "\n".join(edited)  # the lines are the edited ones, no more, no fewer
    assert out.startswith(BOMS[encoding])
    out_parts = re.split(r"(\r\n|\r|\n)", out[len(BOMS[encoding]):].decode(CODEC[encoding]))
    assert out_parts[0::2] == expected
    changed = [i for i, (a, b) in enumerate(zip([*out_parts[1::2], ""], endings, strict=True)) if a != b]
    if changed:  # emptied between a lone CR and an LF ("\r" + "\n" would be one ending): that line's ending only
        assert changed == [row] and new_line == "" and endings[row - 1] == "\r" and endings[row] == "\n"
    else:
        assert out == _bytes(encoding, "".join(b + e for b, e in zip(expected, endings, strict=True)))


@settings(max_examples=150, deadline=None)
@given(_files(), st.lists(st.tuples(st.sampled_from(["insert", "delete", "replace"]), st.integers(0, 10), _body),
                          max_size=4))
def test_what_is_saved_reads_back_as_the_text_saved(file: tuple[str, str],
                                                     edits: list[tuple[str, int, str]]) -> None:
    encoding, text = file
    original = _bytes(encoding, text)
    lines = decode_bytes(original).text.split("\n")
    for op, at, line in edits:
        at %= len(lines)
        if op == "insert":
            lines.insert(at, line)
        elif op == "delete" and len(lines) > 1:
            del lines[at]
        else:
            lines[at] = line
    out = encode_edit(original, "\n".join(lines))
    assert decode_bytes(out).text == "\n".join(lines)
    assert text_format(out).encoding == text_format(original).encoding
    assert text_format(out).bom == text_format(original).bom or not out


_prefixes = st.sampled_from([b"", *BOMS.values()])
_raw = st.binary(max_size=40).map(lambda b: b.replace(b"\x01", b"\r").replace(b"\x02", b"\n"))


@settings(max_examples=200, deadline=None)
@given(_prefixes, _raw, st.integers(0, 20), _body)
def test_any_bytes_read_and_save_unchanged_and_an_editable_file_takes_an_edit(prefix: bytes, raw: bytes, row: int,
                                                                              line: str) -> None:
    data = prefix + raw
    decoded = decode_bytes(data)  # never raises, whatever the bytes
    assert encode_edit(data, decoded.text) == data
    if not decoded.editable:
        return
    lines = decoded.text.split("\n")
    lines[row % len(lines)] = line.replace("\ufeff", "") if row % len(lines) == 0 else line
    out = encode_edit(data, "\n".join(lines))
    assert decode_bytes(out).text == "\n".join(lines)
    assert text_format(out).encoding == decoded.format.encoding


@settings(max_examples=150, deadline=None)
@given(_files(), st.sampled_from([4, 8, 12, 1 << 20]))
def test_the_big_file_viewers_lines_are_the_editors(file: tuple[str, str], block: int) -> None:
    # The viewer finds lines in the bytes, a block at a time (byte_lines); they must be decode_bytes' lines.
    encoding, text = file
    data = _bytes(encoding, text)
    lines_of = byte_lines(data[:8192])
    starts = [lines_of.start]
    for ends, _scanned in lines_of.scan(io.BytesIO(data), block):
        starts.extend(ends)
    shown = [lines_of.decode(data[a:b]).removesuffix("\n").removesuffix("\r")
             for a, b in zip(starts, [*starts[1:], len(data)], strict=True)]
    assert shown == decode_bytes(data).text.split("\n")


# -- write errors name the note -----------------------------------------------------------------------------------

def _fail_mkstemp(*args: object, **kwargs: object) -> tuple[int, str]:
    folder = str(kwargs.get("dir"))
    raise PermissionError(errno.EACCES, "Permission denied", os.path.join(folder, ".MEMORY.md.x1y2z3.tmp"))


def _fail_replace(src: str, dst: object) -> None:
    raise PermissionError(errno.EACCES, "Permission denied", src, None, str(dst))


def _fail_fsync(fd: int) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize(("target", "fail"), [
    (tempfile, ("mkstemp", _fail_mkstemp)),
    (os, ("replace", _fail_replace)),
    (os, ("fsync", _fail_fsync)),
], ids=["temp-file", "rename", "disk-full"])
@pytest.mark.parametrize("how", ["save", "append"])
def test_a_failed_write_names_the_note_not_the_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         target: object, fail: tuple[str, object], how: str) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_bytes(b"# Memory\n")
    files = MemoryFiles(hash_config(tmp_path))
    note = files.read_note("MEMORY.md")
    monkeypatch.setattr(target, *fail)
    with pytest.raises(OSError) as caught:
        if how == "save":
            files.save_note("MEMORY.md", note.text + "- more\n", note.stamp)
        else:
            files.append_note("MEMORY.md", "- more")
    monkeypatch.undo()
    message = str(caught.value)
    assert str(path) in message and ".tmp" not in message, message
    assert caught.value.errno in (errno.EACCES, errno.ENOSPC)
    assert path.read_bytes() == b"# Memory\n"
    assert not list(tmp_path.glob(".*.tmp"))
