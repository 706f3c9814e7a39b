"""The TUI's flush reads the engine's one clock: in ``[memory] timezone`` (not the system's zone) it files each
item under the day it was said there, headed with that day's last turn, and resolves "tomorrow" from that day."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest

from engine.api import daily_heading
from tests.tui.conftest import make_app, settle, tui_config
from tests.tui.test_app import wait_until


@pytest.mark.parametrize(("system", "zone", "now", "wall", "tomorrow"), [
    # Session 9b2d4e71's last turn, 19:55 UTC on 12 Nov, is 04:55 on 13 Nov in Tokyo...
    ("America/Los_Angeles", "Asia/Tokyo", "2026-03-01T07:01:00-08:00", datetime(2026, 11, 13, 4, 55), "Sat 14 Nov"),
    # ... and 11:55 on 12 Nov in Los Angeles.
    ("Asia/Tokyo", "America/Los_Angeles", "2026-03-02T16:59:00+09:00", datetime(2026, 11, 12, 11, 55), "Fri 13 Nov"),
])
async def test_flush_near_midnight_writes_the_configured_zones_day(
        demo_workspace: Path, monkeypatch: pytest.MonkeyPatch, system_zone: Callable[[str], None],
        system: str, zone: str, now: str, wall: datetime, tomorrow: str) -> None:
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
        assert f"Remind me tomorrow ({tomorrow}) at 08:30" in app.screen.block
        assert app.screen.title_text.endswith(f"→ {target}")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: (config.workspace / target).exists(), "the daily note")
        await settle(pilot)
    text = (config.workspace / target).read_text(encoding="utf-8")
    assert text.startswith(daily_heading(wall.date()) + "\n")
    assert f"\n## {wall:%H:%M} — Memory flush from session 9b2d4e71\n" in text
