"""Nested choice over XQuAD runs: 5 folds over the articles (article index mod 5), conditions pooled.

Usage::

    python bench/xquad_folds.py --details en.jsonl zh.jsonl ... [--details-more more-en.jsonl ...] \\
        --candidates hybrid,hybrid@script,... --out bench/results/x.json

Reads ``bench/eval_xquad.py --details`` files (one JSON line per question and label). Each outer fold's choice
is the candidate with the best hit@1 over the other four folds' questions of every condition (MRR@10 breaks
ties, then the candidates' order: list the default first); it is scored on the held-out fold. Reports each
candidate's per-fold and per-condition hit@1 and the nested (chosen-on-four) hit@1 per fold and condition.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

FOLDS = 5
_ARTICLE = re.compile(r"memory/a(\d+)-p\d+\.md")


def fold_of(gold: str) -> int:
    """The fold of a question: its gold note's article index mod 5."""
    m = _ARTICLE.fullmatch(gold)
    if m is None:
        raise ValueError(f"not an XQuAD note: {gold}")
    return int(m.group(1)) % FOLDS


def load(paths: list[str]) -> dict[str, dict[str, dict[str, dict[str, Any]]]]:
    """condition (file stem) → label → qid → row."""
    out: dict[str, dict[str, dict[str, dict[str, Any]]]] = defaultdict(lambda: defaultdict(dict))
    for p in paths:
        cond = Path(p).stem.split(".")[0]
        for line in Path(p).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            out[cond][row["label"]][row["qid"]] = row
    return out


def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--details", nargs="+", required=True)
    ap.add_argument("--candidates", required=True, help="comma-separated labels, the default first")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    data = load(args.details)
    cands = args.candidates.split(",")
    conds = sorted(data)
    rows: dict[str, list[tuple[str, int, dict[str, Any]]]] = {c: [] for c in cands}
    for cond in conds:
        for c in cands:
            if c not in data[cond]:
                raise SystemExit(f"{cond}: no rows for {c}")
            rows[c] += [(cond, fold_of(r["gold"]), r) for r in data[cond][c].values()]

    def score(c: str, keep: Any) -> tuple[float, float]:
        sub = [r for cond, f, r in rows[c] if keep(cond, f)]
        return mean([r["hit@1"] for r in sub]), mean([r["mrr@10"] for r in sub])

    table = {c: {"folds": [round(score(c, lambda _c, f, k=k: f == k)[0], 4) for k in range(FOLDS)],
                 "conditions": {cond: round(score(c, lambda cc, _f, x=cond: cc == x)[0], 4) for cond in conds},
                 "hit@1": round(score(c, lambda *_: True)[0], 4), "mrr@10": round(score(c, lambda *_: True)[1], 4)}
             for c in cands}
    picks, held = [], []
    for k in range(FOLDS):
        best = max(cands, key=lambda c, k=k: (*score(c, lambda _c, f, k=k: f != k), -cands.index(c)))
        picks.append(best)
        held += [(cond, r) for cond, f, r in rows[best] if f == k]
    by_fold = [round(mean([r["hit@1"] for cond, r in held if fold_of(r["gold"]) == k]), 4) for k in range(FOLDS)]
    nested = {"picks": picks, "folds": by_fold, "hit@1": round(mean([r["hit@1"] for _, r in held]), 4),
              "std": round(statistics.stdev(by_fold), 4),
              "mrr@10": round(mean([r["mrr@10"] for _, r in held]), 4),
              "conditions": {cond: round(mean([r["hit@1"] for cc, r in held if cc == cond]), 4) for cond in conds}}
    payload = {"candidates": table, "nested": nested, "conditions": conds, "details": args.details}
    Path(args.out).write_text(json.dumps(payload, indent=1), encoding="utf-8")
    head = ["candidate", *[f"fold {k}" for k in range(FOLDS)], *conds, "hit@1", "MRR@10"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in cands:
        t = table[c]
        lines.append("| " + " | ".join([c, *[f"{x:.3f}" for x in t["folds"]],
                                        *[f"{t['conditions'][x]:.3f}" for x in conds],
                                        f"{t['hit@1']:.3f}", f"{t['mrr@10']:.3f}"]) + " |")
    lines.append("| nested (" + ", ".join(picks) + ") | " + " | ".join(
        [*[f"{x:.3f}" for x in by_fold], *[f"{nested['conditions'][x]:.3f}" for x in conds],
         f"{nested['hit@1']:.3f} ± {nested['std']:.3f}", f"{nested['mrr@10']:.3f}"]) + " |")
    md = "\n".join(lines)
    Path(args.out).with_suffix(".md").write_text(md + "\n", encoding="utf-8")
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
