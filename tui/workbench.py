"""Workbench: the app's state, its panes, and the background work (engine, index, model, watcher, opening files)."""

from __future__ import annotations

import asyncio
import gc
import importlib
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, cast

from textual import on, work
from textual.app import App
from textual.css.query import NoMatches
from textual.widget import AwaitMount
from textual.widgets import ContentSwitcher

from tui.bridge import SEARCH_MODES, Bridge, MemdeckError
from tui.messages import (
    EngineFailed,
    EngineOpened,
    FilesChanged,
    IndexFinished,
    IndexProgressed,
    ModelLoaded,
    NoteChosen,
    NoteSaved,
    ResultChosen,
    SessionChosen,
    StatusRefreshed,
    TreeScanned,
)
from tui.quiet_gc import quiet_gc
from tui.themes import DEFAULT_THEME, load_themes
from tui.widgets import index_status
from tui.widgets.index_status import IndexStatus
from tui.widgets.memory_tree import MemoryTree, SessionRef
from tui.widgets.search_pane import SearchPane

if TYPE_CHECKING:
    from engine.config import Config
    from engine.search.pipeline import Hit
    from tui.widgets.note_editor import NoteEditor
    from tui.widgets.transcript_view import TranscriptView


class Workbench(App[int]):
    """What every action needs: the bridge, the panes, the sync queue, and opening notes and sessions."""

    def __init__(self, config: Config, *, watch: bool = True, load_model: bool = True) -> None:
        super().__init__()
        self.config = config
        self.bridge = Bridge(config)
        self.watch_enabled = watch
        self.auto_load_model = load_model
        self.sub_title = index_status.display_path(str(config.workspace))
        self._cancel = threading.Event()
        self._sync_running = False
        self._sync_force = False
        self._sync_pending: tuple[bool, bool | None] | None = None
        self._user_cancelled = False
        self._model_started = False
        self._watch_stop = asyncio.Event()
        self._theme_errors: tuple[str, ...] = ()
        self._tree_sessions: list[SessionRef] = []
        themes = load_themes(self.bridge.user_themes_dir())
        for theme in themes.themes:
            self.register_theme(theme)
        self._theme_errors = themes.errors
        wanted = str(config.tui.get("theme", DEFAULT_THEME))
        if wanted not in self.available_themes:
            self._theme_errors += (f"theme {wanted!r} is not available; using {DEFAULT_THEME}",)
            wanted = DEFAULT_THEME
        self._set_initial_theme(wanted)
        self._panes: dict[str, AwaitMount] = {}
        self._gc_paused = False
        self._saved_theme = str(config.tui.get("theme", ""))
        mode = str(config.tui.get("search_mode", "hybrid"))
        self._initial_mode = mode if mode in SEARCH_MODES else "hybrid"

    @property
    def memory_tree(self) -> MemoryTree:
        """The memory tree."""
        return self.query_one(MemoryTree)

    @property
    def search(self) -> SearchPane:
        """The search pane."""
        return self.query_one(SearchPane)

    def _set_initial_theme(self, name: str) -> None:
        """Start in ``name`` without the full CSS re-parse that assigning ``App.theme`` schedules.

        The stylesheet is parsed for the first time after ``__init__``, with the current theme's variables, so
        the watcher's extra parse (~50 ms of start-up) buys nothing — unless the theme's darkness differs from
        the default one's: then the watcher also rebuilds the ANSI→truecolour filter, so it runs.
        """
        theme = self.get_theme(name)
        if theme is None or theme.dark != self.current_theme.dark:
            self.theme = name
            return
        self.set_class(False, f"-theme-{self.theme}", update=False)
        self.set_reactive(App.theme, name)
        self.set_class(True, f"-theme-{name}", update=False)
        self.stylesheet.set_variables(self.get_css_variables())  # no CSS is loaded yet: nothing to re-parse

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
            widget: NoteEditor | TranscriptView
            if pane_id == "editor":
                from tui.widgets.note_editor import NoteEditor

                widget = NoteEditor(self.bridge, id="editor")
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

    async def ensure_transcript(self) -> TranscriptView:
        """The transcript viewer, mounted first if that has not happened yet."""
        await self._mount_pane("transcript")
        return self.transcript

    @property
    def status_pane(self) -> IndexStatus:
        """The index status pane."""
        return self.query_one(IndexStatus)

    @property
    def centre(self) -> ContentSwitcher:
        """Editor / transcript / welcome."""
        return self.query_one("#centre", ContentSwitcher)

    # -- background work ----------------------------------------------------------------------
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
        self.request_sync(embed=False)
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
        self.status_pane.show_status(message.status, self.bridge.vector_state)
        self.memory_tree.set_states(message.file_states)

    def request_sync(self, force: bool = False, embed: bool | None = None) -> None:
        """Sync the index now, or right after the running sync (which is asked to stop early unless a rebuild)."""
        if not self.bridge.is_open:
            return
        if self._sync_running:
            old_force, old_embed = self._sync_pending or (False, None)
            merged_embed = True if (old_embed or embed) else (None if None in (old_embed, embed) else False)
            self._sync_pending = (old_force or force, merged_embed)
            if not self._sync_force:
                self._cancel.set()
            return
        self._sync_running = True
        self._sync_force = force
        self._cancel = threading.Event()
        self.run_sync(force, embed, self._cancel)

    @work(thread=True, group="index")
    def run_sync(self, force: bool, embed: bool | None, cancel: threading.Event) -> None:
        """Index in a thread; progress is posted as messages (throttled to ~20 a second)."""
        last = [0.0]

        def progress(p: object) -> None:
            now = time.monotonic()
            done, total = getattr(p, "done", 0), getattr(p, "total", 0)
            if done in (0, total) or now - last[0] > 0.05:
                last[0] = now
                self.post_message(IndexProgressed(getattr(p, "phase", "files"), done, total, getattr(p, "path", None)))

        try:
            report = self.bridge.sync(progress, cancel, force, embed)
        except Exception as exc:  # IndexBusy, OSError, SQLite errors: report them, keep the app alive
            self.post_message(IndexFinished("", error=f"{type(exc).__name__}: {exc}"))
            return
        summary = f"{report.files_indexed} files re-read, {report.embedded} chunks embedded"
        self.post_message(IndexFinished(summary, cancelled=report.cancelled))

    def on_index_progressed(self, message: IndexProgressed) -> None:
        self.status_pane.show_progress(message.phase, message.done, message.total, message.path)

    def on_index_finished(self, message: IndexFinished) -> None:
        self._sync_running = False
        if message.error:
            self.notify(f"Indexing failed: {message.error}", severity="error")
        elif message.cancelled and self._user_cancelled:
            self.notify("Indexing cancelled; the index is consistent (run Reindex to finish)")
        self._user_cancelled = False
        if self._sync_pending is not None:
            force, embed = self._sync_pending
            self._sync_pending = None
            self.request_sync(force, embed)
            return
        self.status_pane.hide_progress()
        self.refresh_status()
        self.search.refresh_results()
        if not self._panes:
            self.mount_panes()  # after the start-up burst (engine import, listing, first sync), not during it
        if self.auto_load_model and not self._model_started and self.bridge.needs_model:
            self._model_started = True
            self.load_model_worker()
        elif self.bridge.model_loaded and not message.cancelled and not message.error and self.bridge.is_open:
            self.embed_pending()

    @work(group="embed-check")
    async def embed_pending(self) -> None:
        """Embed chunks left without vectors (after a save or a keyword-only sync) once the model is there."""
        pending = await asyncio.to_thread(self.bridge.pending_embeddings)
        if pending and not self._sync_running:
            self.request_sync(embed=True)

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
        self.request_sync(embed=True)
        self.search.refresh_results()

    # -- watching -----------------------------------------------------------------------------
    @work(group="watch", exclusive=True)
    async def watch_files(self) -> None:
        """Watch memory files and transcripts; changes by others reach the tree, index and editor."""
        from watchfiles import awatch

        from tui.watch import WATCH_DEBOUNCE_MS, is_relevant, watch_plan

        plan = watch_plan(self.config)
        self._watch_stop = asyncio.Event()
        watchers = [awatch(*plan.recursive, debounce=WATCH_DEBOUNCE_MS, stop_event=self._watch_stop)] if plan.recursive else []
        if plan.flat:
            watchers.append(awatch(*plan.flat, debounce=WATCH_DEBOUNCE_MS, recursive=False, stop_event=self._watch_stop))

        async def pump(watcher: object) -> None:
            async for changes in watcher:  # type: ignore[attr-defined]
                paths = frozenset(Path(p) for _, p in changes if is_relevant(p, self.config))
                if paths:
                    self.post_message(FilesChanged(paths))

        try:
            await asyncio.gather(*(pump(w) for w in watchers))
        except (OSError, RuntimeError) as exc:
            self.notify(f"Not watching for changes: {exc}", severity="warning")

    async def on_files_changed(self, message: FilesChanged) -> None:
        self.request_sync()
        self.scan_tree(with_sessions=True)
        memory = self.config.workspace / "memory"
        if memory in message.paths and self.watch_enabled:
            self._watch_stop.set()
            self.watch_files()  # memory/ appeared or vanished: watch it (again)
        if self.centre.current == "editor":
            await self.editor.check_disk()
        if self.centre.current == "transcript":
            transcript = self.transcript
            if transcript.path in message.paths:
                transcript.load(transcript.path, transcript.label, keep_position=True)

    # -- opening things -----------------------------------------------------------------------
    @on(ResultChosen)
    def _result_chosen(self, message: ResultChosen) -> None:
        self.open_hit(message.hit)

    def open_hit(self, hit: Hit) -> None:
        """Open a search result: the file at its lines, or the session at its turn."""
        if hit.source == "sessions" or hit.path.startswith("sessions/"):
            path = self.bridge.sessions_dir / Path(hit.path).name
            self.open_session(path, line=hit.start_line)
        else:
            self.open_note(hit.path, (hit.start_line, hit.end_line))

    @on(NoteChosen)
    def _note_chosen(self, message: NoteChosen) -> None:
        self.open_note(message.rel)

    @on(SessionChosen)
    def _session_chosen(self, message: SessionChosen) -> None:
        self.open_session(message.path)

    @work(group="open", exclusive=True)
    async def open_note(self, rel: str, select: tuple[int, int] | None = None) -> None:
        """Show a memory file in the editor (asks first if the open one has unsaved changes)."""
        editor = await self.ensure_editor()
        same = editor.rel is not None and _same_rel(editor.rel, rel)
        if same and editor.modified:
            self.centre.current = "editor"
            if select is not None:
                editor.select_range(*select)
            editor.area.focus()
            return
        if not same and not await self.confirm_discard():
            return
        try:
            note = await asyncio.to_thread(self.bridge.read_note, rel)
        except (MemdeckError, OSError) as exc:
            self.notify(f"Cannot open {rel}: {exc}", severity="error")
            return
        self.centre.current = "editor"
        editor.load(note, select)
        self.memory_tree.select_note(note.rel)
        self.call_after_refresh(editor.area.focus)

    @work(group="open", exclusive=True)
    async def open_session(self, path: Path, line: int | None = None) -> None:
        """Show a transcript (the editor keeps its file and any unsaved text behind it)."""
        label = next((s.label for s in self._sessions() if s.path == path), path.name)
        view = await self.ensure_transcript()
        self.centre.current = "transcript"
        view.load(path, label, focus_line=line)
        self.memory_tree.select_data(SessionRef(path, label, ""))
        self.call_after_refresh(view.lines.focus)

    def _sessions(self) -> list[SessionRef]:
        return [SessionRef(s.path, s.label, s.detail, s.error) for s in self.memory_tree.model.sessions]

    async def confirm_discard(self) -> bool:
        """True when the editor has no unsaved changes, or the user saved or discarded them."""
        editor = self.loaded_editor
        if editor is None or not editor.modified:
            return True
        from tui.screens.dialogs import ChoiceScreen

        choice = await self.push_screen_wait(ChoiceScreen(
            "Unsaved changes",
            f"{editor.rel} has changes that are not saved.",
            [("save", "Save", "primary"), ("discard", "Discard", "error"), ("cancel", "Cancel", "default")],
        ))
        if choice == "save":
            return await editor.save()
        return choice == "discard"

    # -- saving and files ---------------------------------------------------------------------
    def action_save(self) -> None:
        append = getattr(self.screen, "action_append", None)
        if append is not None:  # ctrl+s in the flush review means "append"
            append()
            return
        if self.centre.current == "editor" and self.editor.note is not None:
            self.editor.save_in_background()

    def on_note_saved(self, message: NoteSaved) -> None:
        self.notify(f"Saved {message.rel}")
        for warning in message.warnings:
            self.notify(warning, severity="warning")
        self.request_sync()
        self.scan_tree(with_sessions=False)

    # -- index actions ------------------------------------------------------------------------
    def action_reindex(self) -> None:
        self.request_sync(embed=None if not self.bridge.model_loaded else True)

    def action_rebuild(self) -> None:
        self.request_sync(force=True)

    def action_cancel_index(self) -> None:
        if self._sync_running:
            self._user_cancelled = True
            self._sync_pending = None
            self._cancel.set()

    def action_load_model(self) -> None:
        if not self._model_started and self.bridge.needs_model:
            self._model_started = True
            self.status_pane.model_pending = True
            self.refresh_status()
            self.load_model_worker()

    def persist_setting(self, key: str, value: str) -> None:
        """Remember a TUI setting in the config file (in a thread)."""
        self._save_setting(key, value)

    @work(group="settings")
    async def _save_setting(self, key: str, value: str) -> None:
        try:
            await asyncio.to_thread(self.bridge.save_settings, {"tui": {key: value}})
        except (MemdeckError, OSError) as exc:
            self.notify(f"Could not save the setting: {exc}", severity="warning")



def _import_panes() -> None:
    """Load the deferred panes' modules (run in a thread)."""
    for name in ("tui.widgets.note_editor", "tui.widgets.transcript_view"):
        importlib.import_module(name)


def _same_rel(a: str, b: str) -> bool:
    return a == b or a.removeprefix("./") == b.removeprefix("./")
