"""One Markdown block model (engine.markdown) read by the chunker, the review's statements and the editor's
highlighter: one table of cases, checked against all three, so they agree on what is code."""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from engine.index.chunking import chunk_markdown
from engine.markdown import (
    FENCE,
    FRONT_MATTER,
    HEADING,
    HTML,
    ITEM,
    LIST,
    PARAGRAPH,
    QUOTE,
    RULE,
    TABLE,
    LineRole,
    Reparser,
    parse_blocks,
)
from engine.review.statements import parse_statements
from tui.widgets.markdown_area import highlight_document

# A text line too long to share a chunk with anything else at the smallest budget (16 tokens = 64 chars).
WIDE = "Plain words that fill a chunk on their own at the least budget"
assert 55 < len(WIDE) < 64


@dataclass(frozen=True)
class Case:
    """A note, which of its lines (0-based) are fence lines and code lines, and which lines are plain text that
    must stay text (each a statement, never drawn as code)."""

    name: str
    lines: tuple[str, ...]
    fences: frozenset[int] = frozenset()
    code: frozenset[int] = frozenset()
    text: frozenset[int] = frozenset()

    @property
    def span(self) -> tuple[int, int] | None:
        rows = self.fences | self.code
        return (min(rows), max(rows)) if rows else None


def _case(name: str, lines: list[str], fences: set[int], code: set[int], text: set[int]) -> Case:
    return Case(name, tuple(lines), frozenset(fences), frozenset(code), frozenset(text))


# Inside each block: at least 16 characters, then a line a regex reads as a heading, a bullet or a fence — where a
# lexer that missed the block would start a statement, a new chunk or a code block.
CASES = [
    _case("a ```` fence holding a ``` line",
          [WIDE, "````md", "```", "# not a heading", "- not a bullet", "```", "````", WIDE],
          {1, 6}, {2, 3, 4, 5}, {0, 7}),
    _case("a ~~~ fence holding a ``` line",
          [WIDE, "~~~", "some = 1 + 2", "```", "# not a heading", "~~~", WIDE],
          {1, 5}, {2, 3, 4}, {0, 6}),
    _case("indented code",
          [WIDE, "", "    some = 1 + 2", "", "    - not a bullet", "", WIDE],
          set(), {2, 3, 4}, {0, 6}),
    _case("an unclosed fence runs to the end of the file",
          [WIDE, "```", "some = 1 + 2", "", "- not a bullet", "# not a heading"],
          {1}, {2, 3, 4, 5}, {0}),
    _case("a fence opened on a list item's line",
          ["- " + WIDE, "- ```sh", "  some = 1 + 2", "  # not a heading", "  ```", "- " + WIDE],
          {1, 4}, {2, 3}, {0, 5}),
    _case("a fence indented inside a list item",
          ["- " + WIDE, "", "  ```", "  some = 1 + 2", "  # not a heading", "  ```", "", "- " + WIDE],
          {2, 5}, {3, 4}, {0, 7}),
    _case("a fence inside a block quote",
          ["> " + WIDE, "> ```", "> some = 1 + 2", "> - not a bullet", "> ```", "", WIDE],
          {1, 4}, {2, 3}, {0, 6}),
    _case("a fence in a quote ends with the quote",
          ["> ```", "> some = 1 + 2", "", WIDE, "- " + WIDE],
          {0}, {1}, {3, 4}),
    _case("a ``` line inside an HTML comment is no fence",
          [WIDE, "", "<!--", "```", "-->", "", WIDE, "- " + WIDE],
          set(), set(), {0, 6, 7}),
    _case("a ``` run with a backtick in its info string is no fence",
          ["```js `x`", WIDE, "", "- " + WIDE],
          set(), set(), {1, 3}),
    _case("a ``` line indented four spaces continues a paragraph",
          [WIDE, "    ```", "", "- " + WIDE],
          set(), set(), {3}),
    _case("a closing fence shorter than the opening one does not close it",
          [WIDE, "`````", "some = 1 + 2", "````", "# not a heading", "`````", WIDE],
          {1, 5}, {2, 3, 4}, {0, 6}),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_model_reads_the_code(case: Case) -> None:
    roles = parse_blocks("\n".join(case.lines)).roles
    for row, line in enumerate(case.lines):
        if row in case.fences:
            assert roles[row] in (LineRole.FENCE_OPEN, LineRole.FENCE_CLOSE), (row, line)
        elif row in case.code:
            assert roles[row] == LineRole.CODE, (row, line)
        else:
            assert roles[row] not in (LineRole.CODE, LineRole.FENCE_OPEN, LineRole.FENCE_CLOSE), (row, line)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_review_statements_skip_the_code(case: Case) -> None:
    statements = parse_statements("memory/2026-11-02.md", "\n".join(case.lines))
    covered = {row for s in statements for row in range(s.start_line - 1, s.end_line)}
    assert not covered & (case.fences | case.code), [s.text for s in statements]
    assert case.text <= covered, [s.text for s in statements]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_highlighter_draws_the_code(case: Case) -> None:
    out = highlight_document(list(case.lines), {})
    for row in case.code:
        assert out.get(row) == [(0, None, "code_block")], (row, case.lines[row])
    for row in case.fences:
        assert out[row][0][:1] == (0,) and out[row][0][2] == "heading.marker", (row, out.get(row))
    for row in case.text:
        assert all(name != "code_block" for _, _, name in out.get(row, [])), (row, out.get(row))


@pytest.mark.parametrize("case", [c for c in CASES if c.span is not None], ids=lambda c: c.name)
def test_the_chunker_keeps_the_code_whole(case: Case) -> None:
    assert case.span is not None
    first, last = case.span[0] + 1, case.span[1] + 1  # 1-based, as chunks count
    chunks = chunk_markdown("\n".join(case.lines), tokens=16, overlap=0)
    assert any(c.start_line <= first and last <= c.end_line for c in chunks), [(c.start_line, c.end_line)
                                                                               for c in chunks]
    assert not any(first < c.start_line <= last for c in chunks), [(c.start_line, c.end_line) for c in chunks]
    for row in case.text:  # and plain text is no part of the code's chunk
        assert not any(c.start_line <= first and last <= c.end_line and c.start_line <= row + 1 <= c.end_line
                       for c in chunks), row


def test_blocks_carry_exact_line_maps() -> None:
    text = "\n".join([
        "---", "title: x", "---",           # 0-2 front matter
        "# Top #",                          # 3
        "",
        "- one",                            # 5
        "  1. nested",                      # 6
        "",
        "> quoted",                         # 8
        "lazy",                             # 9
        "",
        "| a | b |", "|---|---|", "| 1 | 2 |",  # 11-13
        "",
        "Setext",                           # 15
        "------",                           # 16
        "***",                              # 17
        "<div>", "x", "</div>",             # 18-20
        "",
        "~~~ py extra",                     # 22
        "x",
    ])
    blocks = parse_blocks(text)
    got = [(b.kind, b.start, b.end, b.depth) for b in blocks.blocks]
    assert got == [
        (FRONT_MATTER, 0, 3, 0),
        (HEADING, 3, 4, 0),
        (LIST, 5, 8, 0), (ITEM, 5, 8, 0), (PARAGRAPH, 5, 6, 1), (LIST, 6, 8, 1), (ITEM, 6, 8, 1),  # with the blank after
        (PARAGRAPH, 6, 7, 2),
        (QUOTE, 8, 10, 0), (PARAGRAPH, 8, 10, 1),
        (TABLE, 11, 14, 0),
        (HEADING, 15, 17, 0),
        (RULE, 17, 18, 0),
        (HTML, 18, 21, 0),
        (FENCE, 22, 24, 0),
    ]
    heading, setext, fence = blocks.blocks[1], blocks.blocks[11], blocks.blocks[-1]
    assert (heading.level, heading.text, heading.setext) == (1, "Top", False)
    assert (setext.level, setext.text, setext.setext) == (2, "Setext", True)
    assert (fence.text, fence.marker, fence.closed) == ("py extra", "~~~", False)
    assert blocks.items == {5, 6}
    assert blocks.quoted == {8, 9}
    assert blocks.roles[16] == LineRole.UNDERLINE and blocks.roles[1] == LineRole.FRONT_MATTER


def test_lines_are_memdecks_lines() -> None:
    # A lone \r and U+2028 stay inside their line (markdown-it alone would break at the \r): roles stay aligned.
    text = "a\rb\n```\ncode\u2028more\n```\nafter\n"
    blocks = parse_blocks(text)
    assert len(blocks.roles) == len(text.split("\n"))
    assert blocks.roles[:5] == (LineRole.TEXT, LineRole.FENCE_OPEN, LineRole.CODE, LineRole.FENCE_CLOSE,
                                LineRole.TEXT)
    closed = parse_blocks("```\nx\n```").blocks[0]
    assert closed.closed and (closed.start, closed.end) == (0, 3)


def test_deep_nesting_does_not_fail() -> None:
    text = "\n".join(">" * n + " line" for n in range(1, 300)) + "\n```\ncode\n```"
    blocks = parse_blocks(text)  # past the nesting limit markdown-it gives up on the rest; no error
    assert len(blocks.roles) == len(text.split("\n"))


_VOCABULARY = ("```", "````", "~~~", "```py", "- item", "  - nested", "* star", "1. one", "2) two", "> quote",
               "> ```", ">", "", "", "", "    code", "        deeper", "# h", "## h2 ##", "text", "more text", "---",
               "===", "***", "| a | b |", "|---|---|", "a | b", "<!--", "-->", "<div>", "</div>", "[ref]: /url",
               "  ```", "   ~~~~", "- ```", "  text in item", "\tcode tab", "...", "<!-- x -->", "- [ ] task", "lazy")


@pytest.mark.parametrize("seed", range(4))
def test_the_reparser_gives_what_a_whole_parse_gives(seed: int) -> None:
    # The editor re-reads only the blocks around an edit: after any edit it must agree with a parse from scratch.
    rng = random.Random(seed)
    for _ in range(150):
        lines = [rng.choice(_VOCABULARY) for _ in range(rng.randint(0, 80))]
        reparser = Reparser()
        reparser.parse(lines)
        for _ in range(8):
            lines = list(lines)
            at = rng.randint(0, len(lines))
            op = rng.random()
            if op < 0.4 and lines:
                lines[min(at, len(lines) - 1)] = rng.choice(_VOCABULARY)
            elif op < 0.7:
                lines[at:at] = [rng.choice(_VOCABULARY) for _ in range(rng.randint(1, 3))]
            else:
                del lines[at:at + rng.randint(1, 3)]
            assert reparser.parse(lines) == parse_blocks("\n".join(lines)), lines


def test_the_reparser_rereads_only_around_the_edit(monkeypatch: pytest.MonkeyPatch) -> None:
    import engine.markdown as md

    parsed: list[int] = []
    real = md._parse

    def counting(text: str, *, front_matter: bool) -> md.Blocks:
        parsed.append(text.count("\n") + 1)
        return real(text, front_matter=front_matter)

    monkeypatch.setattr(md, "_parse", counting)
    lines = [f"## Day {n}\n\n- did thing {n}\n- and another\n\n```sh\nls {n}\n```\n" for n in range(500)]
    note = "\n".join(lines).split("\n")
    reparser = Reparser()
    reparser.parse(note)
    edited = list(note)
    edited[1200] = "- typed here"
    whole = parse_blocks("\n".join(edited))
    parsed.clear()
    assert reparser.parse(edited) == whole
    assert parsed and max(parsed) < 50, parsed  # a few blocks around line 1200, not the 5000-line note
