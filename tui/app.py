"""MemdeckApp: the layout, key bindings, palette and help; the work itself lives in workbench.py and actions.py."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.theme import Theme
from textual.widgets import ContentSwitcher, Footer, Header, Static

from tui.actions import ClipboardActions, FileActions, SessionActions
from tui.commands import palette_commands
from tui.keys import APP_BINDINGS, KeyHelp, describe_bindings, unknown_ids
from tui.quiet_gc import pause_gc, resume_gc
from tui.widgets.index_status import IndexStatus
from tui.widgets.memory_tree import MemoryTree
from tui.widgets.search_pane import ModeSwitch, ResultList, SearchPane

if TYPE_CHECKING:
    from engine.config import Config

WELCOME = (
    "Search as you type above: keyword results at once, semantic ones when the model is ready.\n"
    "↓ moves into the results, enter opens the file at the matching lines.\n\n"
    "Pick a memory file or an agent session on the left.\n\n"
    "ctrl+s save · ctrl+n today's note · ctrl+t search mode · ctrl+l copy citation\n"
    "ctrl+p every command · ? or f1 keys · ctrl+q quit"
)


class MemdeckApp(FileActions, SessionActions, ClipboardActions):
    """The memory workbench."""

    CSS_PATH = Path(__file__).with_name("memdeck.tcss")
    TITLE = "memdeck"
    AUTO_FOCUS = "#search-input"  # focused from the first frame: no focus hop from the tree (a restyle each)
    BINDINGS: ClassVar[list[BindingType]] = [*APP_BINDINGS]

    # -- layout -------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        with Horizontal(id="body"):
            yield MemoryTree(id="tree")
            with Vertical(id="main"):
                # "-focused" from the start: the search box has focus in the first frame (AUTO_FOCUS).
                yield SearchPane(self.bridge, self._initial_mode, id="search", classes="-focused")
                with ContentSwitcher(initial="welcome", id="centre"):
                    # The editor and the transcript viewer join later (mount_panes, or on first use).
                    yield Static(Content(WELCOME), id="welcome")
        yield IndexStatus(id="status")
        yield Footer()

    def on_load(self) -> None:
        # Start-up builds ~10^5 long-lived objects (styles, widgets, Textual's caches) and the cyclic GC would
        # walk them over and over: 0.38 → 0.23 s of CPU from here to the first frame (load ~4). Resumed, with
        # what exists frozen, once the first screen is painted (start-up's own cyclic leftovers, ~2,300 objects,
        # stay frozen: a one-off few hundred KB, cheaper than the 50 ms full collection that would free them).
        pause_gc()
        self._gc_paused = True

    def _resume_gc(self) -> None:
        if self._gc_paused:
            self._gc_paused = False
            resume_gc()

    def on_mount(self) -> None:
        keymap = {str(k): str(v) for k, v in self.config.keys.items()}
        if keymap:
            self.set_keymap(keymap)
            unknown = unknown_ids(keymap, (row.binding_id for row in self.key_help()))
            if unknown:
                self.notify(f"[keys] in the config: unknown binding id(s) {', '.join(unknown)}", severity="warning")
        for error in self._theme_errors:
            self.notify(error, title="Theme", severity="warning")
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        # Paint first; the threads that import the engine and list files would compete for the GIL.
        self.call_after_refresh(self._start_background)

    def _start_background(self) -> None:
        self._resume_gc()
        self.scan_tree(with_sessions=False)
        self.boot()

    # -- search, clipboard, misc --------------------------------------------------------------
    def action_focus_search(self) -> None:
        self.search.query_input.focus()

    def action_toggle_mode(self) -> None:
        mode = self.search.cycle_mode()
        self.persist_setting("search_mode", mode)

    @on(ModeSwitch.Changed)
    def _mode_clicked(self, message: ModeSwitch.Changed) -> None:
        self.persist_setting("search_mode", message.mode)

    def action_escape(self) -> None:
        if self.status_pane.indexing and self._sync_running:
            self.action_cancel_index()
        elif not self.search.query_input.has_focus:
            self.search.query_input.focus()

    def _theme_changed(self, theme: Theme) -> None:
        if theme.name != self._saved_theme:
            self._saved_theme = theme.name
            self.persist_setting("theme", theme.name)

    def key_help(self) -> list[KeyHelp]:
        """Every binding with an id, as the help screen lists it."""
        from tui.widgets.transcript_view import TranscriptLines, TranscriptView

        groups: list[tuple[str, list[Binding]]] = [
            ("app", APP_BINDINGS),
            ("search results", _bindings(ResultList.BINDINGS)),
            ("memory tree", _bindings(MemoryTree.BINDINGS)),
            ("transcript", _bindings([*TranscriptLines.BINDINGS, *TranscriptView.BINDINGS])),
        ]
        keymap = {str(k): str(v) for k, v in self.config.keys.items()}
        return describe_bindings(groups, keymap, self.get_key_display)

    def action_help(self) -> None:
        from tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.key_help()))

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from palette_commands(self)

    async def action_quit(self) -> None:
        self._quit_guarded()

    @work(group="quit", exclusive=True)
    async def _quit_guarded(self) -> None:
        if await self.confirm_discard():
            self._watch_stop.set()
            self._cancel.set()
            self.exit(0)

    async def on_unmount(self) -> None:
        self._resume_gc()
        self._watch_stop.set()
        self._cancel.set()
        await asyncio.to_thread(self.bridge.close)


def _bindings(items: Iterable[BindingType]) -> list[Binding]:
    return [b for b in items if isinstance(b, Binding)]


def run_app(config: Config) -> int:
    """Run the TUI on a resolved config; the process exit code."""
    import logging
    import os

    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # the model's tqdm bar would draw over the UI
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # Textual draws on the terminal: library chatter goes to a log file, never to stderr.
    log_path = config.home / "memdeck.log"
    try:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        logging.basicConfig(filename=log_path, level=logging.WARNING,
                            format="%(asctime)s %(name)s %(levelname)s %(message)s", force=True)
    except OSError:
        logging.basicConfig(handlers=[logging.NullHandler()], force=True)
    logging.captureWarnings(True)
    app = MemdeckApp(config)
    app.run()
    return app.return_code or 0
