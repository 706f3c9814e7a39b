"""Curated facts first without losing the daily notes (issue 26): the curated prior (``SearchHeuristics.
curated_prior``: a MEMORY.md / USER.md chunk's fused score × 1 + b) and the curated slot (``curated_slot``: the
best curated candidate near the 3rd result's score takes the 3rd place). Both off by default."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from engine.api import MemoryEngine
from engine.config import SearchConfig, SearchHeuristics
from engine.search.fusion import Fused, fuse_scores
from engine.search.pipeline import (
    Legs,
    SearchRequest,
    _Row,
    apply_curated_prior,
    curated_slot,
    pool,
    run_search,
    weigh,
)
from engine.search.query import parse_query
from tests.helpers import synced_engine

USER = """# USER.md

## Work
- Backups run nightly at 02:30: restic to the storage box.
"""
# Long daily notes that say "backups" and "run" often, without saying when they run.
NOTE = """# 2026-11-0{day}

## Ops
- The backups run was slow again; backups run checks flagged the disk ({day}).
- Talked about backups and how the run log reads; nothing decided.
- Grocery list: oat milk, tomatoes, rice, lentils.
- Fixed the flaky sensor in the pipeline, poke interval {day} minutes.
"""
QUESTION = "when do the backups run"


def _heur(**values: float) -> SearchConfig:
    return replace(SearchConfig(), heuristics=replace(SearchHeuristics(), **values))


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[MemoryEngine]:
    yield from synced_engine(tmp_path, {"USER.md": USER, **{f"memory/2026-11-0{day}.md": NOTE.format(day=day)
                                                            for day in range(1, 5)}})


def _order(engine: MemoryEngine, settings: SearchConfig, mode: str = "hybrid") -> list[str]:
    assert engine.embedder is not None
    qvec = engine.embedder.embed_query(QUESTION) if mode != "keyword" else None
    request = SearchRequest(parse_query(QUESTION, date(2026, 11, 5)), mode, qvec, 6, 0.0, ("memory",))
    return [h.path for h in run_search(engine.store, settings, request)]


def test_off_by_default() -> None:
    assert SearchHeuristics().curated_prior == 0.0
    assert SearchHeuristics().curated_slot == 0.0


def test_the_prior_lifts_a_curated_line_above_notes_that_only_share_its_words(engine: MemoryEngine) -> None:
    # the notes repeat "backups" and "run": both legs put all four first (.73 against the line's .55)
    assert _order(engine, SearchConfig()).index("USER.md") == 4
    assert _order(engine, _heur(curated_prior=0.5))[0] == "USER.md"  # .55 × 1.5
    assert _order(engine, _heur(curated_prior=0.1)).index("USER.md") == 4  # a small prior: not enough
    assert _order(engine, _heur(curated_prior=0.5), mode="keyword")[0] == "USER.md"  # keyword .86 × 1.5


def test_the_slot_puts_the_best_curated_candidate_third(engine: MemoryEngine) -> None:
    assert _order(engine, _heur(curated_slot=0.3)).index("USER.md") == 2  # .55 ≥ .7 × .73
    assert _order(engine, _heur(curated_slot=0.1)) == _order(engine, SearchConfig())  # not near enough


ROWS = {k: _Row(k, path, "memory", 1, 1, f"line {k}", None)
        for k, path in ((1, "memory/2026-11-01.md"), (2, "memory/2026-11-02.md"), (3, "memory/notes.md"),
                        (4, "MEMORY.md"), (5, "USER.md"))}


def test_the_prior_multiplies_curated_scores_only() -> None:
    fused = [Fused(1, 0.30, 0.2, 0.5), Fused(2, 0.28, 0.2, 0.4), Fused(4, 0.25, 0.3, 0.1), Fused(3, 0.2, 0.1, 0.3)]
    out = apply_curated_prior(fused, ROWS, 0.3)
    assert [f.key for f in out] == [4, 1, 2, 3]
    assert out[0].score == pytest.approx(0.325)
    assert {f.key: f.score for f in out}[1] == 0.30  # a daily note's score is untouched
    # weigh applies it after importance, and off it changes nothing
    assert [f.key for f in weigh(_heur(curated_prior=0.3), _request(), fused, ROWS)] == [4, 1, 2, 3]
    assert weigh(SearchConfig(), _request(), fused, ROWS) == fused


def _request() -> SearchRequest:
    return SearchRequest(parse_query("heron", date(2026, 12, 4)), "hybrid", [1.0, 0.0], 6, 0.0, ("memory",))


def test_the_slot_takes_the_margin_relative_to_the_third_score() -> None:
    chosen = [Fused(1, 0.40, 0.2, 0.9), Fused(2, 0.30, 0.2, 0.6), Fused(3, 0.20, 0.1, 0.4), Fused(5, 0.17, 0.2, 0.1),
              Fused(4, 0.10, 0.1, 0.1)]
    assert [f.key for f in curated_slot(chosen, chosen, ROWS, 5, 0.1)] == [1, 2, 3, 5, 4]  # .17 < .9 × .20
    placed = curated_slot(chosen, chosen, ROWS, 5, 0.2)  # .17 ≥ .8 × .20
    assert [f.key for f in placed] == [1, 2, 5, 3, 4]
    assert [f.placed for f in placed] == ["", "", "curated", "", ""]  # above 3's higher score: it says so
    # a curated chunk already in the top 3 stays where it is
    top = [chosen[0], chosen[3], chosen[1], chosen[2]]
    assert curated_slot(top, top, ROWS, 4, 0.9) == top


def test_the_slot_finds_a_curated_candidate_the_raw_pool_left_out() -> None:
    # raw legs: the notes' keyword matches take the 3-wide raw pool; the curated chunk (5) has the best shown score
    # after the notes but no place in it
    raw_v = {1: 0.80, 2: 0.80, 3: 0.79, 5: 0.70}
    raw_k = {1: 1.0, 2: 0.9, 3: 0.8, 5: 0.0}
    cal_v = {1: 0.05, 2: 0.05, 3: 0.04, 5: 0.15}
    cal_k = {1: 0.50, 2: 0.45, 3: 0.40, 5: 0.0}
    leg = Legs(cal_k, cal_v, dict(raw_v), {}, {}, dict(ROWS), True, (raw_v, raw_k))
    base = replace(SearchHeuristics(), pool="raw", vector_lead=0.0)
    fused = fuse_scores(leg.vector, leg.keyword)
    off = pool(replace(SearchConfig(), heuristics=base), _request(), fused, leg, ROWS, 3)
    assert 5 not in [f.key for f in off]
    on = pool(replace(SearchConfig(), heuristics=replace(base, curated_slot=0.5)), _request(), fused, leg, ROWS, 3)
    assert [f.key for f in on] == [1, 2, 5]
