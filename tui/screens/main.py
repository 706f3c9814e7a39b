"""MainScreen: the workbench — its panes and their state, the background work, opening files and sessions.

Its other jobs are mixins beside it: file_actions, session_actions, copying, watching, recovery."""

from __future__ import annotations

import asyncio
import gc
import importlib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, cast

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widget import AwaitMount
from textual.widgets import ContentSwitcher, Footer, Header, Static

from tui.bridge import Bridge, MemdeckError
from tui.messages import (
    EngineFailed,
    EngineOpened,
    IndexFinished,
    IndexProgressed,
    ModelLoaded,
    NoteChosen,
    ResultChosen,
    SessionChosen,
    StatusRefreshed,
    TreeScanned,
)
from tui.quiet_gc import quiet_gc
from tui.screens.copying import Copying
from tui.screens.file_actions import FileActions
from tui.screens.recovery import Recovery
from tui.screens.session_actions import SessionActions
from tui.screens.sync_queue import SyncQueue
from tui.screens.watching import Watching
from tui.widgets.index_status import IndexStatus
from tui.widgets.memory_tree import MemoryTree, SessionRef
from tui.widgets.search_pane import ModeSwitch, SearchPane

if TYPE_CHECKING:
    from textual.timer import Timer
    from textual.widget import Widget

    from engine.api import Hit, Note
    from engine.config import Config
    from tui.widgets.big_file_view import BigFileView
    from tui.widgets.note_editor import NoteEditor
    from tui.widgets.transcript_view import TranscriptView

WELCOME = (
    "Search as you type above: keyword results at once, semantic ones when the model is ready.\n"
    "↓ moves into the results, enter opens the file at the matching lines.\n\n"
    "Pick a memory file or an agent session on the left.\n\n"
    "ctrl+s save · ctrl+n today's note · ctrl+t search mode · ctrl+l copy citation\n"
    "ctrl+p every command · ? or f1 keys · ctrl+q quit"
)


class MainScreen(FileActions, SessionActions, Copying, Watching, Recovery, Screen[None]):
    """The memory workbench: tree, search, editor / transcript, index status.

    It lays out the panes, runs the background work (open, scan, index, model) and opens files and sessions; its
    other jobs are the mixins' (file actions, session actions, copying, watching, recovery copies), which see it
    as a :class:`tui.screens.workbench.Workbench`.

    Args:
        bridge: the engine, as the TUI calls it.
        config: the resolved config (the watcher reads its paths).
        search_mode: the search mode to start in.
        save_setting: remembers a ``[tui]`` setting (the app's; runs in the background).
        watch: watch the files for changes by others.
        load_model: load the embedding model once the first sync is done.
    """

    AUTO_FOCUS = "#search-input"  # focused from the first frame: no focus hop from the tree (a restyle each)

    def __init__(self, bridge: Bridge, config: Config, *, search_mode: str,
                 save_setting: Callable[[str, str], None], watch: bool = True, load_model: bool = True) -> None:
        super().__init__()
        self.bridge = bridge
        self.config = config
        self.watch_enabled = watch
        self.auto_load_model = load_model
        self.sync = SyncQueue(bridge, self)
        self._search_mode = search_mode
        self._persist = save_setting
        self._model_started = False
        self._follow: Timer | None = None  # while another process writes the index: follows its progress
        self._follow_ticks = 0
        self.watch_stop = asyncio.Event()
        self._panes: dict[str, AwaitMount] = {}

    # -- layout -------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        with Horizontal(id="body"):
            yield MemoryTree(id="tree")
            with Vertical(id="main"):
                # "-focused" from the start: the search box has focus in the first frame (AUTO_FOCUS).
                yield SearchPane(self.bridge, self._search_mode, id="search", classes="-focused")
                with ContentSwitcher(initial="welcome", id="centre"):
                    # The editor and the transcript viewer join later (mount_panes, or on first use).
                    yield Static(Content(WELCOME), id="welcome")
        yield IndexStatus(id="status")
        yield Footer()

    @property
    def memory_tree(self) -> MemoryTree:
        """The memory tree."""
        return self.query_one(MemoryTree)

    @property
    def search(self) -> SearchPane:
        """The search pane."""
        return self.query_one(SearchPane)

    @property
    def status_pane(self) -> IndexStatus:
        """The index status pane."""
        return self.query_one(IndexStatus)

    @property
    def centre(self) -> ContentSwitcher:
        """Editor / transcript / welcome."""
        return self.query_one("#centre", ContentSwitcher)

    @property
    def editor(self) -> NoteEditor:
        """The editor (mounted just after the first screen; ``ensure_editor`` waits for it)."""
        return cast("NoteEditor", self.query_one("#editor"))

    @property
    def transcript(self) -> TranscriptView:
        """The transcript viewer (mounted just after the first screen; ``ensure_transcript`` waits for it)."""
        return cast("TranscriptView", self.query_one("#transcript"))

    @property
    def loaded_editor(self) -> NoteEditor | None:
        """The editor, or None while it is not mounted yet (instant)."""
        return cast("NoteEditor | None", self._pane("editor"))

    @property
    def loaded_transcript(self) -> TranscriptView | None:
        """The transcript viewer, or None while it is not mounted yet (instant)."""
        return cast("TranscriptView | None", self._pane("transcript"))

    def focused_widget(self) -> Widget | None:
        """The widget with focus on this screen (the copy actions ask whether it is the editor)."""
        return self.focused

    def _pane(self, pane_id: str) -> object | None:
        try:
            widget = self.query_one(f"#{pane_id}")
        except NoMatches:
            return None
        return widget if widget.is_mounted else None

    @work(group="panes")
    async def mount_panes(self) -> None:
        """Mount the editor and the transcript viewer (once the first sync is done; on first use if earlier).

        Deferred: they are hidden at start, and their modules (TextArea, the transcript renderer) and styles
        cost ~10% of the first screen. The modules load in a thread (an import lets the event loop run between
        bytecodes), then each pane mounts in its own turn of the loop.
        """
        await asyncio.to_thread(_import_panes)
        for pane_id in ("editor", "transcript"):
            if not self.centre.is_attached:  # the app is closing already
                return
            await self._mount_pane(pane_id)

    def _mount_pane(self, pane_id: str) -> AwaitMount:
        if pane_id not in self._panes:
            widget: NoteEditor | TranscriptView | BigFileView
            if pane_id == "editor":
                from tui.widgets.note_editor import NoteEditor

                widget = NoteEditor(self.bridge, id="editor")
            elif pane_id == "bigfile":
                from tui.widgets.big_file_view import BigFileView

                widget = BigFileView(id="bigfile")
            else:
                from tui.widgets.transcript_view import TranscriptView

                widget = TranscriptView(self.bridge, id="transcript")
            widget.display = False  # the centre's ContentSwitcher shows it when it becomes current
            self._panes[pane_id] = self.centre.mount(widget)
        return self._panes[pane_id]

    async def ensure_editor(self) -> NoteEditor:
        """The editor, mounted first if that has not happened yet."""
        await self._mount_pane("editor")
        return self.editor

    async def ensure_big_file(self) -> BigFileView:
        """The big-file viewer, mounted on first use."""
        await self._mount_pane("bigfile")
        return cast("BigFileView", self.query_one("#bigfile"))

    @property
    def loaded_big_file(self) -> BigFileView | None:
        """The big-file viewer, or None while it was never needed (instant)."""
        return cast("BigFileView | None", self._pane("bigfile"))

    async def ensure_transcript(self) -> TranscriptView:
        """The transcript viewer, mounted first if that has not happened yet."""
        await self._mount_pane("transcript")
        return self.transcript

    # -- background work ----------------------------------------------------------------------
    def start_background(self) -> None:
        """List the notes and open the index (the app calls this once the first screen is painted)."""
        self.scan_tree(with_sessions=False)
        self.boot()

    def stop_background(self) -> None:
        """Stop watching and ask a running sync to stop (the app is closing)."""
        self.watch_stop.set()
        self.sync.stop()

    @work(group="boot")
    async def boot(self) -> None:
        """Open the index off the event loop, then list sessions and start watching."""
        try:
            await asyncio.to_thread(self.bridge.open)
        except (MemdeckError, OSError) as exc:
            self.post_message(EngineFailed(str(exc)))
            return
        self.post_message(EngineOpened())

    def on_engine_failed(self, message: EngineFailed) -> None:
        self.status_pane.show_error(message.error)
        self.notify(f"The index could not be opened: {message.error}", severity="error", timeout=10)

    def on_engine_opened(self, message: EngineOpened) -> None:
        # Everything built so far lives as long as the app: keep full GC passes from walking it again.
        gc.freeze()
        self.status_pane.model_pending = self.auto_load_model and self.bridge.needs_model
        self.sync.request(embed=False)
        self.scan_tree(with_sessions=True)
        self.search.refresh_results()
        if self.watch_enabled:
            self.watch_files()

    @work(group="scan")
    async def scan_tree(self, with_sessions: bool = True) -> None:
        """List the workspace (and the sessions folder) in a thread."""
        scan = self.bridge.scan_tree if with_sessions else self.bridge.scan_notes
        try:
            model = await asyncio.to_thread(scan)
        except OSError as exc:
            self.notify(f"Cannot list the workspace: {exc}", severity="error")
            return
        self.post_message(TreeScanned(model))

    def on_tree_scanned(self, message: TreeScanned) -> None:
        model = message.model
        if not model.sessions and not model.sessions_error and self.memory_tree.model.sessions:
            # A notes-only listing must not wipe sessions we already know about.
            model = replace(model, sessions=self.memory_tree.model.sessions)
        self.memory_tree.set_model(model)

    @work(group="status")
    async def refresh_status(self) -> None:
        """Fetch the index status and per-file states in a thread."""
        if not self.bridge.is_open:
            return
        try:
            status, states = await asyncio.to_thread(lambda: (self.bridge.status(), self.bridge.file_states()))
        except (MemdeckError, OSError) as exc:
            self.status_pane.show_error(str(exc))
            return
        self.post_message(StatusRefreshed(status, states))

    def on_status_refreshed(self, message: StatusRefreshed) -> None:
        self.status_pane.show_status(message.status, self.bridge.vector_state, self.bridge.timezone)
        self.memory_tree.set_states(message.file_states)

    def on_index_progressed(self, message: IndexProgressed) -> None:
        self.status_pane.show_progress(message.phase, message.done, message.total, message.path, message.work)

    def on_index_finished(self, message: IndexFinished) -> None:
        user_cancelled, restarted = self.sync.finished()
        if message.busy:
            self._follow_other_writer()
        elif self._follow is not None:  # this process writes the index again: the other one is done
            self._follow.stop()
            self._follow = None
        if message.error:
            self.notify(f"Indexing failed: {message.error}", severity="error")
        elif message.cancelled and user_cancelled:
            self.notify("Indexing cancelled; the index is consistent (run Reindex to finish)")
        if restarted:
            return
        self.status_pane.hide_progress()
        self.refresh_status()
        self.search.refresh_results()
        if not self._panes:
            self.mount_panes()  # after the start-up burst (engine import, listing, first sync), not during it
        if self.auto_load_model and not self._model_started and self.bridge.needs_model:
            self._model_started = True
            self.load_model_worker()
        elif (self.bridge.model_loaded and not message.cancelled and not message.error and not message.busy
              and self.bridge.is_open):
            self.embed_pending()

    FOLLOW_SECONDS = 2.0
    """While another memdeck process (``memdeck index`` in a terminal) holds the index's writer lock, the status
    pane re-reads the index this often (its ``vectors 1,152/2,706`` moves with the other process's work)."""
    RETRY_EVERY = 10
    """… and every this many re-reads, this window asks for its own sync again: it runs once the other process is
    done or was stopped (a Ctrl-C'd ``memdeck index``), and embeds what that one left."""

    def _follow_other_writer(self) -> None:
        """Another memdeck process writes the index: say so once (it is not a failure), then follow it."""
        if self._follow is not None:
            return
        self.notify("Another memdeck process is indexing this workspace; the status below follows it, and search "
                    "uses what is indexed so far", title="Index busy")
        self._follow_ticks = 0
        self._follow = self.set_interval(self.FOLLOW_SECONDS, self.follow_tick)

    def follow_tick(self) -> None:
        """One re-read of the index while another process writes it (and, every :attr:`RETRY_EVERY`, a sync)."""
        self._follow_ticks += 1
        self.refresh_status()
        if self._follow_ticks % self.RETRY_EVERY == 0 and not self.sync.running:
            self.sync.request(embed=True if self.bridge.model_loaded else None)

    @work(group="embed-check")
    async def embed_pending(self) -> None:
        """Embed chunks left without vectors (after a save or a keyword-only sync) once the model is there."""
        pending = await asyncio.to_thread(self.bridge.pending_embeddings)
        if pending and not self.sync.running:
            self.sync.request(embed=True)

    @work(thread=True, group="model")
    def load_model_worker(self) -> None:
        """Import torch and load the model in a thread, after the first screen."""
        try:
            with quiet_gc():  # importing torch makes ~10^6 objects: no full GC pass over them mid-import
                state = self.bridge.load_model()
        except Exception as exc:  # a model that cannot load leaves keyword search working
            state = f"unavailable: {type(exc).__name__}: {exc}"
        self.post_message(ModelLoaded(state))

    def on_model_loaded(self, message: ModelLoaded) -> None:
        self.status_pane.model_pending = False
        if message.state != "ready":
            self.notify(f"Vector search {message.state}; keyword search works", severity="warning")
        self.refresh_status()
        self.sync.request(embed=True)
        self.search.refresh_results()
    # -- opening things -----------------------------------------------------------------------
    @on(ResultChosen)
    def _result_chosen(self, message: ResultChosen) -> None:
        self.open_hit(message.hit)

    def open_hit(self, hit: Hit) -> None:
        """Open a search result: the file at its lines, or the session at its turn."""
        if hit.source == "sessions" or hit.path.startswith("sessions/"):
            # The engine names the session from the hit's path: a file, or a session in OpenClaw's database.
            self.open_session(Path(hit.path), line=hit.start_line, named=True)
        else:
            self.open_note(hit.path, (hit.start_line, hit.end_line))

    @on(NoteChosen)
    def _note_chosen(self, message: NoteChosen) -> None:
        self.open_note(message.rel)

    @on(SessionChosen)
    def _session_chosen(self, message: SessionChosen) -> None:
        self.open_session(message.path)

    @work(group="open", exclusive=True)
    async def open_note(self, rel: str, select: tuple[int, int] | None = None, at_end: bool = False) -> None:
        """Show a memory file in the editor (asks first if the open one has unsaved changes).

        ``at_end`` puts the cursor at the end of the note, where a new entry goes (today's note: below its
        heading); otherwise it is at the start, or on ``select``.

        A file of 1 MB or more, or with a line of 10,000 characters or more, opens in the read-only big-file
        viewer instead: the editor would take seconds per keystroke on it. The editor keeps its own file and
        any unsaved text behind the viewer.
        """
        editor = await self.ensure_editor()
        same = editor.rel is not None and _same_rel(editor.rel, rel)
        if same and editor.modified:
            self.centre.current = "editor"
            if select is not None:
                editor.select_range(*select)
            editor.area.focus()
            return
        try:
            found, path, size, reason, note = await asyncio.to_thread(self._read_for_editor, rel)
        except (MemdeckError, OSError) as exc:
            self.notify(f"Cannot open {rel}: {exc}", severity="error")
            return
        if note is None:
            await self._show_big_file(found, path, size, reason, select)
            return
        asked = not same and editor.modified
        if not same and not await self.confirm_discard():
            return
        if asked:  # the dialog may have been up for a while: show the file as it is now
            try:
                note = await asyncio.to_thread(self.bridge.read_note, rel)
            except (MemdeckError, OSError) as exc:
                self.notify(f"Cannot open {rel}: {exc}", severity="error")
                return
        big = self.loaded_big_file
        if big is not None:
            big.close()
        self.centre.current = "editor"
        editor.load(note, select)
        if at_end and select is None:
            editor.area.move_cursor(editor.area.document.end)
        self.memory_tree.select_note(note.rel)
        self.call_after_refresh(editor.area.focus)

    @work(group="open", exclusive=True)
    async def open_session(self, path: Path, line: int | None = None, named: bool = False) -> None:
        """Show a session (the editor keeps its file and any unsaved text behind it).

        ``path`` is what the tree lists (a file, or a database session's stand-in); with ``named`` it is a
        search hit's path, which the engine turns into that first.
        """
        if named:
            try:
                path = await asyncio.to_thread(self.bridge.find_session, path.as_posix())
            except (MemdeckError, OSError) as exc:
                self.notify(f"Cannot open {path}: {exc}", severity="error")
                return
        label = next((s.label for s in self._sessions() if s.path == path), path.name)
        view = await self.ensure_transcript()
        self.centre.current = "transcript"
        view.load(path, label, focus_line=line)
        self.memory_tree.select_data(SessionRef(path, label, ""))
        self.call_after_refresh(view.lines.focus)

    def _read_for_editor(self, rel: str) -> tuple[str, Path, int, str, Note | None]:
        """(rel, path, size, why not the editor, the note or None for the viewer); runs in a thread."""
        from tui.widgets.big_file_view import LONG_LINE_CHARS, longest_line, too_big_for_editor

        found, path, size = self.bridge.note_size(rel)
        if size is not None and too_big_for_editor(size):
            return found, path, size, "", None
        note = self.bridge.read_note(rel)
        longest = longest_line(note.text)
        if longest >= LONG_LINE_CHARS:
            return found, path, size or 0, f"a line of {longest:,} characters", None
        return found, path, size or 0, "", note

    async def _show_big_file(self, rel: str, path: Path, size: int, reason: str,
                             select: tuple[int, int] | None) -> None:
        view = await self.ensure_big_file()
        try:
            view.open(rel, path, size, reason, select)
        except OSError as exc:
            self.notify(f"Cannot open {rel}: {exc}", severity="error")
            return
        self.centre.current = "bigfile"
        self.memory_tree.select_note(rel)
        self.call_after_refresh(view.lines.focus)

    def _sessions(self) -> list[SessionRef]:
        return [SessionRef(s.path, s.label, s.detail, s.error) for s in self.memory_tree.model.sessions]

    async def confirm_discard(self) -> bool:
        """True when the editor has no unsaved changes, or the user saved or discarded them (run in a worker)."""
        editor = self.loaded_editor
        if editor is None or not editor.modified:
            return True
        from tui.screens.dialogs import ChoiceScreen  # deferred: not on the first screen

        choice = await self.app.push_screen_wait(ChoiceScreen(
            "Unsaved changes",
            f"{editor.rel} has changes that are not saved.",
            [("save", "Save", "primary"), ("discard", "Discard", "error"), ("cancel", "Cancel", "default")],
        ))
        if choice == "save":
            return await editor.save()
        return choice == "discard"

    # -- search and index ---------------------------------------------------------------------
    def action_focus_search(self) -> None:
        self.search.query_input.focus()

    def action_toggle_mode(self) -> None:
        self._persist("search_mode", self.search.cycle_mode())

    @on(ModeSwitch.Changed)
    def _mode_clicked(self, message: ModeSwitch.Changed) -> None:
        self._persist("search_mode", message.mode)

    def action_escape(self) -> None:
        if self.status_pane.indexing and self.sync.running:
            self.action_cancel_index()
        elif not self.search.query_input.has_focus:
            self.search.query_input.focus()

    def action_reindex(self) -> None:
        self.sync.request(embed=None if not self.bridge.model_loaded else True)

    def action_rebuild(self) -> None:
        self.sync.request(force=True)

    def action_cancel_index(self) -> None:
        self.sync.cancel()

    def action_load_model(self) -> None:
        if not self._model_started and self.bridge.needs_model:
            self._model_started = True
            self.status_pane.model_pending = True
            self.refresh_status()
            self.load_model_worker()


    # -- memory review ------------------------------------------------------------------------
    def action_review(self) -> None:
        from tui.screens.review import ReviewScreen

        if not self.bridge.is_open:
            self.notify("The index is still opening; try again in a moment", severity="warning")
        elif not any(isinstance(screen, ReviewScreen) for screen in self.app.screen_stack):
            self.app.push_screen(ReviewScreen(self.bridge, self))

    def action_audit(self) -> None:
        from tui.screens.audit import AuditScreen

        if not self.bridge.is_open:
            self.notify("The index is still opening; try again in a moment", severity="warning")
        elif not any(isinstance(screen, AuditScreen) for screen in self.app.screen_stack):
            self.app.push_screen(AuditScreen(self.bridge, self))

    @work(group="review-undo", exclusive=True)
    async def action_undo_review(self) -> None:
        from tui.screens.audit import AuditScreen
        from tui.screens.review import undo_review

        await undo_review(self)
        for screen in self.app.screen_stack:
            if isinstance(screen, AuditScreen):
                screen.action_refresh()



def _import_panes() -> None:
    """Load the deferred panes' modules (run in a thread)."""
    for name in ("tui.widgets.note_editor", "tui.widgets.transcript_view"):
        importlib.import_module(name)


def _same_rel(a: str, b: str) -> bool:
    return a == b or a.removeprefix("./") == b.removeprefix("./")


