"""A search query parsed once: its terms, phrases, CJK bigrams and named dates, read by every step of a search."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date

from engine.index.chunking import has_cjk, nfc
from engine.index.fts import split_cjk
from engine.lexicon import MODAL_WORDS, SEARCH_STOP_WORDS
from engine.search.dates import DateSpan, Day, Month, query_dates, query_months, resolve_dates_noting
from engine.textio import scrub_surrogates

MAX_TERMS = 48

# At most this many words in a MATCH expression (the query's terms first, then its phrases): twice MAX_TERMS.
MAX_PARTS = 96

STOP_WORDS = SEARCH_STOP_WORDS  # English function words that match nearly every chunk: noise to BM25
MODAL_STOP_WORDS = STOP_WORDS | MODAL_WORDS  # and the modal / hedge words (SearchHeuristics.modal_stop_words)

_WORD_RE = re.compile(r"[^\W_]+|_+", re.UNICODE)


@dataclass(frozen=True)
class ParsedQuery:
    """What a search reads from its query text; built by :func:`parse_query`, never re-derived later.

    Attributes:
        text: the query as the caller wrote it (the vector leg embeds :attr:`vector_text`).
        terms: the distinct search terms in query order, lowercased, stop words dropped, CJK runs as bigrams,
            at most ``MAX_TERMS`` — the FTS terms, the highlighted words and the best-line words.
        phrases: words written with inner punctuation (``HERON-112`` → ``heron 112``, ``20.04`` → ``20 04``),
            matched as exact phrases besides their terms. Quotes and FTS5 operators in the text are plain
            characters: ``"foo bar"`` gives the terms ``foo`` and ``bar``, not a phrase.
        bigrams: the terms that are CJK (bigrams of a CJK run, or a lone CJK character).
        has_cjk: whether the text holds any CJK character (it changes how the legs are weighted).
        dates: the calendar days the text names, ``(year or None, month, day)``.
        months: the months the text names without a day, ``(year, month)``.
        today: the day relative dates count from.
        resolved: every date phrase of the text resolved against ``today`` (relative or not), in text order;
            relative days join ``dates`` and relative months ``months``, weeks and weekends are ``ranges``.
        date_notes: a line for each date phrase left unread because its day is outside the calendar
            ("tomorrow" counted from 9999-12-31); a search shows them with its warnings.
    """

    text: str
    terms: tuple[str, ...]
    phrases: tuple[str, ...]
    bigrams: tuple[str, ...]
    has_cjk: bool
    dates: frozenset[Day]
    months: frozenset[Month]
    today: date
    resolved: tuple[DateSpan, ...] = ()
    date_notes: tuple[str, ...] = ()

    @property
    def vector_text(self) -> str:
        """The text the vector leg embeds: the query without its relative date phrases ("what did I cook
        yesterday" → "what did I cook"), which no note's meaning holds (the resolved day is lifted instead);
        the whole text when nothing else is left. Dates eval, hybrid: 44/45 at top 1 against 43/45."""
        if not any(s.relative and not s.keeps_words for s in self.resolved):
            return self.text
        return " ".join(_without_relative_dates(self.text, self.resolved).split()) or self.text

    @property
    def ranges(self) -> tuple[DateSpan, ...]:
        """The resolved spans of several days that are not a month (a week, a weekend, "two weeks ago" ±3)."""
        return tuple(s for s in self.resolved if s.kind == "range")


def _keep(term: str, stop: frozenset[str] = STOP_WORDS) -> bool:
    if term in stop:
        return False
    if term.isascii() and len(term) == 1 and not term.isdigit():
        return False
    return term.strip("_") != ""


def split_query(text: str, stop: frozenset[str] = STOP_WORDS) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The query's terms and phrases (see :class:`ParsedQuery`), from one pass over its words (``stop``: the
    words that are never terms).

    Words are split at whitespace, then into runs of letters and digits (``_WORD_RE`` never matches
    whitespace, so this finds the same pieces as matching the whole text); CJK runs become bigrams.
    """
    terms: list[str] = []
    phrases: list[str] = []
    seen: set[str] = set()
    for word in text.lower().split():
        pieces = [p for raw in _WORD_RE.findall(word) for p in split_cjk(raw)]
        for term in pieces:
            if len(terms) >= MAX_TERMS:
                break
            if term and term not in seen and _keep(term, stop):
                seen.add(term)
                terms.append(term)
        parts = [p for p in pieces if p.strip("_")]
        # A phrase holds a space and a term never does, so phrases only need to differ from each other;
        # no MATCH takes more than MAX_PARTS of them.
        if len(parts) > 1 and len(phrases) < MAX_PARTS and not has_cjk(word):
            phrase = " ".join(parts)
            if phrase not in phrases:
                phrases.append(phrase)
    return tuple(terms), tuple(phrases)


def parse_query(text: str, today: date, keeps_words: Callable[[DateSpan], bool] | None = None,
                date_words_in_terms: bool = False, modal_stop_words: bool = False) -> ParsedQuery:
    """Parse a query once for the whole search; relative dates count from ``today`` (the caller's one clock).

    The text is taken in NFC, as the index holds it (:func:`engine.index.chunking.nfc`: ``Vrac`` + U+030C +
    ``ar`` finds ``Vračar``), lone surrogates (an undecodable byte of a command-line argument) as U+FFFD.

    A relative date phrase's own words ("yesterday", "last", "Friday", "weeks", "ago", "昨天") leave the keyword
    query and :attr:`ParsedQuery.vector_text`: they match notes that merely contain the word, while the resolved
    day is lifted anyway (the dates eval, bench/eval_dates.py, measured both ways). ``keeps_words`` settles each
    such phrase before the words are split: true keeps its words (a search passes "its days hold no note": see
    :func:`engine.search.pipeline.parse`). ``date_words_in_terms`` keeps every phrase's words (an eval switch).
    ``modal_stop_words`` also drops the modal / hedge words (:data:`engine.lexicon.MODAL_WORDS`) from the terms.
    """
    text = query_text(text)
    resolved, date_notes = resolve_dates_noting(text, today)
    if keeps_words is not None and not date_words_in_terms:
        resolved = tuple(replace(s, keeps_words=True) if s.relative and not s.keeps_words and keeps_words(s) else s
                         for s in resolved)
    terms, phrases = split_query(text if date_words_in_terms else _without_relative_dates(text, resolved),
                                 MODAL_STOP_WORDS if modal_stop_words else STOP_WORDS)
    days = query_dates(text, today)
    months = query_months(text, today, days)
    for span in resolved:
        if span.kind == "month" and (span.relative or not any(
                dy == span.start.year and dm == span.start.month for dy, dm, _ in days)):
            months.add((span.start.year, span.start.month))
        elif span.relative and (span.kind == "day" or span.peak is not None):
            day = span.peak or span.start
            days.add((day.year, day.month, day.day))
    return ParsedQuery(
        text=text,
        terms=terms,
        phrases=phrases,
        bigrams=tuple(t for t in terms if has_cjk(t)),
        has_cjk=has_cjk(text),
        dates=frozenset(days),
        months=frozenset(months),
        today=today,
        resolved=resolved,
        date_notes=date_notes,
    )


def build_fts_query(query: ParsedQuery, skip: frozenset[str] = frozenset()) -> str | None:
    """The FTS5 MATCH expression of a query, or None when it has no searchable term.

    Terms are quoted (so ``NEAR(``, ``*``, ``-``, ``:`` and quotes are plain text) and OR-joined, so a natural
    question does not need every word to match; BM25 ranks chunks that match more and rarer terms higher.
    Words written with inner punctuation (``HERON-112``, ``20.04``) also add the exact phrase. Terms in
    ``skip`` are left out (a term in most chunks ranks nothing but costs the most to match).
    """
    from_terms = [f'"{term}"' for term in query.terms if term not in skip]
    parts = from_terms + [f'"{p}"' for p in query.phrases[: max(0, MAX_PARTS - len(from_terms))]]
    if not parts:
        return None
    return " OR ".join(parts)


def _without_relative_dates(text: str, resolved: tuple[DateSpan, ...]) -> str:
    """The text with each relative date phrase blanked out (spaces keep the other words apart); a month's
    name stays (:attr:`DateSpan.keeps_words`)."""
    for span in resolved:
        if span.relative and not span.keeps_words:
            lo, hi = span.where
            text = text[:lo] + " " * (hi - lo) + text[hi:]
    return text


def query_text(text: str) -> str:
    """Query text as the index holds text: NFC, no lone surrogates (the one rule for every query)."""
    return nfc(scrub_surrogates(text))


def query_terms(text: str) -> list[str]:
    """The search terms of a text (see :attr:`ParsedQuery.terms`), for callers that need nothing else."""
    return list(split_query(query_text(text))[0])
