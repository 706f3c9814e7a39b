"""Per-model calibration: each leg's raw score → a probability of relevance (Platt fits on LoCoMo dev folds)."""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CALIBRATION_PATH = Path(__file__).with_name("calibration.json")


@dataclass(frozen=True)
class Platt:
    """``p = 1 / (1 + exp(-(a·x + b)))``: a logistic map of one raw score to a probability."""

    a: float
    b: float

    def __call__(self, x: float) -> float:
        """The probability for raw score ``x``."""
        return sigmoid(self.a * x + self.b)


@dataclass(frozen=True)
class Calibration:
    """The fitted maps for one embedding model.

    Attributes:
        model: the model the vector maps belong to (None: no vector maps, e.g. an unknown remote model).
        window: raw best-window cosine → probability (None: unknown model, use the raw cosine).
        line: raw best-line cosine → probability.
        vector_leg: the vector leg's fused-in score (window and best line mixed by ``line_weight``) → probability.
        keyword_leg: the keyword leg's [0, 1] score (normalised BM25 mixed with best-line BM25) → probability;
            it does not depend on the model.
    """

    model: str | None
    window: Platt | None
    line: Platt | None
    vector_leg: Platt | None
    keyword_leg: Platt | None

    @property
    def knows_model(self) -> bool:
        """Whether the vector leg has fitted maps (else fusion and the hybrid re-ranker keep raw scores)."""
        return self.window is not None and self.vector_leg is not None


def sigmoid(z: float) -> float:
    """The logistic function, safe for large ``|z|``."""
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def _platt(spec: Any) -> Platt | None:
    if not isinstance(spec, Mapping):
        return None
    try:
        return Platt(float(spec["a"]), float(spec["b"]))
    except (KeyError, TypeError, ValueError):
        return None


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    try:
        data = json.loads(CALIBRATION_PATH.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # a broken install calibrates nothing: fusion falls back to raw scores
    return data if isinstance(data, dict) else {}


def table_from(data: Mapping[str, Any], model: str | None) -> Calibration:
    """The calibration for ``model`` from a parsed calibration file (see ``calibration.json``).

    An unknown model (a remote provider, the test hashing embedder) gets no vector maps: its cosines live in a
    range nobody fitted, so fusion and re-ranking treat its vector leg as raw (documented fallback).
    """
    models = data.get("models") if isinstance(data.get("models"), Mapping) else {}
    spec = models.get(model) if model is not None and isinstance(models, Mapping) else None
    keyword = _platt(data.get("keyword", {}).get("leg")) if isinstance(data.get("keyword"), Mapping) else None
    if not isinstance(spec, Mapping):
        return Calibration(None, None, None, None, keyword)
    return Calibration(model, _platt(spec.get("window")), _platt(spec.get("line")), _platt(spec.get("leg")),
                       keyword)


@functools.lru_cache(maxsize=8)
def calibration_for(model: str | None) -> Calibration:
    """The shipped calibration for an embedding model name (``None`` or unknown: keyword map only)."""
    return table_from(_table(), model)
