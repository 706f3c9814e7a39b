"""quiet_gc: keep the cyclic garbage collector from stalling the event loop during big allocations."""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_gc_lock = threading.Lock()
_gc_holders = 0


@contextlib.contextmanager
def quiet_gc() -> Iterator[None]:
    """No cyclic-GC passes while a big transcript is parsed, then freeze what exists.

    Parsing makes hundreds of thousands of objects; a full collection over them holds the GIL for
    ~0.1–0.4 s, which is an event-loop stall. Frozen objects are skipped by later collections and still
    freed by reference counting when the transcript is closed (they hold no cycles).
    """
    global _gc_holders
    with _gc_lock:
        _gc_holders += 1
        if _gc_holders == 1:
            gc.disable()
    try:
        yield
    finally:
        with _gc_lock:
            _gc_holders -= 1
            if _gc_holders == 0:
                gc.freeze()
                gc.enable()
