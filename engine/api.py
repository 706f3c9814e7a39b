"""MemoryEngine: the one API the CLI, the TUI and the MCP server use for memory — sync, search, get and status,
and every operation on notes and sessions (the plain types they return are importable from here too)."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import json
import os
import stat
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from engine.bootstrap import BootstrapBudget, bootstrap_budget
from engine.clock import Clock, ClockError
from engine.config import Config
from engine.display import plural
from engine.embed.choice import (
    Embedder,
    EmbeddingError,
    ProviderChoice,
    choose_provider,
    describe_model_change,
    make_embedder,
)
from engine.embed.local import english_only_model
from engine.errors import IndexBusy, PathRefused
from engine.index import queries
from engine.index.embed_plan import vector_plan
from engine.index.indexer import (
    ProgressFn,
    SyncProgress,
    SyncReport,
    embed_pending,
    embed_rate,
    identity_for,
    lock_holder,
    pid_alive,
    sync_files,
    writer_lock,
)
from engine.index.schema import RECOVERED_META
from engine.index.store import (
    DB_ERRORS,
    CorruptIndex,
    IndexAccessError,
    Store,
    describe_db_error,
    is_corruption,
    move_aside,
    salvage_cache,
)
from engine.index.vectors import VectorIndex
from engine.memory.files import FlushWritten, MemoryFiles, SessionNote
from engine.search.dates import DateSpan
from engine.search.pipeline import Early, Hit, SearchRequest, SearchResponse, parse, read_early, run_search
from engine.sessions.model import (
    Entry,
    Message,
    SessionHeader,
    SessionInfo,
    SessionLookupError,
    SessionReadError,
    Skipped,
    StoreEntry,
    ToolCall,
    ToolResult,
    Transcript,
    Usage,
)
from engine.sessions.scan import scan_sources, source_stats
from engine.textio import ByteLines, DiskStamp, byte_lines, same_content
from engine.workspace import (
    FolderLink,
    GetResult,
    MemoryFile,
    ScanReport,
    is_indexed,
    read_memory_slice,
    resolve_memory_path,
)

if TYPE_CHECKING:  # loaded on first use (see __getattr__): status and search need none of them
    from engine.display import SEPARATOR_GLYPHS as SEPARATOR_GLYPHS
    from engine.display import byte_size as byte_size
    from engine.display import has_control_chars as has_control_chars
    from engine.display import safe_name as safe_name
    from engine.display import safe_text as safe_text
    from engine.display import show_separators as show_separators
    from engine.health.checks import DoctorReport as DoctorReport
    from engine.health.doctor import format_report as format_report
    from engine.health.doctor import run_doctor as run_doctor
    from engine.markdown import Blocks as Blocks
    from engine.markdown import LineRole as LineRole
    from engine.markdown import Reparser as Reparser
    from engine.markdown import parse_blocks as parse_blocks
    from engine.memory.append import FLUSH_DAYS as FLUSH_DAYS
    from engine.memory.append import FlushBlock as FlushBlock
    from engine.memory.append import FlushPlan as FlushPlan
    from engine.memory.draft import DRAFT_KINDS as DRAFT_KINDS
    from engine.memory.draft import Draft as Draft
    from engine.memory.draft import DraftItem as DraftItem
    from engine.memory.llm import LLMError as LLMError
    from engine.memory.names import DATED_NOTE as DATED_NOTE
    from engine.memory.names import DatedNote as DatedNote
    from engine.memory.names import daily_heading as daily_heading
    from engine.memory.names import daily_rel as daily_rel
    from engine.memory.names import dated_note as dated_note
    from engine.memory.names import topic_rel as topic_rel
    from engine.memory.rename import RenamePlan as RenamePlan
    from engine.memory.saving import Appended as Appended
    from engine.memory.saving import FlushError as FlushError
    from engine.memory.saving import Note as Note
    from engine.memory.saving import SaveConflict as SaveConflict
    from engine.memory.saving import SaveResult as SaveResult
    from engine.memory.trash import Deleted as Deleted
    from engine.recovery import RecoveryCopy as RecoveryCopy
    from engine.recovery import RecoveryError as RecoveryError
    from engine.recovery import RecoveryListing as RecoveryListing
    from engine.recovery import discard_recovery as discard_recovery
    from engine.recovery import list_recovery as list_recovery
    from engine.recovery import recovery_dir as recovery_dir
    from engine.recovery import recovery_disk_state as recovery_disk_state
    from engine.recovery import recovery_listing as recovery_listing
    from engine.recovery import save_recovery as save_recovery
    from engine.review.actions import NothingToUndo as NothingToUndo
    from engine.review.actions import ReviewAction as ReviewAction
    from engine.review.actions import ReviewActionError as ReviewActionError
    from engine.review.actions import ReviewWriteConflict as ReviewWriteConflict
    from engine.review.actions import StatementChanged as StatementChanged
    from engine.review.actions import merge_text as merge_text
    from engine.review.actions import promote_target as promote_target
    from engine.review.actions import statement_text as statement_text
    from engine.review.audit import AuditReport as AuditReport
    from engine.review.audit import Lost as Lost
    from engine.review.audit import SessionAudit as SessionAudit
    from engine.review.model import Finding as Finding
    from engine.review.model import ReviewItem as ReviewItem
    from engine.review.model import ReviewReport as ReviewReport
    from engine.sessions.dbsource import AgentDbSource as AgentDbSource
    from engine.sessions.excerpt import is_session_path as is_session_path
    from engine.sessions.excerpt import parse_citation as parse_citation
    from engine.sessions.locate import open_session_source as open_session_source
    from engine.sessions.locate import session_source_at as session_source_at
    from engine.sessions.sources import FLUSH_STATE_FILE as FLUSH_STATE_FILE
    from engine.sessions.sources import FolderSource as FolderSource
    from engine.sessions.sources import SessionSource as SessionSource
    from engine.sessions.sources import SourceStatus as SourceStatus
    from engine.sessions.sources import flush_threshold as flush_threshold
    from engine.sessions.sources import needs_flush as needs_flush
    from engine.sessions.speech import SpeechSegment as SpeechSegment
    from engine.sessions.speech import speech_segments as speech_segments
    from engine.state import StateError as StateError
    from engine.state import UiState as UiState
    from engine.state import load_state as load_state
    from engine.state import save_state as save_state
    from engine.state import state_path as state_path
    from engine.watch import WATCH_DEBOUNCE_MS as WATCH_DEBOUNCE_MS
    from engine.watch import WatchPlan as WatchPlan
    from engine.watch import affects_index as affects_index
    from engine.watch import awatch_changes as awatch_changes
    from engine.watch import is_relevant as is_relevant
    from engine.watch import watch_changes as watch_changes
    from engine.watch import watch_plan as watch_plan

_LAZY = {
    "engine.memory.append": ("FLUSH_DAYS", "FlushBlock", "FlushPlan"),
    "engine.memory.draft": ("DRAFT_KINDS", "Draft", "DraftItem"),
    "engine.memory.llm": ("LLMError",),
    "engine.health.checks": ("DoctorReport",),
    "engine.health.doctor": ("format_report", "run_doctor"),
    "engine.memory.names": ("DATED_NOTE", "DatedNote", "daily_heading", "daily_rel", "dated_note", "topic_rel"),
    "engine.memory.rename": ("RenamePlan",),
    "engine.memory.saving": ("Appended", "FlushError", "Note", "SaveConflict", "SaveResult"),
    "engine.memory.trash": ("Deleted",),
    "engine.display": ("SEPARATOR_GLYPHS", "byte_size", "has_control_chars", "safe_name", "safe_text",
                       "show_separators"),
    "engine.markdown": ("Blocks", "LineRole", "Reparser", "parse_blocks"),
    "engine.recovery": ("RecoveryCopy", "RecoveryError", "RecoveryListing", "discard_recovery", "list_recovery",
                        "recovery_dir", "recovery_disk_state", "recovery_listing", "save_recovery"),
    "engine.state": ("StateError", "UiState", "load_state", "save_state", "state_path"),
    "engine.review.actions": ("NothingToUndo", "ReviewAction", "ReviewActionError", "ReviewWriteConflict",
                              "StatementChanged", "merge_text", "promote_target", "statement_text"),
    "engine.review.model": ("Finding", "ReviewItem", "ReviewReport"),
    "engine.review.audit": ("AuditReport", "Lost", "SessionAudit"),
    "engine.sessions.dbsource": ("AgentDbSource",),
    "engine.sessions.sources": ("FLUSH_STATE_FILE", "FolderSource", "SessionSource", "SourceStatus",
                                "flush_threshold", "needs_flush"),
    "engine.sessions.locate": ("open_session_source", "session_source_at"),
    "engine.sessions.excerpt": ("is_session_path", "parse_citation"),
    "engine.sessions.speech": ("SpeechSegment", "speech_segments"),
    "engine.watch": ("WATCH_DEBOUNCE_MS", "WatchPlan", "affects_index", "awatch_changes", "is_relevant",
                     "watch_changes", "watch_plan"),
}
_LAZY_NAMES = {name: module for module, names in _LAZY.items() for name in names}

__all__ = [
    "CORPORA",
    "DATED_NOTE",
    "DRAFT_KINDS",
    "FLUSH_DAYS",
    "FLUSH_STATE_FILE",
    "SEPARATOR_GLYPHS",
    "WATCH_DEBOUNCE_MS",
    "AgentDbSource",
    "Appended",
    "AuditReport",
    "Blocks",
    "ByteLines",
    "DateSpan",
    "DatedNote",
    "Deleted",
    "DiskStamp",
    "DoctorReport",
    "Draft",
    "DraftItem",
    "Entry",
    "Finding",
    "FlushBlock",
    "FlushError",
    "FlushPlan",
    "FlushWritten",
    "FolderLink",
    "FolderSource",
    "GetResult",
    "Hit",
    "LLMError",
    "LineRole",
    "Lost",
    "MemoryEngine",
    "MemoryFile",
    "MemoryFiles",
    "Message",
    "Note",
    "NothingToUndo",
    "ProgressFn",
    "RecoveryCopy",
    "RecoveryError",
    "RecoveryListing",
    "RenamePlan",
    "ReviewAction",
    "ReviewActionError",
    "ReviewItem",
    "ReviewReport",
    "ReviewWriteConflict",
    "SaveConflict",
    "SaveResult",
    "ScanReport",
    "SearchResponse",
    "SessionAudit",
    "SessionHeader",
    "SessionInfo",
    "SessionLookupError",
    "SessionNote",
    "SessionReadError",
    "SessionSource",
    "Skipped",
    "SourceStatus",
    "SpeechSegment",
    "StateError",
    "StatementChanged",
    "Status",
    "StoreEntry",
    "SyncProgress",
    "SyncReport",
    "ToolCall",
    "ToolResult",
    "Transcript",
    "UiState",
    "Usage",
    "WatchPlan",
    "affects_index",
    "awatch_changes",
    "byte_lines",
    "byte_size",
    "corpus_sources",
    "daily_heading",
    "daily_rel",
    "dated_note",
    "discard_recovery",
    "flush_threshold",
    "format_report",
    "has_control_chars",
    "is_relevant",
    "is_session_path",
    "list_recovery",
    "load_state",
    "merge_text",
    "needs_flush",
    "open_session_source",
    "parse_blocks",
    "parse_citation",
    "plural",
    "promote_target",
    "recovery_dir",
    "recovery_disk_state",
    "recovery_listing",
    "run_doctor",
    "safe_name",
    "safe_text",
    "same_content",
    "save_recovery",
    "save_state",
    "scan_sources",
    "session_source_at",
    "show_separators",
    "source_stats",
    "speech_segments",
    "state_path",
    "statement_text",
    "topic_rel",
    "watch_changes",
    "watch_plan",
]


def __getattr__(name: str) -> Any:
    """The memory, session and watch names, imported on first use."""
    module = _LAZY_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)




@dataclass(frozen=True)
class Status:
    """Everything ``memdeck status`` reports."""

    workspace: str
    index_path: str
    index_bytes: int
    driver: str
    sqlite_version: str
    vec_version: str | None
    requested_provider: str
    provider: str
    provider_reason: str | None
    model: str | None
    dims: int | None
    files_indexed: int
    files_on_disk: int
    chunks: int
    dirty_files: int
    pending_embeddings: int
    vector_state: str
    vector_error: str | None
    fts_ready: bool
    cache_entries: int
    sources: tuple[str, ...]
    identity_status: str
    last_sync: float | None
    issues: tuple[str, ...] = ()
    recovered: tuple[str, ...] = ()
    probe: dict[str, Any] | None = None
    provider_url: str | None = None  # a remote provider's endpoint (no credentials)
    session_source: SourceStatus | None = None  # where sessions come from: OpenClaw's database or a folder
    folder_links: tuple[FolderLink, ...] = ()  # symlinked folders in the memory tree (memory/ first), and the rule
    bootstrap: BootstrapBudget | None = None  # what OpenClaw injects of MEMORY.md, USER.md, ... at a session's start
    embedded_chunks: int = 0  # chunks with their vectors (``vector_state`` reads ``vectors 9/56`` until all are)
    embed_seconds: float | None = None  # ≈ how long embedding the rest takes at the measured speed (None: unknown)

    @property
    def memory_folder(self) -> str | None:
        """How ``memory/`` is read when it is a symlink (``memory/ is a symlink to …: followed (…)``), else None."""
        return next((link.describe() for link in self.folder_links if link.rel == "memory"), None)

    def to_dict(self) -> dict[str, Any]:
        """The ``status --json`` payload."""
        d = asdict(self)
        d["folder_links"] = [link.to_json() for link in self.folder_links]
        d["memory_folder"] = self.memory_folder
        d["sources"] = list(self.sources)
        d["issues"] = list(self.issues)
        d["recovered"] = list(self.recovered)
        d["bootstrap"] = self.bootstrap.to_dict() if self.bootstrap is not None else None
        if self.session_source is not None:
            d["session_source"] = {**d["session_source"], "warnings": list(self.session_source.warnings),
                                   "newer_schema": self.session_source.newer_schema}
        return d


_F = TypeVar("_F", bound=Callable[..., Any])
# The index's meta key holding the model-change message while the re-embedding it began is unfinished.
MODEL_CHANGE_META = "model_change"
_INDEX_ERRORS: tuple[type[BaseException], ...] = (CorruptIndex, *DB_ERRORS)


def index_writer(index_path: Path) -> int | None:
    """The pid of another process writing the index at ``index_path`` right now (0 if it wrote none), else None: for
    a door to say why it is about to wait, or who is embedding (a probe that never holds a writer up)."""
    return lock_holder(index_path)


SEARCH_EMBED_BUDGET = 1.0
"""Seconds of embedding a CLI/MCP search may spend before it answers (what fits at the measured speed; one chunk,
the probe, when the speed is not known yet): the rest waits for ``memdeck index`` or the next sync."""


def _recovering(method: _F) -> _F:
    """Turn database failures into recovery or one clear error: a damaged index is moved aside and rebuilt
    from the Markdown (then the call is retried once); a full disk, a read-only file or a lock timeout
    becomes :class:`IndexAccessError` instead of a traceback."""

    @functools.wraps(method)
    def run(self: MemoryEngine, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except _INDEX_ERRORS as exc:
            if not (isinstance(exc, CorruptIndex) or is_corruption(exc)):
                raise IndexAccessError(describe_db_error(exc, self.config.index_path)) from exc
            self._recover(str(exc))
        try:
            return method(self, *args, **kwargs)
        except _INDEX_ERRORS as exc:
            raise IndexAccessError(describe_db_error(exc, self.config.index_path)) from exc

    return run  # type: ignore[return-value]


@dataclass
class _State:
    last_sync: float | None = None
    recovered: list[str] = field(default_factory=list)


def _idle_core() -> bool:
    """Whether a core is free for a search to embed its query beside its other reads: the 1-minute load average
    below the core count (True where the system has no load average).

    With no free core the two threads only take turns, and preemption lands on the critical path. Same process,
    each query both ways alternately, overlapped ÷ embedding-first on 2 cores: at 10k chunks 0.89x p50 / 0.91x p95
    at load 1.35, but 0.97-1.15x / 0.98-1.28x at load 3.2-5.5; at 96k 0.79x / 0.84x at load 1.4, 0.90x / 0.97x at 3.4.
    """
    try:
        return os.getloadavg()[0] < (os.cpu_count() or 1)
    except (AttributeError, OSError):
        return True


class _Background:
    """``fn(arg)`` on a daemon thread from now; :meth:`result` waits for it and returns what it returned or
    raises what it raised (a search's query embedding, while the search reads what needs no vector).

    :meth:`running` waits until the model runs without the GIL (a local model says so: ``calling_model``) or
    ``fn`` is done: a search that starts its own Python work only then does not pass the GIL back and forth with
    the worker's preamble (measured on 2 busy cores: that made the overlapped search slower than the sequential).
    """

    def __init__(self, fn: Callable[[str], list[float]], arg: str) -> None:
        from engine.embed.local import when_model_runs

        self._done = threading.Event()
        self._running = threading.Event()
        self._value: list[float] = []
        self._error: BaseException | None = None

        def run() -> None:
            try:
                with when_model_runs(self._running.set):
                    self._value = fn(arg)
            except BaseException as exc:  # handed to the caller, which raises or degrades as it always did
                self._error = exc
            finally:
                self._running.set()
                self._done.set()

        threading.Thread(target=run, name="memdeck-query-embedding", daemon=True).start()

    def running(self) -> None:
        self._running.wait()

    def result(self) -> list[float]:
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value


class MemoryEngine(MemoryFiles):
    """The memory engine for one workspace: the index (sync, search, get, status) and, from
    :class:`MemoryFiles`, every operation on notes and sessions (its drafts skip what the index holds).

    Thread-safe for the patterns the TUI uses: searches from worker threads while one sync runs elsewhere
    (each thread has its own SQLite connection; writes take an inter-process lock).
    """

    def __init__(self, config: Config, embedder: Embedder | None = None, *, clock: Clock | None = None) -> None:
        super().__init__(config, clock=clock)
        self.choice: ProviderChoice = choose_provider(config)
        if embedder is not None:
            self.choice = ProviderChoice(config.embedding.provider, embedder.provider, embedder.model_id,
                                         embedder.dims, None)
        self.embedder: Embedder | None = embedder if embedder is not None else make_embedder(self.choice, config)
        self._state = _State()
        self._vindex = VectorIndex()
        self._sync_lock = threading.RLock()
        self._long_embed = threading.Event()  # set while an unbudgeted embedding run holds the sync lock
        self._loading = False
        self._load_error: str | None = None
        self._provider_error: str | None = None
        self.store = self._open_store(config.index_path)
        self._cleanup_temp_files()

    # -- opening -----------------------------------------------------------------------------
    def _vector_dims(self) -> int | None:
        """The vector size: the provider's, or what a remote model said on its first answer (None: unknown)."""
        if self.embedder is None:
            return None
        return self.choice.dims or self.embedder.dims or None

    def _open_store(self, path: Path) -> Store:
        dims = self._vector_dims()
        inode = _inode(path)
        try:
            return Store(path, dims)
        except CorruptIndex as exc:
            return self._replace_corrupt(path, str(exc), inode)

    def _replace_corrupt(self, path: Path, why: str, inode: int | None) -> Store:
        """Move a damaged index aside (``*.corrupt-<time>``) and start a new one, keeping its cached embeddings.

        Under the writer lock, and only if the file is still the damaged one: two processes that find the
        same damage must not move aside the fresh index the other one just made.
        """
        dims = self._vector_dims()
        with writer_lock(path, wait=10.0):
            current = _inode(path)
            if current is not None and (inode is None or current == inode):
                aside = move_aside(path, self.clock.stamp())
                store = Store(path, dims)
                kept = salvage_cache(aside, store)
                note = f"index was unusable ({why}); moved aside to {aside.name} and rebuilt from the Markdown"
                if kept:
                    note += f" (kept {plural(kept, 'cached embedding')})"
            else:
                store = Store(path, dims)
                note = f"index was unusable ({why}); another memdeck process replaced it"
            # Kept in the index so a later `memdeck status` still says it (`memdeck doctor --fix` clears it).
            store.set_meta(RECOVERED_META, json.dumps({"at": time.time(), "note": note}))
        self._state.recovered.append(note)
        return store

    def _recover(self, why: str) -> None:
        with self._sync_lock:
            inode = self.store.inode
            self.store.close()
            self.store = self._replace_corrupt(self.config.index_path, why, inode)

    def _cleanup_temp_files(self) -> None:
        """Delete rebuild temp files a crashed process left (OpenClaw once left 19 GB of them)."""
        folder = self.config.index_path.parent
        prefix = self.config.index_path.name + ".rebuild-"
        try:
            entries = [e for e in folder.iterdir() if e.name.startswith(prefix)]
        except OSError:
            return
        if not entries:
            return
        try:
            # Nobody holds the writer lock: nobody is rebuilding, so every temp file is a leftover.
            with writer_lock(self.config.index_path, wait=0.0):
                for entry in entries:
                    with contextlib.suppress(OSError):
                        entry.unlink()
            return
        except (IndexBusy, OSError):
            pass
        for entry in entries:
            pid = entry.name[len(prefix):].split(".")[0].split("-")[0]
            if pid.isdigit() and pid_alive(int(pid)):
                continue
            with contextlib.suppress(OSError):
                entry.unlink()

    def close(self) -> None:
        """Close the index."""
        self.store.close()

    def __enter__(self) -> MemoryEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the model ---------------------------------------------------------------------------
    @property
    def vector_state(self) -> str:
        """``ready``, ``loading``, ``not-loaded`` or ``unavailable: <why>``."""
        if self.embedder is None:
            return f"unavailable: {self.choice.reason or 'no embedding provider'}"
        if self.store.driver is not None and self.store.driver.vec_version is None:
            return f"unavailable: {self.store.driver.vec_error}"
        if self._load_error:
            return f"unavailable: {self._load_error}"
        if self.embedder.loaded:
            return "ready"
        if self._provider_error:
            return f"unavailable: {self._provider_error}"
        return "loading" if self._loading else "not-loaded"

    def load_model(self) -> None:
        """Load the embedding model (blocking: call it from a worker thread)."""
        if self.embedder is None or self.embedder.loaded:
            return
        load = getattr(self.embedder, "load", None)
        if load is None:
            return
        self._loading = True
        try:
            load()
            self._provider_error = None
        except EmbeddingError as exc:  # a remote provider that is down now may answer later: not sticky
            self._provider_error = str(exc)
        except Exception as exc:  # any import/model failure degrades to keyword-only
            self._load_error = f"model failed to load: {type(exc).__name__}: {exc}"
        finally:
            self._loading = False

    @property
    def can_embed(self) -> bool:
        """Whether vectors can be made and stored (provider present, sqlite-vec loaded, model not broken)."""
        return self.embedder is not None and self.store.vec_available and self._load_error is None

    # -- files -------------------------------------------------------------------------------
    def scan(self) -> ScanReport:
        """The memory files on disk (and session files when sessions are a source)."""
        return scan_sources(self.config, indexed=self._indexed_stamps)

    def dirty_files(self, scan: ScanReport | None = None) -> list[str]:
        """Files whose mtime/size differ from what was indexed, new files, and deleted ones.

        Without ``scan`` (the freshness check before a CLI search) the files are stat-ed without building
        :class:`MemoryFile` objects: one walk, one ``SELECT`` of the files table, two dicts compared.
        """
        current = (source_stats(self.config, indexed=self._indexed_stamps) if scan is None
                   else {f.rel: (f.mtime_ns, f.size) for f in scan.files})
        return self._changed_since_indexed(current)

    def _indexed_stamps(self) -> dict[str, tuple[int, int]]:
        """What the index holds (``rel → (mtime_ns, size)``): a locked OpenClaw database keeps its sessions."""
        try:
            return queries.file_stats(self.store.conn)
        except DB_ERRORS:
            return {}

    def _changed_since_indexed(self, current: dict[str, tuple[int, int]]) -> list[str]:
        """The files of ``current`` (``rel → (mtime_ns, size)``) the index does not hold as they are, then the
        indexed files that are gone."""
        try:
            known = queries.file_stats(self.store.conn)
        except DB_ERRORS:
            return list(current)
        if known == current:
            return []
        dirty = [rel for rel, state in current.items() if known.get(rel) != state]
        dirty.extend(sorted(p for p in known if p not in current))
        return dirty

    @_recovering
    def file_states(self) -> dict[str, str]:
        """Per file: ``indexed``, ``changed`` (since indexing), ``new`` or ``not-embedded``."""
        scan = self.scan()
        known = queries.file_stats(self.store.conn)
        pending = queries.pending_paths(self.store.conn)
        states: dict[str, str] = {}
        for f in scan.files:
            if f.rel not in known:
                states[f.rel] = "new"
            elif known[f.rel] != (f.mtime_ns, f.size):
                states[f.rel] = "changed"
            elif f.rel in pending and self.embedder is not None:
                states[f.rel] = "not-embedded"
            else:
                states[f.rel] = "indexed"
        return states

    # -- sync --------------------------------------------------------------------------------
    def _identity(self) -> dict[str, Any]:
        return identity_for(self.config, self.choice, self.embedder if self.store.vec_available else None)

    def needs_rebuild(self) -> bool:
        """Whether the index was built with other settings (model, chunking, sources, ...)."""
        current = self.store.get_identity()
        if current is None:
            return bool(queries.file_count(self.store.conn))
        return current != self._identity()

    def model_change(self) -> str | None:
        """Why the index's vectors no longer fit (another embedding model made them), or None.

        ``"embedding model changed: all-MiniLM-L6-v2 → multilingual-e5-small; re-embedding 1,234 chunks once"``:
        the next sync rebuilds once; until then searches leave the vector leg out and show keyword results.
        """
        return describe_model_change(self.store.get_identity(), self._identity(),
                                     lambda: int(self.store.counts()["chunks"]))

    @_recovering
    def sync(
        self,
        force: bool = False,
        progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
        embed: bool = True,
        wait: float = 30.0,
        budget: float | None = None,
        urgent: bool = False,
    ) -> SyncReport:
        """Bring the index up to date with the files.

        Args:
            force: re-read and re-chunk every file (embeddings still come from the cache).
            progress: called with :class:`SyncProgress` updates.
            cancel: set it to stop between files/batches (the index stays consistent).
            embed: also embed new chunks (loads the model if needed).
            wait: seconds to wait for another writer (another process, or another thread of this one).
            budget: seconds of embedding at most (see :data:`SEARCH_EMBED_BUDGET`); the rest stays pending.
            urgent: a reader waits (a search): behind a long embedding run in another thread, give up at once.

        Raises:
            IndexBusy: another process (or thread) kept the writer lock for ``wait`` seconds.
        """
        started = time.monotonic()
        report = SyncReport()
        with self._writing(wait, urgent):
            if force or self.needs_rebuild():
                change = self.model_change()
                if change:  # said once, by whichever door runs the rebuild (CLI index/search, TUI, MCP)
                    report.issues.append(change)
                self._rebuild(report, progress, cancel, embed)
                if change and not report.cancelled and self.store.has_pending():
                    # Status keeps saying it until the new model has embedded every chunk (often a later sync).
                    self.store.set_meta(MODEL_CHANGE_META, change)
            else:
                scan = self.scan()
                report.issues.extend(scan.issues)
                if self.store.get_identity() is None:
                    # Recorded before the first file: an index cut short by a crash is resumed, not rebuilt.
                    self.store.set_meta("identity", json.dumps(self._identity()))
                sync_files(self.store, self.config, scan.files, report, progress, cancel)
                if embed and self.can_embed and not report.cancelled:
                    self._embed(report, progress, cancel, budget=budget)
        report.chunks_total = self.store.counts()["chunks"]
        report.seconds = time.monotonic() - started
        self._state.last_sync = time.time()
        return report

    @contextlib.contextmanager
    def _writing(self, wait: float, urgent: bool = False) -> Iterator[None]:
        """This process's sync lock, then the index's writer lock, each waited for ``wait`` seconds at most: a
        search (``urgent``) must not queue behind a long embedding run in another thread: it answers from the
        index as it is.

        Raises:
            IndexBusy: either lock stayed taken for ``wait`` seconds.
        """
        # Behind a long embedding run in another thread, waiting is pointless: it holds the lock for minutes.
        if not self._sync_lock.acquire(blocking=False) and (
                (urgent and self._long_embed.is_set()) or not self._sync_lock.acquire(timeout=max(0.0, wait))):
            raise IndexBusy("memdeck is embedding the index in this process; try again shortly")
        try:
            with writer_lock(self.config.index_path, wait=wait):
                yield
        finally:
            self._sync_lock.release()

    def embed_some(self, seconds: float = SEARCH_EMBED_BUDGET, wait: float = 2.0) -> SyncReport:
        """Embed pending chunks for ``seconds`` at most (the most read first: MEMORY.md, USER.md, the newest notes),
        without rescanning the workspace; loads the model if needed.

        Raises:
            IndexBusy: another writer kept the index for ``wait`` seconds.
        """
        report = SyncReport()
        if not self.can_embed or not self.store.has_pending():
            return report
        started = time.monotonic()
        with self._writing(wait, urgent=True):
            if not self.needs_rebuild():
                self._embed(report, None, None, budget=seconds)
        report.seconds = time.monotonic() - started
        return report

    def embed_estimate(self) -> tuple[int, float | None]:
        """(chunks not embedded yet, ≈ seconds to embed them at this embedder's measured speed, None if unknown)."""
        if self.embedder is None or not self.store.vec_available:
            return 0, None
        pending = self.store.pending_count()
        if not pending:
            return 0, None
        rate = embed_rate(self.store, self.embedder)
        return pending, (queries.pending_chars(self.store.conn) / rate if rate else None)

    def _embed(self, report: SyncReport, progress: ProgressFn | None, cancel: threading.Event | None,
               store: Store | None = None, budget: float | None = None) -> None:
        assert self.embedder is not None
        self.load_model()
        if self._load_error:
            report.issues.append(self._load_error)
            return
        if not self.embedder.loaded and self._provider_error:
            report.issues.append(f"embedding skipped: {self._provider_error}")
            return
        target = store or self.store
        if not target.dims and self.embedder.dims:
            target.dims = self.embedder.dims  # a remote model's size, known since its first answer
        long_run = budget is None and not self._long_embed.is_set()
        if long_run:
            self._long_embed.set()
        args = (self.config.embedding.batch_size, self.config.chunking.window_tokens,
                self.config.chunking.line_vectors)
        plan, min_tokens, power = (vector_plan(self.config), self.config.index.line_min_tokens,
                                   self.config.index.lines_power)
        try:
            if budget is None:
                embed_pending(target, self.embedder, report, progress, cancel, *args, plan=plan,
                              line_min_tokens=min_tokens, lines_power=power)
            else:
                # What fits the budget at the measured speed. With no speed known yet, a probe measures it (one
                # chunk, then twice as many while the probes come from the cache and measure nothing), and what
                # still fits is embedded after it: a fast embedder or a small workspace is embedded whole, so a
                # search does not answer differently the next time.
                deadline = time.monotonic() + budget
                probe = 1
                while True:
                    rate = embed_rate(target, self.embedder)
                    left = max(0.0, deadline - time.monotonic())
                    if rate:
                        embed_pending(target, self.embedder, report, progress, cancel, *args,
                                      budget_chars=int(rate * left), deadline=deadline, plan=plan,
                                      line_min_tokens=min_tokens, lines_power=power)
                        break
                    embed_pending(target, self.embedder, report, progress, cancel, *args,
                                  deadline=deadline, probe=probe, plan=plan,
                                  line_min_tokens=min_tokens, lines_power=power)
                    if report.cancelled or not target.has_pending() or time.monotonic() >= deadline:
                        break
                    probe *= 2
        except EmbeddingError as exc:  # what is embedded stays; the rest waits for the provider
            report.issues.append(f"embedding stopped: {exc}; the remaining chunks are keyword-only until it works")
        finally:
            if long_run:
                self._long_embed.clear()
        if not target.has_pending() and target.get_meta(MODEL_CHANGE_META) is not None:
            queries.delete_meta(target.conn, MODEL_CHANGE_META)  # the re-embedding a model change began is done

    def _rebuild(self, report: SyncReport, progress: ProgressFn | None, cancel: threading.Event | None,
                 embed: bool) -> None:
        """Build a fresh index in a temp file, then swap it in; the old one serves until the swap."""
        final = self.config.index_path
        temp = final.with_name(f"{final.name}.rebuild-{os.getpid()}-{int(time.time())}")
        report.rebuilt = True
        dims = self._vector_dims()
        new = Store(temp, dims)
        try:
            # Keep every embedding the old index already paid for.
            with contextlib.suppress(*DB_ERRORS):
                rows = queries.cache_rows(self.store.conn).fetchall()
                with new.transaction() as tx:
                    queries.cache_add(tx, rows)
            scan = self.scan()
            report.issues.extend(scan.issues)
            sync_files(new, self.config, scan.files, report, progress, cancel, force=True)
            if embed and self.embedder is not None and new.vec_available and not report.cancelled:
                self._embed(report, progress, cancel, store=new)
            if report.cancelled:
                new.close()
                with contextlib.suppress(OSError):
                    os.unlink(temp)
                return
            new.set_meta("identity", json.dumps(self._identity()))
            queries.checkpoint(new.conn)
            # The swap is one write transaction on the live file (SQLite's backup API), not a rename: other
            # processes that have the index open keep a consistent view and see the new one on their next
            # read, and a crash mid-copy rolls back to the old index.
            new.conn.backup(self.store.conn)
            new.close()
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(OSError):
                    os.unlink(str(temp) + suffix)
        except BaseException:
            new.close()
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(OSError):
                    os.unlink(str(temp) + suffix)
            raise

    @_recovering
    def reindex_file(self, rel: str) -> SyncReport:
        """Re-index one saved file so its new text is searchable at once, without rescanning the workspace.

        Embeds only when the model is loaded. Falls back to a full sync when the index needs a rebuild or the
        file is gone or is not a memory file.
        """
        embed = self.embedder is not None and self.embedder.loaded
        try:
            rel_norm, absolute = resolve_memory_path(self.config, rel)
            st = os.lstat(absolute)
        except (PathRefused, OSError):
            return self.sync(embed=embed)
        if self.needs_rebuild() or not stat.S_ISREG(st.st_mode) or not is_indexed(self.config, rel_norm):
            return self.sync(embed=embed)  # DREAMS.md (or memory.md when not configured) is readable, never indexed
        started = time.monotonic()
        report = SyncReport()
        file = MemoryFile(rel_norm, absolute, "memory", st.st_mtime_ns, st.st_size)
        with self._writing(30.0):
            sync_files(self.store, self.config, [file], report, prune=False)
            if embed and self.can_embed:
                self._embed(report, None, None)
        report.chunks_total = self.store.counts()["chunks"]
        report.seconds = time.monotonic() - started
        return report

    # -- search ------------------------------------------------------------------------------
    @_recovering
    def search(
        self,
        query: str,
        mode: str = "hybrid",
        max_results: int | None = None,
        min_score: float | None = None,
        ensure_fresh: bool = True,
        allow_model_load: bool = True,
        corpus: str | None = None,
    ) -> SearchResponse:
        """memory_search.

        Args:
            query: any text; FTS syntax is treated as plain words.
            mode: ``hybrid``, ``keyword`` or ``vector``.
            max_results: defaults to ``search.max_results``.
            min_score: defaults to ``search.min_score``; no result scores below it, on the scale each
                result's ``score`` shows (see :attr:`engine.search.pipeline.Hit.score`).
            ensure_fresh: sync a never-built or stale index first.
            allow_model_load: load the model if needed; when False and it is not loaded, the search runs
                keyword-only with a warning (the TUI uses this while the model loads).
            corpus: ``memory`` (memory files only), ``sessions`` (session transcripts only) or ``all`` / None
                (every configured source), as OpenClaw's ``memory_search`` takes it.

        Raises:
            ValueError: an unknown ``corpus``.
        """
        settings = self.config.search
        max_results = settings.max_results if max_results is None else max(1, int(max_results))
        min_score = settings.min_score if min_score is None else float(min_score)
        warnings: list[str] = list(self._state.recovered)
        sources, corpus_note = corpus_sources(self.config.sources, corpus)
        if corpus_note:
            warnings.append(corpus_note)
        if not sources:
            return SearchResponse((), "none", None, mode, tuple(warnings))
        want_vec = mode in ("hybrid", "vector")
        not_embedded, embed_eta = 0, None
        change = self.model_change() if want_vec else None
        if change:
            # Vectors of another model are noise to this one's query: keyword results until the rebuild,
            # which re-chunks at once and leaves the embedding to the next sync (a search must not stall).
            warnings.append(f"{change}; keyword results until then")
            want_vec = False  # so the fresh-check below rebuilds without embedding
        if ensure_fresh:
            try:
                # The words first (cheap: every file is searchable by keyword at once), then as much embedding as
                # fits SEARCH_EMBED_BUDGET; what does not fit waits (the response says how many and how long).
                if self.needs_rebuild() or self.dirty_files():
                    self.sync(embed=False, wait=2.0, urgent=True)
                if (want_vec and self.can_embed and (allow_model_load or self._model_ready())
                        and self.store.has_pending()):
                    self.embed_some(SEARCH_EMBED_BUDGET, wait=2.0)
            except IndexBusy as exc:
                warnings.append("another process is updating the index; results may be a moment old"
                                if "this process" not in str(exc) else
                                "the index is being embedded; results may be a moment old")
            except IndexAccessError as exc:
                warnings.append(f"the index could not be updated; results may be out of date: {exc}")
        # Relative dates ("yesterday", "上周五") count from today in the notes' zone, as the notes are named.
        parsed = parse(self.store, query, self._query_today(warnings), sources, settings.heuristics)
        warnings.extend(parsed.date_notes)  # "'tomorrow' falls outside the calendar …": the rest still runs
        qvec: list[float] | None = None
        effective = "keyword" if change else mode
        model = self.choice.model if self.choice.provider == "local" else None
        english_only = english_only_model(self.choice.provider, self.choice.model)
        early: Early | None = None
        if want_vec:
            if not self.can_embed or self.embedder is None:
                warnings.append(f"vector search {self.vector_state}; showing keyword results")
                effective = "keyword"
            elif not self.embedder.loaded and not allow_model_load:
                warnings.append("vector: loading model…; showing keyword results")
                effective = "keyword"
            else:
                self.load_model()
                if self._load_error:
                    warnings.append(f"vector search unavailable: {self._load_error}; showing keyword results")
                    effective = "keyword"
                else:
                    # The query is embedded on a worker thread (the model runs in C without the GIL) while this
                    # one reads what needs no vector: the keyword list, the dated chunks, their rows and line
                    # vectors (read_early). The vector leg then waits for the vector; the hits are the same.
                    # When a core is free (_idle_core), and otherwise the vector first, as it always ran.
                    embed = self.embedder.embed_query
                    embedding = _Background(embed, parsed.vector_text) if _idle_core() else None
                    if embedding is not None:
                        embedding.running()  # a model without that signal (remote, MiniLM): done, as it always ran
                        if mode == "hybrid":  # an error here leaves the worker to finish alone (it reads no index)
                            early = read_early(self.store, settings, SearchRequest(
                                parsed, mode, None, max_results, min_score, tuple(sources), model, english_only))
                    try:
                        qvec = embedding.result() if embedding is not None else embed(parsed.vector_text)
                    except EmbeddingError as exc:  # this search degrades; OpenClaw would fail it
                        warnings.append(f"vector search failed ({exc}); showing keyword results")
                        qvec, effective = None, "keyword"
                if qvec is not None:
                    if not any(qvec):
                        qvec = None  # nothing the model can read (e.g. only punctuation)
                        effective = "keyword" if mode == "hybrid" else mode
                    if self.store.has_pending():
                        not_embedded, embed_eta = self.embed_estimate()
        request = SearchRequest(parsed, effective, qvec, max_results, min_score, tuple(sources),
                                model=model, english_only_vectors=english_only)
        results = run_search(self.store, settings, request, self._vindex, early=early)
        return SearchResponse(tuple(results), self.choice.provider if qvec is not None else "none",
                              self.choice.model if qvec is not None else None, effective, tuple(warnings),
                              dates=parsed.resolved, not_embedded=not_embedded, embed_seconds=embed_eta)

    def _query_today(self, warnings: list[str]) -> date:
        """Today for a query's dates: the clock's (:attr:`clock`: ``$MEMDECK_TODAY`` when set, else today in
        :attr:`timezone`); a clock variable that is no date or time is a warning, and the system's today counts."""
        try:
            return self.clock.today()
        except ClockError as exc:
            warnings.append(f"{exc}; counting dates from today")
            return datetime.now(self.timezone).date()

    def _model_ready(self) -> bool:
        return self.embedder is not None and self.embedder.loaded

    def knows(self, statement: str) -> bool:
        """Whether memory already holds ``statement``: :func:`engine.memory.drafting.is_known` on this index.

        The check every door's flush drafts with (deterministic, model-free; it may sync a stale index first).
        """
        from engine.memory.drafting import is_known

        return is_known(statement, self._known_hits)

    is_known = knows  # the name the doors have always called

    def _known_hits(self, statement: str) -> tuple[Hit, ...]:
        # Memory files only: with sessions as a source, every statement would be "known" from its own session.
        return self.search(statement, mode="keyword", max_results=5, min_score=0.0, corpus="memory").results

    def _known(self) -> Callable[[str], bool] | None:
        return self.knows

    def pending_embeddings(self) -> int:
        """Chunks that have no vector yet (0 when vectors cannot be made)."""
        return self.store.pending_count() if self.can_embed else 0

    # -- get ---------------------------------------------------------------------------------
    def get(self, path: str, from_line: int | None = None, lines: int | None = None) -> GetResult:
        """memory_get: a 1-based slice of a memory file (whole file without from/lines), or the entries on a
        session citation's JSONL lines (``sessions/…jsonl#L12-L20``: see :meth:`get_session`).

        Raises:
            PathRefused: the path is not a memory file (or a session, when sessions are a source) or escapes
                the workspace.
            SessionReadError: a cited session cannot be read.
        """
        from engine.sessions.excerpt import is_session_path

        if is_session_path(path):
            return self.get_session(path, from_line, lines)
        return read_memory_slice(self.config, path, from_line, lines)

    # -- review: what it finds (read-only; its cache lives in the data dir) -----------------------------------
    def review(self, kind: str | None = None, since: date | None = None, full: bool = False,
               show_all: bool = False) -> ReviewReport:
        """Review the memory: duplicates, conflicts and facts worth promoting to MEMORY.md (see engine/review).

        Read-only and offline: no workspace file changes and the model is never loaded (the index's line
        vectors, when it has them, second the lexical rules). Only statements new or changed since the last
        review are compared again (``full``: all of them); dismissed findings are hidden and counted.

        Args:
            kind: ``duplicate``, ``conflict`` or ``promote``; None: every kind.
            since: only findings with a statement from a note dated on/after this day (undated files:
                their modification date).
            full: ignore the incremental cache.
            show_all: every finding; else only the confident ones (a score, the measured precision of the
                finding's evidence, of .80 or more), the others counted in ``report.hidden``.

        Raises:
            ValueError: an unknown ``kind``.
        """
        from engine.review.run import run_review

        try:
            store: Store | None = self.store
        except AttributeError:
            store = None
        return run_review(self.config, kind=kind, since=since, full=full, store=store, show_all=show_all)

    # -- review: the writes (each checked against the disk, atomic, undoable, reindexed at once) ----------
    def _review_context(self, reindex: bool = True) -> Any:
        from engine.review.actions import Context

        return Context.of(self, self._reindex_after_review if reindex else None)

    def _reindex_after_review(self, rel: str) -> None:
        with contextlib.suppress(IndexBusy):  # another process is syncing: it picks the file up
            self.reindex_file(rel)

    def review_sections(self, target: str = "MEMORY.md") -> list[str]:
        """The ``## `` sections of ``MEMORY.md`` or ``USER.md`` a statement can be promoted into (file order)."""
        from engine.review.actions import list_sections

        return list_sections(self, target)

    def review_promote(self, item: ReviewItem, section: str | None, target: str = "MEMORY.md",
                       text: str | None = None, finding_id: str = "", reindex: bool = True) -> ReviewAction:
        """Promote a statement into ``target`` under ``## section`` (made when missing; None: the file's end), as
        ``- <statement> (from <citation>)``; ``text`` rewords it. The file is made when missing.

        Every review write reindexes the files it changed at once (searchable immediately); ``reindex=False``
        leaves that to the caller (the TUI queues it behind its own background sync instead of waiting for it).

        Raises:
            StatementChanged: the source no longer says it (nothing written).
            ReviewActionError: the target says it already, or is not MEMORY.md/USER.md.
            ReviewWriteConflict: the target changed on disk while it was written (nothing written).
        """
        from engine.review.actions import promote

        return promote(self._review_context(reindex), item, section, target, text, finding_id)

    def review_supersede(self, finding: Finding, old: int | None = None, current: int | None = None,
                         reindex: bool = True) -> ReviewAction:
        """Mark statement ``old`` (default: all but the current one) with a trailing
        ``(superseded YYYY-MM-DD → <current citation>)``; today is the user's (``MEMDECK_TODAY`` pins it).

        Raises:
            StatementChanged, ReviewActionError, ReviewWriteConflict: nothing was written.
        """
        from engine.review.actions import supersede

        return supersede(self._review_context(reindex), finding, old, current)

    def review_delete(self, finding: Finding, index: int, reindex: bool = True) -> ReviewAction:
        """Delete one copy of a duplicate: statement ``index``'s lines (another statement must still say it).

        Raises:
            StatementChanged, ReviewActionError, ReviewWriteConflict: nothing was written.
        """
        from engine.review.actions import delete_copy

        return delete_copy(self._review_context(reindex), finding, index)

    def review_merge(self, finding: Finding, text: str, indices: tuple[int, ...] | None = None,
                     reindex: bool = True) -> ReviewAction:
        """Merge statements (default: all) into one line: the first becomes ``text``, the others are deleted.

        Raises:
            StatementChanged, ReviewActionError, ReviewWriteConflict: nothing was written.
        """
        from engine.review.actions import merge

        return merge(self._review_context(reindex), finding, text, indices)

    def review_move(self, finding: Finding, reindex: bool = True) -> ReviewAction:
        """Move a ``budget`` finding's section out of MEMORY.md/USER.md into its memory/*.md note (both files in
        one atomic action, a pointer line left under the heading; undone by :meth:`review_undo`).

        Raises:
            StatementChanged: the section changed since the review. ReviewWriteConflict: a file changed while
            it was written (nothing written).
        """
        from engine.review.actions import move_section

        return move_section(self._review_context(reindex), finding)

    def review_dismiss(self, finding: Finding) -> ReviewAction:
        """Dismiss a finding: the review does not show it again (memdeck's data dir; undo brings it back)."""
        from engine.review.actions import dismiss

        return dismiss(self._review_context(), finding)

    def review_apply(self, finding_id: str, action: str, item: int | None = None, section: str | None = None,
                     target: str | None = None, text: str | None = None) -> ReviewAction:
        """Act on a finding by its id (the doors' entry point): find it in a fresh review, then call the action
        the Review screen calls, with the choices it offers first.

        ``item``: the statement (0-based) — default: promote's only one, a duplicate's last deletable copy, every older
        statement of a conflict (superseded by the finding's current one). ``section``/``target`` (promote):
        default the review's suggestion, else the target's first section. ``text``: promote's wording or the
        merged line (default: the statement; for a merge :func:`merge_text`, the longest statement, only when it
        holds every word and value of the others — else a merge needs ``text``).

        Raises:
            ReviewActionError: no such finding now (stale: its statements changed, it was acted on or
                dismissed), or ``action`` is not one its kind allows; StatementChanged, ReviewWriteConflict as the
                action raises them (nothing written).
        """
        from engine.review.actions import (
            ReviewActionError,
            merge_keeps_all,
            merge_text,
            promote_target,
            statement_text,
        )

        allowed = {"duplicate": ("delete", "merge", "dismiss"), "conflict": ("supersede", "merge", "dismiss"),
                   "promote": ("promote", "dismiss"), "budget": ("move", "dismiss")}
        finding = next((f for f in self.review(show_all=True).findings if f.id == finding_id), None)
        if finding is None:
            raise ReviewActionError(f"no finding {finding_id!r} in a fresh review (its statements changed, it was "
                                    "acted on or dismissed): run the review again for current ids")
        if action not in allowed[finding.kind]:
            raise ReviewActionError(f"a {finding.kind} finding takes {', '.join(allowed[finding.kind])}, "
                                    f"not {action!r}")
        if item is not None and not 0 <= item < len(finding.items):
            raise ReviewActionError(f"finding {finding.id} has {len(finding.items)} statement(s); "
                                    f"there is no #{item + 1}")
        if action == "promote":
            index = len(finding.items) - 1 if item is None else item
            suggested_target, suggested = promote_target(finding)
            into = target or suggested_target
            if section is None:
                section = suggested if into == suggested_target else None
                if section is None:
                    section = next(iter(self.review_sections(into)), None)
            chosen = finding.items[index]
            return self.review_promote(chosen, section, into, text or statement_text(chosen.text), finding.id)
        if action == "supersede":
            if item is not None and item == finding.current:
                raise ReviewActionError(f"#{item + 1} is the likely current statement: pick an older one")
            return self.review_supersede(finding, item)
        if action == "delete":
            default = finding.deletable[-1] if finding.deletable else len(finding.items) - 1
            return self.review_delete(finding, default if item is None else item)
        if action == "merge":
            if not text and not merge_keeps_all(finding):
                raise ReviewActionError(
                    f"no statement of {finding.id} holds every word and value of the others, so a merge into one "
                    "of them would lose a detail: give the merged line with --text")
            return self.review_merge(finding, text or merge_text(finding))
        if action == "move":
            return self.review_move(finding)
        return self.review_dismiss(finding)

    def review_undo(self, reindex: bool = True) -> ReviewAction:
        """Undo the last review action: its files' text before, byte for byte, or the dismissal forgotten.

        Raises:
            NothingToUndo: nothing is recorded.
            ReviewWriteConflict: a file changed since the action (nothing undone).
        """
        from engine.review.actions import undo

        return undo(self._review_context(reindex))

    def review_last_action(self) -> str | None:
        """What :meth:`review_undo` would undo, in words (None: nothing)."""
        from engine.review.actions import last_action

        return last_action(self._review_context())

    # -- status ------------------------------------------------------------------------------
    @_recovering
    def audit(self, since: date | None = None, session: str | None = None, cache: bool = True) -> Any:
        """What people said in sessions that memory does not hold yet (the flush drafter's statements minus
        :meth:`knows`), per session against its compactions and flushes. Read-only (see engine/review/audit.py);
        ``cache``: reuse (and update) the per-session cache in the data dir (engine/review/audit_cache.py).

        Raises:
            SessionReadError: ``session`` names no session, or more than one.
        """
        from engine.review.audit import run_audit

        def draft(transcript: Transcript) -> Draft:
            return self.draft_flush(transcript, "extractive", is_known=lambda _text: False)

        def read(info: Any) -> Transcript:
            return self.read_session(info.path)

        if session:
            # An id, an id prefix or a citation names exactly one session (else SessionReadError, as flush says).
            session = self.find_session(session).stem
        from engine.memory.drafting import is_known

        # The index is brought up to date once, not before each statement's search (a stat of every file each).
        try:
            if self.needs_rebuild() or self.dirty_files():
                self.sync(embed=False, wait=2.0, urgent=True)
            fresh = True
        except (IndexBusy, IndexAccessError):
            fresh = False  # each search tries again (and warns)

        def hits(statement: str) -> tuple[Hit, ...]:
            return self.search(statement, mode="keyword", max_results=5, min_score=0.0, corpus="memory",
                               ensure_fresh=not fresh).results

        def known(statement: str) -> bool:
            return is_known(statement, hits)  # the rule of :meth:`knows`, on the index as it is now

        found = None
        if cache:
            from engine.review.audit_cache import AuditCache, cache_path

            found = AuditCache.load(cache_path(self.config.home, self.config.index_path.stem),
                                    self._memory_fingerprint())
        return run_audit(self.list_sessions(), read, draft, known, since=since, session=session, cache=found)

    def _memory_fingerprint(self) -> str:
        """What :meth:`knows` reads: the indexed memory files (path, mtime, size) and the search settings.
        Another fingerprint → the audit's known verdicts are decided again."""
        stamps = sorted((rel, st) for rel, st in self._indexed_stamps().items() if not rel.startswith("sessions/"))
        raw = json.dumps([stamps, asdict(self.config.search), self._identity()], sort_keys=True, default=str)
        return hashlib.sha256(raw.encode()).hexdigest()[:24]

    def recover_statements(self, statements: Sequence[Any], target: str = "daily", section: str | None = None,
                           reindex: bool = True) -> ReviewAction:
        """Append audit statements (:class:`engine.review.audit.Lost`) to memory in one atomic action, undone by
        :meth:`review_undo`: ``daily`` to the daily note of the day each was said (one block per day), or one
        statement to ``MEMORY.md`` (or ``USER.md``) under ``## section`` (see :func:`engine.review.actions.recover`).

        Raises:
            ReviewActionError: nothing to write, an unknown target, several statements for MEMORY.md/USER.md.
            ReviewWriteConflict: a file changed while it was written (nothing written).
        """
        from engine.review.actions import recover

        return recover(self._review_context(reindex), statements, target, section)

    def bootstrap_budget(self) -> BootstrapBudget:
        """What a main session of this agent receives of the workspace's bootstrap files (``MEMORY.md``,
        ``USER.md``, ...) under OpenClaw's limits, read from its config (``openclaw.json``) or its defaults."""
        return bootstrap_budget(self.config.workspace, self.config.agent)

    def status(self, deep: bool = False) -> Status:
        """The index's state; ``deep`` loads the model and embeds a probe."""
        scan_issues: list[str] = []
        links: list[FolderLink] = []
        on_disk = source_stats(self.config, scan_issues, self._indexed_stamps, links)  # only counts are shown
        counts = self.store.counts()
        driver = self.store.driver
        assert driver is not None
        probe: dict[str, Any] | None = None
        if deep:
            probe = self._probe()
        identity = self.store.get_identity()
        if identity is None:
            identity_status = "empty" if counts["files"] == 0 else "missing"
        else:
            identity_status = "valid" if identity == self._identity() else "stale (settings changed; next sync rebuilds)"
        change = self.model_change()
        if change:
            identity_status = f"stale ({change} on the next sync)"
            scan_issues.insert(0, change)  # first: the TUI's status pane shows the first issue
        elif counts["pending"] and (began := self.store.get_meta(MODEL_CHANGE_META)):
            scan_issues.insert(0, f"{began}: {counts['pending']:,} to go")
        fts_ok = True
        try:
            queries.fts_probe(self.store.conn)
        except DB_ERRORS:
            fts_ok = False
        state = self.vector_state
        embedded = counts["chunks"] - counts["pending"]
        eta = None
        if counts["pending"] and self.embedder is not None and self.store.vec_available:
            if state in ("ready", "not-loaded"):
                state = f"vectors {embedded:,}/{counts['chunks']:,}"  # never "ready" while chunks wait
            rate = embed_rate(self.store, self.embedder)
            eta = queries.pending_chars(self.store.conn) / rate if rate else None
        return Status(
            workspace=str(self.config.workspace),
            index_path=str(self.config.index_path),
            index_bytes=self.store.size_bytes(),
            driver=driver.name,
            sqlite_version=driver.sqlite_version,
            vec_version=driver.vec_version,
            requested_provider=self.choice.requested,
            provider=self.choice.provider,
            provider_reason=self.choice.reason,
            model=self.choice.model,
            dims=self._vector_dims(),
            files_indexed=counts["files"],
            files_on_disk=len(on_disk),
            chunks=counts["chunks"],
            dirty_files=len(self._changed_since_indexed(on_disk)),
            pending_embeddings=counts["pending"] if self.embedder is not None else 0,
            vector_state=state,
            vector_error=state.split(": ", 1)[1] if state.startswith("unavailable") else None,
            fts_ready=fts_ok,
            cache_entries=counts["cache"],
            sources=self.config.sources,
            identity_status=identity_status,
            last_sync=self._state.last_sync,
            issues=tuple(scan_issues),
            recovered=tuple(dict.fromkeys([*self._state.recovered, *self._persisted_recovery()])),
            probe=probe,
            provider_url=self.choice.base_url,
            session_source=self.describe_sessions(),
            folder_links=tuple(links),
            bootstrap=self.bootstrap_budget(),
            embedded_chunks=embedded,
            embed_seconds=None if eta is None else round(eta, 1),
        )

    def _persisted_recovery(self) -> list[str]:
        raw = self.store.get_meta(RECOVERED_META)
        try:
            value = json.loads(raw) if raw else None
        except ValueError:
            return []
        if not isinstance(value, dict) or not isinstance(value.get("note"), str):
            return []
        when = f"{datetime.fromtimestamp(float(value.get('at') or 0), self.timezone):%Y-%m-%d %H:%M}"
        return [f"{value['note']} ({when})"] if value["note"] not in self._state.recovered else []

    def _probe(self) -> dict[str, Any]:
        if self.embedder is None:
            return {"ok": False, "error": self.choice.reason}
        started = time.monotonic()
        try:
            self.load_model()
            if self._load_error:
                return {"ok": False, "error": self._load_error}
            vec = self.embedder.embed_query("ping")
            return {"ok": True, "dims": len(vec), "seconds": round(time.monotonic() - started, 3)}
        except Exception as exc:  # a probe reports, it never raises
            return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}


CORPORA = ("memory", "sessions", "all")
"""The ``corpus`` values search takes (OpenClaw's ``wiki`` corpus is not memdeck's)."""


def corpus_sources(configured: tuple[str, ...], corpus: str | None) -> tuple[tuple[str, ...], str | None]:
    """The sources a search of ``corpus`` covers, and a note when that corpus is not configured.

    Raises:
        ValueError: ``corpus`` is not one of :data:`CORPORA` (``wiki`` names OpenClaw's wiki, which memdeck
            does not have).
    """
    if corpus is None or corpus == "all":
        return configured, None
    if corpus == "wiki":
        raise ValueError("corpus 'wiki' is not supported by memdeck (it has memory, sessions or all)")
    if corpus not in CORPORA:
        raise ValueError(f"unknown corpus {corpus!r} (one of {', '.join(CORPORA)})")
    if corpus not in configured:
        return (), (f"{corpus} is not a search source here; add \"{corpus}\" to sources in the config"
                    if corpus == "sessions" else "memory is not a search source here")
    return (corpus,), None


def _inode(path: Path) -> int | None:
    try:
        return os.stat(path).st_ino
    except OSError:
        return None

