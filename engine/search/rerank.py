"""A small learned re-ranker: a logistic model over features both legs already compute, for the top candidates."""

from __future__ import annotations

import bisect
import functools
import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.search.calibration import Calibration, sigmoid
from engine.search.snippets import matcher_for

RERANK_PATH = Path(__file__).with_name("rerank.json")
DEPTH = 30  # candidates re-scored: the evidence is in hybrid's top 10 for ~95% of LoCoMo questions

# Every feature the pipeline computes, in a fixed order (a weights file may use any subset).
FEATURES = (
    "base",  # the fused OpenClaw score 0.7·vector + 0.3·keyword (after decay/importance)
    "base_rr",  # 1 / (1 + rank) in the fused order
    "kw",  # normalised BM25 (best candidate = 1)
    "kw_line",  # best-line BM25, normalised by the best candidate's
    "kw_rr",  # 1 / (1 + rank) in the keyword leg (0: not a keyword match)
    "kw_gap",  # normalised BM25 minus the next keyword candidate's
    "vec",  # best-window cosine, calibrated to a probability for the model
    "vec_line",  # best-line cosine, calibrated
    "vec_rr",  # 1 / (1 + rank) in the vector leg
    "vec_gap",  # calibrated window score minus the next vector candidate's
    "cover",  # share of the query's terms in the chunk
    "idf_cover",  # the same, each term weighted by its rarity among the candidates
    "line_cover",  # the largest share of the terms on one line
    "phrase",  # share of adjacent query-term pairs found adjacent in the chunk
    "date",  # the named day (0.5) or month (0.3) boost of a dated note
    "log_len",  # log(1 + characters) / 10
    "importance",  # OpenClaw's importance multiplier − 1 (0 for chunks without one)
)


@dataclass(frozen=True)
class LinearModel:
    """``p = sigmoid(bias + Σ weight·feature)`` over named features (absent features count as 0)."""

    bias: float
    weights: Mapping[str, float]

    def score(self, feats: Mapping[str, float]) -> float:
        """The probability of relevance for one candidate's features."""
        return sigmoid(self.bias + sum(w * feats.get(name, 0.0) for name, w in self.weights.items()))


@dataclass(frozen=True)
class Reranker:
    """The shipped models: ``hybrid`` (both legs' features) and ``keyword`` (keyword-only searches)."""

    models: Mapping[str, LinearModel]
    depth: int = DEPTH
    provenance: Mapping[str, Any] = field(default_factory=dict)

    def model_for(self, mode: str) -> LinearModel | None:
        """The model for a search mode (None: this mode is not re-ranked)."""
        return self.models.get(mode)


def reranker_from(data: Mapping[str, Any]) -> Reranker:
    """A :class:`Reranker` from a parsed weights file (unknown feature names are ignored, so old files load;
    a model with ``"enabled": false`` is skipped)."""
    models: dict[str, LinearModel] = {}
    raw = data.get("models")
    for name, spec in (raw.items() if isinstance(raw, Mapping) else ()):
        if not isinstance(spec, Mapping) or not isinstance(spec.get("weights"), Mapping):
            continue
        if spec.get("enabled") is False:  # shipped for the record, but it did not pass CV: that mode stays as is
            continue
        weights = {k: float(v) for k, v in spec["weights"].items() if k in FEATURES}
        models[str(name)] = LinearModel(float(spec.get("bias", 0.0)), weights)
    prov = data.get("provenance")
    return Reranker(models, int(data.get("depth", DEPTH)), prov if isinstance(prov, Mapping) else {})


@functools.lru_cache(maxsize=1)
def shipped_reranker() -> Reranker | None:
    """The re-ranker in ``rerank.json`` next to this module (None when the file is missing or broken)."""
    try:
        data = json.loads(RERANK_PATH.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return reranker_from(data) if isinstance(data, dict) else None


@dataclass(frozen=True)
class LegInputs:
    """What the legs computed for the candidates, as the pipeline holds it (ids → values)."""

    bm25: Mapping[int, float]  # raw FTS5 bm25() (negative, lower is better)
    kw_line: Mapping[int, float]  # best-line BM25 (raw) of the keyword leg's candidates (absent: 0)
    window: Mapping[int, float] | None  # raw best-window cosine (None: no vector leg)
    line: Mapping[int, dict[int, float]]  # line offset → cosine, per chunk
    dated: Mapping[int, float]
    calibration: Calibration


def _rr(order: Sequence[int]) -> dict[int, float]:
    return {k: 1.0 / (2.0 + i) for i, k in enumerate(order)}  # rank 0 → 0.5 so "absent" (0) stays lowest


def _gaps(order: Sequence[int], score: Mapping[int, float]) -> dict[int, float]:
    out = {}
    for i, k in enumerate(order):
        nxt = score[order[i + 1]] if i + 1 < len(order) else 0.0
        out[k] = score[k] - nxt
    return out


def _text_features(text: str, terms: Sequence[str]) -> tuple[set[str], float, float]:
    """From one scan of the chunk: the terms present, the largest share of the terms on one line, and the
    share of adjacent query-term pairs found adjacent (at most 3 characters apart, in query order)."""
    if not terms:
        return set(), 0.0, 0.0
    found = sorted(matcher_for(tuple(terms)).find(text))
    if not found:
        return set(), 0.0, 0.0
    present = {t for _, _, t in found}
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    per_line: dict[int, set[str]] = {}
    for start, _end, term in found:
        per_line.setdefault(bisect.bisect_right(starts, start) - 1, set()).add(term)
    line_cover = max(len(v) for v in per_line.values()) / len(terms)
    phrase = 0.0
    if len(terms) > 1:
        pairs = {(terms[i], terms[i + 1]) for i in range(len(terms) - 1)}
        seen = {(t1, t2) for (_s1, e1, t1), (s2, _e2, t2) in itertools.pairwise(found)
                if s2 - e1 <= 3 and (t1, t2) in pairs}
        phrase = len(seen) / len(pairs)
    return present, line_cover, phrase


def candidate_features(
    order: Sequence[int],
    texts: Mapping[int, str],
    base: Mapping[int, float],
    importance: Mapping[int, float],
    terms: Sequence[str],
    weights: Mapping[str, float],
    legs: LegInputs,
) -> dict[int, dict[str, float]]:
    """Features (see :data:`FEATURES`) for the candidates in ``order`` (their fused order, best first)."""
    cal = legs.calibration
    strengths = {k: max(0.0, -v) for k, v in legs.bm25.items()}
    top = max(strengths.values(), default=0.0)
    kw = {k: v / top for k, v in strengths.items()} if top > 0 else {k: 0.0 for k in strengths}
    kw_order = sorted(kw, key=lambda k: (-kw[k], k))
    line_top = max(legs.kw_line.values(), default=0.0)
    vec: dict[int, float] = {}
    vec_line: dict[int, float] = {}
    if legs.window:
        if cal.window is not None:
            vec = {k: cal.window(v) for k, v in legs.window.items()}
        else:  # an uncalibrated model: its cosines scaled to the candidates' range (not shipped for hybrid)
            lo, hi = min(legs.window.values()), max(legs.window.values())
            vec = {k: (v - lo) / (hi - lo) if hi > lo else 1.0 for k, v in legs.window.items()}
        for k, lines in legs.line.items():
            if lines:
                best = max(lines.values())
                vec_line[k] = cal.line(best) if cal.line is not None else best
    vec_order = sorted(vec, key=lambda k: (-vec[k], k))
    # The gap to the next vector candidate among the re-ranked ones (not the whole leg), so a trainer can
    # recompute it from the collected candidates alone under another calibration.
    vec_top = sorted((k for k in order if k in vec), key=lambda k: (-vec[k], k))
    total_w = sum(weights.get(t, 1.0) for t in terms) or 1.0
    kw_rr, vec_rr, base_rr = _rr(kw_order), _rr(vec_order), _rr(order)
    kw_gap, vec_gap = _gaps(kw_order, kw), _gaps(vec_top, vec)
    out: dict[int, dict[str, float]] = {}
    for key in order:
        text = texts.get(key, "")
        present, line_cover, phrase = _text_features(text, terms)
        out[key] = {
            "base": base.get(key, 0.0),
            "base_rr": base_rr.get(key, 0.0),
            "kw": kw.get(key, 0.0),
            "kw_line": legs.kw_line.get(key, 0.0) / line_top if line_top > 0 else 0.0,
            "kw_rr": kw_rr.get(key, 0.0),
            "kw_gap": kw_gap.get(key, 0.0),
            "vec": vec.get(key, 0.0),
            "vec_line": vec_line.get(key, 0.0),
            "vec_rr": vec_rr.get(key, 0.0),
            "vec_gap": vec_gap.get(key, 0.0),
            "cover": len(present) / len(terms) if terms else 0.0,
            "idf_cover": sum(weights.get(t, 1.0) for t in present) / total_w if terms else 0.0,
            "line_cover": line_cover,
            "phrase": phrase,
            "date": legs.dated.get(key, 0.0),
            "log_len": math.log1p(len(text)) / 10.0,
            "importance": importance.get(key, 0.0),
        }
    return out
