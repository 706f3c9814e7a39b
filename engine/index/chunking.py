"""Markdown-aware chunking with exact 1-based line ranges, and embedding windows that fit the model."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

CHARS_PER_TOKEN = 4
CJK_WEIGHT = 4

_CJK_RE = re.compile(
    "[\u2e80-\u9fff\ua000-\ua4ff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f\u3040-\u30ff\uff66-\uff9f]"
)
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_HEADING = re.compile(r"^ {0,3}#{1,6}(\s|$)")
_LIST_ITEM = re.compile(r"^\s*([-*+]|\d{1,9}[.)])\s")

# Break scores: how good a place it is to start a new chunk before a line.
BREAK_HEADING = 4
BREAK_BLOCK = 3
BREAK_ITEM = 2
BREAK_LINE = 1


@dataclass(frozen=True)
class Chunk:
    """A piece of a file: its exact 1-based inclusive line range and its text (those lines joined)."""

    start_line: int
    end_line: int
    text: str


def weighted_len(text: str) -> int:
    """Length in "chars" where a CJK character counts as a whole token (4 chars)."""
    if text.isascii():
        return len(text)
    return len(text) + (CJK_WEIGHT - 1) * len(_CJK_RE.findall(text))


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


def _fence_end(lines: Sequence[str], start: int) -> int:
    m = _FENCE_OPEN.match(lines[start])
    assert m is not None
    marker = m.group(1)
    char, length = marker[0], len(marker)
    close = re.compile(r"^ {0,3}" + re.escape(char) + "{" + str(length) + r",}\s*$")
    for j in range(start + 1, len(lines)):
        if close.match(lines[j]):
            return j
    return len(lines) - 1  # an unclosed fence runs to the end of the file (CommonMark)


def _is_fence_open(line: str) -> bool:
    m = _FENCE_OPEN.match(line)
    return bool(m) and not (m.group(1).startswith("`") and "`" in m.group(2))  # type: ignore[union-attr]


def _front_matter_end(lines: Sequence[str]) -> int | None:
    if not lines or lines[0].strip() != "---":
        return None
    for j in range(1, min(len(lines), 200)):
        if lines[j].strip() in ("---", "..."):
            return j
    return None


def _units(lines: Sequence[str], budget: int) -> list[_Unit]:
    sizes = [weighted_len(line) + 1 for line in lines]
    units: list[_Unit] = []
    i = 0
    fm_end = _front_matter_end(lines)
    while i < len(lines):
        if i == 0 and fm_end is not None:
            end = fm_end
            kind_fence = True
        elif _is_fence_open(lines[i]):
            end = _fence_end(lines, i)
            kind_fence = True
        else:
            end = i
            kind_fence = False
        size = sum(sizes[i : end + 1])
        prev_blank = i > 0 and not lines[i - 1].strip()
        prev_fence = bool(units) and units[-1].fence
        line = lines[i]
        if _HEADING.match(line):
            score = BREAK_HEADING
        elif prev_blank or prev_fence or kind_fence:
            score = BREAK_BLOCK
        elif _LIST_ITEM.match(line):
            score = BREAK_ITEM
        else:
            score = BREAK_LINE
        if kind_fence and size > budget:
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


def chunk_markdown(text: str, tokens: int = 400, overlap: int = 80) -> list[Chunk]:
    """Split Markdown into chunks of about ``tokens`` tokens with about ``overlap`` tokens of whole-line overlap.

    Breaks prefer headings, then blank lines and block edges, then list items; a fenced code block (or YAML
    front matter) is never split unless it alone exceeds the budget; a heading starts its section's chunk
    (no overlap carried across it). A line longer than the budget is hard-split into pieces that share its
    line number. Every non-blank line lands in at least one chunk; a chunk's text is exactly its lines.

    Args:
        text: the file's text (``\\n`` line endings).
        tokens: target chunk size in tokens (x4 chars; CJK characters weigh 4).
        overlap: overlap in tokens carried from the end of a chunk into the next.

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
    units = _units(lines, budget)
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
    it with its neighbours. Blank and very short lines are left out, and a chunk of one line needs none.
    """
    lines = chunk_text.split("\n")
    picked = [(i, line.strip()) for i, line in enumerate(lines) if weighted_len(line.strip()) >= min_chars]
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
