"""The re-ranker's and the calibration's fitting (numpy), shared by ``train_rerank.py`` (which ships the fit)
and ``eval_locomo.py --cv`` (which fits them per fold): neither script imports the other for it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

HYBRID_FEATURES = ("base", "base_rr", "kw", "kw_line", "kw_rr", "kw_gap", "vec", "vec_line", "vec_rr", "vec_gap",
                   "cover", "idf_cover", "line_cover", "phrase", "date", "log_len", "importance")
KEYWORD_FEATURES = ("base", "base_rr", "kw", "kw_line", "kw_rr", "kw_gap", "cover", "idf_cover", "line_cover",
                    "phrase", "date", "log_len", "importance")
FEATURES_FOR = {"hybrid": HYBRID_FEATURES, "keyword": KEYWORD_FEATURES}
L2 = 1.0  # ridge on standardised features; chosen by fold CV among 0.1/1/10 (see the CV report)
LOSS = "listwise"  # or "pointwise"; chosen by fold CV (see the CV report)


# -- fitting (numpy) -------------------------------------------------------------------------------
def fit_logistic(x: Any, y: Any, l2: float = 1.0, iters: int = 50) -> tuple[float, Any]:
    """Ridge logistic regression by Newton's method: returns ``(bias, weights)`` (the bias unpenalised)."""
    import numpy as np

    n, d = x.shape
    xb = np.hstack([np.ones((n, 1)), x])
    w = np.zeros(d + 1)
    pen = np.full(d + 1, l2)
    pen[0] = 0.0
    for _ in range(iters):
        z = np.clip(xb @ w, -30, 30)
        p = 1.0 / (1.0 + np.exp(-z))
        grad = xb.T @ (p - y) + pen * w
        hess = (xb * (p * (1 - p))[:, None]).T @ xb + np.diag(pen + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.max(np.abs(step))) < 1e-8:
            break
    return float(w[0]), w[1:]


def fit_platt(values: Sequence[float], labels: Sequence[int]) -> dict[str, float] | None:
    """A Platt map ``p = sigmoid(a·x + b)`` for one raw score (None with too few of either class)."""
    import numpy as np

    if sum(labels) < 5 or len(labels) - sum(labels) < 5:
        return None
    b, w = fit_logistic(np.asarray(values, dtype=float)[:, None], np.asarray(labels, dtype=float), l2=1e-3)
    return {"a": round(float(w[0]), 5), "b": round(b, 5)}


def fit_calibration(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Platt maps for the window and best-line cosines, the vector leg and the keyword leg, from hybrid
    candidate records (each candidate's raw values and its label)."""
    cols: dict[str, tuple[list[float], list[int]]] = {k: ([], []) for k in ("window", "line", "vleg", "kleg")}
    for rec in records:
        for key in rec["keys"]:
            raw, label = rec["raw"][key], rec["labels"][key]
            for name in cols:
                value = raw.get(name)
                if value is not None:
                    cols[name][0].append(float(value))
                    cols[name][1].append(int(label))
    return {"window": fit_platt(*cols["window"]), "line": fit_platt(*cols["line"]),
            "leg": fit_platt(*cols["vleg"]), "keyword_leg": fit_platt(*cols["kleg"])}


def calibration_object(fit: Mapping[str, Any], model: str) -> Any:
    """An engine :class:`Calibration` from :func:`fit_calibration`'s dict (for CV folds)."""
    from engine.search.calibration import table_from

    return table_from({"models": {model: fit}, "keyword": {"leg": fit.get("keyword_leg")}}, model)


def recalibrate(records: Sequence[Mapping[str, Any]], cal: Any, fused: bool = False) -> list[dict[str, Any]]:
    """Copies of ``records`` whose vector features (``vec``, ``vec_line``, ``vec_gap``) are recomputed from the
    raw cosines under calibration ``cal`` (a CV fold's), exactly as the pipeline computes them. With ``fused``
    (``vector_norm = "calibrated"``) ``base`` and ``base_rr`` are recomputed too, from the raw leg scores (no
    decay or importance on LoCoMo), so no fold's training features come from a calibration that saw it."""
    from engine.search.rerank import _gaps, _rr

    out = []
    for rec in records:
        feats = {k: dict(v) for k, v in rec["features"].items()}
        if fused and cal is not None and cal.vector_leg is not None and cal.keyword_leg is not None:
            base = {}
            for key in rec["keys"]:
                raw = rec["raw"][key]
                v = cal.vector_leg(raw["vleg"]) if raw.get("vleg") is not None else 0.0
                k = cal.keyword_leg(raw["kleg"]) if raw.get("kleg") is not None else 0.0
                base[key] = 0.7 * v + 0.3 * k
                feats[key]["base"] = base[key]
            rr = _rr(sorted(rec["keys"], key=lambda k: (-base[k], k)))
            for key in rec["keys"]:
                feats[key]["base_rr"] = rr[key]
        vec: dict[Any, float] = {}
        for key in rec["keys"]:
            raw = rec["raw"][key]
            window, line = raw.get("window"), raw.get("line")
            if window is not None:
                vec[key] = cal.window(window) if cal is not None and cal.window is not None else window
            feats[key]["vec"] = vec.get(key, 0.0)
            feats[key]["vec_line"] = (cal.line(line) if cal is not None and cal.line is not None else line) \
                if line is not None else 0.0
        top = sorted((k for k in rec["keys"] if k in vec), key=lambda k: (-vec[k], k))
        gaps = _gaps(top, vec)
        for key in rec["keys"]:
            feats[key]["vec_gap"] = gaps.get(key, 0.0)
        out.append({**rec, "features": feats})
    return out


def fit_listwise(x: Any, y: Any, groups: Any, l2: float = 1.0, iters: int = 300, lr: float = 0.05) -> Any:
    """Weights of a linear scorer trained with a listwise softmax loss: per question, ``-log`` of the softmax
    mass on its evidence candidates (Adam on standardised features; questions without evidence are skipped)."""
    import numpy as np

    ids = np.unique(groups)
    sizes = np.array([np.sum(groups == g) for g in ids])
    k = int(sizes.max())
    d = x.shape[1]
    xt = np.zeros((len(ids), k, d))
    yt = np.zeros((len(ids), k))
    mask = np.zeros((len(ids), k), dtype=bool)
    for i, g in enumerate(ids):
        sel = np.flatnonzero(groups == g)
        xt[i, : len(sel)] = x[sel]
        yt[i, : len(sel)] = y[sel]
        mask[i, : len(sel)] = True
    keep = (yt * mask).sum(axis=1) > 0
    xt, yt, mask = xt[keep], yt[keep] * mask[keep], mask[keep]
    nq = max(1, len(xt))
    w = np.zeros(d)
    m = np.zeros(d)
    v = np.zeros(d)
    for t in range(1, iters + 1):
        s = np.where(mask, xt @ w, -np.inf)
        s = s - s.max(axis=1, keepdims=True)
        e = np.where(mask, np.exp(s), 0.0)
        p_all = e / e.sum(axis=1, keepdims=True)
        ep = e * (yt > 0)
        p_pos = ep / ep.sum(axis=1, keepdims=True)
        grad = np.einsum("qk,qkd->d", p_all - p_pos, xt) / nq + l2 * w / nq
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad * grad
        w -= lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return w


def train_model(records: Sequence[Mapping[str, Any]], names: Sequence[str], l2: float = L2,
                loss: str = "pointwise") -> dict[str, Any]:
    """A linear model on the candidates of ``records`` (features standardised for the fit, then folded back
    so the shipped weights apply to raw features): ``{"bias": b, "weights": {name: w}}``.

    ``pointwise``: ridge logistic regression on "holds evidence". ``listwise``: a softmax ranking loss per
    question, then a Platt map of its score on the same labels, so either way the output is a probability.
    """
    import numpy as np

    rows, labels, groups = [], [], []
    for gi, rec in enumerate(records):
        for key in rec["keys"]:
            feats = rec["features"][key]
            rows.append([float(feats.get(n, 0.0)) for n in names])
            labels.append(float(rec["labels"][key]))
            groups.append(gi)
    x = np.asarray(rows, dtype=float)
    y = np.asarray(labels, dtype=float)
    mu = x.mean(axis=0)
    sd = x.std(axis=0)
    sd[sd == 0] = 1.0
    xs = (x - mu) / sd
    if loss == "listwise":
        direction = fit_listwise(xs, y, np.asarray(groups), l2=l2)
        pb, pw = fit_logistic((xs @ direction)[:, None], y, l2=1e-3)
        b, w = pb, direction * float(pw[0])
    else:
        b, w = fit_logistic(xs, y, l2=l2)
    raw_w = w / sd
    bias = b - float(np.sum(w * mu / sd))
    return {"bias": round(bias, 6), "weights": {n: round(float(v), 6) for n, v in zip(names, raw_w, strict=True)}}


def rerank_order(rec: Mapping[str, Any], model: Mapping[str, Any]) -> list[Any]:
    """The candidates of one record in the model's order (for quick in-memory CV)."""
    from engine.search.calibration import sigmoid

    def score(key: Any) -> float:
        feats = rec["features"][key]
        return sigmoid(model["bias"] + sum(w * feats.get(n, 0.0) for n, w in model["weights"].items()))

    return sorted(rec["keys"], key=lambda k: (-score(k), k))


def quick_hit1(records: Sequence[Mapping[str, Any]], model: Mapping[str, Any] | None) -> float:
    """hit@1 over records with the candidates in model order (None: the fused order)."""
    if not records:
        return 0.0
    hits = 0
    for rec in records:
        order = rerank_order(rec, model) if model is not None else list(rec["keys"])
        hits += bool(order) and rec["labels"][order[0]] == 1
    return hits / len(records)


def weights_payload(models: Mapping[str, Any], provenance: Mapping[str, Any], depth: int) -> dict[str, Any]:
    """The ``rerank.json`` document."""
    return {
        "about": "memdeck's learned re-ranker: p = sigmoid(bias + sum(weight * feature)) over the top `depth` "
                 "fused candidates; features are defined in engine/search/rerank.py (FEATURES). Trained by "
                 "bench/train_rerank.py on LoCoMo dev candidates; the fold-wise CV is eval_locomo.py --cv.",
        "depth": depth,
        "provenance": dict(provenance),
        "models": dict(models),
    }
