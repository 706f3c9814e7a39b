"""The 2026-12-06 search knobs, both off by default: modal / hedge words as stop words
(``SearchHeuristics.modal_stop_words``) and vector pseudo-relevance feedback (``SearchHeuristics.vector_prf``)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from engine.api import MemoryEngine
from engine.config import SearchConfig, SearchHeuristics
from engine.search.pipeline import SearchRequest, feedback_vector, parse, run_search
from engine.search.query import parse_query
from tests.helpers import synced_engine

TODAY = date(2026, 12, 6)


def test_modal_words_are_terms_unless_asked() -> None:
    text = "What might Caroline probably paint, and must she? Will maybe knows perhaps"
    plain = parse_query(text, TODAY).terms
    modal = parse_query(text, TODAY, modal_stop_words=True).terms
    for word in ("might", "probably", "must", "maybe", "perhaps"):
        assert word in plain
        assert word not in modal
    # "will" stays a term either way (a name, "last will"); the content words stay
    assert "will" in plain and "will" in modal
    assert {"caroline", "paint", "knows"} <= set(modal)


def test_may_the_month_is_still_read_as_a_date() -> None:
    parsed = parse_query("what did I plant in May 2026", TODAY, modal_stop_words=True)
    assert "may" not in parsed.terms
    assert (2026, 5) in parsed.months


def test_default_heuristics_keep_both_knobs_off() -> None:
    h = SearchHeuristics()
    assert h.modal_stop_words is False
    assert h.vector_prf == 0.0


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[MemoryEngine]:
    notes = {
        "hedges": "I might go, maybe, perhaps; it will probably rain and we must see.",
        "paint": "Caroline paints sunsets over the lake.",
        "near": "alpha beta gamma delta",
        "echo": "gamma delta epsilon zeta",
        "far": "kappa lambda omicron sigma",
    }
    yield from synced_engine(tmp_path, {f"memory/{name}.md": text + "\n" for name, text in notes.items()})


def _keyword_paths(engine: MemoryEngine, text: str, modal: bool) -> list[str]:
    settings = replace(SearchConfig(), heuristics=replace(SearchHeuristics(), modal_stop_words=modal))
    parsed = parse(engine.store, text, TODAY, ("memory",), settings.heuristics)
    request = SearchRequest(parsed, "keyword", None, 6, 0.0, ("memory",))
    return [h.path for h in run_search(engine.store, settings, request)]


def test_modal_stop_words_drop_a_note_matched_by_hedges_only(engine: MemoryEngine) -> None:
    question = "might Caroline maybe paint"
    assert "memory/hedges.md" in _keyword_paths(engine, question, modal=False)
    modal = _keyword_paths(engine, question, modal=True)
    assert modal == ["memory/paint.md"]


def _cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / (
        math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def test_feedback_vector_moves_the_query_towards_its_nearest_chunk(engine: MemoryEngine) -> None:
    assert engine.embedder is not None
    q = engine.embedder.embed_query("alpha")
    near = engine.embedder.embed_documents(["alpha beta gamma delta"])[0]
    assert feedback_vector(engine.store, q, 1, 0.0, ("memory",)) == q  # β 0: unchanged
    moved = feedback_vector(engine.store, q, 1, 0.6, ("memory",))
    assert math.isclose(math.sqrt(sum(x * x for x in moved)), 1.0, rel_tol=1e-5)
    assert _cos(moved, near) > _cos(q, near) + 0.05
    assert _cos(moved, q) < 0.999  # it did move
    # a larger β moves it further
    assert _cos(feedback_vector(engine.store, q, 1, 1.5, ("memory",)), near) > _cos(moved, near)


def _vector_hits(engine: MemoryEngine, beta: float) -> dict[str, float]:
    assert engine.embedder is not None
    settings = replace(SearchConfig(), heuristics=replace(SearchHeuristics(), vector_prf=beta, prf_k=1))
    parsed = parse(engine.store, "alpha", TODAY, ("memory",), settings.heuristics)
    request = SearchRequest(parsed, "vector", engine.embedder.embed_query("alpha"), 6, -1.0, ("memory",))
    return {h.path: h.vector_score or 0.0 for h in run_search(engine.store, settings, request)}


def test_feedback_finds_the_neighbour_of_the_best_match(engine: MemoryEngine) -> None:
    # "echo" shares no word with the query, only with its nearest chunk ("near"): feedback lifts it over "far"
    plain = _vector_hits(engine, 0.0)
    fed = _vector_hits(engine, 0.6)
    assert max(plain, key=lambda p: plain[p]) == "memory/near.md"
    assert max(fed, key=lambda p: fed[p]) == "memory/near.md"
    # without feedback only the chunk sharing the query's word scores above 0; with it the neighbour does too
    assert "memory/echo.md" not in plain
    assert fed.get("memory/echo.md", 0.0) > fed.get("memory/far.md", 0.0) + 0.1


def test_snippet_answer_takes_the_line_after_a_question() -> None:
    from engine.search.snippets import extract_snippet

    lines = [f"Mel: filler line number {n} " + "x" * 150 for n in range(2)]
    lines += ["Mel: here is my bowl, the bowl I made, proud of the bowl " + "w" * 130,
              "Caro: What gave you the idea for the colors and patterns of the bowl?",
              "Mel: I am obsessed with those, so I made something to catch the eye " + "y" * 230,
              "Caro: filler after " + "z" * 150]
    text = "\n".join(lines)
    terms = ("idea", "colors", "patterns", "bowl")
    plain = extract_snippet(text, 1, terms, max_chars=500)
    asked = extract_snippet(text, 1, terms, max_chars=500, answer=True)
    assert plain.end_line == 4  # the question ends the window: the answer (line 5) does not fit
    assert asked.end_line == 5 and asked.start_line <= 4  # the question stays, the answer joins it
    assert len(asked.text) <= 500 and "obsessed" in asked.text and "obsessed" not in plain.text
    # a window not ending in a question is left as it was
    no_q = text.replace("bowl?", "bowl.")
    assert extract_snippet(no_q, 1, terms, max_chars=500, answer=True) == extract_snippet(no_q, 1, terms, max_chars=500)
    # a first line holding a word the rest of the window lacks is not given up for the answer
    own = text.replace("proud of the bowl", "proud of the pottery")
    terms_own = (*terms, "pottery")
    assert extract_snippet(own, 1, terms_own, max_chars=500, answer=True) == \
        extract_snippet(own, 1, terms_own, max_chars=500)


def test_chunk_evidence_without_cjk_is_the_chunk_share_and_script_for_cjk_queries() -> None:
    from engine.search.pipeline import Legs, _Row, keyword_evidence

    rows = {1: _Row(1, "memory/a.md", "memory", 1, 1, "The rent goes up next year, to 7200.", None),
            2: _Row(2, "memory/b.md", "memory", 1, 1, "Rent day: the first. 房租 day.", None)}
    leg = Legs({1: 0.9, 2: 0.6}, {1: 0.1, 2: 0.05}, {1: 0.1, 2: 0.05}, {}, {}, rows, True)

    def with_(mode: str) -> SearchConfig:
        return replace(SearchConfig(), heuristics=replace(SearchHeuristics(), keyword_evidence=mode))

    def req(text: str) -> SearchRequest:
        return SearchRequest(parse_query(text, TODAY), "hybrid", [1.0, 0.0], 10, 0.0, ("memory",))

    english = req("How much will the rent go up next year?")
    chunk = keyword_evidence(with_("chunk"), english, leg, rows)
    assert chunk is not None and chunk[2] < 1.0  # note 2 holds only "rent" of the question
    assert keyword_evidence(with_("chunk-no-cjk"), english, leg, rows) == chunk
    zh_rows = {1: _Row(1, "memory/a.md", "memory", 1, 1, "明年房租涨到七千二。", None),
               2: _Row(2, "memory/b.md", "memory", 1, 1, "房租日是每月一号。", None)}
    zh_leg = replace(leg, rows=zh_rows)
    chinese = req("明年房租涨多少")
    no_cjk = keyword_evidence(with_("chunk-no-cjk"), chinese, zh_leg, zh_rows)
    assert no_cjk == keyword_evidence(with_("script"), chinese, zh_leg, zh_rows) == {1: 1.0, 2: 1.0}
    zh_chunk = keyword_evidence(with_("chunk"), chinese, zh_leg, zh_rows)
    assert zh_chunk is not None and zh_chunk[2] < 1.0
