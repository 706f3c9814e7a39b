"""The one Markdown block model: what is code, a heading, a list item, a quote, a table … in a note, by line.

The chunker (:mod:`engine.index.chunking`), the review's statements (:mod:`engine.review.statements`) and the
editor's highlighter (``tui/widgets/markdown_area.py``) all read a note through :func:`parse`, so they agree on
where a code block starts and ends — CommonMark's rules, as ``markdown-it-py`` implements them (fences of ``````
or ``~~~`` closed only by a run of the same character at least as long, indented code, fences inside list items
and block quotes, an unclosed fence running to the end of its container), plus GFM tables and YAML front matter.

Lines are memdeck's lines: the text split at ``\\n`` only (U+2028/U+2029 and a lone ``\\r`` stay inside their
line), numbered from 0. Every block carries its exact line range from markdown-it's token maps.

Only the block structure is parsed (no inline pass: emphasis, links and code spans are not needed here), which
keeps a parse at several MB/s.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from markdown_it import MarkdownIt

# Block kinds.
HEADING = "heading"
PARAGRAPH = "paragraph"
FENCE = "fence"
"""A fenced code block (````` or ``~~~``)."""
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

# Line roles (:attr:`Blocks.roles`): which part of which leaf block a line is.
R_NONE = ""
"""A blank line, a link reference definition, or a line past the parser's nesting limit."""
R_TEXT = "text"
R_HEADING = "heading"
R_UNDERLINE = "heading.underline"
"""The ``===``/``---`` line under a setext heading."""
R_FENCE_OPEN = "fence.open"
R_FENCE_CLOSE = "fence.close"
R_CODE = "code"
"""A line of a fenced block between its fences, or of an indented code block."""
R_FRONT_MATTER = "front_matter"
R_TABLE = "table"
R_HTML = "html"
R_RULE = "rule"

LITERAL_ROLES = frozenset({R_FENCE_OPEN, R_FENCE_CLOSE, R_CODE, R_FRONT_MATTER})
"""The roles of lines inside :data:`LITERALS`."""

FRONT_MATTER_MAX_LINES = 200
MAX_NESTING = 100
"""markdown-it stops building blocks past this depth of nested containers; the lines past it get :data:`R_NONE`."""


@dataclass(frozen=True, slots=True)
class Block:
    """One block of a note.

    Attributes:
        kind: :data:`HEADING`, :data:`PARAGRAPH`, :data:`FENCE`, :data:`CODE`, :data:`LIST`, :data:`ITEM`,
            :data:`QUOTE`, :data:`TABLE`, :data:`HTML`, :data:`RULE` or :data:`FRONT_MATTER`.
        start: its first line (0-based).
        end: the line after its last (exclusive, as markdown-it's ``token.map``).
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
        roles: one role per line (``R_*``), for ``len(text.split("\\n"))`` lines.
        items: the lines a list item starts on.
        quoted: the lines inside a block quote.
    """

    blocks: tuple[Block, ...]
    roles: tuple[str, ...]
    items: frozenset[int]
    quoted: frozenset[int]

    def leaves(self, *kinds: str) -> list[Block]:
        """The blocks of the given kinds (all leaves — not lists, items, quotes — when none is given)."""
        wanted = frozenset(kinds) if kinds else None
        return [b for b in self.blocks if (b.kind in wanted if wanted is not None else b.kind not in CONTAINERS)]

    def literal(self, line: int) -> bool:
        """Whether the line is code, a fence or front matter (taken literally, not as Markdown)."""
        return self.roles[line] in LITERAL_ROLES


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


def parse(text: str) -> Blocks:
    """Parse a note's block structure (see the module's notes).

    Args:
        text: the note's text; lines are split at ``\\n`` only.

    Returns:
        The blocks and line roles; ``roles`` has one entry per ``text.split("\\n")`` line.
    """
    if "\r" in text:
        text = text.replace("\r", " ")  # markdown-it breaks lines at a lone \r; memdeck's lines do not
    lines = text.split("\n")
    roles = [R_NONE] * len(lines)
    blocks: list[Block] = []
    fm_end = front_matter_end(lines)
    if fm_end is not None:
        blocks.append(Block(FRONT_MATTER, 0, fm_end + 1, 0))
        roles[: fm_end + 1] = [R_FRONT_MATTER] * (fm_end + 1)
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
            roles[start:end] = [R_TEXT] * (end - start)
        elif kind == "heading_open":
            inline = tokens[index + 1] if index + 1 < len(tokens) else None
            title = _SPACES.sub(" ", inline.content).strip() if inline is not None else ""
            blocks.append(Block(HEADING, start, end, depth, int(tok.tag[1:]), title, tok.markup))
            roles[start:end] = [R_HEADING] * (end - start)
            if not tok.markup.startswith("#"):
                roles[end - 1] = R_UNDERLINE
        elif kind == "fence":
            closed = end - start >= 2 and tok.content.count("\n") == end - start - 2
            blocks.append(Block(FENCE, start, end, depth, 0, tok.info.strip(), tok.markup, closed))
            roles[start:end] = [R_CODE] * (end - start)
            roles[start] = R_FENCE_OPEN
            if closed:
                roles[end - 1] = R_FENCE_CLOSE
        elif kind == "code_block":
            blocks.append(Block(CODE, start, end, depth))
            roles[start:end] = [R_CODE] * (end - start)
        elif kind == "html_block":
            blocks.append(Block(HTML, start, end, depth))
            roles[start:end] = [R_HTML] * (end - start)
        elif kind == "hr":
            blocks.append(Block(RULE, start, end, depth, marker=tok.markup))
            roles[start:end] = [R_RULE] * (end - start)
        elif kind == "table_open":
            blocks.append(Block(TABLE, start, end, depth))
            roles[start:end] = [R_TABLE] * (end - start)
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
