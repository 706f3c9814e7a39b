"""Which texts of a chunk get a vector, and embedding the missing ones in length buckets.

The indexer embeds, per chunk, its windows (``chunking.plan_windows``) and, with ``[chunking] line_vectors``,
the lines that get a vector of their own. :class:`LinePolicy` says which lines pay for theirs: the ones of at
least ``min_tokens`` model tokens ("- done", a fence, a table rule tell the re-ranker nothing). The vectors
themselves come from :func:`embed_missing`: texts the index has never embedded (by content hash, so a text
repeated across chunks or files costs one forward pass), in length buckets, cached batch by batch.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from engine.display import plural
from engine.embed.batching import BATCH_ITEMS, BATCH_TOKENS, length_batches
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


def embed_missing(
    embed: Callable[[list[str]], list[list[float]]],
    count_tokens: Callable[[Sequence[str]], list[int]],
    missing: Mapping[str, str],
    store_batch: Callable[[dict[str, list[float]]], None],
    cancel: threading.Event | None = None,
    progress: Callable[[int, int], None] | None = None,
    max_items: int = BATCH_ITEMS,
    max_tokens: int = BATCH_TOKENS,
) -> bool:
    """Embed ``missing`` (content hash → text) in length buckets, handing each batch to ``store_batch``.

    Returns False when ``cancel`` was set between batches (what was stored stays stored).
    """
    items = list(missing.items())
    if not items:
        return True
    tokens = count_tokens([t for _, t in items])
    batches = length_batches(tokens, max_items, max_tokens)
    done = 0
    for n, batch in enumerate(batches):
        if n and cancel is not None and cancel.is_set():
            return False
        vectors = embed([items[i][1] for i in batch])
        if len(vectors) != len(batch):
            raise ValueError(f"the embedder returned {plural(len(vectors), 'vector')} for {plural(len(batch), 'text')}")
        store_batch({items[i][0]: v for i, v in zip(batch, vectors, strict=True)})
        done += len(batch)
        if progress is not None:
            progress(done, len(items))
    return True
