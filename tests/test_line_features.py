"""Line-level retrieval: line vectors in the index, best-line scores, overlap spreading, snippets that add lines."""

from __future__ import annotations

import math
import struct
from datetime import date
from pathlib import Path

import pytest

from engine.api import MemoryEngine
from engine.index.chunking import plan_lines
from engine.index.indexer import quantize
from engine.index.store import serialize_vector
from engine.search.fusion import Fused
from engine.search.pipeline import _Row, spread_overlaps
from engine.search.snippets import best_line_bm25, extract_snippet
from tests.helpers import hash_config

CONVERSATION = "\n".join(
    ["# 2023-05-08", ""]
    + [f"Caroline: we talked about the weather and the garden again, number {i}." for i in range(12)]
    + ["Melanie: I finally signed up for the pottery class at the community centre on Tuesday."]
    + [f"Caroline: more small talk about nothing in particular, line {i}." for i in range(12)]
) + "\n"


def _ws(tmp_path: Path, extra: dict[str, str] | None = None) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Preferences\n\n- Prefers tabs over spaces.\n- Never force-push to main.\n")
    (ws / "memory" / "2023-05-08.md").write_text(CONVERSATION)
    for rel, text in (extra or {}).items():
        (ws / rel).write_text(text)
    return ws


def _engine(tmp_path: Path, **search: object) -> MemoryEngine:
    return MemoryEngine(hash_config(_ws(tmp_path), search=search) if search else hash_config(_ws(tmp_path)))


@pytest.mark.parametrize(("text", "expected"), [
    ("one line only, long enough to count", []),
    ("# Heading here\n\n- a bullet that is long enough\n- ok", [(0, "# Heading here"), (2, "- a bullet that is long enough")]),
    ("  indented line with words\nanother line with words  ", [(0, "indented line with words"), (1, "another line with words")]),
    ("short\ntiny\n\n", []),
    ("数据库连接池耗尽\n重启服务以后恢复", [(0, "数据库连接池耗尽"), (1, "重启服务以后恢复")]),
])
def test_plan_lines(text: str, expected: list[tuple[int, str]]) -> None:
    assert plan_lines(text) == expected


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_quantized_line_vectors_keep_the_cosine(seed: int) -> None:
    import random

    rnd = random.Random(seed)
    a = [rnd.gauss(0, 1) for _ in range(384)]
    q = [rnd.gauss(0, 1) for _ in range(384)]
    na, nq = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(x * x for x in q))
    exact = sum(x * y for x, y in zip(a, q, strict=True)) / (na * nq)
    ints = struct.unpack("384b", quantize(serialize_vector(a)))
    ni = math.sqrt(sum(x * x for x in ints))
    approx = sum(x * y for x, y in zip(ints, q, strict=True)) / (ni * nq)
    assert len(quantize(serialize_vector(a))) == 384
    assert abs(approx - exact) < 0.01


def test_quantize_zero_vector_is_zero() -> None:
    assert quantize(serialize_vector([0.0] * 8)) == bytes(8)


def test_index_keeps_line_vectors_in_step_with_the_chunks(tmp_path: Path) -> None:
    eng = _engine(tmp_path)
    try:
        eng.sync()
        conn = eng.store.conn
        chunk_ids = {r[0] for r in conn.execute("SELECT id FROM chunks")}
        lines = conn.execute("SELECT chunk_id, line FROM line_vectors").fetchall()
        assert lines and {c for c, _ in lines} <= chunk_ids
        path = eng.config.workspace / "memory" / "2023-05-08.md"
        path.write_text("# 2023-05-08\n\nMelanie: the pottery class moved to Wednesday evenings.\n")
        eng.sync()
        chunk_ids = {r[0] for r in conn.execute("SELECT id FROM chunks")}
        orphans = conn.execute("SELECT count(*) FROM line_vectors WHERE chunk_id NOT IN (SELECT id FROM chunks)")
        assert orphans.fetchone()[0] == 0
        path.unlink()
        eng.sync()
        assert conn.execute("SELECT count(*) FROM line_vectors WHERE chunk_id NOT IN (SELECT id FROM chunks)"
                            ).fetchone()[0] == 0
    finally:
        eng.close()


def test_line_vectors_off_writes_none_and_still_searches(tmp_path: Path) -> None:
    eng = MemoryEngine(hash_config(_ws(tmp_path), chunking={"line_vectors": False}))
    try:
        eng.sync()
        assert eng.store.conn.execute("SELECT count(*) FROM line_vectors").fetchone()[0] == 0
        top = eng.search("pottery class", mode="hybrid").results[0]
        assert top.path == "memory/2023-05-08.md"
    finally:
        eng.close()


def test_switching_line_vectors_rebuilds_the_index(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    eng = MemoryEngine(hash_config(ws))
    eng.sync()
    assert eng.store.conn.execute("SELECT count(*) FROM line_vectors").fetchone()[0] > 0
    eng.close()
    eng = MemoryEngine(hash_config(ws, chunking={"line_vectors": False}))
    try:
        report = eng.sync()
        assert report.rebuilt
        assert eng.store.conn.execute("SELECT count(*) FROM line_vectors").fetchone()[0] == 0
    finally:
        eng.close()


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_snippet_lands_on_the_line_closest_in_meaning(tmp_path: Path, mode: str) -> None:
    eng = _engine(tmp_path)
    try:
        eng.sync()
        top = eng.search("signed up pottery class community centre", mode=mode).results[0]
        assert top.path == "memory/2023-05-08.md"
        assert "pottery class" in top.snippet
        assert top.snippet_start_line <= 15 <= top.snippet_end_line  # the pottery line is line 15
    finally:
        eng.close()


def test_the_best_line_lifts_the_vector_score(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    eng = MemoryEngine(hash_config(ws, search={"line_weight": 0.0}))
    eng_lines = None
    try:
        eng.sync()
        base = eng.search("pottery class Tuesday", mode="vector").results[0]
        eng_lines = MemoryEngine(hash_config(ws, search={"line_weight": 1.0}))
        lined = eng_lines.search("pottery class Tuesday", mode="vector").results[0]
        # The pottery line matches the query much better than the chunk as a whole does.
        assert lined.vector_score is not None and base.vector_score is not None
        assert lined.vector_score > base.vector_score
    finally:
        eng.close()
        if eng_lines is not None:
            eng_lines.close()


@pytest.mark.parametrize(("lines", "winner"), [
    # The short line holding the rare word beats a long line that holds it too.
    (["pottery " + "filler words " * 30, "pottery class"], 1),
    # Two query words on one line beat one.
    (["pottery on its own line", "the pottery class on Tuesday"], 1),
    # No query word: nothing.
    (["nothing here", "nor here"], None),
])
def test_best_line_bm25(lines: list[str], winner: int | None) -> None:
    terms = ["pottery", "class"]
    weights = {"pottery": 2.0, "class": 1.0}
    avg = sum(len(x) for x in lines) / len(lines)
    scores = [best_line_bm25(line, terms, weights, avg) for line in lines]
    if winner is None:
        assert scores == [0.0, 0.0]
    else:
        assert scores[winner] == max(scores) and scores[winner] > scores[1 - winner]
    assert best_line_bm25("\n".join(lines), terms, weights, avg) == max(scores)


def _row(key: int, path: str, start: int, end: int) -> _Row:
    return _Row(key, path, "memory", start, end, "x", None)


def test_spread_moves_a_near_copy_behind_the_others() -> None:
    rows = {1: _row(1, "a.md", 1, 15), 2: _row(2, "a.md", 4, 18), 3: _row(3, "b.md", 1, 10),
            4: _row(4, "a.md", 14, 30)}
    fused = [Fused(k, 1.0 - k / 10, None, 0.5) for k in (1, 2, 3, 4)]
    order = [f.key for f in spread_overlaps(fused, rows, 0.7)]
    # 2 repeats 12 of its 15 lines (80 %); 4 repeats 2 of 17 and stays in place.
    assert order == [1, 3, 4, 2]
    assert [f.key for f in spread_overlaps(fused, rows, 1.01)] == [1, 2, 3, 4]


def test_snippet_skips_lines_already_shown() -> None:
    text = "\n".join(f"line {i} " + "padding " * 12 for i in range(20)).replace("line 3 ", "line 3 kayak ")
    text = text.replace("line 16 ", "line 16 kayak ")
    first = extract_snippet(text, 1, ["kayak"])
    assert first.start_line <= 4 <= first.end_line
    again = extract_snippet(text, 1, ["kayak"], skip=set(range(first.start_line - 1, first.end_line)))
    assert again.start_line <= 17 <= again.end_line


def _many_notes(tmp_path: Path) -> Path:
    ws = tmp_path / "many"
    (ws / "memory").mkdir(parents=True)
    for day in range(1, 21):
        extra = " The heron lantern was repaired." if day in (3, 9) else ""
        (ws / "memory" / f"2026-03-{day:02d}.md").write_text(
            f"# 2026-03-{day:02d}\n\nCaroline: the team met about the project again today.{extra}\n")
    return ws


def test_terms_in_most_chunks_leave_the_match_but_not_the_ranking(tmp_path: Path) -> None:

    from engine.search.pipeline import common_terms, keyword_candidates
    from engine.search.query import parse_query

    eng = MemoryEngine(hash_config(_many_notes(tmp_path)))
    try:
        eng.sync()
        store = eng.store
        assert common_terms(store, ["caroline", "heron"]) == frozenset({"caroline"})
        # Every term common: nothing is dropped (the query would match nothing).
        assert common_terms(store, ["caroline", "project"]) == frozenset()
        assert common_terms(store, ["caroline"]) == frozenset()
        found = keyword_candidates(store, parse_query("Caroline heron", date(2026, 12, 2)), 50, ("memory",))
        full = {int(r[0]): float(r[1]) for r in store.conn.execute(
            "SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH '\"caroline\" OR \"heron\"'")}
        assert len(found) == 2 and len(full) == 20
        # The two heron notes keep their order and (to FTS5's 1e-6 IDF floor) their scores.
        assert sorted(found, key=found.get) == sorted(found, key=full.get)
        assert all(abs(found[k] - full[k]) < 1e-4 for k in found)
    finally:
        eng.close()


def test_embedding_stopped_mid_group_keeps_what_it_embedded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    import engine.index.indexer as indexer

    monkeypatch.setattr(indexer, "EMBED_SLICE", 2)  # a group of MEMORY.md's first embeds its windows alone
    eng = _engine(tmp_path)
    try:
        cancel = threading.Event()
        real = eng.embedder.embed_documents

        def embed_then_stop(texts: list[str]) -> list[list[float]]:
            cancel.set()  # the user stops the sync while the first slice is being embedded
            return real(texts)

        monkeypatch.setattr(eng.embedder, "embed_documents", embed_then_stop)
        report = eng.sync(cancel=cancel)
        assert report.cancelled
        conn = eng.store.conn
        assert conn.execute("SELECT count(*) FROM embedding_cache").fetchone()[0] == 2
        assert conn.execute("SELECT count(*) FROM chunks WHERE embedded = 1").fetchone()[0] == 0
        monkeypatch.setattr(eng.embedder, "embed_documents", real)
        again = eng.sync()
        assert again.from_cache >= 2 and not again.cancelled
        assert conn.execute("SELECT count(*) FROM chunks WHERE embedded = 0").fetchone()[0] == 0
    finally:
        eng.close()
