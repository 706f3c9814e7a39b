"""A query naming a day or a month finds that period's daily notes by their file names."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from engine.api import MemoryEngine
from engine.config import SearchHeuristics
from engine.search.pipeline import dated_chunks
from engine.search.query import parse_query
from tests.helpers import hash_config

_H = SearchHeuristics()
DAY_BOOST, RANGE_BOOST, NEAR_BOOST, MONTH_BOOST = _H.day_boost, _H.range_boost, _H.near_boost, _H.month_boost

NOTES = ("2026-10-14.md", "2025-10-14-retro.md", "2026-10-15.md", "2026-03-02.md", "2026-03-30-plan.md",
         "2025-03-02.md", "notes-10-14.md", "2026-10-18.md", "2026-10-19-0930.md", "2026-10-21.md", "2026-10-08.md",
         "2026-10-05.md", "2026-10-11.md", "2026-10-12.md", "2026-09-30.md")
THU = date(2026, 10, 22)


@pytest.fixture
def engine(tmp_path: Path) -> MemoryEngine:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    for name in NOTES:
        (ws / "memory" / name).write_text(f"# {name}\n\n- something happened that day.\n")
    eng = MemoryEngine(hash_config(ws))
    eng.sync()
    yield eng
    eng.close()


@pytest.mark.parametrize(("query", "expected"), [
    ("what happened on October 14", {"2026-10-14.md": DAY_BOOST, "2025-10-14-retro.md": DAY_BOOST}),
    ("notes from 2026-10-14", {"2026-10-14.md": DAY_BOOST}),
    ("what did we plan in March 2026", {"2026-03-02.md": MONTH_BOOST, "2026-03-30-plan.md": MONTH_BOOST}),
    ("2 March 2025 and 15 Oct 2026", {"2025-03-02.md": DAY_BOOST, "2026-10-15.md": DAY_BOOST}),
    ("no date here", {}),
])
def test_dated_chunks(engine: MemoryEngine, query: str, expected: dict[str, float]) -> None:
    found = dated_chunks(engine.store, parse_query(query, today=THU), ("memory",))
    paths = dict(engine.store.conn.execute("SELECT id, path FROM chunks").fetchall())
    assert {paths[k].removeprefix("memory/"): v for k, v in found.items()} == expected


@pytest.mark.parametrize(("query", "expected"), [
    ("what did I do yesterday", {"2026-10-21.md": DAY_BOOST}),
    ("last Monday", {"2026-10-19-0930.md": DAY_BOOST}),  # a session note is a note of its day
    ("last week", {name: RANGE_BOOST for name in ("2026-10-12.md", "2026-10-14.md", "2026-10-15.md",
                                                 "2026-10-18.md")}),
    ("last weekend", {"2026-10-18.md": RANGE_BOOST}),
    # two weeks ago: Thu 8 Oct itself, and the days around it a little less
    ("two weeks ago", {"2026-10-08.md": DAY_BOOST, "2026-10-05.md": NEAR_BOOST, "2026-10-11.md": NEAR_BOOST}),
    ("last month", {"2026-09-30.md": MONTH_BOOST}),
    ("in March", {"2026-03-02.md": MONTH_BOOST, "2026-03-30-plan.md": MONTH_BOOST}),
    ("上周末", {"2026-10-18.md": RANGE_BOOST}),
    ("juče i 14.10.", {"2026-10-21.md": DAY_BOOST, "2026-10-14.md": DAY_BOOST, "2025-10-14-retro.md": DAY_BOOST}),
    ("yesterday and last week", {"2026-10-21.md": DAY_BOOST, **{name: RANGE_BOOST for name in (
        "2026-10-12.md", "2026-10-14.md", "2026-10-15.md", "2026-10-18.md")}}),
])
def test_dated_chunks_of_resolved_dates(engine: MemoryEngine, query: str, expected: dict[str, float]) -> None:
    found = dated_chunks(engine.store, parse_query(query, today=THU), ("memory",))
    paths = dict(engine.store.conn.execute("SELECT id, path FROM chunks").fetchall())
    assert {paths[k].removeprefix("memory/"): v for k, v in found.items()} == expected
