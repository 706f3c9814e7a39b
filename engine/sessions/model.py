"""The plain data of agent sessions: transcripts and their entries, listings, store entries (no I/O here)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine.errors import MemdeckError
from engine.sessions.legacy import classify_legacy_name

RESET_MARK = ".jsonl.reset."
"""What an archived transcript's name holds: ``<id>.jsonl.reset.<timestamp>`` (left by ``/new`` and ``/reset``)."""

DELETED_MARK = ".jsonl.deleted."
"""What a deleted session's archive is named: ``<id>.jsonl.deleted.<timestamp>``."""

ENTRY_KINDS = frozenset(
    {
        "session",
        "message",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "model_change",
        "thinking_level_change",
        "label",
        "session_info",
        "unknown",
    }
)


class SessionReadError(MemdeckError):
    """A transcript or sessions folder cannot be read at all (missing, unreadable, not a file)."""


class SessionLookupError(SessionReadError):
    """Nothing, or more than one session, matches what a user or agent named."""


@dataclass(frozen=True)
class Usage:
    """Token usage reported with an assistant message."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total_tokens: int = 0
    cost_total: float = 0.0


@dataclass(frozen=True)
class ToolCall:
    """A tool call made by the assistant; ``arguments`` is compact JSON, capped in size."""

    name: str
    id: str | None
    arguments: str


@dataclass(frozen=True)
class ToolResult:
    """The result of a tool call as recorded in a ``toolResult`` message."""

    tool_name: str | None
    tool_call_id: str | None
    is_error: bool
    text: str


@dataclass(frozen=True)
class Message:
    """The parsed ``message`` of a message entry.

    Attributes:
        role: ``user``, ``assistant``, ``toolResult`` or ``other`` (see ``raw_role``).
        raw_role: the role as written in the file.
        text: the text blocks joined with newlines (a string content is taken as is).
        thinking: the assistant's thinking blocks joined with newlines.
        tool_calls: the assistant's tool calls.
        tool_result: set for ``toolResult`` messages.
        usage: token usage of an assistant message.
        model: model id of an assistant message.
        provider: provider of an assistant message.
        stop_reason: ``stop``, ``length``, ``toolUse``, ``error`` or ``aborted``.
        error_message: the assistant's error message, if any.
        provenance_kind: ``inter_session`` for messages forwarded from another session.
        images: how many image blocks the message had (their data is never kept).
        truncated: True when some text was cut to :data:`MAX_TEXT_CHARS`.
    """

    role: str
    raw_role: str
    text: str = ""
    thinking: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_result: ToolResult | None = None
    usage: Usage | None = None
    model: str | None = None
    provider: str | None = None
    stop_reason: str | None = None
    error_message: str | None = None
    provenance_kind: str | None = None
    images: int = 0
    truncated: bool = False


@dataclass(frozen=True)
class Entry:
    """One transcript line that parsed as a JSON object.

    Attributes:
        line: 1-based JSONL line number.
        kind: one of :data:`ENTRY_KINDS`; ``unknown`` keeps the original in ``raw_type``.
        id: the entry id (the session id for the header).
        parent_id: the parent entry id.
        timestamp: the ISO timestamp as written (or derived from the message's epoch ms).
        message: set for ``message`` entries.
        summary: compaction / branch summary text.
        tokens_before: tokens before a compaction.
        custom_type: ``customType`` of custom entries.
        detail: a short human description for other kinds (custom_message content, label text,
            session name, ``provider/model`` of a model change, thinking level).
        raw_type: the ``type`` value as written.
        hidden: a ``custom_message`` written with ``display: false`` (context for the model; OpenClaw does not
            show it).
        retained: a compaction's ``retainedTail``: the messages it kept verbatim.
    """

    line: int
    kind: str
    id: str | None = None
    parent_id: str | None = None
    timestamp: str | None = None
    message: Message | None = None
    summary: str | None = None
    tokens_before: int | None = None
    custom_type: str | None = None
    detail: str | None = None
    raw_type: str | None = None
    hidden: bool = False
    retained: tuple[Message, ...] = ()

    @property
    def time(self) -> datetime | None:
        """The timestamp as an aware datetime, or None when missing or unparsable."""
        return parse_timestamp(self.timestamp)


@dataclass(frozen=True)
class Skipped:
    """A line that could not be used, and why."""

    line: int
    reason: str


@dataclass(frozen=True)
class SessionHeader:
    """The transcript's ``{"type":"session"}`` header line."""

    line: int
    version: int | None
    id: str | None
    timestamp: str | None
    cwd: str | None
    parent_session: str | None = None


@dataclass(frozen=True)
class Transcript:
    """A parsed transcript.

    Attributes:
        path: the file read.
        session_id: the id derived from the file name (``<id>.jsonl``, ``<id>.jsonl.reset.<ts>``).
        header: the first session header, if any.
        entries: every usable line, in file order (the header included, as kind ``session``).
        skipped: lines that were not usable (invalid JSON, truncated, binary, too long, ...).
        line_count: number of lines in the file.
        size: file size in bytes (of the whole file, also when only its head was read).
        decode_errors: lines that held bytes that are not UTF-8 (replaced with U+FFFD).
        complete: False when only the first lines were read (a head read for a first screen).
    """

    path: Path
    session_id: str
    header: SessionHeader | None
    entries: tuple[Entry, ...]
    skipped: tuple[Skipped, ...]
    line_count: int
    size: int
    decode_errors: int = 0
    complete: bool = True

    @property
    def id8(self) -> str:
        """The first 8 characters of the session id, for back-references."""
        return self.session_id[:8]

    def messages(self) -> Iterator[Entry]:
        """Yield the message entries in file order."""
        return (entry for entry in self.entries if entry.message is not None)

    @property
    def compactions(self) -> int:
        """How many compaction entries the transcript has."""
        return sum(1 for entry in self.entries if entry.kind == "compaction")

    @property
    def unknown_count(self) -> int:
        """How many entries had an unknown ``type``."""
        return sum(1 for entry in self.entries if entry.kind == "unknown")

    @property
    def last_message_time(self) -> datetime | None:
        """Timestamp of the last message entry that has one."""
        for entry in reversed(self.entries):
            if entry.message is not None and entry.time is not None:
                return entry.time
        return None


@dataclass(frozen=True)
class SessionSummary:
    """What a listing needs about one transcript, read without keeping its text."""

    session_id: str
    path: Path
    header_id: str | None
    started: datetime | None
    last_message: datetime | None
    message_count: int
    user_messages: int
    assistant_messages: int
    total_tokens: int | None
    compactions: int
    skipped: int
    size: int
    first_words: str | None = None
    """The first thing the user said (injected metadata stripped): a title when the store has none."""
    line_count: int | None = None


@dataclass(frozen=True)
class SessionInfo:
    """One transcript in a sessions folder, joined with ``sessions.json`` and memdeck's flush record.

    Attributes:
        session_id: the id from the file name.
        path: the transcript file.
        archived: True for ``*.jsonl.reset.*`` archives left by ``/new`` and ``/reset``.
        size: file size in bytes.
        mtime: file modification time.
        started: header timestamp (else the first entry's).
        last_message: timestamp of the last message.
        message_count: message entries (all roles).
        total_tokens: the store's fresh ``totalTokens``, else the transcript's last usage.
        context_tokens: the store's ``contextTokens`` (the model's context window), if known.
        compactions: the store's ``compactionCount``, else compaction entries in the transcript.
        session_key: the ``sessions.json`` key, e.g. ``agent:main:main``.
        chat_type: ``direct``, ``group`` or ``room``.
        channel: e.g. ``telegram``.
        display_name: the store's display name.
        memory_flush_at: when OpenClaw last ran its own memory flush for this session.
        memory_flush_compaction_count: the compaction count at OpenClaw's last flush.
        flushed_at: when memdeck last flushed this session (its own record).
        skipped_lines: lines of the transcript that were not usable.
        error: why the file could not be summarised, when it could not.
        title: what a listing shows as the session's name: OpenClaw's label, else its display name;
            when that is injected metadata, the first thing the user said.
        label: the user-set label.
        model_provider: the session's model provider (agent database only).
        model: the session's model (agent database only).
        input_tokens: the store's ``inputTokens``.
        output_tokens: the store's ``outputTokens``.
        tokens_source: which count ``total_tokens`` is: ``store`` (the session store's fresh
            ``totalTokens``) or ``usage`` (the last reply's usage in the transcript); None without one.
        memory_flush_recorded: OpenClaw's own flush record exists (2026.9's ``memoryFlush`` has no
            time: then ``memory_flush_at`` is None but ``memory_flush_compaction_count`` is set).
        memory_flush_kind: what OpenClaw recorded about that flush.
        source: ``folder`` (a JSONL file) or ``agent-db`` (a row set in OpenClaw's database).
        rel: the session's name in search results and citations: ``sessions/<file>`` for a file,
            OpenClaw's ``sessions/<agent>/<id>.jsonl`` for a database session (its ``path`` is then
            the same stand-in, never a file to open).
        line_count: JSONL lines (= database rows), the header included, when known.
    """

    session_id: str
    path: Path
    archived: bool
    size: int
    mtime: datetime
    started: datetime | None = None
    last_message: datetime | None = None
    message_count: int = 0
    total_tokens: int | None = None
    context_tokens: int | None = None
    compactions: int = 0
    session_key: str | None = None
    chat_type: str | None = None
    channel: str | None = None
    display_name: str | None = None
    memory_flush_at: datetime | None = None
    memory_flush_compaction_count: int | None = None
    flushed_at: datetime | None = None
    skipped_lines: int = 0
    error: str | None = None
    title: str | None = None
    label: str | None = None
    model_provider: str | None = None
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    tokens_source: str | None = None
    memory_flush_recorded: bool = False
    memory_flush_kind: str | None = None
    source: str = "folder"
    rel: str | None = None
    line_count: int | None = None

    @property
    def flushed(self) -> bool:
        """True when memdeck or OpenClaw flushed this session at least once."""
        return self.flushed_at is not None or self.memory_flush_at is not None or self.memory_flush_recorded

    @property
    def openclaw_flushed_this_cycle(self) -> bool:
        """OpenClaw ran its own memory flush in the current compaction cycle (its count is the session's).

        OpenClaw 2026.9 records no flush time, only the compaction count it flushed at; an older
        entry's ``memoryFlushAt`` counts the same way. Without any record this is False, even when
        both counts are 0 (unlike OpenClaw #47143).
        """
        recorded = self.memory_flush_recorded or self.memory_flush_at is not None
        return (
            recorded
            and self.memory_flush_compaction_count is not None
            and self.memory_flush_compaction_count == self.compactions
        )

    @property
    def citation_path(self) -> str:
        """The session's name in search results and citations (see ``rel``)."""
        return self.rel or f"sessions/{self.path.name}"

    @property
    def last_flush(self) -> datetime | None:
        """The later of memdeck's and OpenClaw's last flush."""
        times = [t for t in (self.flushed_at, self.memory_flush_at) if t is not None]
        return max(times) if times else None

    @property
    def last_activity(self) -> datetime:
        """The last message time, else the file's modification time."""
        return self.last_message or self.mtime


@dataclass(frozen=True)
class StoreEntry:
    """A transcript's entry in ``sessions.json`` (the fields memdeck uses)."""

    session_key: str
    session_id: str | None
    chat_type: str | None
    channel: str | None
    display_name: str | None


# ---------------------------------------------------------------------------------------------
# Small typed accessors: every field of a line may be missing or of the wrong type.


def as_str(value: Any) -> str | None:
    """``value`` when it is a string, else None."""
    return value if isinstance(value, str) else None


def as_int(value: Any) -> int | None:
    """``value`` as an int when it is a (finite, integral-sized) number but not a bool, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value == value and abs(value) < 1e18:
        return int(value)
    return None


def as_float(value: Any) -> float | None:
    """``value`` as a float when it is a finite number but not a bool, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and value == value and abs(value) < 1e300:
        return float(value)
    return None


def parse_timestamp(value: Any) -> datetime | None:
    """Parse an ISO-8601 string or epoch milliseconds into an aware UTC datetime.

    Args:
        value: what the transcript holds (``"2026-01-16T14:30:00.000Z"`` or ``1768573800000``).

    Returns:
        The time, or None when ``value`` is missing or not a time.
    """
    if isinstance(value, str):
        text = value.strip()
        if not text or len(text) > 64:
            return None
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            return None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return parsed.astimezone(UTC)
    number = as_float(value)
    if number is None:
        return None
    try:
        return datetime.fromtimestamp(number / 1000.0, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def session_id_from_path(path: Path) -> str:
    """The session id a transcript file name carries.

    ``<id>.jsonl`` → ``<id>``; ``<id>.jsonl.reset.<ts>`` and ``<id>.jsonl.deleted.<ts>`` → ``<id>``;
    any other name → its stem.
    """
    name = path.name
    for mark in (RESET_MARK, DELETED_MARK):
        if mark in name:
            return name.split(mark, 1)[0]
    if name.endswith(".jsonl"):
        return name[: -len(".jsonl")]
    return path.stem


def is_transcript_name(name: str) -> bool:
    """Whether a file in a sessions folder is a session: ``<id>.jsonl`` or a ``.reset.``/``.deleted.`` archive.

    Trajectory exports (``*.trajectory.jsonl``) and checkpoint copies (``*.checkpoint.<uuid>.jsonl``)
    are not sessions, as in OpenClaw (see :func:`engine.sessions.legacy.classify_legacy_name`).
    """
    return classify_legacy_name(name).is_session
