"""The learned re-ranker and the leg calibration: shipped files, features, and how a search applies them."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from engine.api import MemoryEngine
from engine.config import SearchConfig
from engine.search.calibration import CALIBRATION_PATH, Platt, calibration_for, sigmoid, table_from
from engine.search.pipeline import Hit, SearchHooks, SearchRequest, run_search
from engine.search.query import parse_query
from engine.search.rerank import (
    FEATURES,
    RERANK_PATH,
    LegInputs,
    LinearModel,
    candidate_features,
    reranker_from,
    shipped_reranker,
)
from tests.helpers import hash_config

LOCAL_MODELS = ("all-MiniLM-L6-v2", "multilingual-e5-small", "use-multilingual-v3")


def test_sigmoid_is_stable_at_the_extremes() -> None:
    assert sigmoid(0.0) == 0.5
    assert sigmoid(800.0) == 1.0 and sigmoid(-800.0) == 0.0
    assert Platt(2.0, -1.0)(0.5) == 0.5


def test_shipped_calibration_covers_the_offline_models() -> None:
    data = json.loads(CALIBRATION_PATH.read_text(encoding="utf-8"))
    for model in LOCAL_MODELS:
        cal = calibration_for(model)
        assert cal.knows_model, model
        assert cal.window is not None and cal.window.a > 0, "a higher cosine must mean a likelier hit"
        assert cal.window(0.9) > cal.window(0.1)
        assert data["models"][model]["provenance"]["data"]
    assert calibration_for(None).keyword_leg is not None


def test_unknown_model_keeps_raw_vectors() -> None:
    cal = calibration_for("text-embedding-3-small")
    assert not cal.knows_model and cal.window is None and cal.vector_leg is None
    assert not table_from({}, "all-MiniLM-L6-v2").knows_model
    assert not table_from({"models": {"m": {"window": {"a": "x"}}}}, "m").knows_model  # a broken entry


def test_shipped_weights_are_readable_and_use_known_features() -> None:
    data = json.loads(RERANK_PATH.read_text(encoding="utf-8"))
    rr = shipped_reranker()
    assert rr is not None and set(rr.models) == {"hybrid"}  # keyword did not pass CV: shipped, but off
    assert data["models"]["keyword"]["enabled"] is False
    for name, spec in data["models"].items():
        assert set(spec["weights"]) <= set(FEATURES), name
        assert all(math.isfinite(w) for w in spec["weights"].values())
    assert not {"vec", "vec_line", "vec_rr", "vec_gap"} & set(data["models"]["keyword"]["weights"])
    prov = data["provenance"]
    assert prov["data"] and prov["date"] and prov["model"] in LOCAL_MODELS and prov["cv"]
    assert 1 <= rr.depth <= 100


def test_linear_model_and_loader() -> None:
    model = LinearModel(-1.0, {"kw": 2.0})
    assert model.score({"kw": 0.5}) == 0.5
    assert model.score({}) == pytest.approx(sigmoid(-1.0))
    rr = reranker_from({"depth": 7, "models": {"keyword": {"bias": 0.5, "weights": {"kw": 1.0, "gone": 9.0}},
                                               "bad": "x"}})
    assert rr.depth == 7 and set(rr.models) == {"keyword"}
    assert dict(rr.models["keyword"].weights) == {"kw": 1.0}  # an unknown feature is ignored, not fatal
    assert rr.model_for("hybrid") is None


def test_candidate_features_by_hand() -> None:
    texts = {1: "Caroline: I went to the LGBTQ support group yesterday", 2: "Melanie: painting a sunrise",
             3: "support group support"}
    legs = LegInputs(bm25={1: -4.0, 3: -2.0}, kw_line={1: 3.0, 3: 1.5}, window={1: 0.5, 2: 0.7, 3: 0.2},
                     line={1: {0: 0.6}}, dated={2: 0.5}, calibration=calibration_for(None))
    feats = candidate_features([1, 2, 3], texts, {1: 0.6, 2: 0.5, 3: 0.2}, {}, ("support", "group"),
                               {"support": 1.0, "group": 3.0}, legs)
    one, two, three = feats[1], feats[2], feats[3]
    assert set(one) == set(FEATURES)
    assert one["kw"] == 1.0 and three["kw"] == 0.5 and two["kw"] == 0.0
    assert one["kw_line"] == 1.0 and three["kw_line"] == 0.5
    assert one["kw_rr"] > three["kw_rr"] > two["kw_rr"] == 0.0
    assert one["kw_gap"] == 0.5
    assert one["cover"] == 1.0 and two["cover"] == 0.0
    assert one["phrase"] == 1.0 and three["phrase"] == 1.0 and two["phrase"] == 0.0
    assert two["date"] == 0.5 and one["date"] == 0.0
    # no calibration for an unknown model: window cosines are scaled over the candidates' range
    assert two["vec"] == 1.0 and three["vec"] == 0.0 and one["vec_line"] == 0.6
    assert one["base_rr"] > two["base_rr"] > three["base_rr"]


def _ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n\n- Deploys go through the staging cluster first.\n"
                                  "- The staging cluster runs Postgres 16.\n", encoding="utf-8")
    (ws / "memory" / "2026-10-01.md").write_text(
        "# 2026-10-01\n\n- Postgres failover drill on the staging cluster went fine.\n- Lunch with Ana.\n",
        encoding="utf-8")
    (ws / "memory" / "2026-10-02.md").write_text(
        "# 2026-10-02\n\n- Violin lessons moved to Fridays.\n- Postgres upgrade planned.\n", encoding="utf-8")
    return ws


@pytest.fixture
def engine(tmp_path: Path) -> MemoryEngine:
    eng = MemoryEngine(hash_config(_ws(tmp_path), search={"rerank": True}))
    eng.sync()
    yield eng
    eng.close()


KEYWORD_RR = reranker_from({"depth": 30, "models": {"keyword": {"bias": -2.0, "weights": {"cover": 3.0, "kw": 1.0}},
                                                  "hybrid": {"bias": -2.0, "weights": {"vec": 2.0, "kw": 1.0}}}})
KNOWN = table_from({"models": {"hash": {"window": {"a": 4.0, "b": -2.0}, "line": {"a": 4.0, "b": -2.0},
                                        "leg": {"a": 4.0, "b": -2.0}}}, "keyword": {"leg": {"a": 3.0, "b": -2.0}}},
                   "hash")
QUERY = "postgres staging cluster"
TODAY = date(2026, 12, 1)


def _search(engine: MemoryEngine, settings: SearchConfig, text: str, mode: str, qvec: list[float] | None,
            min_score: float = 0.0, model: str | None = None, today: date = TODAY, **hooks: object) -> list[Hit]:
    request = SearchRequest(parse_query(text, today), mode, qvec, 10, min_score, ("memory",), model=model)
    return run_search(engine.store, settings, request, hooks=SearchHooks(**hooks))  # type: ignore[arg-type]


def test_a_reranked_search_says_so(engine: MemoryEngine) -> None:
    settings = replace(SearchConfig(), rerank=True)
    hits = _search(engine, settings, QUERY, "keyword", None, reranker=KEYWORD_RR)
    assert hits and all(h.rerank is not None for h in hits)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    payload = hits[0].to_json()
    assert payload["rerank"] == pytest.approx(hits[0].rerank, abs=1e-6)
    # the explanation adds up: the fused score (0.7·vector + 0.3·keyword) + the re-ranker's change = the score
    assert 0.0 <= hits[0].score - hits[0].rerank <= 1.0
    qvec = engine.embedder.embed_query(QUERY)
    hybrid = _search(engine, settings, QUERY, "hybrid", qvec, model="hash", reranker=KEYWORD_RR,
                     calibration=KNOWN)
    assert hybrid and all(h.rerank is not None and h.vector_score is not None for h in hybrid)
    # an uncalibrated model keeps OpenClaw's order in hybrid search, even with a re-ranker at hand
    raw = _search(engine, settings, QUERY, "hybrid", qvec, reranker=KEYWORD_RR)
    assert raw and all(h.rerank is None for h in raw)


def test_rerank_off_and_unknown_model_keep_openclaw_scores(engine: MemoryEngine, tmp_path: Path) -> None:
    hybrid = engine.search(QUERY, mode="hybrid", min_score=0)
    assert hybrid.results and all(h.rerank is None for h in hybrid.results)  # the hash embedder is uncalibrated
    assert "rerank" not in hybrid.to_json()["results"][0]
    keyword = engine.search(QUERY, mode="keyword", min_score=0)
    assert keyword.results and all(h.rerank is None for h in keyword.results)  # the keyword model is off
    off = _search(engine, replace(SearchConfig(), rerank=False), QUERY, "keyword", None)
    assert [h.citation for h in off] == [h.citation for h in keyword.results]


def test_calibrated_fusion_keeps_both_parts_visible(engine: MemoryEngine) -> None:
    settings = replace(SearchConfig(), vector_norm="calibrated", rerank=False)
    qvec = engine.embedder.embed_query(QUERY)
    hits = _search(engine, settings, QUERY, "hybrid", qvec, calibration=KNOWN)
    assert hits
    for h in hits:
        assert h.vector_score is not None and 0.0 < h.vector_score < 1.0  # a probability now, not a cosine
        assert h.score == pytest.approx(0.7 * h.vector_score + 0.3 * h.text_score, abs=1e-9)


def test_min_score_judges_the_reranked_score_it_shows(engine: MemoryEngine) -> None:
    settings = replace(SearchConfig(), rerank=True)
    collected: list[dict[str, object]] = []
    all_hits = _search(engine, settings, "postgres staging", "keyword", None, collect=collected, reranker=KEYWORD_RR)
    assert collected and set(collected[0]) >= {"keys", "features", "rows", "raw"}
    assert len({round(h.score, 6) for h in all_hits}) >= 2
    cut = sorted(h.score for h in all_hits)[len(all_hits) // 2]  # a threshold between the re-ranked scores
    strict = _search(engine, settings, "postgres staging", "keyword", None, min_score=cut, reranker=KEYWORD_RR)
    # the threshold judges the re-ranker's probability, the score each hit shows: no rescue of keyword matches
    assert strict and all(h.score >= cut for h in strict)
    assert [h.citation for h in strict] == [h.citation for h in all_hits if h.score >= cut]


def test_rerank_imports_no_numpy() -> None:
    code = ("import sys, engine.search.rerank, engine.search.calibration, engine.search.pipeline; "
            "assert 'numpy' not in sys.modules, 'numpy at import'")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_a_relative_date_keeps_its_lift_on_the_calibrated_scale(engine: MemoryEngine) -> None:
    settings = replace(SearchConfig(), vector_norm="calibrated", rerank=False)
    today = date(2026, 10, 3)

    def day_score(text: str) -> float:
        qvec = engine.embedder.embed_query(parse_query(text, today=today).vector_text)
        hits = _search(engine, settings, text, "hybrid", qvec, today=today, calibration=KNOWN)
        return next(h.text_score for h in hits if h.path == "memory/2026-10-02.md")

    relative, named = day_score("what happened yesterday"), day_score("what happened on 2 October 2026")
    day_boost = settings.heuristics.day_boost
    settings = replace(settings, heuristics=replace(settings.heuristics, calibrated_date_lift=False))
    # "yesterday" left the keyword query and no word matches: the keyword fit (here 3x − 2) squashes the lift
    # .55 to .41, so the note keeps its lift instead; a named date keeps its words and the plain fit
    assert day_score("what happened yesterday") == pytest.approx(KNOWN.keyword_leg(day_boost))
    assert relative == pytest.approx(day_boost)
    assert day_score("what happened on 2 October 2026") == pytest.approx(named)
