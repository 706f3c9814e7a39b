"""The pool stage: which candidates the re-ranker and the results are chosen from (``SearchHeuristics.pool``)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from engine.config import SearchConfig, SearchHeuristics
from engine.search.fusion import fuse_scores
from engine.search.pipeline import Legs, SearchRequest, _Row, pool
from engine.search.query import parse_query

# Raw legs (cosines, BM25 relative to the best) and their calibrated probabilities, chosen so the two fused
# orders disagree: raw 0.7·v + 0.3·k gives 2 (.72), 1 (.56), 3 (.49); calibrated gives 1 (.21), 3 (.175), 2 (.095).
RAW_V = {1: 0.80, 2: 0.60, 3: 0.70}
RAW_K = {1: 0.0, 2: 1.0, 3: 0.0}
CAL_V = {1: 0.30, 2: 0.05, 3: 0.25}
CAL_K = {1: 0.0, 2: 0.20, 3: 0.0}
ROWS = {k: _Row(k, f"memory/note-{k}.md", "memory", 1, 3, f"line {k}\nmore\nend", None) for k in (1, 2, 3)}


def _request() -> SearchRequest:
    return SearchRequest(parse_query("heron", date(2026, 12, 2)), "hybrid", [1.0, 0.0], 6, 0.0, ("memory",))


def _legs(calibrated: bool) -> Legs:
    if calibrated:
        return Legs(dict(CAL_K), dict(CAL_V), dict(RAW_V), {}, {}, dict(ROWS), True, (dict(RAW_V), dict(RAW_K)))
    return Legs(dict(RAW_K), dict(RAW_V), dict(RAW_V), {}, {}, dict(ROWS))


def _settings(mode: str) -> SearchConfig:
    return replace(SearchConfig(), heuristics=replace(SearchHeuristics(), pool=mode))


def test_the_shown_pool_takes_the_best_shown_scores() -> None:
    leg = _legs(calibrated=True)
    fused = fuse_scores(leg.vector, leg.keyword)
    assert [f.key for f in fused] == [1, 3, 2]
    assert [f.key for f in pool(_settings("shown"), _request(), fused, leg, ROWS, 2)] == [1, 3]


def test_the_raw_pool_takes_the_best_raw_scores_in_the_shown_order() -> None:
    leg = _legs(calibrated=True)
    fused = fuse_scores(leg.vector, leg.keyword)
    chosen = pool(_settings("raw"), _request(), fused, leg, ROWS, 2)
    # 3 has the second-best shown score but the worst raw one: the raw pool leaves it out
    assert [f.key for f in chosen] == [1, 2]
    # and the pool's scores are the shown (calibrated) ones, which min_score then judges
    assert [round(f.score, 6) for f in chosen] == [round(f.score, 6) for f in fused if f.key in (1, 2)]
    assert [f.key for f in pool(_settings("raw"), _request(), fused, leg, ROWS, 3)] == [1, 3, 2]


def test_without_calibration_the_raw_pool_is_the_shown_one() -> None:
    leg = _legs(calibrated=False)
    fused = fuse_scores(leg.vector, leg.keyword)
    assert [f.key for f in pool(_settings("raw"), _request(), fused, leg, ROWS, 2)] == \
        [f.key for f in pool(_settings("shown"), _request(), fused, leg, ROWS, 2)] == [2, 1]


def test_an_unknown_pool_is_refused() -> None:
    leg = _legs(calibrated=True)
    with pytest.raises(ValueError, match="pool"):
        pool(_settings("best"), _request(), fuse_scores(leg.vector, leg.keyword), leg, ROWS, 2)
