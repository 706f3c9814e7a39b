"""The pool stage: which candidates the re-ranker and the results are chosen from (``SearchHeuristics.pool``)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from engine.config import SearchConfig, SearchHeuristics
from engine.search.fusion import fuse_scores
from engine.search.pipeline import Legs, SearchRequest, _Row, pool, vector_slot
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


def _settings(mode: str, slot: int = 2) -> SearchConfig:
    # the slot alone: the vector lead (its favourite first when it leads by .15; tests/test_search_lead.py)
    # would move SLOT_CAL_V's favourite (.25 against .06) to the first place whatever the slot
    return replace(SearchConfig(), heuristics=replace(SearchHeuristics(), pool=mode, vector_slot=slot,
                                                      vector_lead=0.0))


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


# Four candidates where the keyword leg outvotes the vector leg's clear favourite (4: the one-line curated fact
# among notes sharing the query's words): shown 1 (.206), 2 (.192), 4 (.175), 3 (.163); raw 1, 2, 3, 4.
SLOT_CAL_V = {1: 0.05, 2: 0.06, 3: 0.04, 4: 0.25}
SLOT_CAL_K = {1: 0.57, 2: 0.50, 3: 0.45, 4: 0.0}
SLOT_RAW_V = {1: 0.80, 2: 0.81, 3: 0.79, 4: 0.86}
SLOT_RAW_K = {1: 1.0, 2: 0.9, 3: 0.8, 4: 0.0}
SLOT_ROWS = {k: _Row(k, f"memory/note-{k}.md", "memory", 1, 3, f"line {k}\nmore\nend", None) for k in (1, 2, 3, 4)}


def _slot_legs() -> Legs:
    return Legs(dict(SLOT_CAL_K), dict(SLOT_CAL_V), dict(SLOT_RAW_V), {}, {}, dict(SLOT_ROWS), True,
                (dict(SLOT_RAW_V), dict(SLOT_RAW_K)))


def _slot_pool(mode: str, want: int, slot: int = 2) -> list[int]:
    leg = _slot_legs()
    fused = fuse_scores(leg.vector, leg.keyword)
    return [f.key for f in pool(_settings(mode, slot), _request(), fused, leg, SLOT_ROWS, want)]


def test_the_slot_pool_holds_the_vector_legs_best_at_the_second_place() -> None:
    assert _slot_pool("shown", 4) == [1, 2, 4, 3]
    assert _slot_pool("slot", 4) == [1, 4, 2, 3]
    # cut to two, the shown pool loses it; the slot keeps it, and the first place stays the fused score's
    assert _slot_pool("shown", 2) == [1, 2]
    assert _slot_pool("slot", 2) == [1, 4]


def test_the_vector_slot_is_a_place_at_least() -> None:
    # the third place (the shipped slot): the first two stay the fused score's, the top 3 is the same set
    assert _slot_pool("slot", 4, slot=3) == [1, 2, 4, 3]
    assert _slot_pool("slot", 2, slot=3) == [1, 2]
    assert _slot_pool("raw-slot", 3, slot=3) == [1, 2, 4]
    assert _slot_pool("raw", 3) == [1, 2, 3]
    # the first place: the vector leg's favourite leads
    assert _slot_pool("slot", 4, slot=1) == [4, 1, 2, 3]


def test_the_slot_keeps_its_score_and_leaves_a_vector_favourite_in_first_place_alone() -> None:
    leg = _slot_legs()
    fused = fuse_scores(leg.vector, leg.keyword)
    chosen = pool(_settings("slot"), _request(), fused, leg, SLOT_ROWS, 4)
    assert {f.key: round(f.score, 6) for f in chosen} == {f.key: round(f.score, 6) for f in fused}
    # the earlier fixture: the vector leg's best (1) is the fused first already, so nothing moves
    first = _legs(calibrated=True)
    assert [f.key for f in pool(_settings("slot"), _request(), fuse_scores(first.vector, first.keyword), first,
                                ROWS, 3)] == [1, 3, 2]


def test_the_raw_slot_pool_adds_the_vector_legs_best_to_the_raw_pool() -> None:
    assert _slot_pool("raw", 2) == [1, 2]
    assert _slot_pool("raw-slot", 2) == [1, 4]
    assert _slot_pool("raw", 3) == [1, 2, 3]
    assert _slot_pool("raw-slot", 3) == [1, 4, 2]


def test_a_keyword_search_has_no_vector_slot() -> None:
    keyword = fuse_scores(None, SLOT_CAL_K)
    leg = Legs(dict(SLOT_CAL_K), None, None, {}, {}, dict(SLOT_ROWS))
    assert [f.key for f in pool(_settings("slot"), _request(), keyword, leg, SLOT_ROWS, 3)] == [1, 2, 3]


def test_the_union_pool_is_each_legs_own_top() -> None:
    # one each: the keyword leg's best (1) and the vector leg's (4), in the shown order
    assert _slot_pool("union", 1) == [1, 4]
    assert _slot_pool("shown", 1) == [1]
    assert _slot_pool("union", 2) == [1, 2, 4]


def test_the_slot_fills_a_short_pool_and_never_grows_it_past_want() -> None:
    # a pool shorter than the slot still takes the vector leg's best, at its end; want caps it either way
    short = [f for f in fuse_scores(SLOT_CAL_V, SLOT_CAL_K) if f.key in (1, 2)]
    every = fuse_scores(SLOT_CAL_V, SLOT_CAL_K)
    assert [f.key for f in vector_slot(short, every, 10, 3)] == [1, 2, 4]
    assert [f.key for f in vector_slot(short, every, 1, 3)] == [1]
    assert [f.key for f in vector_slot(short, every, 10, 1)] == [4, 1, 2]


def test_a_favourite_the_raw_pool_left_out_goes_where_its_score_puts_it_when_that_is_above_the_slot() -> None:
    from engine.search.fusion import Fused

    # the raw pool kept 1, 2, 3 (shown scores .27, .26, .25); the vector leg's favourite 4 scores .32 shown
    chosen = [Fused(1, 0.27, 0.1, 0.5), Fused(2, 0.26, 0.1, 0.5), Fused(3, 0.25, 0.1, 0.5)]
    favourite = Fused(4, 0.32, 0.4, 0.2)
    everything = [favourite, *chosen]
    assert [f.key for f in vector_slot(chosen, everything, 4, 3)] == [1, 2, 4, 3]  # the slot, below two lower
    assert [f.key for f in vector_slot(chosen, everything, 4, 3, by_score=True)] == [4, 1, 2, 3]
    # a favourite scoring below the slot's place still holds the slot
    low = Fused(4, 0.01, 0.4, 0.0)
    assert [f.key for f in vector_slot(chosen, [low, *chosen], 4, 3, by_score=True)] == [1, 2, 4, 3]
    # between the first two: second
    mid = Fused(4, 0.265, 0.4, 0.0)
    assert [f.key for f in vector_slot(chosen, [mid, *chosen], 4, 3, by_score=True)] == [1, 4, 2, 3]
