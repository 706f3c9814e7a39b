"""A search query parsed once: its terms, phrases, CJK bigrams and named dates, read by every step of a search."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date

from engine.index.chunking import has_cjk, nfc
from engine.index.fts import MAX_PARTS, split_cjk
from engine.search.dates import DateSpan, Day, Month, query_dates, query_months, resolve_dates_noting
from engine.textio import scrub_surrogates

MAX_TERMS = 48

# Whether a relative date phrase's own words ("yesterday", "last", "Friday", "weeks", "ago", "昨天") stay in the
# keyword query. They match notes that merely contain the word, while the resolved day is lifted anyway; the
# dates eval (bench/eval_dates.py, bench/results/2026-12-01-dates.md) measured both ways.
DATE_WORDS_IN_TERMS = False

# English stop words: function words that match nearly every chunk and only add noise to BM25.
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are aren't as at be because been before being below
    between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each
    few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers
    herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more
    most mustn't my myself no nor not of off on once only or other ought our ours ourselves out over own same
    shan't she she'd she'll she's should shouldn't so some such than that that's the their theirs them
    themselves then there there's these they they'd they'll they're they've this those through to too under
    until up very was wasn't we we'd we'll we're we've were weren't what what's when when's where where's which
    while who who's whom why why's with won't would wouldn't you you'd you'll you're you've your yours yourself
    yourselves did does s t d ll m o re ve y ever also just like get got yes""".split()
)

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


def _keep(term: str) -> bool:
    if term in STOP_WORDS:
        return False
    if term.isascii() and len(term) == 1 and not term.isdigit():
        return False
    return term.strip("_") != ""


def split_query(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The query's terms and phrases (see :class:`ParsedQuery`), from one pass over its words.

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
            if term and term not in seen and _keep(term):
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


def parse_query(text: str, today: date | None = None) -> ParsedQuery:
    """Parse a query once for the whole search. ``today`` defaults to the local date.

    The text is taken in NFC, as the index holds it (:func:`engine.index.chunking.nfc`: ``Vrac`` + U+030C +
    ``ar`` finds ``Vračar``), lone surrogates (an undecodable byte of a command-line argument) as U+FFFD.
    """
    text = query_text(text)
    today = today or date.today()
    resolved, date_notes = resolve_dates_noting(text, today)
    terms, phrases = split_query(text if DATE_WORDS_IN_TERMS else _without_relative_dates(text, resolved))
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


def keeping_date_words(parsed: ParsedQuery, keep: Sequence[DateSpan]) -> ParsedQuery:
    """The parse with the words of the ``keep`` phrases back in the keyword query and in :attr:`vector_text`
    (their days are still lifted). Splits the text again only when there is something to keep."""
    if not keep or DATE_WORDS_IN_TERMS:
        return parsed
    resolved = tuple(replace(s, keeps_words=True) if s in keep else s for s in parsed.resolved)
    terms, phrases = split_query(_without_relative_dates(parsed.text, resolved))
    return replace(parsed, terms=terms, phrases=phrases, bigrams=tuple(t for t in terms if has_cjk(t)),
                   resolved=resolved)


def _without_relative_dates(text: str, resolved: tuple[DateSpan, ...]) -> str:
    """The text with each relative date phrase blanked out (spaces keep the other words apart); a month's
    name stays (:attr:`DateSpan.keeps_words`)."""
    for span in resolved:
        if span.relative and not span.keeps_words:
            lo, hi = span.where
            text = text[:lo] + " " * (hi - lo) + text[hi:]
    return text


def as_parsed(query: ParsedQuery | str) -> ParsedQuery:
    """``query`` itself, or the text parsed (the search steps accept either; a search passes its one parse)."""
    return query if isinstance(query, ParsedQuery) else parse_query(query)


def query_text(text: str) -> str:
    """Query text as the index holds text: NFC, no lone surrogates (the one rule for every query)."""
    return nfc(scrub_surrogates(text))


def query_terms(text: str) -> list[str]:
    """The search terms of a text (see :attr:`ParsedQuery.terms`), for callers that need nothing else."""
    return list(split_query(query_text(text))[0])
