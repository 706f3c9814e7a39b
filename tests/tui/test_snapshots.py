"""SVG snapshot tests: 120×36, fixed theme, no blinking, UTC, and no temp paths or clock times on screen.

Update after an intended change with ``pytest tests/tui/test_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from engine.config import Config
from tests.tui.conftest import make_app, settle, tui_config
from tui.widgets import index_status

SIZE = (120, 36)


@pytest.fixture(autouse=True)
def _stable_text(monkeypatch: pytest.MonkeyPatch, demo_workspace: Path) -> None:
    def display_path(path: str) -> str:
        if path.endswith(".sqlite"):
            return "~/.local/share/memdeck/index/demo.sqlite"
        return "~/demo" if Path(path) == demo_workspace else path

    monkeypatch.setattr(index_status, "display_path", display_path)
    monkeypatch.setattr(index_status, "format_clock", lambda ts, zone=None: "09:30:00" if ts else "never")
    monkeypatch.setattr("engine.display.byte_size", lambda n: "1.2 MB")  # engine.api hands it on


def _prepared(then: Callable[[Pilot], Awaitable[None]] | None = None) -> Callable[[Pilot], Awaitable[None]]:
    async def run_before(pilot: Pilot) -> None:
        app = pilot.app
        for widget in app.query(Input):
            widget.cursor_blink = False
        for area in app.query(TextArea):
            area.cursor_blink = False
        await settle(pilot)
        if then is not None:
            await then(pilot)
            await settle(pilot)
        for area in app.query(TextArea):
            area.cursor_blink = False
            # The cursor's visibility is not a repaint of its own (Textual): draw what is true now, or the picture
            # depends on whether anything else redrew the cursor's line after the focus moved (a busy machine).
            area.refresh()
        app.clear_notifications()
        await pilot.pause()

    return run_before


async def _search(pilot: Pilot) -> None:
    pilot.app.main.search.query_input.focus()
    await pilot.press(*"pgbouncer pool")
    await settle(pilot)


async def _open_first_result(pilot: Pilot) -> None:
    await _search(pilot)
    await pilot.press("enter")
    await settle(pilot)


async def _transcript(pilot: Pilot) -> None:
    app = pilot.app
    path = next(app.bridge.sessions_dir.glob("3f6c2a9e*.jsonl"))
    app.main.open_session(path)
    await settle(pilot)
    await pilot.press(*["down"] * 5, "enter")


async def _help(pilot: Pilot) -> None:
    await pilot.press("f1")


def test_empty_search(snap_compare: Callable[..., bool], config: Config) -> None:
    assert snap_compare(make_app(config), terminal_size=SIZE, run_before=_prepared())


def test_search_results(snap_compare: Callable[..., bool], config: Config) -> None:
    assert snap_compare(make_app(config), terminal_size=SIZE, run_before=_prepared(_search))


def test_editor_with_range_selected(snap_compare: Callable[..., bool], config: Config) -> None:
    assert snap_compare(make_app(config), terminal_size=SIZE, run_before=_prepared(_open_first_result))


def test_transcript(snap_compare: Callable[..., bool], config: Config) -> None:
    assert snap_compare(make_app(config), terminal_size=SIZE, run_before=_prepared(_transcript))


def test_status_with_vector_unavailable(snap_compare: Callable[..., bool], demo_workspace: Path) -> None:
    app = make_app(tui_config(demo_workspace, provider="none"))
    assert snap_compare(app, terminal_size=SIZE, run_before=_prepared(_search))


def test_help(snap_compare: Callable[..., bool], config: Config) -> None:
    assert snap_compare(make_app(config), terminal_size=SIZE, run_before=_prepared(_help))
