"""Reading OpenClaw 2026.9's per-agent SQLite database (sessions and transcripts), strictly read-only."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine.display import plural
from engine.errors import MemdeckError
from engine.sessions.model import as_int
from engine.textio import scrub_json, scrub_surrogates

KNOWN_SCHEMA_VERSION = 23
"""``PRAGMA user_version`` of the OpenClaw release this reader was written against (2026.9.6)."""

DEFAULT_BUSY_TIMEOUT = 3.0
"""Seconds to wait for a lock; OpenClaw's own writer waits 5 s, so a reader never outwaits it."""

DB_FILE_NAME = "openclaw-agent.sqlite"

BATCH_ROWS = 128
"""Transcript rows read per short read transaction (a row holds at most 4 MiB, by OpenClaw's CHECK)."""

READ_LIVE = "live"
"""Opened with ``mode=ro``: sees OpenClaw's WAL, takes shared locks like any reader."""

READ_SNAPSHOT = "snapshot"
"""Opened with ``immutable=1``: reads only the main file, takes no locks and touches no sidecar."""

_HEADER_MAGIC = b"SQLite format 3\x00"

# Primary SQLite result codes (the low byte of an extended code).
_SQLITE_PERM = 3
_SQLITE_BUSY = 5
_SQLITE_LOCKED = 6
_SQLITE_READONLY = 8
_SQLITE_IOERR = 10
_SQLITE_CORRUPT = 11
_SQLITE_CANTOPEN = 14
_SQLITE_NOTADB = 26
_FALLBACK_CODES = frozenset({_SQLITE_PERM, _SQLITE_READONLY, _SQLITE_IOERR, _SQLITE_CANTOPEN})


class AgentDbError(MemdeckError):
    """The OpenClaw agent database cannot be read (missing, locked, damaged, not an agent database).

    Attributes:
        reason: ``missing``, ``locked``, ``damaged``, ``not-a-database``, ``unsupported`` (an SQLite
            database that is not OpenClaw's), ``permission``, ``needs-zstandard`` or ``unreadable``.
    """

    def __init__(self, message: str, reason: str = "unreadable") -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class FlushRecord:
    """OpenClaw's own memory-flush record for a session (``entry_json.memoryFlush``).

    Attributes:
        kind: what OpenClaw recorded (e.g. the flush outcome), as written.
        compaction_count: the session's compaction count at that flush.
        failure_count: consecutive failed flushes, when OpenClaw recorded any.
        at: when it flushed; only older entries (``memoryFlushAt``) carry a time.
    """

    kind: str | None
    compaction_count: int | None
    failure_count: int | None = None
    at: datetime | None = None


@dataclass(frozen=True)
class DbSession:
    """One transcript (session id) in the agent database, joined with its session key's entry.

    Token counts, compaction count and flush state come from the key's ``entry_json`` and apply
    only to the key's current transcript (``current``); an earlier transcript of the same key
    (after ``/new`` or ``/reset``) is listed as archived with those fields empty.

    Attributes:
        session_id: the transcript id (the JSONL header's ``id``).
        session_key: e.g. ``agent:main:main`` or ``agent:main:recovered:<id>``.
        title: what OpenClaw shows: the label, else the display name.
        label: the user-set label.
        display_name: the display name (doctor/gateway fill it from the first user message).
        chat_type: ``direct``, ``group`` or ``channel``.
        channel: the external channel (``telegram``, ...); None for webchat and internal sessions.
        model_provider: e.g. ``openai``.
        model: e.g. ``gpt-5.4``.
        input_tokens: the entry's ``inputTokens``.
        output_tokens: the entry's ``outputTokens``.
        total_tokens: the entry's ``totalTokens``.
        total_tokens_fresh: the entry's ``totalTokensFresh`` (False: the total is stale).
        context_tokens: the entry's ``contextTokens`` (the model's context window).
        compaction_count: the entry's ``compactionCount``, else the transcript's compaction entries.
        memory_flush: OpenClaw's flush record, if any.
        archived: archived in OpenClaw (``archived_at`` set, a ``recovered`` key, or not the key's
            current transcript).
        archived_at: when it was archived.
        current: True when this is its key's current transcript.
        status: ``running``, ``done``, ``failed``, ``killed`` or ``timeout``, when recorded.
        started: the transcript's start (``started_at``, else its first entry's time).
        ended: ``ended_at``.
        updated: the key's (or the window's) ``updated_at``.
        last_event: the time of the newest transcript entry.
        event_count: transcript rows, the header included (= JSONL lines).
        last_seq: the highest ``seq`` (its citation line is ``last_seq + 1``).
        message_count: ``message`` entries (all roles), from OpenClaw's entry index; None without it.
        last_message: the time of the newest ``message`` entry, when known.
        size: the transcript's size as JSONL (every line's UTF-8 bytes plus its newline).
    """

    session_id: str
    session_key: str | None
    title: str | None
    label: str | None
    display_name: str | None
    chat_type: str | None
    channel: str | None
    model_provider: str | None
    model: str | None
    input_tokens: int | None
    output_tokens: int | None
    total_tokens: int | None
    total_tokens_fresh: bool | None
    context_tokens: int | None
    compaction_count: int
    memory_flush: FlushRecord | None
    archived: bool
    archived_at: datetime | None
    current: bool
    status: str | None
    started: datetime | None
    ended: datetime | None
    updated: datetime | None
    last_event: datetime | None
    event_count: int
    last_seq: int | None
    message_count: int | None = None
    last_message: datetime | None = None
    size: int = 0

    @property
    def last_activity(self) -> datetime | None:
        """The newest entry's time, else ``updated``."""
        return self.last_event or self.updated


@dataclass(frozen=True)
class TranscriptStats:
    """What changes when a transcript grows or is rewritten, read in one cheap query.

    Attributes:
        session_id: the transcript id.
        rows: how many rows (JSONL lines) it has.
        last_seq: the highest ``seq``.
        first_ms: the oldest row's ``created_at`` (epoch ms), when recorded.
        last_ms: the newest row's ``created_at`` (epoch ms), when recorded.
        size: its size as JSONL bytes (each row's UTF-8 bytes plus a newline).
    """

    session_id: str
    rows: int
    last_seq: int | None
    first_ms: int | None
    last_ms: int | None
    size: int


def citation_line(seq: int) -> int:
    """The JSONL line number that cites the entry stored at ``seq`` (``seq`` counts from 0)."""
    return seq + 1


def seq_for_line(line: int) -> int:
    """The ``seq`` of the entry cited by JSONL line number ``line``."""
    return line - 1


# ---------------------------------------------------------------------------------------------
# Finding the database


def agent_db_path(state_dir: Path | None = None, agent: str = "main") -> Path:
    """Where OpenClaw keeps an agent's database: ``<state>/agents/<agent>/agent/openclaw-agent.sqlite``.

    Args:
        state_dir: OpenClaw's state folder; defaults to ``$OPENCLAW_STATE_DIR``, else ``~/.openclaw``.
        agent: the agent id.

    Raises:
        AgentDbError: the agent id could name another folder (empty, ``..``, a path separator).
    """
    if not agent or agent in (".", "..") or "/" in agent or "\\" in agent or "\x00" in agent:
        raise AgentDbError(f"invalid OpenClaw agent id {agent!r}")
    if state_dir is None:
        env = os.environ.get("OPENCLAW_STATE_DIR", "").strip()
        state_dir = Path(env) if env else Path.home() / ".openclaw"
    return Path(state_dir).expanduser() / "agents" / agent / "agent" / DB_FILE_NAME


def find_agent_db(state_dir: Path | None = None, agent: str = "main") -> Path | None:
    """The agent's database file if it exists (see :func:`agent_db_path`), else None."""
    path = agent_db_path(state_dir, agent)
    return path if path.is_file() else None


# ---------------------------------------------------------------------------------------------
# Small typed accessors for entry_json


_int = as_int  # the sessions model's rule: a finite number, not a bool


def _str(value: Any) -> str | None:
    return scrub_surrogates(value) if isinstance(value, str) and value else None


def _ms(value: Any) -> datetime | None:
    number = _int(value)
    if number is None or number <= 0:
        return None
    try:
        return datetime.fromtimestamp(number / 1000.0, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _flush_record(entry: dict[str, Any]) -> FlushRecord | None:
    flush = entry.get("memoryFlush")
    if isinstance(flush, dict):
        return FlushRecord(
            kind=_str(flush.get("kind")),
            compaction_count=_int(flush.get("compactionCount")),
            failure_count=_int(flush.get("failureCount")),
            at=_ms(flush.get("at")),
        )
    # Entries OpenClaw has not migrated yet still carry the retired fields.
    at, count = _ms(entry.get("memoryFlushAt")), _int(entry.get("memoryFlushCompactionCount"))
    if at is None and count is None:
        return None
    return FlushRecord(kind=None, compaction_count=count, at=at)


def _entry(text: Any) -> dict[str, Any]:
    if not isinstance(text, str):
        return {}
    try:
        data = scrub_json(json.loads(text))
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


# ---------------------------------------------------------------------------------------------
# Opening


def _connect(uri: str, timeout: float) -> sqlite3.Connection:
    """Open one connection (a seam for tests that simulate an unwritable folder)."""
    return sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None, check_same_thread=False)


def _decode_text(data: bytes) -> str:
    """A TEXT value from the database: UTF-8, bad bytes as U+FFFD (the one decode point for its columns)."""
    return data.decode("utf-8", errors="replace")


def _primary_code(exc: sqlite3.Error) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return code & 0xFF if isinstance(code, int) else None


class AgentDb:
    """An OpenClaw agent database opened for reading; holds no connection between calls.

    Every call opens its own connection with a busy timeout and ends its read transaction before
    returning, so OpenClaw's writer is never held up; nothing is ever written, and the ``-wal`` /
    ``-shm`` sidecars are never created, deleted or renamed:

    * sidecars present (OpenClaw has the database open): ``mode=ro``, which sees the WAL;
    * no sidecars (nobody has it open, every commit is in the main file): ``immutable=1``, which
      creates no sidecar (``mode=ro`` on a WAL database would create both and leave them behind);
    * ``mode=ro`` refused (a folder or ``-shm`` without write access): ``immutable=1`` with a
      warning, since changes OpenClaw has not checkpointed yet are then not visible.

    Attributes:
        path: the database file.
        busy_timeout: seconds a call waits for a lock before it fails.
        schema_version: ``PRAGMA user_version`` (23 for OpenClaw 2026.9).
        app_version: the OpenClaw version that created the schema, when recorded.
        read_mode: :data:`READ_LIVE` or :data:`READ_SNAPSHOT` (the last call's).
        warnings: what may be missing or stale, in words a person can act on.
    """

    def __init__(self, path: Path, busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> None:
        self.path = Path(path)
        self.busy_timeout = busy_timeout
        self.read_mode = READ_SNAPSHOT
        self.warnings: tuple[str, ...] = ()
        self._mode_warning: str | None = None
        self._real = self._check_file()
        self.schema_version = 0
        self.app_version: str | None = None
        self._columns: dict[str, frozenset[str]] = {}
        self._load_schema()

    # -- public ------------------------------------------------------------------------------

    @property
    def warning(self) -> str | None:
        """All warnings in one line, or None."""
        return "; ".join(self.warnings) if self.warnings else None

    def has_table(self, name: str) -> bool:
        """Whether the database has table ``name``."""
        return name in self._columns

    def list_sessions(self) -> list[DbSession]:
        """Every transcript in the database, most recent activity first.

        Raises:
            AgentDbError: the database is locked past the busy timeout, damaged, or unreadable.
        """
        with self._read() as conn:
            conn.execute("BEGIN")  # one snapshot for all the queries below, ended at once
            windows = self._windows(conn)
            nodes = self._nodes(conn)
            stats = self._event_stats(conn)
            compactions = self._compaction_counts(conn)
            messages = self._message_stats(conn)
            conn.execute("COMMIT")
        by_current = {node["current_session_id"]: node for node in nodes.values()}
        ids = sorted(set(windows) | set(stats) | {sid for sid in by_current if sid})
        sessions = [
            self._session(sid, windows.get(sid, {}), by_current, nodes, stats.get(sid), compactions.get(sid),
                          messages.get(sid) if messages is not None else None, messages is not None)
            for sid in ids
        ]
        floor = datetime.min.replace(tzinfo=UTC)
        sessions.sort(key=lambda s: (s.last_activity or floor, s.session_id), reverse=True)
        return sessions

    def event_lines(
        self,
        session_id: str,
        *,
        from_seq: int = 0,
        skipped: list[tuple[int, str]] | None = None,
    ) -> Iterator[tuple[int, bytes]]:
        """Yield ``(seq, line)`` for a transcript in ``seq`` order: each JSONL line's exact bytes.

        ``seq`` counts from 0 (the header); the entry is cited as JSONL line ``seq + 1``. Rows are
        read in batches, each batch its own short read transaction. A zstd-stored row is decoded
        and checked against its recorded size.

        Args:
            session_id: the transcript id.
            from_seq: start at this ``seq`` (to read only what was appended since).
            skipped: when given, rows that cannot be decoded are recorded here as
                ``(seq, reason)`` and left out; otherwise such a row raises.

        Raises:
            AgentDbError: the database cannot be read, or a compressed row cannot be decoded
                (unless ``skipped`` is given).
        """
        events = self._columns.get("transcript_events", frozenset())
        zstd = "event_zstd" in events
        size = "event_utf8_bytes" in events
        sql = (
            "SELECT seq, CAST(event_json AS BLOB), "
            f"{'event_zstd' if zstd else 'NULL'}, {'event_utf8_bytes' if size else 'NULL'} "
            "FROM transcript_events WHERE session_id = ? AND seq >= ? ORDER BY seq LIMIT ?"
        )
        next_seq = from_seq
        while True:
            # A connection per batch: a paused iterator holds nothing open, and each batch
            # re-decides live or snapshot (OpenClaw may have opened the database meanwhile).
            with self._read() as conn:
                rows = self._fetch(conn, sql, (session_id, next_seq, BATCH_ROWS))
            for seq, text, blob, expected in rows:
                try:
                    yield seq, self._line(text, blob, expected)
                except AgentDbError as exc:
                    if skipped is None:
                        raise AgentDbError(f"{self.path}: session {session_id} line {seq + 1}: {exc}") from exc
                    skipped.append((seq, str(exc)))
            if len(rows) < BATCH_ROWS:
                return
            next_seq = rows[-1][0] + 1

    def event_lines_backward(
        self,
        session_id: str,
        *,
        skipped: list[tuple[int, str]] | None = None,
        batch: int = 16,
    ) -> Iterator[tuple[int, bytes]]:
        """Yield ``(seq, line)`` newest first, in small batches (to find the last reply without reading all).

        Args:
            session_id: the transcript id.
            skipped: as for :meth:`event_lines`.
            batch: rows per short read transaction.

        Raises:
            AgentDbError: as for :meth:`event_lines`.
        """
        events = self._columns.get("transcript_events", frozenset())
        sql = (
            "SELECT seq, CAST(event_json AS BLOB), "
            f"{'event_zstd' if 'event_zstd' in events else 'NULL'}, "
            f"{'event_utf8_bytes' if 'event_utf8_bytes' in events else 'NULL'} "
            "FROM transcript_events WHERE session_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?"
        )
        below = 1 << 62
        while True:
            with self._read() as conn:
                rows = self._fetch(conn, sql, (session_id, below, max(1, batch)))
            for seq, text, blob, expected in rows:
                try:
                    yield seq, self._line(text, blob, expected)
                except AgentDbError as exc:
                    if skipped is None:
                        raise AgentDbError(f"{self.path}: session {session_id} line {seq + 1}: {exc}") from exc
                    skipped.append((seq, str(exc)))
            if len(rows) < max(1, batch):
                return
            below = rows[-1][0]
            batch = min(BATCH_ROWS, batch * 2)  # the last reply is usually near the end: start small

    def transcript_stats(self, session_id: str | None = None) -> dict[str, TranscriptStats]:
        """Per transcript: rows, last ``seq``, first/last ``created_at`` and JSONL size (one query); with
        ``session_id`` only that transcript's (its rows only are counted: reading each session stays linear).

        Raises:
            AgentDbError: the database cannot be read.
        """
        with self._read() as conn:
            stats = self._event_stats(conn, session_id)
        return {
            sid: TranscriptStats(sid, count, last_seq, _int(first), _int(last), size)
            for sid, (count, last_seq, first, last, size) in stats.items()
        }

    def active_branch(self, session_id: str) -> list[int]:
        """The ``seq`` of each entry on the transcript's current branch, root to leaf (no header).

        Uses OpenClaw's ``session_transcript_active_events`` when its index is current; otherwise
        walks ``parentId`` links back from the leaf.

        Raises:
            AgentDbError: the database cannot be read.
        """
        with self._read() as conn:
            conn.execute("BEGIN")
            seqs = self._indexed_branch(conn, session_id)
            links, leaf = self._links(conn, session_id) if seqs is None else ({}, None)
            conn.execute("COMMIT")
        if seqs is not None:
            return seqs
        if not links:
            links, leaf = self._links_from_lines(session_id)
        return _walk(links, leaf)

    # -- opening -----------------------------------------------------------------------------

    def _check_file(self) -> Path:
        path = self.path
        try:
            if not path.exists():
                raise AgentDbError(f"OpenClaw agent database not found: {path}", "missing")
            if not path.is_file():
                raise AgentDbError(f"{path} is not a file", "unsupported")
            real = Path(os.path.realpath(path))
            with open(real, "rb") as fh:
                header = fh.read(100)
        except PermissionError as exc:
            raise AgentDbError(f"permission denied reading {path}", "permission") from exc
        except OSError as exc:
            raise AgentDbError(f"cannot read {path}: {exc.strerror or exc}") from exc
        if not header:
            raise AgentDbError(f"{path} is empty, not an OpenClaw agent database", "not-a-database")
        if not header.startswith(_HEADER_MAGIC) or len(header) < 100:
            raise AgentDbError(f"{path} is not an SQLite database (not an OpenClaw agent database)", "not-a-database")
        return real

    def _choose_mode(self) -> tuple[str, str | None]:
        """Decide how to open: ``ro`` when OpenClaw's sidecars exist, else ``immutable``."""
        wal = Path(f"{self._real}-wal").exists()
        shm = Path(f"{self._real}-shm").exists()
        if wal and shm:
            return "ro", None
        if wal:
            # mode=ro would create the missing -shm; an exclusive-mode writer or an unclean stop.
            return "immutable", (
                f"{self.path.name}-wal exists without -shm (OpenClaw was not closed cleanly or holds "
                "the database exclusively); reading the main file only, so its newest changes may be missing"
            )
        return "immutable", None

    def _open(self) -> sqlite3.Connection:
        mode, warning = self._choose_mode()
        base = self._real.as_uri()
        conn: sqlite3.Connection | None = None
        if mode == "ro":
            try:
                conn = _connect(f"{base}?mode=ro", self.busy_timeout)
                # The first statement opens the WAL and -shm: fail here, not halfway through a read.
                conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
            except sqlite3.Error as exc:
                if conn is not None:
                    conn.close()
                conn = None
                if _primary_code(exc) not in _FALLBACK_CODES:
                    raise self._error(exc) from exc
                warning = (
                    f"could not open {self.path.name} live read-only ({exc}): you cannot write its folder "
                    "or open its -wal/-shm, so this is a snapshot of the main file; changes OpenClaw "
                    "has not checkpointed yet are missing"
                )
        if conn is None:
            try:
                conn = _connect(f"{base}?mode=ro&immutable=1", self.busy_timeout)
            except sqlite3.Error as exc:
                raise self._error(exc) from exc
        self.read_mode = READ_LIVE if mode == "ro" and warning is None else READ_SNAPSHOT
        if warning != self._mode_warning:
            self._mode_warning = warning
            self._refresh_warnings()
        # OpenClaw's TEXT columns are read as UTF-8 with bad bytes replaced: one damaged name must not
        # fail the whole listing ("Could not decode to UTF-8 column").
        conn.text_factory = _decode_text
        try:
            conn.execute("PRAGMA query_only = ON")
        except sqlite3.Error as exc:
            conn.close()
            raise self._error(exc) from exc
        return conn

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        conn = self._open()
        try:
            yield conn
        except sqlite3.Error as exc:
            raise self._error(exc) from exc
        finally:
            with suppress(sqlite3.Error):
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
            conn.close()

    def _fetch(self, conn: sqlite3.Connection, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        try:
            return conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise self._error(exc) from exc

    def _error(self, exc: sqlite3.Error) -> AgentDbError:
        code = _primary_code(exc)
        where = str(self.path)
        if code in (_SQLITE_BUSY, _SQLITE_LOCKED):
            return AgentDbError(
                f"{where}: the OpenClaw database stayed locked by another process for more than "
                f"{self.busy_timeout:g} s; try again in a moment", "locked"
            )
        if code == _SQLITE_NOTADB:
            return AgentDbError(f"{where} is not an SQLite database (or it is encrypted)", "not-a-database")
        if code == _SQLITE_CORRUPT:
            return AgentDbError(
                f"{where}: the OpenClaw database is damaged ({exc}); memdeck only reads it — "
                "OpenClaw's `openclaw doctor` can check it", "damaged"
            )
        if code in (_SQLITE_CANTOPEN, _SQLITE_PERM):
            return AgentDbError(f"cannot open {where}: {exc} (check that you may read it and its folder)",
                                "permission")
        return AgentDbError(f"{where}: cannot read the OpenClaw database: {exc}")

    def _load_schema(self) -> None:
        with self._read() as conn:
            conn.execute("BEGIN")
            # One read transaction for the whole schema.
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            tables = [
                row[0]
                for row in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
            ]
            columns = {
                table: frozenset(
                    row[0] for row in conn.execute("SELECT name FROM pragma_table_info(?)", (table,))
                )
                for table in tables
            }
            app_version = None
            if "app_version" in columns.get("schema_meta", frozenset()):
                row = conn.execute(
                    "SELECT app_version FROM schema_meta WHERE meta_key = 'primary'"
                ).fetchone()
                app_version = _str(row[0]) if row else None
            conn.execute("COMMIT")
        self.schema_version = int(version) if isinstance(version, int) else 0
        self.app_version = app_version
        self._columns = columns
        events = columns.get("transcript_events")
        if events is None or not {"session_id", "seq", "event_json"} <= events:
            raise AgentDbError(
                f"{self.path} is an SQLite database but not an OpenClaw agent database "
                "(no transcript_events table with session_id, seq, event_json)", "unsupported"
            )
        self._refresh_warnings()

    def _refresh_warnings(self) -> None:
        warnings: list[str] = []
        if self.schema_version > KNOWN_SCHEMA_VERSION:
            warnings.append(
                f"OpenClaw database schema {self.schema_version} is newer than the {KNOWN_SCHEMA_VERSION} "
                "memdeck knows; reading what it recognises — update memdeck if something is missing"
            )
        elif 0 < self.schema_version < KNOWN_SCHEMA_VERSION:
            warnings.append(
                f"OpenClaw database schema {self.schema_version} is older than {KNOWN_SCHEMA_VERSION}; "
                "reading what it recognises"
            )
        missing = [t for t in ("session_windows", "session_nodes") if t not in self._columns]
        if self._columns and missing:
            warnings.append(f"no {' or '.join(missing)} table: session titles, keys and token counts are missing")
        if self._mode_warning:
            warnings.append(self._mode_warning)
        self.warnings = tuple(warnings)

    # -- queries -----------------------------------------------------------------------------

    def _select(self, table: str, alias: str, wanted: tuple[str, ...]) -> str:
        have = self._columns.get(table, frozenset())
        return ", ".join(f"{alias}.{name}" if name in have else f"NULL AS {name}" for name in wanted)

    _WINDOW_COLUMNS = (
        "session_id", "session_key", "chat_type", "channel", "model_provider", "model", "display_name",
        "started_at", "ended_at", "created_at", "updated_at", "status",
    )
    _NODE_COLUMNS = (
        "session_key", "current_session_id", "entry_json", "label", "display_name", "archived_at",
        "updated_at", "status",
    )

    def _windows(self, conn: sqlite3.Connection) -> dict[str, dict[str, Any]]:
        if "session_id" not in self._columns.get("session_windows", frozenset()):
            return {}
        sql = f"SELECT {self._select('session_windows', 'w', self._WINDOW_COLUMNS)} FROM session_windows w"
        return {row[0]: dict(zip(self._WINDOW_COLUMNS, row, strict=True)) for row in conn.execute(sql)}

    def _nodes(self, conn: sqlite3.Connection) -> dict[str, dict[str, Any]]:
        if "session_key" not in self._columns.get("session_nodes", frozenset()):
            return {}
        sql = f"SELECT {self._select('session_nodes', 'n', self._NODE_COLUMNS)} FROM session_nodes n"
        return {row[0]: dict(zip(self._NODE_COLUMNS, row, strict=True)) for row in conn.execute(sql)}

    def _event_stats(self, conn: sqlite3.Connection, session_id: str | None = None
                     ) -> dict[str, tuple[int, int | None, Any, Any, int]]:
        events = self._columns["transcript_events"]
        created = "created_at" in events
        # A row's JSONL bytes: OpenClaw records them for every row (compressed or not); count them otherwise.
        plain = "length(CAST(event_json AS BLOB))"
        size = f"coalesce(event_utf8_bytes, {plain})" if "event_utf8_bytes" in events else plain
        sql = (
            "SELECT session_id, count(*), max(seq), "
            f"{'min(created_at), max(created_at)' if created else 'NULL, NULL'}, "
            f"sum(coalesce({size}, 0)) + count(*) "
            f"FROM transcript_events {'WHERE session_id = ? ' if session_id is not None else ''}GROUP BY session_id"
        )
        params = (session_id,) if session_id is not None else ()
        return {row[0]: (row[1], row[2], row[3], row[4], _int(row[5]) or 0) for row in conn.execute(sql, params)}

    def _message_stats(self, conn: sqlite3.Connection) -> dict[str, tuple[int, Any]] | None:
        ident = self._columns.get("transcript_event_identities", frozenset())
        if not {"session_id", "event_type"} <= ident:
            return None
        last = "max(created_at)" if "created_at" in ident else "NULL"
        sql = (
            f"SELECT session_id, count(*), {last} FROM transcript_event_identities "
            "WHERE event_type = 'message' GROUP BY session_id"
        )
        return {row[0]: (row[1], row[2]) for row in conn.execute(sql)}

    def _compaction_counts(self, conn: sqlite3.Connection) -> dict[str, int]:
        if not {"session_id", "event_type"} <= self._columns.get("transcript_event_identities", frozenset()):
            return {}
        sql = (
            "SELECT session_id, count(*) FROM transcript_event_identities "
            "WHERE event_type = 'compaction' GROUP BY session_id"
        )
        return {row[0]: row[1] for row in conn.execute(sql)}

    def _session(
        self,
        session_id: str,
        window: dict[str, Any],
        by_current: dict[str, dict[str, Any]],
        nodes: dict[str, dict[str, Any]],
        stats: tuple[int, int | None, Any, Any, int] | None,
        compactions: int | None,
        messages: tuple[int, Any] | None = None,
        counted: bool = False,
    ) -> DbSession:
        node = by_current.get(session_id)
        current = node is not None
        if node is None and window.get("session_key") in nodes:
            node = nodes[window["session_key"]]  # an earlier transcript of that key
        node = node or {}
        entry = _entry(node.get("entry_json")) if current else {}
        key = _str(window.get("session_key")) or _str(node.get("session_key"))
        if current:
            label = _str(node.get("label")) or _str(entry.get("label"))
            display = (
                _str(node.get("display_name"))
                or _str(entry.get("displayName"))
                or _str(window.get("display_name"))
            )
        else:  # the key's label and name describe its current transcript, not this one
            label, display = None, _str(window.get("display_name"))
        archived_at = _ms(node.get("archived_at")) if current else None
        archived_at = archived_at or _ms(entry.get("archivedAt"))
        archived = archived_at is not None or not current or (key is not None and ":recovered:" in key)
        count, last_seq, first_ms, last_ms, size = stats if stats is not None else (0, None, None, None, 0)
        compaction_count = _int(entry.get("compactionCount"))
        if compaction_count is None:
            compaction_count = compactions or 0
        fresh = entry.get("totalTokensFresh")
        updated = node.get("updated_at") if current else window.get("updated_at")
        return DbSession(
            session_id=session_id,
            session_key=key,
            title=label or display,
            label=label,
            display_name=display,
            chat_type=_str(window.get("chat_type")) or _str(entry.get("chatType")),
            channel=_str(window.get("channel")) or _str(entry.get("channel")),
            model_provider=_str(window.get("model_provider")) or _str(entry.get("modelProvider")),
            model=_str(window.get("model")) or _str(entry.get("model")),
            input_tokens=_int(entry.get("inputTokens")),
            output_tokens=_int(entry.get("outputTokens")),
            total_tokens=_int(entry.get("totalTokens")),
            total_tokens_fresh=fresh if isinstance(fresh, bool) else None,
            context_tokens=_int(entry.get("contextTokens")),
            compaction_count=compaction_count,
            memory_flush=_flush_record(entry),
            archived=archived,
            archived_at=archived_at,
            current=current,
            status=_str(window.get("status")) or (_str(node.get("status")) if current else None),
            started=_ms(window.get("started_at")) or _ms(first_ms),
            ended=_ms(window.get("ended_at")),
            updated=_ms(updated),
            last_event=_ms(last_ms),
            event_count=count,
            last_seq=last_seq,
            message_count=(messages[0] if messages is not None else 0) if counted else None,
            last_message=_ms(messages[1]) if messages is not None else None,
            size=size,
        )

    def _line(self, text: bytes | None, blob: bytes | None, expected: int | None) -> bytes:
        if text is not None:
            return bytes(text)
        if blob is None:
            raise AgentDbError("row has neither event_json nor event_zstd")
        return _decode_zstd(bytes(blob), expected)

    def _indexed_branch(self, conn: sqlite3.Connection, session_id: str) -> list[int] | None:
        active = self._columns.get("session_transcript_active_events", frozenset())
        if not {"session_id", "active_position", "event_seq"} <= active:
            return None
        state = self._columns.get("session_transcript_index_state", frozenset())
        if {"indexed_seq", "needs_rebuild"} <= state:
            row = conn.execute(
                "SELECT indexed_seq, needs_rebuild FROM session_transcript_index_state WHERE session_id = ?",
                (session_id,),
            ).fetchone()
            last = conn.execute(
                "SELECT max(seq) FROM transcript_events WHERE session_id = ?", (session_id,)
            ).fetchone()[0]
            if row is None or row[1] or (last is not None and (row[0] is None or row[0] < last)):
                return None  # OpenClaw's branch index lags behind the transcript
        seqs = [
            row[0]
            for row in conn.execute(
                "SELECT event_seq FROM session_transcript_active_events WHERE session_id = ? "
                "ORDER BY active_position",
                (session_id,),
            )
        ]
        return seqs or None

    def _links(self, conn: sqlite3.Connection, session_id: str) -> tuple[dict[str, tuple[int, str | None]], str | None]:
        ident = self._columns.get("transcript_event_identities", frozenset())
        if not {"session_id", "event_id", "seq", "parent_id"} <= ident:
            return {}, None
        links: dict[str, tuple[int, str | None]] = {}
        type_col = "event_type" if "event_type" in ident else "NULL"
        for event_id, seq, parent, kind in conn.execute(
            f"SELECT event_id, seq, parent_id, {type_col} FROM transcript_event_identities WHERE session_id = ?",
            (session_id,),
        ):
            if kind != "session" and seq != 0:
                links[event_id] = (seq, parent)
        leaf: str | None = None
        if "leaf_event_id" in self._columns.get("session_transcript_index_state", frozenset()):
            row = conn.execute(
                "SELECT leaf_event_id FROM session_transcript_index_state WHERE session_id = ?", (session_id,)
            ).fetchone()
            leaf = row[0] if row and row[0] in links else None
        return links, leaf

    def _links_from_lines(self, session_id: str) -> tuple[dict[str, tuple[int, str | None]], str | None]:
        links: dict[str, tuple[int, str | None]] = {}
        for seq, line in self.event_lines(session_id, skipped=[]):
            obj = _entry(line.decode("utf-8", errors="replace"))
            event_id = obj.get("id")
            if seq == 0 or obj.get("type") == "session" or not isinstance(event_id, str):
                continue
            parent = obj.get("parentId")
            links[event_id] = (seq, parent if isinstance(parent, str) else None)
        return links, None


def _walk(links: dict[str, tuple[int, str | None]], leaf: str | None) -> list[int]:
    """Seqs from the root to ``leaf`` (default: the newest entry) following parent links."""
    if not links:
        return []
    if leaf is None:
        leaf = max(links, key=lambda event_id: links[event_id][0])
    seqs: list[int] = []
    seen: set[str] = set()
    node: str | None = leaf
    while node is not None and node in links and node not in seen:  # `seen` stops a cycle
        seen.add(node)
        seq, parent = links[node]
        seqs.append(seq)
        node = parent
    seqs.reverse()
    return seqs


def _decode_zstd(blob: bytes, expected: int | None) -> bytes:
    """Decode one zstd frame of a transcript row and check it against ``event_utf8_bytes``."""
    try:
        import zstandard  # only compressed rows need it; listing works without
    except ImportError as exc:
        raise AgentDbError(
            "a compressed transcript entry needs the zstandard package: pip install zstandard", "needs-zstandard"
        ) from exc
    limit = expected if expected is not None and expected > 0 else 4 * 1024 * 1024
    try:
        data = zstandard.ZstdDecompressor().decompress(blob, max_output_size=limit)
    except zstandard.ZstdError as exc:
        raise AgentDbError(f"compressed transcript entry cannot be decoded: {exc}") from exc
    if expected is not None and len(data) != expected:
        raise AgentDbError(
            f"compressed transcript entry decodes to {plural(len(data), 'byte', grouped=True)}, not the {expected:,} recorded"
        )
    return data


def open_agent_db(path: Path | str, *, busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> AgentDb:
    """Open an OpenClaw agent database for reading (see :class:`AgentDb` for how it stays read-only).

    Args:
        path: the ``openclaw-agent.sqlite`` file.
        busy_timeout: seconds each call waits for a lock before failing.

    Returns:
        The database, its schema version read and checked.

    Raises:
        AgentDbError: missing, unreadable, locked past the timeout, damaged, not an SQLite
            database, or without OpenClaw's ``transcript_events`` table.
    """
    return AgentDb(Path(path), busy_timeout)
