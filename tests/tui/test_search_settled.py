"""As you type, only the settled query is searched (and so embedded): the debounce drops the ones typed over."""

from __future__ import annotations

import asyncio
import types

import pytest

from engine.config import Config
from tests.tui.conftest import make_app, settle
from tui.widgets import search_pane


async def test_only_the_settled_query_reaches_the_engine(config: Config, monkeypatch: pytest.MonkeyPatch) -> None:
    # The debounce's sleep waits for a gate instead of the clock: every key is typed while the searches wait.
    gate = asyncio.Event()
    waiting: list[float] = []

    async def gated_sleep(seconds: float) -> None:
        waiting.append(seconds)
        await gate.wait()

    monkeypatch.setattr(search_pane, "asyncio", types.SimpleNamespace(sleep=gated_sleep, to_thread=asyncio.to_thread))
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        asked: list[str] = []
        search = app.bridge.search

        def recording(query: str, mode: str = "hybrid"):  # type: ignore[no-untyped-def]
            asked.append(query)
            return search(query, mode)

        app.bridge.search = recording  # type: ignore[method-assign]
        pane = app.main.search
        pane.query_input.focus()
        await pilot.pause()
        for key in "pgbouncer":
            await pilot.press(key)
            await pilot.pause()  # each key's search starts and waits in the debounce
        assert waiting and asked == []
        gate.set()
        await settle(pilot)
        assert asked == ["pgbouncer"]
        assert pane.results_query == "pgbouncer" and pane.results.option_count > 0
