"""Another memdeck process writes the index (a `memdeck index` in a terminal): the workbench says so once, calmly
(it is not a failure), follows the other process's progress, and takes over once the lock is free."""

from __future__ import annotations

import contextlib

from engine.config import Config
from engine.index.indexer import writer_lock
from tests.tui.conftest import make_app, settle


async def test_another_writer_is_followed_not_reported_as_a_failure(config: Config) -> None:
    app = make_app(config)
    lock = contextlib.ExitStack()
    lock.enter_context(writer_lock(config.index_path, wait=1.0))
    try:
        app.bridge.lock_wait = 0.05
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot)
            said = [n.message for n in app._notifications]
            assert any("Another memdeck process is indexing this workspace" in m for m in said), said
            assert not any("Indexing failed" in m for m in said), said
            main = app.main
            assert main._follow is not None
            lock.close()  # the other process is done (or was stopped)
            for _ in range(main.RETRY_EVERY):
                main.follow_tick()
            await settle(pilot)
            assert main._follow is None  # this window's own sync ran: it writes the index again
            assert app.bridge.engine.status().files_indexed > 0
            assert not any("Indexing failed" in n.message for n in app._notifications)
    finally:
        lock.close()
