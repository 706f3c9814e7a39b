"""MarkdownArea: a TextArea with line numbers and a Markdown highlighter drawn from the engine's block model."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.widgets import TextArea
from textual.widgets.text_area import (
    Document,
    DocumentNavigator,
    EditResult,
    Location,
    Selection,
    WrappedDocument,
)

from tui.themes import EDITOR_THEME, editor_theme

if TYPE_CHECKING:
    from engine.api import Blocks, LineRole, Reparser

Highlight = tuple[int, int | None, str]

# Where the marks sit on a line the block model (engine.markdown, through engine.api) has already classified.
# A container's prefix ("> ", "- ", "  ") may come first.
_PREFIX = r"^[ \t>]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?[ \t>]*"
_ATX = re.compile(_PREFIX + r"(#{1,6})(?=[ \t]|$)")
_FENCE_MARK = re.compile(r"(`{3,}|~{3,})[ \t]*([^`\s]*)")
_LIST = re.compile(r"^[ \t>]*([-*+]|\d{1,9}[.)])(?=\s|$)")
_TASK = re.compile(r"^[ \t>]*(?:[-*+]|\d{1,9}[.)])\s+(\[[ xX]\])")
_INLINE = (
    (re.compile(r"`[^`\n]+`"), "inline_code"),
    (re.compile(r"\*\*(?=\S)[^*]*?\S\*\*|__(?=\S)[^_]*?\S__"), "bold"),
    (re.compile(r"(?<![*\w])\*(?=[^*\s])[^*]*?[^*\s]\*(?![*\w])|(?<![_\w])_(?=[^_\s])[^_]*?[^_\s]_(?![_\w])"),
     "italic"),
    (re.compile(r"~~(?=\S)[^~]*?\S~~"), "strikethrough"),
)
_LINK = re.compile(r"\[([^\]\n]+)\]\(([^)\s]+)\)|<(https?://[^>\s]+)>|(?<![\w(<])(https?://[^\s)>\]]+)")
_CACHE_LIMIT = 20_000


@functools.cache
def _markdown() -> tuple[Callable[[str], Blocks], type[LineRole], type[Reparser]]:
    """The engine's block model (:func:`engine.api.parse_blocks`, :class:`engine.api.LineRole`,
    :class:`engine.api.Reparser`), loaded on first use: the app's first screen loads no ``engine.api``."""
    from engine.api import LineRole, Reparser, parse_blocks

    return parse_blocks, LineRole, Reparser


def new_reparser() -> Reparser:
    """A parser that re-reads only what changed between one version of a note and the next."""
    return _markdown()[2]()


def _byte_offsets(line: str) -> list[int] | None:
    """Char index → UTF-8 byte offset (None for ASCII lines, where they are equal)."""
    if line.isascii():
        return None
    offsets = [0]
    total = 0
    for ch in line:
        total += len(ch.encode("utf-8", errors="surrogatepass"))
        offsets.append(total)
    return offsets


def highlight_line(line: str, role: str = "text", *, item: bool = False, quoted: bool = False) -> list[Highlight]:
    """Highlights for one line (char offsets), given what the block model says the line is.

    Args:
        line: the line's text.
        role: its :class:`engine.api.LineRole` (:attr:`engine.api.Blocks.roles`): code, a fence, a heading …
        item: a list item starts on the line.
        quoted: the line is inside a block quote.
    """
    roles = _markdown()[1]
    if role in (roles.CODE, roles.FRONT_MATTER):
        return [(0, None, "code_block")]
    if role == roles.FENCE_OPEN:
        fence = _FENCE_MARK.search(line)
        if fence is None:
            return [(0, None, "heading.marker")]
        spans: list[Highlight] = [(0, fence.end(1), "heading.marker")]
        if fence.group(2):
            spans.append((fence.start(2), fence.end(2), "info_string"))
        return spans
    if role in (roles.FENCE_CLOSE, roles.UNDERLINE):
        return [(0, None, "heading.marker")]
    if role == roles.HEADING:
        heading = _ATX.match(line)
        if heading is None:  # a setext heading's text
            return [(0, None, "heading")]
        return [(0, heading.end(1), "heading.marker"), (heading.end(1), None, "heading")]
    if role == roles.RULE:
        return [(0, None, "rule")]
    spans = []
    if quoted:
        spans.append((0, None, "quote"))
    if role == roles.TABLE:
        for m in re.finditer(r"\|", line):
            spans.append((m.start(), m.end(), "table"))
    if item:
        marker = _LIST.match(line)
        if marker:
            spans.append((marker.start(1), marker.end(1), "list.marker"))
            task = _TASK.match(line)
            if task:
                done = task.group(1) in ("[x]", "[X]")
                spans.append((task.start(1), task.end(1), "task.done" if done else "task.open"))
    taken: list[tuple[int, int]] = []
    for pattern, name in _INLINE:
        for m in pattern.finditer(line):
            if name != "inline_code" and any(s < m.end() and m.start() < e for s, e in taken):
                continue
            spans.append((m.start(), m.end(), name))
            if name == "inline_code":
                taken.append((m.start(), m.end()))
    for m in _LINK.finditer(line):
        if any(s < m.end() and m.start() < e for s, e in taken):
            continue
        if m.group(1) is not None:
            spans.append((m.start(1), m.end(1), "link.label"))
            spans.append((m.start(2), m.end(2), "link.uri"))
        else:
            spans.append((m.start(), m.end(), "link.uri"))
    return spans


LineCache = dict[tuple[str, str, bool, bool], list[Highlight]]


def highlight_document(lines: Sequence[str], cache: LineCache, parser: Reparser | None = None
                       ) -> dict[int, list[Highlight]]:
    """Byte-offset highlights for every line, as TextArea's renderer wants them.

    The note is parsed into the engine's block model (the chunker's and the review's) — by ``parser`` when given,
    which re-reads only the blocks around an edit — then each line is highlighted by its role (cached per line
    text and role).
    """
    out: dict[int, list[Highlight]] = {}
    blocks = parser.parse(lines) if parser is not None else _markdown()[0]("\n".join(lines))
    items, quoted = blocks.items, blocks.quoted
    for row, (line, role) in enumerate(zip(lines, blocks.roles, strict=True)):
        key = (line, role, row in items, row in quoted)
        spans = cache.get(key)
        if spans is None:
            spans = highlight_line(line, role, item=key[2], quoted=key[3])
            offsets = _byte_offsets(line)
            if offsets is not None:
                spans = [(offsets[s], None if e is None else offsets[e], n) for s, e, n in spans]
            if len(cache) > _CACHE_LIMIT:
                cache.clear()
            cache[key] = spans
        if spans:
            out[row] = spans
    return out


_LINE_BREAK = re.compile(r"\r\n|\r|\n")
@functools.cache
def _glyphs() -> tuple[dict[int, str], frozenset[str]]:
    """The engine's separator glyphs (:data:`engine.display.SEPARATOR_GLYPHS`: ↵ U+2028, ⁋ U+2029, ⍽ U+FEFF) as a
    translation table, and the characters they stand for. Built on first use: a note with one is drawn only once
    the engine has read it, and the app's first screen loads no ``engine.api``."""
    from engine.api import SEPARATOR_GLYPHS

    return str.maketrans(SEPARATOR_GLYPHS), frozenset(SEPARATOR_GLYPHS)


_SEPARATOR_STYLE = Style(reverse=True, dim=True)


def split_lines(text: str) -> list[str]:
    """A note's lines as memdeck counts them: split at ``\n``, ``\r\n`` and ``\r`` only (the index's and the
    citations' lines), never at U+2028/U+2029 or the other breaks :meth:`str.splitlines` knows. A text that ends
    with a line break has an empty last line, as in Textual's :class:`Document`."""
    return _LINE_BREAK.split(text)


def _marked(line: str) -> bool:
    return "\u2028" in line or "\u2029" in line or "\ufeff" in line


def _show(line: str) -> str:
    return line.translate(_glyphs()[0]) if _marked(line) else line


class NoteDocument(Document):
    """The editor's document: lines split as memdeck splits them (:func:`split_lines`), so editor line numbers are
    citation line numbers and U+2028/U+2029 stay inside their line — and in :attr:`text`, byte for byte.

    Textual's :class:`Document` splits with :meth:`str.splitlines`, which also breaks at U+2028/U+2029: the editor
    then counted more lines than the index, and joined them back with ``\n`` (the file read as modified and saved
    them as newlines). Here the text is kept as it is; only what is *drawn* (:attr:`lines`, :meth:`get_line`, which
    the wrapping and the renderer read) shows each separator as a one-cell glyph (:data:`SEPARATOR_GLYPHS`), so
    columns match. ``text``, ``get_text_range`` and ``document[row]`` keep the real characters: saving, copying
    and undo see the separators, never the glyphs.
    """

    def __init__(self, text: str) -> None:
        super().__init__("")
        self._newline = "\r\n" if "\r\n" in text else "\r" if "\r" in text and "\n" not in text else "\n"
        self._lines = split_lines(text)
        self._shown = [_show(line) for line in self._lines]

    @property
    def lines(self) -> list[str]:
        """The lines as drawn (separators as glyphs; same length as the real lines)."""
        return self._shown

    def get_line(self, index: int) -> str:
        """The line as drawn (see :attr:`lines`)."""
        return self._shown[index]

    def get_size(self, tab_width: int) -> Size:
        """The size of the drawn text."""
        widths = [cell_len(line.expandtabs(tab_width)) for line in self._shown]
        return Size(max(widths, default=0), len(self._shown))

    def replace_range(self, start: Location, end: Location, text: str) -> EditResult:
        """Textual's edit, with inserted text split as :func:`split_lines` does."""
        top, bottom = sorted((start, end))
        top_row, top_column = top
        bottom_row, bottom_column = bottom
        insert_lines = split_lines(text)
        lines = self._lines
        replaced_text = self.get_text_range(top, bottom)
        after_selection = "" if bottom_row >= len(lines) else lines[bottom_row][bottom_column:]
        before_selection = "" if top_row >= len(lines) else lines[top_row][:top_column]
        insert_lines[0] = before_selection + insert_lines[0]
        destination_column = len(insert_lines[-1])
        insert_lines[-1] = insert_lines[-1] + after_selection
        lines[top_row:bottom_row + 1] = insert_lines
        self._shown[top_row:bottom_row + 1] = [_show(line) for line in insert_lines]
        return EditResult((top_row + len(insert_lines) - 1, destination_column), replaced_text)


class MarkdownArea(TextArea):
    """The editor's text area: Markdown highlighting, line numbers, themed from the app theme."""

    def __init__(self, *, id: str | None = None) -> None:
        self._md_cache: LineCache = {}
        self._md_parser: Reparser | None = None
        self._shown_range: Selection | None = None
        super().__init__("", soft_wrap=True, show_line_numbers=True, tab_behavior="indent", id=id)

    def on_mount(self) -> None:
        self._apply_app_theme()
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._apply_app_theme())

    def _apply_app_theme(self) -> None:
        self.register_theme(editor_theme(self.app.theme_variables))
        self.theme = EDITOR_THEME

    def show_range(self, selection: Selection) -> None:
        """Select a search hit's lines to show them; the first keystroke will not replace them."""
        self.selection = selection
        self._shown_range = selection

    def _guarded(self, start: Location, end: Location) -> bool:
        """Whether an edit would replace a range we selected only to show it (then just drop the selection)."""
        shown = self._shown_range
        self._shown_range = None
        if shown is None or self.selection != shown or sorted((start, end)) != sorted((shown.start, shown.end)):
            return False
        self.selection = Selection.cursor(shown.end)
        return True

    def _replace_via_keyboard(self, insert: str, start: Location, end: Location) -> EditResult | None:
        if self._guarded(start, end):
            cursor = self.cursor_location
            return super()._replace_via_keyboard(insert, cursor, cursor)
        return super()._replace_via_keyboard(insert, start, end)

    def _delete_via_keyboard(self, start: Location, end: Location) -> EditResult | None:
        if self._guarded(start, end):
            return None  # the first backspace/delete only clears the shown range
        return super()._delete_via_keyboard(start, end)

    def _set_document(self, text: str, language: str | None) -> None:
        """Every text is a :class:`NoteDocument` (memdeck's lines; no tree-sitter: the highlighter is our own)."""
        self._highlight_query = None
        document = NoteDocument(text)
        self.document = document
        self.wrapped_document = WrappedDocument(document, tab_width=self.indent_width)
        self.navigator = DocumentNavigator(self.wrapped_document)
        self._build_highlight_map()
        self.move_cursor((0, 0))
        self._rewrap_and_refresh_virtual_size()

    def get_line(self, line_index: int) -> Text:
        """A line to draw: U+2028/U+2029 as marked glyphs (see :class:`NoteDocument`)."""
        line = super().get_line(line_index)
        real = self.document[line_index]
        if _marked(real):
            for column, char in enumerate(real):
                if char in _glyphs()[1]:
                    line.stylize(_SEPARATOR_STYLE, column, column + 1)
        return line

    def _build_highlight_map(self) -> None:
        """Replace tree-sitter highlighting with the Markdown highlighter (the engine's block model)."""
        self._line_cache.clear()
        highlights = self._highlights
        highlights.clear()
        if self._md_parser is None:
            self._md_parser = new_reparser()
        for row, spans in highlight_document(self.document.lines, self._md_cache, self._md_parser).items():
            highlights[row] = list(spans)
