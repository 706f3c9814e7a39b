"""TranscriptView: a session as readable turns, drawn lazily line by line from transcript_layout's rows."""

from __future__ import annotations

import asyncio
import time
from bisect import bisect_right
from datetime import tzinfo
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

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

from engine.api import safe_name
from tui.bridge import Bridge, MemdeckError
from tui.quiet_gc import quiet_gc
from tui.widgets.text_line import TextLine
from tui.widgets.transcript_layout import (
    Block,
    Layout,
    TranscriptSummary,
    block_height,
    build_blocks,
    has_gap,
    has_title,
    injected_title,
    measure_blocks,
    plural,
    shows_body,
    summary_counts,
    title_row,
    wrap_text,
)

if TYPE_CHECKING:
    from engine.api import Transcript

BIG = 2000
"""Blocks past which a re-wrap for a new width runs in a thread (the old rows stay up meanwhile)."""


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
        Binding("o", "injected", "Injected", id="transcript.injected"),
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
        """What is shown; changed only on the event loop, each change counted in ``_generation``."""
        self.cursor = 0
        self._generation = 0
        self._layout = Layout(0, {}, [])
        self._starts: list[int] = [0]
        self.zone: tzinfo | None = None
        """The zone times are shown in (the user's, set by the transcript view); None: the system's."""

    def set_blocks(self, blocks: list[Block], layout: Layout | None = None) -> None:
        """Show a new transcript from its first block (``layout`` measured off the event loop, if given)."""
        self.blocks = blocks
        self._generation += 1
        self.cursor = 0
        width = self.text_width
        if layout is None or layout.width != width:
            if layout is not None and len(blocks) > BIG:
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
        self._layout.heights[index] = block_height(block, index, len(self._body(index)) if shows_body(block) else 0)
        self._restart()

    def relayout(self, width: int) -> None:
        """Re-wrap every body for a new width in a thread (a big transcript takes a moment).

        The thread gets a snapshot taken here, on the event loop: a tuple of the blocks and their generation.
        A fold meanwhile changes ``blocks`` (on the loop) but never what the thread reads, and the thread's
        layout is only adopted if the generation is still the same; otherwise it is measured again.
        """
        self._measure(tuple(self.blocks), self._generation, width)

    @work(thread=True, exclusive=True, group="transcript-layout")
    def _measure(self, blocks: tuple[Block, ...], generation: int, width: int) -> None:
        layout = measure_blocks(blocks, width)
        self.app.call_from_thread(self._adopt, generation, layout)

    def _adopt(self, generation: int, layout: Layout) -> None:
        if layout.width != self.text_width:
            return  # an older width's: the relayout for the current one is on its way
        if generation == self._generation:
            self._apply(layout)
        elif self._layout.width != layout.width:
            self.relayout(layout.width)  # the blocks changed while it measured: measure what is shown now

    def on_resize(self, event: events.Resize) -> None:
        if self.blocks and self.text_width != self._layout.width:
            if len(self.blocks) > BIG:
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
        if has_gap(block, index):
            if offset == 0:
                return Strip.blank(width, base)
            offset -= 1
        cursor = index == self.cursor and self.has_focus
        style = base + (self.get_component_rich_style("transcript--cursor") if cursor else Style())
        if not has_title(block):
            segments = self._body_segments(block, index, offset, style)
        elif offset == 0:
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
        if block.kind == "injected":  # one dim line inside the user's turn: its time and line are the turn's
            title = injected_title(block, width - 4)
            return [Segment("▌   ", style + self._fg("transcript--user")),
                    Segment(title, style + self._fg("transcript--time"))]
        row = title_row(block, width, self.zone)
        kind_style = style + self._kind_style(block)
        emphasis = Style(bold=True) if block.kind in ("user", "assistant") else Style()
        return [
            Segment(f"{row.glyph} ", kind_style),
            Segment(row.title, kind_style + emphasis),
            Segment(" " * row.pad, style),
            Segment(row.time_text, style + self._fg("transcript--time")),
        ]

    def _body_segments(self, block: Block, index: int, line: int, style: Style) -> list[Segment]:
        lines = self._body(index)
        text = lines[line] if line < len(lines) else ""
        body_style = style + self._fg("transcript--body")
        if block.kind == "speech":
            return [Segment("▌   ", style + self._fg("transcript--user")), Segment(text, body_style)]
        if block.kind == "injected":
            muted = style + self._fg("transcript--time")
            return [Segment("▌", style + self._fg("transcript--user")), Segment(" │ ", muted), Segment(text, muted)]
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
            self._generation += 1
            self._remeasure(self.cursor)
            self._show_cursor()
            self.post_message(self.BlockToggled())

    def action_injected(self) -> None:
        """Open every injected block (or close them all when all are open)."""
        injected = [i for i, b in enumerate(self.blocks) if b.kind == "injected" and b.foldable]
        if not injected:
            return
        self._set_folded(injected, not any(self.blocks[i].folded for i in injected))
        self.post_message(self.BlockToggled())

    def action_fold_all(self) -> None:
        """Fold every foldable block (or unfold all when all are folded)."""
        foldable = [i for i, b in enumerate(self.blocks) if b.foldable]
        self._set_folded(foldable, not all(self.blocks[i].folded for i in foldable))

    def _set_folded(self, indices: list[int], fold: bool) -> None:
        for i in indices:
            self.blocks[i] = self.blocks[i]._replace(folded=fold)
        self._generation += 1
        self._apply(measure_blocks(self.blocks, self.text_width))
        self._show_cursor()

    def on_click(self, event: events.Click) -> None:
        if not self.blocks:
            return
        row = int(self.scroll_y) + event.y
        if row < self._starts[-1]:
            index = bisect_right(self._starts, row) - 1
            fold_line = self.blocks[index].kind == "injected" and row == self._starts[index]
            again = index == self.cursor
            self.cursor = index
            if again or fold_line:
                self.action_fold()  # a click on an injected block's fold line opens or closes it at once
            self._show_cursor()

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()


class TranscriptView(Vertical):
    """A session transcript: summary header, then the turns."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f", "screen.flush", "Flush", id="transcript.flush"),
        Binding("n", "screen.session_note", "Session note", id="transcript.note"),
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
        lines = TranscriptLines(id="transcript-lines")
        lines.zone = self.bridge.timezone  # times in the user's zone, like every note's
        yield lines

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
            self.query_one("#transcript-header", TextLine).update(Content(safe_name(str(exc))))
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
        when = first.astimezone(self.lines.zone).strftime("%Y-%m-%d %H:%M") if first is not None else ""
        parts: list[Content | str | tuple[str, str]] = [
            (safe_name(self.label or transcript.session_id[:8]), "bold"),
            (f"  {safe_name(transcript.session_id[:8])}", "$text-muted"),
        ]
        if when:
            parts.append((f"  {when}", "$text-muted"))
        parts.append(("\n" + summary_counts(summary), "$text-muted"))
        if summary.skipped:
            parts.append((f" · ⚠ {plural(summary.skipped, 'line')} skipped", "$text-warning"))
        if self.partial:
            parts.append(("  · reading the rest…", "$text-accent"))
        self.query_one("#transcript-header", TextLine).update(Content.assemble(*parts))
