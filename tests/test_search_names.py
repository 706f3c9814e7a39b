"""The workspace user's name leaves the keyword query (``SearchHeuristics.drop_user_name``, issue 26): a question
that names the user ("which timezone is Jay in") is not answered by the one-line entry that holds nothing but
the name ("What to call them: Jay")."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from engine.api import MemoryEngine
from engine.config import SearchConfig, SearchHeuristics
from engine.search.names import names_in, without_names
from engine.search.pipeline import SearchRequest, parse, run_search, user_names
from tests.helpers import synced_engine

USER = """# USER.md - About Your Human

- **Name:** Jay Hertz
- **What to call them:** Jay
- **Pronouns:** he/him
- **Timezone:** UTC+8
"""
MEMORY = """# MEMORY.md

## People
- Preferred form of address: Jay
- Name: Heronbot is the build server's name
"""
NOTE = """# 2026-11-0{day}

- Moved the standup; the timezone of the Berlin team makes 9:00 hard ({day}).
- Grocery list: oat milk, tomatoes, rice.
- The deploy window is in the Berlin timezone, not ours; checked timezone settings again.
"""
QUESTION = "which timezone is Jay in"


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[MemoryEngine]:
    yield from synced_engine(tmp_path, {"USER.md": USER, "MEMORY.md": MEMORY,
                                        **{f"memory/2026-11-0{day}.md": NOTE.format(day=day) for day in range(1, 5)}})


def _keyword(engine: MemoryEngine, drop: bool) -> list[str]:
    heur = replace(SearchHeuristics(), drop_user_name=drop)
    settings = replace(SearchConfig(), heuristics=heur)
    query = parse(engine.store, QUESTION, date(2026, 12, 4), ("memory",), heur)
    request = SearchRequest(query, "keyword", None, 6, 0.0, ("memory",))
    return [h.citation for h in run_search(engine.store, settings, request)]


def test_the_users_name_is_read_from_the_name_labels() -> None:
    names = names_in([("USER.md", USER), ("MEMORY.md", MEMORY)])
    assert {"jay", "jays"} <= names
    assert "hertz" not in names  # the surname also names domains and Wi-Fis ("hertz.dev"): only the given name
    assert "heronbot" not in names  # MEMORY.md names tools and projects too: only its address labels count
    assert "he" not in names and "him" not in names  # pronouns are no name
    # a template's placeholder, a sentence and a Chinese name
    assert names_in([("USER.md", "- **Name:** _(optional)_\n- **Name:** the person who runs this whole lab")]) \
        == frozenset()
    assert "小明" in names_in([("USER.md", "- **称呼：** 小明")])
    assert names_in([("USER.md", "- Name: Jonas Keller. Call him Jonas; no Mr. Keller.")]) == {"jonas", "jonass"}


def test_the_name_leaves_the_terms_unless_nothing_else_is_left() -> None:
    assert without_names(("timezone", "jay"), frozenset({"jay"})) == ("timezone",)
    assert without_names(("jay",), frozenset({"jay"})) == ("jay",)
    assert without_names(("jay", "jays"), frozenset({"jay", "jays"})) == ("jay", "jays")


def test_a_question_naming_the_user_finds_the_line_that_answers_it(engine: MemoryEngine) -> None:
    assert "jay" in user_names(engine.store)
    on = _keyword(engine, True)
    assert on[0] == "USER.md#L6"
    assert not {"USER.md#L4", "MEMORY.md#L4"} & set(on)  # the name lines share nothing else with the question
    # without the rule the name (in 2 chunks of 7, the rarest term) ranks the lines that hold only it first
    off = _keyword(engine, False)
    assert off.index("USER.md#L4") < off.index("USER.md#L6")


def test_a_query_that_is_only_the_name_still_finds_it(engine: MemoryEngine) -> None:
    heur = SearchHeuristics()
    query = parse(engine.store, "Jay", date(2026, 12, 4), ("memory",), heur)
    assert query.terms == ("jay",)
