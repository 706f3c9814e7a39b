"""MemdeckApp: the config, the theme, the bridge, the global keys and the palette; the workbench is tui/screens/main.py."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.theme import Theme
from textual.widget import AwaitMount
from textual.worker import WorkerFailed

from tui.bridge import SEARCH_MODES, Bridge, MemdeckError
from tui.commands import palette_commands
from tui.keys import APP_BINDINGS, KeyHelp, check_keymap
from tui.quiet_gc import pause_gc, resume_gc
from tui.screens.main import MainScreen
from tui.themes import DEFAULT_THEME, load_themes
from tui.widgets import index_status
from tui.widgets.memory_tree import MemoryTree
from tui.widgets.search_pane import ResultList

if TYPE_CHECKING:
    from engine.api import DiskStamp
    from engine.config import Config

log = logging.getLogger(__name__)


class MemdeckApp(App[int]):
    """The memory workbench: one :class:`MainScreen`, with dialogs over it.

    Args:
        config: the resolved config.
        watch: watch the files for changes by others (tests post the changes themselves).
        load_model: load the embedding model once the first sync is done.
        handle_signals: stop on SIGINT, SIGTERM, SIGHUP and SIGQUIT through the normal shutdown, unsaved text kept as a
            recovery copy (the real app; tests drive :meth:`stop_on_signal` themselves).
    """

    CSS_PATH = Path(__file__).with_name("memdeck.tcss")
    TITLE = "memdeck"
    AUTO_FOCUS = ""  # each screen says what it focuses first (the main screen: the search box)
    # Below 90 columns the screens get "-narrow" (memdeck.tcss): a 34-column tree and the three-mode switch
    # left the search box 4 cells at 60 columns, and dialog buttons were cut.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (90, "-wide")]  # noqa: RUF012  # Textual types it so
    BINDINGS: ClassVar[list[BindingType]] = [*APP_BINDINGS]

    def __init__(self, config: Config, *, watch: bool = True, load_model: bool = True,
                 handle_signals: bool = False) -> None:
        from tui.shutdown import driver_class

        super().__init__(driver_class=driver_class() if handle_signals else None)
        self._handle_signals = handle_signals
        self.stopped_by: signal.Signals | None = None
        """The signal that stopped the app, if one did (``run_app`` exits with 128 + its number)."""
        self.config = config
        self.bridge = Bridge(config)
        self._watch = watch
        self._load_model = load_model
        self._main: MainScreen | None = None
        self._gc_paused = False
        self._keymap: dict[str, str] = {}
        """The config's ``[keys]`` overrides in use (:func:`tui.keys.check_keymap` refuses the others)."""
        self.worker_errors: list[BaseException] = []
        """Exceptions that escaped a worker: each was shown as an error notification instead of ending the app."""
        self.rescued: list[str] = []
        """Where unsaved editor text was kept when the app had to stop on an error or a signal (``run_app`` prints
        it)."""
        themes = load_themes(self.bridge.user_themes_dir())
        for theme in themes.themes:
            self.register_theme(theme)
        self._theme_errors = themes.errors
        # The theme and search mode: the last choice made in the UI (memdeck's state file, never config.toml)
        # unless the config's [tui] value was changed since; the engine's one rule decides.
        from engine.api import load_state, safe_name

        self.sub_title = safe_name(index_status.display_path(str(config.workspace)))
        self.ui_state = load_state(config)
        if self.ui_state.warning:
            self._theme_errors += (self.ui_state.warning,)
        wanted = self.ui_state.theme or DEFAULT_THEME
        if wanted not in self.available_themes:
            self._theme_errors += (f"theme {wanted!r} is not available; using {DEFAULT_THEME}",)
            wanted = DEFAULT_THEME
        self._set_initial_theme(wanted)
        self._saved_theme = self.ui_state.theme or ""

    # -- screens ------------------------------------------------------------------------------
    def get_default_screen(self) -> MainScreen:
        mode = self.ui_state.search_mode or "hybrid"
        self._main = MainScreen(self.bridge, self.config, search_mode=mode if mode in SEARCH_MODES else "hybrid",
                                save_setting=self.persist_setting, watch=self._watch, load_model=self._load_model)
        return self._main

    @property
    def main(self) -> MainScreen:
        """The workbench screen (at the bottom of the screen stack from the start)."""
        if self._main is None:
            raise RuntimeError("the app has not started yet")
        return self._main

    # -- start-up and shut-down ---------------------------------------------------------------
    def on_load(self) -> None:
        # Start-up builds ~10^5 long-lived objects (styles, widgets, Textual's caches) and the cyclic GC would
        # walk them over and over: 0.38 → 0.23 s of CPU from here to the first frame (load ~4). Resumed, with
        # what exists frozen, once the first screen is painted (start-up's own cyclic leftovers, ~2,300 objects,
        # stay frozen: a one-off few hundred KB, cheaper than the 50 ms full collection that would free them).
        pause_gc()
        self._gc_paused = True
        if self._handle_signals:
            self._install_signal_handlers()

    def _install_signal_handlers(self) -> None:
        """SIGINT, SIGTERM, SIGHUP and SIGQUIT run :meth:`stop_on_signal` on the event loop (never in the middle of a frame).

        Without this, SIGINT ended the app at once and SIGTERM/SIGHUP killed it with the terminal left in the
        alternate screen with mouse tracking on, and the editor's unsaved text was lost either way.
        """
        from tui.shutdown import STOP_SIGNALS

        loop = asyncio.get_running_loop()
        for sig in STOP_SIGNALS:
            try:
                loop.add_signal_handler(sig, self.stop_on_signal, sig)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no such signal here
                log.warning("cannot handle %s: it will stop memdeck without keeping unsaved text", sig.name)

    def _resume_gc(self) -> None:
        if self._gc_paused:
            self._gc_paused = False
            resume_gc()

    async def on_mount(self) -> None:
        # The main screen composes in its own task: wait until it is mounted (or failed to), as the app's own
        # compose used to, so the first frame has every pane and nothing runs on an empty screen.
        await AwaitMount(self.main, [self.main])
        keymap = {str(k): str(v) for k, v in self.config.keys.items()}
        if keymap:
            # An unknown id or a key another binding answers to (ctrl+q is quit's) is refused, never applied.
            checked = check_keymap(keymap, self.binding_groups())
            self._keymap = checked.keymap
            if checked.keymap:
                self.set_keymap(checked.keymap)
            for warning in checked.warnings:
                self.notify(warning, title="Keys", severity="warning", markup=False)
        for error in self._theme_errors:
            self.notify(error, title="Theme", severity="warning")
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        # Paint first; the threads that import the engine and list files would compete for the GIL.
        self.call_after_refresh(self._start_background)

    def _start_background(self) -> None:
        self._resume_gc()
        self.main.start_background()
        self.main.offer_recovery()

    async def action_quit(self) -> None:
        self._quit_guarded()

    @work(group="quit", exclusive=True)
    async def _quit_guarded(self) -> None:
        if await self.main.confirm_discard():
            self.main.stop_background()
            self.exit(0)

    def stop_on_signal(self, sig: signal.Signals) -> None:
        """Stop because of ``sig``: keep the unsaved text as a recovery copy, then exit through the normal shutdown.

        The same for SIGINT as for SIGTERM and SIGHUP — no question first. In the TUI ctrl+c is a key (the
        terminal is in raw mode), so a SIGINT comes from another process (``kill -INT``, a supervisor, a
        ``timeout``) that wants memdeck to stop now and cannot answer a dialog; the recovery copy loses nothing,
        and the next start offers it back. Textual's shutdown then leaves the alternate screen, turns mouse
        tracking off and shows the cursor; the exit code is 128 + the signal's number. A second signal during
        that shutdown exits at once (the text is kept already).
        """
        from tui.shutdown import exit_code

        if self.stopped_by is not None:
            self._exit_now(sig)
            return
        self.stopped_by = sig
        log.warning("stopping on %s", sig.name)
        if sig == signal.SIGQUIT and _crash_log:  # what SIGQUIT is sent for: where every thread is, in the log
            import faulthandler

            with contextlib.suppress(OSError, ValueError):
                faulthandler.dump_traceback(_crash_log[0], all_threads=True)
        self._keep_for_recovery(sig.name)
        if self._main is not None:
            self._main.stop_background()
        self.exit(return_code=exit_code(sig))

    def _exit_now(self, sig: signal.Signals) -> None:
        """A second signal: put the terminal back as well as can be done without the driver, and exit."""
        import termios

        from tui.shutdown import exit_code, report_now, restore_terminal_now

        restore_terminal_now()
        attrs = getattr(self._driver, "attrs_before", None)
        if attrs is not None:
            with contextlib.suppress(termios.error, OSError, ValueError):
                termios.tcsetattr(getattr(self._driver, "fileno", 0), termios.TCSANOW, attrs)
        if signal.SIGHUP not in (sig, self.stopped_by):  # where the first signal kept the text: say it, still
            report_now(self.rescued)
        os._exit(exit_code(sig))

    async def on_unmount(self) -> None:
        self._resume_gc()
        if self._main is not None:
            self._main.stop_background()
        await asyncio.to_thread(self.bridge.close)

    # -- errors and notifications -------------------------------------------------------------
    def _handle_exception(self, error: Exception) -> None:
        """An exception that escaped a worker is shown, never fatal; any other still ends the app.

        Textual ends the app on an exception in a worker (``exit_on_error``), and with it the unsaved text in
        the editor. Every bridge call runs in a worker: whatever one raises (a bad config value reaching the
        LLM client, a file system error the call did not expect) becomes an error notification, the worker
        stops, and the app, the editor and its text stay as they were. For an exception outside a worker the
        app still stops (its state may be broken), but the editor's unsaved text is kept first.
        """
        if isinstance(error, WorkerFailed) and self.is_running:
            cause = error.error
            self.worker_errors.append(cause)
            log.error("a background task failed", exc_info=cause)
            self.notify(f"{type(cause).__name__}: {cause}", title="That failed; nothing was lost", severity="error",
                        timeout=15)
            return
        self._keep_for_recovery("an error")
        super()._handle_exception(error)

    def _keep_for_recovery(self, why: str) -> None:
        """Keep what is unsaved as recovery copies (the next start offers them back) before stopping: the editor's
        text, and an edited flush draft (as its daily note with the draft appended, the way Append writes it).

        Synchronous on purpose: it runs in a signal's handler or an error's, just before the app stops.
        """
        from tui.screens.flush import FlushScreen

        editor = self._main.loaded_editor if self._main is not None else None
        if editor is not None and editor.rel is not None and editor.modified:
            self._keep_copy(editor.rel, editor.area.text, editor.stamp, why)
        for screen in self.screen_stack:
            if isinstance(screen, FlushScreen) and screen.target and screen.unsaved_draft() is not None:
                try:
                    note = self.bridge.read_note(screen.target)  # a missing note reads as empty
                except (MemdeckError, OSError):
                    text, stamp = screen.appended_to(""), None
                else:
                    text, stamp = screen.appended_to(note.text), note.stamp
                self._keep_copy(screen.target, text, stamp, f"{why}, with an edited flush draft open")

    def _keep_copy(self, rel: str, text: str, stamp: DiskStamp | None, why: str) -> None:
        from engine.api import save_recovery

        try:
            path = save_recovery(self.config, rel, text, stamp, why)
        except Exception as exc:  # stopping already: say so, never raise a second one
            log.error("could not keep the unsaved text of %s: %s", rel, exc)
            self.rescued.append(f"memdeck stopped on {why}; the unsaved text of {rel} could not be kept: {exc}")
            return
        log.warning("stopping on %s: the unsaved text of %s is kept in %s", why, rel, path)
        self.rescued.append(f"memdeck stopped on {why}; your unsaved text of {rel} is kept in {path} "
                            "(the next start offers it back)")

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = False) -> None:
        """Every notification, the panes' too: shown as plain text with control characters made visible.

        Messages name files, sessions and errors that come from memory, transcripts and config: they are
        data, so never markup (``[keys]`` or a ``[b]`` in a file name is shown as typed) and never escape
        sequences for the terminal (``engine.display``'s one rule).
        """
        from engine.api import safe_name, safe_text

        super().notify(safe_text(message), title=safe_name(title), severity=severity, timeout=timeout, markup=False)

    # -- theme and settings -------------------------------------------------------------------
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

    def _theme_changed(self, theme: Theme) -> None:
        if theme.name != self._saved_theme:
            self._saved_theme = theme.name
            self.persist_setting("theme", theme.name)

    def persist_setting(self, key: str, value: str) -> None:
        """Remember a UI choice (``theme``, ``search_mode``) in memdeck's state file (in a thread).

        Never in ``config.toml``: rewriting the user's file would drop its comments and layout.
        """
        self._save_setting(key, value)

    @work(group="settings")
    async def _save_setting(self, key: str, value: str) -> None:
        try:
            await asyncio.to_thread(lambda: self.bridge.save_settings(**{key: value}))
        except (MemdeckError, OSError) as exc:
            self.notify(f"Could not remember the {key.replace('_', ' ')}: {exc}", severity="warning")

    # -- keys, help, palette ------------------------------------------------------------------
    def key_help(self) -> list[KeyHelp]:
        """Every binding of every screen and pane, grouped, as the help screen lists it (from the binding tables).

        Bindings with an id can be remapped under ``[keys]``; the rest (a widget's built-in keys) are listed too,
        so nothing the keyboard does is missing from F1.
        """
        from textual.screen import Screen as TextualScreen

        from tui.screens.audit import AuditScreen
        from tui.screens.dialogs import ChoiceScreen, DiffScreen
        from tui.screens.flush import FlushScreen
        from tui.screens.help import HelpScreen, binding_rows
        from tui.screens.review import PromoteScreen, ReviewScreen
        from tui.widgets.big_file_view import BigLines
        from tui.widgets.markdown_area import MarkdownArea
        from tui.widgets.search_pane import SearchPane
        from tui.widgets.transcript_view import TranscriptLines, TranscriptView

        palette = Binding(self.COMMAND_PALETTE_BINDING, "command_palette", "Command palette (every action)")
        groups: list[tuple[str, list[type[Any] | Binding]]] = [
            ("app", [MemdeckApp, palette]),
            ("every screen", [TextualScreen]),
            ("search box", [SearchPane]),
            ("search results", [ResultList]),
            ("memory tree", [MemoryTree]),
            ("editor", [MarkdownArea]),
            ("big file viewer", [BigLines]),
            ("transcript", [TranscriptLines, TranscriptView]),
            ("memory review", [ReviewScreen]),
            ("promote to memory", [PromoteScreen]),
            ("session audit", [AuditScreen]),
            ("flush review", [FlushScreen]),
            ("dialogs", [ChoiceScreen, DiffScreen]),
            ("help", [HelpScreen]),
        ]
        # The [keys] overrides in use: check_keymap (on mount) refused the ones that would break a binding.
        return binding_rows(groups, self._keymap, self.get_key_display)

    def binding_groups(self) -> list[tuple[str, list[Binding]]]:
        """Every binding with an id (what ``[keys]`` can remap), by where it works (``app``: everywhere)."""
        from tui.screens.audit import AuditScreen
        from tui.screens.review import ReviewScreen
        from tui.widgets.transcript_view import TranscriptLines, TranscriptView

        return [
            ("app", APP_BINDINGS),
            ("search results", _bindings(ResultList.BINDINGS)),
            ("memory tree", _bindings(MemoryTree.BINDINGS)),
            ("transcript", _bindings([*TranscriptLines.BINDINGS, *TranscriptView.BINDINGS])),
            ("memory review", _bindings(ReviewScreen.BINDINGS)),
            ("session audit", _bindings(AuditScreen.BINDINGS)),
        ]

    def action_help_quit(self) -> None:
        """ctrl+c outside a text field: say which key quits, in plain text.

        Textual's own toast is markup (``Press [b]ctrl+q[/b]``), and memdeck's notifications are never markup
        (:meth:`notify`), so it showed the ``[b]`` tags as typed.
        """
        keys = [key for key, active in self.active_bindings.items() if active.binding.action in ("quit", "app.quit")]
        if keys:
            shown = " or ".join(self.get_key_display(Binding(key, "quit")) for key in keys)
            self.notify(f"Press {shown} to quit memdeck", title="Do you want to quit?")

    def action_help(self) -> None:
        from tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.key_help()))

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from palette_commands(self, self.main)


def run_app(config: Config) -> int:
    """Run the TUI on a resolved config; the process exit code."""

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
    _log_crashes(log_path)
    app = MemdeckApp(config, handle_signals=True)
    app.run()
    if app.stopped_by == signal.SIGHUP:
        from tui.shutdown import silence_terminal

        silence_terminal()  # the terminal hung up: printing (and Python's flush at exit) would fail
    for line in app.rescued:
        with contextlib.suppress(OSError):
            print(line, flush=True)
    return app.return_code or 0


_crash_log: list[Any] = []  # the open file faulthandler writes to: it must outlive run_app (and the interpreter)


def _log_crashes(log_path: Path) -> None:
    """A fatal crash (a segfault in C code, a deadlock's abort) writes every thread's Python stack to the log.

    Its default target is stderr, which is the terminal: in the alternate screen, or gone after a hang-up.
    """
    import faulthandler

    try:
        stream = log_path.open("a", encoding="utf-8")  # kept open for the process's lifetime
    except OSError:
        return
    _crash_log.append(stream)
    faulthandler.enable(stream, all_threads=True)


def _bindings(items: Iterable[BindingType]) -> list[Binding]:
    return [b for b in items if isinstance(b, Binding)]
