"""Throughput of each local embedding model as the indexer uses it: load time, chunks/s, ms per query, memory.

Usage::

    python bench/embed_throughput.py [--models all-MiniLM-L6-v2,all-MiniLM-L6-v2@torch,multilingual-e5-small,...]
        [--xquad /path/to/xquad.zh.json] [--queries 50] [--repeat 2] [--out bench/results/embed_throughput.json]

``model@engine`` picks what runs all-MiniLM-L6-v2 (``@numpy``, the default, or ``@torch`` for
sentence-transformers; see ``MEMDECK_MINILM_ENGINE``), so both appear as rows measured the same way.

Each model runs in its own subprocess (so one model's imports do not flatter or burden the next). The corpus is
the bundled demo workspace chunked like the index (400-token chunks, then windows that fit the model), plus, with
``--xquad``, 120 Chinese XQuAD paragraphs. Queries are embedded one at a time, as a search does. The 1-minute
load average before and after each run is recorded: the machine is shared, so compare numbers taken together.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from _eval_common import machine_info, markdown_table, now_iso, write_outputs  # noqa: E402

DEFAULT_MODELS = ("all-MiniLM-L6-v2", "all-MiniLM-L6-v2@torch", "multilingual-e5-small", "use-multilingual-v3")
QUERIES = (
    "what did we decide about the release checklist",
    "postgres connection pool exhausted",
    "Kada je sastanak sa Markom?",
    "До када треба да предамо посао?",
    "用户不能吃什么东西？",
    "which theme does the user prefer",
    "how do I rotate the API keys",
    "数据中心搬迁是什么时候",
)


def corpus(xquad: Path | None) -> dict[str, list[str]]:
    """Named lists of chunk texts: the demo workspace's Markdown chunks and optionally XQuAD zh paragraphs."""
    from engine.demo import DEMO_SOURCE
    from engine.index.chunking import chunk_markdown

    demo: list[str] = []
    for path in sorted(DEMO_SOURCE.rglob("*.md")):
        demo.extend(c.text for c in chunk_markdown(path.read_text(encoding="utf-8")))
    out = {"demo-en": demo}
    if xquad is not None and xquad.exists():
        data = json.loads(xquad.read_text(encoding="utf-8"))
        paras = [p["context"] for art in data["data"] for p in art["paragraphs"]]
        out["xquad-zh"] = paras[:120]
    return out


def _cpu() -> float:
    """CPU seconds this process used so far (all threads): steadier than wall time on a shared machine."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(model: str, xquad: Path | None, n_queries: int, repeat: int) -> dict[str, Any]:
    """Load one local model and time it on the corpus (runs inside the child process)."""
    from engine.embed.local import MINILM_ENGINE_ENV, make_local_embedder, resolve_local_model
    from engine.index.chunking import plan_windows

    model_name, _, engine = model.partition("@")
    spec = resolve_local_model(model_name)
    if spec is None:
        raise SystemExit(f"unknown local model {model_name!r}")
    if engine:
        if spec.name != "all-MiniLM-L6-v2":
            raise SystemExit(f"{model}: only all-MiniLM-L6-v2 has a choice of engine")
        os.environ[MINILM_ENGINE_ENV] = engine  # read when the embedder is built
    load_avg_before = os.getloadavg()[0]
    started = time.perf_counter()
    emb = make_local_embedder(spec, batch_size=32)
    if emb is None:
        raise SystemExit(f"{model}: package {spec.package} is not installed")
    emb.load()
    load_s = time.perf_counter() - started
    result: dict[str, Any] = {"model": model, "engine": getattr(emb, "engine", None), "dims": emb.dims,
                              "max_tokens": emb.max_tokens, "load_seconds": round(load_s, 2), "corpora": {}}
    for name, chunks in corpus(xquad).items():
        windows = [w.text for text in chunks for w in plan_windows(text, emb.count_tokens, emb.max_tokens)]
        emb.embed_documents(windows[:8])  # warm-up: first-call allocations
        best = None
        best_cpu = None
        for _ in range(repeat):
            t0, c0 = time.perf_counter(), _cpu()
            planned = [w.text for text in chunks for w in plan_windows(text, emb.count_tokens, emb.max_tokens)]
            emb.embed_documents(planned)
            elapsed, cpu = time.perf_counter() - t0, _cpu() - c0
            best = elapsed if best is None else min(best, elapsed)
            best_cpu = cpu if best_cpu is None else min(best_cpu, cpu)
        assert best is not None and best_cpu is not None
        result["corpora"][name] = {
            "chunks": len(chunks),
            "windows": len(windows),
            "chars": sum(len(c) for c in chunks),
            "seconds": round(best, 3),
            "chunks_per_s": round(len(chunks) / best, 1),
            "windows_per_s": round(len(windows) / best, 1),
            "cpu_seconds": round(best_cpu, 3),
            "chunks_per_cpu_s": round(len(chunks) / best_cpu, 1),
        }
    queries = [QUERIES[i % len(QUERIES)] + (f" {i}" if i >= len(QUERIES) else "") for i in range(n_queries)]
    emb.embed_query("warm up")
    times = []
    c0 = _cpu()
    for q in queries:
        t0 = time.perf_counter()
        emb.embed_query(q)
        times.append((time.perf_counter() - t0) * 1000)
    result["query_cpu_ms"] = round((_cpu() - c0) * 1000 / len(queries), 2)
    times.sort()
    result["query_ms_median"] = round(statistics.median(times), 2)
    result["query_ms_p95"] = round(times[min(len(times) - 1, int(0.95 * len(times)))], 2)
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 0)
    result["load_avg_1m"] = [round(load_avg_before, 2), round(os.getloadavg()[0], 2)]
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS))
    parser.add_argument("--xquad", type=Path, default=None, help="an XQuAD json file for a Chinese corpus")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=2, help="timed passes over each corpus (best is kept)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "embed_throughput.json")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    if args.one:
        print(json.dumps(measure(args.one, args.xquad, args.queries, args.repeat)))
        return 0
    rows: list[dict[str, Any]] = []
    for model in [m.strip() for m in args.models.split(",") if m.strip()]:
        cmd = [sys.executable, __file__, "--one", model, "--queries", str(args.queries), "--repeat", str(args.repeat)]
        if args.xquad is not None:
            cmd += ["--xquad", str(args.xquad)]
        print(f"measuring {model} …", file=sys.stderr, flush=True)
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(done.stderr[-2000:], file=sys.stderr)
            rows.append({"model": model, "error": done.stderr.strip().splitlines()[-1:] or ["failed"]})
            continue
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    payload = {"when": now_iso(), "machine": machine_info(), "results": rows}
    table_rows = []
    for r in rows:
        if "error" in r:
            table_rows.append([r["model"], "error", "", "", "", "", "", "", "", ""])
            continue
        corp = r["corpora"]
        table_rows.append([
            f"{r['model'].partition('@')[0]} ({r['engine']})" if r.get("engine") else r["model"],
            r["dims"], r["load_seconds"],
            f"{corp['demo-en']['chunks_per_s']} ({corp['demo-en']['chunks_per_cpu_s']}/cpu-s)",
            f"{corp['xquad-zh']['chunks_per_s']} ({corp['xquad-zh']['chunks_per_cpu_s']}/cpu-s)"
            if "xquad-zh" in corp else "–",
            r["query_ms_median"], r["query_ms_p95"], r["query_cpu_ms"], f"{r['peak_rss_mb']:.0f}",
            f"{r['load_avg_1m'][0]} → {r['load_avg_1m'][1]}",
        ])
    md = "\n".join([
        "# Local embedding throughput",
        "",
        f"{payload['when']} · {payload['machine']['cpus']} CPUs · {payload['machine']['processor']} · "
        f"Python {payload['machine']['python']}",
        "",
        markdown_table(["model", "dims", "load s", "demo chunks/s", "zh paragraphs/s", "query ms (median)",
                        "query ms (p95)", "query CPU ms", "peak RSS MB", "load avg 1m"], table_rows),
        "",
        "Chunks are the index's 400-token chunks, windowed to each model's input limit as the indexer does;",
        "throughput is the best of the timed passes after a warm-up. Queries are embedded one at a time.",
        "“/cpu-s” divides by the CPU time the process used (all threads): it moves less with other load.",
    ])
    md_path = write_outputs(args.out, payload, md)
    print(md)
    print(f"\nwrote {args.out} and {md_path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
