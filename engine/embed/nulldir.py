"""A model's null direction: the unit vector every one of its embeddings is (numerically) orthogonal to.

A BERT-style encoder ends in LayerNorm, so each token state ``h`` satisfies ``Σ_i (h_i − β_i) / γ_i = 0``; mean
pooling keeps that, and the normalised embedding has a near-constant, near-zero component along ``1/γ``. For
multilingual-e5-small it is below 2e-5 for every passage and 3e-4 for every query measured (bench/results/
2026-12-04-embed-less.md), where other directions carry ±0.02.

The derived plans of :mod:`engine.index.embed_plan` use it to store the mean of a chunk's line vectors without
the inflation a normalised mean brings (its cosine with a query is the lines' mean cosine divided by the mean's
length, ≈ 1.1× on real notes, which lifts long chunks over one-line facts): the window vector is
``m + sqrt(1 − |m|²)·u``, unit length, and its cosine with any query is ``q·m``, the lines' mean cosine.
``null_directions.json`` holds the shipped models' directions (``bench/null_direction.py`` measures them).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from pathlib import Path

NULL_DIRECTIONS_PATH = Path(__file__).with_name("null_directions.json")


def null_direction(vectors: Sequence[Sequence[float]]) -> list[float]:
    """The least-variance unit direction of ``vectors`` (uncentred: the one they are all orthogonal to)."""
    import numpy as np

    mat = np.asarray(vectors, dtype=np.float64)
    _u, _s, vt = np.linalg.svd(mat, full_matrices=False)
    z = vt[-1]
    z = z if z[int(np.argmax(np.abs(z)))] > 0 else -z  # one sign, so a re-measurement gives the same file
    return [float(x) for x in z / np.linalg.norm(z)]


@functools.cache
def known_null_direction(model_id: str, dims: int) -> tuple[float, ...] | None:
    """The shipped null direction of ``model_id`` (None: not measured, or not this size)."""
    try:
        table = json.loads(NULL_DIRECTIONS_PATH.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    entry = table.get(model_id) if isinstance(table, dict) else None
    vec = entry.get("direction") if isinstance(entry, dict) else None
    if not isinstance(vec, list) or len(vec) != dims:
        return None
    return tuple(float(x) for x in vec)
