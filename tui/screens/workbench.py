"""What the workbench's parts and the screens over it may use of the workbench: one Protocol, no screen imports.

:class:`tui.screens.main.MainScreen` is the workbench. Its jobs live in mixins beside it (``file_actions``,
``session_actions``, ``copying``, ``watching``, ``recovery``), and the review screen acts on it too; all of them
see it as a :class:`Workbench`, so none of them imports ``tui.screens.main`` (which imports them): no cycle.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.app import App
    from textual.message import Message
    from textual.notifications import SeverityLevel
    from textual.widget import Widget
    from textual.widgets import ContentSwitcher

    from engine.config import Config
    from tui.bridge import Bridge
    from tui.screens.sync_queue import SyncQueue
    from tui.widgets.big_file_view import BigFileView
    from tui.widgets.memory_tree import MemoryTree
    from tui.widgets.note_editor import NoteEditor
    from tui.widgets.search_pane import SearchPane
    from tui.widgets.transcript_view import TranscriptView


class Workbench(Protocol):
    """The workbench screen as its parts see it: its engine, panes, background work and the opening of files."""

    bridge: Bridge
    config: Config
    sync: SyncQueue
    watch_enabled: bool
    watch_stop: asyncio.Event
    recovery_settled: bool

    # -- Textual's own (Screen) --------------------------------------------------------------
    @property
    def app(self) -> App[Any]: ...

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None: ...

    def post_message(self, message: Message) -> bool: ...

    def call_after_refresh(self, callback: Any, *args: Any, **kwargs: Any) -> bool: ...

    def focused_widget(self) -> Widget | None: ...

    # -- panes -------------------------------------------------------------------------------
    @property
    def memory_tree(self) -> MemoryTree: ...

    @property
    def search(self) -> SearchPane: ...

    @property
    def centre(self) -> ContentSwitcher: ...

    @property
    def editor(self) -> NoteEditor: ...

    @property
    def transcript(self) -> TranscriptView: ...

    @property
    def loaded_editor(self) -> NoteEditor | None: ...

    @property
    def loaded_transcript(self) -> TranscriptView | None: ...

    @property
    def loaded_big_file(self) -> BigFileView | None: ...

    async def ensure_editor(self) -> NoteEditor: ...

    # -- work --------------------------------------------------------------------------------
    def scan_tree(self, with_sessions: bool = True) -> object: ...

    def open_note(self, rel: str, select: tuple[int, int] | None = None, at_end: bool = False) -> object: ...

    def open_session(self, path: Path, line: int | None = None, named: bool = False) -> object: ...

    async def confirm_discard(self) -> bool: ...

    def watch_files(self) -> object: ...

    def copy_text(self, text: str, what: str) -> object: ...

    def action_focus_search(self) -> None: ...
