"""Measure a local model's null direction (engine/embed/nulldir.py) on the demo workspace, check it, store it.

Usage::

    python bench/null_direction.py [--check-data locomo-dev.json] [--write]

Every window and line text of the bundled demo workspace is embedded as a passage (≈450 texts > 384 dims), the
least-variance direction of those vectors is taken, and its component is reported for them, for the demo's
questions-like lines embedded as queries, and (``--check-data``) for the questions of a LoCoMo file as queries.
``--write`` stores it in ``engine/embed/null_directions.json`` under the model's id.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from engine.embed.nulldir import NULL_DIRECTIONS_PATH, null_direction  # noqa: E402
from engine.index.chunking import chunk_document, plan_lines  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    import numpy as np

    from engine.embed.local import E5Embedder

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--check-data", default=None, help="a LoCoMo JSON whose questions are checked as queries")
    p.add_argument("--write", action="store_true")
    args = p.parse_args(argv)
    texts: list[str] = []
    for f in sorted((REPO / "engine" / "demo_workspace").rglob("*.md")):
        for chunk in chunk_document(f.read_text(encoding="utf-8"), 400, 80):
            texts.append(chunk.text)
            texts.extend(t for _o, t in plan_lines(chunk.text))
    texts = sorted(set(texts))
    emb = E5Embedder()
    passages = np.asarray(emb.embed_documents(texts))
    z = np.asarray(null_direction(passages))
    out = {"model": emb.model_id, "texts": len(texts), "passage_abs_max": float(np.abs(passages @ z).max())}
    if args.check_data:
        data = json.loads(Path(args.check_data).read_text(encoding="utf-8"))
        qs = [q["question"] for conv in data for q in conv["qa"]][:300]
        queries = np.asarray([emb.embed_query(q) for q in qs])
        out.update(queries=len(qs), query_abs_max=float(np.abs(queries @ z).max()),
                   query_mean=float((queries @ z).mean()))
    print(json.dumps(out))
    if args.write:
        table = json.loads(NULL_DIRECTIONS_PATH.read_text(encoding="utf-8")) if NULL_DIRECTIONS_PATH.exists() else {}
        table[emb.model_id] = {"measured_on": f"demo workspace, {len(texts)} passages",
                               "passage_abs_max": round(out["passage_abs_max"], 7),
                               "direction": [round(x, 7) for x in z.tolist()]}
        NULL_DIRECTIONS_PATH.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
