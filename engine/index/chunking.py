"""Markdown-aware chunking with exact 1-based line ranges, OpenClaw's recall comments taken out of the text (and
their importance kept), and embedding windows that fit the model."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from engine.lexicon import CJK_RE
from engine.markdown import HEADING, ITEM, LITERALS, Blocks, parse_blocks

CHARS_PER_TOKEN = 4
CJK_WEIGHT = 4

_CJK_RE = CJK_RE

# Break scores: how good a place it is to start a new chunk before a line.
BREAK_HEADING = 4
BREAK_BLOCK = 3
BREAK_ITEM = 2
BREAK_LINE = 1


@dataclass(frozen=True)
class Chunk:
    """A piece of a file: its exact 1-based inclusive line range and its text (those lines joined).

    ``importance`` is OpenClaw's recall importance (1–10) of a curated file's chunk, None when it has none.
    ``context`` is a curated entry's heading path (``"Work › Projects"``: the headings above it that its lines do
    not hold), empty for every other chunk; it is not part of ``text`` (the lines), but it is what the entry is
    about: :attr:`indexed_text` is what to index and embed.
    """

    start_line: int
    end_line: int
    text: str
    importance: int | None = None
    context: str = ""

    @property
    def indexed_text(self) -> str:
        """The heading path, then the lines: what a curated entry is searched by (the lines alone otherwise)."""
        return f"{self.context}\n{self.text}" if self.context else self.text


def weighted_len(text: str) -> int:
    """Length in "chars" where a CJK character counts as a whole token (4 chars)."""
    if text.isascii():
        return len(text)
    return len(text) + (CJK_WEIGHT - 1) * len(_CJK_RE.findall(text))


def nfc(text: str) -> str:
    """``text`` in Unicode normal form C: ``c`` + U+030C (as macOS, some keyboards and pasted text write it) is
    ``č``, so the same word always matches.

    What is indexed and what is queried both pass through this (:func:`chunk_document`,
    :func:`engine.search.query.parse_query`). It never adds or removes a line break, so line numbers stay the
    file's; only the characters within a line can change. ASCII and NFC text come back as they are.
    """
    if text.isascii() or unicodedata.is_normalized("NFC", text):
        return text
    return unicodedata.normalize("NFC", text)


def has_cjk(text: str) -> bool:
    """Whether the text holds any Chinese, Japanese or Korean character."""
    return not text.isascii() and _CJK_RE.search(text) is not None


@dataclass
class _Unit:
    start: int  # 0-based line index, inclusive
    end: int  # 0-based, inclusive
    size: int
    score: int  # break score for starting a chunk at this unit
    fence: bool = False


def _units(lines: Sequence[str], budget: int, blocks: Blocks) -> list[_Unit]:
    sizes = [weighted_len(line) + 1 for line in lines]
    # A literal block (fenced or indented code, front matter) is one unit; so is a heading (a setext one has two
    # lines or more). Section breaks are the top-level headings: a "#" line in a quote or a list starts no section.
    spans: dict[int, tuple[int, bool]] = {}
    headings: set[int] = set()
    for block in blocks.blocks:
        if block.kind in LITERALS:
            spans[block.start] = (block.last, True)
        elif block.kind == HEADING:
            spans[block.start] = (block.last, False)
            if block.depth == 0:
                headings.add(block.start)
    items = blocks.items
    units: list[_Unit] = []
    i = 0
    while i < len(lines):
        end, kind_fence = spans.get(i, (i, False))
        end = min(end, len(lines) - 1)
        size = sum(sizes[i : end + 1])
        prev_blank = i > 0 and not lines[i - 1].strip()
        prev_fence = bool(units) and units[-1].fence
        if i in headings:
            score = BREAK_HEADING
        elif prev_blank or prev_fence or kind_fence:
            score = BREAK_BLOCK
        elif i in items:
            score = BREAK_ITEM
        else:
            score = BREAK_LINE
        if end > i and size > budget:
            # A block larger than a whole chunk cannot stay whole: its lines become units.
            for j in range(i, end + 1):
                units.append(_Unit(j, j, sizes[j], score if j == i else BREAK_LINE))
        else:
            units.append(_Unit(i, end, size, score, kind_fence))
        i = end + 1
    return units


def _split_long_line(line: str, line_no: int, budget: int) -> list[Chunk]:
    pieces: list[Chunk] = []
    start = 0
    n = len(line)
    while start < n:
        # Take as many characters as fit the weighted budget.
        end = min(n, start + budget)
        while end > start + 1 and weighted_len(line[start:end]) > budget:
            end = start + max(1, (end - start) * 3 // 4)
        piece = line[start:end]
        if pieces and not piece.strip():
            # Blank space alone is no chunk: it joins the piece before (pieces still rejoin to the line).
            pieces[-1] = Chunk(line_no, line_no, pieces[-1].text + piece)
        else:
            pieces.append(Chunk(line_no, line_no, piece))
        start = end
    if len(pieces) > 1 and not pieces[0].text.strip():
        pieces[1] = Chunk(line_no, line_no, pieces[0].text + pieces[1].text)
        pieces.pop(0)
    return pieces


def chunk_markdown(text: str, tokens: int = 400, overlap: int = 80, *, blocks: Blocks | None = None) -> list[Chunk]:
    """Split Markdown into chunks of about ``tokens`` tokens with about ``overlap`` tokens of whole-line overlap.

    The blocks are :mod:`engine.markdown`'s (CommonMark): breaks prefer top-level headings, then blank lines and
    block edges, then list items; a code block (fenced or indented, also inside a list item or a quote) or YAML
    front matter is never split unless it alone exceeds the budget; a heading starts its section's chunk (no
    overlap carried across it). A line longer than the budget is hard-split into pieces that share its line
    number. Every non-blank line lands in at least one chunk; a chunk's text is exactly its lines.

    Args:
        text: the file's text (``\\n`` line endings).
        tokens: target chunk size in tokens (x4 chars; CJK characters weigh 4).
        overlap: overlap in tokens carried from the end of a chunk into the next.
        blocks: ``engine.markdown.parse_blocks(text)`` when the caller has it already (else it is parsed here).

    Returns:
        The chunks in file order.
    """
    budget = max(16, tokens) * CHARS_PER_TOKEN
    overlap_budget = max(0, min(overlap, tokens - 1)) * CHARS_PER_TOKEN
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    if not lines:
        return []
    units = _units(lines, budget, blocks if blocks is not None else parse_blocks(text))
    chunks: list[Chunk] = []

    def emit(first: int, last: int) -> None:
        a, b = units[first].start, units[last].end
        while a <= b and not lines[a].strip():
            a += 1
        while b >= a and not lines[b].strip():
            b -= 1
        if a > b:
            return
        if a == b and weighted_len(lines[a]) > budget:
            chunks.extend(_split_long_line(lines[a], a + 1, budget))
            return
        chunks.append(Chunk(a + 1, b + 1, "\n".join(lines[a : b + 1])))

    s = 0
    n = len(units)
    heading_min = budget // 4
    prev_start = -1
    while s < n:
        size = units[s].size
        e = s
        cut: int | None = None  # the unit that starts the next chunk
        while e + 1 < n:
            nxt = units[e + 1]
            if nxt.score >= BREAK_HEADING and size >= heading_min:
                cut = e + 1
                break
            if size + nxt.size > budget:
                break
            size += nxt.size
            e += 1
        if cut is None:
            if e + 1 >= n:
                # The file's last chunk: fill it back to full size with earlier lines, so a short tail
                # (mostly overlap) does not win BM25 on length alone and holds its context.
                if prev_start >= 0 and units[s].score < BREAK_HEADING:
                    while s - 1 > prev_start and units[s].score < BREAK_HEADING and size + units[s - 1].size <= budget:
                        s -= 1
                        size += units[s].size
                emit(s, e)
                break
            # Over budget: pick the best break in the second half of what fits.
            best, best_key = e + 1, (units[e + 1].score, e + 1)
            running = 0
            for b in range(s + 1, e + 2):
                running += units[b - 1].size
                if running * 2 < size:
                    continue
                key = (units[b].score, b)
                if key > best_key:
                    best, best_key = b, key
            cut = best
        emit(s, cut - 1)
        prev_start = s
        if units[cut].score >= BREAK_HEADING or overlap_budget == 0:
            s = cut
            continue
        # Carry whole trailing units (up to the overlap budget) into the next chunk.
        start = cut
        carried = 0
        while start - 1 > s and carried + units[start - 1].size <= overlap_budget:
            if units[start - 1].score >= BREAK_HEADING:
                break
            start -= 1
            carried += units[start].size
        while start < cut and not lines[units[start].start].strip():
            start += 1
        s = start
    return chunks



CONTEXT_SEPARATOR = " › "


def _heading_title(line: str) -> str:
    return line.strip().lstrip("#").strip().rstrip("#").strip()


def chunk_curated(text: str, tokens: int = 400, overlap: int = 80, *, blocks: Blocks | None = None) -> list[Chunk]:
    """Split a curated file (``MEMORY.md``, ``USER.md``) per entry, as OpenClaw 2026.9.6 does: each top-level
    list item (with its continuation lines and sub-items) is a chunk, and so is each section's prose (a heading
    and the lines before its first item); a heading with nothing but blank lines before the next heading or
    item joins the chunk that follows it (OpenClaw makes it a chunk of its own, which matches its own words
    and nothing else). Each chunk carries its heading path (:attr:`Chunk.context`); its line range and text
    are exactly its lines.

    A fact is one line of such a file: in a chunk of its own it is not outweighed by a dozen neighbours (a
    14-line chunk's BM25 and vector blur it), and OpenClaw's importance weighs exactly its entry. An entry
    larger than the budget is cut as :func:`chunk_markdown` cuts (the pieces share its context). The lines
    before the file's first heading or item form a chunk of their own. Code blocks are never entries.

    Args:
        text: the file's text (``\\n`` line endings).
        tokens: the budget of one chunk in tokens (an entry over it is split).
        overlap: overlap in tokens within a split entry.
        blocks: ``engine.markdown.parse_blocks(text)`` when the caller has it already.
    """
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    if not lines:
        return []
    blocks = blocks if blocks is not None else parse_blocks(text)
    budget = max(16, tokens) * CHARS_PER_TOKEN
    headings: dict[int, tuple[int, str]] = {}  # 0-based line → (level, title)
    starts: set[int] = set()
    for block in blocks.blocks:
        if block.depth != 0:
            continue
        if block.kind == HEADING:
            headings[block.start] = (block.level or 1, _heading_title(lines[block.start]) if block.end - block.start
                                     <= 1 else (block.text or lines[block.start]).strip())
            starts.add(block.start)
        elif block.kind == ITEM:
            starts.add(block.start)
    bounds = sorted(starts | {0})
    groups = [(a, (bounds[i + 1] - 1 if i + 1 < len(bounds) else len(lines) - 1)) for i, a in enumerate(bounds)]
    # A heading group with no content (only its heading lines and blanks) joins the next group.
    merged: list[tuple[int, int]] = []
    pending: int | None = None
    for a, b in groups:
        first = a if pending is None else pending
        body = [n for n in range(a, b + 1) if lines[n].strip() and n not in headings and
                not (n - 1 in headings and set(lines[n].strip()) <= set("=-"))]
        if a in headings and not body and (a, b) != groups[-1]:
            pending = first
            continue
        merged.append((first, b))
        pending = None
    # The file's title (a level-1 heading on its first line, "# MEMORY.md — long-term memory") says nothing
    # about any one entry: it is no entry's context.
    first_text = next((n for n, line in enumerate(lines) if line.strip()), None)
    if first_text is not None and headings.get(first_text, (0, ""))[0] == 1:
        headings[first_text] = (1, "")
    chunks: list[Chunk] = []
    path: list[tuple[int, str, int]] = []  # the open headings: (level, title, line)
    heading_lines = sorted(headings)
    h = 0
    for a, b in merged:
        while h < len(heading_lines) and heading_lines[h] <= b:
            level, title = headings[heading_lines[h]]
            path = [p for p in path if p[0] < level] + [(level, title, heading_lines[h])]
            h += 1
        # the headings the chunk holds are its own text, not its context
        context = CONTEXT_SEPARATOR.join(title for _, title, line in path if title and line < a)
        while a <= b and not lines[a].strip():
            a += 1
        while b >= a and not lines[b].strip():
            b -= 1
        if a > b:
            continue
        piece = "\n".join(lines[a : b + 1])
        if weighted_len(piece) + (b - a + 1) <= budget:
            chunks.append(Chunk(a + 1, b + 1, piece, context=context))
        else:
            chunks.extend(replace(c, start_line=c.start_line + a, end_line=c.end_line + a, context=context)
                          for c in chunk_markdown(piece, tokens, overlap))
    return chunks

# ---------------------------------------------------------------------------------------------
# OpenClaw's recall comments

_ANNOTATION = re.compile(
    r"[ \t]*<!--\s*(?:(?:importance|trigger|project)\s*:|openclaw-memory-)[^\n]*?-->", re.IGNORECASE)
"""``<!-- importance: N -->``, ``<!-- trigger: … -->``, ``<!-- project: … -->`` and the markers dreaming writes
(``<!-- openclaw-memory-promotion:… -->``, ``<!-- openclaw-memory-lineage:… -->``): metadata, not memory text.
One line each, closed on that line; any other comment is text and stays."""
_IMPORTANCE = re.compile(r"<!--\s*importance\s*:\s*([+-]?\d+(?:\.\d+)?)\s*-->", re.IGNORECASE)
# OpenClaw's own line rule for a curated entry (it chunks MEMORY.md bullet by bullet by lines, not by CommonMark):
# importance follows OpenClaw, so it keeps OpenClaw's reading rather than engine.markdown's.
_ENTRY_START = re.compile(r"^ {0,3}(?:[-*+]\s|#{1,6}(?:\s|$))")
_ENTRY_HEADING = re.compile(r"^ {0,3}#{1,6}(\s|$)")
IMPORTANCE_MIN = 1
IMPORTANCE_MAX = 10


@dataclass(frozen=True)
class Annotated:
    """A file's text with its recall comments blanked (every line keeps its number) and what they said.

    Attributes:
        text: the text without the comments; a line that held only comments is now empty.
        importance: 0-based line → the importance its comment gave (1–10).
    """

    text: str
    importance: Mapping[int, int]


def clamp_importance(value: float) -> int:
    """An importance as OpenClaw reads it: the whole part, held to 1–10."""
    return max(IMPORTANCE_MIN, min(IMPORTANCE_MAX, int(value // 1)))


def importance_multiplier(importance: int | None) -> float:
    """OpenClaw's recall weight for an importance: ``0.75 + 0.05·N`` (0.8 … 1.25); none is 1.0 (N = 5)."""
    if importance is None:
        return 1.0
    return 0.75 + 0.05 * clamp_importance(importance)


def strip_annotations(text: str) -> Annotated:
    """Blank OpenClaw's recall comments out of a Markdown file's text (see :data:`_ANNOTATION`).

    The comment and the blanks before it go; a line left with nothing but blanks becomes empty, so line
    numbers (and citations) stay exact. A file without ``<!--`` is returned as it is, at no cost.
    """
    if "<!--" not in text:
        return Annotated(text, {})
    lines = text.split("\n")
    importance: dict[int, int] = {}
    for i, line in enumerate(lines):
        if "<!--" not in line:
            continue
        stripped = _ANNOTATION.sub("", line)
        if stripped == line:
            continue
        found = _IMPORTANCE.search(line)
        if found is not None:
            importance[i] = clamp_importance(float(found.group(1)))
        stripped = stripped.rstrip(" \t")
        lines[i] = "" if not stripped.strip() else stripped
    return Annotated("\n".join(lines), importance)


def _entries(lines: Sequence[str], first: int) -> list[list[int]]:
    """The chunk's lines (0-based file numbers) grouped into OpenClaw's curated entries: a ``- `` bullet or a
    heading starts one; lines before the first start form their own."""
    groups: list[list[int]] = []
    for offset, line in enumerate(lines):
        if not groups or _ENTRY_START.match(line):
            groups.append([])
        groups[-1].append(first + offset)
    return groups


def chunk_importance(chunk: Chunk, lines: Sequence[str], importance: Mapping[int, int]) -> int | None:
    """A curated chunk's importance: its entries' weights, the strongest one counting.

    OpenClaw gives each bullet of ``MEMORY.md`` its own chunk, so a comment weighs exactly its bullet; memdeck's
    chunks hold several. An entry without a comment weighs 1.0 (N = 5), a heading alone weighs nothing, and
    the entry that weighs most decides — so one important bullet lifts its chunk, and a low one lowers it only
    when every other entry in it is low as well.

    Args:
        chunk: the chunk (its 1-based line range).
        lines: the file's lines, comments already blanked.
        importance: 0-based line → importance (:attr:`Annotated.importance`).

    Returns:
        The deciding importance, or None when an entry without one decides (or nothing in the chunk counts).
    """
    if not importance:
        return None
    best: tuple[float, int | None] | None = None
    first = chunk.start_line - 1
    for entry in _entries(lines[first : chunk.end_line], first):
        content = [n for n in entry if lines[n].strip() and not _ENTRY_HEADING.match(lines[n])]
        if not content:
            continue
        marks = [importance[n] for n in entry if n in importance]
        value = marks[0] if marks else None
        weight = importance_multiplier(value)
        if best is None or weight > best[0]:
            best = (weight, value)
    return best[1] if best is not None else None


def chunk_document(text: str, tokens: int = 400, overlap: int = 80, *, annotations: bool = True,
                   curated: bool = False) -> list[Chunk]:
    """Chunk a memory file as it is indexed: the text in NFC (:func:`nfc`: what the FTS index, the embedder and
    the snippets read; line numbers unchanged), recall comments blanked out (:func:`strip_annotations`),
    then :func:`chunk_markdown` (a curated file: :func:`chunk_curated`, one entry a chunk); a curated file's
    chunks carry their importance (:func:`chunk_importance`).

    Args:
        text: the file's text.
        tokens: target chunk size in tokens.
        overlap: overlap in tokens.
        annotations: strip OpenClaw's recall comments (Markdown memory; not transcripts).
        curated: the file is ``MEMORY.md``/``USER.md``, where importance comments weigh results.
    """
    text = nfc(text)
    if not annotations:
        return chunk_markdown(text, tokens, overlap)
    annotated = strip_annotations(text)
    # blanking comments keeps every line where it was
    chunker = chunk_curated if curated else chunk_markdown
    chunks = chunker(annotated.text, tokens, overlap)
    if not curated or not annotated.importance:
        return chunks
    lines = annotated.text.split("\n")
    return [replace(c, importance=chunk_importance(c, lines, annotated.importance)) for c in chunks]


@dataclass(frozen=True)
class Window:
    """A piece of a chunk sized for the embedding model: line offsets within the chunk and its text."""

    first: int  # 0-based line offset in the chunk, inclusive
    last: int  # inclusive
    text: str


LINE_MIN_CHARS = 12


def plan_lines(chunk_text: str, min_chars: int = LINE_MIN_CHARS) -> list[tuple[int, str]]:
    """The lines of a chunk that get a vector of their own: (0-based offset in the chunk, stripped text).

    A question usually matches one line — one turn of a conversation, one bullet — and a chunk's vector blurs
    it with its neighbours. Blank and very short lines are left out, and a chunk of one line needs none (its
    window is that line).
    """
    lines = chunk_text.split("\n")
    picked = [(i, line.strip()) for i, line in enumerate(lines) if weighted_len(line.strip()) >= min_chars]
    if len(picked) == 1 and any(line.strip() for i, line in enumerate(lines) if i != picked[0][0]):
        # One line worth a vector beside headings or short lines (a curated entry under its section's heading):
        # the window's vector blends them in, so the line keeps its own.
        return picked
    return picked if len(picked) > 1 else []


def plan_windows(
    chunk_text: str, count_tokens: Callable[[Sequence[str]], list[int]], max_tokens: int, overlap_lines: int = 1
) -> list[Window]:
    """Cover a chunk with windows of whole lines that each fit ``max_tokens`` word-pieces.

    The model silently drops what lies past its limit; windows make sure every line is embedded somewhere.
    A chunk that fits is one window. A single line longer than the limit is cut into pieces that fit.

    Args:
        chunk_text: the chunk's text.
        count_tokens: counts word-pieces for each given text (special tokens excluded).
        max_tokens: the most word-pieces one window may hold.
        overlap_lines: lines repeated between consecutive windows, for context.
    """
    whole = count_tokens([chunk_text])[0]
    if whole <= max_tokens:
        return [Window(0, chunk_text.count("\n"), chunk_text)]
    lines = chunk_text.split("\n")
    counts = count_tokens(lines)
    windows: list[Window] = []
    i = 0
    while i < len(lines):
        if counts[i] > max_tokens:
            windows.extend(_split_line_window(lines[i], i, count_tokens, max_tokens))
            i += 1
            continue
        total = counts[i]
        j = i
        while j + 1 < len(lines) and counts[j + 1] <= max_tokens and total + counts[j + 1] <= max_tokens:
            j += 1
            total += counts[j]
        text = "\n".join(lines[i : j + 1])
        if text.strip():
            windows.append(Window(i, j, text))
        if j + 1 >= len(lines):
            break
        nxt = j + 1
        back = 0
        while back < overlap_lines and nxt - 1 > i and counts[nxt - 1] <= max_tokens // 4:
            nxt -= 1
            back += 1
        i = nxt
    return windows


def _split_line_window(
    line: str, offset: int, count_tokens: Callable[[Sequence[str]], list[int]], max_tokens: int
) -> list[Window]:
    pieces: list[Window] = []
    words = line.split(" ")
    cur: list[str] = []
    # Pack words greedily, re-counting only at candidate boundaries (few calls per line).
    per_word = count_tokens(words)
    total = 0
    for word, cnt in zip(words, per_word, strict=True):
        if cnt > max_tokens:
            if cur:
                pieces.append(Window(offset, offset, " ".join(cur)))
                cur, total = [], 0
            step = max(1, len(word) * max_tokens // (cnt + 1))
            for k in range(0, len(word), step):
                pieces.append(Window(offset, offset, word[k : k + step]))
            continue
        if total + cnt > max_tokens and cur:
            pieces.append(Window(offset, offset, " ".join(cur)))
            cur, total = [], 0
        cur.append(word)
        total += cnt
    if cur and " ".join(cur).strip():
        pieces.append(Window(offset, offset, " ".join(cur)))
    return pieces
