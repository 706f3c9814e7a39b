"""The ``memdeck sessions`` and ``memdeck flush`` commands: plain run functions plus click wrappers.

Every memory operation here is the engine's (:class:`engine.api.MemoryFiles`, which ``MemoryEngine`` is):
the TUI and the MCP server draft, append and write notes through the same methods.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

import click

from engine.api import (
    FLUSH_STATE_FILE,
    Draft,
    DraftItem,
    FlushError,
    LLMError,
    MemoryFiles,
    SessionInfo,
    SessionReadError,
    SessionSource,
    Transcript,
    needs_flush,
    session_source_at,
)
from engine.config import Config, LLMConfig
from engine.display import plural, safe_name
from engine.errors import MemdeckError
from memdeck.output import EXIT_USAGE, echo_json, not_empty_path, report_error, say, say_lines

TITLE_COLUMN_CHARS = 40


@dataclass(frozen=True)
class SessionsContext:
    """What the session commands need from the engine, wired in by the caller.

    Attributes:
        workspace: the memory workspace (flushes and notes go to ``<workspace>/memory/``).
        sessions_dir: where sessions are read: the legacy sessions folder or OpenClaw's ``openclaw-agent.sqlite``.
        home: memdeck's data dir (the flush record lives at ``<home>/flush-state.json``).
        llm: the chat endpoint, or None when none is configured.
        is_known: True for a statement memory already holds (backed by the search index).
        reindex: called with the absolute path of each written file so it is searchable at once.
        config: the full configuration, when the caller has one (else one is made from the fields above).
        source: the session source (:func:`engine.api.open_session_source`); None: the one ``sessions_dir`` names.
    """

    workspace: Path
    sessions_dir: Path
    home: Path
    llm: LLMConfig | None = None
    is_known: Callable[[str], bool] | None = None
    reindex: Callable[[Path], None] | None = None
    config: Config | None = field(default=None, compare=False)
    source: SessionSource | None = field(default=None, compare=False)

    @property
    def flush_state_path(self) -> Path:
        """memdeck's flush record."""
        return self.home / FLUSH_STATE_FILE

    def memory(self) -> MemoryFiles:
        """The engine's memory operations on this workspace and exactly this sessions folder."""
        base = self.config or Config(workspace=self.workspace, home=self.home,
                                     config_path=self.home / "config.toml", sessions_dir=self.sessions_dir)
        config = replace(base, workspace=self.workspace, home=self.home, sessions_dir=self.sessions_dir,
                         llm=self.llm or LLMConfig())
        source = self.source or session_source_at(self.sessions_dir, agent=config.agent,
                                                  flush_state=self.flush_state_path)
        return MemoryFiles(config, source)


FlushContext = SessionsContext


def _err(message: str, as_json: bool = False) -> None:
    """An error as every memdeck command reports it (:func:`memdeck.output.report_error`: JSON with ``--json``)."""
    report_error(message, as_json)


def _local(when: datetime | None, zone: tzinfo | None = None) -> str:
    """A time in the user's zone (``[memory] timezone``, the zone every note is dated in); None: the system's."""
    return when.astimezone(zone).strftime("%Y-%m-%d %H:%M") if when is not None else "-"


def _iso(when: datetime | None) -> str | None:
    return when.isoformat().replace("+00:00", "Z") if when is not None else None


def _rel(ctx: SessionsContext, path: Path) -> str:
    try:
        return path.relative_to(ctx.workspace).as_posix()
    except ValueError:
        return str(path)


# ---------------------------------------------------------------------------------------------
# memdeck sessions


def session_to_json(info: SessionInfo) -> dict[str, Any]:
    """A session listing entry as camelCase JSON (``path`` is the file, or a database session's stand-in name;
    ``citationPath`` is how search results and ``memdeck get`` name it)."""
    return {
        "sessionId": info.session_id,
        "title": info.title,
        "label": info.label,
        "source": info.source,
        "path": str(info.path),
        "citationPath": info.citation_path,
        "archived": info.archived,
        "started": _iso(info.started),
        "lastMessage": _iso(info.last_message),
        "messages": info.message_count,
        "totalTokens": info.total_tokens,
        "tokensSource": info.tokens_source,
        "inputTokens": info.input_tokens,
        "outputTokens": info.output_tokens,
        "contextTokens": info.context_tokens,
        "compactions": info.compactions,
        "size": info.size,
        "sessionKey": info.session_key,
        "chatType": info.chat_type,
        "channel": info.channel,
        "modelProvider": info.model_provider,
        "model": info.model,
        "displayName": info.display_name,
        "lines": info.line_count,
        "flushed": info.flushed,
        "flushedAt": _iso(info.flushed_at),
        "memoryFlushAt": _iso(info.memory_flush_at),
        "memoryFlush": (
            {"kind": info.memory_flush_kind, "compactionCount": info.memory_flush_compaction_count}
            if info.memory_flush_recorded or info.memory_flush_at is not None else None
        ),
        "openclawFlushedThisCycle": info.openclaw_flushed_this_cycle,
        "needsFlush": needs_flush(info),
        "skippedLines": info.skipped_lines,
        "error": info.error,
    }


def _short_ids(ids: list[str], minimum: int = 8) -> dict[str, str]:
    """The shortest prefix (at least ``minimum`` long) that tells each id apart."""
    short: dict[str, str] = {}
    for session_id in ids:
        length = minimum
        while length < len(session_id) and any(
            other != session_id and other.startswith(session_id[:length]) for other in ids
        ):
            length += 1
        short[session_id] = session_id[:length]
    return short


def _flushed_cell(info: SessionInfo, zone: tzinfo | None) -> str:
    if info.flushed_at is not None:
        return f"yes {_local(info.flushed_at, zone)}"
    if info.memory_flush_at is not None:
        return f"openclaw {_local(info.memory_flush_at, zone)}"
    if info.memory_flush_recorded:  # OpenClaw 2026.9 records the compaction cycle, not a time
        return "openclaw this cycle" if info.openclaw_flushed_this_cycle else "openclaw earlier"
    return "no"


def _tokens_cell(info: SessionInfo) -> str:
    """The token count and which one it is: the session store's total, or the last reply's usage."""
    if info.total_tokens is None:
        return "-"
    which = "store" if info.tokens_source == "store" else "last reply"
    return f"{info.total_tokens:,} ({which})"


def _title_cell(info: SessionInfo) -> str:
    title = " ".join((info.title or "").split())
    return title if len(title) <= TITLE_COLUMN_CHARS else title[: TITLE_COLUMN_CHARS - 1].rstrip() + "…"


def _notes_cell(info: SessionInfo) -> str:
    notes: list[str] = []
    if info.archived:
        notes.append("archived")
    if needs_flush(info):
        notes.append("needs flush")
    if info.skipped_lines:
        notes.append(plural(info.skipped_lines, "bad line"))
    if info.error:
        notes.append(info.error)
    return ", ".join(notes)


def format_sessions_table(infos: list[SessionInfo], zone: tzinfo | None = None) -> str:
    """Render the sessions listing as an aligned plain-text table, times in ``zone`` (the user's).

    IDs are the shortest prefix (8 characters at least) that tells each apart, never cut with an ellipsis;
    TOKENS says whether it is the session store's total or the last reply's usage.
    """
    short = _short_ids([info.session_id for info in infos])
    header = ("ID", "STARTED", "LAST MESSAGE", "MSGS", "TOKENS", "FLUSHED", "NOTES", "TITLE")
    rows = [
        (
            # One cell, one line, nothing a terminal obeys: ids come from file names, notes quote the reader.
            safe_name(short[info.session_id]),
            _local(info.started, zone),
            _local(info.last_message, zone),
            str(info.message_count),
            _tokens_cell(info),
            _flushed_cell(info, zone),
            safe_name(_notes_cell(info)),
            safe_name(_title_cell(info)),
        )
        for info in infos
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    right = {3, 4}
    lines = []
    for row in [header, *rows]:
        cells = [cell.rjust(widths[i]) if i in right else cell.ljust(widths[i]) for i, cell in enumerate(row)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def run_sessions(ctx: SessionsContext, as_json: bool) -> int:
    """List the sessions folder (``memdeck sessions``).

    Args:
        ctx: the wired-in context.
        as_json: print ``{"sessionsDir", "sessions": [...]}`` instead of a table.

    Returns:
        The exit code: 0, or 1 when the folder cannot be listed.
    """
    memory = ctx.memory()
    try:
        infos = memory.list_sessions()
    except SessionReadError as exc:
        hint = " (set --sessions PATH or MEMDECK_SESSIONS)" if memory.sessions.kind == "folder" else ""
        _err(f"{exc}{hint}", as_json)
        return 1
    if as_json:
        payload = {
            "sessionsDir": str(ctx.sessions_dir),
            "source": memory.describe_sessions().to_json(),
            "sessions": [session_to_json(info) for info in infos],
        }
        echo_json(payload)
        return 0
    if not infos:
        say_lines([f"No sessions in {memory.sessions.location}"])
        return 0
    if memory.sessions.kind == "agent-db":
        _emit_warnings(list(memory.describe_sessions().warnings))  # a newer schema, a snapshot read
    say(format_sessions_table(infos, memory.timezone))
    return 0


# ---------------------------------------------------------------------------------------------
# memdeck flush


def _draft(memory: MemoryFiles, ctx: SessionsContext, transcript: Transcript, method: str,
           as_json: bool = False) -> Draft | None:
    """The engine's draft (``auto`` falls back to extractive by itself); None after printing why it failed."""
    try:
        return memory.draft_flush(transcript, method, is_known=ctx.is_known)
    except LLMError as exc:  # only ``--llm`` fails: ``auto`` falls back with a warning
        _err(f"LLM draft failed: {exc}", as_json)
        return None


def _reindex(ctx: SessionsContext, path: Path, warnings: list[str]) -> None:
    if ctx.reindex is None:
        return
    try:
        ctx.reindex(path)
    except Exception as exc:  # the file is written; a stale index must not turn that into a failure
        warnings.append(f"written, but not yet searchable: {exc}")


def _emit_warnings(warnings: list[str]) -> None:
    if warnings:
        say_lines((f"memdeck: warning: {warning}" for warning in warnings), err=True)


def _run_note(
    ctx: SessionsContext,
    memory: MemoryFiles,
    transcript: Transcript,
    *,
    dry_run: bool,
    method: str,
    as_json: bool,
    messages: int,
    now: datetime,
    warnings: list[str],
) -> int:
    if method == "llm" and ctx.llm is None:
        _err("no LLM configured: set [llm] base_url and model in the config, or use --extractive", as_json)
        return EXIT_USAGE
    try:
        note = memory.write_session_note(transcript, messages=messages, now=now, method=method, dry_run=dry_run)
    except LLMError as exc:
        _err(str(exc), as_json)
        return 1
    except (FlushError, OSError) as exc:
        _err(f"could not write the session note: {exc}", as_json)
        return 1
    warnings.extend(note.warnings)
    if note.written:
        _reindex(ctx, note.path, warnings)
    if as_json:
        payload = {
            "sessionId": transcript.session_id,
            "mode": "note",
            "dryRun": dry_run,
            "path": note.rel,
            "text": note.text,
            "warnings": warnings,
        }
        echo_json(payload)
        return 0
    _emit_warnings(warnings)
    say(f"{'Would write' if dry_run else 'Wrote'} session note {safe_name(note.rel)}")
    if dry_run:
        say("")
        say(note.text, nl=False)  # the session's own words: shown as data
    return 0


def run_flush(
    ctx: FlushContext,
    session: str,
    *,
    note: bool = False,
    dry_run: bool = False,
    method: str = "auto",
    day: str = "said",
    as_json: bool = False,
    messages: int = 15,
    now: datetime | None = None,
) -> int:
    """Flush a session into memory (``memdeck flush``), or write its session note with ``note``.

    Args:
        ctx: the wired-in context.
        session: a session id, a unique id prefix, or a path to a JSONL transcript.
        note: write a session note (``memory/YYYY-MM-DD-<slug>.md``) instead of a flush.
        dry_run: print what would be written, write nothing.
        method: ``auto`` (the LLM when configured, else extractive), ``llm`` or ``extractive``.
        day: ``said`` (each item in the daily note of the day it was said: one block per day), ``today`` or
            ``last`` (every item in today's note, or in the note of the day of the session's last message).
        as_json: print a JSON result instead of text.
        messages: messages a session note keeps.
        now: the current time (tests); defaults to the engine's clock (``[memory] timezone``, ``MEMDECK_TODAY``).
            The daily note is the day of ``now`` in ``[memory] timezone``, the day its heading's time is on.

    Returns:
        The exit code: 0 done (also when there was nothing to store), 1 failure, 2 no LLM for ``--llm``.
    """
    warnings: list[str] = []
    memory = ctx.memory()
    try:
        # The one clock: the day file and the heading's time are both read in [memory] timezone.
        now = memory.clock.in_zone(now) if now is not None else memory.now()
    except MemdeckError as exc:  # MEMDECK_TODAY/MEMDECK_NOW set to something else than a date or a time
        _err(str(exc), as_json)
        return 1
    try:
        path = memory.find_session(session, files=True)  # a JSONL path typed at the shell is the user's own
        transcript = memory.read_session(path)
    except SessionReadError as exc:
        _err(str(exc), as_json)
        return 1
    problem = _not_flushable(path, transcript)
    if problem is not None:  # /etc/passwd, random bytes, an empty file: refused before anything is written
        _err(problem, as_json)
        return 1
    if transcript.skipped:
        warnings.append(f"{plural(len(transcript.skipped), 'unusable line')} in {path.name} skipped")
    if note:
        return _run_note(
            ctx,
            memory,
            transcript,
            dry_run=dry_run,
            method=method,
            as_json=as_json,
            messages=messages,
            now=now,
            warnings=warnings,
        )
    if method == "llm" and ctx.llm is None:
        _err("no LLM configured: set [llm] base_url and model in the config, or use --extractive", as_json)
        return EXIT_USAGE
    draft = _draft(memory, ctx, transcript, method, as_json)
    if draft is None:
        return 1
    warnings.extend(draft.warnings)
    plan = memory.plan_flush(transcript, draft, now, day)
    targets = [_rel(ctx, ctx.workspace / rel) for rel in plan.paths]
    appended = False
    if not draft.is_empty and not dry_run:
        try:
            written = memory.write_flush(plan, now)
        except (FlushError, OSError) as exc:
            _err(f"could not append to {', '.join(targets)}: {exc}", as_json)
            return 1
        appended = True
        for path in written.paths:
            _reindex(ctx, path, warnings)
        warnings.extend(written.warnings)
    elif not dry_run:
        warnings.extend(memory.record_flush(transcript.session_id, now))
    if as_json:
        payload = {
            "sessionId": transcript.session_id,
            "mode": "flush",
            "method": draft.method,
            "dryRun": dry_run,
            "day": day,
            "path": targets[0],
            "paths": targets,
            "appended": appended,
            "items": [_item_json(item) for item in draft.items],
            "skippedKnown": draft.skipped_known,
            "text": plan.preview,
            "blocks": [{"path": _rel(ctx, ctx.workspace / block.rel), "day": block.day.isoformat(),
                        "text": block.text, "items": [_item_json(item) for item in block.items]}
                       for block in plan.blocks],
            "warnings": warnings,
        }
        echo_json(payload)
        return 0
    _emit_warnings(warnings)
    known = f" ({draft.skipped_known} already in memory)" if draft.skipped_known else ""
    if draft.is_empty:
        say(f"Nothing new to store from session {safe_name(transcript.id8)}{known}.")
        return 0
    verb = "Would append" if dry_run else "Appended"
    shown = ", ".join(safe_name(target) for target in targets)
    say(f"{verb} {plural(len(draft.items), 'item')} ({draft.method}) to {shown}{known}:")
    say("")
    say(plan.preview, nl=False)  # the session's own words: shown as data
    return 0


def _item_json(item: DraftItem) -> dict[str, object]:
    return {"text": item.text, "kind": item.kind, "line": item.line,
            "saidAt": _iso(item.said_at)}


def _not_flushable(path: Path, transcript: Transcript) -> str | None:
    """Why ``transcript`` cannot be flushed (it holds no message), or None."""
    if any(True for _ in transcript.messages()):
        return None
    if transcript.header is None:
        bad = f"; {plural(len(transcript.skipped), 'unusable line')}" if transcript.skipped else ""
        empty = "an empty file" if transcript.size == 0 else f"no session header and no messages{bad}"
        return f"{path} is not a session transcript ({empty}): nothing to flush"
    return f"session {transcript.id8} has no messages yet: nothing to flush"


# ---------------------------------------------------------------------------------------------
# click wiring


def _context(
    make_context: Callable[..., SessionsContext], sessions_dir: Path | None, as_json: bool = False
) -> SessionsContext | None:
    try:
        return make_context(sessions_dir=sessions_dir)
    except MemdeckError as exc:
        _err(str(exc), as_json)
        return None


def build_sessions_command(make_context: Callable[..., SessionsContext]) -> click.Command:
    """The ``sessions`` click command; ``make_context(sessions_dir=Path|None)`` builds its context."""

    @click.command("sessions")
    @click.option(
        "--sessions",
        "sessions_dir",
        type=click.Path(),
        callback=not_empty_path,
        default=None,
        help="Sessions folder or OpenClaw's openclaw-agent.sqlite (default: config, MEMDECK_SESSIONS, else in "
        "$OPENCLAW_STATE_DIR or ~/.openclaw: agents/<agent>/agent/openclaw-agent.sqlite, else agents/<agent>/sessions).",
    )
    @click.option("--json", "as_json", is_flag=True, help="Print JSON for agents.")
    def sessions_command(sessions_dir: Path | None, as_json: bool) -> None:
        """List sessions (OpenClaw's database or a sessions folder): started, last message, tokens, flushed?, title."""
        ctx = _context(make_context, sessions_dir, as_json)
        raise SystemExit(1 if ctx is None else run_sessions(ctx, as_json))

    return sessions_command


def build_flush_command(make_context: Callable[..., SessionsContext]) -> click.Command:
    """The ``flush`` click command; ``make_context(sessions_dir=Path|None)`` builds its context."""

    @click.command("flush")
    @click.argument("session")
    @click.option("--note", is_flag=True, help="Write a session note memory/YYYY-MM-DD-<slug>.md instead.")
    @click.option("--dry-run", is_flag=True, help="Show what would be written; write nothing.")
    @click.option("--llm", "use_llm", is_flag=True, help="Draft with the configured LLM.")
    @click.option("--extractive", "use_extractive", is_flag=True, help="Draft without an LLM.")
    @click.option(
        "--day",
        type=click.Choice(["said", "today", "last"]),
        default="said",
        show_default=True,
        help="Daily file: each item under the day it was said (one block per day), all in today's, or all in "
        "the day of the session's last message.",
    )
    @click.option("--json", "as_json", is_flag=True, help="Print JSON for agents.")
    @click.option(
        "--messages",
        type=click.IntRange(min=1),
        default=15,
        show_default=True,
        help="Messages a --note keeps.",
    )
    @click.option(
        "--sessions",
        "sessions_dir",
        type=click.Path(),
        callback=not_empty_path,
        default=None,
        help="Sessions folder or openclaw-agent.sqlite to look the id up in.",
    )
    def flush_command(
        session: str,
        note: bool,
        dry_run: bool,
        use_llm: bool,
        use_extractive: bool,
        day: str,
        as_json: bool,
        messages: int,
        sessions_dir: Path | None,
    ) -> None:
        """Turn SESSION (an id, id prefix, citation path or JSONL path) into memory: append a flush to
        memory/YYYY-MM-DD.md."""
        if use_llm and use_extractive:
            raise click.UsageError("--llm and --extractive cannot be used together: pick one (or neither: auto)")
        ctx = _context(make_context, sessions_dir, as_json)
        if ctx is None:
            raise SystemExit(1)
        code = run_flush(
            ctx,
            session,
            note=note,
            dry_run=dry_run,
            method="llm" if use_llm else "extractive" if use_extractive else "auto",
            day=day,
            as_json=as_json,
            messages=messages,
        )
        raise SystemExit(code)

    return flush_command


def register(group: click.Group, make_context: Callable[..., SessionsContext]) -> None:
    """Add ``sessions`` and ``flush`` to a click group.

    Args:
        group: the ``memdeck`` group.
        make_context: called as ``make_context(sessions_dir=<--sessions or None>)`` inside the
            command (so ``click.get_current_context()`` reaches the group's options); returns a
            :class:`SessionsContext`. A :class:`~engine.errors.MemdeckError` it raises is printed
            and exits 1.
    """
    group.add_command(build_sessions_command(make_context))
    group.add_command(build_flush_command(make_context))
