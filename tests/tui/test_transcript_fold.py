"""The transcript viewer folds a user turn's injected blocks to one dim line each; Enter, a click or ``o`` opens them.

The sessions are the fixture transcripts of ``tests/data/transcripts/injected`` (OpenClaw 2026.9 shapes): a plugin
block (``<composio>``) opens every user turn, and two turns are injected as a whole (an exec event, the flush prompt).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from engine.config import Config
from tests.tui.conftest import make_app, settle, tui_config
from tui.app import MemdeckApp
from tui.widgets.transcript_view import TranscriptLines

INJECTED = Path(__file__).parent.parent / "data" / "transcripts" / "injected"
PLUGIN = "22222222-2222-4222-8222-222222222222"
CV = "I prefer my CV summaries without my name in the body, always."
FOLD = "▸ injected: composio · 3 lines"


def _config(demo_workspace: Path) -> tuple[Config, Path]:
    sessions = demo_workspace / "sessions" / "main"
    sessions.mkdir(parents=True, exist_ok=True)
    path = sessions / f"{PLUGIN}.jsonl"
    shutil.copyfile(INJECTED / f"{PLUGIN}.jsonl", path)
    return tui_config(demo_workspace), path


def _rows(lines: TranscriptLines) -> list[str]:
    """Every row of the view as text (the view is scrolled to the top and tall enough for the whole session)."""
    assert lines.virtual_size.height <= lines.scrollable_content_region.height
    return [lines.render_line(y).text.rstrip() for y in range(lines.virtual_size.height)]


def _line_of(path: Path, needle: str) -> int:
    """The 1-based JSONL line of the first entry whose text holds ``needle``."""
    return next(n for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
                if needle in json.dumps(json.loads(raw), ensure_ascii=False))


async def _open(app: MemdeckApp, pilot: Pilot[Any], path: Path) -> TranscriptLines:
    await settle(pilot)
    app.main.open_session(path)
    await settle(pilot)
    view = app.main.loaded_transcript
    assert view is not None and view.transcript is not None
    lines = view.lines
    lines.focus()
    await pilot.pause()
    return lines


async def test_injected_blocks_fold_to_one_line_and_the_words_follow(demo_workspace: Path) -> None:
    config, path = _config(demo_workspace)
    app = make_app(config)
    async with app.run_test(size=(120, 50)) as pilot:
        lines = await _open(app, pilot, path)
        rows = _rows(lines)
        assert not any("<composio>" in row or "IMPORTANT" in row for row in rows)
        at = rows.index(f"▌   {FOLD}")
        assert rows[at + 1] == f"▌   {CV}"  # the line after the fold is the person's words
        # The turns injected as a whole fold entirely: the user's title, then one line, no "(no text)".
        assert "▌   ▸ injected: composio, envelope, exec · 12 lines" in rows
        assert "▌   ▸ injected: composio, flush · 6 lines" in rows
        assert not any("(no text)" in row for row in rows)
        # The turn's title still cites the turn's own JSONL line.
        title = rows[at - 1]
        assert title.startswith("▌ user") and title.endswith(f"L{_line_of(path, CV)}")
        fold = next(i for i, b in enumerate(lines.blocks) if b.title == FOLD[2:])
        assert lines.blocks[fold].line == _line_of(path, CV)


async def test_enter_opens_and_closes_an_injected_block(demo_workspace: Path) -> None:
    config, path = _config(demo_workspace)
    app = make_app(config)
    async with app.run_test(size=(120, 50)) as pilot:
        lines = await _open(app, pilot, path)
        fold = next(i for i, b in enumerate(lines.blocks) if b.title == FOLD[2:])
        lines.cursor = fold
        await pilot.press("enter")
        await pilot.pause()
        rows = _rows(lines)
        at = rows.index("▌   ▾ injected: composio · 3 lines")
        end = rows.index("▌ │ </composio>", at)
        assert rows[at + 1] == "▌ │ <composio>"
        assert rows[at + 2].startswith("▌ │ IMPORTANT: Ignore any pretrained knowledge")
        assert all(row.startswith("▌ │ ") for row in rows[at + 1 : end])  # wrapped to the pane, still in the block
        assert rows[end + 1] == f"▌   {CV}"
        await pilot.press("enter")
        await pilot.pause()
        rows = _rows(lines)
        assert rows[rows.index(f"▌   {FOLD}") + 1] == f"▌   {CV}"
        assert not any("<composio>" in row for row in rows)


async def test_a_click_on_the_fold_line_opens_it_and_o_opens_them_all(demo_workspace: Path) -> None:
    config, path = _config(demo_workspace)
    app = make_app(config)
    async with app.run_test(size=(120, 80)) as pilot:
        lines = await _open(app, pilot, path)
        at = _rows(lines).index(f"▌   {FOLD}")
        assert lines.cursor != next(i for i, b in enumerate(lines.blocks) if b.title == FOLD[2:])
        await pilot.click(TranscriptLines, offset=(8, at))
        await pilot.pause()
        rows = _rows(lines)
        assert rows[at] == "▌   ▾ injected: composio · 3 lines" and rows[at + 1] == "▌ │ <composio>"
        await pilot.click(TranscriptLines, offset=(8, at))  # again: closed
        await pilot.pause()
        assert _rows(lines)[at + 1] == f"▌   {CV}"
        await pilot.press("o")
        await pilot.pause()
        rows = _rows(lines)
        assert sum(row.startswith("▌   ▾ injected") for row in rows) == 3
        assert not any(row.startswith("▌   ▸ injected") for row in rows)
        assert sum(row == "▌ │ <composio>" for row in rows) == 3
        await pilot.press("o")
        await pilot.pause()
        rows = _rows(lines)
        assert sum(row.startswith("▌   ▸ injected") for row in rows) == 3
        assert not any("<composio>" in row for row in rows)


async def test_a_search_hit_on_a_folded_turn_lands_on_the_turn(demo_workspace: Path) -> None:
    config, path = _config(demo_workspace)
    app = make_app(config)
    async with app.run_test(size=(120, 50)) as pilot:
        await settle(pilot)
        line = _line_of(path, CV)
        app.main.open_session(path, line=line)
        await settle(pilot)
        view = app.main.loaded_transcript
        assert view is not None
        block = view.lines.blocks[view.lines.cursor]
        assert (block.kind, block.line) == ("user", line)


async def test_f1_names_the_injected_key_and_the_keys_table_remaps_it(demo_workspace: Path) -> None:
    _, path = _config(demo_workspace)
    app = make_app(tui_config(demo_workspace, keys={"transcript.injected": "i"}))
    async with app.run_test(size=(120, 80)) as pilot:
        rows = {r.binding_id: r for r in app.key_help() if r.binding_id}
        assert (rows["transcript.injected"].where, rows["transcript.injected"].keys) == ("transcript", "i")
        assert rows["transcript.injected"].description == "Injected"
        lines = await _open(app, pilot, path)
        await pilot.press("o")  # no longer the key
        await pilot.pause()
        assert not any(row.startswith("▌   ▾ injected") for row in _rows(lines))
        await pilot.press("i")
        await pilot.pause()
        assert sum(row.startswith("▌   ▾ injected") for row in _rows(lines)) == 3
