"""Score fusion for hybrid search: BM25 normalisation, weighted fusion, optional decay and MMR."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date

from engine.search.dates import file_date

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


def decay_factor(path: str, half_life_days: float, today: date) -> float:
    """Temporal decay multiplier: ``exp(-ln2/half_life · age_days)`` for dated daily files, 1 for the rest.

    ``age_days`` is the whole days from the file's date to ``today`` — the search's today, from the one clock
    (``engine.clock``: ``[memory] timezone``, ``MEMDECK_TODAY``), the day the notes are named by. A note dated
    today (or later) is not decayed."""
    day = file_date(path)
    if day is None:
        return 1.0
    age = (today - day).days
    return math.exp(-math.log(2) / half_life_days * max(0, age))


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
