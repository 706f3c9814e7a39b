"""File actions of the workbench: save, close, today's note, a new topic, rename, delete and undo delete."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work

from tui.bridge import MemdeckError
from tui.widgets.memory_tree import NoteRef

if TYPE_CHECKING:
    from tui.messages import NoteSaved
    from tui.screens.workbench import Workbench

PRECIOUS_NAMES = frozenset({"memory.md", "user.md"})
"""Files whose delete needs their name typed (compared lower-case): the agent's long-term memory and profile."""


class FileActions:
    """The workbench's actions on memory files (each asks first where it could lose something)."""

    def action_save(self: Workbench) -> None:
        if self.centre.current == "editor" and self.editor.note is not None:
            self.editor.save_in_background()

    def on_note_saved(self: Workbench, message: NoteSaved) -> None:
        self.notify(f"Saved {message.rel}")
        for warning in message.warnings:
            self.notify(warning, severity="warning")
        self.sync.request()
        self.scan_tree(with_sessions=False)

    @work(group="files", exclusive=True)
    async def action_close_file(self: Workbench) -> None:
        big = self.loaded_big_file
        if self.centre.current == "bigfile" and big is not None:
            big.close()
            self.centre.current = "welcome"
            self.search.query_input.focus()
        elif self.centre.current == "editor" and await self.confirm_discard():
            self.editor.clear()
            self.centre.current = "welcome"
            self.search.query_input.focus()

    @work(group="files", exclusive=True)
    async def action_new_daily(self: Workbench) -> None:
        try:
            # Today in the zone notes are dated in ([memory] timezone, else the system's), as the engine's appends.
            rel, created = await asyncio.to_thread(lambda: self.bridge.create_daily(self.bridge.now().date()))
        except (MemdeckError, OSError) as exc:
            self.notify(f"Cannot create today's note: {exc}", severity="error")
            return
        if created:
            _file_added(self, rel)
        self.open_note(rel, at_end=True)  # where today's entry is typed: below the heading, after what is there

    @work(group="files", exclusive=True)
    async def action_new_topic(self: Workbench) -> None:
        from tui.screens.dialogs import PromptScreen

        name = await self.app.push_screen_wait(PromptScreen(
            "New topic file", "A name for memory/<name>.md (sub-folders with /):", placeholder="projects/heron"))
        if not name:
            return
        try:
            rel = await asyncio.to_thread(self.bridge.create_topic, name)
        except (MemdeckError, OSError) as exc:
            self.notify(f"Cannot create it: {exc}", severity="error")
            return
        _file_added(self, rel)
        self.open_note(rel)

    @work(group="files", exclusive=True)
    async def action_rename(self: Workbench) -> None:
        rel = _target_note(self)
        if rel is None:
            self.notify("Select a memory file first", severity="warning")
            return
        from tui.screens.dialogs import ChoiceScreen, PromptScreen

        name: str | None = rel
        problem = ""
        while True:
            where = "the workspace root" if "/" not in rel else rel.rpartition("/")[0] + "/"
            message = (f"{problem}\n\n" if problem else "") + (
                f"New name for {rel}. A plain name stays in {where}; type memory/… to move it into memory/. "
                "Memory files end in .md: it is added when left out.")
            name = await self.app.push_screen_wait(PromptScreen("Rename", message, name or rel))
            if not name or name == rel:
                return
            try:
                plan = await asyncio.to_thread(self.bridge.plan_rename, rel, name)
            except (MemdeckError, OSError) as exc:
                problem = f"Not renamed: {exc}"
                continue
            break
        if plan.new_rel == plan.rel:
            self.notify(f"{rel} already has that name")
            return
        shown = plan.new_rel + (" (root)" if plan.where == "root" else "")
        rules = "".join(f"\n· {rule}" for rule in plan.rules)
        choice = await self.app.push_screen_wait(ChoiceScreen(
            "Rename?", f"Rename {rel} → {shown}?{rules}",
            [("rename", "Rename", "warning"), ("cancel", "Cancel", "default")]))
        if choice != "rename":
            return
        editor = self.loaded_editor
        was_open = editor is not None and editor.rel == rel
        if was_open and not await self.confirm_discard():
            return
        try:
            new_rel = await asyncio.to_thread(self.bridge.rename_note, rel, plan.new_rel)
        except (MemdeckError, OSError) as exc:
            self.notify(f"Cannot rename: {exc}", severity="error")
            return
        self.notify(f"Renamed {rel} → {new_rel}")
        self.sync.request()
        self.scan_tree(with_sessions=False)
        big = self.loaded_big_file
        if editor is not None and was_open:
            editor.clear()
            self.open_note(new_rel)
        elif big is not None and big.rel == rel:
            big.close()
            self.open_note(new_rel)

    @work(group="files", exclusive=True)
    async def action_delete(self: Workbench) -> None:
        rel = _target_note(self)
        if rel is None:
            self.notify("Select a memory file first", severity="warning")
            return
        from tui.screens.dialogs import ChoiceScreen, ConfirmNameScreen

        trash = "It goes to memdeck's trash; ctrl+p → Undo delete puts it back."
        if Path(rel).name.lower() in PRECIOUS_NAMES:
            name = Path(rel).name
            confirmed = await self.app.push_screen_wait(ConfirmNameScreen(
                f"Delete {name}?", f"{rel} is the agent's long-term memory. {trash}\n\nType {name} to delete it.",
                name))
            if not confirmed:
                return
        else:
            choice = await self.app.push_screen_wait(ChoiceScreen(
                "Delete?", f"Delete {rel}? {trash}",
                [("delete", "Delete", "error"), ("cancel", "Cancel", "default")]))
            if choice != "delete":
                return
        editor = self.loaded_editor
        was_open = editor is not None and editor.rel == rel
        if was_open and not await self.confirm_discard():
            return
        try:
            deleted = await asyncio.to_thread(self.bridge.delete_note, rel)
        except (MemdeckError, OSError) as exc:
            self.notify(f"Cannot delete: {exc}", severity="error")
            return
        if editor is not None and was_open:
            editor.clear()
            self.centre.current = "welcome"
        big = self.loaded_big_file
        if big is not None and big.rel == rel:
            big.close()
            self.centre.current = "welcome"
        self.notify(f"Deleted {rel} (kept in {deleted.trashed}; ctrl+p → Undo delete)")
        self.sync.request()
        self.scan_tree(with_sessions=False)

    @work(group="files", exclusive=True)
    async def action_undo_delete(self: Workbench) -> None:
        try:
            restored = await asyncio.to_thread(self.bridge.restore_deleted)
        except (MemdeckError, OSError) as exc:
            self.notify(f"Nothing restored: {exc}", severity="warning")
            return
        self.notify(f"Restored {restored.rel}")
        self.sync.request()
        self.scan_tree(with_sessions=False)
        self.open_note(restored.rel)


def _file_added(screen: Workbench, rel: str) -> None:
    screen.notify(f"Created {rel}")
    screen.sync.request()
    screen.scan_tree(with_sessions=False)


def _target_note(screen: Workbench) -> str | None:
    """The memory file a rename or delete is for: the tree's while it has focus, else the open one."""
    node = screen.memory_tree.cursor_node
    if screen.memory_tree.has_focus and node is not None and isinstance(node.data, NoteRef):
        return node.data.rel
    big = screen.loaded_big_file
    if screen.centre.current == "bigfile" and big is not None:
        return big.rel
    return screen.editor.rel if screen.centre.current == "editor" else None
