"""Score fusion, BM25 normalisation, decay and MMR, against hand-computed values."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from engine.api import MemoryEngine
from engine.config import load_config
from engine.search.dates import file_date
from engine.search.fusion import decay_factor, fuse_scores, mmr_order, normalize_bm25


def test_bm25_normalised_relative_to_best() -> None:
    assert normalize_bm25({1: -8.0, 2: -4.0, 3: -2.0}) == {1: 1.0, 2: 0.5, 3: 0.25}


def test_bm25_scores_do_not_saturate() -> None:
    scores = normalize_bm25({i: -(10.0 - i) for i in range(9)})
    assert len(set(scores.values())) == 9


def test_bm25_empty_and_zero() -> None:
    assert normalize_bm25({}) == {}
    assert normalize_bm25({1: 0.0}) == {1: 0.0}


@pytest.mark.parametrize(
    "vector,keyword,wv,wt,expected",
    [
        ({1: 0.8}, {1: 0.5}, 0.7, 0.3, {1: 0.7 * 0.8 + 0.3 * 0.5}),
        ({1: 0.8}, {2: 1.0}, 0.7, 0.3, {1: 0.56, 2: 0.3}),
        ({1: -0.2}, {1: 1.0}, 0.7, 0.3, {1: 0.3}),
        ({1: 0.6}, {1: 0.4}, 1.0, 1.0, {1: 0.5}),
    ],
)
def test_weighted_fusion(vector: dict[int, float], keyword: dict[int, float], wv: float, wt: float,
                         expected: dict[int, float]) -> None:
    fused = {f.key: f.score for f in fuse_scores(vector, keyword, wv, wt)}
    assert fused == pytest.approx(expected)


def test_fusion_keeps_parts_and_sorts() -> None:
    fused = fuse_scores({1: 0.9, 2: 0.1}, {2: 1.0}, 0.7, 0.3)
    assert [f.key for f in fused] == [1, 2]
    assert fused[1].vector == pytest.approx(0.1) and fused[1].keyword == 1.0


def test_fusion_without_vector_leg() -> None:
    fused = fuse_scores(None, {3: 0.4, 4: 1.0})
    assert [(f.key, f.score, f.vector) for f in fused] == [(4, 1.0, None), (3, 0.4, None)]


def test_fusion_independent_of_order() -> None:
    a = fuse_scores({1: 0.5, 2: 0.5}, {1: 0.2, 2: 0.2})
    b = fuse_scores({2: 0.5, 1: 0.5}, {2: 0.2, 1: 0.2})
    assert a == b


@pytest.mark.parametrize(
    "path,is_dated",
    [("memory/2026-01-12.md", True), ("memory/2026-01-12-release.md", True), ("MEMORY.md", False),
     ("memory/projects/heron.md", False), ("memory/2026-13-45.md", False)],
)
def test_file_date(path: str, is_dated: bool) -> None:
    assert (file_date(path) is not None) == is_dated


def test_decay_half_life() -> None:
    today = date(2026, 2, 11)
    assert decay_factor("memory/2026-01-12.md", 30, today) == pytest.approx(0.5)
    assert decay_factor("memory/2026-02-11.md", 30, today) == 1.0
    assert decay_factor("memory/2026-03-01.md", 30, today) == 1.0  # dated after today: not decayed
    assert decay_factor("MEMORY.md", 30, today) == 1.0


def test_mmr_prefers_novelty() -> None:
    items = [(1, 1.0, "postgres pool exhausted"), (2, 0.95, "postgres pool exhausted again"),
             (3, 0.9, "violin lessons thursday")]
    assert mmr_order(items, 0.5) == [1, 3, 2]
    assert mmr_order(items, 1.0) == [1, 2, 3]


@pytest.mark.parametrize(
    "query,expected",
    [
        ("What did we do on 2026-11-10?", {(2026, 11, 10)}),
        ("what happened on October 14", {(None, 10, 14)}),
        ("notes from 7 October", {(None, 10, 7)}),
        ("the 3rd of Nov, 2026", {(2026, 11, 3)}),
        ("Sept 9", {(None, 9, 9)}),
        ("may I ask something", set()),
        ("version 2.4.1", set()),
        ("2026-13-45", set()),
    ],
)
def test_query_dates(query: str, expected: set[tuple[int | None, int, int]]) -> None:
    from engine.search.dates import query_dates

    assert query_dates(query) == expected


def test_date_matches() -> None:
    from engine.search.dates import date_matches

    assert date_matches("memory/2026-10-14.md", {(None, 10, 14)})
    assert date_matches("memory/2026-10-14-slug.md", {(2026, 10, 14)})
    assert not date_matches("memory/2026-10-14.md", {(2025, 10, 14)})
    assert not date_matches("MEMORY.md", {(None, 10, 14)})


@pytest.mark.parametrize(
    "query,expected",
    [
        ("What did Nate do in July 2023?", {(2023, 7)}),
        ("during Sept, 2022", {(2022, 9)}),
        ("notes from 2026-11", {(2026, 11)}),
        ("on 14 July 2023", set()),
        ("2026-11-10", set()),
        ("no months here", set()),
    ],
)
def test_query_months(query: str, expected: set[tuple[int, int]]) -> None:
    from engine.search.dates import query_months

    assert query_months(query) == expected


@pytest.mark.parametrize("today,factor", [("2026-01-31", 0.5), ("2026-03-02", 0.25), ("2026-01-01", 1.0)])
def test_decay_counts_from_the_clocks_today(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, today: str,
                                            factor: float) -> None:
    """A search's recency decay reads the one clock: with MEMDECK_TODAY pinned, a note dated 30 days before
    that day scores half (half-life 30), whatever the system date is."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-01-01.md").write_text("# 2026-01-01\n\n- the heron migration ran overnight\n")
    (ws / "MEMORY.md").write_text("# Memory\n\n- heron is the billing service\n")
    monkeypatch.setenv("MEMDECK_TODAY", today)
    scores = {}
    for decay in (False, True):
        cfg = load_config(workspace=ws, home=tmp_path / f"home-{decay}", overrides={
            "embedding": {"provider": "none"}, "search": {"decay": decay, "half_life_days": 30}})
        with MemoryEngine(cfg) as eng:
            eng.sync()
            hits = eng.search("heron", mode="keyword", min_score=0.0).results
        scores[decay] = {h.path: h.score for h in hits}
    assert scores[True]["memory/2026-01-01.md"] == pytest.approx(factor * scores[False]["memory/2026-01-01.md"])
    assert scores[True]["MEMORY.md"] == pytest.approx(scores[False]["MEMORY.md"])  # undated: not decayed


def test_evidence_weighted_fusion_is_openclaws_at_full_evidence_and_abstains_at_none() -> None:
    from pytest import approx

    vector, keyword = {1: 0.6, 2: 0.2}, {2: 1.0}
    fixed = {f.key: f.score for f in fuse_scores(vector, keyword)}
    full = fuse_scores(vector, keyword, evidence={1: 1.0, 2: 1.0})
    assert {f.key: f.score for f in full} == approx(fixed)
    assert all(f.text_weight == approx(0.3) and f.vector_weight == approx(0.7) for f in full)
    # the keyword leg cannot read chunk 2: its keyword part counts for nothing, the vector part keeps OpenClaw's
    # 0.7 (lifted to full weight, every unreadable chunk outranked the readable ones the query matched)
    blind = {f.key: f for f in fuse_scores(vector, keyword, evidence={1: 1.0, 2: 0.0})}
    assert blind[2].score == approx(0.7 * 0.2) and blind[2].text_weight == 0.0 and blind[2].keyword == 1.0
    assert blind[2].vector_weight == approx(0.7)
    assert blind[1].score == approx(0.7 * 0.6)
    # half the evidence: the keyword weight halves (0.15), the vector weight stays
    half = {f.key: f for f in fuse_scores(vector, keyword, evidence={2: 0.5})}
    assert half[2].text_weight == approx(0.15) and half[2].score == approx(0.7 * 0.2 + 0.15 * 1.0)
    assert half[1].score == approx(0.7 * 0.6)  # a key without evidence: its keyword part counts for nothing
    # the leg matched nothing (no evidence at all): it abstains, the score is the vector part
    none = {f.key: f for f in fuse_scores(vector, {}, evidence={})}
    assert none[1].score == approx(0.6) and none[1].vector_weight == 1.0 and none[1].text_weight == 0.0
    # OpenClaw's fixed weights carry no share
    assert all(f.text_weight is None for f in fuse_scores(vector, keyword))


def test_script_overlap_sees_the_query_language() -> None:
    from engine.search.fusion import query_scripts, script_overlap

    en = query_scripts("In what year did the Panthers win?")
    assert en == frozenset({"latin"})
    assert script_overlap(en, "The Panthers won in 2016.") == 1.0
    zh = "卡罗莱纳黑豹队在2016年的超级碗比赛中输给了丹佛野马队，Cam Newton 是四分卫。"
    assert script_overlap(en, zh) < 0.25
    assert script_overlap(query_scripts("黑豹队哪年赢了"), zh) == 1.0
    ru = "Пантеры проиграли в 2016 году."
    assert script_overlap(en, ru) == 0.0
    assert script_overlap(query_scripts("Когда проиграли Пантеры?"), ru) == 1.0
    assert script_overlap(en, "2016 — 24:10") == 1.0  # no letters: nothing the leg cannot read
    assert script_overlap(query_scripts("2016"), zh) == 1.0


def test_script_shares_reads_each_script_whatever_the_fast_path() -> None:
    from pytest import approx

    from engine.search.fusion import script_shares

    assert script_shares("Plain ASCII text") == {"latin": 1.0}
    assert script_shares("Café — naïve → ok") == {"latin": 1.0}  # non-ASCII, yet no other script: one search
    assert script_shares("— 12 → 3 —") == {}  # no letters at all
    mixed = script_shares("Шта сам купио јуче — ok")
    assert mixed["cyrillic"] == approx(15 / 17) and mixed["latin"] == approx(2 / 17)
    zh = script_shares("冰河期 End")  # a CJK character weighs 3 letters
    assert zh == {"latin": approx(3 / 12), "cjk": approx(9 / 12)}
    assert script_shares("冰河期 End") == zh  # the second read (cached) is the same
