"""memdeck's MCP server: memory_search, memory_get and memory_append for agents, over stdio or streamable HTTP."""

from __future__ import annotations

import contextlib
import errno
import hmac
import json
import math
import os
import re
import secrets
import signal
import socket
import stat
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    ValidationError,
)
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, JsonSchemaValue, NoDefault
from pydantic_core import CoreSchema, ErrorDetails, PydanticCustomError, core_schema

from engine.api import DATED_NOTE, WatchPlan, plural
from engine.config import Config, SearchConfig
from engine.errors import IndexBusy, LineRangeRefused, MemdeckError, PathRefused
from engine.textio import fsync_dir, make_private_dir, read_text_file, scrub_json
from engine.workspace import ROOT_MEMORY_FILES, read_memory_slice, resolve_memory_path, scan_memory_files

SERVER_NAME = "memdeck"
RESOURCE_SCHEME = "memdeck://"
MAX_APPEND_CHARS = 64 * 1024
MAX_QUERY_CHARS = 2_000
"""A memory_search query longer than this is refused: a recall query is a few words, and a huge one only costs
time in the tokenizer and the keyword index."""
MAX_MESSAGE_BYTES = 1024 * 1024
"""The largest JSON-RPC message read (a stdio line, an HTTP body): a full-size memory_append, escaped, fits."""
TOKEN_FILE = "mcp-http-token"
"""The bearer token ``memdeck mcp --http`` requires, in memdeck's data dir (mode 0600)."""
MAX_RESULTS_CAP = 50
WARM_WAIT_SECONDS = 10.0
DAILY_NOTE = DATED_NOTE  # the engine's one rule for dated notes (daily notes and session notes)

SEARCH_DESCRIPTION = (
    "Mandatory recall step: search the agent's long-term memory (MEMORY.md and the daily notes in "
    "memory/*.md, plus session transcripts when configured) before answering questions about prior work, "
    "decisions, dates, people, preferences or todos. Hybrid search: meaning (embeddings) and exact words "
    "(BM25), fused. Returns the best line-ranged snippets, each with path, startLine, endLine, score "
    "(0-1, plus vectorScore and textScore) and a citation like memory/2026-01-12.md#L4-L9 (a session: "
    "sessions/main/<id>.jsonl#L12-L20, JSONL lines). Then call memory_get with the path and lines to read "
    "more. `corpus` picks memory files (memory), session transcripts (sessions) or both (all, the default). "
    "Dates in the query (yesterday, last Friday, last week, 2026-10-05, juče, 上周五) lift that day's notes; "
    "`dates` in the response shows how each was read (phrase, from, to, label). "
    "If the response has disabled=true, memory is unavailable: tell the user instead of guessing."
)
GET_DESCRIPTION = (
    "Safe read of MEMORY.md or memory/*.md (the paths memory_search returns), optionally only `lines` lines "
    "starting at line `from` (1-based); use it after memory_search to pull just the lines you need and keep "
    "context small. A session citation (sessions/main/<id>.jsonl, from/lines in JSONL lines, when sessions "
    "are a source) returns those entries as readable text. Other paths (outside the workspace, not Markdown, "
    "symlinks) are refused with an error. A missing file returns empty text."
)
APPEND_DESCRIPTION = (
    "Write to memory: append Markdown text to today's daily note (memory/YYYY-MM-DD.md, today in the user's "
    "time zone; created with a date heading if missing), or to another memory/*.md file given as `file`. The "
    "write is atomic and the text is searchable at once. Use it for durable facts, decisions, preferences and "
    "todos worth remembering; keep entries short and dated context clear. Returns the path and the line range "
    "written."
)
REVIEW_DESCRIPTION = (
    "Read-only review of the memory: duplicates (the same fact in several places), conflicts (a fact that "
    "changed; the newer statement marked current), durable facts in daily notes worth promoting to "
    "MEMORY.md, and (budget) the sections to move out of a MEMORY.md/USER.md that OpenClaw cuts at a session's "
    "start, each with the memory/*.md note it would go to (`target`). Each finding has an id, its kind, the cited statements (path, startLine, endLine, text), why, a "
    "score (0-1: the measured precision of its kind of evidence) and a suggestion; the same JSON as "
    "`memdeck review --json`. Only confident findings (score 0.80 or more) unless `all` is true. `kind` limits "
    "it to one kind, "
    "`since` (YYYY-MM-DD) to findings with a statement from a note dated on/after that day. Nothing is changed: "
    "a person acts on a finding with `memdeck review apply ID --action ...` (undo: `memdeck review undo`)."
)
AUDIT_DESCRIPTION = (
    "Read-only audit of the session transcripts: per session (newest first), the durable statements the person "
    "made (preferences, standing instructions, plans, identity) that memory does not hold yet, each with its "
    "citation (sessions/<agent>/<id>.jsonl#Lx, readable with memory_get) and the day it was said, placed against "
    "the session's compactions (tokens before, flushed or not) and a one-line verdict; the same JSON as "
    "`memdeck audit --json`. `since` (YYYY-MM-DD) keeps sessions active on/after that day, `session` one "
    "session (its id or a prefix). Nothing is changed: a person recovers statements on the workbench's Audit "
    "screen."
)
RECALL_GUIDE = """\
You have a long-term memory kept as Markdown files: MEMORY.md (curated, durable facts) and daily notes in \
memory/YYYY-MM-DD.md. The person edits the same files, so they are the source of truth.

When to search memory (memory_search) — before you answer anything that depends on the past:
- prior work, decisions and the reasons for them;
- dates, deadlines, schedules, "when did we…";
- people, names, contacts, who owns what;
- the person's preferences, habits and conventions;
- open todos, promises, follow-ups.
Search even when you think you remember; search again with other words (names, dates, exact terms) if the \
first results look thin.

How to use what you find:
- memory_search returns line-ranged snippets with a citation (path#Lstart-Lend). Read more with \
memory_get(path, from, lines) rather than loading whole files.
- Quote or cite the source (e.g. "Source: memory/2026-01-12.md#L4-L9") when a fact comes from memory.
- If nothing relevant is found, say that you checked memory and found nothing; do not invent.
- If memory_search returns disabled=true, tell the person memory is unavailable and why (the error field).
{write_hint}"""
WRITE_HINT_ON = (
    "\nWriting: when something durable comes up (a decision, a preference, a date, a todo), save it with "
    "memory_append; it goes to today's daily note and is searchable at once.\n"
)
WRITE_HINT_OFF = "\nThis server is read-only: memory_append is disabled.\n"

QUOTA_PATTERN = re.compile(r"insufficient_quota|quota|429", re.IGNORECASE)


Corpus = Literal["memory", "sessions", "all", "wiki"]
"""OpenClaw's ``corpus`` values; memdeck has no wiki and says so."""
WIKI_UNSUPPORTED = "corpus 'wiki' is not supported by memdeck: it has memory, sessions or all"


class ToolArgumentError(ValueError):
    """A tool was called with a missing or malformed argument."""


@dataclass(frozen=True)
class ToolOutcome:
    """What a tool returns: the JSON payload, and whether the call failed."""

    payload: dict[str, Any]
    is_error: bool = False


@dataclass(frozen=True)
class MemoryResource:
    """One memory file offered as an MCP resource."""

    uri: str
    rel: str
    title: str
    size: int


@dataclass
class _Timings:
    """How the warm-up went and how many watcher syncs ran (mutable: the threads update it)."""

    warm_seconds: float | None = None
    warm_error: str | None = None
    syncs: int = 0
    last_sync_error: str | None = None


def unavailable_payload(error: str) -> dict[str, Any]:
    """OpenClaw's ``memory_search`` payload when search cannot run (never an exception)."""
    if QUOTA_PATTERN.search(error):
        warning = "Memory search is unavailable because the embedding provider quota is exhausted."
        action = "Top up or switch embedding provider, then retry memory_search."
    else:
        warning = "Memory search is unavailable: the memory index could not be opened, read or updated."
        action = "Run `memdeck status` to see what is wrong (or `memdeck index` to rebuild), then retry memory_search."
    return {"results": [], "disabled": True, "unavailable": True, "error": error, "warning": warning,
            "action": action}


def resource_uri(rel: str) -> str:
    """``memdeck://MEMORY.md``, ``memdeck://memory/2026-01-12.md``."""
    return RESOURCE_SCHEME + rel


# -- the tools' arguments: one model per tool is both the advertised schema and the checking -----
_INTEGER = re.compile(r"\s*-?\d+\s*")


def _lenient_int(value: object) -> object:
    """``"3"`` and ``3.0`` as 3 (clients send numbers as strings or floats); anything else as it came."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INTEGER.fullmatch(value):
        return int(value)
    return value


def _lenient_float(value: object) -> object:
    """``"0.5"`` and ``1`` as floats; anything else (``true`` too) as it came, for the strict check to refuse."""
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            return float(value)
    return value


def _nonblank(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("blank", "required")
    return value


@dataclass(frozen=True)
class _Clamped:
    """A number advertised as ``low``–``high`` whose values outside that range are clamped, not refused.

    An agent asking for 0 or 500 results gets 1 or the cap rather than an error it has to recover from.
    """

    low: int
    high: int

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(self._clamp, handler(source))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return {**handler(schema), "minimum": self.low, "maximum": self.high}

    def _clamp(self, value: Any) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            # NaN compares false with everything, so clamping would quietly make it the low end.
            raise PydanticCustomError("finite", "must be a finite number")
        return value if value is None else type(value)(min(self.high, max(self.low, value)))


class _ToolSchema(GenerateJsonSchema):
    """An argument model's JSON schema written as tool schemas are: no titles, and an optional argument shows
    only its type (null, read as "not given", is not advertised)."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def get_default_value(self, schema: core_schema.WithDefaultSchema) -> Any:
        default = super().get_default_value(schema)
        return NoDefault if default is None else default

    def generate(self, schema: CoreSchema, mode: JsonSchemaMode = "validation") -> JsonSchemaValue:
        out = super().generate(schema, mode)
        # The model's name and docstring describe Python code; the tool has its own title and description.
        out.pop("title", None)
        out.pop("description", None)
        return out


class ToolArguments(BaseModel):
    """A tool's arguments. The fields (names or aliases, types, descriptions, bounds) are the one definition
    that both the advertised ``inputSchema`` (:meth:`input_schema`) and the checking of a call (:meth:`parse`)
    come from."""

    # Strict types after the lenient conversions; an unknown argument is refused (as OpenClaw's tools do), so a
    # misspelt "maxResult" is reported rather than silently ignored.
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    @classmethod
    def input_schema(cls) -> dict[str, Any]:
        """The JSON schema clients are shown."""
        return cls.model_json_schema(schema_generator=_ToolSchema)

    @classmethod
    def argument_names(cls) -> list[str]:
        """The argument names as clients write them."""
        return [field.alias or name for name, field in cls.model_fields.items()]

    @classmethod
    def parse(cls, arguments: Mapping[str, Any]) -> Self:
        """The checked, converted arguments of a call.

        Raises:
            ToolArgumentError: an argument is missing, unknown or of the wrong type; the message names each.
        """
        try:
            return cls.model_validate(arguments)
        except ValidationError as exc:
            raise ToolArgumentError("; ".join(cls._explain(e) for e in exc.errors(include_url=False))) from None

    @classmethod
    def _explain(cls, error: ErrorDetails) -> str:
        name = ".".join(str(part) for part in error["loc"]) or "arguments"
        kind, value = error["type"], error.get("input")
        if kind == "extra_forbidden":
            return f"unknown argument {name!r} (the arguments are {', '.join(cls.argument_names())})"
        if kind in ("missing", "blank") or value is None:
            return f"{name} required"
        if kind == "string_type":
            return f"{name} must be a string, not {type(value).__name__}"
        if kind in ("too_long", "string_too_long"):
            return f"{name} too long ({len(value)} characters; at most {error.get('ctx', {}).get('max_length')})"
        if kind.startswith("int_"):
            return f"{name} must be an integer, not {value!r}"
        if kind.startswith("float_"):
            return f"{name} must be a number, not {value!r}"
        if kind == "finite":
            return f"{name} must be a finite number, not {value!r}"
        if kind.startswith("bool_"):
            return f"{name} must be true or false, not {value!r}"
        if kind == "literal_error":
            return f"{name} must be {error.get('ctx', {}).get('expected')}, not {value!r}"
        return f"{name}: {error['msg']}"


class SearchArguments(ToolArguments):
    """memory_search's arguments."""

    query: Annotated[str, AfterValidator(_nonblank), Field(
        max_length=MAX_QUERY_CHARS,
        description="What to recall, in plain words (names, dates, topics); no query syntax needed.")]
    max_results: Annotated[int | None, BeforeValidator(_lenient_int), _Clamped(1, MAX_RESULTS_CAP), Field(
        alias="maxResults", description="Most results to return (default 6).")] = None
    min_score: Annotated[float | None, BeforeValidator(_lenient_float), _Clamped(0, 1), Field(
        alias="minScore", description=f"Drop results whose score (as returned) is below this (0-1, default "
                                f"{SearchConfig().min_score:g} unless the user's config sets another).")] = None
    corpus: Annotated[Corpus | None, Field(
        description="memory (MEMORY.md and memory/*.md), sessions (session transcripts) or all (default); "
                    "wiki is not supported.")] = None


class GetArguments(ToolArguments):
    """memory_get's arguments (``from`` is an alias: it cannot be a Python name)."""

    path: Annotated[str, Field(
        description="A memory file: MEMORY.md or memory/….md, as memory_search returns it; a citation "
                    "(memory/….md#L4-L9) reads its lines.")]
    # The minimum is the engine's rule (check_line_range), the same for `memdeck get`: 0 or less is refused there.
    from_line: Annotated[int | None, BeforeValidator(_lenient_int), Field(
        alias="from", json_schema_extra={"minimum": 1}, description="First line to read (1-based).")] = None
    lines: Annotated[int | None, BeforeValidator(_lenient_int), Field(
        json_schema_extra={"minimum": 1}, description="How many lines to read.")] = None
    corpus: Annotated[Corpus | None, Field(
        description="memory or sessions: what the path must be (default: either, by the path); wiki is not "
                    "supported.")] = None


class AppendArguments(ToolArguments):
    """memory_append's arguments."""

    text: Annotated[str, AfterValidator(_nonblank), Field(
        max_length=MAX_APPEND_CHARS, description="Markdown to append (a bullet or a short section).")]
    file: Annotated[str | None, Field(
        description="A memory/*.md file; default today's daily note memory/YYYY-MM-DD.md.")] = None


class ReviewArguments(ToolArguments):
    """memory_review's arguments."""

    kind: Annotated[Literal["duplicate", "conflict", "promote", "budget"] | None, Field(
        description="Only this kind of finding: duplicate, conflict, promote or budget (a section to move out "
                    "of a MEMORY.md/USER.md OpenClaw cuts at a session's start; default: every kind).")] = None
    since: Annotated[str | None, Field(
        max_length=10, description="YYYY-MM-DD: only findings with a statement from a note dated on/after "
                                   "this day.")] = None
    all: Annotated[bool, Field(
        description="Every finding, also the less sure ones (score under 0.80); default: only confident "
                    "findings, the others counted in stats.hidden.")] = False


class AuditArguments(ToolArguments):
    """memory_audit's arguments."""

    since: Annotated[str | None, Field(
        max_length=10, description="YYYY-MM-DD: only sessions active on/after this day.")] = None
    session: Annotated[str | None, Field(
        max_length=64, description="Only this session: its id or a prefix of it.")] = None


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool as clients are shown it; its input schema comes from ``arguments``."""

    name: str
    title: str
    description: str
    arguments: type[ToolArguments]
    read_only: bool = True


TOOLS = (
    ToolSpec("memory_search", "Search memory", SEARCH_DESCRIPTION, SearchArguments),
    ToolSpec("memory_get", "Read memory lines", GET_DESCRIPTION, GetArguments),
    ToolSpec("memory_append", "Append to memory", APPEND_DESCRIPTION, AppendArguments, read_only=False),
    ToolSpec("memory_review", "Review memory", REVIEW_DESCRIPTION, ReviewArguments),
    ToolSpec("memory_audit", "Audit sessions", AUDIT_DESCRIPTION, AuditArguments),
)


class MemoryService:
    """The memory behind the MCP tools: one engine, its model warmed and its index kept fresh in threads.

    The tool methods are synchronous (the server runs them in worker threads) and never raise: each returns
    a :class:`ToolOutcome` whose payload is what the agent reads.
    """

    def __init__(self, config: Config, allow_write: bool = False,
                 log: Callable[[str], None] | None = None, warm_wait: float = WARM_WAIT_SECONDS) -> None:
        self.config = config
        self.allow_write = allow_write
        self._log = log or (lambda message: None)
        self._engine: Any = None
        self._engine_lock = threading.Lock()
        self._append_lock = threading.Lock()
        self._stop = threading.Event()
        self.warm_wait = warm_wait
        # Set while no warm-up runs. Searches wait for a running warm-up, but only until warm_wait seconds
        # after the start: then they answer from the keyword index rather than risk the client's timeout.
        self._warm_deadline = time.monotonic() + warm_wait
        self.ready = threading.Event()
        self.ready.set()
        self.watching = threading.Event()
        self._synced = threading.Condition()
        self.timings = _Timings()
        self._threads: list[threading.Thread] = []

    # -- the engine --------------------------------------------------------------------------
    def engine(self) -> Any:
        """The engine, opened on first use (retried on the next call if opening failed).

        Raises:
            MemdeckError, OSError: the index cannot be opened.
        """
        with self._engine_lock:
            if self._engine is None:
                from engine.api import MemoryEngine

                self._engine = MemoryEngine(self.config)
            return self._engine

    def start(self, warm: bool = True, watch: bool = True) -> None:
        """Start the background threads: warm the model and index, and sync on file changes."""
        if warm:
            self._warm_deadline = time.monotonic() + self.warm_wait
            self.ready.clear()
            self._spawn(self._warm, "memdeck-warm")
        if watch:
            self._spawn(self._watch, "memdeck-watch")

    def _spawn(self, target: Callable[[], None], name: str) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)
        self._threads.append(thread)
        thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the watcher and close the engine (the warm-up thread is a daemon and may still be loading)."""
        self._stop.set()
        busy = False
        for thread in self._threads:
            thread.join(timeout)
            busy = busy or thread.is_alive()
        with self._engine_lock:
            if self._engine is not None and not busy:
                self._engine.close()
                self._engine = None

    def _warm(self) -> None:
        """Sync the words (FTS), load the model and run one search, so the agent's first search is as fast as the
        rest; the embedding runs after, in the background (searches meanwhile say ``notEmbedded``)."""
        started = time.monotonic()
        try:
            eng = self.engine()
            change = eng.model_change()
            if change:  # the agent's searches answer by keyword meanwhile; the log says why this start is slow
                self._log(change)
            try:
                eng.sync(embed=False)
            except IndexBusy as exc:
                self._log(f"initial sync skipped: {exc}")
            eng.load_model()
            eng.search("memory warm-up", max_results=1)
            self.timings.warm_seconds = time.monotonic() - started
            self._log(f"ready in {self.timings.warm_seconds:.1f} s (vector search: {eng.vector_state})")
        except Exception as exc:  # a failed warm-up leaves search to report the problem
            self.timings.warm_error = f"{type(exc).__name__}: {exc}"
            self._log(f"warm-up failed: {self.timings.warm_error}")
            return
        finally:
            self.ready.set()
        self._embed_rest(eng)

    def _embed_rest(self, eng: Any) -> None:
        """Embed what the warm-up left (the memory files first, sessions last), stopping when the server stops."""
        if not eng.pending_embeddings():
            return
        try:
            report = eng.sync(cancel=self._stop)
            self._log(f"embedded {report.embedded:,} texts in the background ({report.seconds:.1f} s)")
        except Exception as exc:  # searches keep answering (keyword for what has no vectors) and say so
            self._log(f"background embedding stopped: {type(exc).__name__}: {exc}")

    # -- watching ----------------------------------------------------------------------------
    def is_watched(self, path: str, plan: WatchPlan | None = None) -> bool:
        """Whether a change to ``path`` can change the index (the engine's watch rule; ``plan``: the watcher's)."""
        from engine.api import affects_index

        return affects_index(path, self.config, plan)

    def _watch(self) -> None:
        from engine.api import watch_changes, watch_plan

        plan = watch_plan(self.config)
        if not plan.recursive and not plan.flat:
            self._log(f"not watching: workspace missing ({self.config.workspace})")
            return
        try:
            for changes in watch_changes(self.config, self._stop):
                self.watching.set()
                # The plan of the moment (folder links may have come or gone): one listing per batch of changes.
                current = watch_plan(self.config) if changes else plan
                if any(self.is_watched(str(path), current) for path in changes):
                    self._sync_after_change()
        except Exception as exc:  # the watcher is a convenience: searches still sync stale files
            self._log(f"file watcher stopped: {type(exc).__name__}: {exc}")

    def _sync_after_change(self) -> None:
        try:
            eng = self.engine()
            eng.sync(embed=eng.embedder is not None and eng.embedder.loaded)
            self.timings.last_sync_error = None
        except Exception as exc:  # the next search retries the sync and reports what fails
            self.timings.last_sync_error = f"{type(exc).__name__}: {exc}"
            self._log(f"sync after a change failed: {self.timings.last_sync_error}")
        with self._synced:
            self.timings.syncs += 1
            self._synced.notify_all()

    def wait_for_sync(self, after: int, timeout: float) -> bool:
        """Wait until more than ``after`` watcher syncs have run; False on timeout."""
        with self._synced:
            return self._synced.wait_for(lambda: self.timings.syncs > after, timeout)

    # -- tools -------------------------------------------------------------------------------
    def search(self, arguments: dict[str, Any]) -> ToolOutcome:
        """memory_search: OpenClaw's result shape plus score parts; the unavailable payload on failure."""
        try:
            args = SearchArguments.parse(arguments)
        except ToolArgumentError as exc:
            return ToolOutcome({"results": [], "error": str(exc)}, is_error=True)
        query, max_results, min_score, corpus = args.query, args.max_results, args.min_score, args.corpus
        if corpus == "wiki":
            return ToolOutcome({"results": [], "error": WIKI_UNSUPPORTED}, is_error=True)
        warmed = self.ready.wait(max(0.0, self._warm_deadline - time.monotonic()))
        try:
            if warmed:
                resp = self.engine().search(query, max_results=max_results, min_score=min_score, corpus=corpus)
            else:
                # Still building the index or loading the model: answer now from what is indexed.
                resp = self.engine().search(query, mode="keyword", max_results=max_results,
                                            min_score=min_score, ensure_fresh=False, allow_model_load=False,
                                            corpus=corpus)
                resp = replace(resp, warnings=(*resp.warnings, "memory is still being indexed (the model is "
                                               "loading); showing keyword results from what is indexed so far"))
        except Exception as exc:  # the tool never throws: the agent gets a payload it can report
            return ToolOutcome(unavailable_payload(_describe(exc)))
        return ToolOutcome(resp.to_json())

    def get(self, arguments: dict[str, Any]) -> ToolOutcome:
        """memory_get: ``{"path", "text"}``; ``{"path", "text": "", "disabled": true, "error"}`` when refused."""
        raw = arguments.get("path")
        given = raw if isinstance(raw, str) else ""
        try:
            args = GetArguments.parse(arguments)
            _check_get_corpus(args)
            result = self.engine().get(args.path, args.from_line, args.lines).to_json()
        except (ToolArgumentError, PathRefused, LineRangeRefused) as exc:
            return ToolOutcome({"path": given, "text": "", "disabled": True, "error": str(exc)}, is_error=True)
        except Exception as exc:  # the tool never throws
            message = f"cannot read {given!r}: {_describe(exc)}"
            return ToolOutcome({"path": given, "text": "", "disabled": True, "error": message}, is_error=True)
        return ToolOutcome(dict(result))

    def review(self, arguments: dict[str, Any]) -> ToolOutcome:
        """memory_review: the engine's review as ``memdeck review --json`` gives it (read-only)."""
        from datetime import date

        try:
            args = ReviewArguments.parse(arguments)
            try:
                since = date.fromisoformat(args.since.strip()) if args.since and args.since.strip() else None
            except ValueError:
                raise ToolArgumentError(f"since must be a date YYYY-MM-DD, not {args.since!r}") from None
        except ToolArgumentError as exc:
            return ToolOutcome({"findings": [], "error": str(exc)}, is_error=True)
        try:
            report = self.engine().review(kind=args.kind, since=since, show_all=args.all)
        except Exception as exc:  # the tool never throws
            return ToolOutcome({"findings": [], "error": f"review failed: {_describe(exc)}"}, is_error=True)
        return ToolOutcome(report.to_json())

    def audit(self, arguments: dict[str, Any]) -> ToolOutcome:
        """memory_audit: the engine's audit as ``memdeck audit --json`` gives it (read-only)."""
        from datetime import date

        try:
            args = AuditArguments.parse(arguments)
            try:
                since = date.fromisoformat(args.since.strip()) if args.since and args.since.strip() else None
            except ValueError:
                raise ToolArgumentError(f"since must be a date YYYY-MM-DD, not {args.since!r}") from None
        except ToolArgumentError as exc:
            return ToolOutcome({"sessions": [], "error": str(exc)}, is_error=True)
        session = args.session.strip() if args.session and args.session.strip() else None
        try:
            report = self.engine().audit(since=since, session=session)
        except Exception as exc:  # the tool never throws
            return ToolOutcome({"sessions": [], "error": f"audit failed: {_describe(exc)}"}, is_error=True)
        return ToolOutcome(report.to_json())

    def append(self, arguments: dict[str, Any]) -> ToolOutcome:
        """memory_append: atomically append to today's daily note (or a memory/*.md file), then index it."""
        if not self.allow_write:
            return ToolOutcome({"error": "memory_append is disabled: this memdeck server is read-only. "
                                         "Start it with `memdeck mcp --allow-write` to let agents write memory."},
                               is_error=True)
        try:
            args = AppendArguments.parse(arguments)
            text, file = args.text, args.file
            from engine.api import MemoryFiles, daily_rel

            memory = MemoryFiles(self.config)  # the engine's appends; writing needs no index
            # Today is the engine's clock's ([memory] timezone, MEMDECK_TODAY), as for every door's writes.
            target = file if file is not None and file.strip() else daily_rel(memory.today())
            rel, _absolute = memory.resolve(target)
            if not rel.startswith("memory/"):
                raise PathRefused(f"path refused: memory_append writes only memory/*.md files, not {target!r}")
        except (ToolArgumentError, PathRefused, MemdeckError) as exc:  # MemdeckError: a clock variable is no date
            return ToolOutcome({"error": str(exc)}, is_error=True)
        except OSError as exc:  # the tool never throws: a folder on the way that cannot be looked at
            return ToolOutcome({"error": f"cannot write {arguments.get('file')!r}: {_describe(exc)}"}, is_error=True)
        try:
            with self._append_lock:
                # A new daily note gets the same first line the TUI and `memdeck flush` give it.
                written = memory.append_note(rel, text)
        except (OSError, MemdeckError) as exc:
            return ToolOutcome({"error": f"cannot write {rel}: {_describe(exc)}"}, is_error=True)
        payload: dict[str, Any] = {"path": written.rel, "startLine": written.start_line, "endLine": written.end_line,
                                   "citation": written.citation, "created": written.created, "indexed": True}
        if not self.ready.is_set():
            # The start-up sync holds the index; waiting for it could outlast the client's timeout. The watcher
            # (and any later search) picks the change up as soon as it is done.
            payload["indexed"] = False
            payload["warning"] = "saved; memory is still being indexed at start-up, so this becomes searchable " \
                                 "as soon as that finishes"
            return ToolOutcome(payload)
        try:
            self.engine().reindex_file(rel)
        except Exception as exc:  # the text is saved; the next search or watcher sync indexes it
            payload["indexed"] = False
            payload["warning"] = f"saved, but not indexed yet: {_describe(exc)}"
        return ToolOutcome(payload)

    # -- resources ---------------------------------------------------------------------------
    def resources(self) -> list[MemoryResource]:
        """MEMORY.md first, then the daily notes newest first, then the other memory/ files."""
        scan = scan_memory_files(self.config)
        root: list[MemoryResource] = []
        daily: list[MemoryResource] = []
        other: list[MemoryResource] = []
        for f in scan.files:
            if f.rel in ROOT_MEMORY_FILES:
                root.append(MemoryResource(resource_uri(f.rel), f.rel, f"{f.rel} (long-term memory)", f.size))
            elif DAILY_NOTE.match(f.rel):
                daily.append(MemoryResource(resource_uri(f.rel), f.rel,
                                            f"Daily note {PurePosixPath(f.rel).stem}", f.size))
            elif f.rel.startswith("memory/"):
                other.append(MemoryResource(resource_uri(f.rel), f.rel, f.rel, f.size))
        daily.sort(key=lambda r: r.rel, reverse=True)
        return root + daily + other

    def read_resource(self, uri: str) -> tuple[str, str]:
        """``(rel, text)`` of a ``memdeck://<path>`` resource.

        Raises:
            PathRefused: not a memdeck URI, or not a memory file.
            OSError: the file cannot be read.
        """
        if not uri.startswith(RESOURCE_SCHEME):
            raise PathRefused(f"unknown resource {uri!r}: memdeck resources look like memdeck://MEMORY.md")
        from engine.citation import parse_citation

        # A citation as memdeck prints it (memdeck://memory/x.md#L4-L9, :4) reads its lines, as memory_get does.
        cited = parse_citation(uri[len(RESOURCE_SCHEME):])
        rel, absolute = resolve_memory_path(self.config, cited.path)
        if not absolute.is_file():
            raise FileNotFoundError(f"no such memory file: {rel}")
        if cited.from_line or cited.lines:
            return rel, read_memory_slice(self.config, rel, cited.from_line, cited.lines).text
        return rel, read_text_file(absolute).text

    def recall_guide(self) -> str:
        """The prompt that tells an agent when to search memory (and, with writes on, when to write it)."""
        return RECALL_GUIDE.format(write_hint=WRITE_HINT_ON if self.allow_write else WRITE_HINT_OFF)


def _check_get_corpus(args: GetArguments) -> None:
    """memory_get's ``corpus``: the path must be of that corpus (wiki is not memdeck's).

    Raises:
        ToolArgumentError: ``corpus`` is wiki.
        PathRefused: the path is of the other corpus.
    """
    if args.corpus is None or args.corpus == "all":
        return
    if args.corpus == "wiki":
        raise ToolArgumentError(WIKI_UNSUPPORTED)
    from engine.api import is_session_path

    session = is_session_path(args.path)
    if args.corpus == "memory" and session:
        raise PathRefused(f"path refused: {args.path.strip()!r} is a session transcript, not a memory file "
                          "(use corpus sessions or all)")
    if args.corpus == "sessions" and not session:
        raise PathRefused(f"path refused: {args.path.strip()!r} is not a session transcript (sessions/…jsonl; "
                          "use corpus memory or all)")


def _describe(exc: BaseException) -> str:
    if isinstance(exc, MemdeckError):
        return str(exc)
    if isinstance(exc, OSError):
        return f"{type(exc).__name__}: {exc.strerror or exc}"
    return f"{type(exc).__name__}: {exc}"


# -- the MCP protocol layer ------------------------------------------------------------------
def tool_definitions(allow_write: bool) -> list[dict[str, Any]]:
    """The tools as plain data: name, description, JSON input schema (from the argument model), read-only flag."""
    return [
        {"name": t.name, "title": t.title, "description": t.description, "read_only": t.read_only,
         "input_schema": t.arguments.input_schema()}
        for t in TOOLS
        if t.read_only or allow_write
    ]


def build_server(service: MemoryService) -> Any:
    """The low-level MCP ``Server`` with memdeck's tools, resources and prompt.

    The low-level server is used (not ``MCPServer``) so the tool schemas match OpenClaw's exactly,
    including memory_get's ``from`` argument, which cannot be a Python parameter name.
    """
    import anyio.to_thread
    import mcp_types as types
    from mcp.server import Server
    from mcp.shared.exceptions import MCPError

    definitions = tool_definitions(service.allow_write)
    handlers: dict[str, Callable[[dict[str, Any]], ToolOutcome]] = {
        "memory_search": service.search, "memory_get": service.get, "memory_append": service.append,
        "memory_review": service.review, "memory_audit": service.audit,
    }
    tools = [
        types.Tool(
            name=d["name"], title=d["title"], description=d["description"], input_schema=d["input_schema"],
            annotations=types.ToolAnnotations(title=d["title"], read_only_hint=d["read_only"],
                                              destructive_hint=False, idempotent_hint=d["read_only"],
                                              open_world_hint=False),
        )
        for d in definitions
    ]

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> Any:
        handler = handlers.get(params.name)
        if handler is None:
            outcome = ToolOutcome({"error": f"unknown tool {params.name!r} (memdeck has: "
                                            f"{', '.join(d['name'] for d in definitions)})"}, is_error=True)
        else:
            outcome = await anyio.to_thread.run_sync(handler, scrub_json(dict(params.arguments or {})))
        # Out, too: a session transcript's JSON can hold a lone surrogate, which no transport can encode.
        payload = scrub_json(outcome.payload)
        text = json.dumps(payload, ensure_ascii=False, indent=2)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    structured_content=payload, is_error=outcome.is_error)

    async def list_resources(ctx: Any, params: Any) -> Any:
        found = await anyio.to_thread.run_sync(service.resources)
        return types.ListResourcesResult(resources=[
            types.Resource(uri=r.uri, name=r.rel, title=r.title, mime_type="text/markdown", size=r.size,
                           description="Long-term memory (curated facts)" if r.rel in ROOT_MEMORY_FILES
                           else "Memory notes")
            for r in found
        ])

    async def list_templates(ctx: Any, params: Any) -> Any:
        return types.ListResourceTemplatesResult(resource_templates=[
            types.ResourceTemplate(uri_template=RESOURCE_SCHEME + "memory/{date}.md", name="daily-note",
                                   title="Daily note by date",
                                   description="A daily note, by local date (YYYY-MM-DD).",
                                   mime_type="text/markdown"),
        ])

    async def read_resource(ctx: Any, params: Any) -> Any:
        uri = str(params.uri)
        try:
            _rel, text = await anyio.to_thread.run_sync(service.read_resource, uri)
        except PathRefused as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from exc
        except FileNotFoundError as exc:  # MCP's own code for it, so a client can tell "gone" from "refused"
            raise MCPError(code=RESOURCE_NOT_FOUND, message=str(exc), data={"uri": uri}) from exc
        except OSError as exc:
            raise MCPError(code=types.INTERNAL_ERROR, message=f"cannot read {uri}: {_describe(exc)}") from exc
        return types.ReadResourceResult(contents=[
            types.TextResourceContents(uri=uri, mime_type="text/markdown", text=text)])

    recall = types.Prompt(
        name="memory_recall", title="When to search memory",
        description="How and when to use memdeck's memory tools: search before answering about the past.",
        arguments=[types.PromptArgument(name="question", required=False,
                                        description="The question about to be answered (optional).")],
    )

    async def list_prompts(ctx: Any, params: Any) -> Any:
        return types.ListPromptsResult(prompts=[recall])

    async def get_prompt(ctx: Any, params: Any) -> Any:
        if params.name != recall.name:
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown prompt {params.name!r}")
        text = service.recall_guide()
        question = (params.arguments or {}).get("question")
        if question:
            text += f"\nThe question to answer now: {question}\nStart with memory_search.\n"
        return types.GetPromptResult(description=recall.description, messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))])

    server = Server(
        SERVER_NAME,
        version=_version(),
        title="memdeck memory",
        instructions=service.recall_guide(),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )
    server.middleware.append(_explain_refusals)
    return server


_SDK_REFUSAL = "Invalid request parameters"
"""What the SDK answers, with no detail, to params it cannot validate and to a request before ``initialize``."""


async def _explain_refusals(ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
    """Server middleware: the SDK's bare "Invalid request parameters" said in full — which params are wrong and
    how (without echoing their values), or that ``initialize`` must come first."""
    from mcp.shared.exceptions import MCPError

    try:
        return await call_next(ctx)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(part) for part in e['loc']) or 'params'}: {e['msg']}"
                             for e in exc.errors(include_url=False, include_input=False)[:3])
        raise MCPError(code=INVALID_PARAMS, message=f"invalid params for {ctx.method}: {problems}") from None
    except MCPError as exc:
        if exc.error.message == _SDK_REFUSAL and not exc.error.data:  # the SDK's gate before the handshake
            raise MCPError(code=INVALID_PARAMS, message=f"not initialized: send initialize (then "
                                                        f"notifications/initialized) before {ctx.method}") from None
        raise


# -- the wire: every message gets an answer, nothing malformed reaches the SDK -------------------
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
UNAUTHORIZED = -32001
RESOURCE_NOT_FOUND = -32002
"""MCP's code for a resource that does not exist (resources/read)."""
MAX_IN_FLIGHT = 32
"""Requests read from stdio and not yet answered, at most: a client that stops reading its stdout stops the server
reading its stdin (the pipe pushes back), instead of answers piling up in memory."""
# The id of a message too large to parse, read from its first bytes: clients write "jsonrpc" and "id" first.
_HEAD_ID = re.compile(rb'\A\s*\{\s*(?:"jsonrpc"\s*:\s*"[^"\\]*"\s*,\s*)?"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,256}")')


@dataclass(frozen=True)
class Screened:
    """What becomes of one incoming JSON-RPC message: the text to hand the SDK, or the errors to answer with."""

    text: str | None
    errors: tuple[dict[str, Any], ...] = ()
    request_id: str | int | None = None
    """The id of a request handed on (it will be answered), None for anything else."""
    cancels: str | int | None = None
    """The request a ``notifications/cancelled`` handed on cancels (the SDK never answers a cancelled request)."""


def _error_reply(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _reply_id(message: Mapping[str, Any]) -> str | int | None:
    """The id an error for ``message`` goes back with: its own when it is one JSON-RPC allows, else null."""
    value = message.get("id")
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)  # 7.0 is the number 7 to most clients
    return None


def _is_notification(message: Mapping[str, Any]) -> bool:
    """A notification (no id, a method name): never answered, even when its params are wrong (JSON-RPC: "The
    Server MUST NOT reply to a Notification"); the client waits for nothing, and a stray error with id null
    would only confuse it."""
    return "id" not in message and isinstance(message.get("method"), str)


def _refuse_constant(name: str) -> Any:
    # Python's json reads NaN, Infinity and -Infinity; JSON has no such values, and a NaN minScore would be
    # compared as if it were a number.
    raise ValueError(f"{name} is not a JSON value")


def _is_response(message: Mapping[str, Any]) -> bool:
    """A response (to a request of the server's): never answered, even when malformed, or its id could be
    taken for the answer to one of the client's own requests."""
    return "method" not in message and ("result" in message or "error" in message)


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _problem(message: Mapping[str, Any]) -> str:
    """What is wrong with a message the SDK refused, in one phrase."""
    if message.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    if "method" not in message:
        return "method required"
    if not isinstance(message["method"], str):
        return f"method must be a string, not {_json_kind(message['method'])}"
    if "params" in message and not isinstance(message["params"], dict | None):
        return f"params must be an object, not {_json_kind(message['params'])}"
    if "id" in message and _reply_id(message) is None:
        return f"id must be a string or an integer, not {_json_kind(message['id'])}"
    return "not a valid JSON-RPC 2.0 request"


def _head_id(data: bytes) -> str | int | None:
    match = _HEAD_ID.match(data[:512].removeprefix(b"\xef\xbb\xbf"))
    if not match:
        return None
    found = json.loads(match.group(1))
    return found if isinstance(found, str | int) else None


def _constant_ids(text: str) -> list[str | int | None] | None:
    """The ids of the requests a line holds that is JSON but for NaN/Infinity (None: it is not, or holds none)."""
    try:
        value = scrub_json(json.loads(text))
    except (ValueError, RecursionError):
        return None
    messages = value if isinstance(value, list) else [value]
    ids = [_reply_id(m) for m in messages if isinstance(m, dict) and not _is_response(m)]
    return [i for i in ids if i is not None] or None


def screen_message(data: bytes, size: int | None = None) -> Screened:
    """Check one incoming message (a stdio line) before the SDK sees it.

    The SDK drops what it cannot parse or validate without a word, so a client would wait forever for the
    answer; here every such message gets a JSON-RPC error instead: a parse error (id null), an invalid request
    (with the message's id when it has a usable one), a message too large. Lone surrogates are replaced by
    U+FFFD. A message that passes is handed on re-encoded, so the SDK reads exactly what was checked.

    Args:
        data: the message's bytes (for one too large to read, only its first bytes).
        size: its full size in bytes, when ``data`` is only its start.
    """
    size = len(data) if size is None else size
    if size > MAX_MESSAGE_BYTES:
        return Screened(None, (_error_reply(_head_id(data), INVALID_REQUEST,
                                            f"message too large ({plural(size, 'byte', grouped=True)}; at most {MAX_MESSAGE_BYTES:,})"),))
    # Invalid UTF-8 becomes U+FFFD; a byte order mark before the message is ignored (RFC 8259 allows it), so a
    # client that writes one still gets its initialize answered.
    text = data.decode("utf-8", "replace").removeprefix("\ufeff")
    if not text.strip():
        return Screened(None)  # a blank line is no message
    try:
        value = scrub_json(json.loads(text, parse_constant=_refuse_constant))
    except (ValueError, RecursionError) as exc:
        # Answered with the id its first bytes show, if any (as for a message too large): a client waits for it;
        # JSON but for NaN/Infinity: each message it holds is answered by its own id (a batch's too).
        ids = _constant_ids(text) if "is not a JSON value" in str(exc) else None
        return Screened(None, tuple(_error_reply(i, PARSE_ERROR, f"parse error: {exc}")
                                    for i in (ids or [_head_id(data)])))
    if isinstance(value, list):
        # MCP has had no batches since 2025-06-18 (neither has the SDK): each request is refused, by its id.
        refusal = "batches are not supported: send each JSON-RPC message on its own line"
        errors = tuple(_error_reply(_reply_id(m), INVALID_REQUEST, refusal)
                       for m in value if isinstance(m, dict) and not _is_response(m) and _reply_id(m) is not None)
        return Screened(None, errors or (_error_reply(None, INVALID_REQUEST, refusal),))
    if not isinstance(value, dict):
        return Screened(None, (_error_reply(None, INVALID_REQUEST,
                                            f"invalid request: a JSON-RPC message is an object, not "
                                            f"{_json_kind(value)}"),))
    import mcp_types as types
    from pydantic import ValidationError

    encoded = json.dumps(value, ensure_ascii=False)
    try:
        message = types.jsonrpc_message_adapter.validate_json(encoded, by_name=False)
    except (ValidationError, RecursionError):
        if _is_response(value) or _is_notification(value):
            return Screened(None)
        return Screened(None, (_error_reply(_reply_id(value), INVALID_REQUEST, f"invalid request: {_problem(value)}"),))
    if "id" in value and isinstance(message, types.JSONRPCNotification):
        # An id the SDK does not accept (1.5, true, null) makes the message a notification, never answered.
        return Screened(None, (_error_reply(_reply_id(value), INVALID_REQUEST,
                                            f"invalid request: id must be a string or an integer, not "
                                            f"{_json_kind(value['id'])}"),))
    if isinstance(message, types.JSONRPCRequest):
        return Screened(encoded, request_id=message.id)
    if isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
        cancelled = (message.params or {}).get("requestId")
        if isinstance(cancelled, str | int) and not isinstance(cancelled, bool):
            return Screened(encoded, cancels=cancelled)
    return Screened(encoded)


async def _bounded_lines(readline: Callable[[int], Awaitable[bytes]]) -> AsyncIterator[tuple[bytes, int]]:
    """``(line, size)`` for each line ``readline`` gives; a line over :data:`MAX_MESSAGE_BYTES` comes as its first
    bytes and its full size, the rest skipped unread into memory (the SDK would read any length)."""
    while True:
        line = await readline(MAX_MESSAGE_BYTES + 1)
        if not line:
            return
        if len(line) <= MAX_MESSAGE_BYTES or line.endswith(b"\n"):
            yield line, len(line.rstrip(b"\r\n"))
            continue
        head, size = line[:512], len(line)
        del line
        while True:
            rest = await readline(64 * 1024)
            size += len(rest.rstrip(b"\r\n"))
            if not rest or rest.endswith(b"\n"):
                break
        yield head, size


class _InFlight:
    """The requests handed to the SDK and not yet answered, by id; :meth:`room` waits while there are
    :data:`MAX_IN_FLIGHT` of them (the server's answers wait on a client that does not read them)."""

    def __init__(self, limit: int = MAX_IN_FLIGHT) -> None:
        self.limit = limit
        self.count = 0
        self.full = threading.Event()
        """Set while :meth:`room` waits (tests watch it from another thread)."""
        self._open: dict[tuple[bool, str | int], int] = {}
        self._freed: Any = None

    @staticmethod
    def _key(request_id: str | int) -> tuple[bool, str | int]:
        return isinstance(request_id, str), request_id  # "1" and 1 are two ids

    def opened(self, request_id: str | int) -> None:
        """A request with this id was handed on."""
        key = self._key(request_id)
        self._open[key] = self._open.get(key, 0) + 1
        self.count += 1

    def closed(self, request_id: Any) -> None:
        """This id was answered (or cancelled: never answered); an id not open (answered already) is ignored."""
        if not isinstance(request_id, str | int):
            return
        key = self._key(request_id)
        left = self._open.get(key, 0)
        if not left:
            return
        if left == 1:
            del self._open[key]
        else:
            self._open[key] = left - 1
        self.count -= 1
        if self._freed is not None:
            self._freed.set()

    async def room(self) -> None:
        """Wait until fewer than :attr:`limit` requests are open."""
        import anyio

        while self.count >= self.limit:
            self._freed = anyio.Event()
            self.full.set()
            await self._freed.wait()
        self.full.clear()


class _AnswerCounter:
    """The SDK's write stream, counting the answers it sends into :class:`_InFlight` (a ``WriteStream``)."""

    def __init__(self, stream: Any, in_flight: _InFlight) -> None:
        self._stream = stream
        self._in_flight = in_flight

    async def send(self, item: Any) -> None:
        import mcp_types as types

        await self._stream.send(item)  # returns once the stdout writer took it: the stream holds none
        message = getattr(item, "message", None)
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self._in_flight.closed(message.id)

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> Self:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        result: bool | None = await self._stream.__aexit__(*exc)
        return result


class _ScreenedStdin:
    """The lines the SDK's stdio transport reads, each screened first (:func:`screen_message`); the errors for
    refused ones are written straight to the transport's write stream, in order with the rest. At most
    :data:`MAX_IN_FLIGHT` requests are handed on unanswered: then reading waits for answers to be written."""

    def __init__(self, lines: AsyncIterator[tuple[bytes, int]], in_flight: _InFlight | None = None) -> None:
        import anyio

        self._lines = lines
        self._write: Any = None
        self._attached = anyio.Event()
        self.in_flight = in_flight or _InFlight()

    def attach(self, write_stream: Any) -> None:
        """Where errors go (the transport's write stream exists only once the transport runs)."""
        self._write = write_stream
        self._attached.set()

    async def __aiter__(self) -> AsyncIterator[str]:
        import anyio
        import mcp_types as types
        from mcp.shared.message import SessionMessage

        async for data, size in self._lines:
            screened = screen_message(data, size)
            for reply in screened.errors:
                try:
                    error = types.JSONRPCError.model_validate(reply)
                except ValueError:  # an id the SDK's model refuses: answer with null, as JSON-RPC says
                    error = types.JSONRPCError.model_validate({**reply, "id": None})
                await self._attached.wait()
                try:
                    await self._write.send(SessionMessage(error))
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return  # the server is shutting down
            if screened.text is None:
                continue
            if screened.request_id is not None:
                await self.in_flight.room()
                self.in_flight.opened(screened.request_id)
            elif screened.cancels is not None:
                self.in_flight.closed(screened.cancels)
            yield screened.text


# -- HTTP: a bearer token, a size limit, the same scrubbing ------------------------------------
class TokenFileError(Exception):
    """The bearer token's file is unusable; the message names it and says what to do."""


def http_token(home: Path, renew: bool = False) -> tuple[str, Path]:
    """The bearer token HTTP clients must send, and the file that keeps it.

    Made once (``secrets.token_urlsafe``) and kept in ``home`` (memdeck's data dir) with mode 0600, so every
    start of ``memdeck mcp --http`` asks for the same one; two first starts at once agree on one token.

    Args:
        home: memdeck's data dir.
        renew: replace the token with a new one (``memdeck mcp --new-token``): the old one stops working, in a
            running server too (:class:`HttpGuard` reads the file again when it changes).

    Raises:
        TokenFileError: the token file is a symlink, not a file, unreadable or holds no token memdeck made, or
            it cannot be written.
    """
    path = home / TOKEN_FILE
    existing = "" if renew else _read_token(path)
    if existing:
        return existing, path
    token = secrets.token_urlsafe(32)
    try:
        make_private_dir(home)
        fd, tmp = tempfile.mkstemp(prefix=f".{TOKEN_FILE}.", suffix=".tmp", dir=home)  # created 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(token + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            if existing is None:
                try:
                    os.link(tmp, path)  # never replaces: another server's token wins
                except FileExistsError:
                    theirs = _read_token(path)
                    if theirs:
                        return theirs, path
                    os.replace(tmp, path)
            else:
                os.replace(tmp, path)  # an empty token file, or a new token asked for (a symlink is replaced)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        fsync_dir(home)
    except OSError as exc:
        raise TokenFileError(f"cannot write the HTTP token file {path}: {exc.strerror or exc}") from None
    return token, path


MAX_TOKEN_CHARS = 512
_TOKEN_TEXT = re.compile(r"[A-Za-z0-9._~+/=-]{16,512}")  # RFC 6750's token68 characters; ours are 43 of them
_NEW_TOKEN_HINT = "remove it, or run `memdeck mcp --new-token` to replace it"


def _read_token(path: Path) -> str | None:
    """The token in ``path`` (its mode made 0600 if it was looser); None when there is no file, "" when it is
    empty. Never through a symlink: the file is memdeck's own, and its mode is changed.

    Raises:
        TokenFileError: a symlink, not a regular file, unreadable, or not a token.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise TokenFileError(f"the HTTP token file {path} is a symlink: memdeck keeps its token in a file of "
                                 f"its own; {_NEW_TOKEN_HINT}") from None
        raise TokenFileError(f"cannot read the HTTP token file {path}: {exc.strerror or exc}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise TokenFileError(f"the HTTP token file {path} is not a file: remove it, and memdeck makes a new token")
    with os.fdopen(fd, "rb") as fh:
        try:
            data = fh.read(MAX_TOKEN_CHARS + 2)
        except OSError as exc:
            raise TokenFileError(f"cannot read the HTTP token file {path}: {exc.strerror or exc}") from None
        token = data.decode("utf-8", "replace").strip()
        if token and not _TOKEN_TEXT.fullmatch(token):
            raise TokenFileError(f"the HTTP token file {path} does not hold a token memdeck made; {_NEW_TOKEN_HINT}")
        if token and os.name == "posix" and stat.S_IMODE(st.st_mode) & 0o077:
            try:
                os.fchmod(fd, 0o600)  # the file opened, never what a name points at
            except OSError as exc:
                raise TokenFileError(f"the HTTP token file {path} can be read by others and cannot be made "
                                     f"private: {exc.strerror or exc}") from None
    return token


def _json_response(status: int, body: Any, headers: Mapping[str, str] | None = None) -> Any:
    from starlette.responses import Response

    return Response(json.dumps(body, ensure_ascii=False), status_code=status, media_type="application/json",
                    headers=dict(headers or {}))


BODY_SECONDS = 30.0
"""How long a request body may take to arrive (a 1 MiB body on loopback takes milliseconds): a client that
sends its body a byte at a time is answered 408 rather than held open."""


class HttpGuard:
    """ASGI middleware in front of the SDK's streamable HTTP app.

    Every request must carry the bearer token in one ``Authorization`` header (401 otherwise; never in the URL,
    which ends up in logs). A POST body over :data:`MAX_MESSAGE_BYTES` is refused (413) before it is read to the
    end, one slower than :data:`BODY_SECONDS` gets 408, and the body is screened as a stdio line is
    (:func:`screen_message`): the same JSON-RPC errors on both transports, lone surrogates replaced. A GET is
    405: memdeck sends nothing unasked, so there is no event stream to hold open. The token file is read again
    when it changes, so ``memdeck mcp --new-token`` takes effect at once.
    """

    def __init__(self, app: Any, token: str, token_path: Path | None = None) -> None:
        self.app = app
        self._token = token.encode()
        self._token_path = token_path
        self._token_stamp = self._stamp()
        where = f" (kept in {token_path})" if token_path else ""
        self._unauthorized = _error_reply(None, UNAUTHORIZED, "unauthorized: send the token `memdeck mcp --http` "
                                                              f"prints{where} as the header "
                                                              "`Authorization: Bearer <token>`")

    def _stamp(self) -> tuple[int, int, int] | None:
        if self._token_path is None:
            return None
        try:
            st = os.stat(self._token_path, follow_symlinks=False)
        except OSError:
            return None
        return st.st_ino, st.st_mtime_ns, st.st_size

    def _current_token(self) -> bytes:
        """The token, read again if its file changed (a new token replaces the old at once)."""
        stamp = self._stamp()
        if self._token_path is not None and stamp is not None and stamp != self._token_stamp:
            self._token_stamp = stamp
            with contextlib.suppress(TokenFileError):  # a broken file: the token the server started with holds
                fresh = _read_token(self._token_path)
                if fresh:
                    self._token = fresh.encode()
        return self._token

    def _authorized(self, scope: Mapping[str, Any]) -> bool:
        given = [value for key, value in scope.get("headers", ()) if key == b"authorization"]
        if len(given) != 1:  # two headers: which one counts is up to whoever reads them; refused
            return False
        scheme, _, credentials = bytes(given[0]).strip().partition(b" ")
        # compare_digest: how long the comparison takes tells nothing about the token.
        return scheme.lower() == b"bearer" and hmac.compare_digest(credentials.strip(), self._current_token())

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if not self._authorized(scope):
            response = _json_response(401, self._unauthorized, {"WWW-Authenticate": 'Bearer realm="memdeck"'})
            await response(scope, receive, send)
            return
        if scope.get("method") == "GET":
            refusal = _error_reply(None, INVALID_REQUEST, "memdeck sends nothing unasked: there is no event stream "
                                                          "to GET; POST each request")
            await _json_response(405, refusal, {"Allow": "POST"})(scope, receive, send)
            return
        if scope.get("method") != "POST":
            await self.app(scope, receive, send)  # the SDK's own answers (DELETE: no sessions to end)
            return
        status, answer = await _screened_body(scope, receive)
        if status == 200:
            body, replayed = answer, False

            async def replay() -> Any:
                nonlocal replayed
                if not replayed:
                    replayed = True
                    return {"type": "http.request", "body": body, "more_body": False}
                return await receive()  # after the body: the disconnect the app listens for

            await self.app(scope, replay, send)
        elif answer is None:
            from starlette.responses import Response

            await Response(status_code=status)(scope, receive, send)
        else:
            await _json_response(status, answer)(scope, receive, send)


async def _screened_body(scope: Any, receive: Any) -> tuple[int, Any]:
    """Read and screen a POST body: ``(200, the bytes to hand on)``, or the status to answer with and its JSON
    (None: an empty answer)."""
    import anyio

    too_large = _error_reply(None, INVALID_REQUEST,
                             f"request too large (at most {plural(MAX_MESSAGE_BYTES, 'byte', grouped=True)})")
    declared = next((value for key, value in scope.get("headers", ()) if key == b"content-length"), None)
    if declared is not None and declared.strip().isdigit() and int(declared) > MAX_MESSAGE_BYTES:
        return 413, too_large
    chunks: list[bytes] = []
    size = 0
    with anyio.move_on_after(BODY_SECONDS) as deadline:
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return 400, None  # the client went away; nobody reads the answer
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > MAX_MESSAGE_BYTES:
                return 413, too_large
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
    if deadline.cancelled_caught:
        return 408, _error_reply(None, INVALID_REQUEST, f"request body too slow (over {BODY_SECONDS:.0f} s)")
    body = b"".join(chunks)
    if not body.strip():
        return 400, _error_reply(None, PARSE_ERROR, "parse error: the request body is empty")
    screened = screen_message(body)
    if screened.errors:
        return 400, screened.errors[0] if len(screened.errors) == 1 else list(screened.errors)
    if screened.text is None:
        return 202, None  # a notification or a response: accepted, never answered
    return 200, screened.text.encode("utf-8")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("memdeck")
    except PackageNotFoundError:
        return "0"


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(0)


def _stderr_log(message: str) -> None:
    print(f"memdeck mcp: {message}", file=sys.stderr, flush=True)


async def run_stdio(service: MemoryService, readline: Callable[[int], Awaitable[bytes]] | None = None,
                    stdout: Any = None, on_claimed: Callable[[], None] | None = None,
                    in_flight: _InFlight | None = None) -> None:
    """Serve one MCP connection over stdio until the input ends.

    Args:
        service: the memory behind the tools.
        readline: reads a line of at most n bytes (default: the process's stdin); tests pass a pipe's.
        stdout: where replies go (an async file of text, as the SDK's ``stdio_server`` takes it; default: fd 1,
            which the SDK claims, pointing fd 1 at stderr meanwhile).
        on_claimed: called once the streams are claimed, before the first message is read.
        in_flight: the bound on unanswered requests (default :data:`MAX_IN_FLIGHT`; tests pass a small one).
    """
    from mcp.server.stdio import stdio_server

    server = build_server(service)
    # memdeck reads stdin itself, a bounded line at a time, so nothing malformed or oversized reaches the SDK
    # unanswered. Nothing in the server reads fd 0, so it is left as it is.
    stdin = _ScreenedStdin(_bounded_lines(readline or _FdLines(0).readline), in_flight)
    async with stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream):  # type: ignore[arg-type]
        stdin.attach(write_stream)
        if on_claimed is not None:
            on_claimed()
        answers = _AnswerCounter(write_stream, stdin.in_flight)
        await server.run(read_stream, answers, server.create_initialization_options())


class _FdLines:
    """Lines of a file descriptor (stdin), each read in a daemon thread with ``os.read``.

    At Ctrl-C or SIGTERM a read blocked on a client that keeps the pipe open and says nothing must not hold the
    process: anyio's worker threads are joined at exit (the process said "interrupted" and then hung until the
    client wrote a line or closed stdin), and a daemon thread inside ``sys.stdin``'s buffered reader aborts the
    interpreter at shutdown (it holds the reader's lock). ``os.read`` on the bare descriptor holds neither.
    """

    def __init__(self, fd: int = 0) -> None:
        self._fd = fd
        self._buffer = bytearray()
        self._eof = False

    def _readline(self, limit: int) -> bytes:
        while True:
            end = self._buffer.find(b"\n", 0, limit)
            if end >= 0 or len(self._buffer) >= limit or self._eof:
                size = end + 1 if end >= 0 else min(limit, len(self._buffer))
                line = bytes(self._buffer[:size])
                del self._buffer[:size]
                return line
            chunk = self._chunk()
            self._eof = not chunk
            self._buffer += chunk

    def _chunk(self) -> bytes:
        """What the descriptor has (at most 64 KiB; b"" at its end)."""
        return os.read(self._fd, 64 * 1024)

    async def readline(self, limit: int) -> bytes:
        """The next line, at most ``limit`` bytes (b"" at the end of input), as the SDK's reader takes it."""
        import anyio
        import anyio.from_thread
        import anyio.lowlevel

        token = anyio.lowlevel.current_token()
        done = anyio.Event()
        got: list[bytes | BaseException] = []

        def read() -> None:
            try:
                got.append(self._readline(limit))
            except BaseException as exc:  # handed to the reader, which raises it
                got.append(exc)
            with contextlib.suppress(Exception):  # the loop may be gone: the server stopped meanwhile
                anyio.from_thread.run_sync(done.set, token=token)

        threading.Thread(target=read, name="memdeck-stdin", daemon=True).start()
        await done.wait()
        if isinstance(got[0], BaseException):
            raise got[0]
        return got[0]


async def _serve_stdio(service: MemoryService) -> None:
    def started() -> None:
        # Inside stdio_server, fd 1 points at stderr: stray output from model loading cannot corrupt the wire,
        # so the threads start only once it is claimed.
        service.start()
        _stderr_log(f"serving {service.config.workspace} over stdio "
                    f"({'writes allowed' if service.allow_write else 'read-only'})")

    await run_stdio(service, on_claimed=started)


def http_app(service: MemoryService, token: str, host: str = "127.0.0.1", token_path: Path | None = None) -> Any:
    """The ASGI app ``memdeck mcp --http`` serves: the SDK's streamable HTTP app behind :class:`HttpGuard`.

    Stateless: each POST is served by a fresh transport and forgotten when answered, so clients that never
    close their session cost nothing afterwards (a stateful session lives until its idle timeout, 30 minutes
    by default, at ~50 kB each). memdeck's tools keep no per-session state and send nothing unasked, so
    nothing is lost.
    """
    server = build_server(service)
    app = server.streamable_http_app(host=host, stateless_http=True, max_request_body_size=MAX_MESSAGE_BYTES)
    return HttpGuard(app, token, token_path)


async def _serve_http(service: MemoryService, port: int, host: str, new_token: bool = False) -> None:
    import uvicorn

    token, token_path = http_token(service.config.home, renew=new_token)
    app = http_app(service, token, host, token_path)
    # Bind first so the address can be announced (and --http 0 reports the port it got) before serving.
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    service.start()
    if not _is_loopback(host):
        _stderr_log(f"WARNING: listening on {host}, not only this machine: anyone who can reach it and has the "
                    "token can read memory" + (" and write it" if service.allow_write else ""))
    _stderr_log(f"serving {service.config.workspace} at http://{host}:{sock.getsockname()[1]}/mcp "
                f"({'writes allowed' if service.allow_write else 'read-only'})")
    _stderr_log(f"bearer token: {token} (clients send the header `Authorization: Bearer <token>`; "
                f"kept in {token_path}; `memdeck mcp --new-token` replaces it)")
    # limit_concurrency: past that many open connections a client gets 503 at once instead of costing memory.
    userver = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on", limit_concurrency=64))
    await userver.serve(sockets=[sock])


def _is_loopback(host: str) -> bool:
    import ipaddress

    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve(config: Config, http_port: int | None = None, allow_write: bool = False,
          host: str = "127.0.0.1", new_token: bool = False) -> int:
    """Run the MCP server until the client disconnects (stdio) or it is interrupted (HTTP).

    Args:
        config: the workspace to serve.
        http_port: serve streamable HTTP on ``host:http_port`` (path ``/mcp``); stdio when None.
        allow_write: enable ``memory_append``.
        host: the HTTP bind address (loopback by default; another is served with a warning).
        new_token: over HTTP, replace the bearer token with a new one first.

    Returns:
        The process exit code.

    Raises:
        KeyboardInterrupt: Ctrl-C, once the server has shut down (the CLI's entry point says so and exits 130).
    """
    try:
        import anyio
        import mcp  # noqa: F401  (checked here to give a clear message)
    except ImportError as exc:
        _stderr_log(f"the MCP SDK is not installed ({exc}); install it with: pip install 'mcp>=2.3,<3'")
        return 1
    service = MemoryService(config, allow_write=allow_write, log=_stderr_log)
    if threading.current_thread() is threading.main_thread():
        # uvicorn re-raises SIGTERM after its graceful shutdown; exit cleanly (closing the index) instead.
        signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        if http_port is None:
            anyio.run(_serve_stdio, service)
        else:
            anyio.run(_serve_http, service, http_port, host, new_token)
    except TokenFileError as exc:
        _stderr_log(f"cannot serve: {exc}")
        return 1
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        _stderr_log(f"cannot serve: {exc.strerror or exc}{where}")
        return 1
    finally:
        with contextlib.suppress(Exception):
            service.stop(timeout=2.0)
    return 0
