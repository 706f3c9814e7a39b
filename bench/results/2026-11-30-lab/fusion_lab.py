"""Offline ranking lab on LoCoMo: re-rank the engine's own chunks with extra signals and score hit@k/MRR.

Needs the indexes ``bench/eval_locomo.py`` built (default chunking, vectors embedded) under ``--home``.
Phase 1 gathers per-question features (chunk BM25 from the engine's FTS table, best-window cosine from its
vectors, plus line-level BM25 and line-level cosine that the engine does not have yet) and caches them;
phase 2 scores a list of rankers. The engine's own rankings are reproduced exactly (same numbers as
eval_locomo), so the deltas are what the engine would gain.

    MEMDECK_HOME=/tmp/locomo-home python bench/results/2026-11-30-lab/fusion_lab.py \\
        --data locomo-dev.json --cache /tmp/lab.pkl
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pickle
import re
import sqlite3
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(BENCH))
sys.path.append(str(BENCH.parent))

import eval_locomo  # noqa: E402

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
MONTH_YEAR = re.compile(r"\b(" + "|".join(MONTHS) + r")\b,?\s+(\d{4})", re.IGNORECASE)
DAY = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


def month_year_named(question: str) -> set[tuple[int, int]]:
    """(year, month) pairs a question names as "July 2023" (a day-level date also counts)."""
    return {(int(y), MONTHS.index(m.lower()) + 1) for m, y in MONTH_YEAR.findall(question)}


def day_named(question: str, path: str) -> bool:
    """Whether the dated note is a day the question names (the engine's rule from engine.fusion)."""
    from engine.fusion import date_matches, query_dates

    return date_matches(path, query_dates(question))


def gather(data: Path, home: Path) -> list[dict[str, Any]]:
    """Phase 1: features per conversation and question."""
    import numpy as np
    import torch
    from engine.embeddings import LocalEmbedder, local_model_path
    from engine.fts import build_fts_query, query_terms
    from engine.store import deserialize_vector

    from engine.api import MemoryEngine
    from engine.config import load_config
    from engine.search import keyword_candidates

    path = local_model_path()
    assert path is not None, "the model package is needed"
    emb = LocalEmbedder(path)
    emb.load()
    torch.set_num_threads(1)
    convs = []
    for sample in json.loads(data.read_text()):
        conv = eval_locomo.build_conversation(sample)
        eng = MemoryEngine(load_config(workspace=home / "locomo" / conv.sample_id, home=home))
        conn = eng.store.conn
        chunks = [{"id": r[0], "path": r[1], "start": r[2], "end": r[3], "text": r[4]}
                  for r in conn.execute("SELECT id, path, start_line, end_line, text FROM chunks ORDER BY id")]
        wins = conn.execute("SELECT w.chunk_id, v.embedding FROM windows w JOIN chunks_vec v ON v.rowid = w.id"
                            ).fetchall()
        lines = [(rel, i, text) for rel, body in conv.files.items()
                 for i, text in enumerate(body.rstrip("\n").split("\n"), start=1)]
        mem = sqlite3.connect(":memory:")
        mem.execute("CREATE VIRTUAL TABLE lf USING fts5(text, tokenize='porter unicode61 remove_diacritics 2')")
        mem.executemany("INSERT INTO lf(rowid, text) VALUES (?, ?)", [(i, ln[2]) for i, ln in enumerate(lines)])
        qs = []
        for q in conv.questions:
            fts = build_fts_query(q.text)
            line_bm25 = {int(r[0]): -float(r[1]) for r in mem.execute(
                "SELECT rowid, bm25(lf) FROM lf WHERE lf MATCH ?", (fts,))} if fts else {}
            qs.append({"q": q, "qv": np.array(emb.embed_query(q.text), dtype=np.float32),
                       "chunk_bm25": {k: -v for k, v in keyword_candidates(eng.store, q.text, 10_000,
                                                                          ("memory",)).items()},
                       "line_bm25": line_bm25, "terms": query_terms(q.text)})
        convs.append({
            "conv": conv, "chunks": chunks, "lines": lines, "qs": qs,
            "W": np.array([deserialize_vector(r[1]) for r in wins], dtype=np.float32),
            "win_chunk": [r[0] for r in wins],
            "L": np.array(emb.embed_documents([ln[2] for ln in lines]), dtype=np.float32),
        })
        eng.close()
        print(f"{conv.sample_id}: {len(chunks)} chunks, {len(wins)} windows, {len(lines)} lines", file=sys.stderr)
    return convs


def features(convs: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]:
    """Per question: arrays over the conversation's chunks."""
    import numpy as np

    out = []
    for c in convs:
        idx = {ch["id"]: i for i, ch in enumerate(c["chunks"])}
        pos = {(ln[0], ln[1]): i for i, ln in enumerate(c["lines"])}
        chunk_lines = [[pos[(ch["path"], n)] for n in range(ch["start"], ch["end"] + 1) if (ch["path"], n) in pos]
                       for ch in c["chunks"]]
        win_chunk = np.array([idx[w] for w in c["win_chunk"]])
        n = len(c["chunks"])
        for qd in c["qs"]:
            kw = np.zeros(n)
            for cid, s in qd["chunk_bm25"].items():
                kw[idx[cid]] = s
            kw = kw / kw.max() if kw.max() > 0 else kw
            vec = np.full(n, -1.0)
            np.maximum.at(vec, win_chunk, c["W"] @ qd["qv"])
            lsim = c["L"] @ qd["qv"]
            lbm = np.zeros(len(c["lines"]))
            for li, s in qd["line_bm25"].items():
                lbm[li] = s
            months = month_year_named(qd["q"].text)
            out.append((c, qd, {
                "kw": kw, "vec": vec,
                "line_kw": np.array([lbm[ls].max() if ls else 0.0 for ls in chunk_lines]),
                "line_vec": np.array([lsim[ls].max() if ls else 0.0 for ls in chunk_lines]),
                "day": np.array([1.0 if day_named(qd["q"].text, ch["path"]) else 0.0 for ch in c["chunks"]]),
                "month": np.array([1.0 if (m := DAY.search(ch["path"])) and (int(m.group(1)), int(m.group(2)))
                                   in months else 0.0 for ch in c["chunks"]]),
            }))
    return out


def top_norm(x: Any) -> Any:
    """x / max(x) (zeros stay zeros)."""
    return x / x.max() if x.max() > 0 else x * 0


def minmax(x: Any) -> Any:
    """(x - min) / (max - min) over the conversation's chunks."""
    lo, hi = x.min(), x.max()
    return (x - lo) / (hi - lo) if hi > lo else x * 0


def clip(x: Any) -> Any:
    """Cosine clamped to [0, 1] (what the engine's fusion does)."""
    import numpy as np

    return np.clip(x, 0.0, 1.0)


RANKERS: list[tuple[str, Callable[[dict[str, Any]], Any]]] = [
    ("keyword: engine before date boost", lambda f: f["kw"]),
    ("keyword: engine now (day-named notes := 1.0)", lambda f: f["kw"].clip(f["day"])),
    ("keyword: + 0.5 day + 0.3 month (additive)", lambda f: f["kw"] + 0.5 * f["day"] + 0.3 * f["month"]),
    ("keyword: 0.7 chunk + 0.3 best line, + dates", lambda f: 0.7 * f["kw"] + 0.3 * top_norm(f["line_kw"])
     + 0.5 * f["day"] + 0.3 * f["month"]),
    ("vector: engine (best ≤256-piece window)", lambda f: f["vec"]),
    ("vector: ½ window + ½ best line", lambda f: 0.5 * f["vec"] + 0.5 * f["line_vec"]),
    ("hybrid: engine before date boost (0.7 cos + 0.3 kw)", lambda f: 0.7 * clip(f["vec"]) + 0.3 * f["kw"]),
    ("hybrid: engine now", lambda f: 0.7 * clip(f["vec"]) + 0.3 * f["kw"].clip(f["day"])),
    ("hybrid: 0.5 cos + 0.5 kw (no date boost)", lambda f: 0.5 * clip(f["vec"]) + 0.5 * f["kw"]),
    ("hybrid: 0.5 minmax(cos) + 0.5 kw + dates", lambda f: 0.5 * minmax(f["vec"]) + 0.5 * f["kw"]
     + 0.4 * f["day"] + 0.3 * f["month"]),
    ("hybrid: + line cos (0.25 window + 0.25 line, minmax)", lambda f: 0.5 * f["kw"] + 0.25 * minmax(f["vec"])
     + 0.25 * minmax(f["line_vec"]) + 0.4 * f["day"] + 0.3 * f["month"]),
    ("hybrid: proposed (kw .3, line kw .2, cos .25, line cos .25, dates)",
     lambda f: 0.3 * f["kw"] + 0.2 * top_norm(f["line_kw"]) + 0.25 * minmax(f["vec"])
     + 0.25 * minmax(f["line_vec"]) + 0.4 * f["day"] + 0.3 * f["month"]),
    ("hybrid: proposed without dates", lambda f: 0.3 * f["kw"] + 0.2 * top_norm(f["line_kw"])
     + 0.25 * minmax(f["vec"]) + 0.25 * minmax(f["line_vec"])),
]


def evaluate(rows: list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]],
             ranker: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    """hit@1/3/5 and MRR@10 overall and hit@1 per category."""
    per: dict[str, list[tuple[float, ...]]] = defaultdict(list)
    for c, qd, f in rows:
        s = ranker(f)
        order = sorted(range(len(s)), key=lambda i: (-s[i], c["chunks"][i]["id"]))[:10]
        rank = next((r for r, i in enumerate(order, 1) if any(
            p == c["chunks"][i]["path"] and c["chunks"][i]["start"] <= ln <= c["chunks"][i]["end"]
            for p, ln in qd["q"].gold)), None)
        row = (float(rank == 1), float(rank is not None and rank <= 3), float(rank is not None and rank <= 5),
               1.0 / rank if rank else 0.0)
        per["all"].append(row)
        per[qd["q"].category].append(row)

    def avg(rs: list[tuple[float, ...]], k: int) -> float:
        return sum(r[k] for r in rs) / len(rs) if rs else math.nan

    return {"hit@1": avg(per["all"], 0), "hit@3": avg(per["all"], 1), "hit@5": avg(per["all"], 2),
            "mrr@10": avg(per["all"], 3), **{f"c{k}": avg(per[k], 0) for k in "1234"}}


def main() -> int:
    """Gather (or load) features, score every ranker, print a Markdown table."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--data", required=True)
    p.add_argument("--home", default=os.environ.get("MEMDECK_HOME"))
    p.add_argument("--cache", default=None, help="pickle of phase 1 (reused when present)")
    args = p.parse_args()
    cache = Path(args.cache) if args.cache else None
    if cache is not None and cache.exists():
        convs = pickle.loads(cache.read_bytes())
    else:
        convs = gather(Path(args.data), Path(args.home))
        if cache is not None:
            cache.write_bytes(pickle.dumps(convs))
    rows = features(convs)
    print("| ranker | hit@1 | hit@3 | hit@5 | MRR@10 | hit@1 c1 | c2 | c3 | c4 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, ranker in RANKERS:
        m = evaluate(rows, ranker)
        print(f"| {label} | " + " | ".join(f"{m[k]:.3f}" for k in
                                             ("hit@1", "hit@3", "hit@5", "mrr@10", "c1", "c2", "c3", "c4")) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
