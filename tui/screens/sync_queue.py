"""SyncQueue: one index sync at a time, in a thread; what is asked for meanwhile is merged and runs right after."""

from __future__ import annotations

import threading
import time
from functools import partial
from typing import TYPE_CHECKING

from tui.messages import IndexFinished, IndexProgressed

if TYPE_CHECKING:
    from textual.widget import Widget

    from tui.bridge import Bridge


class SyncQueue:
    """The index sync's state: whether one runs, what is queued behind it, and how to stop it.

    The sync runs in a thread worker of ``host``, which receives :class:`IndexProgressed` and, once,
    :class:`IndexFinished`; the host's handler for the latter must call :meth:`finished`.
    """

    def __init__(self, bridge: Bridge, host: Widget) -> None:
        self._bridge = bridge
        self._host = host
        self.running = False
        self._force = False
        self._pending: tuple[bool, bool | None] | None = None
        self._user_cancelled = False
        self._cancel = threading.Event()

    def request(self, force: bool = False, embed: bool | None = None) -> None:
        """Sync now, or right after the running sync (which is asked to stop early unless it is a rebuild).

        Args:
            force: re-chunk every file into a fresh index.
            embed: True embeds the new chunks, False leaves them for later, None lets the engine decide.
        """
        if not self._bridge.is_open:
            return
        if self.running:
            old_force, old_embed = self._pending or (False, None)
            merged_embed = True if (old_embed or embed) else (None if None in (old_embed, embed) else False)
            self._pending = (old_force or force, merged_embed)
            if not self._force:
                self._cancel.set()
            return
        self.running = True
        self._force = force
        self._cancel = threading.Event()
        self._host.run_worker(partial(self._run, force, embed, self._cancel), name="run_sync", group="index",
                              thread=True)

    def cancel(self) -> None:
        """The user stops the running sync; nothing queued runs after it."""
        if self.running:
            self._user_cancelled = True
            self._pending = None
            self._cancel.set()

    def stop(self) -> None:
        """The app is closing: ask the running sync to stop (the index stays consistent)."""
        self._cancel.set()

    def finished(self) -> tuple[bool, bool]:
        """The running sync ended: whether the user had cancelled it, and whether a queued sync started instead."""
        self.running = False
        user_cancelled, self._user_cancelled = self._user_cancelled, False
        if self._pending is None:
            return user_cancelled, False
        force, embed = self._pending
        self._pending = None
        self.request(force, embed)
        return user_cancelled, True

    def _run(self, force: bool, embed: bool | None, cancel: threading.Event) -> None:
        """Index (in the worker's thread); progress is posted as messages, throttled to ~20 a second."""
        last = [0.0]
        host = self._host

        def progress(p: object) -> None:
            now = time.monotonic()
            done, total = getattr(p, "done", 0), getattr(p, "total", 0)
            if done in (0, total) or now - last[0] > 0.05:
                last[0] = now
                work = (getattr(p, "work_done", 0), getattr(p, "work_total", 0))
                host.post_message(IndexProgressed(getattr(p, "phase", "files"), done, total, getattr(p, "path", None),
                                                  work))

        from engine.errors import IndexBusy

        try:
            report = self._bridge.sync(progress, cancel, force, embed)
        except IndexBusy as exc:
            busy = "another memdeck process" in str(exc)  # not this process's own search embedding
            host.post_message(IndexFinished("", error=None if busy else f"{type(exc).__name__}: {exc}", busy=busy))
            return
        except Exception as exc:  # OSError, SQLite errors: report them, keep the app alive
            host.post_message(IndexFinished("", error=f"{type(exc).__name__}: {exc}"))
            return
        from engine.api import plural  # loaded by now: the sync ran on it

        summary = f"{plural(report.files_indexed, 'file')} re-read, {plural(report.embedded, 'chunk')} embedded"
        host.post_message(IndexFinished(summary, cancelled=report.cancelled))
