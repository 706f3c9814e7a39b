"""BigFileView: a memory file too big for the editor, read-only, its lines read from disk only when shown.

A 30 MB note took the editor (Textual's TextArea) ~18 s to open and ~8 s per keystroke; a 4.5 MB single line
~10 s per keystroke. Here a thread builds an index of where each line starts (1 MB at a time, each finished
block handed to the widget at once, so the first screen shows while the rest is counted), and the widget
renders only the visible rows: each reads its line's bytes (at most :data:`LINE_BYTES`) with a seek and a read.
No mmap: an agent truncating the file meanwhile would make a mapped read fault; a read just comes back short.
Lines are the engine's (:func:`engine.api.byte_lines`): UTF-8, UTF-16 or UTF-32, ended by LF, CRLF or CR, so
the viewer's line numbers are the citations' and the editor's.
"""

from __future__ import annotations

import threading
import time
from array import array
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from engine.api import ByteLines, byte_lines, byte_size, plural, safe_name, safe_text
from tui.widgets.text_line import TextLine

BIG_FILE_BYTES = 1 << 20
"""Files this big or bigger open in the viewer, not the editor."""
LONG_LINE_CHARS = 10_000
"""A smaller file with a line this long opens in the viewer too (the editor re-wraps the line per keystroke)."""
LINE_BYTES = 16 * 1024
"""What is read of one line to show it; longer lines are cut for display (the file is never changed)."""
SHOWN_CHARS = 4000
"""Characters of one line shown (scroll right to see them); the rest is summarised as ``… +N bytes``."""
BLOCK_BYTES = 1 << 20
"""The index is built and handed over this many bytes at a time."""
HANDOVER_SECONDS = 0.05
"""A finished block waits at most this long before the widget gets it (fewer, bigger handovers)."""


def too_big_for_editor(size: int) -> bool:
    """Whether a file of ``size`` bytes opens in the viewer."""
    return size >= BIG_FILE_BYTES


def longest_line(text: str) -> int:
    """The length of the longest line of ``text`` (for files small enough to read whole)."""
    return max(map(len, text.split("\n")), default=0)


@dataclass
class LineIndex:
    """Where each line of a file starts, in blocks as the scan finishes them.

    ``blocks[k]`` holds the start offsets of lines ``firsts[k]`` … ``firsts[k] + len(blocks[k]) - 1``; a block is
    never changed once handed over (the scanning thread makes new ones), so the widget reads them freely.
    """

    size: int = 0
    lines_of: ByteLines = field(default_factory=lambda: byte_lines(b""))
    """How the file stores its lines (its encoding; set by the scan from the file's first bytes)."""
    blocks: list[array[int]] | None = None
    firsts: list[int] | None = None
    lines: int = 0
    longest: int = 0
    done: bool = False
    scanned: int = 0

    def add(self, block: array[int], scanned: int, longest: int) -> None:
        """Append a finished block."""
        if self.blocks is None or self.firsts is None:
            self.blocks, self.firsts = [], []
        if block:
            self.firsts.append(self.lines)
            self.blocks.append(block)
            self.lines += len(block)
        self.scanned = scanned
        self.longest = max(self.longest, longest)

    def span(self, line: int) -> tuple[int, int]:
        """Byte range of 0-based ``line`` with its line break (the last known line ends at ``scanned``)."""
        assert self.blocks is not None and self.firsts is not None
        k = bisect_right(self.firsts, line) - 1
        block = self.blocks[k]
        i = line - self.firsts[k]
        start = block[i]
        if i + 1 < len(block):
            end = block[i + 1]
        elif k + 1 < len(self.blocks):
            end = self.blocks[k + 1][0]
        else:
            end = self.size if self.done else self.scanned
        return start, max(start, end)


class BigLines(ScrollView, can_focus=True):
    """The rows of a big file: line numbers, and each line's text read from disk when it is on screen."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"big-lines--number", "big-lines--selected", "big-lines--cut"}

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.index = LineIndex()
        self.selected: tuple[int, int] | None = None
        self._want_y: int | None = None  # a jump's scroll target, re-applied until the layout lets it land
        """1-based inclusive lines to highlight (a search hit)."""
        self._fh: BinaryIO | None = None
        self._cache: dict[int, str] = {}

    def show(self, fh: BinaryIO | None, index: LineIndex) -> None:
        """Start showing a file (its index fills in as the scan goes)."""
        self.close()
        self._fh = fh
        self.index = index
        self.selected = None
        self._want_y = None
        self.scroll_to(0, 0, animate=False)
        self.grow()

    def close(self) -> None:
        """Let go of the file."""
        if self._fh is not None:
            self._fh.close()
        self._fh = None
        self._cache.clear()

    def on_unmount(self) -> None:
        self.close()

    def grow(self) -> None:
        """The index has more lines: resize the scroll area and redraw."""
        width = self._gutter() + min(self.index.longest, SHOWN_CHARS) + 24
        self.virtual_size = Size(width, self.index.lines)
        self.refresh()
        self._land()

    def on_resize(self) -> None:
        self._land()

    def _land(self) -> None:
        """Scroll to the last jump's target; a scroll is clamped to the size, so retry as the size grows."""
        if self._want_y is None:
            return
        if self.index.done and self.size.height:
            self._want_y = min(self._want_y, int(self.max_scroll_y))  # near the end: as far as it goes
        self.scroll_to(y=self._want_y, animate=False, immediate=True)
        if int(self.scroll_y) == self._want_y:
            self._want_y = None
        else:
            self.call_after_refresh(self._land)

    def _gutter(self) -> int:
        return len(f"{max(1, self.index.lines):,}") + 3

    def _text(self, line: int) -> str:
        """Line ``line`` (0-based) as it is shown: at most :data:`SHOWN_CHARS`, control characters made visible."""
        cached = self._cache.get(line)
        if cached is not None:
            return cached
        start, end = self.index.span(line)
        lines_of = self.index.lines_of
        data = b""
        if self._fh is not None:
            self._fh.seek(start)
            data = self._fh.read(min(end - start, LINE_BYTES))
        text = lines_of.decode(data)
        cut = end - start - len(data)
        if cut > 0 and self._fh is not None:  # the break is in the part not read: what it is, from the line's end
            self._fh.seek(max(start, end - 2 * lines_of.unit))
            tail = lines_of.decode(self._fh.read(2 * lines_of.unit))
            cut -= lines_of.unit * (2 if tail.endswith("\r\n") else 1 if tail.endswith(("\n", "\r")) else 0)
        else:
            text = text.removesuffix("\n").removesuffix("\r")
        text = text.replace("\t", "    ")
        if len(text) > SHOWN_CHARS:
            cut += len(text[SHOWN_CHARS:].encode(lines_of.codec, errors="replace"))
            text = text[:SHOWN_CHARS]
        text = safe_text(text)
        if cut > 0:
            text += f"  … +{plural(cut, 'byte', grouped=True)} (line cut for display)"
        if len(self._cache) > 4096:  # a few screens' worth: enough for scrolling back and forth
            self._cache.clear()
        self._cache[line] = text
        return text

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        line = y + int(self.scroll_y)
        base = self.rich_style
        if line >= self.index.lines:
            return Strip.blank(width, base)
        selected = self.selected is not None and self.selected[0] - 1 <= line <= self.selected[1] - 1
        style = base + self.get_component_rich_style("big-lines--selected") if selected else base
        gutter = self._gutter()
        number = Segment(f"{line + 1:>{gutter - 3},} │ ", style + self._fg("big-lines--number"))
        strip = Strip([Segment(self._text(line), style)])
        x = int(self.scroll_x)
        body = strip.crop(x, x + max(0, width - gutter)) if x else strip
        return Strip([number, *body]).adjust_cell_length(width, style)

    def _fg(self, component: str) -> Style:
        full = self.get_component_rich_style(component)
        return Style(color=full.color, bold=full.bold, dim=full.dim)

    def jump(self, start_line: int, end_line: int) -> bool:
        """Highlight lines ``start_line``–``end_line`` (1-based) and scroll them into view; False while the index
        has not reached them yet."""
        self.selected = (start_line, max(start_line, end_line))
        if start_line - 1 >= self.index.lines and not self.index.done:
            return False
        # After the next refresh as well: a viewer just shown has no size yet, and a scroll is clamped to it.
        self._want_y = max(0, start_line - 3)
        self._land()
        self.refresh()
        return True


class BigFileView(Vertical):
    """The centre pane for a big memory file: header, banner ("large file: read-only here, 30.0 MB"), lines."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rel: str | None = None
        self.path: Path | None = None
        self.file_size = 0
        self.reason = ""
        self._pending: tuple[int, int] | None = None
        self._stop = threading.Event()
        self._generation = 0

    def compose(self) -> ComposeResult:
        yield TextLine("", id="bigfile-header")
        yield TextLine("", id="bigfile-banner")
        yield BigLines(id="bigfile-lines")

    @property
    def lines(self) -> BigLines:
        """The rows."""
        return self.query_one(BigLines)

    @property
    def banner_text(self) -> str:
        """What the banner says."""
        return self.query_one("#bigfile-banner", TextLine).content.plain

    def open(self, rel: str, path: Path, size: int, reason: str = "",
             select: tuple[int, int] | None = None) -> None:
        """Show ``path`` (the memory file ``rel``, ``size`` bytes); ``select`` is a 1-based line range to show.

        Raises:
            OSError: the file cannot be opened (nothing changes on screen).
        """
        fh = open(path, "rb")  # noqa: SIM115  # kept open while shown; BigLines.close closes it
        self._stop.set()  # a scan of the previous file stops
        self._stop = threading.Event()
        self._generation += 1
        self.rel, self.path, self.file_size, self.reason = rel, path, size, reason
        index = LineIndex(size=size)
        self.lines.show(fh, index)
        banner = f"{reason or 'large file'}: read-only here, {byte_size(size)}"
        self.query_one("#bigfile-banner", TextLine).update(Content(banner))
        self._pending = select
        self._header()
        self._scan(path, index, self._generation, self._stop)

    def close(self) -> None:
        """Stop the scan and let go of the file."""
        self._stop.set()
        self.lines.close()
        self.rel = self.path = None

    def on_unmount(self) -> None:
        self._stop.set()  # the rows close the file as they unmount

    def _header(self) -> None:
        if self.rel is None:
            return
        index = self.lines.index
        parts: list[Content | str | tuple[str, str]] = [(safe_name(self.rel), "bold"), ("  read-only", "$text-error")]
        if index.done:
            parts.append((f"  {plural(index.lines, 'line', grouped=True)}", "$text-muted"))
        else:
            parts.append((f"  counting lines… {byte_size(index.scanned)} of {byte_size(self.file_size)}",
                          "$text-accent"))
        if self.lines.selected is not None:
            start, end = self.lines.selected
            parts.append((f"  L{start}–L{end}" if start != end else f"  L{start}", "$text-secondary"))
        self.query_one("#bigfile-header", TextLine).update(Content.assemble(*parts))

    @work(thread=True, exclusive=True, group="bigfile-scan")
    def _scan(self, path: Path, index: LineIndex, generation: int, stop: threading.Event) -> None:
        """Build the line index in 1 MB blocks; each goes to the widget as soon as it is finished."""
        pending: list[tuple[array[int], int, int]] = []
        last = time.monotonic()
        offset = 0
        try:
            with open(path, "rb") as fh:
                lines_of = index.lines_of = byte_lines(fh.read(8192))
                fh.seek(0)
                unit = lines_of.unit
                start_of_line = lines_of.start  # after a byte-order mark
                block = array("Q", [start_of_line])
                longest = 0
                for ends, offset in lines_of.scan(fh, BLOCK_BYTES):
                    for end in ends:
                        longest = max(longest, (end - start_of_line) // unit)
                        start_of_line = end
                        block.append(end)
                    longest = max(longest, (offset - start_of_line) // unit)
                    pending.append((block, offset, longest))
                    block = array("Q")
                    if time.monotonic() - last >= HANDOVER_SECONDS:
                        self.app.call_from_thread(self._adopt, generation, pending, False)
                        pending, last = [], time.monotonic()
                    if stop.is_set():
                        break
                if not pending and offset == 0:
                    pending.append((block, 0, 0))  # an empty file: one empty line
        except OSError as exc:
            self.app.call_from_thread(self.notify, f"Stopped reading {self.rel}: {exc}", severity="warning")
        if not stop.is_set():
            self.app.call_from_thread(self._adopt, generation, pending, True, offset)

    def _adopt(self, generation: int, blocks: list[tuple[array[int], int, int]], done: bool,
               size: int | None = None) -> None:
        if generation != self._generation:
            return  # a previous file's
        index = self.lines.index
        for block, scanned, longest in blocks:
            index.add(block, scanned, longest)
        if done:
            index.done = True
            index.size = size if size is not None else index.scanned  # what was read: it may have changed
            if index.lines > 1 and index.blocks and index.blocks[-1][-1] >= index.size:
                index.lines -= 1  # a final newline starts no line (the engine counts lines the same way)
        self.lines.grow()
        if self._pending is not None and self.lines.jump(*self._pending):
            self._pending = None
        self._header()

    def jump(self, start_line: int, end_line: int) -> None:
        """Show lines ``start_line``–``end_line`` (1-based) highlighted, as soon as the index reaches them."""
        self._pending = None if self.lines.jump(start_line, end_line) else (start_line, end_line)
        self._header()
