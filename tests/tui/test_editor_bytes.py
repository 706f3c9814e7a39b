"""The editor changes only the bytes it edits: encodings, BOMs, line endings and U+2028/U+2029 survive a save."""

from __future__ import annotations

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
            assert editor.area.document.line_count == text.replace("\r\n", "\n").count("\n") + 1
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
