"""Why hybrid search ranks a curated fact below daily notes: each leg's part for the fact and for every result
above it (bench/eval_curated.py's workspace and questions).

Usage::

    MEMDECK_HOME=/tmp/curated-home python bench/curated_explain.py --out bench/results/x.md [--config o.toml]

For each question: the fact's rank in hybrid and in the vector leg, its calibrated vector part (with the
margin of the vector leg's best candidate over its second) and keyword part; for each result ranked above it,
its parts, which query terms it holds and their IDF share (the candidates standing in for the collection, as
:func:`engine.search.snippets.term_weights` counts them).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.append(str(REPO))
BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.append(str(BENCH))


def main(argv: list[str] | None = None) -> int:
    """Run every curated question in hybrid mode and write the explanation table."""
    from _eval_common import eval_home, load_overrides
    from eval_curated import load_questions
    from gen_workspace import curated_workspace

    import engine.search.pipeline as pipeline
    from engine.api import MemoryEngine
    from engine.config import load_config
    from engine.search.snippets import stem, term_weights

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--config", default=None)
    p.add_argument("--days", type=int, default=30)
    args = p.parse_args(argv)
    home, _ = eval_home(None)
    workspace = home / "curated" / f"days-{args.days}"
    ws = curated_workspace(workspace, args.days)
    files = {rel: (workspace / rel).read_text(encoding="utf-8") for rel in ws.files}
    questions = load_questions(files)
    config = load_config(workspace=workspace, home=home,
                         overrides=load_overrides(Path(args.config) if args.config else None))
    seen: dict[str, Any] = {}
    real_fuse = pipeline.fuse

    def spy(settings: Any, req: Any, leg: Any) -> Any:
        if "leg" not in seen:  # the first call is the shown score's; pool() fuses the raw legs again
            seen["leg"], seen["req"] = leg, req
        return real_fuse(settings, req, leg)

    pipeline.fuse = spy
    out = ["# Curated facts: what each leg gave the fact and the results above it", "",
           "vec/kw: the calibrated legs' parts (probabilities); fused = vw·vec + tw·kw (the hit's weights); "
           "IDF share: the share of the query terms' IDF (over the candidates) that the chunk holds.", ""]
    summary = []
    with MemoryEngine(config) as engine:
        engine.load_model()
        engine.sync(embed=True)
        for q in questions:
            seen.clear()
            resp = engine.search(q.text, mode="hybrid", max_results=10, ensure_fresh=False)
            leg, req = seen["leg"], seen["req"]
            rows = pipeline.load_rows(engine.store, sorted(set(leg.vector or {}) | set(leg.keyword)))
            gold = next((k for k, r in rows.items() if r.path == q.path and r.start_line <= q.line <= r.end_line),
                        None)
            terms = list(req.query.terms)
            weights = term_weights([r.text for r in rows.values()], terms)
            total = sum(weights.values()) or 1.0
            vec = leg.vector or {}
            vorder = sorted(vec, key=lambda k: (-vec[k], k))
            margin = vec[vorder[0]] - vec[vorder[1]] if len(vorder) > 1 else 0.0

            def held(key: int, rows: Any = rows, terms: list[str] = terms, weights: Any = weights,
                     total: float = total) -> tuple[list[str], float]:
                text = rows[key].text.lower()
                found = [t for t in terms if stem(t) in text]
                return found, sum(weights[t] for t in found) / total

            rank = next((i for i, h in enumerate(resp.results, 1)
                         if h.path == q.path and h.start_line <= q.line <= h.end_line), None)
            vrank = vorder.index(gold) + 1 if gold in vorder else None
            gfound, gshare = held(gold) if gold is not None else ([], 0.0)
            summary.append([q.text, rank, vrank, margin, gshare])
            out += [f"## {q.text}", "",
                    f"terms {terms} (IDF {', '.join(f'{t} {weights[t]:.2f}' for t in terms)}); hybrid rank "
                    f"{rank or '—'}, vector rank {vrank or '—'}; vector leg's best − second {margin:.3f} "
                    f"(best: {'the fact' if vorder and vorder[0] == gold else rows[vorder[0]].path if vorder else '—'})",
                    "", "| # | chunk | vec | kw | vw/tw | fused | terms held | IDF share |", "|---|---|---|---|---|---|---|---|"]
            for i, h in enumerate(resp.results[: (rank or 3)], 1):
                key = next(k for k, r in rows.items() if r.path == h.path and r.start_line == h.start_line)
                found, share = held(key)
                out.append(f"| {i} | {h.path}#L{h.start_line}-{h.end_line}{' (fact)' if key == gold else ''} | "
                           f"{h.vector_score or 0:.3f} | {h.text_score:.3f} | "
                           f"{h.vector_weight if h.vector_weight is not None else .7:.2f}/"
                           f"{h.text_weight if h.text_weight is not None else .3:.2f} | {h.score:.3f} | "
                           f"{' '.join(found) or '—'} | {share:.2f} |")
            if rank is None and gold is not None:
                out.append(f"| — | {q.path}#L{rows[gold].start_line}-{rows[gold].end_line} (fact) | "
                           f"{vec.get(gold, 0):.3f} | {leg.keyword.get(gold, 0):.3f} | | | "
                           f"{' '.join(gfound) or '—'} | {gshare:.2f} |")
            out.append("")
    out[5:5] = ["| question | hybrid rank | vector rank | vector margin | fact's IDF share |", "|---|---|---|---|---|",
                *[f"| {t} | {r or '—'} | {v or '—'} | {m:.3f} | {s:.2f} |" for t, r, v, m, s in summary], ""]
    Path(args.out).write_text("\n".join(out) + "\n", encoding="utf-8")
    print("\n".join(out[:30]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
