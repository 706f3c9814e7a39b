"""Saves change only the bytes that were edited: encoding, BOM, line endings (mixed too), U+2028/U+2029 and the
exact bytes of untouched lines survive; write errors name the note, not memdeck's temp file."""

from __future__ import annotations

import errno
import os
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.memory.files import MemoryFiles
from engine.textio import _exact_lines, decode_bytes, encode_edit, text_format
from tests.helpers import hash_config

BOMS = {"utf-8": b"", "utf-8-sig": b"\xef\xbb\xbf", "utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff"}
CODEC = {"utf-8": "utf-8", "utf-8-sig": "utf-8", "utf-16-le": "utf-16-le", "utf-16-be": "utf-16-be"}


def _bytes(encoding: str, text: str) -> bytes:
    return BOMS[encoding] + text.encode(CODEC[encoding])


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
