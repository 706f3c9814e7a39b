"""Parsing OpenClaw session transcripts (JSONL) robustly, and the text a transcript gives the search index."""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from engine.health.secrets import redact_secrets
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
    )


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
    entries: list[Entry] = []
    header: SessionHeader | None = None
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
        for line, obj in reader.objects(source, max_line_bytes):
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
        complete=complete,
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


