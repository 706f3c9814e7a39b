"""Score fusion for hybrid search: BM25 normalisation, weighted fusion, optional decay and MMR."""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from functools import lru_cache

from engine.lexicon import CJK_CHARS
from engine.search.dates import file_date

_TOKEN_RE = re.compile(r"[a-z0-9_]+")


@dataclass(frozen=True)
class Fused:
    """One candidate's fused score and its parts (``vector`` is None when the vector leg did not run).

    ``text_weight`` / ``vector_weight`` are the legs' weights in this score when the legs were weighed by what
    the keyword leg can see (:func:`fuse_scores` with ``evidence``): ``score = vector_weight·vector +
    text_weight·keyword``; None under OpenClaw's fixed weights.
    """

    key: int
    score: float
    vector: float | None
    keyword: float
    text_weight: float | None = None
    vector_weight: float | None = None
    placed: str = ""  # "vector" / "curated": placed above a higher score (vector_slot / curated_slot)


# -- what the keyword leg can see ----------------------------------------------------------------------------
# Letters by writing system. A CJK character weighs as a word of Latin letters does (a Chinese paragraph with a
# few Latin names is still Chinese to BM25). Digits and punctuation belong to no script.
SCRIPTS: tuple[tuple[str, re.Pattern[str], int], ...] = (
    ("latin", re.compile(r"[A-Za-z\u00C0-\u024F\u1E00-\u1EFF]"), 1),
    ("cyrillic", re.compile(r"[\u0400-\u052F]"), 1),
    ("greek", re.compile(r"[\u0370-\u03FF]"), 1),
    ("cjk", re.compile(f"[{CJK_CHARS}]"), 3),
    ("arabic", re.compile(r"[\u0600-\u06FF\u0750-\u077F]"), 1),
    ("hebrew", re.compile(r"[\u0590-\u05FF]"), 1),
    ("indic", re.compile(r"[\u0900-\u0DFF]"), 1),
    ("thai", re.compile(r"[\u0E00-\u0E7F]"), 1),
)
QUERY_SCRIPT_MIN = 0.1
"""A script is the query's when at least this share of its letters is written in it (a stray one is not)."""
SCRIPT_FULL = 0.5
"""A chunk with at least this share of its letters in the query's scripts gets the keyword leg's full weight."""
SCRIPT_NONE = 0.25
"""A chunk with at most this share of its letters in the query's scripts is one the keyword leg cannot read: a
Chinese or Russian paragraph holding a few Latin names or a title (XQuAD's: at most .26 of their letters; the
median holds none). Without it such a chunk kept a sliver of the keyword weight, and a best-match keyword
probability of ~.57 times a sliver still beat cross-lingual vector probabilities of ~.001."""


_RUNS = tuple((name, re.compile(rx.pattern + "+"), weight) for name, rx, weight in SCRIPTS)
_NOT_LATIN = re.compile("|".join(rx.pattern for name, rx, _ in SCRIPTS if name != "latin"))
_LATIN = SCRIPTS[0][1]


def script_shares(text: str) -> dict[str, float]:
    """Each script's share of the text's (weighted) letters; empty when it has none.

    Every candidate of a hybrid search is read (:func:`script_overlap`): counting letter by letter cost 17 ms a
    query over 150 candidates at 10k chunks: a text with no letter of another script (one search) is Latin, the
    others are counted by runs, and a chunk's text read before is not read again (:func:`_shares`)."""
    if text.isascii():
        return {"latin": 1.0} if any(c.isalpha() for c in text) else {}
    if _NOT_LATIN.search(text) is None:
        return {"latin": 1.0} if _LATIN.search(text) is not None else {}
    return dict(_shares(text))


@lru_cache(maxsize=4096)
def _shares(text: str) -> tuple[tuple[str, float], ...]:
    counts: dict[str, int] = {}
    for (name, one, weight), (_, runs, _) in zip(SCRIPTS, _RUNS, strict=True):
        if one.search(text) is not None:
            counts[name] = sum(map(len, runs.findall(text))) * weight
    total = sum(counts.values())
    return tuple((k, v / total) for k, v in counts.items() if v) if total else ()


def query_scripts(text: str) -> frozenset[str]:
    """The scripts the query is written in (each at least :data:`QUERY_SCRIPT_MIN` of its letters)."""
    return frozenset(k for k, v in script_shares(text).items() if v >= QUERY_SCRIPT_MIN)


def script_overlap(scripts: frozenset[str], text: str) -> float:
    """How well the keyword leg can read a chunk for a query in ``scripts``: 1 when at least
    :data:`SCRIPT_FULL` of the chunk's letters are in them (or either has no letters), 0 at
    :data:`SCRIPT_NONE` or less (an English question over a Chinese note: BM25 sees only the odd Latin name
    or number in it), linear between."""
    if not scripts:
        return 1.0
    shares = script_shares(text)
    if not shares:
        return 1.0
    share = sum(v for k, v in shares.items() if k in scripts)
    return min(1.0, max(0.0, (share - SCRIPT_NONE) / (SCRIPT_FULL - SCRIPT_NONE)))


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
    evidence: Mapping[int, float] | None = None,
    vectorless: Collection[int] = (),
) -> list[Fused]:
    """Union the legs by key and combine: ``score = (wv·vector + wt·keyword) / (wv + wt)``.

    With the default weights (summing to 1) this is OpenClaw's ``0.7·vector + 0.3·keyword``. Negative cosine
    similarities count as 0. Without a vector leg (``vector`` is None) the score is the keyword score.
    The result is sorted by score, then key, so it does not depend on the input order.

    ``evidence`` (chunk → 0…1, what the keyword leg can see of the query in that chunk) scales each chunk's
    keyword weight: ``(wv·vector + wt·e·keyword) / (wv + wt)``, so full evidence is OpenClaw's formula and a
    chunk the leg cannot read keeps OpenClaw's vector weight while its keyword part counts for nothing (not
    renormalised: lifting such a chunk's vector part to full weight let every unreadable chunk outrank a
    readable one the query's words matched). An empty ``evidence`` (the leg matched nothing) abstains: the
    score is the vector part. Each result carries the weights (:attr:`Fused.text_weight`, ``vector_weight``).

    ``vectorless``: chunks not embedded yet (an index still being embedded). The vector leg cannot see them, so
    it abstains: such a chunk's score is its keyword score, as in a keyword search, instead of 0.3 of it.
    """
    out: list[Fused] = []
    if vector is None:
        for key, k in keyword.items():
            out.append(Fused(key, _clamp(k), None, _clamp(k)))
    else:
        total = vector_weight + text_weight
        for key in set(vector) | set(keyword):
            if key in vectorless and key not in vector:
                k = _clamp(keyword.get(key, 0.0))
                out.append(Fused(key, k, None, k))
                continue
            v = _clamp(vector.get(key, 0.0))
            k = _clamp(keyword.get(key, 0.0))
            if evidence is None:
                out.append(Fused(key, _clamp((vector_weight * v + text_weight * k) / total), v, k))
                continue
            if not evidence:  # the leg matched nothing: it abstains
                out.append(Fused(key, v, v, k, 0.0, 1.0))
                continue
            wv = vector_weight / total if total > 0 else 0.0
            wt = text_weight * _clamp(evidence.get(key, 0.0)) / total if total > 0 else 0.0
            out.append(Fused(key, _clamp(wv * v + wt * k), v, k, wt, wv))
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
