"""In-process search latency (p50/p95/p99) for keyword, vector and hybrid search, beside raw FTS5 and KNN baselines.

Usage::

    python bench/search_latency.py --chunks 10000 --out bench/results/speed-search-10k.json
        [--queries 240] [--embedder bench|local|minilm|hash] [--root /tmp/memdeck-bench]

The index of a generated workspace (bench/gen_workspace.py) is built once and reused. ``--embedder bench`` (the
default) stores fast pseudo-random document vectors but plans the default model's windows (multilingual-e5-small,
508 tokens); every *query* is embedded once by the real e5 (warm; its own row) and then served from a dict, so the
vector and hybrid rows are the search's own cost (the goal check adds the embedding). ``local`` embeds the
documents with e5 too (a few chunks/s on 2 shared cores); ``minilm`` with all-MiniLM-L6-v2. Searches call ``MemoryEngine.search(..., ensure_fresh=False)`` as the TUI and the
MCP server do; the freshness check the CLI adds (a walk and an ``lstat`` of every file) has its own rows.
Baselines on the same index in the same process: raw FTS5 ``bm25()`` top-20, raw sqlite-vec KNN (k=20), numpy
exact KNN, and the query embedding alone. Every row has wall-clock p50/p95/p99, the process's CPU-time p50/p95
and the load average: the machine is shared, and CPU time is what other jobs distort least.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path
from typing import Any

from _bench_common import (
    DEFAULT_ROOT,
    EMBEDDERS,
    header,
    index_for,
    latency_ms,
    load_avg,
    rss_mb,
    table,
    write_json,
)

GOALS_MS = {10_000: {"keyword": 10.0, "hybrid": 25.0}, 100_000: {"hybrid": 100.0}}


def make_queries(n: int, seed: int = 11) -> list[str]:
    """``n`` mixed queries: single common/rare words, names, phrases, questions, dates, Chinese, and misses."""
    from gen_workspace import CJK, COMMON, NAMES, PROJECTS, RARE

    rng = random.Random(seed)
    kinds = [
        lambda: rng.choice(COMMON),
        lambda: rng.choice(RARE),
        lambda: f"{rng.choice(NAMES)} {rng.choice(PROJECTS)}",
        lambda: " ".join(rng.choice(COMMON) for _ in range(3)),
        lambda: f"what did {rng.choice(NAMES)} decide about the {rng.choice(PROJECTS)} {rng.choice(COMMON)}",
        lambda: f"when is the {rng.choice(COMMON)} {rng.choice(COMMON)} deadline for {rng.choice(PROJECTS)}",
        lambda: f"{rng.choice(RARE)} {rng.choice(COMMON)}",
        lambda: f"notes from 20{rng.randint(19, 26)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        lambda: rng.choice(CJK)[: rng.randint(2, 6)],
        lambda: f"how do we {rng.choice(COMMON)} the {rng.choice(COMMON)} {rng.choice(COMMON)} with {rng.choice(RARE)}",
        lambda: f"xylophonic{rng.randint(1, 999)} quasar",  # matches nothing
    ]
    return [kinds[i % len(kinds)]() for i in range(n)]


def _progress(message: str, started: float) -> None:
    """One line per step on stdout (a 100k run takes many minutes: a stall shows where it is)."""
    print(f"[{time.perf_counter() - started:7.1f} s, load {load_avg():.2f}] {message}", flush=True)


Timings = tuple[list[float], list[float]]


def _record(rows: dict[str, dict[str, float]], name: str, timed: Timings, started: float) -> None:
    """Add a latency row and report it: wall-clock percentiles, this process's CPU-time p50/p95 (less
    sensitive to other jobs on a shared machine) and the load average when it finished."""
    wall, cpu = timed
    cpu_ms = latency_ms(cpu)
    rows[name] = {**latency_ms(wall), "cpu_p50_ms": cpu_ms["p50_ms"], "cpu_p95_ms": cpu_ms["p95_ms"],
                  "load_avg": load_avg()}
    _progress(f"{name}: p50 {rows[name]['p50_ms']:.1f} ms, p95 {rows[name]['p95_ms']:.1f} ms "
              f"(CPU p50 {cpu_ms['p50_ms']:.1f} ms)", started)


def _time(fn: Any, queries: list[str]) -> Timings:
    """Wall-clock and process CPU seconds of ``fn(q)`` for each query."""
    wall: list[float] = []
    cpu: list[float] = []
    for q in queries:
        c = time.process_time()
        t = time.perf_counter()
        fn(q)
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return wall, cpu


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Build or reuse the index, then time every mode and baseline."""
    from datetime import date

    from engine.index.store import serialize_vector
    from engine.search.query import build_fts_query, parse_query

    result = header("search_latency", args)
    started = time.perf_counter()
    engine, _ws, info = index_for(args.chunks, args.embedder, args.seed, args.root)
    result["index"] = info
    _progress(f"index ready: {info}", started)
    embedder = engine.embedder
    t = time.perf_counter()
    engine.load_model()
    result["model_load_s"] = round(time.perf_counter() - t, 2)
    _progress(f"model loaded in {result['model_load_s']} s", started)
    if args.torch_threads and hasattr(embedder, "load"):
        import torch

        torch.set_num_threads(args.torch_threads)
    queries = make_queries(args.queries)
    conn = engine.store.conn
    # Warm up: the model's first calls, SQLite's page cache, the in-memory vector copy (if used).
    for q in queries[:5]:
        for mode in ("keyword", "vector", "hybrid"):
            engine.search(q, mode=mode, ensure_fresh=False)
    in_memory = engine._vindex.worthwhile(engine.store)
    _progress("warmed up", started)
    result["vector_path"] = "numpy in-memory copy" if in_memory else "sqlite-vec vec0 exact KNN"
    # Query embeddings: measured once per query (their own row), then served from a dict so the search rows
    # are the engine's own cost. On a loaded shared machine torch's 2 intra-op threads thrash (measured 1–2 s
    # per query at load 7–9, 0.2 s with one thread), so --torch-threads 1 is the default here.
    result["torch_threads"] = args.torch_threads
    live_embed = embedder.embed_query
    qvecs: dict[str, list[float]] = {}
    embed_times: Timings = ([], [])
    for q in queries:
        c = time.process_time()
        t = time.perf_counter()
        qvecs[q] = live_embed(q)
        embed_times[0].append(time.perf_counter() - t)
        embed_times[1].append(time.process_time() - c)
    embedder.embed_query = lambda q: qvecs[q] if q in qvecs else live_embed(q)
    result["load_avg_timing_start"] = load_avg()
    _progress(f"{len(queries)} queries embedded", started)

    rows: dict[str, dict[str, float]] = {}
    hits: dict[str, float] = {}
    for mode in ("keyword", "vector", "hybrid"):
        counts: list[int] = []

        def one(q: str, mode: str = mode, counts: list[int] = counts) -> None:
            counts.append(len(engine.search(q, mode=mode, ensure_fresh=False).results))

        _record(rows, f"engine {mode}", _time(one, queries), started)
        hits[f"engine {mode}"] = round(sum(counts) / len(counts), 2)

    fresh_q = queries[: args.fresh_queries]
    if fresh_q:  # the freshness check walks and stats every file: a few suffice
        _record(rows, "engine hybrid, ensure_fresh=True (CLI path)",
                _time(lambda q: engine.search(q, mode="hybrid"), fresh_q), started)
        _record(rows, "engine.dirty_files() alone (stat every file)",
                _time(lambda q: engine.dirty_files(), queries[: max(5, min(20, args.fresh_queries))]), started)

    _record(rows, "store.counts() alone (every vector/hybrid search runs it)",
            _time(lambda q: engine.store.counts(), queries[:50]), started)
    # Baselines on the same index.
    _record(rows, "query embedding alone (warm model)", embed_times, started)

    def fts(q: str) -> None:
        m = build_fts_query(parse_query(q, date.today()))
        if m is not None:
            conn.execute("SELECT rowid, bm25(chunks_fts) AS r FROM chunks_fts WHERE chunks_fts MATCH ?"
                         " ORDER BY r LIMIT 20", (m,)).fetchall()

    _record(rows, "raw FTS5 bm25 top-20", _time(fts, queries), started)

    def knn(q: str) -> None:
        conn.execute("SELECT rowid, distance FROM chunks_vec WHERE embedding MATCH ? AND k = 20",
                     (serialize_vector(qvecs[q]),)).fetchall()

    _record(rows, "raw sqlite-vec KNN k=20 (vector precomputed)", _time(knn, queries), started)

    import numpy as np

    blobs = [b for (b,) in conn.execute("SELECT embedding FROM chunks_vec")]
    matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)

    def np_knn(q: str) -> None:
        sims = matrix @ np.asarray(qvecs[q], dtype=np.float32)
        top = np.argpartition(-sims, 20)[:20]
        top[np.argsort(-sims[top])]

    _progress(f"read {len(blobs):,} vectors for the numpy baseline", started)
    _record(rows, "raw numpy exact KNN k=20 (vector precomputed)", _time(np_knn, queries), started)

    result["load_avg_timing_end"] = load_avg()
    result["latency"] = rows
    result["mean_results"] = hits
    emb = rows["query embedding alone (warm model)"]["p50_ms"]
    result["ratios"] = {
        "keyword_p50_over_raw_fts_p50": round(rows["engine keyword"]["p50_ms"] / rows["raw FTS5 bm25 top-20"]["p50_ms"], 2),
        "hybrid_p50_plus_query_embedding_p50_ms": round(rows["engine hybrid"]["p50_ms"] + emb, 2),
        "hybrid_p95_plus_query_embedding_p95_ms": round(
            rows["engine hybrid"]["p95_ms"] + rows["query embedding alone (warm model)"]["p95_ms"], 2),
        "hybrid_p95_plus_idle_anchor_embedding_10ms": round(rows["engine hybrid"]["p95_ms"] + 10.0, 2),
        "hybrid_p50_over_openclaw_52ms": round(rows["engine hybrid"]["p50_ms"] / 52.0, 3),
        "hybrid_p95_over_openclaw_70ms": round(rows["engine hybrid"]["p95_ms"] / 70.4, 3),
    }
    goals = GOALS_MS.get(args.chunks, {})
    # The goal counts the query embedding: hybrid is judged on search p95 + the idle-machine embedding p95
    # (10 ms, anchors.md) and, stricter, + the embedding p95 measured in this run.
    result["goals"] = {f"{m} p95 <= {g} ms (search + 10 ms embedding for hybrid)": (
        rows[f"engine {m}"]["p95_ms"] + (10.0 if m == "hybrid" else 0.0)) <= g for m, g in goals.items()}
    result["rss_mb"] = rss_mb()
    engine.close()
    return result


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=240)
    ap.add_argument("--embedder", choices=EMBEDDERS, default="bench")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    ap.add_argument("--fresh-queries", type=int, default=40, help="queries for the ensure_fresh=True row")
    ap.add_argument("--torch-threads", type=int, default=1, help="0: torch's default")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    res = run(args)
    print(f"\nsearch latency, {res['index']['chunks']:,} chunks / {res['index']['windows']:,} vectors "
          f"({res['vector_path']}), embedder {args.embedder}, {args.queries} queries; "
          f"load avg {res['load_avg_timing_start']} → {res['load_avg_timing_end']}\n")
    print(table(["what", "n", "p50 ms", "p95 ms", "p99 ms", "max ms", "CPU p50 ms", "load"],
                [[k, v["n"], v["p50_ms"], v["p95_ms"], v["p99_ms"], v["max_ms"], v["cpu_p50_ms"], v["load_avg"]]
                 for k, v in res["latency"].items()]))
    print("\nratios:", res["ratios"])
    print("goals:", res["goals"] or "(none at this size)")
    write_json(args.out, res)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
