"""Which texts of a chunk get a vector.

The indexer embeds, per chunk, its windows (``chunking.plan_windows``) and, with ``[chunking] line_vectors``,
the lines that get a vector of their own. ``[index] vectors`` (:data:`VECTOR_PLANS`) says how a window's vector
is made: from its text (``windows+lines``, the default, and ``windows``, which has no line vectors), or from
the token-weighted mean ``m`` of its lines' vectors (``lines``), so a chunk costs only its lines' tokens. Its
cosine with a query is ``q·m / |m|^p`` (``[index] lines_power``; padded along the model's null direction,
:mod:`engine.embed.nulldir`): ``p = 1`` is the normalised mean, whose cosines are inflated by ``1/|m|`` (≈ 1.1
on real notes: long chunks then outrank one-line facts), ``p = 0`` the lines' mean cosine. :class:`LinePolicy` says which lines pay for theirs: the ones of at least
``min_tokens`` model tokens ("- done", a fence, a table rule tell the re-ranker nothing). The indexer embeds
only the texts the cache has never seen (by content hash, so a text repeated across chunks or files costs one
forward pass), sorted by length.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.config_rules import VECTOR_PLANS as VECTOR_PLANS  # re-exported: the plans the indexer knows
from engine.index.chunking import Window, plan_lines

if TYPE_CHECKING:
    from engine.config import Config

LINE_MIN_TOKENS_ENV = "MEMDECK_LINE_MIN_TOKENS"
DEFAULT_PLAN = "windows+lines"
DERIVED_PLANS = frozenset({"lines"})


def vector_plan(config: Config) -> str:
    """The index's vector plan: ``[index] vectors``, or ``windows`` when ``[chunking] line_vectors`` is off."""
    return config.index.vectors if config.chunking.line_vectors else "windows"


@dataclass(frozen=True)
class LinePolicy:
    """Which of a chunk's lines get a vector: those ``plan_lines`` picks with at least ``min_tokens`` tokens."""

    min_tokens: int = 0

    def identity(self) -> dict[str, int]:
        """The index identity's entry for this policy: none for the default (every picked line), so an index
        built before the policy existed still fits."""
        return {"line_min_tokens": self.min_tokens} if self.min_tokens > 0 else {}

    @classmethod
    def from_env(cls, default: int = 0) -> LinePolicy:
        """The policy with ``$MEMDECK_LINE_MIN_TOKENS`` when set (benchmarks compare variants), else ``default``
        (``[index] line_min_tokens``)."""
        raw = os.environ.get(LINE_MIN_TOKENS_ENV, "").strip()
        try:
            return cls(min_tokens=max(0, int(raw))) if raw else cls(min_tokens=default)
        except ValueError:
            return cls(min_tokens=default)


def pick_lines(chunk_text: str, count_tokens: Callable[[Sequence[str]], list[int]],
               policy: LinePolicy) -> list[tuple[int, str]]:
    """(offset in the chunk, stripped text) of the lines that get a vector under ``policy``."""
    picked = plan_lines(chunk_text)
    if not picked or policy.min_tokens <= 0:
        return picked
    counts = count_tokens([t for _, t in picked])
    return [p for p, n in zip(picked, counts, strict=True) if n >= policy.min_tokens]


def window_lines(window: Window, lines: Sequence[tuple[int, str]]) -> list[tuple[int, str]]:
    """The picked lines a derived window's vector is the mean of; none when the window must embed its own text.

    A window of one line (a one-line chunk, or a piece of a line too long for the model) is its own text: a
    line vector of a cut line would stand for every piece, and a one-line window costs what its line would.
    """
    if window.first == window.last:
        return []
    return [(off, text) for off, text in lines if window.first <= off <= window.last]


def mean_vector(vectors: Sequence[Sequence[float]], weights: Sequence[float] | None = None,
                null: Sequence[float] | None = None, power: float = 0.0) -> list[float]:
    """A window's vector made of its lines' (unit) vectors: their (weighted) mean ``m``, unit length.

    With ``null`` (the model's null direction, :func:`engine.embed.nulldir.known_null_direction`) it is
    ``(m + sqrt(|m|^2p − |m|²)·null) / |m|^p``: a query's cosine with it is ``q·m / |m|^p`` since every query
    is orthogonal to ``null`` (``power`` 0: the lines' mean cosine). Without, or with ``power`` 1, it is
    ``m / |m|`` (cosines inflated by ``1/|m|``).
    """
    import numpy as np  # deferred: only when vectors are written

    mat = np.asarray(vectors, dtype=np.float64)
    w = np.ones(len(mat)) if weights is None else np.asarray(weights, dtype=np.float64)
    mean = (mat * w[:, None]).sum(axis=0) / max(float(w.sum()), 1e-12)
    if null is not None and power < 1.0:
        u = np.asarray(null, dtype=np.float64)
        u = u / (float(np.linalg.norm(u)) or 1.0)
        mean = mean - float(mean @ u) * u
        size = float(np.linalg.norm(mean))
        if size > 0:
            target = size ** power  # |w| before scaling to unit length
            pad = max(0.0, target * target - size * size) ** 0.5
            return [float(x) for x in (mean + pad * u) / target]
    norm = float(np.linalg.norm(mean))
    return [float(x) for x in (mean / norm if norm > 0 else mean)]
