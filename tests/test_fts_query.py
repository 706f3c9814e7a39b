"""The FTS query builder accepts any text: nasty inputs never raise and never cause a MATCH syntax error."""

from __future__ import annotations

from datetime import date

import pytest

from engine.index.fts import fts_text
from engine.index.store import Store
from engine.search.query import build_fts_query as _build
from engine.search.query import parse_query, query_terms


def build_fts_query(text: str) -> str | None:
    return _build(parse_query(text, date(2026, 12, 1)))

NASTY = [
    '"', "'", '""', "don't", "20.04", "C++", "NEAR(", "NEAR(a b)", "*", "a*", "-", "multi-agent", "HERON-112",
    "AND", "OR NOT", "a AND OR b", "col:value", "^start", "(unbalanced", "))", "{x}", "[y]", "emoji 🙂🚀",
    "数据库迁移", "日本語のテキスト", "한국어 텍스트", "x" * 5000, " ".join(["word"] * 2000), "\x00\x01\x02",
    "tab\tand\nnewline", "ümlaut café", "$$$", "%%%", "' OR 1=1 --", "\\", "/path/to/file.md",
]


@pytest.fixture(scope="module")
def fts_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    store = Store(tmp_path_factory.mktemp("fts") / "i.sqlite")
    with store.transaction() as tx:
        for i, text in enumerate(["don't panic", "Ubuntu 20.04 LTS", "C++ and Rust", "multi-agent systems",
                                  "数据库迁移 计划", "HERON-112 fix"], 1):
            tx.execute("INSERT INTO chunks_fts(rowid, text) VALUES (?, ?)", (i, fts_text(text)))
    return store


@pytest.mark.parametrize("text", NASTY)
def test_nasty_input_builds_a_valid_query(text: str, fts_store: Store) -> None:
    query = build_fts_query(text)
    if query is None:
        # Only text with nothing searchable in it may give no query at all.
        assert query_terms(text) == [], f"{text!r} has terms but built no query"
        return
    rows = fts_store.conn.execute("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?", (query,)).fetchall()
    assert all(1 <= r[0] <= 6 for r in rows)


@pytest.mark.parametrize(
    "text,expected_row",
    [("don't", 1), ("20.04", 2), ("multi-agent", 4), ("数据库", 5), ("迁移", 5), ("HERON-112", 6), ("rust", 3)],
)
def test_finds_the_right_row(text: str, expected_row: int, fts_store: Store) -> None:
    query = build_fts_query(text)
    assert query is not None
    rows = [r[0] for r in fts_store.conn.execute(
        "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank", (query,))]
    assert rows and rows[0] == expected_row


@pytest.mark.parametrize(
    "text,terms",
    [
        ("What did we decide about the database?", ["decide", "database"]),
        ("the a an of", []),
        ("HERON-112", ["heron", "112"]),
        ("数据库", ["数据", "据库"]),
        ("Postgres 数据库", ["postgres", "数据", "据库"]),
    ],
)
def test_query_terms(text: str, terms: list[str]) -> None:
    assert query_terms(text) == terms


def test_words_are_or_joined() -> None:
    q = build_fts_query("postgres pool exhausted")
    assert q == '"postgres" OR "pool" OR "exhausted"'


def test_phrase_added_for_inner_punctuation() -> None:
    assert '"heron 112"' in (build_fts_query("HERON-112") or "")


def test_only_stop_words_gives_none() -> None:
    assert build_fts_query("what is the") is None
    assert build_fts_query("") is None
    assert build_fts_query("!!! ???") is None


def test_cjk_text_is_bigram_segmented() -> None:
    assert fts_text("迁移计划") == " 迁移 移计 计划 "
    assert fts_text("plain") == "plain"
