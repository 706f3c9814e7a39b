"""The ``memdeck`` command line: the TUI by default; status, index, search, get and demo for people and agents."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from engine.config import Config, SearchConfig, load_config
from engine.display import byte_size, plural, safe_name
from engine.errors import MemdeckError
from memdeck.output import (
    EXIT_ERROR,
    EXIT_OK,
    EXIT_USAGE,
    FiniteFloat,
    echo_json,
    echo_json_error,
    fail,
    not_empty,
    say,
    say_lines,
)

if TYPE_CHECKING:
    from engine.api import Status, SyncProgress

_fail = fail  # the one error path: a stderr line, and {"ok": false, "error"} on stdout with --json


class _Ctx:
    def __init__(self, workspace: str | None, sessions: str | None, config: str | None, demo: bool) -> None:
        self.workspace = workspace
        self.sessions = sessions
        self.config_path = config
        self.demo = demo
        self._config: Config | None = None

    def config(self, as_json: bool = False) -> Config:
        """The configuration, and a workspace that can be read: a missing, unreadable or non-folder workspace
        (or a ``--config`` file that does not exist) is an error for every command, never an empty memory."""
        if self._config is None:
            if self.config_path is not None and not Path(self.config_path).expanduser().exists():
                _fail(f"config file not found: {Path(self.config_path).expanduser()}", as_json)
            try:
                workspace, sessions = self.workspace, self.sessions
                if self.demo:
                    from engine.config import memdeck_home
                    from engine.demo import demo_home_workspace

                    demo = demo_home_workspace(memdeck_home())
                    workspace, sessions = str(demo), sessions or str(demo / "sessions")
                cfg = load_config(workspace=workspace, config_path=self.config_path, sessions_dir=sessions)
            except MemdeckError as exc:
                _fail(f"invalid configuration: {exc}", as_json)
            from engine.workspace import workspace_problem

            problem = workspace_problem(cfg.workspace)
            if problem is not None:
                _fail(f"{problem}: give --workspace DIR, or set MEMDECK_WORKSPACE or workspace in the config",
                      as_json)
            self._config = cfg
        return self._config

    def engine(self, as_json: bool = False) -> Any:
        from engine.api import MemoryEngine

        cfg = self.config(as_json)
        try:
            return MemoryEngine(cfg)
        except MemdeckError as exc:
            _fail(str(exc), as_json)
        except OSError as exc:
            _fail(f"cannot open the index at {cfg.index_path}: {exc.strerror or exc}", as_json)


class _MemdeckGroup(click.Group):
    """The ``memdeck`` group; ``sessions``, ``flush`` and ``review`` are added on first use.

    Deferred: their module imports the flush drafter, the session parser and the LLM client (~70 ms), which
    ``status``, ``get`` and ``search`` never need.
    """

    _extensions_added = False

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True, **extra: Any) -> Any:
        """click's entry point, with memdeck's answers to what click would print itself: with ``--json`` a usage
        error (a bad option value, a missing argument) is also ``{"ok": false, "error": ...}`` on stdout, like
        every other failure of a JSON command; and Ctrl-C in any command exits 130 saying so (:func:`interrupted`),
        not click's "Aborted!" with 1."""
        argv = list(sys.argv[1:] if args is None else args)
        if not standalone_mode:
            return super().main(argv, prog_name, complete_var, standalone_mode, **extra)
        as_json = "--json" in argv
        try:
            code = super().main(argv, prog_name, complete_var, False, **extra)
        except click.ClickException as exc:
            exc.show()  # usage and the problem on stderr, as without --json
            if as_json:
                echo_json_error(exc.format_message())
            sys.exit(exc.exit_code)
        except click.Abort as exc:
            # click turns Ctrl-C into Abort (from the KeyboardInterrupt); an end of input at a prompt stays Abort.
            if isinstance(exc.__cause__ or exc.__context__, KeyboardInterrupt):
                interrupted(as_json)
            if as_json:
                echo_json_error("aborted")
            click.echo("Aborted!", err=True)
            sys.exit(EXIT_ERROR)
        except KeyboardInterrupt:
            interrupted(as_json)
        sys.exit(code if isinstance(code, int) else EXIT_OK)  # not standalone, click returns --help's code

    def _add_extensions(self) -> None:
        if not self._extensions_added:
            self._extensions_added = True
            _register_extensions(self)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            self._add_extensions()
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._add_extensions()
        return super().list_commands(ctx)


@click.group(cls=_MemdeckGroup, invoke_without_command=True,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--workspace", "-w", metavar="DIR", callback=not_empty,
              help="Workspace folder (default: config, $MEMDECK_WORKSPACE, ~/.openclaw/workspace).")
@click.option("--sessions", metavar="PATH", callback=not_empty,
              help="Agent sessions: OpenClaw's openclaw-agent.sqlite, or a folder of JSONL transcripts.")
@click.option("--config", "config_path", metavar="FILE", callback=not_empty,
              help="Config file (default: <config dir>/config.toml).")
@click.option("--demo", is_flag=True, help="Use the bundled demo workspace.")
@click.version_option(package_name="memdeck")
@click.pass_context
def cli(ctx: click.Context, workspace: str | None, sessions: str | None, config_path: str | None, demo: bool) -> None:
    """memdeck: a workbench for an AI agent's Markdown memory.

    With no command, opens the TUI on the workspace.
    """
    ctx.obj = _Ctx(workspace, sessions, config_path, demo)
    if ctx.invoked_subcommand is None:
        cfg = ctx.obj.config()
        # No cyclic-GC passes while the TUI's modules import (~90 ms less CPU); the app turns the collector back
        # on after its first frame.
        gc.disable()
        try:
            from tui.app import run_app
        except ImportError as exc:
            _fail(f"the TUI cannot start: {exc}")
        sys.exit(run_app(cfg))


def _bootstrap_lines(st: Status) -> list[str]:
    """What OpenClaw hands a session of MEMORY.md and USER.md at its start, and what it cuts."""
    budget = st.bootstrap
    if budget is None:
        return []
    lines = [f"{f.describe()}" for f in budget.files if f.name in ("MEMORY.md", "USER.md") or f.truncated]
    limits = f"{budget.max_chars:,} a file, {budget.total_max_chars:,} in all"
    head = f"OpenClaw injects at session start ({limits}; {budget.config_path or 'its defaults'}):"
    if budget.config_problem:
        head += f" {budget.config_problem}"
    return [head, *(f"  {line}" for line in lines)]


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--deep", is_flag=True, help="Load the model and embed a probe.")
@click.pass_obj
def status(obj: _Ctx, as_json: bool, deep: bool) -> None:
    """Show the index's state: provider, vector/FTS readiness, files, chunks, dirty files."""
    with obj.engine(as_json) as eng:
        try:
            st = eng.status(deep=deep)
        except MemdeckError as exc:
            _fail(str(exc), as_json)
    if as_json:
        echo_json(st.to_dict())
        return
    lines = [
        f"Workspace: {st.workspace}",
        f"Index: {st.index_path} ({byte_size(st.index_bytes)})",
        f"SQLite: {st.driver} {st.sqlite_version} · sqlite-vec {st.vec_version or 'not loaded'}",
        f"Provider: {st.provider} (requested: {st.requested_provider})",
    ]
    if st.provider_url:
        lines.append(f"Endpoint: {st.provider_url}")
    if st.provider_reason:
        lines.append(f"Why: {st.provider_reason}")
    lines += [
        f"Model: {st.model or 'none'}" + (f" · {st.dims} dims" if st.dims else ""),
        f"Sources: {', '.join(st.sources)}",
        f"Indexed: {st.files_indexed}/{plural(st.files_on_disk, 'file')} · {plural(st.chunks, 'chunk')}",
        f"Dirty: {'yes (' + plural(st.dirty_files, 'file') + ')' if st.dirty_files else 'no'}",
        f"Vector: {st.vector_state}",
        f"Not embedded: {plural(st.pending_embeddings, 'chunk')}" if st.pending_embeddings else "Embeddings: complete",
        f"FTS: {'ready' if st.fts_ready else 'unavailable'}",
        f"Embedding cache: {plural(st.cache_entries, 'entry', 'entries')}",
        f"Index identity: {st.identity_status}",
        *_session_source_lines(st.session_source),
        *_bootstrap_lines(st),
        # The symlink rule, said where it applies: a linked memory/ (stow, Dropbox) and folder links in it.
        *(f"Memory folder: {link.describe()}" if link.rel == "memory" else f"Folder link: {link.describe()}"
          for link in st.folder_links if link.followed or link.rel == "memory"),
    ]
    if st.probe is not None:
        lines.append("Embeddings probe: " + ("ok" if st.probe.get("ok") else f"failed: {st.probe.get('error')}"))
    for note in st.recovered:
        lines.append(f"Recovered: {note}")
    if st.issues:
        lines.append("Issues:")
        lines += [f"  {i}" for i in st.issues]
    say_lines(lines)  # one line each: a file name with a newline or an escape sequence is shown, not obeyed


def _session_source_lines(where: Any) -> list[str]:
    """``Sessions: …`` for status: OpenClaw's database (its schema and sessions) or a folder, and any warning."""
    if where is None:
        return []
    if where.kind == "agent-db":
        head = f"Sessions: OpenClaw database {where.location}"
        if where.available:
            app = f", OpenClaw {where.app_version}" if where.app_version else ""
            head += f" · schema {where.schema_version}{app} · {plural(where.sessions or 0, 'session')}"
    else:
        head = f"Sessions: folder {where.location}"
        if where.available:
            head += f" · {plural(where.sessions or 0, 'session')}"
    lines = [head if where.available else f"{head} · unavailable: {where.detail}"]
    lines += [f"  warning: {warning}" for warning in where.warnings]
    return lines


@cli.command()
@click.option("--force", is_flag=True, help="Rebuild from scratch (embeddings still come from the cache).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_obj
def index(obj: _Ctx, force: bool, as_json: bool) -> None:
    """Index the workspace (incremental; only changed files are re-read and re-embedded).

    Ctrl-C stops after the current file or embedding batch (a second one at once): what is done stays, and the
    exit code is 130.
    """
    with obj.engine(as_json) as eng:
        started = time.monotonic()
        watch = IndexWatch()
        if not as_json:
            _say_if_waiting(eng.config.index_path)
        try:
            with watch.first_sigint_cancels():
                if as_json:
                    report = eng.sync(force=force, progress=watch, cancel=watch.cancel)
                elif sys.stderr.isatty():
                    report = _index_with_progress(eng, force, watch)
                else:  # a log or a pipe: a plain line every few seconds instead of a bar
                    lines = ProgressLines(lambda line: say(line, err=True))
                    report = eng.sync(force=force, progress=watch.then(lines), cancel=watch.cancel)
        except KeyboardInterrupt:  # a second Ctrl-C: every file's rows are one transaction, rolled back whole
            _fail(watch.interrupted(force, None), as_json, EXIT_INTERRUPTED, **watch.fields())
        except MemdeckError as exc:  # busy, disk full, read-only index, ...
            _fail(str(exc), as_json)
        if report.cancelled:
            _fail(watch.interrupted(force, report.rebuilt), as_json, EXIT_INTERRUPTED, **watch.fields())
        elapsed = time.monotonic() - started
        files = eng.store.counts()["files"]
    if as_json:
        echo_json({
            "ok": True, "files": files, "filesIndexed": report.files_indexed, "filesRemoved": report.files_removed,
            "chunks": report.chunks_total, "chunksWritten": report.chunks_written, "embedded": report.embedded,
            "fromCache": report.from_cache, "rebuilt": report.rebuilt, "seconds": round(elapsed, 3),
            "issues": report.issues})
        return
    if report.issues:
        say_lines((f"warning: {issue}" for issue in report.issues), err=True)
    say(f"Indexed {plural(files, 'file')} · {plural(report.chunks_total, 'chunk')} "
        f"({report.embedded} embedded, {report.from_cache} from cache) in {elapsed:.1f} s")


def _say_if_waiting(index_path: Path) -> None:
    """Before a wait on the writer lock, say whose it is (a TUI or another `memdeck index` embedding): the wait used
    to be 30 s of nothing, then "try again shortly"."""
    from engine.api import index_writer

    pid = index_writer(index_path)
    if pid is not None:
        who = f" (pid {pid})" if pid else ""
        say(f"waiting for another memdeck process{who}: it is writing this index (up to 30 s)", err=True)


def not_embedded_note(chunks: int, seconds: float | None, writer: int | None = None) -> str:
    """``56 chunks not embedded yet — `memdeck index` embeds them, ≈ 39 s``: why a search was keyword-only in part.
    ``writer``: the pid of another memdeck process writing the index right now (0: unknown pid), which is then
    what embeds them (the note told the user to start the `memdeck index` already running in another terminal)."""
    eta = f", ≈ {duration(seconds)}" if seconds is not None else ""
    who = ("`memdeck index` embeds them" if writer is None else
           f"another memdeck process{f' (pid {writer})' if writer else ''} is embedding them")
    return f"{plural(chunks, 'chunk', grouped=True)} not embedded yet — {who}{eta}"


def duration(seconds: float) -> str:
    """``39 s``, ``4 min``, ``1 h 5 min``: an estimate, rounded as one."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


EXIT_INTERRUPTED = 130
"""The exit code of a command stopped by Ctrl-C (128 + SIGINT), as shells report it."""


class IndexWatch:
    """How far ``memdeck index`` got (from the sync's progress), and its Ctrl-C: the first sets :attr:`cancel`,
    so the sync stops between files (each file's rows are one transaction: what is done stays, whole); a second
    raises :class:`KeyboardInterrupt` at once, which rolls back only the file being written."""

    def __init__(self) -> None:
        self.cancel = threading.Event()
        self.files = (0, 0)  # (done, total) of the files phase
        self.chunks: tuple[int, int] | None = None  # (done, total) of the embedding phase, once it began
        self._next: Callable[[SyncProgress], None] | None = None

    def __call__(self, p: SyncProgress) -> None:
        """The sync's progress callback: remembers where it is, then passes it on (see :meth:`then`)."""
        if p.phase == "files":
            self.files = (p.done, p.total)
        else:
            self.chunks = (p.done, p.total)
        if self._next is not None:
            self._next(p)

    def then(self, following: Callable[[SyncProgress], None]) -> IndexWatch:
        """Also pass every progress update to ``following`` (a bar, :class:`ProgressLines`)."""
        self._next = following
        return self

    @contextlib.contextmanager
    def first_sigint_cancels(self) -> Iterator[None]:
        """While the sync runs, the first SIGINT cancels it between files; the second interrupts it."""
        if threading.current_thread() is not threading.main_thread():  # signals reach the main thread only
            yield
            return

        def on_sigint(signum: int, frame: Any) -> None:
            if self.cancel.is_set():
                raise KeyboardInterrupt
            self.cancel.set()
            with contextlib.suppress(OSError):  # os.write: a handler must not re-enter a buffered stream
                os.write(2, b"memdeck: stopping after the current file or batch (ctrl+c again to stop at once)\n")

        previous = signal.signal(signal.SIGINT, on_sigint)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)

    def interrupted(self, force: bool, rebuilt: bool | None) -> str:
        """The message of an interrupted index: the index is intact, how far it got, what to run next."""
        again = "memdeck index --force" if force else "memdeck index"
        done, total = self.files
        if rebuilt or (rebuilt is None and force):
            where = f" at {done} of {plural(total, 'file')}" if total else ""
            return (f"interrupted: the rebuild stopped{where} and was discarded; the index is intact as it was; "
                    f"run `{again}` to rebuild")
        if self.chunks is not None:
            got, of = self.chunks
            where = (f"all {plural(total, 'file')} indexed, {got} of {plural(of, 'chunk')} embedded, "
                     f"{of - got:,} to go")
        elif total:
            where = f"{done} of {plural(total, 'file')} done"
        else:
            where = "stopped before the first changed file"
        return f"interrupted: the index is intact ({where}); run `{again}` to continue"

    def fields(self) -> dict[str, Any]:
        """The ``--json`` error's extra fields: ``interrupted`` and how far the sync got."""
        out: dict[str, Any] = {"interrupted": True, "filesDone": self.files[0], "filesTotal": self.files[1]}
        if self.chunks is not None:
            out["chunksEmbedded"], out["chunksToEmbed"] = self.chunks
        return out


class ProgressLines:
    """``memdeck index`` progress where there is no terminal (a log, CI, a pipe): one line at most every ``every``
    seconds, so a quick index prints none and a long one shows it is alive.

    Args:
        write: prints one line.
        every: seconds between lines.
        clock: the time source (tests inject one; the throttle never depends on how fast the machine is).
    """

    def __init__(self, write: Callable[[str], None], every: float = 5.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._write = write
        self._every = every
        self._clock = clock
        self._last = clock()

    def __call__(self, p: SyncProgress) -> None:
        """Called with every :class:`~engine.api.SyncProgress` update; prints when one is due."""
        now = self._clock()
        if now - self._last < self._every:
            return
        self._last = now
        label = "indexing files" if p.phase == "files" else "embedding chunks"
        share = f" ({100 * p.done // p.total}%)" if p.total else ""
        self._write(f"… {label}: {p.done}/{p.total}{share}")


def progress_rate(p: SyncProgress, spent: float) -> str:
    """The bar's rate: files a second, or characters embedded a second. None before half a second: a phase with
    nothing to do read "121/121 121000000.0/s"."""
    if spent < 0.5:
        return ""
    return f"{p.done / spent:.1f}/s" if not p.work_total else f"{p.work_done / spent / 1000:.1f}k chars/s"


def _index_with_progress(eng: Any, force: bool, watch: IndexWatch) -> Any:
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(stderr=True)
    # Redrawn 8×/s by its own thread (the clock and ETA move between the embedding groups' updates). The bar, its
    # ETA and the rate follow the work (characters sent to the model, SyncProgress.work_done) where the engine says
    # it; the count stays in chunks: by chunks, the head's line vectors held the bar still with "ETA 0:00:02".
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("[green]{task.fields[count]}"),
                  TextColumn("{task.fields[rate]}"), TimeRemainingColumn(), console=console,
                  transient=True, refresh_per_second=8) as bar:
        tasks: dict[str, Any] = {}
        starts: dict[str, float] = {}

        def on_progress(p: SyncProgress) -> None:
            label = "Indexing files" if p.phase == "files" else "Embedding chunks"
            done, total = (p.work_done, p.work_total) if p.work_total else (p.done, p.total)
            count = f"{p.done:,}/{p.total:,}"
            if p.phase not in tasks:
                tasks[p.phase] = bar.add_task(label, total=total, rate="", count=count)
                starts[p.phase] = time.monotonic()
            rate = progress_rate(p, time.monotonic() - starts[p.phase])
            bar.update(tasks[p.phase], completed=done, total=total, rate=rate, count=count)

        return eng.sync(force=force, progress=watch.then(on_progress), cancel=watch.cancel)


@cli.command()
@click.argument("query", required=False)
@click.option("--query", "query_opt", help="The query (wins over the positional one).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--max-results", type=click.IntRange(1, 1000), default=None, help="How many results (default 6).")
@click.option("--min-score", type=FiniteFloat(0.0, 1.0), default=None, help=f"Drop results whose score (as shown) is below this, 0 to 1 (default [search] min_score, "
                   f"{SearchConfig().min_score:g} unless configured).")
@click.option("--mode", type=click.Choice(["hybrid", "keyword", "vector"]), default="hybrid", show_default=True)
@click.option("--corpus", type=click.Choice(["memory", "sessions", "all"]), default="all", show_default=True,
              help="Memory files, session transcripts, or every configured source.")
@click.pass_obj
def search(obj: _Ctx, query: str | None, query_opt: str | None, as_json: bool, max_results: int | None,
           min_score: float | None, mode: str, corpus: str) -> None:
    """Search memory (memory_search): line-ranged snippets with fused, vector and keyword scores."""
    text = query_opt if query_opt is not None else query
    if text is None:
        _fail("missing search query: give it as an argument or with --query", as_json, EXIT_USAGE)
    if not text.strip():  # as memory_search refuses it: an empty query embeds to noise and "finds" anything
        _fail("empty search query: give some words to search for", as_json, EXIT_USAGE)
    with obj.engine(as_json) as eng:
        try:
            resp = eng.search(text, mode=mode, max_results=max_results, min_score=min_score, corpus=corpus)
        except MemdeckError as exc:
            _fail(str(exc), as_json)
    if as_json:
        echo_json(resp.to_json())
        return
    if resp.warnings:
        say_lines((f"note: {warning}" for warning in resp.warnings), err=True)
    if resp.not_embedded:
        from engine.api import index_writer

        writer = index_writer(eng.config.index_path)
        say(f"note: {not_embedded_note(resp.not_embedded, resp.embed_seconds, writer)}", err=True)
    # How the query's dates were read ("yesterday → Wed 21 Oct 2026"), so a wrong reading is seen at once.
    if resp.dates:
        say_lines(f"{span.phrase} → {span.label}" for span in resp.dates)
    if not resp.results:
        say("No matches.")
        return
    for hit in resp.results:
        parts = f"keyword {hit.text_score:.2f}"
        if hit.vector_score is not None:
            parts = f"vector {hit.vector_score:.2f} · " + parts
        if hit.rerank is not None:
            parts += f" · rerank {hit.rerank:+.2f}"
        if hit.placed:  # above a higher score: the vector leg is surest of it (vector_slot)
            parts += " · placed by meaning"
        # Memory text is data: escape sequences in a note are shown, never run by the terminal.
        say(f"{hit.score:.3f} {safe_name(hit.path)}:{hit.start_line}-{hit.end_line}  ({parts})")
        say(f"  L{hit.snippet_start_line}-L{hit.snippet_end_line}:")
        for line in hit.snippet.split("\n"):
            say(f"  {line}")
        say("")


@cli.command()
@click.argument("path")
@click.option("--from", "from_line", type=click.IntRange(1), default=None, help="First line (1-based).")
@click.option("--lines", type=click.IntRange(1), default=None, help="How many lines.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (the exact text).")
@click.option("--raw", is_flag=True, help="The exact text, control characters and all (for a file, not a terminal).")
@click.pass_obj
def get(obj: _Ctx, path: str, from_line: int | None, lines: int | None, as_json: bool, raw: bool) -> None:
    """Read lines of a memory file (memory_get). Only MEMORY.md, memory.md, memory/**.md and extra paths.

    PATH may be a citation as memdeck prints it (memory/x.md#L14-L16, #L14, :14, :14-16, or a session's
    sessions/<agent>/<id>.jsonl#L12-L30): its lines are read; --from/--lines given too win.

    Control characters in the text (escape sequences) are shown as escapes like \\x1b; --raw or --json give the
    exact text.
    """
    from engine.errors import PathRefused
    from engine.workspace import read_memory_slice

    # Straight from the file: reading a note needs the config's path rules, not the index (opening it and
    # importing the engine cost more than the rest of the command).
    cfg = obj.config(as_json)
    try:
        if path.strip().startswith("sessions/"):  # a session citation: sessions/main/<id>.jsonl#L12-L20
            from engine.api import MemoryFiles

            result = MemoryFiles(cfg).get_session(path, from_line, lines)
        else:
            result = read_memory_slice(cfg, path, from_line, lines)
    except PathRefused as exc:
        _fail(str(exc), as_json, path=path, text="", disabled=True)  # memory_get's refusal fields, too
    except MemdeckError as exc:  # a locked or damaged OpenClaw database
        _fail(str(exc), as_json, path=path, text="", disabled=True)
    if as_json:
        echo_json(result.to_json(), indent=None)
        return
    if result.note:
        click.echo(f"note: {result.note}", err=True)
    if raw:
        click.echo(result.text, color=True)  # color=True: click would strip ANSI sequences from a pipe
    else:
        # Memory text is data, on a terminal or through a pipe into one (`| less -R`, `| cat`): shown, never run.
        say(result.text)


@cli.command()
@click.argument("directory", required=False, type=click.Path(file_okay=False))
@click.option("--force", is_flag=True, help="Overwrite files that already exist.")
def demo(directory: str | None, force: bool) -> None:
    """Write the demo workspace to DIRECTORY (or a new temp dir) and print where."""
    from engine.demo import write_demo

    target = Path(directory) if directory else Path(tempfile.mkdtemp(prefix="memdeck-demo-"))
    write_demo(target, overwrite=force)
    say_lines([f"Demo workspace written to {target}", f"Sessions: {target / 'sessions'}",
               f"Try: memdeck --workspace {target} --sessions {target / 'sessions'} search \"database incident\""])


@cli.command()
@click.option("--fix", is_flag=True, help="Repair what can be repaired (memory files are never changed).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
def doctor(obj: _Ctx, fix: bool, as_json: bool) -> None:
    """Check the index's health and the memory files: orphaned rows, chunks without FTS rows or vectors,
    identity mismatch, stale files, temp leftovers, sqlite-vec and model, permissions, secrets.

    Exits 1 when a problem needs attention.
    """
    from engine.api import MemoryEngine, format_report, run_doctor

    cfg = obj.config(as_json)

    def progress(line: str) -> None:
        say(f"… {safe_name(line)}", err=True)

    try:
        report = run_doctor(cfg, fix=fix, progress=None if as_json else progress, open_engine=MemoryEngine)
    except MemdeckError as exc:
        _fail(str(exc), as_json)
    if as_json:
        echo_json(report.to_dict())
    else:
        say(format_report(report))
    sys.exit(EXIT_OK if report.ok else EXIT_ERROR)


@cli.command("mcp")
@click.option("--http", "http_port", type=click.IntRange(0, 65535), default=None, metavar="PORT",
              help="Serve streamable HTTP on 127.0.0.1:PORT at /mcp instead of stdio (0 picks a free port). "
                   "Clients must send the bearer token it prints (kept in <data dir>/mcp-http-token) as the header "
                   "`Authorization: Bearer <token>`.")
@click.option("--allow-write", is_flag=True, help="Enable memory_append (atomic appends to today's daily note).")
@click.option("--new-token", is_flag=True,
              help="Replace the HTTP bearer token with a new one (the old one stops working, in a running server "
                   "too); prints it. With --http, then serves.")
@click.pass_obj
def mcp_command(obj: _Ctx, http_port: int | None, allow_write: bool, new_token: bool) -> None:
    """Serve memory to agents over MCP: memory_search, memory_get (and memory_append with --allow-write).

    Over stdio by default (the client starts `memdeck mcp`); over HTTP with --http PORT, on this machine only,
    for clients that hold the bearer token.
    """
    from memdeck.mcp import TokenFileError, http_token, serve

    cfg = obj.config()
    if new_token and http_port is None:
        try:
            token, path = http_token(cfg.home, renew=True)
        except TokenFileError as exc:
            _fail(str(exc))
        say_lines([f"New bearer token: {token}", f"Kept in {path}; `memdeck mcp --http` servers take it from their "
                   "next request, and the old token stops working."])
        return
    sys.exit(serve(cfg, http_port=http_port, allow_write=allow_write, new_token=new_token))


def _sessions_context(sessions_dir: str | None = None) -> Any:
    """Build what ``memdeck sessions`` and ``memdeck flush`` need, backed by the real engine."""
    from memdeck.cli_sessions import SessionsContext

    current = click.get_current_context()
    obj = current.find_object(_Ctx)
    assert obj is not None, "called inside a memdeck command"
    as_json = bool(current.params.get("as_json"))  # the command's --json: its errors are JSON too
    if sessions_dir is not None:
        obj.sessions = sessions_dir
    cfg = obj.config(as_json)
    engine_box: list[Any] = []

    def engine() -> Any:
        if not engine_box:
            engine_box.append(obj.engine(as_json))
        return engine_box[0]

    def reindex(path: Path) -> None:
        eng = engine()
        eng.sync(embed=eng.embedder is not None and eng.embedder.loaded)

    llm = cfg.llm if cfg.llm.base_url and cfg.llm.model else None
    from engine.api import FLUSH_STATE_FILE, open_session_source

    source = open_session_source(cfg, flush_state=cfg.home / FLUSH_STATE_FILE)  # the database, or a folder
    return SessionsContext(
        workspace=cfg.workspace,
        sessions_dir=source.location,
        source=source,
        home=cfg.home,
        llm=llm,
        is_known=lambda text: bool(engine().knows(text)),  # opened only when a draft needs it
        reindex=reindex,
        config=cfg,
    )


def _review_engine(as_json: bool) -> Any:
    """The engine ``memdeck review`` reads (its errors are JSON under ``--json``)."""
    obj = click.get_current_context().find_object(_Ctx)
    assert obj is not None, "called inside a memdeck command"
    return obj.engine(as_json)


def _register_extensions(group: click.Group) -> None:
    from memdeck.cli_audit import register as register_audit
    from memdeck.cli_review import register as register_review
    from memdeck.cli_sessions import register

    register(group, _sessions_context)
    register_review(group, _review_engine)
    register_audit(group, _review_engine)


def main() -> None:
    """Console-script entry point."""
    # One BLAS thread: the numpy MiniLM parallelises over its own worker threads, and two OpenBLAS threads per
    # matmul thrash on a busy 2-core machine (a query 40 ms → 240–300 ms at load 5). Read when numpy loads.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        cli.main(standalone_mode=True)
    except KeyboardInterrupt:  # outside click's main (a second Ctrl-C while the first one is reported)
        interrupted("--json" in sys.argv[1:])


def interrupted(as_json: bool) -> NoReturn:
    """How every command ends on Ctrl-C (``index`` says more, itself): one line on stderr, with ``--json`` the
    error on stdout, exit code 130 (128 + SIGINT), no traceback."""
    # A second Ctrl-C while this is printed must not end in a traceback either (signals: main thread only).
    with contextlib.suppress(ValueError):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    _fail("interrupted (Ctrl-C)", as_json, EXIT_INTERRUPTED, interrupted=True)


if __name__ == "__main__":
    main()
