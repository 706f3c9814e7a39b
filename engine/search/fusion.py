"""Score fusion for hybrid search: BM25 normalisation, weighted fusion, optional decay and MMR."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime

_DATED_RE = re.compile(r"(?:^|/)memory/(?:.*/)?(\d{4})-(\d{2})-(\d{2})(?:-[^/]*)?\.md$")
_TOKEN_RE = re.compile(r"[a-z0-9_]+")


@dataclass(frozen=True)
class Fused:
    """One candidate's fused score and its parts (``vector`` is None when the vector leg did not run)."""

    key: int
    score: float
    vector: float | None
    keyword: float


def normalize_bm25(ranks: Mapping[int, float]) -> dict[int, float]:
    """Map FTS5 ``bm25()`` ranks (negative: more negative is better) to [0, 1] relative to the best hit.

    The best match scores 1.0 and the others in proportion, so scores spread out instead of saturating
    (OpenClaw's ``r/(1+r)`` gives most hits nearly the same score).
    """
    if not ranks:
        return {}
    strengths = {k: max(0.0, -float(r)) for k, r in ranks.items()}
    top = max(strengths.values())
    if top <= 0:
        return {k: 0.0 for k in strengths}
    return {k: v / top for k, v in strengths.items()}


def fuse_scores(
    vector: Mapping[int, float] | None,
    keyword: Mapping[int, float],
    vector_weight: float = 0.7,
    text_weight: float = 0.3,
) -> list[Fused]:
    """Union the legs by key and combine: ``score = (wv·vector + wt·keyword) / (wv + wt)``.

    With the default weights (summing to 1) this is OpenClaw's ``0.7·vector + 0.3·keyword``. Negative cosine
    similarities count as 0. Without a vector leg (``vector`` is None) the score is the keyword score.
    The result is sorted by score, then key, so it does not depend on the input order.
    """
    out: list[Fused] = []
    if vector is None:
        for key, k in keyword.items():
            out.append(Fused(key, _clamp(k), None, _clamp(k)))
    else:
        total = vector_weight + text_weight
        for key in set(vector) | set(keyword):
            v = _clamp(vector.get(key, 0.0))
            k = _clamp(keyword.get(key, 0.0))
            out.append(Fused(key, _clamp((vector_weight * v + text_weight * k) / total), v, k))
    out.sort(key=lambda f: (-f.score, f.key))
    return out


def _clamp(x: float) -> float:
    if math.isnan(x):
        return 0.0
    return min(1.0, max(0.0, x))


def file_date(path: str) -> date | None:
    """The date of a dated daily file (``memory/2026-01-12.md``, ``memory/2026-01-12-slug.md``), else None."""
    m = _DATED_RE.search(path)
    if not m:
        return None
    try:
        return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None


def decay_factor(path: str, half_life_days: float, now: datetime | None = None) -> float:
    """Temporal decay multiplier: ``exp(-ln2/half_life · age_days)`` for dated daily files, 1 for the rest."""
    day = file_date(path)
    if day is None:
        return 1.0
    now = now or datetime.now(UTC)
    age = (now - datetime(day.year, day.month, day.day, tzinfo=UTC)).total_seconds() / 86400.0
    return math.exp(-math.log(2) / half_life_days * max(0.0, age))


def _tokens(text: str) -> frozenset[str]:
    return frozenset(_TOKEN_RE.findall(text.lower()))


def mmr_order(items: Sequence[tuple[int, float, str]], lam: float = 0.7) -> list[int]:
    """Re-order candidates by maximal marginal relevance (Jaccard overlap of word sets).

    Args:
        items: ``(key, score, text)`` in any order.
        lam: weight of relevance against novelty.

    Returns:
        The keys in MMR order; scores are not changed.
    """
    if not items:
        return []
    ordered = sorted(items, key=lambda it: (-it[1], it[0]))
    hi, lo = ordered[0][1], ordered[-1][1]
    span = hi - lo
    tokens = {key: _tokens(text) for key, _, text in ordered}
    remaining = list(ordered)
    chosen: list[int] = []
    while remaining:
        best_i, best_val = 0, -math.inf
        for i, (key, score, _) in enumerate(remaining):
            rel = (score - lo) / span if span > 0 else 1.0
            sim = 0.0
            for other in chosen:
                a, b = tokens[key], tokens[other]
                if a or b:
                    sim = max(sim, len(a & b) / len(a | b))
            val = lam * rel - (1 - lam) * sim
            if val > best_val:
                best_i, best_val = i, val
        chosen.append(remaining.pop(best_i)[0])
    return chosen


_MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"], 1)}
_MONTHS.update({name[:3]: num for name, num in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MONTH_RE = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_DAY_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?(?:\s+of)?\s+" + _MONTH_RE + r"(?:,?\s+(\d{4}))?\b", re.I)
_MONTH_DAY = re.compile(r"\b" + _MONTH_RE + r"\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(\d{4}))?", re.I)


def query_dates(query: str) -> set[tuple[int | None, int, int]]:
    """Calendar days a query names: ``2026-11-10``, ``October 14``, ``14 Oct 2026`` → ``(year|None, month, day)``."""
    found: set[tuple[int | None, int, int]] = set()
    for y, m, d in _ISO_DATE.findall(query):
        found.add((int(y), int(m), int(d)))
    for d, mon, y in _DAY_MONTH.findall(query):
        found.add((int(y) if y else None, _MONTHS[mon.lower()], int(d)))
    for mon, d, y in _MONTH_DAY.findall(query):
        found.add((int(y) if y else None, _MONTHS[mon.lower()], int(d)))
    return {(y, m, d) for y, m, d in found if 1 <= m <= 12 and 1 <= d <= 31}


def date_matches(path: str, dates: set[tuple[int | None, int, int]]) -> bool:
    """Whether a dated daily file is one of the named days."""
    day = file_date(path)
    if day is None:
        return False
    return any((y is None or y == day.year) and m == day.month and d == day.day for y, m, d in dates)


_MONTH_YEAR = re.compile(r"\b" + _MONTH_RE + r",?\s+(\d{4})\b", re.I)
_ISO_MONTH = re.compile(r"\b(\d{4})-(\d{1,2})\b(?!-\d)")


def query_months(query: str) -> set[tuple[int, int]]:
    """Months a query names without a day: ``in July 2023``, ``2023-07`` → ``(year, month)``."""
    found: set[tuple[int, int]] = set()
    for mon, y in _MONTH_YEAR.findall(query):
        found.add((int(y), _MONTHS[mon.lower()]))
    for y, m in _ISO_MONTH.findall(query):
        if 1 <= int(m) <= 12:
            found.add((int(y), int(m)))
    days = query_dates(query)
    return {(y, m) for y, m in found if not any(dy == y and dm == m for dy, dm, _ in days)}


def month_matches(path: str, months: set[tuple[int, int]]) -> bool:
    """Whether a dated daily file falls in one of the named months."""
    day = file_date(path)
    return day is not None and (day.year, day.month) in months
