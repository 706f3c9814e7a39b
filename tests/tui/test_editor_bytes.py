"""The editor changes only the bytes it edits: encodings, BOMs, line endings and U+2028/U+2029 survive a save."""

from __future__ import annotations

import re

import pytest
from textual.pilot import Pilot

from engine.config import Config
from tests.tui.conftest import make_app, settle
from tui.app import MemdeckApp

NOTES = {
    # rel: (bytes on disk, the format label the header shows)
    "memory/crlf-bom.md": (b"\xef\xbb\xbf# Windows note\r\n\r\n- first point\r\n- second point\r\n", "UTF-8 · BOM · CRLF"),
    "memory/separators.md": ("# Pasted\n\n- one\u2028still line three\n- four\u2029same line\n- five\n".encode(),
                             "UTF-8 · LF"),
    "memory/utf16.md": (b"\xff\xfe" + "# Notepad\r\n\r\n- a\u2028b\r\n- c\n".encode("utf-16-le"),
                        "UTF-16 LE · BOM · mixed CRLF/LF"),
    "memory/utf32.md": (b"\xff\xfe\x00\x00" + "# UTF-32\r\n- x\r\n".encode("utf-32-le"), "UTF-32 LE · BOM · CRLF"),
    "memory/utf16-no-bom.md": ("# PowerShell\r\n- y\r\n".encode("utf-16-le"), "UTF-16 LE · CRLF"),
    "memory/cr-only.md": (b"# Classic Mac\r- z\r", "UTF-8 · CR"),
    "memory/zwnbsp.md": ("# Z\n- a\ufeffb\n".encode(), "UTF-8 · LF"),
}


@pytest.fixture
def notes(config: Config) -> Config:
    for rel, (data, _) in NOTES.items():
        (config.workspace / rel).write_bytes(data)
    return config


async def _open(pilot: Pilot, app: MemdeckApp, rel: str) -> None:
    app.main.open_note(rel)
    await settle(pilot)
    assert app.main.editor.rel == rel


def _header(app: MemdeckApp) -> str:
    return str(app.main.editor.query_one("#editor-header").render())


async def test_an_untouched_note_is_not_modified_and_saves_the_same_bytes(notes: Config) -> None:
    app = make_app(notes)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        for rel, (data, label) in NOTES.items():
            await _open(pilot, app, rel)
            editor = app.main.editor
            assert editor.note is not None
            assert not editor.modified, rel
            assert "modified" not in _header(app)
            assert label in _header(app)
            # Editor lines are the index's (citation) lines: U+2028/U+2029 stay inside their line.
            text = data.decode(editor.note.format.encoding).removeprefix("\ufeff")
            assert editor.area.document.line_count == len(re.findall(r"\r\n|\r|\n", text)) + 1
            assert await editor.save()
            await settle(pilot)
            assert (notes.workspace / rel).read_bytes() == data, rel


async def test_one_edited_line_changes_only_that_line(notes: Config) -> None:
    app = make_app(notes)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await _open(pilot, app, "memory/crlf-bom.md")
        area = app.main.editor.area
        area.focus()
        area.move_cursor((3, len(area.document[3])))  # line 4: "- second point"
        await pilot.press("!")
        assert app.main.editor.modified
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert not app.main.editor.modified
        assert (notes.workspace / "memory/crlf-bom.md").read_bytes() == (
            b"\xef\xbb\xbf# Windows note\r\n\r\n- first point\r\n- second point!\r\n")

        await _open(pilot, app, "memory/separators.md")
        area = app.main.editor.area
        assert area.document[2] == "- one\u2028still line three"  # line 3, as a citation counts it
        assert area.document.get_line(2) == "- one\u21b5still line three"  # drawn with a visible glyph
        area.focus()
        area.move_cursor((4, len(area.document[4])))  # line 5: "- five"
        await pilot.press("!")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert (notes.workspace / "memory/separators.md").read_bytes() == (
            "# Pasted\n\n- one\u2028still line three\n- four\u2029same line\n- five!\n".encode())

        await _open(pilot, app, "memory/utf16.md")
        area = app.main.editor.area
        area.focus()
        area.move_cursor((3, len(area.document[3])))  # line 4: "- c" (LF-ended, in a mostly CRLF file)
        await pilot.press("!")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert (notes.workspace / "memory/utf16.md").read_bytes() == (
            b"\xff\xfe" + "# Notepad\r\n\r\n- a\u2028b\r\n- c!\n".encode("utf-16-le"))


def test_the_conflict_diff_counts_lines_as_the_editor_does() -> None:
    from tui.bridge import unified_diff

    diff = unified_diff("a.md", "x\u2028y\nz\n", "x\u2028y\nZ\n")
    assert "@@ -1,2 +1,2 @@" in diff and " x\u2028y\n-z\n+Z\n" in diff


async def test_nul_bytes_anywhere_open_read_only_and_tab_and_zwnbsp_show_as_they_are(config: Config) -> None:
    ws = config.workspace
    (ws / "memory/nul-late.md").write_bytes(b"# Late NUL\n" + b"x" * 9000 + b"\n- a\x00b\n")
    (ws / "memory/tabs.md").write_bytes(b"# Tabs\n\n- a\n\t- b\n")
    (ws / "memory/zwnbsp.md").write_bytes("# Z\n- a\ufeffb\n".encode())
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        editor = app.main.editor
        # A NUL past the first 8 KiB is not "binary", but it is not shown: an edit of its line would drop it.
        await _open(pilot, app, "memory/nul-late.md")
        assert editor.read_only and "read-only" in _header(app)
        assert "NUL bytes" in str(editor.query_one("#editor-banner").render())

        await _open(pilot, app, "memory/zwnbsp.md")
        assert editor.area.document[1] == "- a\ufeffb"
        assert editor.area.document.get_line(1) == "- a\u237db"  # drawn: one visible cell, not zero-width

        await _open(pilot, app, "memory/tabs.md")
        area = editor.area
        area.focus()
        area.move_cursor((3, 0))
        await pilot.press("tab")  # the note indents with tabs: tab indents with a tab
        assert area.document[3] == "\t\t- b"
        await pilot.press("ctrl+z")
        assert not editor.modified


async def test_the_big_file_viewer_counts_lines_as_citations_do(config: Config) -> None:
    from engine.textio import decode_bytes

    long_line = "- " + "word " * 2500  # over LONG_LINE_CHARS: opens in the viewer
    text = f"# Big\r\n\r\n{long_line}\r\n- after\r- cr line\n- lf line\r\n"
    data = b"\xff\xfe" + text.encode("utf-16-le")
    (config.workspace / "memory/big16.md").write_bytes(data)
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.main.open_note("memory/big16.md")
        await settle(pilot)
        view = app.main.loaded_big_file
        assert view is not None and app.main.centre.current == "bigfile"
        rows = view.lines
        await pilot.wait_for_scheduled_animations()
        for _ in range(50):
            if rows.index.done:
                break
            await pilot.pause()
        assert rows.index.done
        lines = decode_bytes(data).text.split("\n")
        assert rows.index.lines == len(lines) - 1  # the final newline starts no line
        assert [rows._text(i) for i in (0, 3, 4, 5)] == ["# Big", "- after", "- cr line", "- lf line"]
