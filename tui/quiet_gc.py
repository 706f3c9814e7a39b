"""quiet_gc: keep the cyclic garbage collector from stalling the event loop during big allocations."""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_gc_lock = threading.Lock()
_gc_holders = 0


def pause_gc() -> None:
    """No cyclic-GC passes until the matching :func:`resume_gc` (calls nest, from any thread)."""
    global _gc_holders
    with _gc_lock:
        _gc_holders += 1
        if _gc_holders == 1:
            gc.disable()


def resume_gc() -> None:
    """End one :func:`pause_gc`; the last one freezes what exists and turns the collector back on.

    Frozen objects are skipped by later collections and still freed by reference counting.
    """
    global _gc_holders
    with _gc_lock:
        _gc_holders = max(0, _gc_holders - 1)
        if _gc_holders == 0:
            gc.freeze()
            gc.enable()


@contextlib.contextmanager
def quiet_gc() -> Iterator[None]:
    """No cyclic-GC passes while a big transcript is parsed (or the model loads), then freeze what exists.

    Parsing makes hundreds of thousands of objects; a full collection over them holds the GIL for
    ~0.1–0.4 s, which is an event-loop stall. Frozen objects are skipped by later collections and still
    freed by reference counting when the transcript is closed (they hold no cycles).
    """
    pause_gc()
    try:
        yield
    finally:
        resume_gc()
