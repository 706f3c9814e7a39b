"""SearchPane: live search as you type (debounced, exclusive worker, stale results dropped) and its results."""

from __future__ import annotations

import asyncio
import functools
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.events import Click
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from tui.bridge import SEARCH_MODES, Bridge
from tui.messages import ResultChosen, ResultsReady
from tui.widgets.text_line import TextLine

if TYPE_CHECKING:
    from engine.api import Hit, SearchResponse

DEBOUNCE_SECONDS = 0.1
SNIPPET_LINES = 3
MATCH_STYLE = "bold $text-accent underline"
# Snippet text keeps its length (the engine's match spans are offsets into it): C0, DEL, C1 and the bidi
# overrides each become one U+FFFD, a tab one space. Escape sequences in memory never reach the terminal.
# U+2028/U+2029, which a terminal draws as nothing (the words either side glued), are the editor's ↵/⁋.
_CONTROL = ({i: "\ufffd" for i in range(32) if i not in (9, 10)} | {9: " ", 127: "\ufffd"}
            | {i: "\ufffd" for i in (*range(0x80, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A))})
SEPARATOR_STYLE = "dim reverse"
"""How a ↵/⁋ glyph is drawn in a snippet: marked, as in the editor, so it is not read as a typed arrow."""


@functools.cache
def _shown() -> tuple[dict[int, str], frozenset[str]]:
    """The snippet translation table with the engine's separator glyphs, and the glyphs. Built on first use: the
    engine is loaded by the time there is a result, but not when the app starts."""
    from engine.api import SEPARATOR_GLYPHS

    table = _CONTROL | {ord(separator): glyph for separator, glyph in SEPARATOR_GLYPHS.items()}
    return table, frozenset(SEPARATOR_GLYPHS.values())


@dataclass(frozen=True)
class SnippetLine:
    """One line of a result's snippet with the match spans that fall on it (line-relative offsets)."""

    number: int | None
    text: str
    spans: tuple[tuple[int, int], ...]


def snippet_lines(hit: Hit, limit: int = SNIPPET_LINES) -> list[SnippetLine]:
    """The snippet lines worth showing: up to ``limit`` from the first line with a match; with none (a hit found
    by meaning alone), from the line before the one closest in meaning (``hit.best_line``).

    Line numbers are the file's for memory files; session snippets are transcript text without them.
    """
    lines: list[SnippetLine] = []
    pos = 0
    for index, text in enumerate(hit.snippet.split("\n")):
        start, end = pos, pos + len(text)
        pos = end + 1
        spans = tuple((max(s, start) - start, min(e, end) - start) for s, e in hit.spans if s < end and e > start)
        number = hit.snippet_start_line + index if hit.source == "memory" else None
        lines.append(SnippetLine(number, text.translate(_shown()[0]), spans))
    while lines and not lines[-1].text.strip():
        lines.pop()
    if not lines:
        return []
    first = next((i for i, line in enumerate(lines) if line.spans), None)
    if first is None:
        best = hit.best_line
        closest = next((i for i, line in enumerate(lines) if best is not None and line.number == best), None)
        first = 0 if closest is None else max(0, closest - 1)
    begin = max(0, min(first, len(lines) - limit))
    return lines[begin : begin + limit]


def line_range(hit: Hit) -> str:
    """``L12–L30`` (or ``L12`` for a single line)."""
    if hit.start_line == hit.end_line:
        return f"L{hit.start_line}"
    return f"L{hit.start_line}–L{hit.end_line}"


def score_parts(hit: Hit) -> Content:
    """The score and its parts: vector and keyword (OpenClaw's fusion), and the re-ranker's change if any."""
    parts = [(f"{hit.score:.2f}", "bold")]
    detail = f"kw {hit.text_score:.2f}"
    if hit.vector_score is not None:
        detail = f"vec {hit.vector_score:.2f} · " + detail
    if hit.rerank is not None:  # the learned re-ranker's change to the fused score
        detail += f" · rr {hit.rerank:+.2f}"
    if hit.placed:  # above a higher score: the vector leg is surest of it
        detail += " · placed by meaning"
    return Content.assemble(*parts, "  ", (detail, "$text-muted"))


MATCH_VIEW = 48
"""A line's first match starting past this column is brought into view: the line is shown from a little before it,
after "…" (the list cuts a row at its right edge, so "reviewer and back…" hid the "backup" the line was shown for)."""


def _match_in_view(text: str, spans: tuple[tuple[int, int], ...]) -> tuple[str, tuple[tuple[int, int], ...]]:
    if not spans or spans[0][0] <= MATCH_VIEW:
        return text, spans
    cut = spans[0][0] - MATCH_VIEW // 2
    space = text.rfind(" ", 0, cut + 1)
    cut = space + 1 if space > cut - 12 else cut  # start at a word where one is near
    return "…" + text[cut:], tuple((s - cut + 1, e - cut + 1) for s, e in spans if e > cut)


def render_hit(hit: Hit) -> Content:
    """A result as Content: header (path, range, scores) then highlighted snippet lines, always 1 + SNIPPET_LINES rows.

    The snippet is plain text: spans from the engine are applied as styles, nothing is parsed as markup. Every
    result has the same height so that, as the user types, a new set of results of the same count keeps the
    list's size: no screen re-layout per keystroke, and rows do not jump.
    """
    header = Content.assemble(
        (hit.path.translate(_CONTROL), "bold $text-primary"),
        "  ",
        (line_range(hit), "$text-secondary"),
        "   ",
        score_parts(hit),
    )
    rows = [header]
    lines = snippet_lines(hit)
    width = max((len(str(line.number)) for line in lines if line.number is not None), default=0)
    for line in lines:
        text, spans = _match_in_view(line.text, line.spans)
        body = Content(text)
        for start, end in spans:
            body = body.stylize(MATCH_STYLE, start, end)
        glyphs = _shown()[1]
        if not glyphs.isdisjoint(text):
            for at, char in enumerate(text):
                if char in glyphs:
                    body = body.stylize(SEPARATOR_STYLE, at, at + 1)
        gutter = f"{line.number:>{width}} │ " if line.number is not None else "│ "
        rows.append(Content.assemble(("  " + gutter, "$text-muted"), body))
    rows += [Content(" ")] * (1 + SNIPPET_LINES - len(rows))
    return Content("\n").join(rows)


class ResultItem(Option):
    """One search result in the list."""

    def __init__(self, hit: Hit, index: int) -> None:
        super().__init__(render_hit(hit), id=f"result-{index}")
        self.hit = hit


class ResultList(OptionList):
    """The results; Enter opens the highlighted one."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor_up_or_input", "Up", show=False),
        Binding("c", "copy_citation", "Copy cite", id="results.copy_citation"),
        Binding("y", "copy_snippet", "Copy snippet", id="results.copy_snippet"),
    ]

    # Local actions that hand over to the screen's, rather than "screen.copy_citation" here: the footer lists
    # one key per action string, and the app's ctrl+l for the same action must stay listed beside c.
    async def action_copy_citation(self) -> None:
        await self.screen.run_action("copy_citation")

    async def action_copy_snippet(self) -> None:
        await self.screen.run_action("copy_snippet")

    def action_cursor_up_or_input(self) -> None:
        if self.highlighted in (None, 0):
            self.screen.query_one("#search-input", Input).focus()
        else:
            self.action_cursor_up()


class ModeSwitch(Static):
    """hybrid / keyword / vector; click (or ctrl+t) to switch."""

    mode: reactive[str] = reactive("hybrid")

    class Changed(Message):
        """The user switched the search mode."""

        def __init__(self, mode: str) -> None:
            super().__init__()
            self.mode = mode

    def render(self) -> Content:
        parts: list[Content | str | tuple[str, str]] = []
        for name in SEARCH_MODES:
            if name == self.mode:
                parts.append((f" {name} ", "bold $text on $primary-muted"))
            else:
                parts.append((f" {name} ", "$text-muted"))
        return Content.assemble(*parts)

    def on_click(self, event: Click) -> None:
        self.post_message(self.Changed(SEARCH_MODES[(SEARCH_MODES.index(self.mode) + 1) % len(SEARCH_MODES)]))


class SearchPane(Vertical):
    """The search bar and its results."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down", "focus_results", "Results", show=False),
    ]

    mode: reactive[str] = reactive("hybrid", init=False)

    def __init__(self, bridge: Bridge, mode: str = "hybrid", *, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.bridge = bridge
        self.set_reactive(SearchPane.mode, mode if mode in SEARCH_MODES else "hybrid")
        self.response: SearchResponse | None = None
        self.results_query = ""
        self._generation = 0
        self._shown_query = ""
        self._shown_hits: tuple[Hit, ...] = ()

    def compose(self) -> ComposeResult:
        with Horizontal(id="search-bar"):
            yield Input(placeholder="Search memory — type a question or keywords", id="search-input")
            yield ModeSwitch(id="search-mode").data_bind(SearchPane.mode)
        yield TextLine("", id="search-info")
        yield ResultList(id="results")

    @property
    def query_input(self) -> Input:
        """The search box."""
        return self.query_one("#search-input", Input)

    @property
    def results(self) -> ResultList:
        """The result list."""
        return self.query_one(ResultList)

    @property
    def selected_hit(self) -> Hit | None:
        """The highlighted result, if any."""
        option = self.results.highlighted_option
        return option.hit if isinstance(option, ResultItem) else None

    # -- searching ----------------------------------------------------------------------------
    @on(Input.Changed, "#search-input")
    def _query_changed(self, event: Input.Changed) -> None:
        self.start_search(event.value)

    def start_search(self, query: str) -> None:
        """Search for ``query`` after the debounce; an empty query clears the results at once."""
        self._generation += 1
        if not query.strip():
            self.workers.cancel_group(self, "search")
            self.show_response("", None)
            return
        self.run_search(query, self._generation)

    @work(exclusive=True, group="search")
    async def run_search(self, query: str, generation: int) -> None:
        """Debounce, search in a thread, drop the answer if the query moved on meanwhile."""
        await asyncio.sleep(DEBOUNCE_SECONDS)
        started = time.perf_counter()
        response = await asyncio.to_thread(self.bridge.search, query, self.mode)
        if generation != self._generation:
            return  # stale: the user typed on
        self.show_response(query, response)
        self.post_message(ResultsReady(query, response, time.perf_counter() - started))

    def refresh_results(self) -> None:
        """Search the current query again (after a save, a sync or a mode switch)."""
        self.start_search(self.query_input.value)

    def show_response(self, query: str, response: SearchResponse | None) -> None:
        """Put results on screen in one update (no intermediate empty state: no flicker).

        The same hits as on screen (common while a word is typed out) leave the list alone: re-rendering them
        would cost a repaint for nothing.
        """
        self.response = response
        self.results_query = query
        results = self.results
        keep = self.selected_hit if query and query == self._shown_query else None
        self._shown_query = query
        hits = response.results if response is not None else ()
        if hits != self._shown_hits:
            self._shown_hits = hits
            results.set_options([ResultItem(hit, i) for i, hit in enumerate(hits)])
            if hits:
                index = next((i for i, h in enumerate(hits) if keep is not None and h.citation == keep.citation), 0)
                results.highlighted = index
        self.set_class(bool(query.strip()), "-active")
        self.query_one("#search-info", TextLine).update(self._info(query, response))

    def _info(self, query: str, response: SearchResponse | None) -> Content:
        if not query.strip() or response is None:
            return Content("")
        parts: list[Content | str | tuple[str, str]] = []
        count = len(response.results)
        if count:
            from engine.api import plural  # loaded by now: there are results

            parts.append((plural(count, "result", grouped=True), "bold"))
        else:
            parts.append((f"No matches for “{query.strip()}”", "$text-muted"))
        parts.append((f" · {response.mode}", "$text-muted"))
        for span in response.dates:  # how the query's dates were read: "yesterday → Wed 21 Oct 2026"
            parts.append((f" · {span.phrase} → {span.label}", "$accent"))
        for warning in response.warnings:
            parts.append(("  ⚠ " + warning, "$text-warning"))
        return Content.assemble(*parts)

    def on_descendant_focus(self) -> None:
        # Results get more room while the user works in them, less while editing (see memdeck.tcss).
        self.add_class("-focused")

    def on_descendant_blur(self) -> None:
        self.remove_class("-focused")

    # -- actions ------------------------------------------------------------------------------
    def action_focus_results(self) -> None:
        if self.results.option_count:
            self.results.focus()
            if self.results.highlighted is None:
                self.results.highlighted = 0

    @on(Input.Submitted, "#search-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        hit = self.selected_hit
        if hit is not None:
            self.post_message(ResultChosen(hit))

    @on(OptionList.OptionSelected, "#results")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if isinstance(event.option, ResultItem):
            self.post_message(ResultChosen(event.option.hit))

    @on(ModeSwitch.Changed)
    def _mode_clicked(self, event: ModeSwitch.Changed) -> None:
        self.mode = event.mode

    def cycle_mode(self) -> str:
        """Switch to the next search mode; returns it."""
        self.mode = SEARCH_MODES[(SEARCH_MODES.index(self.mode) + 1) % len(SEARCH_MODES)]
        return self.mode

    def watch_mode(self, mode: str) -> None:
        self.refresh_results()
