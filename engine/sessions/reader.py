"""Reading OpenClaw session transcripts (JSONL) robustly, listing a sessions folder, and flush state."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from engine.errors import MemdeckError
from engine.health.secrets import redact_secrets

MAX_LINE_BYTES = 64 * 1024 * 1024
"""Lines longer than this are skipped without being held in memory."""

MAX_TEXT_CHARS = 100_000
"""Cap for any one stored text field (message text, thinking, tool output, summary)."""

MAX_ARGUMENT_CHARS = 10_000
"""Cap for a tool call's arguments (compact JSON)."""

DEFAULT_CONTEXT_WINDOW = 200_000
DEFAULT_RESERVE_TOKENS = 20_000
DEFAULT_SOFT_THRESHOLD = 4_000
DEFAULT_FORCE_FLUSH_BYTES = 2 * 1024 * 1024

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

_BOM = b"\xef\xbb\xbf"
_RESET_MARK = ".jsonl.reset."


class SessionReadError(MemdeckError):
    """A transcript or sessions folder cannot be read at all (missing, unreadable, not a file)."""


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
        size: file size in bytes.
        decode_errors: lines that held bytes that are not UTF-8 (replaced with U+FFFD).
    """

    path: Path
    session_id: str
    header: SessionHeader | None
    entries: tuple[Entry, ...]
    skipped: tuple[Skipped, ...]
    line_count: int
    size: int
    decode_errors: int = 0

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

    @property
    def flushed(self) -> bool:
        """True when memdeck or OpenClaw flushed this session at least once."""
        return self.flushed_at is not None or self.memory_flush_at is not None

    @property
    def last_flush(self) -> datetime | None:
        """The later of memdeck's and OpenClaw's last flush."""
        times = [t for t in (self.flushed_at, self.memory_flush_at) if t is not None]
        return max(times) if times else None

    @property
    def last_activity(self) -> datetime:
        """The last message time, else the file's modification time."""
        return self.last_message or self.mtime


# ---------------------------------------------------------------------------------------------
# Small typed accessors: every field of a line may be missing or of the wrong type.


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value == value and abs(value) < 1e18:
        return int(value)
    return None


def _float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and value == value and abs(value) < 1e300:
        return float(value)
    return None


def _cap(text: str, limit: int = MAX_TEXT_CHARS) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    return text[:limit], True


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
    number = _float(value)
    if number is None:
        return None
    try:
        return datetime.fromtimestamp(number / 1000.0, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def session_id_from_path(path: Path) -> str:
    """The session id a transcript file name carries.

    ``<id>.jsonl`` → ``<id>``; ``<id>.jsonl.reset.<ts>`` → ``<id>``; any other name → its stem.
    """
    name = path.name
    if _RESET_MARK in name:
        return name.split(_RESET_MARK, 1)[0]
    if name.endswith(".jsonl"):
        return name[: -len(".jsonl")]
    return path.stem


# ---------------------------------------------------------------------------------------------
# Line reading


@dataclass(frozen=True)
class _RawLine:
    number: int
    data: bytes | None  # None: longer than the limit, not kept
    ended: bool  # True when a newline ended the line
    length: int


def _iter_raw_lines(fh: IO[bytes], max_line_bytes: int) -> Iterator[_RawLine]:
    number = 0
    while True:
        data = fh.readline(max_line_bytes + 1)
        if not data:
            return
        number += 1
        if data.endswith(b"\n"):
            yield _RawLine(number, data[:-1], True, len(data) - 1)
            continue
        if len(data) <= max_line_bytes:
            # Only the last line of a file ends without a newline.
            yield _RawLine(number, data, False, len(data))
            return
        length = len(data)
        ended = False
        while True:  # drain the oversized line without keeping it
            more = fh.readline(1 << 20)
            if not more:
                break
            if more.endswith(b"\n"):
                length += len(more) - 1
                ended = True
                break
            length += len(more)
        yield _RawLine(number, None, ended, length)
        if not ended:
            return


def _looks_binary(data: bytes) -> bool:
    sample = data[:4096]
    if b"\x00" in sample:
        return True
    controls = sum(1 for byte in sample if byte < 9 or 13 < byte < 32)
    return controls > max(2, len(sample) // 20)


@dataclass
class _LineReader:
    """Turns raw lines into JSON objects, recording why unusable lines were skipped."""

    skipped: list[Skipped] = field(default_factory=list)
    decode_errors: int = 0
    line_count: int = 0

    def objects(self, fh: IO[bytes], max_line_bytes: int) -> Iterator[tuple[int, dict[str, Any]]]:
        for raw in _iter_raw_lines(fh, max_line_bytes):
            self.line_count = raw.number
            if raw.data is None:
                self.skipped.append(
                    Skipped(raw.number, f"line too long ({raw.length:,} bytes; limit {max_line_bytes:,})")
                )
                continue
            data = raw.data
            if data.endswith(b"\r"):
                data = data[:-1]
            if raw.number == 1 and data.startswith(_BOM):
                data = data[len(_BOM) :]
            if not data.strip():
                continue
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                self.decode_errors += 1
                text = data.decode("utf-8", errors="replace")
            text = text.lstrip("\ufeff")
            try:
                obj = json.loads(text)
            except RecursionError:
                self.skipped.append(Skipped(raw.number, "JSON nested too deeply"))
                continue
            except ValueError as exc:
                self.skipped.append(Skipped(raw.number, self._reason(raw, data, exc)))
                continue
            if not isinstance(obj, dict):
                self.skipped.append(Skipped(raw.number, f"not a JSON object ({type(obj).__name__})"))
                continue
            yield raw.number, obj

    @staticmethod
    def _reason(raw: _RawLine, data: bytes, exc: ValueError) -> str:
        if _looks_binary(data):
            return "binary data"
        if not raw.ended:
            return "truncated last line (incomplete JSON)"
        if isinstance(exc, json.JSONDecodeError):
            return f"invalid JSON ({exc.msg} at column {exc.colno})"
        return f"invalid JSON ({exc})"


def _open(path: Path) -> IO[bytes]:
    try:
        if path.is_dir():
            raise SessionReadError(f"{path} is a folder, not a transcript file")
        return open(path, "rb")
    except FileNotFoundError as exc:
        raise SessionReadError(f"transcript not found: {path}") from exc
    except PermissionError as exc:
        raise SessionReadError(f"permission denied reading {path}") from exc
    except OSError as exc:
        raise SessionReadError(f"cannot read {path}: {exc.strerror or exc}") from exc


# ---------------------------------------------------------------------------------------------
# Parsing entries


def _content_parts(content: Any) -> tuple[list[str], list[str], list[ToolCall], int]:
    """Split message content into (texts, thinking, tool calls, image count)."""
    if isinstance(content, str):
        return [content], [], [], 0
    texts: list[str] = []
    thinking: list[str] = []
    calls: list[ToolCall] = []
    images = 0
    if not isinstance(content, list):
        return texts, thinking, calls, images
    for block in content:
        if isinstance(block, str):
            texts.append(block)
            continue
        if not isinstance(block, dict):
            continue
        block_type = block.get("type")
        if block_type == "text":
            text = _str(block.get("text"))
            if text is not None:
                texts.append(text)
        elif block_type == "thinking":
            text = _str(block.get("thinking"))
            if text is not None:
                thinking.append(text)
        elif block_type in ("toolCall", "tool_use", "toolUse"):
            args = block.get("arguments", block.get("input"))
            try:
                encoded = json.dumps(args, separators=(",", ":"), ensure_ascii=False, default=str)
            except (ValueError, TypeError, RecursionError):
                encoded = "null"
            encoded, _ = _cap(encoded, MAX_ARGUMENT_CHARS)
            calls.append(
                ToolCall(name=_str(block.get("name")) or "?", id=_str(block.get("id")), arguments=encoded)
            )
        elif block_type == "image":
            images += 1
    return texts, thinking, calls, images


def _usage(value: Any) -> Usage | None:
    if not isinstance(value, dict):
        return None
    cost = value.get("cost")
    cost_total = _float(cost.get("total")) if isinstance(cost, dict) else _float(cost)
    usage = Usage(
        input=_int(value.get("input")) or 0,
        output=_int(value.get("output")) or 0,
        cache_read=_int(value.get("cacheRead")) or 0,
        cache_write=_int(value.get("cacheWrite")) or 0,
        total_tokens=_int(value.get("totalTokens")) or 0,
        cost_total=cost_total or 0.0,
    )
    if not usage.total_tokens:
        usage = Usage(
            input=usage.input,
            output=usage.output,
            cache_read=usage.cache_read,
            cache_write=usage.cache_write,
            total_tokens=usage.input + usage.output + usage.cache_read + usage.cache_write,
            cost_total=usage.cost_total,
        )
    return usage


def _parse_message(raw: dict[str, Any]) -> Message:
    raw_role = _str(raw.get("role")) or ""
    role = raw_role if raw_role in ("user", "assistant", "toolResult") else "other"
    texts, thinking, calls, images = _content_parts(raw.get("content"))
    if role == "other" and not texts:
        # pi's bashExecution and similar custom roles carry their text in other fields.
        command, output = _str(raw.get("command")), _str(raw.get("output"))
        if command is not None:
            texts.append(f"$ {command}")
        if output is not None:
            texts.append(output)
    text, cut_text = _cap("\n".join(texts))
    think, cut_think = _cap("\n".join(thinking))
    tool_result = None
    if role == "toolResult":
        tool_result = ToolResult(
            tool_name=_str(raw.get("toolName")),
            tool_call_id=_str(raw.get("toolCallId")),
            is_error=raw.get("isError") is True,
            text=text,
        )
    provenance = raw.get("provenance")
    return Message(
        role=role,
        raw_role=raw_role,
        text=text,
        thinking=think,
        tool_calls=tuple(calls),
        tool_result=tool_result,
        usage=_usage(raw.get("usage")) if role == "assistant" else None,
        model=_str(raw.get("model")),
        provider=_str(raw.get("provider")),
        stop_reason=_str(raw.get("stopReason")),
        error_message=_cap(_str(raw.get("errorMessage")) or "", 10_000)[0] or None,
        provenance_kind=_str(provenance.get("kind")) if isinstance(provenance, dict) else None,
        images=images,
        truncated=cut_text or cut_think,
    )


def _detail(obj: dict[str, Any], kind: str) -> str | None:
    if kind == "custom_message":
        texts, _, _, _ = _content_parts(obj.get("content"))
        return _cap("\n".join(texts))[0] if texts else None
    if kind == "model_change":
        provider, model = _str(obj.get("provider")), _str(obj.get("modelId"))
        return "/".join(part for part in (provider, model) if part) or None
    if kind == "thinking_level_change":
        return _str(obj.get("thinkingLevel"))
    if kind == "label":
        return _str(obj.get("label"))
    if kind == "session_info":
        return _str(obj.get("name"))
    return None


def _parse_entry(line: int, obj: dict[str, Any]) -> Entry | Skipped:
    raw_type = _str(obj.get("type"))
    kind = raw_type if raw_type in ENTRY_KINDS and raw_type != "unknown" else "unknown"
    timestamp = _str(obj.get("timestamp"))
    message = None
    if kind == "message":
        raw_message = obj.get("message")
        if not isinstance(raw_message, dict):
            return Skipped(line, "message entry without a message object")
        message = _parse_message(raw_message)
        if timestamp is None:
            when = parse_timestamp(raw_message.get("timestamp"))
            timestamp = when.isoformat().replace("+00:00", "Z") if when else None
    summary = None
    if kind in ("compaction", "branch_summary"):
        summary = _cap(_str(obj.get("summary")) or "")[0]
    return Entry(
        line=line,
        kind=kind,
        id=_str(obj.get("id")),
        parent_id=_str(obj.get("parentId")),
        timestamp=timestamp,
        message=message,
        summary=summary,
        tokens_before=_int(obj.get("tokensBefore")) if kind == "compaction" else None,
        custom_type=_str(obj.get("customType")),
        detail=_detail(obj, kind),
        raw_type=raw_type,
    )


def _header(line: int, obj: dict[str, Any]) -> SessionHeader:
    return SessionHeader(
        line=line,
        version=_int(obj.get("version")),
        id=_str(obj.get("id")),
        timestamp=_str(obj.get("timestamp")),
        cwd=_str(obj.get("cwd")),
        parent_session=_str(obj.get("parentSession")),
    )


def read_transcript(path: Path, *, max_line_bytes: int = MAX_LINE_BYTES) -> Transcript:
    """Read a JSONL session transcript, skipping (and recording) every line it cannot use.

    Handles invalid JSON, a truncated last line, unknown entry types, very long lines, binary
    garbage, a UTF-8 BOM, CRLF line ends, bytes that are not UTF-8, empty files and v2 headers.

    Args:
        path: the ``.jsonl`` file (or a ``.jsonl.reset.*`` archive).
        max_line_bytes: lines longer than this are skipped without being held in memory.

    Returns:
        The parsed transcript.

    Raises:
        SessionReadError: the file does not exist or cannot be read.
    """
    path = Path(path)
    reader = _LineReader()
    entries: list[Entry] = []
    header: SessionHeader | None = None
    fh = _open(path)
    try:
        size = os.fstat(fh.fileno()).st_size
        for line, obj in reader.objects(fh, max_line_bytes):
            parsed = _parse_entry(line, obj)
            if isinstance(parsed, Skipped):
                reader.skipped.append(parsed)
                continue
            if parsed.kind == "session" and header is None:
                header = _header(line, obj)
            entries.append(parsed)
    except OSError as exc:
        raise SessionReadError(f"cannot read {path}: {exc.strerror or exc}") from exc
    finally:
        fh.close()
    return Transcript(
        path=path,
        session_id=session_id_from_path(path),
        header=header,
        entries=tuple(entries),
        skipped=tuple(sorted(reader.skipped, key=lambda item: item.line)),
        line_count=reader.line_count,
        size=size,
        decode_errors=reader.decode_errors,
    )


def summarize_transcript(path: Path, *, max_line_bytes: int = MAX_LINE_BYTES) -> SessionSummary:
    """Summarise a transcript for a listing, streaming it without keeping any text.

    Args:
        path: the transcript file.
        max_line_bytes: lines longer than this are skipped.

    Returns:
        Start and last-message times, message counts, the last usage's total tokens, compactions.

    Raises:
        SessionReadError: the file does not exist or cannot be read.
    """
    path = Path(path)
    reader = _LineReader()
    header_id: str | None = None
    started: datetime | None = None
    last_message: datetime | None = None
    messages = users = assistants = compactions = 0
    total_tokens: int | None = None
    fh = _open(path)
    try:
        size = os.fstat(fh.fileno()).st_size
        for _line, obj in reader.objects(fh, max_line_bytes):
            kind = obj.get("type")
            when = parse_timestamp(obj.get("timestamp"))
            if kind == "session":
                if header_id is None:
                    header_id = _str(obj.get("id"))
                    started = when or started
                continue
            if started is None and when is not None:
                started = when
            if kind == "compaction":
                compactions += 1
            if kind != "message":
                continue
            message = obj.get("message")
            if not isinstance(message, dict):
                reader.skipped.append(Skipped(_line, "message entry without a message object"))
                continue
            messages += 1
            role = message.get("role")
            users += role == "user"
            if role == "assistant":
                assistants += 1
                usage = _usage(message.get("usage"))
                if usage is not None and usage.total_tokens > 0:
                    total_tokens = usage.total_tokens
            when = when or parse_timestamp(message.get("timestamp"))
            if when is not None:
                last_message = when
    except OSError as exc:
        raise SessionReadError(f"cannot read {path}: {exc.strerror or exc}") from exc
    finally:
        fh.close()
    return SessionSummary(
        session_id=session_id_from_path(path),
        path=path,
        header_id=header_id,
        started=started,
        last_message=last_message,
        message_count=messages,
        user_messages=users,
        assistant_messages=assistants,
        total_tokens=total_tokens,
        compactions=compactions,
        skipped=len(reader.skipped),
        size=size,
    )


# ---------------------------------------------------------------------------------------------
# Sessions as a search source (§8.2)

_WS = re.compile(r"\s+")


def normalize_session_text(text: str) -> str:
    """Collapse newlines and whitespace runs to single spaces and trim."""
    return _WS.sub(" ", text).strip()


def session_search_text(transcript: Transcript) -> tuple[str, list[int]]:
    """Build the text a transcript contributes to the search index.

    Only user and assistant messages with text count; each becomes one line ``User: …`` or
    ``Assistant: …`` with whitespace normalised and secrets redacted (before normalising, so a
    PEM block's lines are still recognised).

    Args:
        transcript: the parsed transcript.

    Returns:
        ``(content, line_map)``: the lines joined with ``\\n``, and for content line ``i + 1`` the
        1-based JSONL line it came from at ``line_map[i]``.
    """
    lines: list[str] = []
    line_map: list[int] = []
    for entry in transcript.entries:
        message = entry.message
        if message is None or message.role not in ("user", "assistant"):
            continue
        text = normalize_session_text(redact_secrets(message.text))
        if not text:
            continue
        label = "User" if message.role == "user" else "Assistant"
        lines.append(f"{label}: {text}")
        line_map.append(entry.line)
    return "\n".join(lines), line_map


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
        return (_float(candidate.data.get("updatedAt")) or 0) > (_float(current.data.get("updatedAt")) or 0)

    for key, value in data.items():
        if not isinstance(value, dict):
            continue
        entry = _StoreEntry(key, value)
        session_file = _str(value.get("sessionFile"))
        if session_file:
            name = Path(session_file).name
            if newer(entry, by_file.get(name)):
                by_file[name] = entry
        session_id = _str(value.get("sessionId"))
        if session_id and newer(entry, by_id.get(session_id)):
            by_id[session_id] = entry
    return by_file, by_id


@dataclass(frozen=True)
class StoreEntry:
    """A transcript's entry in ``sessions.json`` (the fields memdeck uses)."""

    session_key: str
    session_id: str | None
    chat_type: str | None
    channel: str | None
    display_name: str | None


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
    if found is None and _RESET_MARK not in path.name:
        found = by_id.get(session_id_from_path(path))
    if found is None:
        return None
    data = found.data
    return StoreEntry(
        session_key=found.key,
        session_id=_str(data.get("sessionId")),
        chat_type=_str(data.get("chatType")),
        channel=_str(data.get("channel")),
        display_name=_str(data.get("displayName")),
    )


def _is_transcript_name(name: str) -> bool:
    return name.endswith(".jsonl") or _RESET_MARK in name


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
            entry.name for entry in os.scandir(folder) if entry.is_file() and _is_transcript_name(entry.name)
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
    archived = _RESET_MARK in path.name
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
    total = _int(data.get("totalTokens"))
    if data.get("totalTokensFresh") is False or not total:
        total = summary.total_tokens if summary else None
    compactions = _int(data.get("compactionCount"))
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
        context_tokens=_int(data.get("contextTokens")) or None,
        compactions=compactions,
        session_key=store.key if store is not None else None,
        chat_type=_str(data.get("chatType")),
        channel=_str(data.get("channel")),
        display_name=_str(data.get("displayName")),
        memory_flush_at=parse_timestamp(data.get("memoryFlushAt")),
        memory_flush_compaction_count=_int(data.get("memoryFlushCompactionCount")),
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
