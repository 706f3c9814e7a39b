"""Sessions from OpenClaw 2026.9's agent database: the :class:`AgentDbSource` behind the ``SessionSource`` seam."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from engine.display import plural
from engine.sessions.agentdb import (
    DEFAULT_BUSY_TIMEOUT,
    KNOWN_SCHEMA_VERSION,
    AgentDb,
    AgentDbError,
    DbSession,
    open_agent_db,
)
from engine.sessions.legacy import LegacyName, classify_legacy_name
from engine.sessions.model import (
    SessionInfo,
    SessionLookupError,
    SessionReadError,
    StoreEntry,
    Transcript,
)
from engine.sessions.reader import (
    parse_line,
    read_transcript,
    read_transcript_rows,
    spoken,
)
from engine.sessions.sources import (
    _EPOCH,
    _TITLE_SCAN_ROWS,
    _USAGE_SCAN_ROWS,
    BUSY_TIMEOUT_ENV,
    EMPTY_SESSION,
    KIND_AGENT_DB,
    FolderSource,
    SessionFile,
    SourceStatus,
    _choose_title,
    _citation_name,
    _file_lines,
    _folder_sessions,
    _listed_id,
    _looks_like_path,
    _typed_path,
    _without_anchor,
    read_flush_state,
    store_entry_for,
)


def busy_timeout_from_env() -> float:
    """The lock wait for OpenClaw's database: ``$MEMDECK_AGENT_DB_TIMEOUT`` seconds if valid, else 3."""
    raw = os.environ.get(BUSY_TIMEOUT_ENV, "").strip()
    if raw:
        with contextlib.suppress(ValueError):
            value = float(raw)
            if 0 <= value <= 600:
                return value
    return DEFAULT_BUSY_TIMEOUT


class AgentDbSource:
    """OpenClaw 2026.9's per-agent database, read-only (see :class:`engine.sessions.agentdb.AgentDb`).

    A session's transcript is its rows fed, in ``seq`` order, to the same JSONL reader a file goes
    through: entry ``seq`` is line ``seq + 1``, so a citation names the same entry as in the legacy
    file it was imported from. A database session has no file: its ``path`` (and its name in search
    results) is OpenClaw's own ``sessions/<agent>/<id>.jsonl``, a stand-in nothing opens.

    Sessions of the old folder that the database does not hold — the ``.reset.`` / ``.deleted.``
    archives OpenClaw leaves there (its memory index still reads them), transcripts its importer
    deferred — are listed and read from the folder.

    Args:
        path: the ``openclaw-agent.sqlite`` file.
        agent: the agent id (for the stand-in names).
        flush_state: memdeck's flush record; None: no record.
        legacy_folder: the old ``agents/<agent>/sessions`` folder, if there is one to look in.
        busy_timeout: seconds to wait for OpenClaw's writer; defaults to :func:`busy_timeout_from_env`.
    """

    kind = KIND_AGENT_DB

    def __init__(self, path: Path, *, agent: str = "main", flush_state: Path | None = None,
                 legacy_folder: Path | None = None, busy_timeout: float | None = None) -> None:
        self.path = Path(path)
        self.agent = agent
        self.flush_state = flush_state
        self.legacy_folder = Path(legacy_folder) if legacy_folder is not None else None
        self.busy_timeout = busy_timeout_from_env() if busy_timeout is None else busy_timeout
        self._db: AgentDb | None = None

    def __repr__(self) -> str:
        return f"AgentDbSource({str(self.path)!r})"

    @property
    def location(self) -> Path:
        """The database file."""
        return self.path

    # -- helpers ------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        """Any failure reading the database as one :class:`SessionReadError` (never a raw sqlite error:
        callers must not mistake it for a problem with memdeck's own index)."""
        try:
            yield
        except AgentDbError as exc:
            raise SessionReadError(str(exc)) from exc
        except sqlite3.Error as exc:
            raise SessionReadError(f"{self.path}: cannot read the OpenClaw database: {exc}") from exc

    def database(self) -> AgentDb:
        """The database, opened (its schema read) on first use.

        Raises:
            AgentDbError: missing, locked past the timeout, damaged, or not an agent database.
        """
        if self._db is None:
            self._db = open_agent_db(self.path, busy_timeout=self.busy_timeout)
        return self._db

    def _legacy(self) -> FolderSource | None:
        if self.legacy_folder is None or not self.legacy_folder.is_dir():
            return None
        return FolderSource(self.legacy_folder, self.flush_state)

    def rel_for(self, session_id: str) -> str:
        """OpenClaw's name for a database session: ``sessions/<agent>/<id>.jsonl``."""
        return f"sessions/{self.agent}/{session_id}.jsonl"

    def _db_id(self, session: str | Path) -> str | None:
        """The session id a stand-in path or citation names, if it names one of this agent's."""
        text = session.as_posix() if isinstance(session, Path) else session.strip()
        parts = text.split("/")  # split as written: PurePosixPath would fold ``sessions/main/./x`` and ``//``
        if len(parts) == 3 and parts[0] == "sessions" and parts[1] == self.agent and parts[2].endswith(".jsonl"):
            return parts[2][: -len(".jsonl")] or None
        return None

    def _ids(self) -> set[str]:
        with self._reading():
            return set(self.database().transcript_stats())

    def _legacy_ids(self, legacy: FolderSource | None) -> list[tuple[str, LegacyName]]:
        if legacy is None:
            return []
        with contextlib.suppress(SessionReadError):
            return [(_listed_id(item), item) for item in _folder_sessions(legacy.folder)]
        return []

    # -- the seam -----------------------------------------------------------------------------
    def list_sessions(self) -> list[SessionInfo]:
        """The database's sessions (titles, keys, tokens and flush state from OpenClaw's store), then the
        old folder's leftovers, newest activity first."""
        flushes = read_flush_state(self.flush_state)
        with self._reading():
            db = self.database()
            infos = [self._info(db, session, flushes) for session in db.list_sessions()]
        known = {info.session_id for info in infos}
        legacy = self._legacy()
        if legacy is not None:
            with contextlib.suppress(SessionReadError):
                infos.extend(info for info in legacy.list_sessions() if info.session_id not in known)
        infos.sort(key=lambda info: (info.last_activity, info.session_id), reverse=True)
        return infos

    def _info(self, db: AgentDb, session: DbSession, flushes: dict[str, datetime]) -> SessionInfo:
        sid = session.session_id
        rel = self.rel_for(sid)
        total, source = session.total_tokens, "store"
        if not total or session.total_tokens_fresh is False:
            total, source = self._last_usage(db, sid), "usage"
        flush = session.memory_flush
        title = _choose_title(session.label, session.display_name, None)
        if title is None:
            title = _choose_title(None, None, self._first_words(db, sid))
        last_message = session.last_message or session.last_event
        return SessionInfo(
            session_id=sid,
            path=Path(rel),
            archived=session.archived,
            size=session.size,
            mtime=session.last_activity or _EPOCH,
            started=session.started,
            last_message=last_message,
            message_count=session.message_count or 0,
            total_tokens=total,
            context_tokens=session.context_tokens or None,
            compactions=session.compaction_count,
            session_key=session.session_key,
            chat_type=session.chat_type,
            channel=session.channel,
            display_name=session.display_name,
            memory_flush_at=flush.at if flush is not None else None,
            memory_flush_compaction_count=flush.compaction_count if flush is not None else None,
            flushed_at=flushes.get(sid),
            title=title,
            label=session.label,
            model_provider=session.model_provider,
            model=session.model,
            input_tokens=session.input_tokens,
            output_tokens=session.output_tokens,
            tokens_source=source if total is not None else None,
            memory_flush_recorded=flush is not None,
            memory_flush_kind=flush.kind if flush is not None else None,
            source=KIND_AGENT_DB,
            rel=rel,
            line_count=session.event_count,
        )

    @staticmethod
    def _first_words(db: AgentDb, session_id: str) -> str | None:
        """The first thing the user said in a transcript (its title when OpenClaw's is injected metadata)."""
        for seq, line in db.event_lines(session_id, skipped=[]):
            if seq >= _TITLE_SCAN_ROWS:
                break
            entry = parse_line(seq + 1, line)
            message = entry.message if entry is not None else None
            if message is not None and message.role == "user":
                words = spoken(message)
                if words:
                    return words
        return None

    @staticmethod
    def _last_usage(db: AgentDb, session_id: str) -> int | None:
        """The last reply's total tokens (when OpenClaw's store has no fresh total), read from the end."""
        for read, (seq, line) in enumerate(db.event_lines_backward(session_id, skipped=[])):
            if read >= _USAGE_SCAN_ROWS:
                break
            entry = parse_line(seq + 1, line)
            message = entry.message if entry is not None else None
            if message is not None and message.usage is not None and message.usage.total_tokens > 0:
                return message.usage.total_tokens
        return None

    def find(self, session: str, *, files: bool = False) -> Path:
        """A citation path, an id, a unique id prefix (or a legacy file's name; with ``files``, a path to a
        transcript file) → the session. A citation or an id is looked up only in this source, never on the disk.

        Returns:
            ``sessions/<agent>/<id>.jsonl`` for a database session (a stand-in, not a file), the file for a
            legacy leftover.

        Raises:
            SessionLookupError: nothing or more than one session matches, or the text is no citation or id.
        """
        if not session.strip():
            raise SessionLookupError(EMPTY_SESSION)
        text = _without_anchor(session.strip())  # a search hit's citation, pasted back, names its session
        cited = _citation_name(text)  # strict: a malformed sessions/… path is refused here
        if cited is not None and text.count("/") == 2 and text.split("/")[1] != self.agent:
            raise SessionLookupError(f"no session {text!r}: these are agent {self.agent!r}'s sessions "
                                     f"(sessions/{self.agent}/<id>.jsonl)")
        ids = self._ids()
        named = self._db_id(text)
        if named is not None:
            if named in ids:
                return Path(self.rel_for(named))
            raise SessionLookupError(f"no session {named} in {self.path}")
        legacy = self._legacy()
        if cited is not None or _looks_like_path(text):
            if files and cited is None and ("/" in text or os.sep in text or text.startswith("~")):
                candidate = _typed_path(text)  # a file the user named at the shell
                if candidate.is_file():
                    return candidate.absolute()
            name = cited if cited is not None else text
            stem = name[: -len(".jsonl")] if name.endswith(".jsonl") and "/" not in name else None
            if stem and stem in ids:
                return Path(self.rel_for(stem))
            if legacy is not None:
                return legacy.find(text, files=files)
            raise SessionLookupError(f"transcript not found: {session}")
        leftovers = [(sid, item) for sid, item in self._legacy_ids(legacy) if sid not in ids]
        if text in ids:
            return Path(self.rel_for(text))
        matches = sorted({sid for sid in ids if sid.startswith(text)} | {sid for sid, _ in leftovers
                                                                          if sid.startswith(text)})
        if len(matches) == 1:
            if matches[0] in ids:
                return Path(self.rel_for(matches[0]))
            assert legacy is not None
            return legacy.find(matches[0])
        if not matches:
            raise SessionLookupError(f"no session matching {text!r} in {self.path} (memdeck sessions lists them)")
        shown = ", ".join(matches[:5]) + (" …" if len(matches) > 5 else "")
        raise SessionLookupError(f"{text!r} matches {len(matches)} sessions: {shown}; type more of the id")

    def _resolve(self, session: str | Path) -> tuple[str | None, Path]:
        """``(database session id, stand-in)`` or ``(None, legacy file)``."""
        if isinstance(session, Path) and session.is_absolute():
            return None, session
        named = self._db_id(session)
        path = Path(self.rel_for(named)) if named is not None else self.find(str(session))
        db_id = self._db_id(path)
        return (db_id, path) if db_id is not None else (None, path)

    def read(self, session: str | Path, *, max_bytes: int | None = None) -> Transcript:
        """Parse a session: a database session's rows through the JSONL reader, a leftover file as a file."""
        db_id, path = self._resolve(session)
        if db_id is None:
            return read_transcript(path, max_bytes=max_bytes)
        with self._reading():
            db = self.database()
            stats = db.transcript_stats(db_id).get(db_id)
            if stats is None:
                raise SessionReadError(f"no session {db_id} in {self.path}") from FileNotFoundError(str(path))
            skipped: list[tuple[int, str]] = []
            return read_transcript_rows(
                db.event_lines(db_id, skipped=skipped), path=path, session_id=db_id, size=stats.size,
                line_count=(stats.last_seq + 1) if stats.last_seq is not None else stats.rows,
                skipped=skipped, max_bytes=max_bytes,
            )

    def store_entry(self, session: str | Path) -> StoreEntry | None:
        """The session key OpenClaw files the session under, its chat type, channel and display name."""
        db_id, path = self._resolve(session)
        if db_id is None:
            return store_entry_for(path)
        with self._reading():
            found = next((s for s in self.database().list_sessions() if s.session_id == db_id), None)
        if found is None or found.session_key is None:
            return None
        return StoreEntry(session_key=found.session_key, session_id=found.session_id, chat_type=found.chat_type,
                          channel=found.channel, display_name=found.display_name)

    def jsonl_lines(self, session: str | Path) -> Iterator[tuple[int, bytes]]:
        """A database session's rows as the JSONL lines they are (row ``seq`` is line ``seq + 1``, a compressed
        row decoded byte for byte); a leftover file's lines."""
        db_id, path = self._resolve(session)
        if db_id is None:
            return _file_lines(path)
        with self._reading():
            db = self.database()

        def lines() -> Iterator[tuple[int, bytes]]:
            with self._reading():
                for seq, line in db.event_lines(db_id):
                    yield seq + 1, line

        return lines()

    def describe(self) -> SourceStatus:
        """The database file, its schema, how many sessions it holds and what to watch out for."""
        legacy = str(self.legacy_folder) if self.legacy_folder is not None and self.legacy_folder.is_dir() else None
        try:
            db = self.database()
            stats = db.transcript_stats()
        except AgentDbError as exc:
            return SourceStatus(self.kind, str(self.path), False, str(exc), known_schema_version=KNOWN_SCHEMA_VERSION,
                                problem=exc.reason, legacy_folder=legacy,
                                schema_version=self._db.schema_version if self._db is not None else None)
        except sqlite3.Error as exc:
            return SourceStatus(self.kind, str(self.path), False, f"cannot read the OpenClaw database: {exc}",
                                known_schema_version=KNOWN_SCHEMA_VERSION, problem="unreadable", legacy_folder=legacy)
        count = len(stats)
        leftovers = [sid for sid, _item in self._legacy_ids(self._legacy()) if sid not in stats]
        detail = plural(count, "session")
        if leftovers:
            detail += f" + {len(leftovers)} left in {self.legacy_folder}"
        return SourceStatus(
            self.kind, str(self.path), True, detail, sessions=count + len(leftovers),
            schema_version=db.schema_version, known_schema_version=KNOWN_SCHEMA_VERSION,
            app_version=db.app_version, warnings=db.warnings, legacy_folder=legacy,
        )

    def index_files(self) -> list[SessionFile]:
        """Every database session (named ``sessions/<agent>/<id>.jsonl``; stamped by its newest row's time and
        its JSONL size), then the old folder's leftovers."""
        with self._reading():
            stats = self.database().transcript_stats()
        files = [
            SessionFile(self.rel_for(sid), Path(self.rel_for(sid)), "sessions", (st.last_ms or 0) * 1_000_000,
                        st.size, session=sid, reader=self)
            for sid, st in stats.items()
        ]
        legacy = self._legacy()
        if legacy is not None:
            with contextlib.suppress(SessionReadError):
                files.extend(f for f in legacy.index_files()
                             if _listed_id(classify_legacy_name(f.path.name)) not in stats)
        files.sort(key=lambda f: f.rel)
        return files


# ---------------------------------------------------------------------------------------------
# Choosing the source
