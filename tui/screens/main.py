"""MainScreen: the workbench — its panes and their state, the background work, and the actions on files and sessions."""

from __future__ import annotations

import asyncio
import contextlib
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
from tui.clipboard import system_copy
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
from tui.screens.sync_queue import SyncQueue
from tui.widgets.index_status import IndexStatus
from tui.widgets.memory_tree import MemoryTree, NoteRef, SessionRef
from tui.widgets.search_pane import ModeSwitch, SearchPane

if TYPE_CHECKING:
    from engine.api import Hit, Note, RecoveryCopy
    from engine.config import Config
    from tui.screens.dialogs import ChoiceScreen, PickScreen, PromptScreen
    from tui.widgets.big_file_view import BigFileView
    from tui.widgets.note_editor import NoteEditor
    from tui.widgets.transcript_view import TranscriptView

PRECIOUS_NAMES = frozenset({"memory.md", "user.md"})
"""Files whose delete needs their name typed (compared lower-case): the agent's long-term memory and profile."""

RECOVERY_STATES = {
    "unchanged": "The note has not changed on disk since.",
    "changed": "The note CHANGED on disk since you edited it: recovering puts your text in place of the new "
               "version (see the diff first).",
    "missing": "The note is gone from disk since (deleted or moved): saving would create it again.",
    "new": "The note did not exist yet when you edited it, and does not now: saving creates it.",
}
"""What the recovery dialog says about the note on disk now (``engine.api.recovery_disk_state``)."""

RECOVERY_SHORT = {"unchanged": "note unchanged", "changed": "note CHANGED since", "missing": "note gone",
                  "new": "new note"}
"""The same, in the list of several copies."""

WELCOME = (
    "Search as you type above: keyword results at once, semantic ones when the model is ready.\n"
    "↓ moves into the results, enter opens the file at the matching lines.\n\n"
    "Pick a memory file or an agent session on the left.\n\n"
    "ctrl+s save · ctrl+n today's note · ctrl+t search mode · ctrl+l copy citation\n"
    "ctrl+p every command · ? or f1 keys · ctrl+q quit"
)


class MainScreen(Screen[None]):
    """The memory workbench: tree, search, editor / transcript, index status; and everything they do.

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
        self._watch_stop = asyncio.Event()
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
        self._watch_stop.set()
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
        self.status_pane.show_status(message.status, self.bridge.vector_state)
        self.memory_tree.set_states(message.file_states)

    def on_index_progressed(self, message: IndexProgressed) -> None:
        self.status_pane.show_progress(message.phase, message.done, message.total, message.path)

    def on_index_finished(self, message: IndexFinished) -> None:
        user_cancelled, restarted = self.sync.finished()
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
        elif self.bridge.model_loaded and not message.cancelled and not message.error and self.bridge.is_open:
            self.embed_pending()

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

        # OpenClaw 2026.9 writes sessions into its agent database (and its WAL): a write there is a change to
        # the sessions, reported as the database's path. Its folder is watched flat; only the database counts.
        database = await asyncio.to_thread(self._session_database)
        pumps = [pump(w) for w in watchers]
        if database is not None and database.parent.is_dir():
            names = {database.name, f"{database.name}-wal"}

            async def pump_database(watcher: object) -> None:
                async for changes in watcher:  # type: ignore[attr-defined]
                    if any(Path(p).name in names for _, p in changes):
                        self.post_message(FilesChanged(frozenset({database})))

            pumps.append(pump_database(awatch(database.parent, debounce=WATCH_DEBOUNCE_MS, recursive=False,
                                              stop_event=self._watch_stop)))

        try:
            await asyncio.gather(*pumps)
        except (OSError, RuntimeError) as exc:
            self.notify(f"Not watching for changes: {exc}", severity="warning")

    async def on_files_changed(self, message: FilesChanged) -> None:
        self.sync.request()
        self.scan_tree(with_sessions=True)
        memory = self.config.workspace / "memory"
        if memory in message.paths and self.watch_enabled:
            self._watch_stop.set()
            self.watch_files()  # memory/ appeared or vanished: watch it (again)
        if self.centre.current == "editor":
            await self.editor.check_disk()
        big = self.loaded_big_file
        if self.centre.current == "bigfile" and big is not None and big.path in message.paths and big.rel:
            self.open_note(big.rel)  # changed on disk: read it again (its size may now suit the editor)
        if self.centre.current == "transcript":
            transcript = self.transcript
            if transcript.path in message.paths or self._in_changed_database(transcript.path, message.paths):
                transcript.load(transcript.path, transcript.label, keep_position=True)

    def _session_database(self) -> Path | None:
        try:
            return self.bridge.session_database()
        except (MemdeckError, OSError):
            return None

    def _in_changed_database(self, path: Path | None, changed: frozenset[Path]) -> bool:
        """Whether ``path`` is a session of OpenClaw's database and the database is among ``changed``."""
        if path is None or not any(p.name.endswith(".sqlite") for p in changed):
            return False
        return any(s.in_db and s.path == path for s in self.memory_tree.model.sessions)

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
        ChoiceScreen, _ = _dialogs()
        choice = await self.app.push_screen_wait(ChoiceScreen(
            "Unsaved changes",
            f"{editor.rel} has changes that are not saved.",
            [("save", "Save", "primary"), ("discard", "Discard", "error"), ("cancel", "Cancel", "default")],
        ))
        if choice == "save":
            return await editor.save()
        return choice == "discard"

    # -- recovery copies ----------------------------------------------------------------------
    @work(group="recovery", exclusive=True)
    async def offer_recovery(self) -> None:
        """Offer back the unsaved text a signal (or an error) stopped the last run with.

        Each copy: recover it into the editor as unsaved changes, see its diff against the note on disk first,
        discard it, or decide later (it stays for the next start). The dialog says when the note changed on disk
        since the text was edited from it (the copy keeps the note's hash as the editor had read it). Several
        copies are listed in one dialog, never one dialog after another; a copy whose text the note on disk holds
        already (the stop came during its save) is removed without asking; damaged copies are named in a warning
        and left where they are.
        """
        from engine.api import discard_recovery, plural, recovery_dir, recovery_listing

        listing = await asyncio.to_thread(recovery_listing, self.config)
        if listing.unreadable:
            n = len(listing.unreadable)
            names = ", ".join(path.name for path, _ in listing.unreadable[:3]) + (", …" if n > 3 else "")
            self.notify(f"{plural(n, 'recovery copy', 'recovery copies')} could not be read and "
                        f"{'was' if n == 1 else 'were'} left in {recovery_dir(self.config)} ({names}); "
                        "memdeck.log says why", title="Recovery", severity="warning", timeout=15)
        pending: list[tuple[RecoveryCopy, str]] = []
        for copy in listing.copies:
            state = await asyncio.to_thread(self._recovery_state, copy)
            if state is not None:
                pending.append((copy, state))
                continue
            with contextlib.suppress(MemdeckError, OSError):  # nothing to recover: the note holds this text
                await asyncio.to_thread(discard_recovery, self.config, copy.id)
        while pending:
            chosen = pending[0]
            if len(pending) > 1:
                picked = await self.app.push_screen_wait(_pick_screen()(
                    "Recover unsaved changes?",
                    f"memdeck was stopped with unsaved changes, {plural(len(pending), 'copy', 'copies')} of them "
                    "kept. Pick one to recover, diff or discard it; Later keeps them all for the next start.",
                    [f"{copy.rel}  ·  {copy.reason}, {copy.saved_at.replace('T', ' ')}  ·  {RECOVERY_SHORT[state]}"
                     for copy, state in pending],
                    [("discard-all", "Discard all", "error"), ("later", "Later", "default")]))
                if picked == "discard-all":
                    for copy, _ in pending:
                        await self._discard_copy(copy)
                    return
                if not picked.isdigit() or int(picked) >= len(pending):
                    return  # later (or escape): every copy stays
                chosen = pending[int(picked)]
            pending.remove(chosen)
            outcome = await self._offer_one(*chosen)
            if outcome == "recovered" and pending:  # the user is editing now: the rest waits for the next start
                self.notify(f"{plural(len(pending), 'more recovery copy', 'more recovery copies')} kept for the "
                            "next start", title="Recovery")
            if outcome != "decided" or len(pending) <= 0:
                return

    def _recovery_state(self, copy: RecoveryCopy) -> str | None:
        """The note on disk against the copy (a key of :data:`RECOVERY_STATES`); None when the note holds the
        copy's text already. Runs in a thread."""
        from engine.api import recovery_disk_state

        state = recovery_disk_state(self.config, copy)
        try:
            disk = self.bridge.read_note(copy.rel).text
        except (MemdeckError, OSError):
            return state
        return None if disk == copy.text else state

    async def _discard_copy(self, copy: RecoveryCopy) -> None:
        from engine.api import discard_recovery

        try:
            await asyncio.to_thread(discard_recovery, self.config, copy.id)
        except (MemdeckError, OSError) as exc:
            self.notify(f"Cannot remove the recovery copy {copy.path}: {exc}", severity="warning")

    async def _offer_one(self, copy: RecoveryCopy, state: str) -> str:
        """Ask about one copy: ``recovered`` (its text is in the editor), ``decided`` (discarded, or kept for
        later: the other copies can be asked about), or ``stop`` (it could not be recovered)."""
        from tui.bridge import unified_diff

        ChoiceScreen, _ = _dialogs()
        choices = [("recover", "Recover", "primary"), ("diff", "Show diff", "default"),
                   ("discard", "Discard", "error"), ("later", "Later", "default")]
        message = (f"memdeck was stopped ({copy.reason}, {copy.saved_at.replace('T', ' ')}) with unsaved changes "
                   f"to {copy.rel}; they were kept.\n\n{RECOVERY_STATES[state]}\n\n"
                   "Recover puts them in the editor as unsaved changes (nothing is written until you save); "
                   "Later keeps them for the next start.")
        while True:
            choice = await self.app.push_screen_wait(ChoiceScreen("Recover unsaved changes?", message, choices,
                                                                  focus="recover"))
            if choice != "diff":
                break
            try:
                disk = await asyncio.to_thread(self.bridge.read_note, copy.rel)
                disk_text = disk.text
            except (MemdeckError, OSError):
                disk_text = ""
            from tui.screens.dialogs import DiffScreen

            await self.app.push_screen_wait(DiffScreen(copy.rel, unified_diff(copy.rel, disk_text, copy.text)))
        if choice == "recover":
            if not await self.recover_into_editor(copy.rel, copy.text):
                return "stop"
        elif choice != "discard":
            return "decided"  # later (or escape): the copy stays
        await self._discard_copy(copy)
        return "recovered" if choice == "recover" else "decided"

    async def recover_into_editor(self, rel: str, text: str) -> bool:
        """Open ``rel`` with ``text`` in place of its content, as unsaved changes (ctrl+z brings the disk's back).

        False when it could not (the open file's changes were kept, or the note cannot be read).
        """
        editor = await self.ensure_editor()
        if not await self.confirm_discard():
            return False
        try:
            note = await asyncio.to_thread(self.bridge.read_note, rel)
        except (MemdeckError, OSError) as exc:
            self.notify(f"Cannot open {rel}: {exc}", severity="error")
            return False
        big = self.loaded_big_file
        if big is not None:
            big.close()
        self.centre.current = "editor"
        editor.load(note)
        area = editor.area
        area.replace(text, (0, 0), area.document.end)
        area.move_cursor((0, 0))
        self.memory_tree.select_note(note.rel)
        self.call_after_refresh(area.focus)
        self.notify(f"Recovered your unsaved changes to {note.rel}: ctrl+s saves them")
        return True

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

    # -- files --------------------------------------------------------------------------------
    def action_save(self) -> None:
        if self.centre.current == "editor" and self.editor.note is not None:
            self.editor.save_in_background()

    def on_note_saved(self, message: NoteSaved) -> None:
        self.notify(f"Saved {message.rel}")
        for warning in message.warnings:
            self.notify(warning, severity="warning")
        self.sync.request()
        self.scan_tree(with_sessions=False)

    @work(group="files", exclusive=True)
    async def action_close_file(self) -> None:
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
    async def action_new_daily(self) -> None:
        try:
            # Today in the zone notes are dated in ([memory] timezone, else the system's), as the engine's appends.
            rel, created = await asyncio.to_thread(lambda: self.bridge.create_daily(self.bridge.now().date()))
        except (MemdeckError, OSError) as exc:
            self.notify(f"Cannot create today's note: {exc}", severity="error")
            return
        if created:
            self._file_added(rel)
        self.open_note(rel, at_end=True)  # where today's entry is typed: below the heading, after what is there

    @work(group="files", exclusive=True)
    async def action_new_topic(self) -> None:
        _, PromptScreen = _dialogs()
        name = await self.app.push_screen_wait(PromptScreen(
            "New topic file", "A name for memory/<name>.md (sub-folders with /):", placeholder="projects/heron"))
        if not name:
            return
        try:
            rel = await asyncio.to_thread(self.bridge.create_topic, name)
        except (MemdeckError, OSError) as exc:
            self.notify(f"Cannot create it: {exc}", severity="error")
            return
        self._file_added(rel)
        self.open_note(rel)

    def _file_added(self, rel: str) -> None:
        self.notify(f"Created {rel}")
        self.sync.request()
        self.scan_tree(with_sessions=False)

    def _target_note(self) -> str | None:
        """The memory file a rename or delete is for: the tree's while it has focus, else the open one."""
        node = self.memory_tree.cursor_node
        if self.memory_tree.has_focus and node is not None and isinstance(node.data, NoteRef):
            return node.data.rel
        big = self.loaded_big_file
        if self.centre.current == "bigfile" and big is not None:
            return big.rel
        return self.editor.rel if self.centre.current == "editor" else None

    @work(group="files", exclusive=True)
    async def action_rename(self) -> None:
        rel = self._target_note()
        if rel is None:
            self.notify("Select a memory file first", severity="warning")
            return
        ChoiceScreen, PromptScreen = _dialogs()
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
    async def action_delete(self) -> None:
        rel = self._target_note()
        if rel is None:
            self.notify("Select a memory file first", severity="warning")
            return
        ChoiceScreen, _ = _dialogs()
        trash = "It goes to memdeck's trash; ctrl+p → Undo delete puts it back."
        if Path(rel).name.lower() in PRECIOUS_NAMES:
            from tui.screens.dialogs import ConfirmNameScreen

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
    async def action_undo_delete(self) -> None:
        try:
            restored = await asyncio.to_thread(self.bridge.restore_deleted)
        except (MemdeckError, OSError) as exc:
            self.notify(f"Nothing restored: {exc}", severity="warning")
            return
        self.notify(f"Restored {restored.rel}")
        self.sync.request()
        self.scan_tree(with_sessions=False)
        self.open_note(restored.rel)

    # -- memory review ------------------------------------------------------------------------
    def action_review(self) -> None:
        from tui.screens.review import ReviewScreen

        if not self.bridge.is_open:
            self.notify("The index is still opening; try again in a moment", severity="warning")
        elif not any(isinstance(screen, ReviewScreen) for screen in self.app.screen_stack):
            self.app.push_screen(ReviewScreen(self.bridge, self))

    @work(group="review-undo", exclusive=True)
    async def action_undo_review(self) -> None:
        from tui.screens.review import undo_review

        await undo_review(self)

    # -- sessions -----------------------------------------------------------------------------
    def action_open_session(self) -> None:
        from tui.commands import SessionChoice, open_session_picker

        sessions = self.memory_tree.model.sessions
        if not sessions:
            self.notify("No sessions found", severity="warning")
            return
        open_session_picker(self.app, [SessionChoice(s.label, s.session_id, s.detail, _bind(self.open_session, s.path))
                                       for s in sessions])

    @work(group="flush", exclusive=True)
    async def action_flush(self) -> None:
        from tui.screens.flush import FlushScreen

        view = self.loaded_transcript
        transcript = view.transcript if view is not None else None
        if self.centre.current != "transcript" or transcript is None:
            self.notify("Open a session first (ctrl+p → Open session)", severity="warning")
            return
        self.notify("Drafting memories from the session…")
        now = self.bridge.now()  # the zone notes are dated in: the heading's time and the daily note's day
        draft = await asyncio.to_thread(self.bridge.draft_flush, transcript)
        if draft.is_empty:
            known = f" ({draft.skipped_known} already in memory)" if draft.skipped_known else ""
            self.notify(f"Nothing new to store from session {transcript.session_id[:8]}{known}")
            return
        block = await asyncio.to_thread(self.bridge.render_flush, draft, now)
        target = f"memory/{now:%Y-%m-%d}.md"
        n = len(draft.items)
        from engine.api import plural  # loaded by now: there is a draft

        info = (f"{plural(n, 'candidate memory', 'candidate memories')} ({draft.method})"
                + (f", {draft.skipped_known} already in memory" if draft.skipped_known else "")
                + f". Edit freely; Append adds this to {target}.")
        from engine.api import daily_heading

        text = await self.app.push_screen_wait(FlushScreen(f"Flush session {transcript.session_id[:8]} → {target}",
                                                           info, block, draft.warnings, target=target,
                                                           heading=daily_heading(now.date())))
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
        self.sync.request()
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
        self.sync.request()
        self.scan_tree(with_sessions=False)

    # -- clipboard: OSC 52 always, the system clipboard when pyperclip reaches one ------------
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
        """The editor's selection when it has focus, else the selected result's snippet.

        A snippet is the indexed text, in NFC: for a note stored decomposed (NFD) it reads the same as the file
        but is not its bytes. That is what a paste into a query or a prompt wants; the editor's selection is
        the file's own text."""
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
        from engine.api import plural  # loaded by now: there is a result

        self.copy_text(text, f"snippet ({plural(len(text), 'char')})")

    @work(group="clipboard")
    async def copy_text(self, text: str, what: str) -> None:
        """OSC 52 through the terminal (always), then the system clipboard when pyperclip can reach one."""
        self.app.copy_to_clipboard(text)
        problem = await asyncio.to_thread(system_copy, text)
        where = "clipboard" if problem is None else "terminal clipboard (OSC 52)"
        self.notify(f"Copied {what} to the {where}")


def _pick_screen() -> type[PickScreen]:
    from tui.screens.dialogs import PickScreen

    return PickScreen


def _dialogs() -> tuple[type[ChoiceScreen], type[PromptScreen]]:
    from tui.screens.dialogs import ChoiceScreen, PromptScreen  # deferred: not on the first screen

    return ChoiceScreen, PromptScreen


def _import_panes() -> None:
    """Load the deferred panes' modules (run in a thread)."""
    for name in ("tui.widgets.note_editor", "tui.widgets.transcript_view"):
        importlib.import_module(name)


def _same_rel(a: str, b: str) -> bool:
    return a == b or a.removeprefix("./") == b.removeprefix("./")


def _bind(func: Callable[..., object], *args: object) -> Callable[[], None]:
    def call() -> None:
        func(*args)

    return call
