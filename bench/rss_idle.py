"""Resident memory, idle with the model loaded, on a 10k-chunk index: the engine alone, and the whole TUI.

Usage::

    python bench/rss_idle.py --chunks 10000 --out bench/results/speed-rss-10k.json [--embedder bench] [--no-tui] \\
        [--query-model multilingual-e5-small]

A fresh subprocess opens the index, loads all-MiniLM-L6-v2 (``engine.load_model()``), runs 30 hybrid searches
(so the in-memory vector copy, SQLite's page cache and the model's buffers are all resident), then idles 2 s;
VmRSS is read at each step. A second subprocess runs the TUI itself (headless, 120×36) on the same index: it
opens the index, lists the tree, loads the model in its worker as a user's session does, then 10 hybrid queries
are typed into the search box, then it idles 2 s. The index is built first (reused) by the parent. Goal: ≤ 600 MB
(OpenClaw's CLI ~600 MB).

``--query-model`` (engine only) loads another local model in the child and embeds the queries with it, over the
same benchmark index (its document vectors are seeded noise either way; a 512-d query is cut to the index's
384 dims): the RSS and the search path are that model's, the ranking is meaningless.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from _bench_common import BENCH_DIR, DEFAULT_ROOT, EMBEDDERS, header, index_for, load_avg, table, write_json

GOAL_MB = 600.0
CHILD = """
import json, sys, time
sys.path.insert(0, {bench!r})
from _bench_common import open_engine, make_embedder, rss_mb, peak_rss_mb
steps = {{"python + nothing": rss_mb()}}
import engine.api  # noqa
steps["engine imported"] = rss_mb()
emb = make_embedder({kind!r})
if {query_model!r}:
    from engine.embed.local import make_local_embedder, resolve_local_model
    real = make_local_embedder(resolve_local_model({query_model!r}), 32)
    dims = emb.dims

    class _Cut:
        # The index holds 384-d vectors: a wider query keeps its first 384 components (RSS and timing only).
        loaded = property(lambda self: real.loaded)
        def load(self): real.load()
        def count_tokens(self, texts): return real.count_tokens(texts)
        def embed_query(self, text):
            v = real.embed_query(text)[:dims]
            n = sum(x * x for x in v) ** 0.5 or 1.0
            return [x / n for x in v]

    emb._local = _Cut()
eng = open_engine({ws!r}, __import__("pathlib").Path({home!r}), emb)
steps["index opened"] = rss_mb()
eng.load_model()
steps["model loaded"] = rss_mb()
from search_latency import make_queries
for q in make_queries(30):
    eng.search(q, mode="hybrid", ensure_fresh=False)
steps["after 30 hybrid searches"] = rss_mb()
time.sleep(2)
steps["idle 2 s later"] = rss_mb()
print(json.dumps({{"steps": steps, "peak": peak_rss_mb(), "vector_path_numpy": eng._vindex._matrix is not None,
                  "query_model": {query_model!r} or "all-MiniLM-L6-v2"}}))
"""

TUI_CHILD = """
import asyncio, json, sys, time
from pathlib import Path
sys.path.insert(0, {bench!r})
from _bench_common import make_embedder, peak_rss_mb, rss_mb
steps = {{"python + nothing": rss_mb()}}
import engine.api
_init = engine.api.MemoryEngine.__init__

def init(self, config, embedder=None):
    # the index was built with the benchmark embedder: the TUI must open it with the same one (real query model)
    _init(self, config, embedder if embedder is not None else make_embedder({kind!r}))

engine.api.MemoryEngine.__init__ = init
from engine.config import load_config
from tui.app import MemdeckApp
steps["TUI imported"] = rss_mb()
from search_latency import make_queries

async def settle(pilot):
    app = pilot.app
    for _ in range(5000):
        await pilot.pause()
        await asyncio.wait_for(app.workers.wait_for_complete(), timeout=1200)
        await pilot.pause()
        if not any(w.is_running for w in app.workers) and not app.main.sync.running:
            return

async def main():
    home = Path({home!r})
    cfg = load_config(workspace=Path({ws!r}), home=home, config_path=home / "config.toml")
    app = MemdeckApp(cfg, watch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        steps["TUI up: index open, tree listed, model loaded"] = rss_mb()
        for query in make_queries(10):
            app.main.search.query_input.value = query
            await settle(pilot)
        steps["after 10 hybrid queries typed"] = rss_mb()
        await asyncio.sleep(2)
        steps["idle 2 s later"] = rss_mb()
        state = app.bridge.vector_state
        shown = app.main.search.results.option_count
    print(json.dumps({{"steps": steps, "peak": peak_rss_mb(), "vector_state": state, "results_shown": shown}}))

asyncio.run(main())
"""


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Build or reuse the index, then measure a fresh process."""
    if args.query_model and (args.embedder != "bench" or args.tui):
        raise SystemExit("--query-model needs --embedder bench and --no-tui (it measures the engine alone)")
    result = header("rss_idle", args)
    engine, ws, info = index_for(args.chunks, args.embedder, args.seed, args.root, real_queries=False)
    engine.close()
    result["index"] = info
    code = CHILD.format(bench=str(BENCH_DIR), ws=str(ws), home=info["home"], kind=args.embedder,
                        query_model=args.query_model or "")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    child = json.loads(proc.stdout.strip().splitlines()[-1])
    result["rss_mb"] = child["steps"]
    result["peak_rss_mb"] = child["peak"]
    result["in_memory_vector_copy"] = child["vector_path_numpy"]
    result["query_model"] = child["query_model"]
    idle = child["steps"]["idle 2 s later"]
    result["goals"] = {f"idle RSS <= {GOAL_MB:.0f} MB": idle <= GOAL_MB}
    if args.tui:
        code = TUI_CHILD.format(bench=str(BENCH_DIR), ws=str(ws), home=info["home"], kind=args.embedder)
        env = {**os.environ, "MEMDECK_HOME": info["home"], "MEMDECK_CLIPBOARD": "osc52",
               "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env,
                              cwd=BENCH_DIR.parent)
        tui = json.loads(proc.stdout.strip().splitlines()[-1])
        result["tui_rss_mb"] = tui["steps"]
        result["tui_peak_rss_mb"] = tui["peak"]
        result["tui_vector_state"] = tui["vector_state"]
        result["tui_results_shown"] = tui["results_shown"]
        result["goals"][f"TUI idle RSS <= {GOAL_MB:.0f} MB"] = tui["steps"]["idle 2 s later"] <= GOAL_MB
    result["load_avg_end"] = load_avg()
    return result


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=10_000)
    ap.add_argument("--embedder", choices=EMBEDDERS, default="bench")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    ap.add_argument("--no-tui", dest="tui", action="store_false", help="Measure the engine alone, not the TUI.")
    ap.add_argument("--query-model", default="", help="embed the queries with this local model (with --no-tui)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    res = run(args)
    print(f"\nengine + model RSS, {res['index']['chunks']:,} chunks / {res['index']['windows']:,} vectors "
          f"(in-memory vector copy: {res['in_memory_vector_copy']}); load avg {res['load_avg_start']}\n")
    print(table(["step", "RSS MB"], [[k, v] for k, v in res["rss_mb"].items()] + [["peak", res["peak_rss_mb"]]]))
    if "tui_rss_mb" in res:
        print(f"\nthe TUI (headless 120×36), vector state {res['tui_vector_state']}\n")
        print(table(["step", "RSS MB"], [[k, v] for k, v in res["tui_rss_mb"].items()]
                    + [["peak", res["tui_peak_rss_mb"]]]))
    print("goals:", res["goals"])
    write_json(args.out, res)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
