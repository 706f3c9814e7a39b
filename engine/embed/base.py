"""What every provider shares: the error type, vector normalisation, token estimates and token-budget batching."""

from __future__ import annotations

import math
from collections.abc import Sequence

from engine.errors import MemdeckError
from engine.http import public_url as public_url  # re-exported: providers and their tests import it from here


class EmbeddingError(MemdeckError):
    """An embedding provider failed; the message says what to check (and never holds a key)."""

    def __init__(self, provider: str, message: str) -> None:
        self.provider = provider
        self.message = message
        super().__init__(f"{provider}: {message}")


def normalize(vec: Sequence[float]) -> list[float]:
    """Unit length; non-finite values become 0 and a zero vector stays zero."""
    clean = [x if math.isfinite(x) else 0.0 for x in (float(v) for v in vec)]
    norm = math.sqrt(sum(x * x for x in clean))
    if norm < 1e-12:
        return clean
    return [x / norm for x in clean]


def estimate_tokens(text: str) -> int:
    """A tokenizer-free upper-leaning estimate: ~4 ASCII characters per token, one token per other character.

    BPE vocabularies spend about one token per CJK character and one per 2–3 Cyrillic letters, so counting
    every non-ASCII character as a token errs on the safe side of a provider's input limit.
    """
    ascii_chars = sum(1 for ch in text if ord(ch) < 128)
    return math.ceil(ascii_chars / 4) + (len(text) - ascii_chars)


def token_batches(counts: Sequence[int], max_items: int, max_tokens: int) -> list[range]:
    """Split consecutive items into batches of at most ``max_items`` items and ``max_tokens`` tokens.

    An item larger than ``max_tokens`` on its own still gets a batch (the provider decides what to do).
    """
    batches: list[range] = []
    start = 0
    total = 0
    for i, count in enumerate(counts):
        if i > start and (i - start >= max_items or total + count > max_tokens):
            batches.append(range(start, i))
            start, total = i, 0
        total += count
    if start < len(counts):
        batches.append(range(start, len(counts)))
    return batches
