"""A query is parsed once: parse_query splits each kind of query, and a search splits its query only once."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

import pytest

import engine.search.query as query_module
from engine.api import MemoryEngine
from engine.search.query import ParsedQuery, build_fts_query, parse_query
from tests.helpers import hash_config

TODAY = date(2026, 12, 1)

# text, terms, phrases, bigrams, days, months
CASES: list[tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...], set[Any], set[Any]]] = [
    ("What did we decide about the database?", ("decide", "database"), (), (), set(), set()),
    ("the a an of", (), (), (), set(), set()),
    # Quotes are plain characters: the words count, there is no phrase. A bare weekday is the most recent one
    # before today (Tue 1 Dec → Fri 27 Nov); its word leaves the keyword query, the day is lifted instead.
    ('"deploy plan" for Friday', ("deploy", "plan"), (), (), {(2026, 11, 27)}, set()),
    ("what did I do yesterday", (), (), (), {(2026, 11, 30)}, set()),
    ("Postgres decision last month", ("postgres", "decision"), (), (), set(), {(2026, 11)}),
    ("昨天的数据库", ("的数", "数据", "据库"), (), ("的数", "数据", "据库"), {(2026, 11, 30)}, set()),
    # FTS5 syntax is plain text: operators are stop words, brackets and a lone quote vanish.
    ('foo AND (bar OR "baz', ("foo", "bar", "baz"), (), (), set(), set()),
    ("NEAR(a b) col:value x*", ("near", "col", "value"), ("near a", "col value"), (), set(), set()),
    ("HERON-112", ("heron", "112"), ("heron 112",), (), set(), set()),
    ("don't force-push", ("don", "force", "push"), ("don t", "force push"), (), set(), set()),
    ("数据库迁移", ("数据", "据库", "库迁", "迁移"), (), ("数据", "据库", "库迁", "迁移"), set(), set()),
    ("한국어 텍스트", ("한국", "국어", "텍스", "스트"), (), ("한국", "국어", "텍스", "스트"), set(), set()),
    ("Postgres 数据库 HERON-112", ("postgres", "数据", "据库", "heron", "112"), ("heron 112",), ("数据", "据库"),
     set(), set()),
    # A word mixing scripts splits at the CJK run and adds no phrase.
    ("postgres数据库", ("postgres", "数据", "据库"), (), ("数据", "据库"), set(), set()),
    ("notes from 2026-10-05", ("notes", "2026", "10", "05"), ("2026 10 05",), (), {(2026, 10, 5)}, set()),
    ("what happened Oct 5", ("happened", "oct", "5"), (), (), {(None, 10, 5)}, set()),
    ("5 October", ("5", "october"), (), (), {(None, 10, 5)}, set()),
    ("5 October 2026", ("5", "october", "2026"), (), (), {(2026, 10, 5)}, set()),
    ("what did we plan in July 2023", ("plan", "july", "2023"), (), (), set(), {(2023, 7)}),
    ("notes from 2026-11", ("notes", "2026", "11"), ("2026 11",), (), set(), {(2026, 11)}),
    ("on 14 July 2023", ("14", "july", "2023"), (), (), {(2023, 7, 14)}, set()),
]


@pytest.mark.parametrize(("text", "terms", "phrases", "bigrams", "days", "months"), CASES,
                         ids=[c[0] for c in CASES])
def test_parse_query(text: str, terms: tuple[str, ...], phrases: tuple[str, ...], bigrams: tuple[str, ...],
                     days: set[Any], months: set[Any]) -> None:
    parsed = parse_query(text, today=TODAY)
    # The resolved phrases are tested in test_dates_relative.py; here each of them is a date or a month above.
    assert replace(parsed, resolved=()) == ParsedQuery(
        text=text, terms=terms, phrases=phrases, bigrams=bigrams, has_cjk=bool(bigrams), dates=frozenset(days),
        months=frozenset(months), today=TODAY)
    assert bool(parsed.resolved) == bool(days or months)


def test_match_expression_is_built_from_the_parse() -> None:
    parsed = parse_query("Postgres HERON-112 pool", today=TODAY)
    assert build_fts_query(parsed) == '"postgres" OR "heron" OR "112" OR "pool" OR "heron 112"'
    assert build_fts_query(parsed, frozenset({"postgres"})) == '"heron" OR "112" OR "pool" OR "heron 112"'
    assert build_fts_query(parse_query("what is the", TODAY)) is None


def test_parsed_query_is_frozen() -> None:
    parsed = parse_query("heron", today=TODAY)
    with pytest.raises(AttributeError):
        parsed.terms = ()  # type: ignore[misc]


def test_today_is_the_callers() -> None:
    # No clock inside engine/search: relative dates count from the day the caller passes (the engine's one clock).
    assert parse_query("yesterday", date(2020, 3, 1)).dates == frozenset({(2020, 2, 29)})
    with pytest.raises(TypeError):
        parse_query("yesterday")  # type: ignore[call-arg]
    search = Path(__file__).resolve().parents[1] / "engine" / "search"
    assert not [p.name for p in search.glob("*.py") if "date.today()" in p.read_text(encoding="utf-8")]


def _counting(monkeypatch: pytest.MonkeyPatch, name: str) -> list[str]:
    calls: list[str] = []
    real: Callable[..., Any] = getattr(query_module, name)

    def counted(text: str, *args: Any) -> Any:
        calls.append(text)
        return real(text, *args)

    monkeypatch.setattr(query_module, name, counted)
    return calls


@pytest.mark.parametrize("mode", ["keyword", "hybrid", "vector"])
def test_a_search_splits_its_query_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-10-14.md").write_text("# 2026-10-14\n\n- The heron lantern was repaired.\n")
    (ws / "MEMORY.md").write_text("# Memory\n\n- Postgres pool: ERR_PG_53300 means too many connections.\n")
    eng = MemoryEngine(hash_config(ws))
    try:
        eng.sync()
        splits = _counting(monkeypatch, "split_query")
        days = _counting(monkeypatch, "query_dates")
        query = "what happened to the heron lantern on October 14?"
        results = eng.search(query, mode=mode).results
        assert results and results[0].path == "memory/2026-10-14.md"
        assert splits == [query]
        assert days == [query]
    finally:
        eng.close()
