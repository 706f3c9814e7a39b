"""Tests of the retrieval eval harness: conversion, evidence ids, metrics, and an end-to-end LoCoMo smoke run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import _eval_common as common  # noqa: E402
import eval_locomo  # noqa: E402
import eval_xquad  # noqa: E402


@dataclass(frozen=True)
class FakeHit:
    """Just the fields the scorer reads."""

    path: str
    start_line: int
    end_line: int
    snippet_start_line: int
    snippet_end_line: int
    snippet: str


# -- dates and file names ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1:56 pm on 8 May, 2023", date(2023, 5, 8)),
        ("12:48 am on 1 February, 2023", date(2023, 2, 1)),
        ("11:01 am on 17 December, 2022", date(2022, 12, 17)),
        ("7:31 pm on 21 January, 2022", date(2022, 1, 21)),
        ("10:00 am on 3 Sept. 2021", date(2021, 9, 3)),
        ("on 30 june 2020", date(2020, 6, 30)),
    ],
)
def test_parse_session_date(text: str, expected: date) -> None:
    assert eval_locomo.parse_session_date(text) == expected


@pytest.mark.parametrize("text", ["", "yesterday at noon", "1:56 pm on 8 Smarch, 2023", "8 May"])
def test_parse_session_date_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        eval_locomo.parse_session_date(text)


def test_session_files_disambiguates_same_day_and_skips_empty_sessions() -> None:
    conv = {
        "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "x"}],
        "session_1_date_time": "1:00 pm on 8 May, 2023",
        "session_2": [{"speaker": "A", "dia_id": "D2:1", "text": "x"}],
        "session_2_date_time": "9:00 pm on 8 May, 2023",
        "session_10": [{"speaker": "A", "dia_id": "D10:1", "text": "x"}],
        "session_10_date_time": "9:00 pm on 8 May, 2023",
        "session_3": [],
        "session_3_date_time": "9:00 pm on 9 May, 2023",
        "session_4_date_time": "9:00 pm on 10 May, 2023",
        "session_5": [{"speaker": "A", "dia_id": "D5:1", "text": "x"}],
        "session_5_date_time": "no date here",
    }
    assert eval_locomo.session_files(conv) == [
        (1, "1:00 pm on 8 May, 2023", "memory/2023-05-08.md"),
        (2, "9:00 pm on 8 May, 2023", "memory/2023-05-08-2.md"),
        (5, "no date here", "memory/session-5.md"),
        (10, "9:00 pm on 8 May, 2023", "memory/2023-05-08-3.md"),
    ]


@pytest.mark.parametrize(
    ("turn", "expected"),
    [
        ({"speaker": "Caroline", "text": "Hi Mel!"}, "Caroline: Hi Mel!"),
        ({"speaker": "Mel", "text": "Look", "blip_caption": "a photo of a dog"}, "Mel: Look [image: a photo of a dog]"),
        ({"speaker": "Jon", "text": "line one\nline  two\n"}, "Jon: line one line two"),
        ({"speaker": "Jon", "text": "", "blip_caption": "a cake"}, "Jon: [image: a cake]"),
        ({"speaker": "Jon", "text": "ok", "blip_caption": None}, "Jon: ok"),
    ],
)
def test_turn_line(turn: dict[str, str], expected: str) -> None:
    assert eval_locomo.turn_line(turn) == expected


# -- evidence ids ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("raw", "ids", "normalised", "unparseable"),
    [
        (["D1:3"], ("D1:3",), (), ()),
        (["D8:6; D9:17"], ("D8:6", "D9:17"), ("D8:6; D9:17",), ()),
        (["D1:18", "D", "D1:20"], ("D1:18", "D1:20"), (), ("D",)),
        (["D:11:26"], ("D11:26",), ("D:11:26",), ()),
        (["D:3"], (), (), ("D:3",)),
        (["D1:05"], ("D1:5",), ("D1:05",), ()),
        (["D2:4", "D2:4"], ("D2:4",), (), ()),
        (["D3:1,D3:2"], ("D3:1", "D3:2"), ("D3:1,D3:2",), ()),
        ([""], (), (), ("",)),
    ],
)
def test_normalize_evidence(
    raw: list[str], ids: tuple[str, ...], normalised: tuple[str, ...], unparseable: tuple[str, ...]
) -> None:
    got = eval_locomo.normalize_evidence(raw)
    assert (got.ids, got.normalised, got.unparseable) == (ids, normalised, unparseable)


def test_build_conversation_maps_turns_to_lines_and_counts_bad_evidence() -> None:
    sample = {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bob",
            "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "hello"},
                          {"speaker": "Bob", "dia_id": "D1:2", "text": "hi", "blip_caption": "a wave"}],
            "session_1_date_time": "1:00 pm on 2 March, 2023",
            "session_2": [{"speaker": "Bob", "dia_id": "D2:1", "text": "again"}],
            "session_2_date_time": "1:00 pm on 4 March, 2023",
        },
        "qa": [
            {"question": "q0", "evidence": ["D1:2; D2:1"], "category": 4},
            {"question": "q1", "evidence": ["D9:9"], "category": 1},
            {"question": "q2", "evidence": [], "category": 2},
            {"question": "q3", "evidence": ["D1:1"], "category": 5},
            {"question": "q4", "evidence": ["D", "D1:1"], "category": 3},
        ],
    }
    conv = eval_locomo.build_conversation(sample)
    assert conv.files == {"memory/2023-03-02.md": "Ann: hello\nBob: hi [image: a wave]\n",
                          "memory/2023-03-04.md": "Bob: again\n"}
    assert conv.locations["D1:2"] == ("memory/2023-03-02.md", 2)
    assert [(q.index, q.category, q.gold) for q in conv.questions] == [
        (0, "4", (("memory/2023-03-02.md", 2), ("memory/2023-03-04.md", 1))),
        (4, "3", (("memory/2023-03-02.md", 1),)),
    ]
    stats = conv.evidence.to_json()
    assert (stats["normalised"], stats["unparseable"], stats["unknown"]) == (1, 1, 1)
    assert (stats["questions_without_evidence"], stats["questions_skipped"]) == (1, 2)


# -- metrics ---------------------------------------------------------------------------------------------
GOLD = (("memory/a.md", 5), ("memory/b.md", 2))
RANKING = [
    FakeHit("memory/b.md", 3, 10, 3, 4, "x" * 100),  # wrong lines of a gold file
    FakeHit("memory/a.md", 1, 8, 1, 3, "x" * 200),  # chunk holds a.md:5, snippet does not
    FakeHit("memory/a.md", 4, 6, 5, 5, "x" * 300),  # both hold a.md:5
    FakeHit("memory/c.md", 1, 99, 1, 99, "x" * 400),  # another file
    FakeHit("memory/c.md", 2, 2, 2, 2, "x" * 500),
    FakeHit("memory/b.md", 1, 2, 2, 2, "x" * 600),  # rank 6: holds b.md:2, outside the top 5
]


@pytest.mark.parametrize(
    ("hits", "gold", "expected"),
    [
        (RANKING, GOLD, {"hit@1": 0.0, "hit@3": 1.0, "hit@5": 1.0, "snip@1": 0.0, "snip@5": 1.0,
                         "mrr@10": 0.5, "cover@5": 0.5, "chars@5": 1500.0}),
        (RANKING, (("memory/b.md", 2),), {"hit@1": 0.0, "hit@3": 0.0, "hit@5": 0.0, "snip@1": 0.0, "snip@5": 0.0,
                                          "mrr@10": 1 / 6, "cover@5": 0.0, "chars@5": 1500.0}),
        (RANKING[2:], GOLD, {"hit@1": 1.0, "hit@3": 1.0, "hit@5": 1.0, "snip@1": 1.0, "snip@5": 1.0,
                             "mrr@10": 1.0, "cover@5": 1.0, "chars@5": 1800.0}),
        ([], GOLD, {"hit@1": 0.0, "hit@3": 0.0, "hit@5": 0.0, "snip@1": 0.0, "snip@5": 0.0,
                    "mrr@10": 0.0, "cover@5": 0.0, "chars@5": 0.0}),
    ],
)
def test_score_results(hits: list[FakeHit], gold: tuple[tuple[str, int], ...], expected: dict[str, float]) -> None:
    got = eval_locomo.score_results(hits, gold)
    assert got == pytest.approx(expected)


def test_mrr_only_counts_the_top_ten() -> None:
    miss = FakeHit("memory/z.md", 1, 1, 1, 1, "")
    hit = FakeHit("memory/a.md", 5, 5, 5, 5, "")
    assert eval_locomo.score_results([miss] * 9 + [hit], GOLD)["mrr@10"] == pytest.approx(0.1)
    assert eval_locomo.score_results([miss] * 10 + [hit], GOLD)["mrr@10"] == 0.0


@pytest.mark.parametrize(
    ("ranked", "gold", "k", "expected"),
    [
        ([common.Ranged("f", 1, 3)], [("f", 1), ("f", 2), ("f", 7)], 5, 2 / 3),
        ([common.Ranged("f", 1, 3), common.Ranged("f", 7, 7)], [("f", 1), ("f", 7)], 1, 0.5),
        ([common.Ranged("g", 1, 9)], [("f", 1)], 5, 0.0),
        ([common.Ranged("f", 1, 9)], [("f", 2), ("f", 2)], 5, 1.0),  # duplicates count once
        ([common.Ranged("f", 1, 9)], [], 5, 0.0),
    ],
)
def test_coverage(ranked: list[common.Ranged], gold: list[tuple[str, int]], k: int, expected: float) -> None:
    assert common.coverage(ranked, gold, k) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [([1.0, 2.0, 3.0, 4.0], 50, 2.5), ([1.0, 2.0, 3.0, 4.0], 95, 3.85), ([7.0], 95, 7.0), ([], 50, 0.0),
     ([3.0, 1.0, 2.0], 0, 1.0), ([3.0, 1.0, 2.0], 100, 3.0)],
)
def test_percentile(values: list[float], q: float, expected: float) -> None:
    assert common.percentile(values, q) == pytest.approx(expected)


def test_summarize_by_category() -> None:
    metrics = dict.fromkeys(eval_locomo.METRICS, 0.0)
    rows = [{"category": "1", **metrics, "hit@1": 1.0, "chars@5": 100.0},
            {"category": "1", **metrics, "chars@5": 300.0},
            {"category": "4", **metrics, "hit@1": 1.0, "mrr@10": 0.5}]
    got = eval_locomo.summarize(rows)
    assert got["overall"]["n"] == 3
    assert got["overall"]["hit@1"] == pytest.approx(2 / 3, abs=1e-4)
    assert got["overall"]["chars@5"] == pytest.approx(133.3)
    assert got["by_category"]["1"] == {**dict.fromkeys(eval_locomo.METRICS, 0.0), "n": 2, "hit@1": 0.5,
                                       "chars@5": 200.0}
    assert got["by_category"]["2"]["n"] == 0
    assert got["by_category"]["4"]["mrr@10"] == 0.5


@pytest.mark.parametrize(
    ("text", "expected"),
    [("keyword", ["keyword"]), ("keyword, hybrid,keyword", ["keyword", "hybrid"]), ("vector", ["vector"])],
)
def test_parse_modes(text: str, expected: list[str]) -> None:
    assert common.parse_modes(text) == expected


@pytest.mark.parametrize("text", ["", "bm25", "keyword,semantic"])
def test_parse_modes_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        common.parse_modes(text)


def test_write_if_changed_keeps_mtime(tmp_path: Path) -> None:
    path = tmp_path / "memory" / "x.md"
    assert common.write_if_changed(path, "a\n")
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    assert not common.write_if_changed(path, "a\n")
    assert path.stat().st_mtime_ns == 1_000_000_000
    assert common.write_if_changed(path, "b\n")
    assert path.read_text() == "b\n"


def test_sync_workspace_files_removes_stale_notes(tmp_path: Path) -> None:
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "old.md").write_text("old\n")
    got = common.sync_workspace_files(tmp_path, {"memory/new.md": "new\n"})
    assert got == {"written": 1, "removed": 1, "files": 1}
    assert sorted(p.name for p in (tmp_path / "memory").iterdir()) == ["new.md"]


# -- XQuAD -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("paths", "expected"),
    [
        (["memory/g.md"], {"hit@1": 1.0, "hit@5": 1.0, "mrr@10": 1.0}),
        (["memory/x.md", "memory/x.md", "memory/g.md"], {"hit@1": 0.0, "hit@5": 1.0, "mrr@10": 1 / 3}),
        (["memory/x.md"] * 5 + ["memory/g.md"], {"hit@1": 0.0, "hit@5": 0.0, "mrr@10": 1 / 6}),
        (["memory/x.md"] * 10 + ["memory/g.md"], {"hit@1": 0.0, "hit@5": 0.0, "mrr@10": 0.0}),
        ([], {"hit@1": 0.0, "hit@5": 0.0, "mrr@10": 0.0}),
    ],
)
def test_xquad_score_paths(paths: list[str], expected: dict[str, float]) -> None:
    assert eval_xquad.score_paths(paths, "memory/g.md") == pytest.approx(expected)


def test_xquad_build_corpus() -> None:
    data = {"data": [{"title": "T", "paragraphs": [
        {"context": "第一段。", "qas": [{"id": "q1", "question": "什么？", "answers": []}]},
        {"context": "第二段。\n", "qas": [{"id": "q2", "question": "哪里？", "answers": []},
                                         {"id": "q3", "question": "谁？", "answers": []}]}]}]}
    files, questions = eval_xquad.build_corpus(data)
    assert files == {"memory/a000-p000.md": "第一段。\n", "memory/a000-p001.md": "第二段。\n"}
    assert [(q.qid, q.gold) for q in questions] == [
        ("q1", "memory/a000-p000.md"), ("q2", "memory/a000-p001.md"), ("q3", "memory/a000-p001.md")]


# -- end to end ------------------------------------------------------------------------------------------
def _synthetic_locomo() -> list[dict[str, object]]:
    def turn(speaker: str, dia: str, text: str, **extra: str) -> dict[str, str]:
        return {"speaker": speaker, "dia_id": dia, "text": text, **extra}

    return [{
        "sample_id": "conv-t",
        "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bob",
            "session_1_date_time": "1:00 pm on 8 May, 2023",
            "session_1": [turn("Ann", "D1:1", "Hi Bob, how was your week?"),
                          turn("Bob", "D1:2", "Busy. I finally adopted a greyhound called Pixel."),
                          turn("Ann", "D1:3", "Lovely! Send a picture.", blip_caption="a grey dog on a sofa")],
            "session_2_date_time": "8:00 pm on 8 May, 2023",
            "session_2": [turn("Ann", "D2:1", "I started learning the cello this spring."),
                          turn("Bob", "D2:2", "Nice, which teacher?")],
            "session_3_date_time": "10:15 am on 2 June, 2023",
            "session_3": [turn("Bob", "D3:1", "We drove to Lisbon for a marathon last weekend."),
                          turn("Ann", "D3:2", "How did the race go?")],
        },
        "qa": [
            {"question": "What is the name of Bob's greyhound?", "answer": "Pixel", "evidence": ["D1:2"],
             "category": 4},
            {"question": "Which instrument is Ann learning, the cello?", "answer": "cello",
             "evidence": ["D2:1; D1:1"], "category": 1},
            {"question": "Where did Bob run a marathon?", "answer": "Lisbon", "evidence": ["D3:1", "D"],
             "category": 2},
            {"question": "Did Bob go anywhere?", "answer": "?", "evidence": [], "category": 3},
            {"question": "Adversarial?", "answer": "-", "evidence": ["D1:1"], "category": 5},
        ],
    }]


def test_eval_locomo_end_to_end(tmp_path: Path) -> None:
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps(_synthetic_locomo()))
    config = tmp_path / "eval.toml"
    config.write_text('[embedding]\nprovider = "hash"\n[search]\ntext_weight = 0.5\nvector_weight = 0.5\n')
    out = tmp_path / "out" / "res.json"
    details = tmp_path / "out" / "details.jsonl"
    home = tmp_path / "home"
    env = {**os.environ, "MEMDECK_HOME": str(home)}
    env.pop("MEMDECK_EMBEDDING_PROVIDER", None)
    cmd = [sys.executable, str(BENCH / "eval_locomo.py"), "--data", str(data), "--out", str(out),
           "--modes", "keyword,hybrid", "--config", str(config), "--details", str(details)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(out.read_text())
    assert set(payload) == {"keyword", "hybrid", "meta"}
    for mode in ("keyword", "hybrid"):
        assert set(payload[mode]) == {"overall", "by_category"}
        assert set(payload[mode]["by_category"]) == {"1", "2", "3", "4"}
        assert set(payload[mode]["overall"]) == {"n", *eval_locomo.METRICS}
        assert payload[mode]["overall"]["n"] == 3
        assert payload[mode]["by_category"]["3"]["n"] == 0
    assert payload["keyword"]["by_category"]["4"]["hit@1"] == 1.0
    assert payload["keyword"]["by_category"]["2"]["snip@1"] == 1.0
    meta = payload["meta"]
    assert meta["torch_loaded"] is False
    assert meta["provider"] == "hash"
    assert meta["fallbacks"] == {}
    assert meta["config"]["search"]["text_weight"] == 0.5
    assert (meta["evidence"]["normalised"], meta["evidence"]["unparseable"]) == (1, 1)
    assert meta["evidence"]["questions_skipped"] == 1
    assert set(meta["timings"]["query"]) == {"keyword", "hybrid"}
    ws = home / "locomo" / "conv-t" / "memory"
    assert sorted(p.name for p in ws.iterdir()) == ["2023-05-08-2.md", "2023-05-08.md", "2023-06-02.md"]
    assert (ws / "2023-05-08.md").read_text().splitlines()[2] == "Ann: Lovely! Send a picture. [image: a grey dog on a sofa]"
    first = json.loads(details.read_text().splitlines()[0])
    assert first["gold"] == [["memory/2023-05-08.md", 2]]
    assert first["top"][0][0] == "memory/2023-05-08.md"
    assert "| **keyword** | all | 3 |" in out.with_suffix(".md").read_text()
    # A rerun finds the files unchanged and reuses the index.
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    again = json.loads(out.read_text())
    assert again["meta"]["conversations"][0]["files_written"] == 0
    assert again["meta"]["conversations"][0]["files_indexed"] == 0
    assert again["keyword"] == payload["keyword"]


# -- cross-validation (--cv) ------------------------------------------------------------------------
def test_fold_stats_and_verdict_follow_the_house_rule() -> None:
    folds = [{"hit@1": 0.6}, {"hit@1": 0.8}]
    assert eval_locomo.fold_stats(folds, ["hit@1"])["hit@1"] == {"mean": 0.7, "std": 0.1414, "min": 0.6, "max": 0.8}
    base = {"folds": {"a": {"hit@1": 0.70}, "b": {"hit@1": 0.70}}, "spread": {"mrr@10": {"mean": 0.8}}}
    better = {"folds": {"a": {"hit@1": 0.75}, "b": {"hit@1": 0.695}}, "spread": {"mrr@10": {"mean": 0.81}}}
    worse_fold = {"folds": {"a": {"hit@1": 0.80}, "b": {"hit@1": 0.68}}, "spread": {"mrr@10": {"mean": 0.82}}}
    v = eval_locomo.verdict(base, better, ["a", "b"])
    assert v["adopt"] and v["deltas"] == {"a": 0.05, "b": -0.005}
    # a better mean does not carry a fold that loses more than .01
    assert not eval_locomo.verdict(base, worse_fold, ["a", "b"])["adopt"]
    assert not eval_locomo.verdict(base, base, ["a", "b"])["adopt"]


def test_variants_switch_heuristics_off_through_the_settings() -> None:
    from engine.config import SearchConfig

    base = SearchConfig()
    off = {v.name: eval_locomo.variant_settings(base, v, 0.0) for v in eval_locomo.GRID}
    assert off["no-spread"].heuristics.spread_limit == 2.0 and not off["no-date-boosts"].heuristics.date_boosts
    assert not off["no-common-drop"].heuristics.drop_common_terms
    assert not off["no-calibrated-date-lift"].heuristics.calibrated_date_lift
    assert off["default"].heuristics == base.heuristics and off["default"].min_score == 0.0
    assert off["min-score-0.05"].min_score == 0.05
    assert base.heuristics.spread_limit == 0.7  # the shipped value is untouched

def test_labels_for_marks_chunks_that_hold_evidence() -> None:
    rec = {"keys": [1, 2], "rows": {1: ("memory/a.md", 1, 10), 2: ("memory/b.md", 1, 10)}}
    assert eval_locomo.labels_for(rec, [("memory/b.md", 4)]) == {1: 0, 2: 1}


def test_eval_locomo_cv_end_to_end(tmp_path: Path) -> None:
    samples = _synthetic_locomo()
    second = json.loads(json.dumps(samples[0]))
    second["sample_id"] = "conv-u"
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([samples[0], second]))
    config = tmp_path / "eval.toml"
    config.write_text('[embedding]\nprovider = "hash"\n')
    out = tmp_path / "cv.json"
    env = {**os.environ, "MEMDECK_HOME": str(tmp_path / "home")}
    env.pop("MEMDECK_EMBEDDING_PROVIDER", None)
    cmd = [sys.executable, str(BENCH / "eval_locomo.py"), "--cv", "--data", str(data), "--out", str(out),
           "--modes", "keyword,hybrid", "--config", str(config), "--grid", "no-spread", "--no-l2-table"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(out.read_text())
    assert {"default", "no-spread", "rerank"} <= set(payload["summary"])
    default = payload["summary"]["default"]["keyword"]
    assert set(default["folds"]) == {"conv-t", "conv-u"}
    assert default["folds"]["conv-t"]["n"] == 3 and default["pooled"]["n"] == 6
    assert default["spread"]["hit@1"]["mean"] == default["folds"]["conv-t"]["hit@1"]  # identical folds
    assert set(payload["verdicts"]["no-spread"]) == {"keyword", "hybrid"}
    assert set(payload["choose_on_four"]["keyword"]["picks"]) == {"conv-t", "conv-u"}
    assert set(payload["fold_models"]["conv-t"]) == {"keyword", "hybrid"}
    md = out.with_suffix(".md").read_text()
    assert "## Verdicts" in md and "| default | keyword |" in md
