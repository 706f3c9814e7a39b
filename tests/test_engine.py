"""The engine end to end with the hashing embedder: sync, incremental reindex, rebuilds, degradations."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from engine.api import MemoryEngine
from engine.config import load_config
from engine.embed.choice import HashingEmbedder
from engine.search.query import query_terms
from tests.helpers import hash_config

NASTY_QUERIES = ['"', "don't", "20.04", "C++", "NEAR(", "*", "multi-agent", "🙂", "数据库", "x" * 5000,
                 "", "   ", "AND OR", "' OR 1=1 --", "\x00"]


def _ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Preferences\n\n- Prefers tabs over spaces.\n- Never force-push to main.\n")
    (ws / "memory" / "2026-10-01.md").write_text(
        "# 2026-10-01\n\n- Postgres pool exhausted: ERR_PG_53300 too many connections.\n- Raised max to 200.\n")
    (ws / "memory" / "2026-10-02.md").write_text("# 2026-10-02\n\n- Violin lessons on Thursdays.\n")
    return ws


@pytest.fixture
def engine(tmp_path: Path) -> MemoryEngine:
    eng = MemoryEngine(hash_config(_ws(tmp_path)))
    yield eng
    eng.close()


def test_sync_indexes_everything(engine: MemoryEngine) -> None:
    report = engine.sync()
    assert report.files_indexed == 3
    assert report.chunks_total == 4  # MEMORY.md is cut per entry, as OpenClaw cuts it: one chunk a bullet
    st = engine.status()
    assert (st.files_indexed, st.files_on_disk, st.dirty_files, st.pending_embeddings) == (3, 3, 0, 0)
    assert st.vector_state == "ready" and st.fts_ready and st.identity_status == "valid"


def test_search_finds_exact_token_with_line_ranges(engine: MemoryEngine) -> None:
    resp = engine.search("ERR_PG_53300", mode="keyword")
    top = resp.results[0]
    assert top.path == "memory/2026-10-01.md"
    assert (top.start_line, top.end_line) == (1, 4)
    assert top.citation == "memory/2026-10-01.md#L1-L4"
    assert "ERR_PG_53300" in top.snippet
    assert any(top.snippet[a:b] == "ERR" for a, b in top.spans)


@pytest.mark.parametrize("mode", ["hybrid", "keyword", "vector"])
@pytest.mark.parametrize("query", NASTY_QUERIES)
def test_nasty_queries_never_raise(engine: MemoryEngine, query: str, mode: str) -> None:
    resp = engine.search(query, mode=mode)
    files = {rel: (engine.config.workspace / rel).read_text().splitlines()
             for rel in ("MEMORY.md", "memory/2026-10-01.md", "memory/2026-10-02.md")}
    for hit in resp.results:  # whatever matched is real: an indexed file, lines inside it, its own text
        lines = files[hit.path]
        assert 1 <= hit.start_line <= hit.end_line <= len(lines)
        assert 0.0 < hit.score <= 1.0
        assert hit.snippet.splitlines() == lines[hit.snippet_start_line - 1 : hit.snippet_end_line]
    if mode == "keyword" and not query_terms(query):
        assert resp.results == ()  # nothing searchable in the text, so nothing found


def test_json_shape(engine: MemoryEngine) -> None:
    payload = engine.search("force-push main").to_json()
    assert set(payload) >= {"results", "provider", "model", "mode"}
    hit = payload["results"][0]
    required = {"path", "startLine", "endLine", "score", "vectorScore", "textScore", "snippet",
                "snippetStartLine", "snippetEndLine", "spans", "source", "citation"}
    # the optional parts README's JSON section names: the legs' weights (keyword evidence), bestLine, context
    assert required <= set(hit) <= required | {"vectorWeight", "textWeight", "bestLine", "context", "placed"}
    assert 0.0 <= hit["score"] <= 1.0
    json.dumps(payload)


def test_incremental_reindex_embeds_only_the_changed_file(engine: MemoryEngine) -> None:
    emb = engine.embedder
    assert isinstance(emb, HashingEmbedder)
    engine.sync()
    before = emb.texts_embedded
    path = engine.config.workspace / "memory" / "2026-10-02.md"
    path.write_text("# 2026-10-02\n\n- Violin lessons moved to Fridays.\n")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))
    report = engine.sync()
    assert report.files_indexed == 1 and report.files_unchanged == 2
    # The new chunk's window and its bullet line are new; the date heading's line vector was cached.
    assert emb.texts_embedded - before == 2
    assert report.embedded == 2
    assert engine.search("Fridays", mode="keyword").results[0].path == "memory/2026-10-02.md"


def test_unchanged_content_with_new_mtime_is_not_rechunked(engine: MemoryEngine) -> None:
    engine.sync()
    path = engine.config.workspace / "MEMORY.md"
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 5_000_000))
    report = engine.sync()
    assert report.files_indexed == 0 and report.chunks_written == 0


def test_deleted_file_leaves_the_index(engine: MemoryEngine) -> None:
    engine.sync()
    (engine.config.workspace / "memory" / "2026-10-02.md").unlink()
    report = engine.sync()
    assert report.files_removed == 1
    assert engine.search("violin", mode="keyword").results == ()
    counts = engine.store.counts()
    assert counts["files"] == 2 and counts["chunks"] == 3  # MEMORY.md's two entries and the other note
    # No orphans: every window belongs to a chunk and every chunk has its FTS row.
    conn = engine.store.conn
    assert conn.execute("SELECT count(*) FROM windows WHERE chunk_id NOT IN (SELECT id FROM chunks)").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM chunks_fts").fetchone()[0] == counts["chunks"]
    assert conn.execute("SELECT count(*) FROM chunks_vec").fetchone()[0] == counts["windows"]


def test_search_syncs_a_stale_index(engine: MemoryEngine) -> None:
    (engine.config.workspace / "memory" / "2026-10-03.md").write_text("- Quokka sighting at the office.\n")
    assert engine.search("quokka", mode="keyword").results[0].path == "memory/2026-10-03.md"


def test_changed_chunking_rebuilds_and_reuses_cache(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    emb = HashingEmbedder()
    with MemoryEngine(hash_config(ws), embedder=emb) as eng:
        eng.sync()
    first = emb.texts_embedded
    cfg = hash_config(ws, chunking={"tokens": 200, "overlap": 20})
    with MemoryEngine(cfg, embedder=emb) as eng:
        assert eng.needs_rebuild()
        report = eng.sync()
        assert report.rebuilt
        assert emb.texts_embedded == first, "same chunk texts: every vector came from the cache"
        assert report.from_cache >= 3
        assert eng.status().identity_status == "valid"
        assert not list(eng.config.index_path.parent.glob("*.rebuild-*"))


def test_keyword_only_when_sqlite_vec_cannot_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMDECK_DISABLE_VEC", "1")
    with MemoryEngine(hash_config(_ws(tmp_path))) as eng:
        eng.sync()
        st = eng.status()
        assert st.vector_state.startswith("unavailable") and "sqlite-vec" in (st.vector_error or "")
        assert st.vec_version is None and st.fts_ready
        resp = eng.search("too many connections")
        assert resp.mode == "keyword" and resp.results[0].path == "memory/2026-10-01.md"
        assert any("keyword" in w for w in resp.warnings)


def test_stdlib_sqlite3_driver_without_extension_loading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMDECK_SQLITE_DRIVER", "sqlite3")
    with MemoryEngine(hash_config(_ws(tmp_path))) as eng:
        eng.sync()
        st = eng.status()
        assert st.driver == "sqlite3"
        assert eng.search("violin", mode="hybrid").results[0].path == "memory/2026-10-02.md"


def test_provider_none_is_keyword_only(tmp_path: Path) -> None:
    cfg = load_config(workspace=_ws(tmp_path), overrides={"embedding": {"provider": "none"}})
    with MemoryEngine(cfg) as eng:
        resp = eng.search("violin")
        assert resp.mode == "keyword" and resp.provider == "none"
        assert eng.status().provider == "none"


def test_min_score_judges_the_score_shown_and_rescues_nothing(engine: MemoryEngine) -> None:
    # OpenClaw rescued keyword matches when nothing passed; memdeck's threshold is hard on the score it shows.
    top = engine.search("thursdays", min_score=0.0).results[0]
    assert top.path == "memory/2026-10-02.md"
    kept = engine.search("thursdays", min_score=top.score).results
    assert kept and kept[0].path == top.path and all(h.score >= top.score for h in kept)
    assert all(h.score >= 0.99 for h in engine.search("thursdays", min_score=0.99).results)
    assert top.score < 0.999
    assert not engine.search("thursdays", min_score=top.score + 1e-3).results, "nothing scores above the best"


def test_index_lives_outside_the_workspace(engine: MemoryEngine) -> None:
    engine.sync()
    assert engine.config.workspace not in engine.config.index_path.parents
    assert not list(engine.config.workspace.rglob("*.sqlite"))


def test_index_file_is_private(engine: MemoryEngine) -> None:
    engine.sync()
    assert (engine.config.index_path.stat().st_mode & 0o777) == 0o600


def test_corrupt_index_is_moved_aside_and_rebuilt(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    cfg = hash_config(ws)
    cfg.index_path.parent.mkdir(parents=True, exist_ok=True)
    cfg.index_path.write_bytes(b"this is not a database" * 100)
    with MemoryEngine(cfg) as eng:
        assert eng.search("violin", mode="keyword").results
        assert eng.status().recovered
    assert list(cfg.index_path.parent.glob("*.corrupt-*"))


def test_import_engine_is_light() -> None:
    code = (
        "import sys, engine, engine.api, engine.config, engine.search.pipeline, engine.index.store,"
        " engine.index.indexer\n"
        "bad = [m for m in ('textual', 'rich', 'torch', 'sentence_transformers', 'numpy', 'sqlite_vec')"
        " if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


FRONT_ENDS = ("click", "rich", "textual", "mcp", "mcp_types", "uvicorn", "starlette", "tui", "memdeck",
              "torch", "sentence_transformers")


def test_every_engine_module_imports_no_front_end() -> None:
    """The engine is the library: importing any of its modules loads no door, UI toolkit or torch."""
    engine_dir = Path(__file__).resolve().parents[1] / "engine"
    modules = sorted(
        ".".join(("engine", *p.relative_to(engine_dir).with_suffix("").parts)).removesuffix(".__init__")
        for p in engine_dir.rglob("*.py") if "demo_workspace" not in p.parts)
    assert "engine.api" in modules and "engine.index.store" in modules and len(modules) > 20
    code = (
        "import importlib, json, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({FRONT_ENDS!r}))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []


def test_keyword_search_and_status_never_import_torch(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    code = (
        "import sys\n"
        "from engine.config import load_config\n"
        "from engine.api import MemoryEngine\n"
        f"eng = MemoryEngine(load_config(workspace={str(ws)!r}))\n"
        "eng.status(); eng.search('violin', mode='keyword'); eng.get('MEMORY.md')\n"
        "print('torch' in sys.modules, 'sentence_transformers' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ})
    assert out.stdout.strip() == "False False"


def test_reindex_file_makes_a_save_searchable_without_touching_other_files(engine: MemoryEngine) -> None:
    engine.sync()
    ws = engine.config.workspace
    (ws / "memory" / "2026-10-02.md").write_text("# 2026-10-02\n\n- Capybara sighting at the standup.\n")
    (ws / "memory" / "2026-10-01.md").write_text("- an unsaved-by-us change elsewhere: wombat\n")
    report = engine.reindex_file("memory/2026-10-02.md")
    assert report.files_indexed == 1
    assert engine.search("capybara", mode="keyword", ensure_fresh=False).results[0].path == "memory/2026-10-02.md"
    # The other file was not re-read: still dirty until the next full sync.
    assert "memory/2026-10-01.md" in engine.dirty_files()
    assert engine.search("wombat", mode="keyword", ensure_fresh=False).results == ()
    conn = engine.store.conn
    assert conn.execute("SELECT count(*) FROM chunks_vec").fetchone()[0] == engine.store.counts()["windows"]


def test_reindex_file_of_a_deleted_file_falls_back_to_a_full_sync(engine: MemoryEngine) -> None:
    engine.sync()
    (engine.config.workspace / "memory" / "2026-10-02.md").unlink()
    engine.reindex_file("memory/2026-10-02.md")
    assert engine.search("violin", mode="keyword", ensure_fresh=False).results == ()


def test_a_corrupt_index_copy_is_named_by_the_one_clock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The copy's name reads in [memory] timezone at MEMDECK_NOW, like every other time memdeck writes.
    monkeypatch.setenv("MEMDECK_NOW", "2031-07-04T23:30:00+00:00")
    ws = _ws(tmp_path)
    cfg = replace(hash_config(ws), memory=replace(hash_config(ws).memory, timezone="Asia/Tokyo"))
    cfg.index_path.parent.mkdir(parents=True, exist_ok=True)
    cfg.index_path.write_bytes(b"this is not a database" * 100)
    with MemoryEngine(cfg) as eng:
        assert eng.search("violin", mode="keyword").results
    names = [p.name for p in cfg.index_path.parent.glob("*.corrupt-*")]
    assert names == [f"{cfg.index_path.name}.corrupt-20310705-083000"]
