"""Which texts of a chunk get a vector.

The indexer embeds, per chunk, its windows (``chunking.plan_windows``) and, with ``[chunking] line_vectors``,
the lines that get a vector of their own. :class:`LinePolicy` says which lines pay for theirs: the ones of at
least ``min_tokens`` model tokens ("- done", a fence, a table rule tell the re-ranker nothing). The indexer
embeds only the texts the cache has never seen (by content hash, so a text repeated across chunks or files costs
one forward pass), sorted by length.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engine.index.chunking import plan_lines

LINE_MIN_TOKENS_ENV = "MEMDECK_LINE_MIN_TOKENS"


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
        """The policy with ``$MEMDECK_LINE_MIN_TOKENS`` when set (benchmarks and evals compare variants)."""
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
