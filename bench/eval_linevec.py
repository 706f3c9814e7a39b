"""Nested leave-one-conversation-out choice between ``[index] vectors`` plans, from ``eval_locomo.py --details``.

Usage::

    python bench/eval_linevec.py --baseline today=a.jsonl --variant windows=b.jsonl \\
        --variant lines=c.jsonl --variant lines-mean=cm.jsonl --family derived=lines,lines-mean \\
        --out bench/results/x.json

Each ``--details`` file holds one JSON line per question and mode (``eval_locomo.py`` run once per plan, each
with its own ``--config`` and ``MEMDECK_HOME``). A family is a set of variants one setting chooses between
(``lines`` vs ``lines-mean``); a variant not named in a family is a family of one. For every family and every
outer fold (one conversation held out), the member with the best mean ``--choose`` metric over the other
conversations' questions (the inner folds) is chosen, and scored on the held-out conversation; the nested
score is the question-weighted mean over the outer folds. Reported beside the baseline's score on the same
folds, per fold, per mode and per LoCoMo category, with the decision rule fixed in advance (``--rule``): a
family may replace the baseline only if nested hybrid hit@1 is within ``hit_tol`` of the baseline's, no fold
is worse by more than ``fold_tol``, and snip@1 is within ``snip_tol``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from _eval_common import markdown_table, mean, now_iso

METRICS = ("hit@1", "hit@5", "snip@1", "snip@5", "mrr@10")
MODES = ("hybrid", "vector")
CATEGORIES = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop"}

Rows = dict[tuple[str, str], list[dict[str, Any]]]  # (conversation, mode) -> per-question rows


def load_details(path: Path) -> Rows:
    rows: Rows = defaultdict(list)
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                d = json.loads(line)
                rows[(d["conv"], d["mode"])].append(d)
    return rows


def pooled(rows: Rows, convs: list[str], mode: str, metric: str, category: str | None = None) -> float:
    vals = [r[metric] for c in convs for r in rows.get((c, mode), []) if category is None or r["category"] == category]
    return mean(vals)


def nested(variants: dict[str, Rows], family: list[str], convs: list[str], choose: str) -> dict[str, Any]:
    """Per outer fold: the family member best on the other conversations (``choose`` = mode:metric)."""
    mode, metric = choose.split(":")
    folds = []
    for held in convs:
        inner = [c for c in convs if c != held]
        scores = {name: pooled(variants[name], inner, mode, metric) for name in family}
        best = max(family, key=lambda n: (scores[n], -family.index(n)))
        folds.append({"held_out": held, "chosen": best, "inner": {k: round(v, 4) for k, v in scores.items()}})
    return {"folds": folds}


def score_choice(variants: dict[str, Rows], folds: list[dict[str, Any]], mode: str, metric: str,
                 category: str | None = None) -> tuple[float, list[float]]:
    """The question-weighted nested score and each outer fold's score of the chosen members."""
    hits: list[float] = []
    per_fold: list[float] = []
    for f in folds:
        rows = [r[metric] for r in variants[f["chosen"]].get((f["held_out"], mode), [])
                if category is None or r["category"] == category]
        hits.extend(rows)
        per_fold.append(mean(rows))
    return mean(hits), per_fold


def run(args: argparse.Namespace) -> dict[str, Any]:
    named = dict(spec.split("=", 1) for spec in [args.baseline, *args.variant])
    base_name = args.baseline.split("=", 1)[0]
    variants = {name: load_details(Path(path)) for name, path in named.items()}
    convs = sorted({c for c, _m in variants[base_name]})
    for name, rows in variants.items():
        missing = [c for c in convs for m in MODES if not rows.get((c, m))]
        if missing:
            raise SystemExit(f"{name}: no rows for {missing[:4]} (every run needs modes vector,hybrid)")
        for c in convs:  # the same questions, or the comparison means nothing
            if [r["qa"] for r in rows[(c, "hybrid")]] != [r["qa"] for r in variants[base_name][(c, "hybrid")]]:
                raise SystemExit(f"{name}: other questions than {base_name} in {c}")
    in_family = {m for fam in args.family for m in fam.split("=", 1)[1].split(",")}
    families = {fam.split("=", 1)[0]: fam.split("=", 1)[1].split(",") for fam in args.family}
    families.update({n: [n] for n in named if n != base_name and n not in in_family})
    hit_tol, fold_tol, snip_tol = (float(x) for x in args.rule.split(","))
    base_folds = [{"held_out": c, "chosen": base_name} for c in convs]
    result: dict[str, Any] = {"bench": "eval_linevec", "when": now_iso(), "conversations": convs,
                              "questions": sum(len(variants[base_name][(c, "hybrid")]) for c in convs),
                              "choose": args.choose, "rule": {"hit_tol": hit_tol, "fold_tol": fold_tol,
                                                              "snip_tol": snip_tol},
                              "inputs": named, "families": {}}

    def table_for(folds: list[dict[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for mode in MODES:
            for metric in METRICS:
                score, per_fold = score_choice(variants, folds, mode, metric)
                out[f"{mode}:{metric}"] = {"nested": round(score, 4), "folds": [round(x, 4) for x in per_fold]}
            for cat in CATEGORIES:
                score, _ = score_choice(variants, folds, mode, "hit@1", cat)
                out[f"{mode}:hit@1:cat{cat}"] = {"nested": round(score, 4)}
        return out

    base = table_for(base_folds)
    result["baseline"] = {"name": base_name, "scores": base}
    for fam, members in families.items():
        choice = nested(variants, members, convs, args.choose)
        scores = table_for(choice["folds"])
        h, b = scores["hybrid:hit@1"], base["hybrid:hit@1"]
        worst_fold = min(x - y for x, y in zip(h["folds"], b["folds"], strict=True))
        snip = scores["hybrid:snip@1"]["nested"] - base["hybrid:snip@1"]["nested"]
        passes = (h["nested"] - b["nested"] >= -hit_tol and worst_fold >= -fold_tol and snip >= -snip_tol)
        result["families"][fam] = {"members": members, **choice, "scores": scores,
                                   "hybrid_hit1_delta": round(h["nested"] - b["nested"], 4),
                                   "worst_fold_delta": round(worst_fold, 4), "hybrid_snip1_delta": round(snip, 4),
                                   "passes_rule": passes}
    return result


def render(result: dict[str, Any]) -> str:
    base = result["baseline"]["scores"]
    cols = [f"{m}:{k}" for m in MODES for k in METRICS]
    rows = [[result["baseline"]["name"] + " (baseline)", *(base[c]["nested"] for c in cols), "", "", ""]]
    for fam, info in result["families"].items():
        s = info["scores"]
        rows.append([fam, *(s[c]["nested"] for c in cols), f"{info['hybrid_hit1_delta']:+.4f}",
                     f"{info['worst_fold_delta']:+.4f}", "yes" if info["passes_rule"] else "no"])
    out = [f"{result['questions']} questions, {len(result['conversations'])} conversations (outer folds); "
           f"choice on inner folds by {result['choose']}; rule {result['rule']}", "",
           markdown_table(["plan", *cols, "Δ hybrid hit@1", "worst fold Δ", "passes"], rows), "",
           "Per fold, hybrid hit@1 (chosen member):", ""]
    fold_rows = [[result["baseline"]["name"], *base["hybrid:hit@1"]["folds"]]]
    for fam, info in result["families"].items():
        fold_rows.append([fam, *(f"{v:.3f} ({f['chosen']})" for v, f in
                                 zip(info["scores"]["hybrid:hit@1"]["folds"], info["folds"], strict=True))])
    out.append(markdown_table(["plan", *result["conversations"]], fold_rows))
    out += ["", "Per category, nested hybrid / vector hit@1:", ""]
    cat_rows = [[result["baseline"]["name"], *(base[f"{m}:hit@1:cat{c}"]["nested"] for m in MODES
                                                for c in CATEGORIES)]]
    for fam, info in result["families"].items():
        cat_rows.append([fam, *(info["scores"][f"{m}:hit@1:cat{c}"]["nested"] for m in MODES for c in CATEGORIES)])
    out.append(markdown_table(["plan", *(f"{m} {n}" for m in MODES for n in CATEGORIES.values())], cat_rows))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--baseline", required=True, help="name=details.jsonl of today's plan")
    p.add_argument("--variant", action="append", default=[], help="name=details.jsonl (repeatable)")
    p.add_argument("--family", action="append", default=[], help="name=member,member: one setting's choices")
    p.add_argument("--choose", default="hybrid:hit@1", help="mode:metric the inner folds choose by")
    p.add_argument("--rule", default="0.005,0.01,0.01", help="hit_tol,fold_tol,snip_tol (set before looking)")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    result = run(args)
    text = render(result)
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        Path(args.out).with_suffix(".md").write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
