"""Copying from the workbench: a result's (or the editor's) citation and snippet, through OSC 52 always and the
system clipboard when pyperclip reaches one."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual import work

from tui.clipboard import system_copy

if TYPE_CHECKING:
    from tui.screens.workbench import Workbench


class Copying:
    """The workbench's copy actions (ctrl+l copies the citation; the palette copies the snippet too)."""

    def action_copy_citation(self: Workbench) -> None:
        text = citation_text(self)
        if text is None:
            self.notify("Nothing to cite: select a search result or open a file", severity="warning")
            return
        self.copy_text(text, f"citation {text}")

    def action_copy_snippet(self: Workbench) -> None:
        text = snippet_text(self)
        if text is None:
            self.notify("Nothing to copy: select a search result", severity="warning")
            return
        from engine.api import plural  # loaded by now: there is a result

        self.copy_text(text, f"snippet ({plural(len(text), 'char')})")

    @work(group="clipboard")
    async def copy_text(self: Workbench, text: str, what: str) -> None:
        """OSC 52 through the terminal (always), then the system clipboard when pyperclip can reach one."""
        self.app.copy_to_clipboard(text)
        problem = await asyncio.to_thread(system_copy, text)
        where = "clipboard" if problem is None else "terminal clipboard (OSC 52)"
        self.notify(f"Copied {what} to the {where}")


def citation_text(screen: Workbench) -> str | None:
    """The editor's file and selected lines while it has focus, else the selected result's citation."""
    editor = screen.loaded_editor
    in_editor = editor is not None and screen.focused_widget() is editor.area and editor.rel is not None
    hit = screen.search.selected_hit
    if not in_editor and hit is not None:
        return hit.citation
    if editor is not None and screen.centre.current == "editor" and editor.rel is not None:
        sel = editor.area.selection
        start, end = sorted((sel.start[0], sel.end[0]))
        return f"{editor.rel}#L{start + 1}-L{end + 1}" if start != end else f"{editor.rel}#L{start + 1}"
    return None


def snippet_text(screen: Workbench) -> str | None:
    """The editor's selection when it has focus, else the selected result's snippet.

    A snippet is the indexed text, in NFC: for a note stored decomposed (NFD) it reads the same as the file
    but is not its bytes. That is what a paste into a query or a prompt wants; the editor's selection is
    the file's own text."""
    editor = screen.loaded_editor
    if editor is not None and screen.focused_widget() is editor.area and editor.area.selected_text:
        return editor.area.selected_text
    hit = screen.search.selected_hit
    return hit.snippet if hit is not None else None
