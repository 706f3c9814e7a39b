"""Edit one file of a large workspace → searchable again: p50/p95 of reindex + the search that finds the edit.

Usage::

    python bench/incremental.py --chunks 10000 --out bench/results/speed-incremental-10k.json
        [--edits 30] [--embedder bench|local|hash]

Each round edits one memory file (alternately: a new paragraph appended, or a line in the middle changed),
holding a new unique word, then times ``engine.reindex_file(rel)`` (the TUI's after-save call: it stats and
re-chunks that one file and embeds its new windows with the warm model, without rescanning the workspace) and a
keyword search for the new word, which must find it. With ``--embedder bench`` the index's old vectors are fast
pseudo-random ones, but the edited file's new windows are embedded by the real all-MiniLM-L6-v2 (the cost
the goal includes). The edited files are restored (and re-synced) at the end. Goal: ≤ 1 s at 10k chunks.
Rows carry wall-clock and CPU-time percentiles (the machine is shared); ``--torch-threads 1`` (default) as in
``search_latency.py``: two intra-op threads thrash when other jobs hold the cores.
"""

from __future__ import annotations

import argparse
import random
import secrets
import sys
import time
from pathlib import Path
from typing import Any

from _bench_common import DEFAULT_ROOT, EMBEDDERS, header, index_for, latency_ms, load_avg, table, write_json

GOAL_S = 1.0


def _edit(text: str, word: str, middle: bool, rng: random.Random) -> str:
    line = f"- {word}: Marko moved the atlas release review to Friday because the backup failed again."
    if not middle:
        return text.rstrip("\n") + "\n\n" + line + "\n"
    lines = text.split("\n")
    candidates = [i for i, s in enumerate(lines) if s.startswith("- ")] or [len(lines) // 2]
    i = candidates[rng.randrange(len(candidates))]
    lines[i] = line
    return "\n".join(lines)


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Edit, reindex, search; repeat; restore."""
    result = header("incremental", args)
    engine, ws, info = index_for(args.chunks, args.embedder, args.seed, args.root)
    result["index"] = info
    if hasattr(engine.embedder, "real_documents"):
        engine.embedder.real_documents = True
    engine.load_model()
    if args.torch_threads and "torch" in sys.modules:
        import torch

        torch.set_num_threads(args.torch_threads)
    result["torch_threads"] = args.torch_threads
    rng = random.Random(args.seed)
    run_tag = secrets.token_hex(4)
    files = sorted(p for p in ws.rglob("*.md"))
    originals: dict[Path, bytes] = {}
    total: list[float] = []
    reindex: list[float] = []
    search: list[float] = []
    scan: list[float] = []
    total_cpu: list[float] = []
    reindex_cpu: list[float] = []
    scan_cpu: list[float] = []
    embedded: list[int] = []
    found = 0
    result["load_avg_timing_start"] = load_avg()
    try:
        for i in range(args.edits):
            path = files[rng.randrange(len(files))]
            originals.setdefault(path, path.read_bytes())
            rel = path.relative_to(ws).as_posix()
            # A word no earlier run wrote: its windows are not in the embedding cache, so every edit pays for
            # its embedding (the same seed picks the same files and edits).
            word = f"quillwort{run_tag}x{i}z{rng.randrange(10**6)}"
            path.write_text(_edit(path.read_text(encoding="utf-8"), word, i % 2 == 1, rng), encoding="utf-8")
            c0 = time.process_time()
            t0 = time.perf_counter()
            report = engine.reindex_file(rel)
            t1 = time.perf_counter()
            c1 = time.process_time()
            hits = engine.search(word, mode="keyword", ensure_fresh=False).results
            t2 = time.perf_counter()
            c2 = time.process_time()
            total_cpu.append(c2 - c0)
            reindex_cpu.append(c1 - c0)
            found += any(h.path == rel for h in hits)
            reindex.append(t1 - t0)
            search.append(t2 - t1)
            total.append(t2 - t0)
            embedded.append(report.embedded)
            cs = time.process_time()
            ts = time.perf_counter()
            engine.dirty_files()
            scan.append(time.perf_counter() - ts)
            scan_cpu.append(time.process_time() - cs)
    finally:
        for path, data in originals.items():
            path.write_bytes(data)
        engine.sync(embed=True)
    result["load_avg_timing_end"] = load_avg()
    def cpu(values: list[float]) -> dict[str, float]:
        ms = latency_ms(values)
        return {"cpu_p50_ms": ms["p50_ms"], "cpu_p95_ms": ms["p95_ms"]}

    result["latency"] = {
        "edit → searchable (reindex_file + keyword search)": {**latency_ms(total), **cpu(total_cpu)},
        "reindex_file (one file: rechunk, embed its new windows)": {**latency_ms(reindex), **cpu(reindex_cpu)},
        "keyword search that finds the edit": latency_ms(search),
        "dirty_files() alone (walk + lstat every file)": {**latency_ms(scan), **cpu(scan_cpu)},
    }
    result["found"] = f"{found}/{args.edits}"
    result["windows_embedded_per_edit_mean"] = round(sum(embedded) / max(1, len(embedded)), 2)
    p95 = result["latency"]["edit → searchable (reindex_file + keyword search)"]["p95_ms"] / 1000
    result["goals"] = {f"edit → searchable p95 <= {GOAL_S} s": p95 <= GOAL_S} if args.chunks == 10_000 else {}
    engine.close()
    return result


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=10_000)
    ap.add_argument("--edits", type=int, default=30)
    ap.add_argument("--embedder", choices=EMBEDDERS, default="bench")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    ap.add_argument("--torch-threads", type=int, default=1, help="0: torch's default")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    res = run(args)
    print(f"\nincremental, {res['index']['chunks']:,} chunks in {res['index']['files']:,} files, "
          f"{args.edits} edits ({res['found']} found), {res['windows_embedded_per_edit_mean']} windows embedded per "
          f"edit; load avg {res['load_avg_timing_start']} → {res['load_avg_timing_end']}\n")
    print(table(["what", "n", "p50 ms", "p95 ms", "max ms", "CPU p50 ms", "CPU p95 ms"],
                [[k, v["n"], v["p50_ms"], v["p95_ms"], v["max_ms"], v.get("cpu_p50_ms", "—"), v.get("cpu_p95_ms", "—")]
                 for k, v in res["latency"].items()]))
    print("goals:", res["goals"] or "(none at this size)")
    write_json(args.out, res)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
