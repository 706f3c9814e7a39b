"""Parsing OpenClaw session transcripts (JSONL) robustly, and the text a transcript gives the search index."""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from engine.secrets import redact_secrets
from engine.sessions.model import (
    ENTRY_KINDS,
    Entry,
    Message,
    SessionHeader,
    SessionReadError,
    SessionSummary,
    Skipped,
    ToolCall,
    ToolResult,
    Transcript,
    Usage,
    as_float,
    as_int,
    as_str,
    parse_timestamp,
    session_id_from_path,
)
from engine.sessions.speech import speech_text
from engine.textio import scrub_json

MAX_LINE_BYTES = 64 * 1024 * 1024
"""Lines longer than this are skipped without being held in memory."""

MAX_TEXT_CHARS = 100_000
"""Cap for any one stored text field (message text, thinking, tool output, summary)."""

MAX_ARGUMENT_CHARS = 10_000
"""Cap for a tool call's arguments (compact JSON)."""

_BOM = b"\xef\xbb\xbf"


def _cap(text: str, limit: int = MAX_TEXT_CHARS) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    return text[:limit], True


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


def _row_lines(rows: Iterable[tuple[int, bytes]], max_line_bytes: int) -> Iterator[_RawLine]:
    """Stored transcript rows as the JSONL lines they are: the row at ``seq`` is line ``seq + 1``.

    A row left out (one that could not be decoded) leaves a gap in the numbering rather than
    shifting the lines after it, so a citation names the same entry as in the legacy file.
    """
    for seq, data in rows:
        if len(data) > max_line_bytes:
            yield _RawLine(seq + 1, None, True, len(data))
        else:
            yield _RawLine(seq + 1, data, True, len(data))


class _Budget:
    """Passes rows through until ``max_bytes`` (JSONL bytes, newlines included) would be exceeded."""

    def __init__(self, rows: Iterable[tuple[int, bytes]], max_bytes: int | None) -> None:
        self._rows = rows
        self._left = max_bytes
        self.read = 0
        self.last_seq = -1
        self.cut = False

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        for seq, data in self._rows:
            cost = len(data) + 1
            if self._left is not None and self.read + cost > self._left:
                self.cut = True
                return
            self.read += cost
            self.last_seq = seq
            yield seq, data


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
        return self.objects_from(_iter_raw_lines(fh, max_line_bytes), max_line_bytes)

    def objects_from(self, raw_lines: Iterable[_RawLine], max_line_bytes: int) -> Iterator[tuple[int, dict[str, Any]]]:
        for raw in raw_lines:
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
            if "\\ud" in text or "\\uD" in text:
                # A \uD800-\uDFFF escape: valid JSON, but half an emoji (a lone surrogate) cannot be encoded
                # later (index, terminal, flush). Made safe here, where every transcript line is decoded.
                obj = scrub_json(obj)
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
            text = as_str(block.get("text"))
            if text is not None:
                texts.append(text)
        elif block_type == "thinking":
            text = as_str(block.get("thinking"))
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
                ToolCall(name=as_str(block.get("name")) or "?", id=as_str(block.get("id")), arguments=encoded)
            )
        elif block_type == "image":
            images += 1
    return texts, thinking, calls, images


def _usage(value: Any) -> Usage | None:
    if not isinstance(value, dict):
        return None
    cost = value.get("cost")
    cost_total = as_float(cost.get("total")) if isinstance(cost, dict) else as_float(cost)
    usage = Usage(
        input=as_int(value.get("input")) or 0,
        output=as_int(value.get("output")) or 0,
        cache_read=as_int(value.get("cacheRead")) or 0,
        cache_write=as_int(value.get("cacheWrite")) or 0,
        total_tokens=as_int(value.get("totalTokens")) or 0,
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
    raw_role = as_str(raw.get("role")) or ""
    role = raw_role if raw_role in ("user", "assistant", "toolResult") else "other"
    texts, thinking, calls, images = _content_parts(raw.get("content"))
    if role == "other" and not texts:
        # pi's bashExecution and similar custom roles carry their text in other fields.
        command, output = as_str(raw.get("command")), as_str(raw.get("output"))
        if command is not None:
            texts.append(f"$ {command}")
        if output is not None:
            texts.append(output)
    text, cut_text = _cap("\n".join(texts))
    think, cut_think = _cap("\n".join(thinking))
    tool_result = None
    if role == "toolResult":
        tool_result = ToolResult(
            tool_name=as_str(raw.get("toolName")),
            tool_call_id=as_str(raw.get("toolCallId")),
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
        model=as_str(raw.get("model")),
        provider=as_str(raw.get("provider")),
        stop_reason=as_str(raw.get("stopReason")),
        error_message=_cap(as_str(raw.get("errorMessage")) or "", 10_000)[0] or None,
        provenance_kind=as_str(provenance.get("kind")) if isinstance(provenance, dict) else None,
        images=images,
        truncated=cut_text or cut_think,
    )


def _detail(obj: dict[str, Any], kind: str) -> str | None:
    if kind == "custom_message":
        texts, _, _, _ = _content_parts(obj.get("content"))
        return _cap("\n".join(texts))[0] if texts else None
    if kind == "model_change":
        provider, model = as_str(obj.get("provider")), as_str(obj.get("modelId"))
        return "/".join(part for part in (provider, model) if part) or None
    if kind == "thinking_level_change":
        return as_str(obj.get("thinkingLevel"))
    if kind == "label":
        return as_str(obj.get("label"))
    if kind == "session_info":
        return as_str(obj.get("name"))
    return None


def _parse_entry(line: int, obj: dict[str, Any]) -> Entry | Skipped:
    raw_type = as_str(obj.get("type"))
    kind = raw_type if raw_type in ENTRY_KINDS and raw_type != "unknown" else "unknown"
    timestamp = as_str(obj.get("timestamp"))
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
        summary = _cap(as_str(obj.get("summary")) or "")[0]
    return Entry(
        line=line,
        kind=kind,
        id=as_str(obj.get("id")),
        parent_id=as_str(obj.get("parentId")),
        timestamp=timestamp,
        message=message,
        summary=summary,
        tokens_before=as_int(obj.get("tokensBefore")) if kind == "compaction" else None,
        custom_type=as_str(obj.get("customType")),
        detail=_detail(obj, kind),
        raw_type=raw_type,
        hidden=kind == "custom_message" and obj.get("display") is False,
        retained=_retained(obj.get("retainedTail")) if kind == "compaction" else (),
    )


RETAINED_MAX = 200
"""Messages of a compaction's ``retainedTail`` kept (the tail is short; a damaged one must not cost memory)."""


def _retained(raw: Any) -> tuple[Message, ...]:
    """A compaction's ``retainedTail``: its message objects parsed like any message (others left out)."""
    if not isinstance(raw, list):
        return ()
    return tuple(_parse_message(item) for item in raw[:RETAINED_MAX] if isinstance(item, dict))


def _header(line: int, obj: dict[str, Any]) -> SessionHeader:
    return SessionHeader(
        line=line,
        version=as_int(obj.get("version")),
        id=as_str(obj.get("id")),
        timestamp=as_str(obj.get("timestamp")),
        cwd=as_str(obj.get("cwd")),
        parent_session=as_str(obj.get("parentSession")),
    )


def read_transcript(path: Path, *, max_line_bytes: int = MAX_LINE_BYTES, max_bytes: int | None = None) -> Transcript:
    """Read a JSONL session transcript, skipping (and recording) every line it cannot use.

    Handles invalid JSON, a truncated last line, unknown entry types, very long lines, binary
    garbage, a UTF-8 BOM, CRLF line ends, bytes that are not UTF-8, empty files and v2 headers.

    Args:
        path: the ``.jsonl`` file (or a ``.jsonl.reset.*`` archive).
        max_line_bytes: lines longer than this are skipped without being held in memory.
        max_bytes: read only the whole lines within the file's first ``max_bytes`` (a first screen of a
            big file); the result has ``complete=False`` when the file is longer. Line numbers are the file's.

    Returns:
        The parsed transcript.

    Raises:
        SessionReadError: the file does not exist or cannot be read.
    """
    path = Path(path)
    reader = _LineReader()
    fh = _open(path)
    complete = True
    try:
        size = os.fstat(fh.fileno()).st_size
        source: IO[bytes] = fh
        if max_bytes is not None and size > max_bytes:
            head = fh.read(max(0, max_bytes))
            # Whole lines only: a line cut at the limit would read as a truncated (skipped) line.
            source = io.BytesIO(head[: head.rfind(b"\n") + 1])
            complete = False
        header, entries = _parse_objects(reader, reader.objects(source, max_line_bytes))
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
        complete=complete,
    )


def _parse_objects(
    reader: _LineReader, objects: Iterable[tuple[int, dict[str, Any]]]
) -> tuple[SessionHeader | None, list[Entry]]:
    header: SessionHeader | None = None
    entries: list[Entry] = []
    for line, obj in objects:
        parsed = _parse_entry(line, obj)
        if isinstance(parsed, Skipped):
            reader.skipped.append(parsed)
            continue
        if parsed.kind == "session" and header is None:
            header = _header(line, obj)
        entries.append(parsed)
    return header, entries


def read_transcript_rows(
    rows: Iterable[tuple[int, bytes]],
    *,
    path: Path,
    session_id: str,
    size: int | None = None,
    line_count: int | None = None,
    skipped: Iterable[tuple[int, str]] = (),
    max_line_bytes: int = MAX_LINE_BYTES,
    max_bytes: int | None = None,
) -> Transcript:
    """Parse a transcript stored as rows (``(seq, line bytes)``, e.g. OpenClaw's agent database).

    The same reader as :func:`read_transcript`: every row is one JSONL line, ``seq`` 0 the header,
    and the entry at ``seq`` carries line number ``seq + 1`` (what a citation names).

    Args:
        rows: ``(seq, line)`` in ``seq`` order (a generator is read lazily, once).
        path: what the transcript is called (for a database session a stand-in, never opened).
        session_id: its id.
        size: the whole transcript's size as JSONL bytes; defaults to what was read.
        line_count: the whole transcript's lines; defaults to the last row read + 1.
        skipped: rows the caller could not decode, as ``(seq, reason)``.
        max_line_bytes: rows longer than this are skipped.
        max_bytes: read only the rows within the first ``max_bytes`` JSONL bytes (a first screen);
            the result then has ``complete=False`` when there were more.

    Returns:
        The parsed transcript.
    """
    reader = _LineReader()
    budget = _Budget(rows, max_bytes)
    header, entries = _parse_objects(reader, reader.objects_from(_row_lines(budget, max_line_bytes), max_line_bytes))
    reader.skipped.extend(Skipped(seq + 1, reason) for seq, reason in skipped)
    last = max(budget.last_seq, *(item.line - 1 for item in reader.skipped)) if reader.skipped else budget.last_seq
    return Transcript(
        path=Path(path),
        session_id=session_id,
        header=header,
        entries=tuple(entries),
        skipped=tuple(sorted(reader.skipped, key=lambda item: item.line)),
        line_count=line_count if line_count is not None and not budget.cut else last + 1,
        size=size if size is not None else budget.read,
        decode_errors=reader.decode_errors,
        complete=not budget.cut,
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
    first_words: str | None = None
    fh = _open(path)
    try:
        size = os.fstat(fh.fileno()).st_size
        for _line, obj in reader.objects(fh, max_line_bytes):
            kind = obj.get("type")
            when = parse_timestamp(obj.get("timestamp"))
            if kind == "session":
                if header_id is None:
                    header_id = as_str(obj.get("id"))
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
            if role == "user" and first_words is None:
                parsed = _parse_message(message)
                first_words = spoken(parsed) or None
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
        first_words=first_words,
        line_count=reader.line_count,
    )


# ---------------------------------------------------------------------------------------------
# Sessions as a search source (§8.2)

_WS = re.compile(r"\s+")


def normalize_session_text(text: str) -> str:
    """Collapse newlines and whitespace runs to single spaces and trim."""
    return _WS.sub(" ", text).strip()


def session_search_text(transcript: Transcript) -> tuple[str, list[int]]:
    """Build the text a transcript contributes to the search index.

    Only what user and assistant said counts (:func:`engine.sessions.speech.speech_text`: no
    injected metadata, system or exec-completion events, slash commands or forwarded messages);
    each message becomes one line ``User: …`` or ``Assistant: …`` with whitespace normalised and
    secrets redacted (before normalising, so a PEM block's lines are still recognised).

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
        if message is None:
            continue
        text = normalize_session_text(redact_secrets(spoken(message)))
        if not text:
            continue
        label = "User" if message.role == "user" else "Assistant"
        lines.append(f"{label}: {text}")
        line_map.append(entry.line)
    return "\n".join(lines), line_map


def spoken(message: Message) -> str:
    """What was said in a message (``""`` for tool traffic and anything OpenClaw injected).

    The one filter for flush drafts, session notes and search text: see
    :func:`engine.sessions.speech.speech_text`.
    """
    return speech_text(
        message.role,
        message.text,
        provenance_kind=message.provenance_kind,
        provider=message.provider,
        model=message.model,
    )


def spoken_transcript(transcript: Transcript) -> Transcript:
    """The transcript with only what was said: each user/assistant message's text replaced by its speech
    (:func:`spoken`), messages with none (tool traffic, injected events, commands) left out; every other
    entry and every line number kept. For code that reads ``message.text`` (session notes)."""
    entries: list[Entry] = []
    for entry in transcript.entries:
        message = entry.message
        if message is None:
            entries.append(entry)
            continue
        words = spoken(message)
        if words:
            entries.append(replace(entry, message=replace(message, text=words)))
    return replace(transcript, entries=tuple(entries))


def parse_line(number: int, data: bytes) -> Entry | None:
    """One JSONL line (``number`` 1-based) parsed as the reader does; None when it is not a usable entry."""
    reader = _LineReader()
    for line, obj in reader.objects_from([_RawLine(number, data, True, len(data))], MAX_LINE_BYTES):
        parsed = _parse_entry(line, obj)
        return parsed if isinstance(parsed, Entry) else None
    return None


