"""TUI test helpers: a demo workspace copy with the hashing embedder, an app factory, and waiting for quiet."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot

from engine.config import Config, load_config
from tui.app import MemdeckApp


@pytest.fixture(autouse=True)
def _quiet_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMDECK_CLIPBOARD", "osc52")
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()


def tui_config(workspace: Path, provider: str = "hash", **extra: object) -> Config:
    """A config on ``workspace`` with its sessions folder and a deterministic (or no) embedder."""
    overrides: dict[str, object] = {"embedding": {"provider": provider}}
    overrides.update(extra)
    return load_config(workspace=workspace, sessions_dir=workspace / "sessions", overrides=overrides)


@pytest.fixture
def config(demo_workspace: Path) -> Config:
    """The demo workspace with the hashing embedder."""
    return tui_config(demo_workspace)


_APPS: list[MemdeckApp] = []


def make_app(config: Config) -> MemdeckApp:
    """The app as tests drive it: no file watcher (tests post changes themselves), no blinking."""
    app = MemdeckApp(config, watch=False)
    _APPS.append(app)
    return app


@pytest.fixture(autouse=True)
def _no_hidden_worker_errors(request: pytest.FixtureRequest) -> Iterator[None]:
    """A worker's exception is an error notification in the app (it never kills it): fail the test on one anyway,
    unless the test asks for ``allow_worker_errors``, or a bug would hide behind a toast."""
    _APPS.clear()
    yield
    errors = [error for app in _APPS for error in app.worker_errors]
    _APPS.clear()
    if "allow_worker_errors" not in request.fixturenames:
        assert not errors, f"a worker raised (the app showed it as a notification): {errors!r}"


@pytest.fixture
def allow_worker_errors() -> None:
    """This test makes a worker raise on purpose."""


async def settle(pilot: Pilot, rounds: int = 20) -> None:
    """Wait until no worker is running and the message queues are drained (never sleeps on a clock)."""
    app = pilot.app
    for _ in range(rounds):
        await pilot.pause()
        # A bound on the wait: a worker stuck behind a dialog must fail the test, not hang it.
        await asyncio.wait_for(app.workers.wait_for_complete(), timeout=60)
        await pilot.pause()
        if not any(w.is_running for w in app.workers) and not app.main.sync.running:
            return
    raise AssertionError("the app did not settle")


async def type_query(pilot: Pilot, text: str) -> None:
    """Type into the search box and wait for the debounced search to land."""
    pilot.app.main.search.query_input.focus()
    await pilot.pause()
    await pilot.press(*text)
    await settle(pilot)
