"""OpenClaw 2026.9's workspace rules: which root files are memory, recall comments out of chunk text, importance."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from engine.api import MemoryEngine
from engine.config import load_config
from engine.errors import ConfigError, PathRefused
from engine.index import schema
from engine.index.chunking import (
    Chunk,
    chunk_curated,
    chunk_document,
    chunk_importance,
    chunk_markdown,
    importance_multiplier,
    strip_annotations,
)
from engine.index.store import Store
from tests.helpers import hash_config


def _workspace(root: Path, files: dict[str, str]) -> Path:
    ws = root / "ws"
    (ws / "memory").mkdir(parents=True)
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    return ws


# ---------------------------------------------------------------------------------------------
# Which files


ROOTS = {"MEMORY.md": "# Memory\n- curated\n", "USER.md": "# User\n- name Ada\n", "DREAMS.md": "# Dreams\n- lake\n",
         "memory.md": "# old\n- legacy\n", "NOTES.md": "# notes\n", "memory/2026-01-02.md": "# day\n- x\n"}


@pytest.mark.parametrize(
    ("legacy", "expected"),
    [
        (False, {"MEMORY.md", "USER.md", "memory/2026-01-02.md"}),
        (True, {"MEMORY.md", "USER.md", "memory.md", "memory/2026-01-02.md"}),
    ],
)
def test_indexed_files(tmp_path: Path, legacy: bool, expected: set[str]) -> None:
    ws = _workspace(tmp_path, ROOTS)
    with MemoryEngine(hash_config(ws, memory={"legacy_lowercase_memory": legacy})) as eng:
        assert {f.rel for f in eng.scan().files} == expected
        eng.sync()
        indexed = {row[0] for row in eng.store.conn.execute("SELECT DISTINCT path FROM chunks")}
        assert indexed == expected  # DREAMS.md and NOTES.md never; memory.md only when configured


@pytest.mark.parametrize(
    ("path", "readable"),
    [
        ("MEMORY.md", True), ("USER.md", True), ("DREAMS.md", True), ("memory.md", True),
        ("memory/2026-01-02.md", True), ("NOTES.md", False), ("dreams.md", False), ("user.md", False),
        ("DREAMS.txt", False), ("sub/USER.md", False),
    ],
)
def test_get_rules(tmp_path: Path, path: str, readable: bool) -> None:
    ws = _workspace(tmp_path, ROOTS)
    with MemoryEngine(hash_config(ws)) as eng:
        if readable:
            assert eng.get(path).path == path
        else:
            with pytest.raises(PathRefused):
                eng.get(path)


def test_dreams_is_readable_but_never_searched(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, {"MEMORY.md": "# Memory\n- tea\n", "DREAMS.md": "# Dreams\n- heron by the lake\n"})
    with MemoryEngine(hash_config(ws)) as eng:
        eng.sync()
        assert eng.get("DREAMS.md", 2, 1).text == "- heron by the lake"
        eng.reindex_file("DREAMS.md")  # a save in the TUI or over MCP indexes nothing either
        assert eng.search("heron", mode="keyword", min_score=0).results == ()
        assert eng.get("USER.md").text == ""  # missing: empty, as memory_get


def test_doors_read_user_and_dreams(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from memdeck.cli import cli
    from memdeck.mcp import MemoryService

    ws = _workspace(tmp_path, ROOTS)
    monkeypatch.setenv("MEMDECK_EMBEDDING_PROVIDER", "hash")
    result = CliRunner().invoke(cli, ["--workspace", str(ws), "get", "USER.md", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"path": "USER.md", "text": ROOTS["USER.md"]}
    service = MemoryService(hash_config(ws))
    try:
        assert service.get({"path": "DREAMS.md", "from": 2, "lines": 1}).payload == {"path": "DREAMS.md",
                                                                                    "text": "- lake"}
        assert service.get({"path": "NOTES.md"}).payload.get("disabled") is True
    finally:
        service.stop()


# ---------------------------------------------------------------------------------------------
# Recall comments


@pytest.mark.parametrize(
    ("line", "stripped", "importance"),
    [
        ("- likes tea <!-- importance: 9 -->", "- likes tea", 9),
        ("- a <!-- trigger: flights, seats --> <!-- importance: 7 --> <!-- project: github.com/x/y -->", "- a", 7),
        ("<!-- openclaw-memory-promotion:memory:memory/2026-04-27.md:1:4 -->", "", None),
        ("<!-- openclaw-memory-lineage:abc -->", "", None),
        ("<!-- importance: 3 -->", "", 3),
        ("- x <!--importance:12-->", "- x", 10),  # held to 1–10, as OpenClaw's importanceMultiplier
        ("- x <!-- importance: 0 -->", "- x", 1),
        ("- x <!-- importance: 7.9 -->", "- x", 7),  # the whole part
        ("- x <!-- importance: high -->", "- x", None),  # stripped, but no number to weigh by
        ("- x <!-- IMPORTANCE: 6 -->", "- x", 6),
        ("- a normal <!-- comment --> stays", "- a normal <!-- comment --> stays", None),
        ("- unclosed <!-- importance: 9", "- unclosed <!-- importance: 9", None),
        ("no comment at all", "no comment at all", None),
    ],
)
def test_strip_annotations(line: str, stripped: str, importance: int | None) -> None:
    text = f"# Memory\n{line}\nlast line\n"
    out = strip_annotations(text)
    assert out.text == f"# Memory\n{stripped}\nlast line\n"
    assert out.text.count("\n") == text.count("\n")  # line numbers stay exact
    assert dict(out.importance) == ({1: importance} if importance is not None else {})


def test_text_without_comments_chunks_as_before() -> None:
    text = "# Memory\n\n" + "\n".join(f"- fact number {i} about herons and lakes" for i in range(200)) + "\n"
    # No comment, no importance: the chunks are the curated chunker's own (one entry a chunk), unweighted.
    assert chunk_document(text, curated=True) == chunk_curated(text)
    assert all(c.importance is None for c in chunk_document(text, curated=True))
    assert chunk_document(text) == chunk_markdown(text)


@pytest.mark.parametrize(
    ("lines", "importance", "expected"),
    [
        (["- a", "- b"], {0: 9}, 9),  # one important bullet lifts its chunk
        (["- a", "- b"], {0: 2}, None),  # a low one does not lower the unmarked one's chunk
        (["- a", "- b"], {0: 2, 1: 3}, 3),  # every entry low: the strongest decides
        (["## Heading", "- a"], {1: 1}, 1),  # a heading alone weighs nothing
        (["- a", "  continued"], {1: 8}, 8),  # a comment on a continuation line belongs to its bullet
        (["intro text", "- a"], {1: 6}, 6),
        (["- a", "- b"], {}, None),
    ],
)
def test_chunk_importance(lines: list[str], importance: dict[int, int], expected: int | None) -> None:
    chunk = Chunk(1, len(lines), "\n".join(lines))
    assert chunk_importance(chunk, lines, importance) == expected


def test_importance_multiplier() -> None:
    assert importance_multiplier(None) == 1.0
    assert importance_multiplier(5) == pytest.approx(1.0)
    assert importance_multiplier(1) == pytest.approx(0.8)
    assert importance_multiplier(10) == pytest.approx(1.25)


def test_comments_are_out_of_fts_snippets_and_vectors_with_exact_lines(tmp_path: Path) -> None:
    memory = ("# Memory\n\n<!-- openclaw-memory-promotion:memory:memory/2026-04-27.md:1:4 -->\n"
              "- Gateway binds loopback only <!-- trigger: zebrafinch --> <!-- importance: 9 -->\n")
    ws = _workspace(tmp_path, {"MEMORY.md": memory})
    with MemoryEngine(hash_config(ws)) as eng:
        eng.sync()
        assert eng.search("zebrafinch", mode="keyword", min_score=0).results == ()  # the trigger is not text
        assert eng.search("openclaw promotion", mode="keyword", min_score=0).results == ()
        (hit,) = eng.search("gateway loopback", mode="keyword", min_score=0).results
        assert "<!--" not in hit.snippet
        assert (hit.snippet_start_line, hit.snippet_end_line) == (1, 4)  # the file's own lines
        assert hit.snippet.split("\n") == ["# Memory", "", "", "- Gateway binds loopback only"]
        texts = [row[0] for row in eng.store.conn.execute("SELECT text FROM chunks")]
        assert texts and all("<!--" not in t for t in texts)  # what the embedder reads too
        assert eng.get("MEMORY.md").text == memory  # memory_get returns the file as it is


# ---------------------------------------------------------------------------------------------
# Importance in ranking

FACT = "- heron nests by the north lake"
LONGER = "- heron nests by the north lake in spring"  # a little weaker on BM25 (0.89 of the best)


def _ranked(tmp_path: Path, memory: str, **overrides: object) -> list[str]:
    ws = _workspace(tmp_path, {"MEMORY.md": "# Memory\n" + memory + "\n", "memory/birds.md": "# Birds\n" + FACT + "\n"})
    with MemoryEngine(hash_config(ws, **overrides)) as eng:
        eng.sync()
        return [h.path for h in eng.search("heron lake", mode="keyword", min_score=0).results]


def test_importance_raises_a_curated_chunk(tmp_path: Path) -> None:
    assert _ranked(tmp_path / "a", LONGER) == ["memory/birds.md", "MEMORY.md"]  # the shorter note wins on BM25
    assert _ranked(tmp_path / "b", LONGER + " <!-- importance: 10 -->") == ["MEMORY.md", "memory/birds.md"]
    off = _ranked(tmp_path / "c", LONGER + " <!-- importance: 10 -->", search={"importance": False})
    assert off == ["memory/birds.md", "MEMORY.md"]  # [search] importance = false: comments only stripped


def test_low_importance_lowers_and_only_curated_files_count(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, {"MEMORY.md": "# Memory\n" + FACT + " <!-- importance: 1 -->\n",
                               "memory/birds.md": "# Birds\n" + LONGER + " <!-- importance: 10 -->\n"})
    with MemoryEngine(hash_config(ws)) as eng:
        eng.sync()
        rows = dict(eng.store.conn.execute("SELECT path, importance FROM chunks"))
        assert rows == {"MEMORY.md": 1, "memory/birds.md": None}  # a daily/topic note's comment is only stripped
        hits = eng.search("heron lake", mode="keyword", min_score=0).results
        assert [h.path for h in hits] == ["memory/birds.md", "MEMORY.md"]
        assert hits[1].score == pytest.approx(0.8 * 1.0)  # the best BM25 (1.0) × 0.8


# ---------------------------------------------------------------------------------------------
# An existing index


def test_existing_index_rebuilds_once(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, {"MEMORY.md": "# Memory\n- tea <!-- importance: 8 -->\n"})
    config = hash_config(ws)
    with MemoryEngine(config) as eng:
        eng.sync()
        identity = json.loads(eng.store.get_meta("identity") or "{}")
        identity["chunker"] = 3  # as the previous memdeck recorded it
        eng.store.set_meta("identity", json.dumps(identity))
        eng.store.conn.execute("UPDATE chunks SET text = text || ' <!-- importance: 8 -->', importance = NULL")
    with MemoryEngine(config) as eng:
        assert eng.needs_rebuild()
        assert eng.sync().rebuilt
        assert not eng.sync().rebuilt and not eng.needs_rebuild()
        assert list(eng.store.conn.execute("SELECT text, importance FROM chunks")) == [("# Memory\n- tea", 8)]


def test_schema_1_index_gains_the_importance_column(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(schema.SCHEMA.replace(", importance INTEGER", ""))
    conn.execute("INSERT INTO meta VALUES('schema_version', '1')")
    conn.execute("INSERT INTO chunks(path, source, start_line, end_line, hash, text, updated_at)"
                 " VALUES ('MEMORY.md', 'memory', 1, 1, 'h', 'tea', 0)")
    conn.commit()
    conn.close()
    store = Store(path)
    try:
        columns = {row[1] for row in store.conn.execute("PRAGMA table_info(chunks)")}
        assert "importance" in columns
        assert store.get_meta("schema_version") == str(schema.SCHEMA_VERSION)
        assert list(store.conn.execute("SELECT text, importance FROM chunks")) == [("tea", None)]
    finally:
        store.close()


# ---------------------------------------------------------------------------------------------
# Config


@pytest.mark.parametrize(
    ("overrides", "problem"),
    [
        ({"memory": {"legacy_lowercase_memory": "yes"}}, "memory.legacy_lowercase_memory"),
        ({"memory": {"timezone": "Mars/Olympus_Mons"}}, "unknown time zone"),
        ({"memory": {"timezone": "Europe/Berlin\n"}}, "memory.timezone"),
        ({"search": {"importance": 1}}, "search.importance"),
        ({"memory": {"colour": "red"}}, "memory.colour"),
    ],
)
def test_config_rules(tmp_path: Path, overrides: dict[str, object], problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        load_config(workspace=tmp_path, overrides=overrides)


def test_config_defaults_and_values(tmp_path: Path) -> None:
    cfg = load_config(workspace=tmp_path)
    assert (cfg.memory.legacy_lowercase_memory, cfg.memory.timezone, cfg.search.importance) == (False, "", True)
    cfg = load_config(workspace=tmp_path, overrides={"memory": {"timezone": "America/New_York",
                                                                "legacy_lowercase_memory": True}})
    assert (cfg.memory.timezone, cfg.memory.legacy_lowercase_memory) == ("America/New_York", True)
