"""A search embeds its query on a worker thread while it reads what needs no vector (pipeline.read_early):
the hits are those of the sequential path, bit for bit, and a failing or empty embedding degrades as before."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

import engine.api as api
from engine.api import MemoryEngine
from engine.embed.choice import EmbeddingError, HashingEmbedder
from engine.embed.local import calling_model
from engine.index import queries
from engine.search import pipeline
from engine.search.pipeline import SearchRequest, parse, read_early, run_search
from tests.helpers import hash_config

TODAY = "2026-11-20"
QUERIES = (
    "postgres connection pool",
    "what did we decide about the backup rotation yesterday",
    "notes from last week on the archive bucket",
    "2026-11-12 deploy",
    "the and of",  # stop words only
    "kvasir moonlit orchard",  # matches nothing
    "who owns the review queue",
)


@pytest.fixture(autouse=True)
def _a_free_core(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api, "_idle_core", lambda: True)  # the overlap runs whatever the test machine's load


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    topics = ("postgres connection pool", "backup rotation", "archive bucket lifecycle", "review queue", "deploy")
    for day in range(1, 20):
        lines = [f"# 2026-11-{day:02d}", ""]
        for n, topic in enumerate(topics):
            if (day + n) % 3:
                lines.append(f"- {topic}: Ana and Bo looked at the {topic} again (item {day * 7 + n}).")
        lines += ["", f"We decided to keep the {topics[day % 5]} as it is until the review on day {day}."]
        (ws / "memory" / f"2026-11-{day:02d}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (ws / "MEMORY.md").write_text("# Memory\n\n- Bo owns the review queue.\n- The archive bucket keeps 90 days.\n",
                                  encoding="utf-8")
    return ws


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MemoryEngine:
    monkeypatch.setenv("MEMDECK_TODAY", TODAY)
    eng = MemoryEngine(hash_config(_workspace(tmp_path)), embedder=HashingEmbedder())
    eng.sync()
    assert eng.store.conn.execute("SELECT count(*) FROM line_vectors").fetchone()[0] > 0
    return eng


def _sequential(eng: MemoryEngine, query: str) -> list[pipeline.Hit]:
    """The search as it ran before the worker thread: the vector first, then every stage reading for itself."""
    settings = eng.config.search
    parsed = parse(eng.store, query, eng.clock.today(), ["memory"], settings.heuristics)
    assert eng.embedder is not None
    qvec: list[float] | None = eng.embedder.embed_query(parsed.vector_text)
    mode = "hybrid"
    if not any(qvec or ()):
        qvec, mode = None, "keyword"
    req = SearchRequest(parsed, mode, qvec, settings.max_results, settings.min_score, ("memory",))
    return run_search(eng.store, settings, req, eng._vindex)


@pytest.mark.parametrize("slice_size", [queries.SLICE, 3])
def test_the_concurrent_search_returns_the_sequential_hits_bit_for_bit(
        engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch, slice_size: int) -> None:
    # A slice of 3 ids makes every read of rows and line vectors span several statements: the early reads are
    # put back in the order those return, or a row's place in the matrix product would move its last bits.
    monkeypatch.setattr(queries, "SLICE", slice_size)
    with engine:
        for query in QUERIES:
            resp = engine.search(query, ensure_fresh=False)
            assert list(resp.results) == _sequential(engine, query), query  # ids, scores, snippets: every field
        assert any(engine.search(q, ensure_fresh=False).results for q in QUERIES)


def test_the_early_reads_stand_in_for_the_stages_reads(engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(queries, "SLICE", 4)
    settings = engine.config.search
    with engine:
        assert engine.embedder is not None
        for query in QUERIES:
            parsed = parse(engine.store, query, engine.clock.today(), ["memory"], settings.heuristics)
            provisional = SearchRequest(parsed, "hybrid", None, 6, 0.0, ("memory",))
            early = read_early(engine.store, settings, provisional)
            req = SearchRequest(parsed, "hybrid", engine.embedder.embed_query(parsed.vector_text), 6, 0.0, ("memory",))
            with_early = run_search(engine.store, settings, req, engine._vindex, early=early)
            assert with_early == run_search(engine.store, settings, req, engine._vindex), query
            # Read for a vector leg: a request without one (its embedding failed) reads its own, shallower list.
            keyword = SearchRequest(parsed, "keyword", None, 6, 0.0, ("memory",))
            assert pipeline.early_key(settings, keyword, keyword.use_vec) != early.key
            assert run_search(engine.store, settings, keyword, early=early) == run_search(engine.store, settings,
                                                                                          keyword)


def test_the_query_is_embedded_while_the_keyword_side_is_read(engine: MemoryEngine,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    read = threading.Event()
    original = pipeline.read_early

    def reading(*args: object, **kwargs: object) -> pipeline.Early:
        out = original(*args, **kwargs)  # type: ignore[arg-type]
        read.set()
        return out

    class Waiting(HashingEmbedder):
        def __init__(self) -> None:
            super().__init__()
            self.saw_early: list[bool] = []

        def embed_query(self, text: str) -> list[float]:
            calling_model()  # as the local models say it, right before their C call
            # Sequentially the early reads would come after this returns: the wait would run out, unset.
            self.saw_early.append(read.wait(timeout=30.0))
            return super().embed_query(text)

    monkeypatch.setattr(api, "read_early", reading)
    emb = Waiting()
    with engine:
        engine.embedder = emb
        resp = engine.search("postgres connection pool", ensure_fresh=False)
    assert emb.saw_early == [True]
    assert resp.mode == "hybrid" and resp.provider == "hash" and resp.results


class _Failing(HashingEmbedder):
    def __init__(self, error: BaseException | None = None, vector: Sequence[float] | None = None) -> None:
        super().__init__()
        self.error, self.vector = error, vector
        self.threads: list[str] = []

    def embed_query(self, text: str) -> list[float]:
        self.threads.append(threading.current_thread().name)
        if self.error is not None:
            raise self.error
        return list(self.vector) if self.vector is not None else super().embed_query(text)


def test_without_the_models_signal_the_search_waits_for_the_vector_first(engine: MemoryEngine,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # An embedder that does not say when its model runs (remote, MiniLM) is run as before: vector, then the rest.
    events: list[str] = []
    original = pipeline.read_early

    def reading(*args: object, **kwargs: object) -> pipeline.Early:
        events.append("read_early")
        return original(*args, **kwargs)  # type: ignore[arg-type]

    class Silent(HashingEmbedder):
        def embed_query(self, text: str) -> list[float]:
            events.append("embedded")
            return super().embed_query(text)

    monkeypatch.setattr(api, "read_early", reading)
    with engine:
        engine.embedder = Silent()
        assert engine.search("postgres connection pool", ensure_fresh=False).results
    assert events == ["embedded", "read_early"]


def test_with_no_free_core_the_query_is_embedded_first_on_the_search_thread(
        engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    with engine:
        overlapped = [engine.search(q, ensure_fresh=False) for q in QUERIES]
        monkeypatch.setattr(api, "_idle_core", lambda: False)
        emb = _Failing()
        engine.embedder = emb
        assert [engine.search(q, ensure_fresh=False) for q in QUERIES] == overlapped
    assert set(emb.threads) == {threading.current_thread().name}


def test_an_embedding_failure_in_the_worker_degrades_to_keyword_with_the_same_warning(engine: MemoryEngine) -> None:
    with engine:
        keyword = engine.search("backup rotation", mode="keyword", ensure_fresh=False)
        emb = _Failing(EmbeddingError("hash", "provider down"))
        engine.embedder = emb
        resp = engine.search("backup rotation", ensure_fresh=False)
    assert emb.threads == ["memdeck-query-embedding"]
    assert resp.warnings == ("vector search failed (hash: provider down); showing keyword results",)
    assert (resp.mode, resp.provider, resp.model) == ("keyword", "none", None)
    assert resp.results == keyword.results and resp.results


def test_a_zero_query_vector_still_means_keyword(engine: MemoryEngine) -> None:
    with engine:
        keyword = engine.search("backup rotation", mode="keyword", ensure_fresh=False)
        engine.embedder = _Failing(vector=[0.0] * 256)
        resp = engine.search("backup rotation", ensure_fresh=False)
    assert (resp.mode, resp.provider, resp.warnings) == ("keyword", "none", ())
    assert resp.results == keyword.results


def test_any_other_error_in_the_worker_reaches_the_caller(engine: MemoryEngine) -> None:
    with engine:
        engine.embedder = _Failing(RuntimeError("the engine crashed"))
        with pytest.raises(RuntimeError, match="the engine crashed"):
            engine.search("backup rotation", ensure_fresh=False)


@pytest.mark.parametrize("slice_size", [queries.SLICE, 3])
def test_rows_read_early_are_put_back_in_the_order_of_one_read(
        engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch, slice_size: int) -> None:
    # The matrix product's last bits depend on a row's place: the order must be exactly the one read's.
    monkeypatch.setattr(queries, "SLICE", slice_size)
    with engine:
        ids = [int(r[0]) for r in engine.store.conn.execute("SELECT id FROM chunks ORDER BY id DESC")]
        ids = ids[1::2] + ids[::2]  # neither ascending nor descending
        assert len(ids) > 3 * slice_size or slice_size == queries.SLICE
        for known_ids in (ids[:5], ids[::3], []):
            lines = pipeline.line_vectors_of(engine.store, known_ids)
            assert pipeline.line_rows(engine.store, ids, lines) == queries.line_vectors_for(engine.store.conn, ids)
            rows = pipeline.load_rows(engine.store, known_ids)
            assert list(pipeline.load_rows(engine.store, ids, rows).items()) == list(
                pipeline.load_rows(engine.store, ids).items())


def _blas_threads() -> int | None:
    import ctypes
    import glob

    import numpy

    for lib in sorted(glob.glob(str(Path(numpy.__file__).parent.parent / "numpy.libs" / "lib*openblas*.so*"))):
        for name in ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads", "openblas_get_num_threads"):
            getter = getattr(ctypes.CDLL(lib), name, None)
            if getter is not None:
                return int(getter())
    return None


def test_the_e5_path_puts_numpys_blas_at_one_thread_unless_told_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy  # noqa: F401  (imported already: the ctypes path)

    from engine.embed import local

    if local._blas_setter() is None or _blas_threads() is None:
        pytest.skip("this numpy vendors no OpenBLAS this knows")
    monkeypatch.setenv(local.BLAS_THREADS_ENV, "2")
    calls: list[int] = []
    monkeypatch.setattr(local, "_blas_setter", lambda: calls.append)
    assert not local.one_blas_thread() and calls == []  # the user's setting stands
    monkeypatch.undo()
    monkeypatch.delenv(local.BLAS_THREADS_ENV, raising=False)
    assert local.one_blas_thread()
    assert _blas_threads() == 1
