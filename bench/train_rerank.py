"""Fit the leg calibration and train the re-ranker on LoCoMo dev candidates; write the engine's JSON files.

Usage::

    MEMDECK_HOME=/tmp/locomo-home python bench/train_rerank.py --data locomo-dev.json \\
        [--config model.toml] [--calibrate-only] [--cv-results bench/results/2026-12-01-cv-....json]

It collects each question's top candidates with their features (one pass per conversation, the same pass
``eval_locomo.py --cv`` makes), fits a Platt map per leg for the embedding model into
``engine/search/calibration.json`` (other models' entries are kept), and, unless ``--calibrate-only``,
trains the ``hybrid`` and ``keyword`` logistic models on all dev conversations into
``engine/search/rerank.json`` with their provenance (data, date, the CV figures from ``--cv-results``).
The fold-wise CV of the same training lives in ``eval_locomo.py --cv``; this script only ships the fit.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.append(str(REPO))

CALIBRATION_FILE = REPO / "engine" / "search" / "calibration.json"
RERANK_FILE = REPO / "engine" / "search" / "rerank.json"

from _rerank_fit import (  # noqa: E402  (the fitting lives there; eval_locomo --cv fits with it too)
    FEATURES_FOR,
    L2,
    LOSS,
    calibration_object,
    fit_calibration,
    recalibrate,
    train_model,
    weights_payload,
)


def compact_cv(payload: Mapping[str, Any], source: str) -> dict[str, Any]:
    """The CV figures worth shipping with the weights: per-fold hit@1 and the mean ± std of the main metrics,
    for the fixed default and the fold-trained re-ranker."""
    out: dict[str, Any] = {"source": Path(source).name, "loss": payload.get("meta", {}).get("loss")}
    for name in ("default", "calibrated", "rerank"):
        for mode, res in payload.get("summary", {}).get(name, {}).items():
            if mode == "vector":
                continue
            out[f"{name}/{mode}"] = {
                "hit@1 per fold": {c: f["hit@1"] for c, f in res["folds"].items()},
                **{m: f"{res['spread'][m]['mean']:.3f} ± {res['spread'][m]['std']:.3f}"
                   for m in ("hit@1", "hit@5", "mrr@10", "snip@1", "snip@5")}}
    return out


def write_calibration(model: str, fit: Mapping[str, Any], provenance: Mapping[str, Any]) -> None:
    """Merge one model's Platt maps into ``calibration.json`` (other models kept; keyword map replaced)."""
    try:
        data = json.loads(CALIBRATION_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    data["about"] = ("Platt maps p = 1/(1+exp(-(a*x+b))) from raw leg scores to a probability that the chunk "
                     "holds the evidence, fitted on LoCoMo dev candidates by bench/train_rerank.py. window/line: "
                     "raw best-window / best-line cosine; leg: the vector leg's score as fused (line_weight mix); "
                     "keyword.leg: the keyword leg's [0,1] score. An unknown model (remote providers) has no "
                     "entry: fusion keeps raw cosines and hybrid search is not re-ranked.")
    data.setdefault("models", {})[model] = {k: fit[k] for k in ("window", "line", "leg")}
    data["models"][model]["provenance"] = dict(provenance)
    if fit.get("keyword_leg") is not None:
        data["keyword"] = {"leg": fit["keyword_leg"], "provenance": dict(provenance)}
    CALIBRATION_FILE.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    """Collect candidates, fit calibration (and the re-ranker), write the JSON files."""
    from eval_locomo import collect_all

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--data", required=True)
    p.add_argument("--config", default=None)
    p.add_argument("--home", default=None)
    p.add_argument("--calibrate-only", action="store_true")
    p.add_argument("--cv-results", default=None, help="the eval_locomo --cv JSON whose figures go in provenance")
    p.add_argument("--l2", type=float, default=L2)
    p.add_argument("--loss", choices=("pointwise", "listwise"), default=LOSS)
    p.add_argument("--drop-features", default="", help="comma-separated features left out of the models")
    p.add_argument("--disable", default="keyword",
                   help="comma-separated models written with enabled=false (their CV did not pass the house rule)")
    p.add_argument("--torch-threads", type=int, default=1)
    p.add_argument("--conversations", type=int, default=0, help="only the first N conversations")
    p.add_argument("--limit-questions", type=int, default=0, help="only the first N questions per conversation")
    args = p.parse_args(argv)
    raw = Path(args.data).read_bytes()
    collected = collect_all(args)
    model = collected["model"]
    base_prov = {"data": Path(args.data).name, "data_sha256": hashlib.sha256(raw).hexdigest()[:16],
                 "date": collected["date"], "conversations": collected["conversations"],
                 "questions": len(collected["records"]["hybrid"]) or len(collected["records"]["keyword"])}
    if model and collected["records"]["hybrid"]:
        fit = fit_calibration(collected["records"]["hybrid"])
        write_calibration(model, fit, base_prov)
        print(f"calibration for {model}: {json.dumps(fit)}")
        # the features as the engine will compute them with this calibration shipped (the collection may have
        # run with an older calibration file, or none)
        collected["records"]["hybrid"] = recalibrate(collected["records"]["hybrid"], calibration_object(fit, model),
                                                     fused=collected["vector_norm"] == "calibrated")
    if args.calibrate_only:
        return 0
    drop = set(args.drop_features.split(",")) if args.drop_features else set()
    models = {mode: train_model(recs, [f for f in FEATURES_FOR[mode] if f not in drop], args.l2, args.loss)
              for mode, recs in collected["records"].items() if recs}
    for mode in args.disable.split(","):
        if mode in models:
            # kept readable in the file, but off: its fold-wise CV broke the house rule (see provenance.cv)
            models[mode] = {"enabled": False, **models[mode]}
    cv = None
    if args.cv_results:
        cv = compact_cv(json.loads(Path(args.cv_results).read_text(encoding="utf-8")), args.cv_results)
    prov = {**base_prov, "model": model, "l2": args.l2, "loss": args.loss, "dropped_features": sorted(drop),
            "label": "the candidate chunk holds an evidence line", "cv": cv}
    from engine.search.rerank import DEPTH

    RERANK_FILE.write_text(json.dumps(weights_payload(models, prov, DEPTH), indent=2, ensure_ascii=False) + "\n",
                           encoding="utf-8")
    print(f"wrote {RERANK_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
