"""Where sessions come from: a folder of transcripts (today), its ``sessions.json`` store, and flush state.

Callers go through a :class:`SessionSource`; :class:`FolderSource` is OpenClaw's ``agents/<agent>/sessions``
folder. Another source (e.g. an agent database) implements the same few methods and no caller changes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from engine.sessions.model import (
    RESET_MARK,
    SessionInfo,
    SessionReadError,
    SessionSummary,
    StoreEntry,
    Transcript,
    as_float,
    as_int,
    as_str,
    is_transcript_name,
    parse_timestamp,
    session_id_from_path,
)
from engine.sessions.reader import read_transcript, summarize_transcript

FLUSH_STATE_FILE = "flush-state.json"
"""memdeck's own record of which sessions it flushed (in its data dir, never in OpenClaw's folders)."""

DEFAULT_CONTEXT_WINDOW = 200_000
DEFAULT_RESERVE_TOKENS = 20_000
DEFAULT_SOFT_THRESHOLD = 4_000
DEFAULT_FORCE_FLUSH_BYTES = 2 * 1024 * 1024


# ---------------------------------------------------------------------------------------------
# The seam


@dataclass(frozen=True)
class SourceStatus:
    """What a session source says about itself, for status screens.

    Attributes:
        kind: ``folder`` (later also e.g. ``agent-db``).
        location: the folder or file it reads.
        available: whether it can be read now.
        detail: a short human note (why it is unavailable, or what it holds).
    """

    kind: str
    location: str
    available: bool
    detail: str = ""


class SessionSource(Protocol):
    """Where an agent's sessions come from. Read-only: memdeck never writes an agent's sessions."""

    def list_sessions(self) -> list[SessionInfo]:
        """Every session, newest activity first (joined with memdeck's flush record).

        Raises:
            SessionReadError: the source cannot be listed at all.
        """
        ...

    def find(self, session: str) -> Path:
        """The transcript a user named: a path, a session id or a unique id prefix.

        Raises:
            SessionReadError: nothing, or more than one session, matches.
        """
        ...

    def read(self, session: str | Path, *, max_bytes: int | None = None) -> Transcript:
        """Parse a session (``max_bytes``: only its head; ``complete`` says whether that was all).

        Raises:
            SessionReadError: the session cannot be read at all.
        """
        ...

    def store_entry(self, session: str | Path) -> StoreEntry | None:
        """The session's entry in the agent's session store (its key and channel), if it has one."""
        ...

    def describe(self) -> SourceStatus:
        """Where the source reads from and whether it can."""
        ...


class FolderSource:
    """A folder of JSONL transcripts (OpenClaw's ``~/.openclaw/agents/<agent>/sessions``) and its ``sessions.json``.

    Args:
        folder: the sessions folder (it may not exist).
        flush_state: memdeck's flush record (see :func:`read_flush_state`); None: no record.
    """

    kind = "folder"

    def __init__(self, folder: Path, flush_state: Path | None = None) -> None:
        self.folder = Path(folder)
        self.flush_state = flush_state

    def __repr__(self) -> str:
        return f"FolderSource({str(self.folder)!r})"

    def list_sessions(self) -> list[SessionInfo]:
        """Every transcript in the folder, newest activity first (see :func:`list_sessions`)."""
        return list_sessions(self.folder, self.flush_state)

    def find(self, session: str) -> Path:
        """A path, an id or a unique id prefix → the transcript (see :func:`find_transcript`)."""
        return find_transcript(self.folder, session)

    def read(self, session: str | Path, *, max_bytes: int | None = None) -> Transcript:
        """Parse a transcript named by path, id or id prefix."""
        path = session if isinstance(session, Path) else self.find(session)
        return read_transcript(path, max_bytes=max_bytes)

    def store_entry(self, session: str | Path) -> StoreEntry | None:
        """The transcript's ``sessions.json`` entry (see :func:`store_entry_for`)."""
        path = session if isinstance(session, Path) else self.find(session)
        return store_entry_for(path)

    def describe(self) -> SourceStatus:
        """The folder, and whether it exists and holds transcripts."""
        if not self.folder.exists():
            return SourceStatus(self.kind, str(self.folder), False, f"no sessions folder ({self.folder})")
        if not self.folder.is_dir():
            return SourceStatus(self.kind, str(self.folder), False, f"not a folder: {self.folder}")
        try:
            with os.scandir(self.folder) as entries:
                count = sum(1 for entry in entries if is_transcript_name(entry.name))
        except OSError as exc:
            return SourceStatus(self.kind, str(self.folder), False, f"cannot list {self.folder}: {exc.strerror or exc}")
        return SourceStatus(self.kind, str(self.folder), True, f"{count} transcript{'s' if count != 1 else ''}")


# ---------------------------------------------------------------------------------------------
# The sessions folder


def resolve_sessions_dir(explicit: Path | None, config_value: Path | None, agent: str = "main") -> Path:
    """Decide which sessions folder to read.

    Precedence: ``explicit`` (``--sessions``), env ``MEMDECK_SESSIONS``, ``config_value``, then
    OpenClaw's default ``~/.openclaw/agents/<agent>/sessions``.

    Args:
        explicit: a folder given on the command line.
        config_value: the configured folder.
        agent: the agent id for the default.

    Returns:
        The folder (``~`` expanded); it may not exist.
    """
    if explicit is not None:
        return Path(explicit).expanduser()
    env = os.environ.get("MEMDECK_SESSIONS")
    if env:
        return Path(env).expanduser()
    if config_value is not None:
        return Path(config_value).expanduser()
    return Path.home() / ".openclaw" / "agents" / agent / "sessions"


def find_transcript(sessions_dir: Path, session: str) -> Path:
    """Find a transcript from what the user typed: a path, a session id, or a unique id prefix.

    Active transcripts win over ``.reset.`` archives with the same id.

    Raises:
        SessionReadError: nothing or more than one session matches.
    """
    candidate = Path(session).expanduser()
    if candidate.is_file():
        return candidate
    if os.sep in session or "/" in session or session.endswith(".jsonl"):
        raise SessionReadError(f"transcript not found: {session}")
    folder = Path(sessions_dir)
    exact = folder / f"{session}.jsonl"
    if exact.is_file():
        return exact
    try:
        names = sorted(entry.name for entry in os.scandir(folder) if entry.is_file() and is_transcript_name(entry.name))
    except FileNotFoundError as exc:
        raise SessionReadError(f"sessions folder not found: {folder}") from exc
    except OSError as exc:
        raise SessionReadError(f"cannot list {folder}: {exc.strerror or exc}") from exc
    matches = [name for name in names if session_id_from_path(Path(name)).startswith(session)]
    ids = sorted({session_id_from_path(Path(name)) for name in matches})
    if len(ids) == 1:
        # The active transcript wins; else the newest archive (names end in a sortable timestamp).
        active = [name for name in matches if name.endswith(".jsonl")]
        return folder / (active or matches)[-1]
    if not ids:
        raise SessionReadError(f"no session matching {session!r} in {folder} (memdeck sessions lists them)")
    shown = ", ".join(ids[:5]) + (" …" if len(ids) > 5 else "")
    raise SessionReadError(f"{session!r} matches {len(ids)} sessions: {shown}; type more of the id")


def read_flush_state(state_path: Path | None) -> dict[str, datetime]:
    """Read memdeck's flush record (``{session_id: iso time}``); a missing or bad file reads as empty.

    Args:
        state_path: the JSON file, e.g. ``<home>/flush-state.json``.

    Returns:
        When each session was last flushed.
    """
    if state_path is None:
        return {}
    try:
        data = json.loads(Path(state_path).read_bytes().decode("utf-8", errors="replace"))
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    state: dict[str, datetime] = {}
    for key, value in data.items():
        when = parse_timestamp(value)
        if when is not None:
            state[key] = when
    return state


@dataclass(frozen=True)
class _StoreEntry:
    key: str
    data: Mapping[str, Any]


def _read_store(path: Path) -> tuple[dict[str, _StoreEntry], dict[str, _StoreEntry]]:
    """Index ``sessions.json`` by transcript file name and by session id."""
    by_file: dict[str, _StoreEntry] = {}
    by_id: dict[str, _StoreEntry] = {}
    try:
        data = json.loads(path.read_bytes().decode("utf-8", errors="replace"))
    except (OSError, ValueError, RecursionError):
        return by_file, by_id
    if not isinstance(data, dict):
        return by_file, by_id

    def newer(candidate: _StoreEntry, current: _StoreEntry | None) -> bool:
        if current is None:
            return True
        return (as_float(candidate.data.get("updatedAt")) or 0) > (as_float(current.data.get("updatedAt")) or 0)

    for key, value in data.items():
        if not isinstance(value, dict):
            continue
        entry = _StoreEntry(key, value)
        session_file = as_str(value.get("sessionFile"))
        if session_file:
            name = Path(session_file).name
            if newer(entry, by_file.get(name)):
                by_file[name] = entry
        session_id = as_str(value.get("sessionId"))
        if session_id and newer(entry, by_id.get(session_id)):
            by_id[session_id] = entry
    return by_file, by_id


def store_entry_for(path: Path, store_path: Path | None = None) -> StoreEntry | None:
    """Find a transcript's ``sessions.json`` entry (by ``sessionFile``, else by ``sessionId``).

    Args:
        path: the transcript.
        store_path: ``sessions.json``; defaults to the one next to the transcript.

    Returns:
        The entry, or None when there is none (archives are never matched by id: their id was reset).
    """
    path = Path(path)
    by_file, by_id = _read_store(store_path if store_path is not None else path.parent / "sessions.json")
    found = by_file.get(path.name)
    if found is None and RESET_MARK not in path.name:
        found = by_id.get(session_id_from_path(path))
    if found is None:
        return None
    data = found.data
    return StoreEntry(
        session_key=found.key,
        session_id=as_str(data.get("sessionId")),
        chat_type=as_str(data.get("chatType")),
        channel=as_str(data.get("channel")),
        display_name=as_str(data.get("displayName")),
    )


def list_sessions(
    sessions_dir: Path,
    flush_state: Path | None = None,
    *,
    store_path: Path | None = None,
) -> list[SessionInfo]:
    """List the transcripts in a sessions folder, newest activity first.

    Takes ``*.jsonl`` files directly in the folder and ``*.jsonl.reset.*`` archives (marked
    ``archived``), joins each with its ``sessions.json`` entry (by ``sessionFile``, else by
    ``sessionId``) and with memdeck's flush record.

    Args:
        sessions_dir: the folder.
        flush_state: memdeck's flush record file (see :func:`read_flush_state`).
        store_path: ``sessions.json``; defaults to the one in ``sessions_dir``.

    Returns:
        One entry per transcript; a file that cannot be read has ``error`` set.

    Raises:
        SessionReadError: the folder does not exist or cannot be listed.
    """
    folder = Path(sessions_dir)
    try:
        names = sorted(
            entry.name for entry in os.scandir(folder) if entry.is_file() and is_transcript_name(entry.name)
        )
    except FileNotFoundError as exc:
        raise SessionReadError(f"sessions folder not found: {folder}") from exc
    except NotADirectoryError as exc:
        raise SessionReadError(f"not a folder: {folder}") from exc
    except OSError as exc:
        raise SessionReadError(f"cannot list {folder}: {exc.strerror or exc}") from exc
    by_file, by_id = _read_store(store_path if store_path is not None else folder / "sessions.json")
    flushes = read_flush_state(flush_state)
    infos: list[SessionInfo] = []
    for name in names:
        infos.append(_session_info(folder / name, by_file, by_id, flushes))
    infos.sort(key=lambda info: (info.last_activity, info.session_id), reverse=True)
    return infos


def _session_info(
    path: Path,
    by_file: dict[str, _StoreEntry],
    by_id: dict[str, _StoreEntry],
    flushes: dict[str, datetime],
) -> SessionInfo:
    session_id = session_id_from_path(path)
    archived = RESET_MARK in path.name
    try:
        stat = path.stat()
        size, mtime = stat.st_size, datetime.fromtimestamp(stat.st_mtime, tz=UTC)
    except OSError:
        size, mtime = 0, datetime.fromtimestamp(0, tz=UTC)
    summary: SessionSummary | None = None
    error: str | None = None
    try:
        summary = summarize_transcript(path)
    except SessionReadError as exc:
        error = str(exc)
    store = by_file.get(path.name)
    if store is None and not archived:
        store = by_id.get(session_id) or (
            by_id.get(summary.header_id) if summary and summary.header_id else None
        )
    data: Mapping[str, Any] = store.data if store is not None else {}
    total = as_int(data.get("totalTokens"))
    if data.get("totalTokensFresh") is False or not total:
        total = summary.total_tokens if summary else None
    compactions = as_int(data.get("compactionCount"))
    if compactions is None:
        compactions = summary.compactions if summary else 0
    return SessionInfo(
        session_id=session_id,
        path=path,
        archived=archived,
        size=size,
        mtime=mtime,
        started=summary.started if summary else None,
        last_message=summary.last_message if summary else None,
        message_count=summary.message_count if summary else 0,
        total_tokens=total,
        context_tokens=as_int(data.get("contextTokens")) or None,
        compactions=compactions,
        session_key=store.key if store is not None else None,
        chat_type=as_str(data.get("chatType")),
        channel=as_str(data.get("channel")),
        display_name=as_str(data.get("displayName")),
        memory_flush_at=parse_timestamp(data.get("memoryFlushAt")),
        memory_flush_compaction_count=as_int(data.get("memoryFlushCompactionCount")),
        flushed_at=flushes.get(session_id),
        skipped_lines=summary.skipped if summary else 0,
        error=error,
    )


# ---------------------------------------------------------------------------------------------
# Flush state (§10)


def flush_threshold(
    context_window: int = DEFAULT_CONTEXT_WINDOW,
    reserve: int = DEFAULT_RESERVE_TOKENS,
    soft: int = DEFAULT_SOFT_THRESHOLD,
) -> int:
    """Token count at which a session should be flushed: ``window − reserve − soft`` (176000 by default)."""
    return context_window - reserve - soft


def needs_flush(
    info: SessionInfo,
    *,
    context_window: int | None = None,
    reserve: int = DEFAULT_RESERVE_TOKENS,
    soft: int = DEFAULT_SOFT_THRESHOLD,
    force_bytes: int = DEFAULT_FORCE_FLUSH_BYTES,
) -> bool:
    """Whether a session is close enough to compaction that its memories should be flushed now.

    True when its tokens reach :func:`flush_threshold` (inclusive) or its transcript reaches
    ``force_bytes`` (0 disables), unless it was flushed — by memdeck, or by OpenClaw in the current
    compaction cycle — after its last message. Unlike OpenClaw (#47143), a session never flushed
    by OpenClaw is not counted as flushed just because both counters are 0.

    Args:
        info: the session.
        context_window: the model's window; defaults to the store's ``contextTokens``, else 200000.
        reserve: reserve tokens floor.
        soft: soft threshold tokens.
        force_bytes: flush transcripts at least this large regardless of tokens.
    """
    window = info.context_tokens or context_window or DEFAULT_CONTEXT_WINDOW
    over_tokens = info.total_tokens is not None and info.total_tokens >= flush_threshold(
        window, reserve, soft
    )
    over_bytes = force_bytes > 0 and info.size >= force_bytes
    if not (over_tokens or over_bytes):
        return False
    if (
        info.memory_flush_at is not None
        and info.memory_flush_compaction_count is not None
        and info.memory_flush_compaction_count == info.compactions
    ):
        return False
    last = info.last_flush
    if last is None:
        return True
    return info.last_message is not None and info.last_message > last
