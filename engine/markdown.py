"""The one Markdown block model: what is code, a heading, a list item, a quote, a table … in a note, by line.

The chunker (:mod:`engine.index.chunking`), the review's statements and sections (:mod:`engine.review`) and the
editor's highlighter (``tui/widgets/markdown_area.py``, through :mod:`engine.api`) all read a note through
:func:`parse_blocks`, so they agree on where a code block starts and ends — CommonMark's rules, as
``markdown-it-py`` implements them: a backtick or tilde fence is closed only by a run of the same character at
least as long, indented code is code, fences work inside list items and block quotes, an unclosed fence runs to
the end of its container. GFM tables and YAML front matter are read too.

Lines are memdeck's lines: the text split at ``\\n`` only (U+2028/U+2029 and a lone ``\\r`` stay inside their
line), numbered from 0. Every block carries its exact line range from markdown-it's token maps.

Only the block structure is parsed (no inline pass: emphasis, links and code spans are not needed here).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from markdown_it import MarkdownIt

# Block kinds.
HEADING = "heading"
PARAGRAPH = "paragraph"
FENCE = "fence"
"""A fenced code block (backticks or tildes)."""
CODE = "code"
"""An indented code block."""
LIST = "list"
ITEM = "item"
QUOTE = "quote"
TABLE = "table"
HTML = "html"
RULE = "rule"
FRONT_MATTER = "front_matter"
"""YAML front matter: a first line ``---`` closed by ``---`` or ``...`` within :data:`FRONT_MATTER_MAX_LINES`."""

CONTAINERS = frozenset({LIST, ITEM, QUOTE})
LITERALS = frozenset({FENCE, CODE, FRONT_MATTER})
"""Blocks whose lines are taken literally, not as Markdown: never split, never statements, drawn as code."""


class LineRole(StrEnum):
    """Which part of which leaf block a line is (:attr:`Blocks.roles`)."""

    NONE = ""
    """A blank line, a link reference definition, or a line past the parser's nesting limit."""
    TEXT = "text"
    """A paragraph's line."""
    HEADING = "heading"
    """An ATX heading (``## …``) or a setext heading's text line."""
    UNDERLINE = "heading.underline"
    """The ``===``/``---`` line under a setext heading."""
    FENCE_OPEN = "fence.open"
    FENCE_CLOSE = "fence.close"
    CODE = "code"
    """A line of a fenced block between its fences, or of an indented code block."""
    FRONT_MATTER = "front_matter"
    TABLE = "table"
    HTML = "html"
    RULE = "rule"


LITERAL_ROLES = frozenset({LineRole.FENCE_OPEN, LineRole.FENCE_CLOSE, LineRole.CODE, LineRole.FRONT_MATTER})
"""The roles of lines inside :data:`LITERALS`."""

FRONT_MATTER_MAX_LINES = 200
MAX_NESTING = 100
"""markdown-it stops building blocks past this depth of nested containers (the lines past it get
:attr:`LineRole.NONE`)."""


@dataclass(frozen=True, slots=True)
class Block:
    """One block of a note.

    Attributes:
        kind: :data:`HEADING`, :data:`PARAGRAPH`, :data:`FENCE`, :data:`CODE`, :data:`LIST`, :data:`ITEM`,
            :data:`QUOTE`, :data:`TABLE`, :data:`HTML`, :data:`RULE` or :data:`FRONT_MATTER`.
        start: its first line (0-based).
        end: the line after its last (exclusive, as markdown-it's ``token.map``); a list's or an item's range
            takes in the blank lines after it.
        depth: how many list items and block quotes hold it (0: top level).
        level: a heading's level (1–6); 0 otherwise.
        text: a heading's text (without its ``#`` marks or underline); a fence's info string.
        marker: a heading's ``#…`` run or setext underline character; a fence's opening run; a list's or an
            item's bullet (``-``, ``*``, ``+``, ``.``, ``)``).
        closed: a fence found its closing fence (else it runs to the end of its container).
    """

    kind: str
    start: int
    end: int
    depth: int
    level: int = 0
    text: str = ""
    marker: str = ""
    closed: bool = True

    @property
    def last(self) -> int:
        """Its last line (0-based, inclusive)."""
        return self.end - 1

    @property
    def setext(self) -> bool:
        """A heading written as text over a ``===``/``---`` line."""
        return self.kind == HEADING and not self.marker.startswith("#")


@dataclass(frozen=True, slots=True)
class Blocks:
    """A note parsed once: its blocks in document order (a container before what it holds) and each line's role.

    Attributes:
        blocks: every block.
        roles: one :class:`LineRole` per line, for ``len(text.split("\\n"))`` lines.
        items: the lines a list item starts on.
        quoted: the lines inside a block quote.
    """

    blocks: tuple[Block, ...]
    roles: tuple[LineRole, ...]
    items: frozenset[int]
    quoted: frozenset[int]

    def leaves(self, *kinds: str) -> list[Block]:
        """The blocks of the given kinds (all leaves — not lists, items, quotes — when none is given)."""
        wanted = frozenset(kinds) if kinds else None
        return [b for b in self.blocks if (b.kind in wanted if wanted is not None else b.kind not in CONTAINERS)]


@functools.cache
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"maxNesting": MAX_NESTING}).enable("table")
    md.disable(["inline", "text_join"])  # block structure only; inline content stays as raw text
    md.parse("")  # compile the rule chains once, before any thread shares the parser
    return md


def front_matter_end(lines: Sequence[str]) -> int | None:
    """The closing line (0-based) of YAML front matter opening the note, or None when it has none.

    The first line is ``---``; the first ``---`` or ``...`` within :data:`FRONT_MATTER_MAX_LINES` lines closes it
    (markdown-it itself would read the block as a rule and a setext heading).
    """
    if not lines or lines[0].strip() != "---":
        return None
    for j in range(1, min(len(lines), FRONT_MATTER_MAX_LINES)):
        if lines[j].strip() in ("---", "..."):
            return j
    return None


_SPACES = re.compile(r"\s+")


def parse_blocks(text: str) -> Blocks:
    """Parse a note's block structure (see the module's notes).

    Args:
        text: the note's text; lines are split at ``\\n`` only.

    Returns:
        The blocks and line roles; ``roles`` has one entry per ``text.split("\\n")`` line.
    """
    return _parse(text, front_matter=True)


def _parse(text: str, *, front_matter: bool) -> Blocks:
    if "\r" in text:
        text = text.replace("\r", " ")  # markdown-it breaks lines at a lone \r; memdeck's lines do not
    lines = text.split("\n")
    roles = [LineRole.NONE] * len(lines)
    blocks: list[Block] = []
    fm_end = front_matter_end(lines) if front_matter else None
    if fm_end is not None:
        blocks.append(Block(FRONT_MATTER, 0, fm_end + 1, 0))
        roles[: fm_end + 1] = [LineRole.FRONT_MATTER] * (fm_end + 1)
        text = "\n" * (fm_end + 1) + "\n".join(lines[fm_end + 1 :])  # blank lines keep the numbering
    if not text.endswith("\n"):
        text += "\n"  # every fence content line then ends in \n: how a fence's closing line is told (below)
    tokens = _parser().parse(text)
    items: set[int] = set()
    quoted: set[int] = set()
    depth = 0
    skip_table = 0
    for index, tok in enumerate(tokens):
        kind = tok.type
        if skip_table:
            if kind == "table_close":
                skip_table -= 1
            elif kind == "table_open":
                skip_table += 1
            continue
        if tok.nesting == -1:
            if kind in ("list_item_close", "blockquote_close"):
                depth -= 1
            continue
        mapped = tok.map
        if mapped is None:
            continue
        start, end = mapped
        if kind == "paragraph_open":
            blocks.append(Block(PARAGRAPH, start, end, depth))
            roles[start:end] = [LineRole.TEXT] * (end - start)
        elif kind == "heading_open":
            inline = tokens[index + 1] if index + 1 < len(tokens) else None
            title = _SPACES.sub(" ", inline.content).strip() if inline is not None else ""
            blocks.append(Block(HEADING, start, end, depth, int(tok.tag[1:]), title, tok.markup))
            roles[start:end] = [LineRole.HEADING] * (end - start)
            if not tok.markup.startswith("#"):
                roles[end - 1] = LineRole.UNDERLINE
        elif kind == "fence":
            closed = end - start >= 2 and tok.content.count("\n") == end - start - 2
            blocks.append(Block(FENCE, start, end, depth, 0, tok.info.strip(), tok.markup, closed))
            roles[start:end] = [LineRole.CODE] * (end - start)
            roles[start] = LineRole.FENCE_OPEN
            if closed:
                roles[end - 1] = LineRole.FENCE_CLOSE
        elif kind == "code_block":
            blocks.append(Block(CODE, start, end, depth))
            roles[start:end] = [LineRole.CODE] * (end - start)
        elif kind == "html_block":
            blocks.append(Block(HTML, start, end, depth))
            roles[start:end] = [LineRole.HTML] * (end - start)
        elif kind == "hr":
            blocks.append(Block(RULE, start, end, depth, marker=tok.markup))
            roles[start:end] = [LineRole.RULE] * (end - start)
        elif kind == "table_open":
            blocks.append(Block(TABLE, start, end, depth))
            roles[start:end] = [LineRole.TABLE] * (end - start)
            skip_table = 1
        elif kind in ("bullet_list_open", "ordered_list_open"):
            blocks.append(Block(LIST, start, end, depth, marker=tok.markup))
        elif kind == "list_item_open":
            blocks.append(Block(ITEM, start, end, depth, marker=tok.markup))
            items.add(start)
            depth += 1
        elif kind == "blockquote_open":
            blocks.append(Block(QUOTE, start, end, depth, marker=">"))
            quoted.update(range(start, end))
            depth += 1
    return Blocks(tuple(blocks), tuple(roles), frozenset(items), frozenset(quoted))


def _top_starts(blocks: Blocks) -> list[int]:
    """The lines a top-level block starts on (where the parser holds nothing open), in order."""
    return sorted({b.start for b in blocks.blocks if b.depth == 0 and b.kind != ITEM})


def _shifted(blocks: Blocks, lo: int, hi: int, by: int) -> tuple[list[Block], list[LineRole], set[int], set[int]]:
    """The part of ``blocks`` on lines ``lo``..``hi`` (exclusive; blocks by their start), moved ``by`` lines."""
    kept = [replace(b, start=b.start + by, end=b.end + by) if by else b
            for b in blocks.blocks if lo <= b.start < hi]
    return (kept, list(blocks.roles[lo:hi]), {n + by for n in blocks.items if lo <= n < hi},
            {n + by for n in blocks.quoted if lo <= n < hi})


class Reparser:
    """Parses one note again and again as it is edited, re-reading only the blocks around what changed.

    Each :meth:`parse` gives exactly what :func:`parse_blocks` gives for the same lines. It keeps the last lines
    and blocks; for new lines it restarts at the last top-level block that begins two lines or more before the
    first changed line (the blocks before it decided their ends on unchanged lines: markdown-it looks at most one
    line past where a block ends), parses a window past the change, and, when the window starts a top-level block
    on a line of the unchanged tail that also started one before, takes the old blocks from there on (the parser
    is in the same state on the same lines). When no such line comes, it parses to the end.
    """

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._blocks: Blocks | None = None

    def parse(self, lines: Sequence[str]) -> Blocks:
        """The block model of ``lines`` (one note's lines, none holding ``\\n``)."""
        new = list(lines) or [""]  # no lines and one empty line are the same text
        old, previous = self._lines, self._blocks
        self._lines = new
        if previous is None:
            self._blocks = parse_blocks("\n".join(new))
            return self._blocks
        if new == old:
            return previous
        self._blocks = _reparse(old, previous, new)
        return self._blocks


_SYNC_TRIES = (0, 64, 1024)
"""How far past a change (in lines) the re-parse looks for a line to rejoin the old blocks at, try by try."""


def _reparse(old: list[str], previous: Blocks, new: list[str]) -> Blocks:
    limit = min(len(old), len(new))
    first = 0
    while first < limit and old[first] == new[first]:
        first += 1
    tail = 0
    while tail < limit - first and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    starts = _top_starts(previous)
    restart = 0
    if not (new and new[0].strip() == "---" and first < FRONT_MATTER_MAX_LINES):  # front matter may come or go
        for start in starts:
            if start <= first - 2:
                restart = start
            else:
                break
    delta = len(new) - len(old)
    tail_old = len(old) - tail  # the old tail's first line
    for ahead in _SYNC_TRIES:
        sync_old = next((s for s in starts if s >= tail_old + ahead and s > restart), None)
        if sync_old is None:
            break
        sync_new = sync_old + delta
        if sync_new <= restart:
            continue
        window_end = min(len(new), sync_new + 2)  # a block's end can hang on the next line (a table's delimiter)
        if restart == 0 and new and new[0].strip() == "---":
            window_end = max(window_end, min(len(new), FRONT_MATTER_MAX_LINES + 2))  # front matter decided whole
        window = _parse("\n".join(new[restart:window_end]), front_matter=restart == 0)
        if sync_new - restart not in _top_starts(window):
            continue
        head = _shifted(previous, 0, restart, 0)
        middle = _shifted(window, 0, sync_new - restart, restart)
        rest = _shifted(previous, sync_old, len(old), delta)
        return _joined(head, middle, rest)
    head = _shifted(previous, 0, restart, 0)
    window = _parse("\n".join(new[restart:]), front_matter=restart == 0)
    return _joined(head, _shifted(window, 0, len(new) - restart, restart))


def _joined(*parts: tuple[list[Block], list[LineRole], set[int], set[int]]) -> Blocks:
    blocks: list[Block] = []
    roles: list[LineRole] = []
    items: set[int] = set()
    quoted: set[int] = set()
    for part_blocks, part_roles, part_items, part_quoted in parts:
        blocks.extend(part_blocks)
        roles.extend(part_roles)
        items |= part_items
        quoted |= part_quoted
    return Blocks(tuple(blocks), tuple(roles), frozenset(items), frozenset(quoted))
