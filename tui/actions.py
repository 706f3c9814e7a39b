"""Actions on files, sessions and the clipboard (mixed into the app; each runs its slow part in a thread)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import date, datetime
from typing import TYPE_CHECKING

from textual import work

from tui.bridge import MemdeckError
from tui.clipboard import system_copy
from tui.widgets.memory_tree import NoteRef
from tui.workbench import Workbench

if TYPE_CHECKING:
    from tui.screens.dialogs import ChoiceScreen, PromptScreen


def _dialogs() -> tuple[type[ChoiceScreen], type[PromptScreen]]:
    from tui.screens.dialogs import ChoiceScreen, PromptScreen  # deferred: not on the first screen

    return ChoiceScreen, PromptScreen


class FileActions(Workbench):
    """New, rename, delete and close memory files."""

    @work(group="files", exclusive=True)
    async def action_close_file(self) -> None:
        if self.centre.current == "editor" and await self.confirm_discard():
            self.editor.clear()
            self.centre.current = "welcome"
            self.search.query_input.focus()

    @work(group="files", exclusive=True)
    async def action_new_daily(self) -> None:
        today = date.today()
        try:
            rel, created = await asyncio.to_thread(self.bridge.create_daily, today)
        except (MemdeckError, OSError) as exc:
            self.notify(f"Cannot create today's note: {exc}", severity="error")
            return
        if created:
            self.notify(f"Created {rel}")
            self.request_sync()
            self.scan_tree(with_sessions=False)
        self.open_note(rel)

    @work(group="files", exclusive=True)
    async def action_new_topic(self) -> None:
        _, PromptScreen = _dialogs()
        name = await self.push_screen_wait(PromptScreen(
            "New topic file", "A name for memory/<name>.md (sub-folders with /):", placeholder="projects/heron"))
        if not name:
            return
        try:
            rel = await asyncio.to_thread(self.bridge.create_topic, name)
        except (MemdeckError, OSError) as exc:
            self.notify(f"Cannot create it: {exc}", severity="error")
            return
        self.notify(f"Created {rel}")
        self.request_sync()
        self.scan_tree(with_sessions=False)
        self.open_note(rel)

    def _target_note(self) -> str | None:
        node = self.memory_tree.cursor_node
        if self.memory_tree.has_focus and node is not None and isinstance(node.data, NoteRef):
            return node.data.rel
        return self.editor.rel if self.centre.current == "editor" else None

    @work(group="files", exclusive=True)
    async def action_rename(self) -> None:
        rel = self._target_note()
        if rel is None:
            self.notify("Select a memory file first", severity="warning")
            return
        ChoiceScreen, PromptScreen = _dialogs()
        name = await self.push_screen_wait(PromptScreen("Rename", f"New name for {rel}:", rel))
        if not name or name == rel:
            return
        choice = await self.push_screen_wait(ChoiceScreen(
            "Rename?", f"Rename {rel} → {name}?", [("rename", "Rename", "warning"), ("cancel", "Cancel", "default")]))
        if choice != "rename":
            return
        editor = self.loaded_editor
        was_open = editor is not None and editor.rel == rel
        if was_open and not await self.confirm_discard():
            return
        try:
            new_rel = await asyncio.to_thread(self.bridge.rename_note, rel, name)
        except (MemdeckError, OSError) as exc:
            self.notify(f"Cannot rename: {exc}", severity="error")
            return
        self.notify(f"Renamed {rel} → {new_rel}")
        self.request_sync()
        self.scan_tree(with_sessions=False)
        if editor is not None and was_open:
            editor.clear()
            self.open_note(new_rel)

    @work(group="files", exclusive=True)
    async def action_delete(self) -> None:
        rel = self._target_note()
        if rel is None:
            self.notify("Select a memory file first", severity="warning")
            return
        ChoiceScreen, _ = _dialogs()
        choice = await self.push_screen_wait(ChoiceScreen(
            "Delete?", f"Delete {rel}? This cannot be undone.",
            [("delete", "Delete", "error"), ("cancel", "Cancel", "default")]))
        if choice != "delete":
            return
        try:
            await asyncio.to_thread(self.bridge.delete_note, rel)
        except (MemdeckError, OSError) as exc:
            self.notify(f"Cannot delete: {exc}", severity="error")
            return
        editor = self.loaded_editor
        if editor is not None and editor.rel == rel:
            editor.clear()
            self.centre.current = "welcome"
        self.notify(f"Deleted {rel}")
        self.request_sync()
        self.scan_tree(with_sessions=False)



class SessionActions(Workbench):
    """Open a session, flush it into today's note, write its session note."""

    # -- sessions -----------------------------------------------------------------------------
    def action_open_session(self) -> None:
        sessions = self._sessions()
        if not sessions:
            self.notify("No session transcripts found", severity="warning")
            return
        commands = [(s.label, _bind(self.open_session, s.path), s.detail) for s in sessions]
        self.search_commands(commands, placeholder="Open a session…")

    @work(group="flush", exclusive=True)
    async def action_flush(self) -> None:
        from tui.screens.flush import FlushScreen

        view = self.loaded_transcript
        transcript = view.transcript if view is not None else None
        if self.centre.current != "transcript" or transcript is None:
            self.notify("Open a session first (ctrl+p → Open session)", severity="warning")
            return
        self.notify("Drafting memories from the session…")
        now = datetime.now().astimezone()
        draft = await asyncio.to_thread(self.bridge.draft_flush, transcript)
        if draft.is_empty:
            known = f" ({draft.skipped_known} already in memory)" if draft.skipped_known else ""
            self.notify(f"Nothing new to store from session {transcript.session_id[:8]}{known}")
            return
        block = await asyncio.to_thread(self.bridge.render_flush, draft, now)
        target = f"memory/{now:%Y-%m-%d}.md"
        info = (f"{len(draft.items)} candidate memories ({draft.method})"
                + (f", {draft.skipped_known} already in memory" if draft.skipped_known else "")
                + f". Edit freely; Append adds this to {target}.")
        text = await self.push_screen_wait(FlushScreen(f"Flush session {transcript.session_id[:8]} → {target}",
                                                       info, block, draft.warnings))
        if not text:
            return
        try:
            rel, warnings = await asyncio.to_thread(self.bridge.append_flush, transcript.session_id, text, now)
        except (MemdeckError, OSError) as exc:
            self.notify(f"Flush failed, nothing written: {exc}", severity="error")
            return
        self.notify(f"Appended to {rel}")
        for warning in warnings:
            self.notify(warning, severity="warning")
        self.request_sync()
        self.scan_tree(with_sessions=True)

    @work(group="flush", exclusive=True)
    async def action_session_note(self) -> None:
        view = self.loaded_transcript
        if self.centre.current != "transcript" or view is None or view.transcript is None or view.path is None:
            self.notify("Open a session first (ctrl+p → Open session)", severity="warning")
            return
        try:
            rel = await asyncio.to_thread(self.bridge.write_session_note, view.transcript, view.path)
        except (MemdeckError, OSError) as exc:
            self.notify(f"Session note failed: {exc}", severity="error")
            return
        self.notify(f"Wrote {rel}")
        self.request_sync()
        self.scan_tree(with_sessions=False)



class ClipboardActions(Workbench):
    """Copy citations and snippets: OSC 52 always, the system clipboard when pyperclip reaches one."""

    def citation_text(self) -> str | None:
        """The editor's file and selected lines while it has focus, else the selected result's citation."""
        editor = self.loaded_editor
        in_editor = editor is not None and self.focused is editor.area and editor.rel is not None
        hit = self.search.selected_hit
        if not in_editor and hit is not None:
            return hit.citation
        if editor is not None and self.centre.current == "editor" and editor.rel is not None:
            sel = editor.area.selection
            start, end = sorted((sel.start[0], sel.end[0]))
            return f"{editor.rel}#L{start + 1}-L{end + 1}" if start != end else f"{editor.rel}#L{start + 1}"
        return None

    def snippet_text(self) -> str | None:
        """The editor's selection when it has focus, else the selected result's snippet."""
        editor = self.loaded_editor
        if editor is not None and self.focused is editor.area and editor.area.selected_text:
            return editor.area.selected_text
        hit = self.search.selected_hit
        return hit.snippet if hit is not None else None

    def action_copy_citation(self) -> None:
        text = self.citation_text()
        if text is None:
            self.notify("Nothing to cite: select a search result or open a file", severity="warning")
            return
        self.copy_text(text, f"citation {text}")

    def action_copy_snippet(self) -> None:
        text = self.snippet_text()
        if text is None:
            self.notify("Nothing to copy: select a search result", severity="warning")
            return
        self.copy_text(text, f"snippet ({len(text)} chars)")

    @work(group="clipboard")
    async def copy_text(self, text: str, what: str) -> None:
        """OSC 52 through the terminal (always), then the system clipboard when pyperclip can reach one."""
        self.copy_to_clipboard(text)
        problem = await asyncio.to_thread(system_copy, text)
        where = "clipboard" if problem is None else "terminal clipboard (OSC 52)"
        self.notify(f"Copied {what} to the {where}")



def _bind(func: Callable[..., object], *args: object) -> Callable[[], None]:
    def call() -> None:
        func(*args)

    return call
