"""Transcript layout: a parsed session as blocks, and blocks as wrapped rows (pure: no widget, safe in a thread)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

from rich.cells import cell_len

from engine.api import safe_name, safe_text

if TYPE_CHECKING:
    from engine.api import Entry, Message, Transcript



class Block(NamedTuple):
    """One visible item of a transcript (a NamedTuple: tens of thousands are made per transcript).

    Attributes:
        kind: ``user``, ``assistant``, ``thinking``, ``tool``, ``result``, ``compaction``, ``meta`` or ``skipped``;
            a user turn holding injected text continues in ``injected`` blocks (one fold line each: a plugin's
            block, the metadata header, …) and ``speech`` blocks (the person's words between them, no title row).
        title: the one-line summary (always shown).
        body: the full text (shown unless folded).
        line: the JSONL line it came from.
        stamp: the entry's ISO timestamp (shown as local ``HH:MM:SS``) or empty.
        folded: whether the body is hidden.
        error: a failed tool call or result, an assistant error.
        more: the turn goes on in the blocks after this one (``injected`` and ``speech`` blocks).
    """

    kind: str
    title: str
    body: str = ""
    line: int = 0
    stamp: str = ""
    folded: bool = False
    error: bool = False
    more: bool = False

    @property
    def foldable(self) -> bool:
        """Whether Enter shows or hides a body."""
        return bool(self.body) and self.kind not in ("user", "assistant", "speech")


@dataclass(frozen=True)
class TranscriptSummary:
    """Counts for the header."""

    messages: int
    tool_calls: int
    compactions: int
    skipped: int
    tokens: int | None


def _clean(text: str) -> str:
    """Tabs to spaces; control, C1 and bidi characters shown as visible escapes (engine.display's one rule):
    a transcript is data, and an ``ESC]0;…BEL`` in it must be shown, never reach the terminal."""
    if "\t" in text:
        text = text.replace("\t", "    ")
    return safe_text(text)


def _one_line(text: str, limit: int = 160) -> str:
    flat = " ".join(_clean(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@lru_cache(maxsize=8192)
def format_stamp(timestamp: str | None, zone: tzinfo | None = None) -> str:
    """``HH:MM:SS`` in ``zone`` (the user's; None: the system's) for an entry's ISO timestamp (formatted only when
    shown)."""
    if not timestamp:
        return ""
    try:
        when = datetime.fromisoformat(timestamp)
    except ValueError:
        return ""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(zone).strftime("%H:%M:%S")


def _stamp(entry: Entry) -> str:
    return entry.timestamp or ""


def plural(n: int, word: str) -> str:
    """``1 message``, ``1,234 messages``: :func:`engine.display.plural`, grouped."""
    from engine.api import plural as counted  # loaded by now: there is a transcript

    return counted(n, word, grouped=True)


def user_blocks(message: Message, title: str, line: int, stamp: str) -> list[Block]:
    """A user turn's blocks: its title and words, each run of injected text folded to one line in between.

    The engine's :func:`engine.api.speech_segments` says where the injected runs stand (the same filter that
    decides what flush, notes and search read); a turn without any is one block showing its text as written.
    """
    from engine.api import speech_segments  # loaded by now: there is a transcript

    extra = f"\n[{plural(message.images, 'image')}]" if message.images else ""
    parts = speech_segments(message.role, message.text, provenance_kind=message.provenance_kind,
                            provider=message.provider, model=message.model)
    if all(part.kind == "speech" for part in parts):
        return [Block("user", title, _clean(message.text) + extra, line, stamp)]
    blocks = [Block("user", title, line=line, stamp=stamp, more=True)]
    for part in parts:
        if part.kind == "speech":
            words = _clean(part.text.strip("\r\n"))
            if len(blocks) == 1:
                blocks[0] = blocks[0]._replace(body=words)
            else:
                blocks.append(Block("speech", "", words, line, stamp))
        else:
            blocks.append(Block("injected", f"injected: {part.label} · {plural(part.lines, 'line')}",
                                _clean(part.text.strip("\r\n")), line, stamp, folded=True))
    if extra:
        blocks.append(Block("speech", "", extra.lstrip("\n"), line, stamp))
    return blocks


def build_blocks(transcript: Transcript) -> tuple[list[Block], TranscriptSummary]:
    """Turn a parsed transcript into blocks, in file order, with skipped lines as marked placeholders."""
    results: dict[str, bool] = {}
    for entry in transcript.entries:
        message = entry.message
        if message is not None and message.tool_result is not None and message.tool_result.tool_call_id:
            results[message.tool_result.tool_call_id] = message.tool_result.is_error
    skipped = sorted(transcript.skipped, key=lambda s: s.line)
    blocks: list[Block] = []
    si = 0
    tool_calls = 0
    tokens: int | None = None
    messages = 0

    def flush_skipped(before: int) -> None:
        nonlocal si
        while si < len(skipped) and skipped[si].line < before:
            item = skipped[si]
            blocks.append(Block("skipped", f"line {item.line} skipped: {item.reason}", line=item.line))
            si += 1

    for entry in transcript.entries:
        flush_skipped(entry.line)
        stamp = _stamp(entry)
        kind = entry.kind
        message = entry.message
        if kind == "session":
            header = transcript.header
            cwd = f" · {header.cwd}" if header is not None and header.cwd else ""
            blocks.append(Block("meta", f"session {transcript.session_id}{cwd}", line=entry.line, stamp=stamp))
        elif message is not None:
            messages += 1
            role = message.role
            if role == "user":
                title = "user" + (" · forwarded" if message.provenance_kind == "inter_session" else "")
                blocks.extend(user_blocks(message, title, entry.line, stamp))
            elif role == "assistant":
                usage = message.usage
                bits = ["assistant"]
                if message.model:
                    bits.append(message.model)
                if usage is not None and usage.total_tokens:
                    bits.append(plural(usage.total_tokens, "token"))
                    tokens = usage.total_tokens
                if message.stop_reason in ("error", "aborted", "length"):
                    bits.append(f"stopped: {message.stop_reason}")
                if message.thinking:
                    words = len(message.thinking.split())
                    blocks.append(Block("thinking", f"thinking · {plural(words, 'word')}", _clean(message.thinking),
                                        entry.line, stamp, folded=True))
                text = message.text
                if message.error_message:
                    text = (text + "\n" if text else "") + f"error: {message.error_message}"
                if text or not message.tool_calls:
                    blocks.append(Block("assistant", " · ".join(bits), _clean(text), entry.line, stamp,
                                        error=bool(message.error_message)))
                for call in message.tool_calls:
                    tool_calls += 1
                    failed = results.get(call.id or "")
                    status = "no result" if failed is None else ("error" if failed else "ok")
                    blocks.append(Block("tool", f"{call.name} · {status} · {_one_line(call.arguments, 120)}",
                                        call.arguments, entry.line, stamp, folded=True, error=bool(failed)))
            elif role == "toolResult" and message.tool_result is not None:
                res = message.tool_result
                status = "error" if res.is_error else "ok"
                count = res.text.count("\n") + 1 if res.text else 0
                blocks.append(Block("result", f"{res.tool_name or 'tool'} result · {status} · "
                                    f"{plural(count, 'line')}", _clean(res.text), entry.line, stamp,
                                    folded=True, error=res.is_error))
            else:
                blocks.append(Block("meta", f"{message.raw_role or 'message'} · {_one_line(message.text, 100)}",
                                    _clean(message.text), entry.line, stamp, folded=True))
        elif kind == "compaction":
            before = f" · {plural(entry.tokens_before, 'token')} before" if entry.tokens_before else ""
            blocks.append(Block("compaction", f"compaction{before}", _clean(entry.summary or ""), entry.line,
                                stamp, folded=True))
            if entry.retained:
                # The turns the compaction kept word for word: the model still sees them, so the reader does.
                blocks.append(Block("compaction", f"retained tail · {plural(len(entry.retained), 'message')}",
                                    retained_text(entry.retained), entry.line, stamp, folded=True))
        elif kind == "branch_summary":
            blocks.append(Block("compaction", "branch summary", _clean(entry.summary or ""), entry.line, stamp,
                                folded=True))
        elif kind == "model_change":
            blocks.append(Block("meta", f"model → {entry.detail or '?'}", line=entry.line, stamp=stamp))
        elif kind == "thinking_level_change":
            blocks.append(Block("meta", f"thinking level → {entry.detail or '?'}", line=entry.line, stamp=stamp))
        elif kind == "custom_message" and entry.hidden:
            continue  # ``display: false``: context for the model that OpenClaw does not show either
        elif kind == "custom_message":
            blocks.append(Block("meta", f"{entry.custom_type or 'custom message'} · {_one_line(entry.detail or '', 100)}",
                                _clean(entry.detail or ""), entry.line, stamp, folded=True))
        elif kind == "custom":
            blocks.append(Block("meta", f"custom · {entry.custom_type or '?'}", line=entry.line, stamp=stamp))
        elif kind in ("label", "session_info"):
            blocks.append(Block("meta", f"{kind.replace('_', ' ')} · {entry.detail or ''}", line=entry.line,
                                stamp=stamp))
        else:
            blocks.append(Block("meta", f"unknown entry type {entry.raw_type!r}", line=entry.line, stamp=stamp))
    flush_skipped(1 << 62)
    summary = TranscriptSummary(messages, tool_calls, transcript.compactions, len(transcript.skipped), tokens)
    return blocks, summary


def retained_text(messages: Sequence[Message]) -> str:
    """A compaction's retained tail as ``role: text`` lines (continuation lines indented)."""
    lines: list[str] = []
    for message in messages:
        role = message.raw_role or message.role or "message"
        text = _clean(message.text).strip() or ("(no text)" if not message.tool_calls else
                                               " ".join(f"[{call.name}]" for call in message.tool_calls))
        first, *rest = text.split("\n")
        lines.append(f"{role}: {first}")
        lines.extend(f"    {line}" for line in rest)
    return "\n".join(lines)


def wrap_text(text: str, width: int) -> list[str]:
    """Greedy word wrap to ``width`` cells (long words are cut); blank lines are kept."""
    width = max(8, width)
    out: list[str] = []
    for para in text.split("\n"):
        measure: Callable[[str], int]
        if para.isascii():
            if len(para) <= width:
                out.append(para)
                continue
            measure = len
        else:
            if cell_len(para) <= width:
                out.append(para)
                continue
            measure = cell_len
        line = ""
        used = 0
        for word in para.split(" "):
            size = measure(word)
            if used and used + 1 + size > width:
                out.append(line)
                line, used = "", 0
            while size > width:
                if used:
                    out.append(line)
                    line, used = "", 0
                cut = width if measure is len else _cut_cells(word, width)
                out.append(word[:cut])
                word = word[cut:]
                size = measure(word)
            line = f"{line} {word}" if used else word
            used = used + 1 + size if used else size
        out.append(line)
    return out


def _cut_cells(word: str, width: int) -> int:
    total = 0
    for i, ch in enumerate(word):
        total += cell_len(ch)
        if total > width:
            return max(1, i)
    return len(word)


@dataclass
class Layout:
    """Wrapped bodies and row heights of every block for one text width."""

    width: int
    wrapped: dict[int, list[str]]
    heights: list[int]


def has_gap(block: Block, index: int) -> bool:
    """Whether a blank row comes before the block (each user or assistant turn but the first block)."""
    return bool(index) and block.kind in ("user", "assistant")


def has_title(block: Block) -> bool:
    """Whether the block has a title row (a ``speech`` block goes on with the turn above it)."""
    return block.kind != "speech"


def shows_body(block: Block) -> bool:
    """Whether the block's body rows are on screen."""
    return not block.folded and bool(block.body)


def block_height(block: Block, index: int, body_lines: int) -> int:
    """Rows the block takes: its gap, its title, and its wrapped body when unfolded."""
    return int(has_gap(block, index)) + int(has_title(block)) + (body_lines if shows_body(block) else 0)


def measure_blocks(blocks: Sequence[Block], width: int) -> Layout:
    """Wrap the unfolded bodies and count each block's rows (pure: safe to run in a thread on a snapshot)."""
    wrapped: dict[int, list[str]] = {}
    heights: list[int] = []
    for index, block in enumerate(blocks):
        if not shows_body(block):
            heights.append(block_height(block, index, 0))
            continue
        lines = wrap_text(block.body, width)
        wrapped[index] = lines
        heights.append(block_height(block, index, len(lines)))
    return Layout(width, wrapped, heights)


GLYPHS = {
    "user": "▌",
    "assistant": "▌",
    "thinking": "✻",
    "tool": "⚙",
    "result": "↳",
    "compaction": "⟲",
    "meta": "·",
    "skipped": "⚠",
}
_FOLD_GLYPHS = ("thinking", "result", "compaction", "meta", "tool", "injected")


class TitleRow(NamedTuple):
    """A block's title row as text: glyph, title (cut to fit), padding, and the time and line label."""

    glyph: str
    title: str
    pad: int
    time_text: str


def title_row(block: Block, width: int, zone: tzinfo | None = None) -> TitleRow:
    """The title row of ``block`` in ``width`` cells, its time in ``zone`` (the widget only adds the styles)."""
    glyph = GLYPHS.get(block.kind, "·")
    if block.foldable and block.kind in _FOLD_GLYPHS:
        glyph = "▸" if block.folded else "▾"
    stamp = format_stamp(block.stamp, zone)
    time_text = f"  {stamp} L{block.line}" if stamp else f"  L{block.line}"
    room = width - 2 - cell_len(time_text)
    title = _title_text(block.title)
    if block.kind in ("user", "assistant") and not block.body and not block.more:
        title = f"{title} · (no text)"
    if cell_len(title) > room:
        title = title[: max(0, room - 1)] + "…"
    return TitleRow(glyph, title, max(0, room - cell_len(title)), time_text)


def injected_title(block: Block, width: int) -> str:
    """An injected block's fold line in ``width`` cells: ``▸ injected: composio · 12 lines`` (``▾`` when open)."""
    text = f"{'▸' if block.folded else '▾'} {_title_text(block.title)}"
    return text if cell_len(text) <= width else text[: max(0, width - 1)] + "…"


@lru_cache(maxsize=8192)
def _title_text(title: str) -> str:
    """A title as one safe line: some are built from names in the transcript (tools, roles, entry types)."""
    return safe_name(title)


def summary_counts(summary: TranscriptSummary) -> str:
    """The header's counts line: messages, tool calls, compactions, tokens."""
    bits = [plural(summary.messages, "message"), plural(summary.tool_calls, "tool call")]
    if summary.compactions:
        bits.append(plural(summary.compactions, "compaction"))
    if summary.tokens:
        bits.append(f"{plural(summary.tokens, 'token')} (last turn usage)")
    return " · ".join(bits)
