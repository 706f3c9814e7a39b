"""The ``memdeck`` command line: the TUI by default; status, index, search, get and demo for people and agents."""

from __future__ import annotations

import gc
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NoReturn

import click

from engine.config import Config, load_config
from engine.errors import MemdeckError
from engine.textio import terminal_safe

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


def _fail(message: str, as_json: bool = False) -> NoReturn:
    if as_json:
        click.echo(json.dumps({"ok": False, "error": message}))
    click.echo(f"memdeck: {message}", err=True)
    sys.exit(EXIT_ERROR)


class _Ctx:
    def __init__(self, workspace: str | None, sessions: str | None, config: str | None, demo: bool) -> None:
        self.workspace = workspace
        self.sessions = sessions
        self.config_path = config
        self.demo = demo
        self._config: Config | None = None

    def config(self, as_json: bool = False) -> Config:
        if self._config is None:
            try:
                workspace, sessions = self.workspace, self.sessions
                if self.demo:
                    from engine.config import memdeck_home
                    from engine.demo import demo_home_workspace

                    demo = demo_home_workspace(memdeck_home())
                    workspace, sessions = str(demo), sessions or str(demo / "sessions")
                self._config = load_config(workspace=workspace, config_path=self.config_path, sessions_dir=sessions)
            except MemdeckError as exc:
                _fail(f"invalid configuration: {exc}", as_json)
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
    """The ``memdeck`` group; ``sessions`` and ``flush`` are added on first use.

    Deferred: their module imports the flush drafter, the session parser and the LLM client (~70 ms), which
    ``status``, ``get`` and ``search`` never need.
    """

    _extensions_added = False

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
@click.option("--workspace", "-w", metavar="DIR", help="Workspace folder (default: config, $MEMDECK_WORKSPACE, ~/.openclaw/workspace).")
@click.option("--sessions", metavar="DIR", help="Agent sessions folder (JSONL transcripts).")
@click.option("--config", "config_path", metavar="FILE", help="Config file (default: <config dir>/config.toml).")
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
        click.echo(json.dumps(st.to_dict(), indent=2))
        return
    lines = [
        f"Workspace: {st.workspace}",
        f"Index: {st.index_path} ({_size(st.index_bytes)})",
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
        f"Indexed: {st.files_indexed}/{st.files_on_disk} files · {st.chunks} chunks",
        f"Dirty: {'yes (' + str(st.dirty_files) + ' files)' if st.dirty_files else 'no'}",
        f"Vector: {st.vector_state}",
        f"Not embedded: {st.pending_embeddings} chunks" if st.pending_embeddings else "Embeddings: complete",
        f"FTS: {'ready' if st.fts_ready else 'unavailable'}",
        f"Embedding cache: {st.cache_entries} entries",
        f"Index identity: {st.identity_status}",
    ]
    if st.probe is not None:
        lines.append("Embeddings probe: " + ("ok" if st.probe.get("ok") else f"failed: {st.probe.get('error')}"))
    for note in st.recovered:
        lines.append(f"Recovered: {note}")
    if st.issues:
        lines.append("Issues:")
        lines += [f"  {i}" for i in st.issues]
    click.echo(terminal_safe("\n".join(lines)))


def _size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


@cli.command()
@click.option("--force", is_flag=True, help="Rebuild from scratch (embeddings still come from the cache).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_obj
def index(obj: _Ctx, force: bool, as_json: bool) -> None:
    """Index the workspace (incremental; only changed files are re-read and re-embedded)."""
    with obj.engine(as_json) as eng:
        started = time.monotonic()
        try:
            if as_json or not sys.stderr.isatty():
                report = eng.sync(force=force)
            else:
                report = _index_with_progress(eng, force)
        except MemdeckError as exc:  # busy, disk full, read-only index, ...
            _fail(str(exc), as_json)
        elapsed = time.monotonic() - started
        files = eng.store.counts()["files"]
    if as_json:
        click.echo(json.dumps({
            "ok": True, "files": files, "filesIndexed": report.files_indexed, "filesRemoved": report.files_removed,
            "chunks": report.chunks_total, "chunksWritten": report.chunks_written, "embedded": report.embedded,
            "fromCache": report.from_cache, "rebuilt": report.rebuilt, "seconds": round(elapsed, 3),
            "issues": report.issues}, indent=2))
        return
    for issue in report.issues:
        click.echo(f"warning: {terminal_safe(issue)}", err=True)
    click.echo(f"Indexed {files} files · {report.chunks_total} chunks "
               f"({report.embedded} embedded, {report.from_cache} from cache) in {elapsed:.1f} s")


def _index_with_progress(eng: Any, force: bool) -> Any:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from engine.index.indexer import SyncProgress

    console = Console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[rate]}"), TimeRemainingColumn(), console=console,
                  transient=True) as bar:
        tasks: dict[str, Any] = {}
        starts: dict[str, float] = {}

        def on_progress(p: SyncProgress) -> None:
            label = "Indexing files" if p.phase == "files" else "Embedding chunks"
            if p.phase not in tasks:
                tasks[p.phase] = bar.add_task(label, total=p.total, rate="")
                starts[p.phase] = time.monotonic()
            spent = max(1e-6, time.monotonic() - starts[p.phase])
            bar.update(tasks[p.phase], completed=p.done, total=p.total, rate=f"{p.done / spent:.1f}/s")

        return eng.sync(force=force, progress=on_progress)


@cli.command()
@click.argument("query", required=False)
@click.option("--query", "query_opt", help="The query (wins over the positional one).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--max-results", type=click.IntRange(1, 1000), default=None, help="How many results (default 6).")
@click.option("--min-score", type=click.FloatRange(0.0, 1.0), default=None, help="Score threshold (default 0.35).")
@click.option("--mode", type=click.Choice(["hybrid", "keyword", "vector"]), default="hybrid", show_default=True)
@click.pass_obj
def search(obj: _Ctx, query: str | None, query_opt: str | None, as_json: bool, max_results: int | None,
           min_score: float | None, mode: str) -> None:
    """Search memory (memory_search): line-ranged snippets with fused, vector and keyword scores."""
    text = query_opt if query_opt is not None else query
    if text is None:
        click.echo("memdeck: missing search query: give it as an argument or with --query", err=True)
        sys.exit(EXIT_USAGE)
    with obj.engine(as_json) as eng:
        try:
            resp = eng.search(text, mode=mode, max_results=max_results, min_score=min_score)
        except MemdeckError as exc:
            _fail(str(exc), as_json)
    if as_json:
        click.echo(json.dumps(resp.to_json(), indent=2, ensure_ascii=False))
        return
    for warning in resp.warnings:
        click.echo(f"note: {terminal_safe(warning)}", err=True)
    if not resp.results:
        click.echo("No matches.")
        return
    for hit in resp.results:
        parts = f"keyword {hit.text_score:.2f}"
        if hit.vector_score is not None:
            parts = f"vector {hit.vector_score:.2f} · " + parts
        # Memory text is data: escape sequences in a note are shown, never run by the terminal.
        click.echo(f"{hit.score:.3f} {terminal_safe(hit.path)}:{hit.start_line}-{hit.end_line}  ({parts})")
        click.echo(f"  L{hit.snippet_start_line}-L{hit.snippet_end_line}:")
        for line in hit.snippet.split("\n"):
            click.echo(f"  {terminal_safe(line)}")
        click.echo("")


@cli.command()
@click.argument("path")
@click.option("--from", "from_line", type=click.IntRange(1), default=None, help="First line (1-based).")
@click.option("--lines", type=click.IntRange(1), default=None, help="How many lines.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
def get(obj: _Ctx, path: str, from_line: int | None, lines: int | None, as_json: bool) -> None:
    """Read lines of a memory file (memory_get). Only MEMORY.md, memory.md, memory/**.md and extra paths."""
    from engine.errors import PathRefused
    from engine.workspace import read_memory_slice

    # Straight from the file: reading a note needs the config's path rules, not the index (opening it and
    # importing the engine cost more than the rest of the command).
    cfg = obj.config(as_json)
    try:
        result = read_memory_slice(cfg, path, from_line, lines)
    except PathRefused as exc:
        if as_json:
            click.echo(json.dumps({"path": path, "text": "", "disabled": True, "error": str(exc)}))
        click.echo(f"memdeck: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    if as_json:
        click.echo(json.dumps(result.to_json(), ensure_ascii=False))
    else:
        # A terminal gets escapes made visible; a pipe gets the exact text (color=True: click would strip ANSI).
        click.echo(terminal_safe(result.text) if sys.stdout.isatty() else result.text, color=True)


@cli.command()
@click.argument("directory", required=False, type=click.Path(file_okay=False))
@click.option("--force", is_flag=True, help="Overwrite files that already exist.")
def demo(directory: str | None, force: bool) -> None:
    """Write the demo workspace to DIRECTORY (or a new temp dir) and print where."""
    from engine.demo import write_demo

    target = Path(directory) if directory else Path(tempfile.mkdtemp(prefix="memdeck-demo-"))
    write_demo(target, overwrite=force)
    click.echo(f"Demo workspace written to {target}")
    click.echo(f"Sessions: {target / 'sessions'}")
    click.echo(f"Try: memdeck --workspace {target} --sessions {target / 'sessions'} search \"database incident\"")


@cli.command()
@click.option("--fix", is_flag=True, help="Repair what can be repaired (memory files are never changed).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
def doctor(obj: _Ctx, fix: bool, as_json: bool) -> None:
    """Check the index's health and the memory files: orphaned rows, chunks without FTS rows or vectors,
    identity mismatch, stale files, temp leftovers, sqlite-vec and model, permissions, secrets.

    Exits 1 when a problem needs attention.
    """
    from engine.api import MemoryEngine
    from engine.health.doctor import format_report, run_doctor

    cfg = obj.config(as_json)

    def progress(line: str) -> None:
        click.echo(f"… {line}", err=True)

    try:
        report = run_doctor(cfg, fix=fix, progress=None if as_json else progress, open_engine=MemoryEngine)
    except MemdeckError as exc:
        _fail(str(exc), as_json)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        click.echo(format_report(report))
    sys.exit(EXIT_OK if report.ok else EXIT_ERROR)


@cli.command("mcp")
@click.option("--http", "http_port", type=click.IntRange(0, 65535), default=None, metavar="PORT",
              help="Serve streamable HTTP on 127.0.0.1:PORT at /mcp instead of stdio (0 picks a free port).")
@click.option("--allow-write", is_flag=True, help="Enable memory_append (atomic appends to today's daily note).")
@click.pass_obj
def mcp_command(obj: _Ctx, http_port: int | None, allow_write: bool) -> None:
    """Serve memory to agents over MCP: memory_search, memory_get (and memory_append with --allow-write)."""
    from memdeck.mcp import serve

    sys.exit(serve(obj.config(), http_port=http_port, allow_write=allow_write))


def _sessions_context(sessions_dir: str | None = None) -> Any:
    """Build what ``memdeck sessions`` and ``memdeck flush`` need, backed by the real engine."""
    from memdeck.cli_sessions import SessionsContext

    obj = click.get_current_context().find_object(_Ctx)
    assert obj is not None, "called inside a memdeck command"
    if sessions_dir is not None:
        obj.sessions = sessions_dir
    cfg = obj.config()
    engine_box: list[Any] = []

    def engine() -> Any:
        if not engine_box:
            engine_box.append(obj.engine())
        return engine_box[0]

    def reindex(path: Path) -> None:
        eng = engine()
        eng.sync(embed=eng.embedder is not None and eng.embedder.loaded)

    llm = cfg.llm if cfg.llm.base_url and cfg.llm.model else None
    return SessionsContext(
        workspace=cfg.workspace,
        sessions_dir=cfg.resolved_sessions_dir,
        home=cfg.home,
        llm=llm,
        is_known=lambda text: bool(engine().knows(text)),  # opened only when a draft needs it
        reindex=reindex,
        config=cfg,
    )


def _register_extensions(group: click.Group) -> None:
    from memdeck.cli_sessions import register

    register(group, _sessions_context)


def main() -> None:
    """Console-script entry point."""
    # One BLAS thread: the numpy MiniLM parallelises over its own worker threads, and two OpenBLAS threads per
    # matmul thrash on a busy 2-core machine (a query 40 ms → 240–300 ms at load 5). Read when numpy loads.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        cli.main(standalone_mode=True)
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
