"""The keyword leg weighed by what it can see (``SearchHeuristics.keyword_evidence``, issue 26): an English
question over Chinese notes ranks by meaning, the keyword leg abstaining where it cannot read."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from engine.config import SearchConfig, SearchHeuristics
from engine.search.fusion import query_scripts, script_overlap
from engine.search.pipeline import Legs, SearchRequest, _Row, fuse, keyword_evidence
from engine.search.query import parse_query

QUESTION = "When did the last glacial period end?"
# 1: the answer, in Chinese only. 2: another Chinese paragraph whose English title is all BM25 can match.
ANSWER = "最后一次冰河期从距今七万四千年持续到更新世结束，距今一万一千六百年。欧洲西北部的冰盖随后退去。"
DECOY = "然而，由于他所作的其他声明，他的宗教观点仍然不确定。例如，在一九三七年发表的文章中（A Machine to End War），他写道。"
ROWS = {1: _Row(1, "memory/a.md", "memory", 1, 1, ANSWER, None), 2: _Row(2, "memory/b.md", "memory", 1, 1, DECOY, None)}
# Calibrated legs as e5 gives them cross-lingually: the vector leg prefers the answer but is sure of nothing
# (cosines the LoCoMo fit maps to ~.01), while BM25 relative to its best match gives the decoy's one word ~.57.
VECTOR = {1: 0.0095, 2: 0.0008}
KEYWORD = {2: 0.574}


def _request(text: str = QUESTION) -> SearchRequest:
    return SearchRequest(parse_query(text, date(2026, 12, 4)), "hybrid", [1.0, 0.0], 10, 0.0, ("memory",))


def _legs() -> Legs:
    return Legs(dict(KEYWORD), dict(VECTOR), dict(VECTOR), {}, {}, dict(ROWS), True)


def _ranked(settings: SearchConfig, req: SearchRequest | None = None) -> list[int]:
    req = req or _request()
    leg = _legs()
    leg = replace(leg, evidence=keyword_evidence(settings, req, leg, ROWS))
    return [f.key for f in fuse(settings, req, leg)]


def _with(evidence: str) -> SearchConfig:
    return replace(SearchConfig(), heuristics=replace(SearchHeuristics(), keyword_evidence=evidence))


def test_an_english_question_over_chinese_notes_ranks_by_meaning() -> None:
    # keyword_evidence = "script": the keyword leg cannot read either note (its letters are Chinese but for a
    # title), so it abstains and the vector leg's order stands. Before the SCRIPT_NONE floor the title kept
    # .2 of the keyword weight and the decoy won (.046 against .0095).
    settings = _with("script")
    assert _ranked(settings) == [1, 2]
    leg = _legs()
    fused = {f.key: f for f in fuse(settings, _request(), replace(leg, evidence=keyword_evidence(
        settings, _request(), leg, ROWS)))}
    assert fused[2].text_weight == 0.0 and fused[2].keyword == pytest.approx(0.574)  # shown, not counted
    assert fused[1].score == pytest.approx(0.7 * VECTOR[1])  # its vector part, at OpenClaw's weight


def test_openclaws_fixed_weights_let_one_title_word_outvote_the_meaning() -> None:
    # keyword_evidence = "off" (OpenClaw's fixed weights): 0.3·.574 beats 0.7·.0095; the shipped default
    # ("script", 2026-12-04-fusion.md) ranks by meaning
    assert _ranked(_with("off")) == [2, 1]
    assert SearchConfig().heuristics.keyword_evidence == "script"
    assert _ranked(SearchConfig()) == [1, 2]


def test_a_few_latin_words_do_not_make_a_chinese_note_readable() -> None:
    en = query_scripts(QUESTION)
    assert script_overlap(en, DECOY) == 0.0
    assert script_overlap(en, ANSWER) == 0.0
    assert script_overlap(en, "Half English, 一半中文的笔记，有一些英文的词 and some more words here.") > 0.0


def test_where_the_keyword_leg_can_read_it_keeps_openclaws_weights() -> None:
    english = {1: _Row(1, "memory/a.md", "memory", 1, 1, "The last glacial period ended 11,600 years ago.", None),
               2: _Row(2, "memory/b.md", "memory", 1, 1, "We ended the sprint early.", None)}
    leg = replace(_legs(), rows=english)
    for evidence in ("script", "best"):
        settings = _with(evidence)
        ev = keyword_evidence(settings, _request(), leg, english)
        assert ev is not None and ev[2] > 0.0
    assert keyword_evidence(_with("script"), _request(), leg, english) == {1: 1.0, 2: 1.0}


def test_a_chinese_bigram_spanning_two_matched_words_counts_as_matched() -> None:
    from engine.search.pipeline import bridged

    terms = parse_query("谁带领黑豹队", date(2026, 12, 4)).terms
    assert terms == ("谁带", "带领", "领黑", "黑豹", "豹队")
    assert bridged(terms, {"带领", "黑豹", "豹队"}) == {"带领", "领黑", "黑豹", "豹队"}
    assert bridged(terms, {"黑豹", "豹队"}) == {"黑豹", "豹队"}  # 领黑's 领 is in no found bigram
    assert bridged(("the", "x1", "panthers"), {"the", "panthers"}) == {"the", "panthers"}  # words: never


def test_the_best_share_weighs_a_weak_best_match_down() -> None:
    # "rent" and "year" are in no note the keyword leg found; its best match holds one rare-ish word
    rows = {1: _Row(1, "memory/a.md", "memory", 1, 1, "Delivery next Wednesday.", None),
            2: _Row(2, "memory/b.md", "memory", 1, 1, "房租明年涨到七千二。", None)}
    leg = Legs({1: 0.574}, {1: 0.02, 2: 0.07}, {1: 0.02, 2: 0.07}, {}, {}, rows, True)
    req = _request("How much will the rent go up next year?")
    script = keyword_evidence(_with("script"), req, leg, rows)
    best = keyword_evidence(_with("best"), req, leg, rows)
    assert script is not None and best is not None
    assert script[1] == 1.0 and script[2] == 0.0
    assert 0.0 < best[1] < 0.5 and best[2] == 0.0
    ranked = [f.key for f in fuse(_with("best"), req, replace(leg, evidence=best))]
    assert ranked == [2, 1]
    assert [f.key for f in fuse(_with("script"), req, replace(leg, evidence=script))] == [1, 2]


def test_the_evals_name_any_heuristics_variant() -> None:
    import sys
    from pathlib import Path

    bench = Path(__file__).resolve().parents[1] / "bench"
    sys.path.insert(0, str(bench))
    try:
        import _eval_common
        import xquad_folds
    finally:
        sys.path.remove(str(bench))
    base = SearchHeuristics()
    assert _eval_common.variant_heuristics(base, "best:0.5") == replace(base, keyword_evidence="best",
                                                                        evidence_full=0.5)
    assert _eval_common.variant_heuristics(base, "slot_by_score=1+keyword_evidence=script") == replace(
        base, slot_by_score=True, keyword_evidence="script")
    assert _eval_common.variant_heuristics(base, "pool-raw") == replace(base, pool="raw")
    assert [xquad_folds.fold_of(f"memory/a{a:03d}-p001.md") for a in (0, 4, 5, 47)] == [0, 4, 0, 2]


def test_a_note_of_the_day_the_query_names_is_read_in_any_script() -> None:
    # "什么 昨天" over English notes: the leg's date lift reads yesterday's note by its date, not its words, so the
    # note keeps the keyword weight (it scored 0 once the leg abstained for an unreadable script: no result at all)
    rows = {1: _Row(1, "memory/2026-10-21.md", "memory", 1, 1, "Reviewed the Heron release plan.", None),
            2: _Row(2, "memory/2026-10-20.md", "memory", 1, 1, "Dentist at 9.", None)}
    leg = Legs({1: 0.55}, {1: 0.001, 2: 0.002}, {1: 0.001, 2: 0.002}, {}, {}, rows, True)
    req = _request("什么 昨天")
    assert keyword_evidence(_with("script"), req, leg, rows) == {1: 0.0, 2: 0.0}
    ev = keyword_evidence(_with("script"), req, leg, rows, dated={1: 0.55})
    assert ev == {1: 1.0, 2: 0.0}
    assert [f.key for f in fuse(_with("script"), req, replace(leg, evidence=ev))] == [1, 2]
