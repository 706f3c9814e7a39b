"""Where sessions come from: OpenClaw's agent database, or a legacy folder of transcripts; and flush state.

Callers go through a :class:`SessionSource`, made by :func:`engine.sessions.locate.open_session_source`: an
:class:`AgentDbSource` over OpenClaw 2026.9's ``agents/<agent>/agent/openclaw-agent.sqlite`` when it
exists (plus the ``.reset.`` / ``.deleted.`` archives OpenClaw leaves in the old folder), else a
:class:`FolderSource` over the legacy ``agents/<agent>/sessions`` folder. Both are read-only: memdeck
never writes an agent's database or sessions folder.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from stat import S_ISREG
from typing import TYPE_CHECKING, Any, Protocol

from engine.display import plural
from engine.secrets import redact_secrets
from engine.sessions.legacy import LegacyName, classify_legacy_name
from engine.sessions.model import (
    SessionInfo,
    SessionLookupError,
    SessionReadError,
    SessionSummary,
    StoreEntry,
    Transcript,
    as_float,
    as_int,
    as_str,
    parse_timestamp,
)
from engine.sessions.reader import (
    read_transcript,
    session_search_text,
    summarize_transcript,
)
from engine.sessions.speech import is_injected, is_injected_title
from engine.state import read_json_state
from engine.textio import scrub_json
from engine.workspace import MemoryFile

if TYPE_CHECKING:
    from engine.config import Config

FLUSH_STATE_FILE = "flush-state.json"
FLUSH_RECORD = "memdeck's flush record"
"""memdeck's own record of which sessions it flushed (in its data dir, never in OpenClaw's folders)."""

BUSY_TIMEOUT_ENV = "MEMDECK_AGENT_DB_TIMEOUT"
"""Seconds memdeck waits for a locked OpenClaw database (default 3; OpenClaw's writer waits 5)."""

KIND_FOLDER = "folder"
KIND_AGENT_DB = "agent-db"

TITLE_CHARS = 60
"""A title made from the first words is cut here (OpenClaw's own display names are about as long)."""

_TITLE_SCAN_ROWS = 512
"""How far into a transcript a title is looked for (the first thing the user said is near the start)."""
_USAGE_SCAN_ROWS = 256
"""How far back from the end the last reply's usage is looked for."""

DEFAULT_CONTEXT_WINDOW = 200_000
DEFAULT_RESERVE_TOKENS = 20_000
DEFAULT_SOFT_THRESHOLD = 4_000
DEFAULT_FORCE_FLUSH_BYTES = 2 * 1024 * 1024

_EPOCH = datetime.fromtimestamp(0, tz=UTC)


# ---------------------------------------------------------------------------------------------
# The seam


@dataclass(frozen=True)
class SourceStatus:
    """What a session source says about itself, for status screens and ``doctor``.

    Attributes:
        kind: ``folder`` or ``agent-db``.
        location: the folder or database file it reads.
        available: whether it can be read now.
        detail: a short human note (why it is unavailable, or what it holds).
        sessions: how many sessions it holds, when it could count them.
        schema_version: the database's ``PRAGMA user_version`` (agent-db only).
        known_schema_version: the newest schema memdeck was written against (agent-db only).
        app_version: the OpenClaw release that created the database, when recorded.
        warnings: what may be missing or stale (a newer schema, a snapshot read, ...).
        problem: why it is unavailable, for ``doctor``: ``missing``, ``locked``, ``damaged``,
            ``not-a-database``, ``unsupported``, ``permission`` or ``unreadable``; None when available.
        legacy_folder: the old sessions folder whose leftover archives are listed too (agent-db only).
    """

    kind: str
    location: str
    available: bool
    detail: str = ""
    sessions: int | None = None
    schema_version: int | None = None
    known_schema_version: int | None = None
    app_version: str | None = None
    warnings: tuple[str, ...] = ()
    problem: str | None = None
    legacy_folder: str | None = None

    @property
    def newer_schema(self) -> bool:
        """True when the database's schema is newer than the one memdeck knows."""
        return (
            self.schema_version is not None
            and self.known_schema_version is not None
            and self.schema_version > self.known_schema_version
        )

    def to_json(self) -> dict[str, Any]:
        """A camelCase dict for ``--json`` output."""
        return {
            "kind": self.kind,
            "location": self.location,
            "available": self.available,
            "detail": self.detail,
            "sessions": self.sessions,
            "schemaVersion": self.schema_version,
            "knownSchemaVersion": self.known_schema_version,
            "appVersion": self.app_version,
            "warnings": list(self.warnings),
            "problem": self.problem,
            "legacyFolder": self.legacy_folder,
        }


@dataclass(frozen=True)
class SessionFile(MemoryFile):
    """A session as the search index sees it: its citation name (``rel``), a change stamp, and how to read it.

    ``path`` is the transcript file for a folder session and the stand-in ``sessions/<agent>/<id>.jsonl``
    for a database session: read it with :func:`read_session_file`, never by opening ``path``.
    """

    session: str = ""
    reader: SessionSource | None = field(default=None, compare=False, repr=False)

    def searchable_text(self) -> tuple[str, list[int], int]:
        """What the index stores of this session (:class:`engine.index.indexer.ReadsItself`): the text, the
        transcript line of each of its lines, and how many transcript lines were skipped.

        Raises:
            OSError: the session vanished (``FileNotFoundError``) or cannot be read — a Markdown file's contract.
        """
        try:
            transcript = read_session_file(self)
        except SessionReadError as exc:
            if isinstance(exc.__cause__, OSError):
                raise exc.__cause__ from None
            raise OSError(str(exc)) from exc
        text, line_map = session_search_text(transcript)
        return text, list(line_map), len(transcript.skipped)


class SessionSource(Protocol):
    """Where an agent's sessions come from. Read-only: memdeck never writes an agent's sessions."""

    kind: str

    @property
    def location(self) -> Path:
        """The folder or database file it reads."""
        ...

    def list_sessions(self) -> list[SessionInfo]:
        """Every session, newest activity first (joined with memdeck's flush record).

        Raises:
            SessionReadError: the source cannot be listed at all.
        """
        ...

    def find(self, session: str, *, files: bool = False) -> Path:
        """The session a user named: a citation path, a session id or a unique id prefix (with ``files``, also a
        path to a transcript file: see :func:`find_transcript`).

        Returns:
            The transcript file, or for a database session its stand-in ``sessions/<agent>/<id>.jsonl``
            (pass it back to :meth:`read`; it is not a file).

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

    def jsonl_lines(self, session: str | Path) -> Iterator[tuple[int, bytes]]:
        """The session's JSONL lines exactly as stored: ``(line number, bytes without the newline)``.

        Raises:
            SessionReadError: the session cannot be read.
        """
        ...

    def describe(self) -> SourceStatus:
        """Where the source reads from and whether it can (never raises)."""
        ...

    def index_files(self) -> list[SessionFile]:
        """Every session as the search index lists it, sorted by ``rel`` (cheap: no transcript is parsed).

        Raises:
            SessionReadError: the source cannot be listed at all.
        """
        ...


def read_session_file(file: MemoryFile) -> Transcript:
    """Parse a session the index listed (a :class:`SessionFile`), through its source.

    Raises:
        SessionReadError: it cannot be read; ``__cause__`` is a ``FileNotFoundError`` when it is gone.
    """
    if isinstance(file, SessionFile) and file.reader is not None:
        return file.reader.read(file.session or file.path)
    return read_transcript(file.path)


# ---------------------------------------------------------------------------------------------
# Titles


def title_from_words(text: str, limit: int = TITLE_CHARS) -> str | None:
    """A title from what someone said: its first non-blank line, whitespace collapsed, cut at ``limit``."""
    for line in text.splitlines():
        words = " ".join(line.split())
        if words:
            return words if len(words) <= limit else words[: limit - 1].rstrip() + "…"
    return None


def _choose_title(label: str | None, display_name: str | None, first_words: str | None) -> str | None:
    """OpenClaw's title (the label, else the display name) unless it is injected metadata; then the first words.

    Secrets are masked (as in all session text memdeck shows), before the first words are cut to a title: a
    title is listed by ``memdeck sessions`` and the TUI, where ``password=hunter2`` must not be read.
    """
    for candidate, injected in ((label, is_injected), (display_name, is_injected_title)):
        if candidate and candidate.strip():
            if not injected(candidate):
                return redact_secrets(candidate.strip())
            break  # OpenClaw titled it with the metadata block (or plugin block) it put before the user's words
    return title_from_words(redact_secrets(first_words)) if first_words else None


# ---------------------------------------------------------------------------------------------
# The legacy folder


class FolderSource:
    """A folder of JSONL transcripts (OpenClaw's legacy ``agents/<agent>/sessions``) and its ``sessions.json``.

    Lists ``<id>.jsonl`` transcripts (``-topic-<n>`` ones too) and ``.reset.`` / ``.deleted.``
    archives (marked archived); ``*.trajectory.jsonl`` exports and ``*.checkpoint.<uuid>.jsonl``
    copies are not sessions (see :func:`engine.sessions.legacy.classify_legacy_name`).

    Args:
        folder: the sessions folder (it may not exist).
        flush_state: memdeck's flush record (see :func:`read_flush_state`); None: no record.
    """

    kind = KIND_FOLDER

    def __init__(self, folder: Path, flush_state: Path | None = None) -> None:
        self.folder = Path(folder)
        self.flush_state = flush_state

    def __repr__(self) -> str:
        return f"FolderSource({str(self.folder)!r})"

    @property
    def location(self) -> Path:
        """The folder."""
        return self.folder

    def list_sessions(self) -> list[SessionInfo]:
        """Every transcript in the folder, newest activity first (see :func:`list_sessions`)."""
        return list_sessions(self.folder, self.flush_state)

    def find(self, session: str, *, files: bool = False) -> Path:
        """A citation path, an id or a unique id prefix (with ``files``, a file path) → the transcript (see
        :func:`find_transcript`)."""
        return find_transcript(self.folder, session, files=files)

    def read(self, session: str | Path, *, max_bytes: int | None = None) -> Transcript:
        """Parse a transcript named by path, id or id prefix."""
        path = session if isinstance(session, Path) and session.is_absolute() else self.find(str(session))
        return read_transcript(path, max_bytes=max_bytes)

    def store_entry(self, session: str | Path) -> StoreEntry | None:
        """The transcript's ``sessions.json`` entry (see :func:`store_entry_for`)."""
        path = session if isinstance(session, Path) and session.is_absolute() else self.find(str(session))
        return store_entry_for(path)

    def jsonl_lines(self, session: str | Path) -> Iterator[tuple[int, bytes]]:
        """The transcript file's lines, as they are on disk."""
        path = session if isinstance(session, Path) and session.is_absolute() else self.find(str(session))
        return _file_lines(path)

    def describe(self) -> SourceStatus:
        """The folder, and whether it exists and holds transcripts."""
        where = str(self.folder)
        if not self.folder.exists():
            return SourceStatus(self.kind, where, False, f"no sessions folder ({self.folder})", problem="missing")
        if not self.folder.is_dir():
            return SourceStatus(self.kind, where, False, f"not a folder: {self.folder}", problem="unsupported")
        try:
            names = _folder_sessions(self.folder)
        except SessionReadError as exc:
            return SourceStatus(self.kind, where, False, str(exc), problem="unreadable")
        count = len(names)
        return SourceStatus(self.kind, where, True, plural(count, "transcript"), sessions=count)

    def index_files(self) -> list[SessionFile]:
        """The folder's transcripts and archives (regular files, no symlinks) as the index lists them."""
        folder = str(self.folder)
        try:
            with os.scandir(folder) as it:
                entries = sorted((e for e in it if classify_legacy_name(e.name).is_session), key=lambda e: e.name)
        except FileNotFoundError as exc:
            raise SessionReadError(f"sessions directory missing ({self.folder})") from exc
        except OSError as exc:
            if os.path.isdir(folder):
                return []  # an unreadable folder lists nothing, as glob did
            raise SessionReadError(f"sessions directory missing ({self.folder})") from exc
        found: list[SessionFile] = []
        for entry in entries:
            try:
                if entry.is_symlink() or not entry.is_file():
                    continue
                st = entry.stat()
            except OSError:
                continue  # removed between listing and stat
            found.append(SessionFile(f"sessions/{entry.name}", Path(entry.path), "sessions", st.st_mtime_ns,
                                     st.st_size, session=entry.path, reader=None))
        return found


def _file_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    try:
        fh = open(path, "rb")  # noqa: SIM115 (opened now so a missing file fails here; the generator closes it)
    except OSError as exc:
        raise SessionReadError(f"cannot read {path}: {exc.strerror or exc}") from exc

    def lines() -> Iterator[tuple[int, bytes]]:
        with fh:
            for number, line in enumerate(fh, 1):
                yield number, line[:-1] if line.endswith(b"\n") else line

    return lines()


def openclaw_state_dir() -> Path:
    """OpenClaw's state folder: ``$OPENCLAW_STATE_DIR``, else ``~/.openclaw``."""
    env = os.environ.get("OPENCLAW_STATE_DIR", "").strip()
    return Path(env).expanduser() if env else Path.home() / ".openclaw"


def resolve_sessions_dir(explicit: Path | None, config_value: Path | None, agent: str = "main") -> Path:
    """Decide which legacy sessions folder to read.

    Precedence: ``explicit`` (``--sessions``), env ``MEMDECK_SESSIONS``, ``config_value``, then
    OpenClaw's default ``<state>/agents/<agent>/sessions`` (``$OPENCLAW_STATE_DIR`` or ``~/.openclaw``).

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
    return openclaw_state_dir() / "agents" / agent / "sessions"


def _folder_sessions(folder: Path) -> list[LegacyName]:
    """The sessions among a folder's regular files (archives included), sorted by name.

    Raises:
        SessionReadError: the folder does not exist or cannot be listed.
    """
    try:
        with os.scandir(folder) as it:
            # Regular files only, as the index lists them: a symlink in the folder could lead anywhere.
            names = [entry.name for entry in it if entry.is_file(follow_symlinks=False)]
    except FileNotFoundError as exc:
        raise SessionReadError(f"sessions folder not found: {folder}") from exc
    except NotADirectoryError as exc:
        raise SessionReadError(f"not a folder: {folder}") from exc
    except OSError as exc:
        raise SessionReadError(f"cannot list {folder}: {exc.strerror or exc}") from exc
    return sorted((item for item in map(classify_legacy_name, names) if item.is_session), key=lambda i: i.name)


def _listed_id(item: LegacyName) -> str:
    """The id a listing shows for a legacy file: the transcript's own id (unique per file, topics included)."""
    return item.file_id or item.session_id or item.name


class CitationRefused(SessionLookupError):
    """Text that starts like a session citation (``sessions/…``) but is not one of its forms."""


def _citation_name(session: str) -> str | None:
    """The file name a session citation names: ``sessions/<file>`` or ``sessions/<agent>/<id>.jsonl`` → the last
    part; None when the text is no citation at all (it does not start with ``sessions/``).

    Parsed strictly, never resolved against the file system: the name is looked up inside the session source
    only, so a citation can never reach a file elsewhere.

    Raises:
        CitationRefused: it starts with ``sessions/`` but is not one of those forms (``..``, an absolute or
            empty part, a backslash, control characters, extra parts).
    """
    text = session.strip()
    if not text.startswith("sessions/"):
        return None
    if "\\" in text or any(ord(ch) < 32 or ord(ch) == 127 for ch in text):
        raise CitationRefused(f"not a session citation: {text!r} (backslashes and control characters are "
                                 "refused)")
    parts = text.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise CitationRefused(f"not a session citation: {text!r} ('..', '.' and empty parts are refused; "
                                 "cite sessions/<file> or sessions/<agent>/<id>.jsonl)")
    if len(parts) == 3 and parts[2].endswith(".jsonl"):
        return parts[2]
    if len(parts) == 2:
        return parts[1]
    raise CitationRefused(f"not a session citation: {text!r} (cite sessions/<file> or "
                             "sessions/<agent>/<id>.jsonl)")


def _without_anchor(text: str) -> str:
    """A session citation as search prints it, without its line range (``sessions/<file>#L2-L25``, ``…:2-25`` →
    ``sessions/<file>``): to name a session, its lines do not matter. Other text comes back as it was.

    Raises:
        CitationRefused: a ``sessions/`` path with a malformed line anchor (``#L3-``, ``:2:3``).
    """
    if not text.startswith("sessions/"):
        return text
    from engine.citation import parse_citation
    from engine.errors import PathRefused

    try:
        return parse_citation(text).path
    except PathRefused as exc:
        raise CitationRefused(str(exc).removeprefix("path refused: ")) from None


def _looks_like_path(text: str) -> bool:
    """Whether what a user typed is a file path rather than an id (a separator, ``~`` or a ``.jsonl`` name)."""
    return "/" in text or os.sep in text or text.startswith("~") or text.endswith(".jsonl")


def _typed_path(text: str) -> Path:
    """A file path the user typed, ``~`` expanded.

    Raises:
        SessionLookupError: ``~name`` of a user that does not exist.
    """
    try:
        return Path(text).expanduser()
    except RuntimeError as exc:
        raise SessionLookupError(f"transcript not found: {text}: {exc}") from exc


def _session_file(folder: Path, name: str) -> Path | None:
    """``folder/name`` when it is a session transcript there: a regular file (no symlink), a session's name."""
    if "/" in name or os.sep in name or name in ("", ".", "..") or not classify_legacy_name(name).is_session:
        return None
    candidate = folder / name
    try:
        st = os.lstat(candidate)
    except (OSError, ValueError):
        return None
    return candidate if S_ISREG(st.st_mode) else None


def _folder_agent(folder: Path) -> str | None:
    """The agent whose sessions a folder holds: ``<agent>`` in OpenClaw's ``agents/<agent>/sessions``, else None
    (a folder elsewhere names no agent)."""
    if folder.name == "sessions" and folder.parent.parent.name == "agents" and folder.parent.name:
        return folder.parent.name
    return None


def find_transcript(sessions_dir: Path, session: str, *, files: bool = False) -> Path:
    """Find a transcript from what the user typed: a citation path (with or without its line range), a session
    id, or a unique id prefix (and, with ``files``, a path to a JSONL file).

    Active transcripts win over ``.reset.`` / ``.deleted.`` archives with the same id. Trajectory
    exports and checkpoint copies never match. A citation (``sessions/<file>``, ``sessions/<agent>/<id>.jsonl``)
    or an id is looked up only inside ``sessions_dir``, never relative to the working directory.

    Args:
        sessions_dir: the sessions folder.
        session: what was typed.
        files: also accept a path to a transcript file anywhere (``memdeck flush ./export.jsonl``: a path the
            user typed at the shell); never for agents, search hits or the MCP server.

    Raises:
        SessionReadError: nothing or more than one session matches, or the text is no citation, id or (with
            ``files``) path.
    """
    folder = Path(sessions_dir)
    text = session.strip()
    if not text:
        raise SessionLookupError(EMPTY_SESSION)
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in text):
        raise SessionLookupError(f"no session {text!r}: control characters are refused")
    text = _without_anchor(text)  # a search hit's citation, pasted back, names its session
    cited = _citation_name(text)
    if cited is not None:
        agent = _folder_agent(folder)
        if agent is not None and text.count("/") == 2 and text.split("/")[1] != agent:
            raise SessionLookupError(f"no session {text!r}: these are agent {agent!r}'s sessions "
                                     f"(sessions/{agent}/<id>.jsonl)")
        item = classify_legacy_name(cited)
        found = _session_file(folder, cited)
        if found is not None:
            return found
        if item.kind.value == "session" and item.file_id:
            # sessions/<agent>/<id>.jsonl names the id, exactly (never as a prefix): its active transcript, else
            # its newest archive.
            same = [entry for entry in _folder_sessions(folder) if _listed_id(entry) == item.file_id]
            if same:
                active = [entry.name for entry in same if not entry.archived]
                return folder / (active or [entry.name for entry in same])[-1]
        raise SessionLookupError(f"transcript not found: {session}")
    elif _looks_like_path(text):
        found = _session_file(folder, text)  # a bare file name of the folder
        if found is not None:
            return found
        if not files:
            raise SessionLookupError(f"no session {text!r}: name a session by its id, an id prefix or its citation "
                                     "(sessions/<file>, sessions/<agent>/<id>.jsonl)")
        candidate = _typed_path(text)
        if candidate.is_file():
            return candidate.absolute()  # absolute: read() takes it as the file, not as a name to look up
        raise SessionLookupError(f"transcript not found: {session}")
    session = text
    exact = _session_file(folder, f"{session}.jsonl")
    if exact is not None:
        return exact
    items = _folder_sessions(folder)
    matches = [item for item in items if _listed_id(item).startswith(session)]
    ids = sorted({_listed_id(item) for item in matches})
    if len(ids) == 1:
        # The active transcript wins; else the newest archive (names end in a sortable timestamp).
        active = [item.name for item in matches if not item.archived]
        return folder / (active or [item.name for item in matches])[-1]
    if not ids:
        raise SessionLookupError(f"no session matching {session!r} in {folder} (memdeck sessions lists them)")
    shown = ", ".join(ids[:5]) + (" …" if len(ids) > 5 else "")
    raise SessionLookupError(f"{session!r} matches {len(ids)} sessions: {shown}; type more of the id")


EMPTY_SESSION = "no session named: give a session id, an id prefix or its citation (memdeck sessions lists them)"
"""The refusal of a blank session name (a prefix of every id, it would "match" them all)."""


def read_flush_state(state_path: Path | None) -> dict[str, datetime]:
    """Read memdeck's flush record (``{session_id: iso time}``); a missing or bad file reads as empty.

    Args:
        state_path: the JSON file, e.g. ``<home>/flush-state.json``.

    Returns:
        When each session was last flushed.
    """
    if state_path is None:
        return {}
    data = read_json_state(Path(state_path), FLUSH_RECORD).document
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
        data = scrub_json(json.loads(path.read_bytes().decode("utf-8", errors="replace")))
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
    item = classify_legacy_name(path.name)
    if found is None and not item.archived:
        found = by_id.get(_listed_id(item))
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

    Takes the sessions directly in the folder (``*.jsonl``, ``.reset.`` and ``.deleted.`` archives —
    those marked ``archived``; not trajectories or checkpoint copies), joins each with its
    ``sessions.json`` entry (by ``sessionFile``, else by ``sessionId``) and with memdeck's flush record.

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
    items = _folder_sessions(folder)
    by_file, by_id = _read_store(store_path if store_path is not None else folder / "sessions.json")
    flushes = read_flush_state(flush_state)
    infos = [_session_info(folder / item.name, item, by_file, by_id, flushes) for item in items]
    infos.sort(key=lambda info: (info.last_activity, info.session_id), reverse=True)
    return infos


def _session_info(
    path: Path,
    item: LegacyName,
    by_file: dict[str, _StoreEntry],
    by_id: dict[str, _StoreEntry],
    flushes: dict[str, datetime],
) -> SessionInfo:
    session_id = _listed_id(item)
    archived = item.archived
    try:
        stat = path.stat()
        size, mtime = stat.st_size, datetime.fromtimestamp(stat.st_mtime, tz=UTC)
    except OSError:
        size, mtime = 0, _EPOCH
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
    tokens_source: str | None = "store"
    if data.get("totalTokensFresh") is False or not total:
        total = summary.total_tokens if summary else None
        tokens_source = "usage"
    if total is None:
        tokens_source = None
    compactions = as_int(data.get("compactionCount"))
    if compactions is None:
        compactions = summary.compactions if summary else 0
    label = as_str(data.get("label"))
    display_name = as_str(data.get("displayName"))
    flush = data.get("memoryFlush")
    flush_record = flush if isinstance(flush, dict) else {}
    flush_count = as_int(data.get("memoryFlushCompactionCount"))
    if flush_count is None:
        flush_count = as_int(flush_record.get("compactionCount"))
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
        display_name=display_name,
        memory_flush_at=parse_timestamp(data.get("memoryFlushAt")),
        memory_flush_compaction_count=flush_count,
        flushed_at=flushes.get(session_id),
        skipped_lines=summary.skipped if summary else 0,
        error=error,
        title=_choose_title(label, display_name, summary.first_words if summary else None),
        label=label,
        model_provider=as_str(data.get("modelProvider")),
        model=as_str(data.get("model")),
        input_tokens=as_int(data.get("inputTokens")),
        output_tokens=as_int(data.get("outputTokens")),
        tokens_source=tokens_source,
        memory_flush_recorded=bool(flush_record),
        memory_flush_kind=as_str(flush_record.get("kind")),
        source=KIND_FOLDER,
        rel=f"sessions/{path.name}",
        line_count=summary.line_count if summary else None,
    )


# ---------------------------------------------------------------------------------------------
# OpenClaw's agent database


def explicit_sessions_location(config: Config) -> Path | None:
    """What the user named, if anything: ``MEMDECK_SESSIONS``, else ``sessions_dir`` (``--sessions``/config)."""
    env = os.environ.get("MEMDECK_SESSIONS")
    if env:
        return Path(env).expanduser()
    return Path(config.sessions_dir).expanduser() if config.sessions_dir is not None else None


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
    if info.openclaw_flushed_this_cycle:
        return False  # OpenClaw flushed at this compaction count (2026.9 records no time, only the count)
    last = info.last_flush
    if last is None:
        return True
    return info.last_message is not None and info.last_message > last
