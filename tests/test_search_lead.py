"""The vector leg's confident favourite leads (``SearchHeuristics.vector_lead``, issue 26): a curated line the
vector leg ranks far ahead of every other candidate is not pushed below daily notes that hold the question's
words without saying what it asks."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from engine.api import MemoryEngine
from engine.config import SearchConfig, SearchHeuristics
from engine.search.calibration import table_from
from engine.search.fusion import Fused, fuse_scores
from engine.search.pipeline import (
    Hit,
    Legs,
    SearchHooks,
    SearchRequest,
    _Row,
    keyword_evidence,
    pool,
    run_search,
    vector_slot,
)
from engine.search.query import parse_query
from tests.helpers import synced_engine

USER = """# USER.md

## Family
- Partner: Mirela, a nurse; works night shifts about twice a week.
- Son: Luka (9), learns the cello at the music school on Wednesdays.
- Daughter: Ana (5), goes to the Kita until 15:00.
"""
NOTE = """# 2026-11-0{day}

## Home
- The kid is learning songs for the summer party; Ana sang them all evening ({day}).
- Grocery list: oat milk, tomatoes, rice, lentils.
- Luka wants to try a second instrument; the kid is learning fast.
- Fixed the flaky sensor in the pipeline, poke interval {day} minutes.
"""
QUESTION = "what instrument is the kid learning"
# What a model that knows a cello is an instrument makes of the question: near the curated line, far from the
# notes. The hashing embedder has no meaning, so the query vector is its vector of the line's own words.
MEANING = "Luka cello music school"
# Calibrated legs shaped as e5's are on LoCoMo's fit: a steep vector map (the curated line's cosine → ~.22,
# a note's → ~.02) and a keyword map that gives the notes holding every question word ~.92, the line ~.35.
CALIBRATION = table_from({"models": {"hash": {"window": {"a": 6.0, "b": -5.0}, "line": {"a": 6.0, "b": -5.0},
                                              "leg": {"a": 6.0, "b": -5.0}}},
                          "keyword": {"leg": {"a": 5.0, "b": -2.5}}}, "hash")


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[MemoryEngine]:
    yield from synced_engine(tmp_path, {"USER.md": USER, **{f"memory/2026-11-0{day}.md": NOTE.format(day=day)
                                                            for day in range(1, 5)}})


def _run(engine: MemoryEngine, settings: SearchConfig) -> list[Hit]:
    assert engine.embedder is not None
    request = SearchRequest(parse_query(QUESTION, date(2026, 12, 4)), "hybrid", engine.embedder.embed_query(MEANING),
                            6, 0.0, ("memory",), model="hash")
    hits = run_search(engine.store, settings, request, hooks=SearchHooks(calibration=CALIBRATION))
    for h in hits:  # OpenClaw's formula and both parts stay the score's explanation
        assert h.vector_score is not None
        assert h.score == pytest.approx(h.vector_weight * h.vector_score + h.text_weight * h.text_score, abs=1e-9)
    return hits


def _hits(engine: MemoryEngine, settings: SearchConfig) -> list[str]:
    return [h.citation for h in _run(engine, settings)]


def test_a_hit_placed_above_a_higher_score_says_so(engine: MemoryEngine) -> None:
    hits = _run(engine, SearchConfig())
    assert hits[0].citation == "USER.md#L5" and hits[0].score < hits[1].score
    assert hits[0].placed == "vector" and hits[0].to_json()["placed"] == "vector"
    assert not any(h.placed for h in hits[1:])  # in score order: nothing to explain
    assert all("placed" not in h.to_json() for h in hits[1:])
    # placed 3rd by the slot (lead off), still above a lower-ranked higher score? only then it says so
    off = _run(engine, replace(SearchConfig(), heuristics=replace(SearchHeuristics(), vector_lead=0.0)))
    line = next(h for h in off if h.citation == "USER.md#L5")
    below = off[off.index(line) + 1:]
    assert (line.placed == "vector") == any(h.score > line.score for h in below)


def test_a_curated_line_the_vector_leg_is_sure_of_leads_notes_sharing_the_questions_words(
        engine: MemoryEngine) -> None:
    # the default: the notes hold all three question words and the line one ("learns"), so the fused score
    # puts the notes first (.29 against .26); the vector leg leads its next candidate by ~.2, so the line it
    # is sure of holds the first place
    ranked = _hits(engine, SearchConfig())
    assert ranked[0] == "USER.md#L5"
    assert set(ranked[1:3]) <= {f"memory/2026-11-0{d}.md#L1-L7" for d in range(1, 5)}
    # without the lead the slot keeps it third, below two notes that only share its words
    off = _hits(engine, replace(SearchConfig(), heuristics=replace(SearchHeuristics(), vector_lead=0.0)))
    assert off.index("USER.md#L5") == 2


# A favourite (4) whose vector part leads the next (2: .06) by .19; the keyword leg outvotes it (shown 1, 2, 4, 3).
CAL_V = {1: 0.05, 2: 0.06, 3: 0.04, 4: 0.25}
CAL_K = {1: 0.57, 2: 0.50, 3: 0.45, 4: 0.0}
RAW_V = {1: 0.80, 2: 0.81, 3: 0.79, 4: 0.86}
RAW_K = {1: 1.0, 2: 0.9, 3: 0.8, 4: 0.0}
ROWS = {k: _Row(k, f"memory/note-{k}.md", "memory", 1, 3, f"line {k}\nmore\nend", None) for k in (1, 2, 3, 4)}


def _pool(lead: float, calibrated: bool = True, want: int = 4) -> list[int]:
    leg = Legs(dict(CAL_K), dict(CAL_V), dict(RAW_V), {}, {}, dict(ROWS), calibrated,
               (dict(RAW_V), dict(RAW_K)) if calibrated else None)
    settings = replace(SearchConfig(), heuristics=replace(SearchHeuristics(), pool="raw-slot", vector_lead=lead))
    request = SearchRequest(parse_query("heron", date(2026, 12, 4)), "hybrid", [1.0, 0.0], 6, 0.0, ("memory",))
    return [f.key for f in pool(settings, request, fuse_scores(leg.vector, leg.keyword), leg, ROWS, want)]


def test_the_lead_is_a_margin_over_the_vector_legs_second() -> None:
    assert _pool(0.0) == [1, 2, 4, 3]  # the slot (3rd)
    assert _pool(0.19) == [4, 1, 2, 3]  # leads by .19: first
    assert _pool(0.2) == [1, 2, 4, 3]  # not by .2: the slot
    assert _pool(0.1, want=1) == [4]  # first even when the pool is cut to one


def test_an_uncalibrated_search_has_no_lead() -> None:
    # raw cosines live in a range nobody fitted: a margin on them means nothing, so the slot alone applies
    assert _pool(0.1, calibrated=False) == _pool(0.0, calibrated=False)


def test_a_favourite_in_second_place_moves_up_only_with_the_lead() -> None:
    chosen = [Fused(1, 0.3, 0.1, 0.7), Fused(2, 0.28, 0.4, 0.1), Fused(3, 0.2, 0.1, 0.3)]
    assert [f.key for f in vector_slot(chosen, chosen, 3, 3)] == [1, 2, 3]
    assert [f.key for f in vector_slot(chosen, chosen, 3, 3, lead=0.3)] == [2, 1, 3]
    placed = vector_slot(chosen, chosen, 3, 3, lead=0.3)
    assert [f.placed for f in placed] == ["vector", "", ""]  # above 1's higher score
    assert all(not f.placed for f in vector_slot(chosen, chosen, 3, 3))  # nothing moved
    assert [f.key for f in vector_slot(chosen, chosen, 3, 3, lead=0.31)] == [1, 2, 3]


def test_chunk_evidence_weighs_each_chunk_by_its_own_share_of_the_question() -> None:
    rows = {1: _Row(1, "memory/a.md", "memory", 1, 1, "the heron nested by the weir", None),
            2: _Row(2, "memory/b.md", "memory", 1, 1, "a heron at the weir, the kingfisher nested there too", None),
            3: _Row(3, "memory/c.md", "memory", 1, 1, "nothing about birds", None)}
    leg = Legs({1: 0.5, 2: 0.6}, {1: 0.1, 2: 0.1, 3: 0.2}, None, {}, {}, rows, True)
    request = SearchRequest(parse_query("heron kingfisher", date(2026, 12, 4)), "hybrid", [1.0, 0.0], 6, 0.0,
                            ("memory",))
    settings = replace(SearchConfig(), heuristics=replace(SearchHeuristics(), keyword_evidence="chunk"))
    evidence = keyword_evidence(settings, request, leg, rows)
    assert evidence is not None
    assert evidence[2] == pytest.approx(1.0)  # holds both terms
    assert 0.0 < evidence[1] < 1.0  # holds "heron" only: its share of the terms' IDF
    half = replace(settings, heuristics=replace(settings.heuristics, evidence_full=0.3))
    assert keyword_evidence(half, request, leg, rows)[1] == pytest.approx(1.0)  # type: ignore[index]
