"""The TUI's flush reads the engine's one clock: near midnight in ``[memory] timezone`` (not the system's zone)
it offers and writes that zone's daily note, headed with a time of the same day."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest

from engine.api import daily_heading
from tests.tui.conftest import make_app, settle, tui_config
from tests.tui.test_app import wait_until


@pytest.mark.parametrize(("system", "zone", "now", "wall"), [
    # 00:01 on 2 March in Tokyo is 07:01 on 1 March in Los Angeles.
    ("America/Los_Angeles", "Asia/Tokyo", "2026-03-01T07:01:00-08:00", datetime(2026, 3, 2, 0, 1)),
    # 23:59 on 1 March in Los Angeles is 16:59 on 2 March in Tokyo.
    ("Asia/Tokyo", "America/Los_Angeles", "2026-03-02T16:59:00+09:00", datetime(2026, 3, 1, 23, 59)),
])
async def test_flush_near_midnight_writes_the_configured_zones_day(
        demo_workspace: Path, monkeypatch: pytest.MonkeyPatch, system_zone: Callable[[str], None],
        system: str, zone: str, now: str, wall: datetime) -> None:
    system_zone(system)
    monkeypatch.setenv("MEMDECK_NOW", now)
    config = tui_config(demo_workspace, memory={"timezone": zone})
    path = next((config.workspace / "sessions").glob("9b2d4e71*.jsonl"))
    target = f"memory/{wall:%Y-%m-%d}.md"
    assert not (config.workspace / target).exists()
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.main.open_session(path)
        await settle(pilot)
        from tui.screens.flush import FlushScreen

        app.run_worker(app.main.run_action("flush"))
        await wait_until(pilot, lambda: isinstance(app.screen, FlushScreen), "the flush review")
        assert isinstance(app.screen, FlushScreen)
        assert app.screen.block.startswith(f"## {wall:%H:%M} — Memory flush from session 9b2d4e71\n")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: (config.workspace / target).exists(), "the daily note")
        await settle(pilot)
    text = (config.workspace / target).read_text(encoding="utf-8")
    assert text.startswith(daily_heading(wall.date()) + "\n")
    assert f"\n## {wall:%H:%M} — Memory flush from session 9b2d4e71\n" in text
