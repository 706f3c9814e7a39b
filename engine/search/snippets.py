"""Choosing the snippet an agent reads: the whole-line window of a chunk that best matches the query."""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from engine.index.chunking import has_cjk

SNIPPET_MAX_CHARS = 700

_SUFFIXES = ("ational", "ments", "ment", "ings", "ing", "edly", "ied", "ies", "ed", "es", "ers", "er", "ly", "s")
_WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)


@dataclass(frozen=True)
class Snippet:
    """A snippet of a chunk with its own 1-based line range and the spans of matched query terms."""

    text: str
    start_line: int
    end_line: int
    spans: tuple[tuple[int, int], ...]


def stem(term: str) -> str:
    """A light suffix-stripping stem, enough to highlight ``deploy`` in ``deployments``."""
    for suffix in _SUFFIXES:
        if term.endswith(suffix) and len(term) - len(suffix) >= 3:
            return term[: -len(suffix)]
    return term


class TermMatcher:
    """Finds query terms in text in one regex pass: words starting with a term's stem, CJK bigrams as-is.

    Compiled once per query (see :func:`matcher_for`); matching is case-insensitive on the original text,
    so spans are offsets into exactly the text given.
    """

    def __init__(self, terms: tuple[str, ...]) -> None:
        self.terms = terms
        self.cjk = [t for t in terms if has_cjk(t)]
        self.latin = [t for t in terms if not has_cjk(t)]
        alternatives: list[str] = []
        for term in self.latin:
            st = stem(term)
            alternatives.append(re.escape(st) + r"[^\W_]{0,6}" if len(st) >= 3 else re.escape(term))
        self.regex = (
            re.compile(r"\b(?:" + "|".join(f"({a})" for a in alternatives) + r")(?![^\W_])", re.IGNORECASE)
            if alternatives
            else None
        )

    def find(self, text: str) -> list[tuple[int, int, str]]:
        """Every match as ``(start, end, term)``."""
        found: list[tuple[int, int, str]] = []
        if self.regex is not None:
            for m in self.regex.finditer(text):
                found.append((m.start(), m.end(), self.latin[(m.lastindex or 1) - 1]))
        for term in self.cjk:
            at = text.find(term)
            while at >= 0:
                found.append((at, at + len(term), term))
                at = text.find(term, at + 1)
        return found

    def terms_in(self, text: str) -> set[str]:
        """The distinct terms that occur in ``text``."""
        return {term for _, _, term in self.find(text)}

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Sorted, merged character spans of the matches."""
        spans = sorted((a, b) for a, b, _ in self.find(text))
        if not spans:
            return []
        merged = [spans[0]]
        for a, b in spans[1:]:
            if a <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
            else:
                merged.append((a, b))
        return merged


@functools.lru_cache(maxsize=64)
def matcher_for(terms: tuple[str, ...]) -> TermMatcher:
    """A cached :class:`TermMatcher` for a query's terms."""
    return TermMatcher(terms)


def match_spans(text: str, terms: Sequence[str]) -> list[tuple[int, int]]:
    """Character spans in ``text`` of words matching any query term (case-insensitive, by stem)."""
    if not terms or not text:
        return []
    return matcher_for(tuple(terms)).spans(text)


def _matched_terms(line: str, terms: Sequence[str]) -> set[str]:
    return matcher_for(tuple(terms)).terms_in(line) if terms else set()


# How much the closest line's cosine counts against the share of the query's (weighted) words a window covers.
SNIPPET_MEANING_WEIGHT = 0.5


def extract_snippet(
    chunk_text: str,
    start_line: int,
    terms: Sequence[str],
    max_chars: int = SNIPPET_MAX_CHARS,
    focus: tuple[int, int] | None = None,
    term_weights: dict[str, float] | None = None,
    line_scores: dict[int, float] | None = None,
    skip: set[int] | None = None,
    answer: bool = False,
) -> Snippet:
    """The window of whole lines (≤ ``max_chars``) of a chunk that covers the most query terms.

    Args:
        chunk_text: the chunk's text.
        start_line: the chunk's first line number (1-based) in its file.
        terms: query terms (see :attr:`engine.search.query.ParsedQuery.terms`).
        max_chars: the snippet's budget.
        focus: 0-based line offsets (first, last) in the chunk to prefer when no term matches — the
            embedding window that matched the query best.
        term_weights: how much each term counts (rarer terms more); 1.0 each by default.
        line_scores: 0-based line offset → the line's cosine similarity to the query (from line vectors):
            the window holding the line closest in meaning gains, next to the words it covers.
        skip: 0-based line offsets already delivered by a better-ranked result: they earn the window nothing.
        answer: a window whose last line asks (holds "?") and whose next line did not fit gives up its first
            lines for that next line (:func:`_answer`; ``SearchHeuristics.snippet_answer``, off by default).
    """
    lines = chunk_text.split("\n")
    if len(chunk_text) <= max_chars:
        return Snippet(chunk_text, start_line, start_line + len(lines) - 1, tuple(match_spans(chunk_text, terms)))
    weights = term_weights or {}
    all_weight = sum(weights.get(t, 1.0) for t in terms) or 1.0
    skip = skip or set()
    meaning = [0.0 if i in skip else (line_scores or {}).get(i, 0.0) for i in range(len(lines))]
    line_terms = [set() if i in skip else _matched_terms(line, terms) for i, line in enumerate(lines)]
    lengths = [len(line) + 1 for line in lines]
    best: tuple[float, int, int] | None = None
    best_range = (0, 0)
    for i in range(len(lines)):
        total = 0
        covered: set[str] = set()
        hits = 0
        closest = 0.0
        for j in range(i, len(lines)):
            total += lengths[j]
            if total - 1 > max_chars and j > i:
                break
            covered |= line_terms[j]
            hits += len(line_terms[j])
            closest = max(closest, meaning[j])
            score = sum(weights.get(t, 1.0) for t in sorted(covered)) / all_weight + SNIPPET_MEANING_WEIGHT * closest
            in_focus = 0
            if focus is not None:
                in_focus = max(0, min(j, focus[1]) - max(i, focus[0]) + 1)
            key = (score + 0.01 * hits + 0.001 * in_focus, -(j - i), -i)
            if best is None or key > best:
                best = key
                best_range = (i, j)
    i, j = best_range
    if focus is not None and (best is None or best[0] < 0.01):
        i, j = _fit(lengths, focus[0], focus[1], max_chars)
    i, j = _grow(lengths, i, j, max_chars)
    if answer:
        i, j = _answer(lines, lengths, line_terms, i, j, max_chars)
    text = "\n".join(lines[i : j + 1])
    if len(text) > max_chars:
        text = _cut_line(text, terms, max_chars)
    return Snippet(text, start_line + i, start_line + j, tuple(match_spans(text, terms)))


def _grow(lengths: list[int], i: int, j: int, max_chars: int) -> tuple[int, int]:
    """Fill the budget around the matched lines, following lines first.

    In notes and conversations the answer tends to come right after the lines that use the question's
    words ("Any tips for getting started?" — the next line holds the tips).
    """
    total = sum(lengths[i : j + 1]) - 1
    while j + 1 < len(lengths) and total + lengths[j + 1] <= max_chars:
        j += 1
        total += lengths[j]
    while i > 0 and total + lengths[i - 1] <= max_chars:
        i -= 1
        total += lengths[i]
    return i, j


def _answer(lines: list[str], lengths: list[int], line_terms: list[set[str]], i: int, j: int, max_chars: int
            ) -> tuple[int, int]:
    """The window ``i..j`` moved on by the line after it when its last line asks a question (holds "?") with
    the query's words and that line did not fit: the window's first lines make room for it, but only lines
    whose query words the rest of the window holds too (else the window stays as it is).

    In a conversation the answer is the turn after the question, and a question holding the query's words
    ends the best window (LoCoMo dev: 28 of the 67 hybrid questions whose top 5 held the evidence but no
    snippet did had it on the line right after the snippet's last line, which asked)."""
    if j + 1 >= len(lines) or "?" not in lines[j] or not line_terms[j]:
        return i, j
    start, total = i, sum(lengths[i : j + 2]) - 1
    while total > max_chars and start < j:
        if not line_terms[start] <= set().union(*line_terms[start + 1 : j + 1]):
            return i, j  # a line with words the rest lacks is not given up
        total -= lengths[start]
        start += 1
    return (start, j + 1) if total <= max_chars else (i, j)


def _fit(lengths: list[int], first: int, last: int, max_chars: int) -> tuple[int, int]:
    total = 0
    j = first
    while j <= last and total + lengths[j] - 1 <= max_chars:
        total += lengths[j]
        j += 1
    return first, max(first, j - 1)


def _cut_line(text: str, terms: Sequence[str], max_chars: int) -> str:
    """Cut an over-long single line to ``max_chars`` around its first match, at word boundaries."""
    spans = match_spans(text, terms)
    center = spans[0][0] if spans else 0
    start = max(0, center - max_chars // 3)
    end = min(len(text), start + max_chars)
    start = max(0, end - max_chars)
    if start > 0:
        space = text.find(" ", start, start + 40)
        if space != -1:
            start = space + 1
    if end < len(text):
        space = text.rfind(" ", end - 40, end)
        if space > start:
            end = space
    return text[start:end]


def best_line_coverage(text: str, terms: Sequence[str]) -> float:
    """The largest share of ``terms`` that any single line of ``text`` contains (0 when no terms)."""
    if not terms:
        return 0.0
    return max((len(_matched_terms(line, terms)) / len(terms) for line in text.split("\n")), default=0.0)


def term_weights(texts: list[str], terms: Sequence[str]) -> dict[str, float]:
    """IDF-like weights of query terms over a set of candidate texts: rarer terms count more.

    The candidates stand in for the collection, so a speaker name that starts every line of a transcript
    (and so every candidate) weighs little, while the one rare word of the question weighs most.
    Document frequency is counted by substring (a term's stem), which is fast and close enough for weights.
    """
    if not terms or not texts:
        return {}
    import math

    lowered = [t.lower() for t in texts]
    n = len(texts)
    weights: dict[str, float] = {}
    for term in terms:
        probe = term if has_cjk(term) else stem(term)
        df = sum(1 for t in lowered if probe in t)
        weights[term] = math.log(1.0 + (n + 1) / (df + 0.5))
    return weights


def best_line_bm25(text: str, terms: Sequence[str], weights: dict[str, float], avg_len: float,
                   k1: float = 1.2, b: float = 0.75) -> float:
    """The BM25 score of the chunk's best line, each line a document (``weights`` stand for the IDF).

    Short lines that hold the question's rare words score highest: one turn of a conversation, one bullet.
    """
    if not terms:
        return 0.0
    found = matcher_for(tuple(terms)).find(text)  # one scan of the chunk, then matches go to their lines
    if not found:
        return 0.0
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    per_line: dict[int, dict[str, int]] = {}
    for start, _end, term in found:
        tf = per_line.setdefault(bisect.bisect_right(starts, start) - 1, {})
        tf[term] = tf.get(term, 0) + 1
    best = 0.0
    for line_no, tf in per_line.items():
        norm = k1 * (1 - b + b * (starts[line_no + 1] - starts[line_no] - 1) / max(avg_len, 1.0))
        best = max(best, sum(weights.get(t, 1.0) * n * (k1 + 1) / (n + norm) for t, n in tf.items()))
    return best
