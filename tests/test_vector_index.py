"""The in-memory vector copy returns what sqlite-vec returns and never serves stale vectors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.api import MemoryEngine
from engine.index.vectors import VectorIndex
from engine.search.pipeline import vector_candidates
from tests.helpers import hash_config


@pytest.fixture
def engine(tmp_path: Path) -> MemoryEngine:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    for i in range(30):
        (ws / "memory" / f"2026-01-{i + 1:02d}.md").write_text(
            f"# Day {i}\n\n- worked on topic{i} and topic{i % 7} with person{i % 5}\n- shipped build {i}\n")
    eng = MemoryEngine(hash_config(ws))
    eng.sync()
    yield eng
    eng.close()


@pytest.mark.parametrize("query", ["topic3 person2", "shipped build 17", "worked on topic6"])
def test_same_neighbours_as_sqlite_vec(engine: MemoryEngine, query: str) -> None:
    assert engine.embedder is not None
    q = engine.embedder.embed_query(query)
    vindex = VectorIndex()
    mem, mem_focus = vindex.nearest(engine.store, q, 10, ["memory"])
    ref, ref_focus = vector_candidates(engine.store, q, 10, ["memory"])
    # Same scores in the same order (ties may list equal-scored chunks in another order).
    assert sorted(mem.values(), reverse=True) == pytest.approx(sorted(ref.values(), reverse=True), abs=1e-5)
    for key in set(ref) & set(mem):
        assert mem[key] == pytest.approx(ref[key], abs=1e-5)
        assert mem_focus[key] == ref_focus[key]
    assert len(set(ref) & set(mem)) >= 8


def test_reloads_after_writes(engine: MemoryEngine) -> None:
    assert engine.embedder is not None
    vindex = VectorIndex()
    q = engine.embedder.embed_query("quokka mascot")
    before, _ = vindex.nearest(engine.store, q, 3, ["memory"])
    path = engine.config.workspace / "memory" / "2026-01-05.md"
    path.write_text("- the quokka mascot ships in v3\n")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))
    engine.sync()
    after, _ = vindex.nearest(engine.store, q, 3, ["memory"])
    rows = dict(engine.store.conn.execute("SELECT id, path FROM chunks").fetchall())
    assert rows[next(iter(after))] == "memory/2026-01-05.md"
    assert before != after
    (engine.config.workspace / "memory" / "2026-01-05.md").unlink()
    engine.sync()
    gone, _ = vindex.nearest(engine.store, q, 50, ["memory"])
    assert all(key in rows and rows[key] != "memory/2026-01-05.md" for key in gone if key in rows)
    live = {r[0] for r in engine.store.conn.execute("SELECT id FROM chunks")}
    assert set(gone) <= live


def test_engine_uses_memory_copy_above_threshold(engine: MemoryEngine) -> None:
    small = engine.search("topic3 person2", mode="vector", max_results=5, min_score=0).results
    engine._vindex.threshold = 1
    assert engine._vindex.worthwhile(engine.store)
    big = engine.search("topic3 person2", mode="vector", max_results=5, min_score=0).results
    assert [(h.path, h.start_line) for h in small] == [(h.path, h.start_line) for h in big]
    assert [round(h.score, 5) for h in small] == [round(h.score, 5) for h in big]
