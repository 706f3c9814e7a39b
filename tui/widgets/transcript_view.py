"""TranscriptView: a session JSONL as readable turns, folded tool traffic, rendered lazily line by line."""

from __future__ import annotations

import asyncio
import re
import time
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, NamedTuple

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui.bridge import Bridge, MemdeckError
from tui.quiet_gc import quiet_gc
from tui.widgets.text_line import TextLine

if TYPE_CHECKING:
    from engine.sessions.reader import Entry, Transcript

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class Block(NamedTuple):
    """One visible item of a transcript (a NamedTuple: tens of thousands are made per transcript).

    Attributes:
        kind: ``user``, ``assistant``, ``thinking``, ``tool``, ``result``, ``compaction``, ``meta`` or ``skipped``.
        title: the one-line summary (always shown).
        body: the full text (shown unless folded).
        line: the JSONL line it came from.
        stamp: the entry's ISO timestamp (shown as local ``HH:MM:SS``) or empty.
        folded: whether the body is hidden.
        error: a failed tool call or result, an assistant error.
    """

    kind: str
    title: str
    body: str = ""
    line: int = 0
    stamp: str = ""
    folded: bool = False
    error: bool = False

    @property
    def foldable(self) -> bool:
        """Whether Enter shows or hides a body."""
        return bool(self.body) and self.kind not in ("user", "assistant")


@dataclass(frozen=True)
class TranscriptSummary:
    """Counts for the header."""

    messages: int
    tool_calls: int
    compactions: int
    skipped: int
    tokens: int | None


def _clean(text: str) -> str:
    """Tabs to spaces, other control characters to U+FFFD (they would move the terminal's cursor)."""
    if "\t" in text:
        text = text.replace("\t", "    ")
    return _CONTROL.sub("\ufffd", text) if _CONTROL.search(text) else text


def _one_line(text: str, limit: int = 160) -> str:
    flat = " ".join(_clean(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@lru_cache(maxsize=8192)
def format_stamp(timestamp: str | None) -> str:
    """``HH:MM:SS`` in local time for an entry's ISO timestamp (formatted only when shown)."""
    if not timestamp:
        return ""
    try:
        when = datetime.fromisoformat(timestamp)
    except ValueError:
        return ""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone().strftime("%H:%M:%S")


def _stamp(entry: Entry) -> str:
    return entry.timestamp or ""


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


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
                extra = f"\n[{_plural(message.images, 'image')}]" if message.images else ""
                title = "user" + (" · forwarded" if message.provenance_kind == "inter_session" else "")
                blocks.append(Block("user", title, _clean(message.text) + extra, entry.line, stamp))
            elif role == "assistant":
                usage = message.usage
                bits = ["assistant"]
                if message.model:
                    bits.append(message.model)
                if usage is not None and usage.total_tokens:
                    bits.append(f"{usage.total_tokens:,} tokens")
                    tokens = usage.total_tokens
                if message.stop_reason in ("error", "aborted", "length"):
                    bits.append(f"stopped: {message.stop_reason}")
                if message.thinking:
                    words = len(message.thinking.split())
                    blocks.append(Block("thinking", f"thinking · {_plural(words, 'word')}", _clean(message.thinking),
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
                                    f"{_plural(count, 'line')}", _clean(res.text), entry.line, stamp,
                                    folded=True, error=res.is_error))
            else:
                blocks.append(Block("meta", f"{message.raw_role or 'message'} · {_one_line(message.text, 100)}",
                                    _clean(message.text), entry.line, stamp, folded=True))
        elif kind == "compaction":
            before = f" · {entry.tokens_before:,} tokens before" if entry.tokens_before else ""
            blocks.append(Block("compaction", f"compaction{before}", _clean(entry.summary or ""), entry.line,
                                stamp, folded=True))
        elif kind == "branch_summary":
            blocks.append(Block("compaction", "branch summary", _clean(entry.summary or ""), entry.line, stamp,
                                folded=True))
        elif kind == "model_change":
            blocks.append(Block("meta", f"model → {entry.detail or '?'}", line=entry.line, stamp=stamp))
        elif kind == "thinking_level_change":
            blocks.append(Block("meta", f"thinking level → {entry.detail or '?'}", line=entry.line, stamp=stamp))
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


def measure_blocks(blocks: list[Block], width: int) -> Layout:
    """Wrap the unfolded bodies and count each block's rows (pure: safe to run in a thread)."""
    wrapped: dict[int, list[str]] = {}
    heights: list[int] = []
    for index, block in enumerate(blocks):
        gap = 1 if index and block.kind in ("user", "assistant") else 0
        if block.folded or not block.body:
            heights.append(1 + gap)
            continue
        lines = wrap_text(block.body, width)
        wrapped[index] = lines
        heights.append(1 + gap + len(lines))
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


class TranscriptLines(ScrollView, can_focus=True):
    """The transcript body: only the visible lines are rendered; bodies are wrapped on first sight."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "move(-1)", "Prev", show=False),
        Binding("down,j", "move(1)", "Next", show=False),
        Binding("enter,space", "fold", "Fold", id="transcript.fold"),
        Binding("home", "first", "First", show=False),
        Binding("end", "last", "Last", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("z", "fold_all", "Fold all", show=False, id="transcript.fold_all"),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "transcript--user",
        "transcript--assistant",
        "transcript--thinking",
        "transcript--tool",
        "transcript--result",
        "transcript--compaction",
        "transcript--meta",
        "transcript--skipped",
        "transcript--error",
        "transcript--body",
        "transcript--time",
        "transcript--cursor",
    }

    class BlockToggled(Message):
        """A block was folded or unfolded."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.blocks: list[Block] = []
        self.cursor = 0
        self._layout = Layout(0, {}, [])
        self._starts: list[int] = [0]

    def set_blocks(self, blocks: list[Block], layout: Layout | None = None) -> None:
        """Show a new transcript from its first block (``layout`` measured off the event loop, if given)."""
        self.blocks = blocks
        self.cursor = 0
        width = self.text_width
        if layout is None or layout.width != width:
            if layout is not None and len(blocks) > 2000:
                self.relayout(width)  # big: keep the old measurements until the thread has new ones
            else:
                layout = measure_blocks(blocks, width)
        self._apply(layout or Layout(width, {}, [1] * len(blocks)))
        self.scroll_to(0, 0, animate=False)

    def restore(self, cursor: int, scroll_y: float) -> None:
        """Put cursor and scroll back after a reload."""
        if self.blocks:
            self.cursor = min(cursor, len(self.blocks) - 1)
            self.scroll_to(y=scroll_y, animate=False)
            self.refresh()

    def focus_line(self, line: int) -> None:
        """Move the cursor to the first block from JSONL line ``line`` on, near the top of the view."""
        if not self.blocks:
            return
        index = next((i for i, b in enumerate(self.blocks) if b.line >= line), len(self.blocks) - 1)
        self.cursor = index
        self.call_after_refresh(lambda: self.scroll_to(y=max(0, self._starts[index] - 1), animate=False))
        self.refresh()

    # -- layout -------------------------------------------------------------------------------
    @property
    def text_width(self) -> int:
        """Cells available for body text."""
        return max(16, self.scrollable_content_region.width - 4)

    def _body(self, index: int) -> list[str]:
        lines = self._layout.wrapped.get(index)
        if lines is None:
            lines = wrap_text(self.blocks[index].body, self._layout.width or self.text_width)
            self._layout.wrapped[index] = lines
        return lines

    def _apply(self, layout: Layout) -> None:
        self._layout = layout
        self._restart()

    def _restart(self) -> None:
        self._starts = [0, *accumulate(self._layout.heights)]
        self.virtual_size = Size(self.scrollable_content_region.width, self._starts[-1])
        self.refresh()

    def _remeasure(self, index: int) -> None:
        block = self.blocks[index]
        gap = 1 if block.kind in ("user", "assistant") and index else 0
        body = 0 if block.folded or not block.body else len(self._body(index))
        self._layout.heights[index] = 1 + gap + body
        self._restart()

    @work(thread=True, exclusive=True, group="transcript-layout")
    def relayout(self, width: int) -> None:
        """Re-wrap every body for a new width in a thread (a big transcript takes a moment)."""
        blocks = self.blocks
        layout = measure_blocks(blocks, width)
        self.app.call_from_thread(self._adopt, blocks, layout)

    def _adopt(self, blocks: list[Block], layout: Layout) -> None:
        if blocks is self.blocks and len(layout.heights) == len(blocks):
            self._apply(layout)

    def on_resize(self, event: events.Resize) -> None:
        if self.blocks and self.text_width != self._layout.width:
            if len(self.blocks) > 2000:
                self.relayout(self.text_width)
            else:
                self._apply(measure_blocks(self.blocks, self.text_width))

    # -- rendering ----------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        row = y + int(self.scroll_y)
        base = self.rich_style
        if not self.blocks or row >= self._starts[-1] or len(self._starts) != len(self.blocks) + 1:
            return Strip.blank(width, base)
        index = bisect_right(self._starts, row) - 1
        block = self.blocks[index]
        offset = row - self._starts[index]
        if block.kind in ("user", "assistant") and index:
            if offset == 0:
                return Strip.blank(width, base)
            offset -= 1
        cursor = index == self.cursor and self.has_focus
        style = base + (self.get_component_rich_style("transcript--cursor") if cursor else Style())
        if offset == 0:
            segments = self._title_segments(block, width, style)
        else:
            segments = self._body_segments(block, index, offset - 1, style)
        return Strip(segments).adjust_cell_length(width, style)

    def _fg(self, component: str) -> Style:
        """A component's text colour and emphasis (partial styles lose colours with alpha)."""
        full = self.get_component_rich_style(component)
        return Style(color=full.color, bold=full.bold, italic=full.italic)

    def _kind_style(self, block: Block) -> Style:
        if block.error or block.kind == "skipped":
            return self._fg("transcript--error" if block.error else "transcript--skipped")
        return self._fg(f"transcript--{block.kind}")

    def _title_segments(self, block: Block, width: int, style: Style) -> list[Segment]:
        glyph = GLYPHS.get(block.kind, "·")
        if block.foldable:
            glyph = ("▸" if block.folded else "▾") if block.kind in ("thinking", "result", "compaction", "meta",
                                                                    "tool") else glyph
        kind_style = style + self._kind_style(block)
        stamp = format_stamp(block.stamp)
        time_text = f"  {stamp} L{block.line}" if stamp else f"  L{block.line}"
        room = width - 2 - cell_len(time_text)
        title = block.title
        if block.kind in ("user", "assistant") and not block.body:
            title = f"{title} · (no text)"
        if cell_len(title) > room:
            title = title[: max(0, room - 1)] + "…"
        pad = max(0, room - cell_len(title))
        time_style = style + self._fg("transcript--time")
        emphasis = Style(bold=True) if block.kind in ("user", "assistant") else Style()
        return [
            Segment(f"{glyph} ", kind_style),
            Segment(title, kind_style + emphasis),
            Segment(" " * pad, style),
            Segment(time_text, time_style),
        ]

    def _body_segments(self, block: Block, index: int, line: int, style: Style) -> list[Segment]:
        lines = self._body(index)
        text = lines[line] if line < len(lines) else ""
        body_style = style + self._fg("transcript--body")
        if block.kind in ("user", "assistant"):
            return [Segment("▌   ", style + self._kind_style(block)), Segment(text, body_style)]
        return [Segment("  │ ", style + self._fg("transcript--time")),
                Segment(text, body_style)]

    # -- navigation ---------------------------------------------------------------------------
    def _show_cursor(self) -> None:
        if not self.blocks:
            return
        top = self._starts[self.cursor]
        bottom = self._starts[self.cursor + 1]
        height = self.scrollable_content_region.height
        if top < self.scroll_y:
            self.scroll_to(y=top, animate=False)
        elif bottom > self.scroll_y + height:
            self.scroll_to(y=max(top, bottom - height), animate=False)
        self.refresh()

    def action_move(self, delta: int) -> None:
        if self.blocks:
            self.cursor = max(0, min(len(self.blocks) - 1, self.cursor + delta))
            self._show_cursor()

    def action_first(self) -> None:
        self.cursor = 0
        self._show_cursor()

    def action_last(self) -> None:
        if self.blocks:
            self.cursor = len(self.blocks) - 1
            self._show_cursor()

    def action_page(self, direction: int) -> None:
        if not self.blocks:
            return
        row = self._starts[self.cursor] + direction * max(1, self.scrollable_content_region.height - 2)
        row = max(0, min(self._starts[-1] - 1, row))
        self.cursor = bisect_right(self._starts, row) - 1
        self._show_cursor()

    def action_fold(self) -> None:
        if not self.blocks:
            return
        block = self.blocks[self.cursor]
        if block.foldable:
            self.blocks[self.cursor] = block._replace(folded=not block.folded)
            self._remeasure(self.cursor)
            self._show_cursor()
            self.post_message(self.BlockToggled())

    def action_fold_all(self) -> None:
        """Fold every foldable block (or unfold all when all are folded)."""
        foldable = [i for i, b in enumerate(self.blocks) if b.foldable]
        fold = not all(self.blocks[i].folded for i in foldable)
        for i in foldable:
            self.blocks[i] = self.blocks[i]._replace(folded=fold)
        self._apply(measure_blocks(self.blocks, self.text_width))
        self._show_cursor()

    def on_click(self, event: events.Click) -> None:
        if not self.blocks:
            return
        row = int(self.scroll_y) + event.y
        if row < self._starts[-1]:
            index = bisect_right(self._starts, row) - 1
            if index == self.cursor:
                self.action_fold()
            self.cursor = index
            self._show_cursor()

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()


class TranscriptView(Vertical):
    """A session transcript: summary header, then the turns."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f", "app.flush", "Flush", id="transcript.flush"),
        Binding("n", "app.session_note", "Session note", id="transcript.note"),
    ]

    class Loaded(Message):
        """A transcript finished loading."""

        def __init__(self, path: Path, seconds: float, partial: bool = False) -> None:
            super().__init__()
            self.path = path
            self.seconds = seconds
            self.partial = partial

    def __init__(self, bridge: Bridge, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.bridge = bridge
        self.path: Path | None = None
        self.transcript: Transcript | None = None
        self.summary: TranscriptSummary | None = None
        self.label = ""
        self.partial = False

    def compose(self) -> ComposeResult:
        yield TextLine("", id="transcript-header")
        yield TranscriptLines(id="transcript-lines")

    @property
    def lines(self) -> TranscriptLines:
        """The line view."""
        return self.query_one(TranscriptLines)

    @work(exclusive=True, group="transcript")
    async def load(self, path: Path, label: str = "", focus_line: int | None = None,
                   keep_position: bool = False) -> None:
        """Parse the transcript in a thread and show it (nothing is parsed on the event loop).

        Args:
            path: the JSONL file.
            label: what the header calls the session.
            focus_line: put the cursor on the turn from this JSONL line (a search hit).
            keep_position: keep cursor and scroll (the same file changed on disk).
        """
        started = time.perf_counter()
        keep_position = keep_position and path == self.path
        self.path = path
        self.label = label
        self.partial = False
        lines = self.lines
        width = lines.text_width
        cursor, scroll = lines.cursor, lines.scroll_y
        if not keep_position:
            # A big file: show the first screen from its head while the whole file is read.
            head = await asyncio.to_thread(self._parse_head, path, width)
            if head is not None:
                self._show(*head, partial=True)
                if focus_line is None:
                    self.post_message(self.Loaded(path, time.perf_counter() - started, partial=True))
        self.loading = not self.partial
        try:
            transcript, blocks, summary, layout = await asyncio.to_thread(self._parse, path, width)
        except (MemdeckError, OSError) as exc:
            self.loading = False
            self.partial = False
            self.transcript = None
            lines.set_blocks([Block("skipped", str(exc))])
            self.query_one("#transcript-header", TextLine).update(Content(str(exc)))
            return
        self.loading = False
        if self.partial:
            cursor, scroll, keep_position = lines.cursor, lines.scroll_y, True
        self.partial = False
        self._show(transcript, blocks, summary, layout, partial=False)
        if keep_position:
            lines.restore(cursor, scroll)
        elif focus_line is not None:
            lines.focus_line(focus_line)
        self.post_message(self.Loaded(path, time.perf_counter() - started))

    def _show(self, transcript: Transcript, blocks: list[Block], summary: TranscriptSummary, layout: Layout,
              partial: bool) -> None:
        self.transcript = None if partial else transcript
        self.summary = summary
        self.partial = partial
        self.lines.set_blocks(blocks, layout)
        self._update_header(transcript)

    def _parse_head(self, path: Path, width: int) -> tuple[Transcript, list[Block], TranscriptSummary, Layout] | None:
        transcript = self.bridge.read_transcript_head(path)
        if transcript is None:
            return None
        blocks, summary = build_blocks(transcript)
        return transcript, blocks, summary, measure_blocks(blocks, width)

    def _parse(self, path: Path, width: int) -> tuple[Transcript, list[Block], TranscriptSummary, Layout]:
        with quiet_gc():
            transcript = self.bridge.read_transcript(path)
            blocks, summary = build_blocks(transcript)
            return transcript, blocks, summary, measure_blocks(blocks, width)

    def _update_header(self, transcript: Transcript) -> None:
        summary = self.summary
        if summary is None:
            return
        first = next((entry.time for entry in transcript.entries if entry.time is not None), None)
        when = first.astimezone().strftime("%Y-%m-%d %H:%M") if first is not None else ""
        bits = [_plural(summary.messages, "message"), _plural(summary.tool_calls, "tool call")]
        if summary.compactions:
            bits.append(_plural(summary.compactions, "compaction"))
        if summary.tokens:
            bits.append(f"{summary.tokens:,} tokens")
        parts: list[Content | str | tuple[str, str]] = [
            (self.label or transcript.session_id[:8], "bold"),
            (f"  {transcript.session_id[:8]}", "$text-muted"),
        ]
        if when:
            parts.append((f"  {when}", "$text-muted"))
        parts.append(("\n" + " · ".join(bits), "$text-muted"))
        if summary.skipped:
            parts.append((f" · ⚠ {_plural(summary.skipped, 'line')} skipped", "$text-warning"))
        if self.partial:
            parts.append(("  · reading the rest…", "$text-accent"))
        self.query_one("#transcript-header", TextLine).update(Content.assemble(*parts))
