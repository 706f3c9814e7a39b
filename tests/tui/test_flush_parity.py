"""The TUI's flush (``f`` on a session) drafts exactly what ``memdeck flush --dry-run --json`` drafts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path
from typing import Any

from engine.api import Draft, Transcript
from engine.config import Config
from tests.tui.conftest import make_app, settle
from tui.screens.flush import FlushScreen

REPO = Path(__file__).resolve().parents[2]


def _cli_dry_run(home: Path) -> dict[str, Any]:
    """``memdeck --demo flush 9b2d --dry-run --json`` in its own process and data dir (the demo's own copy)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDECK_")}
    env.update(MEMDECK_HOME=str(home), MEMDECK_EMBEDDING_PROVIDER="hash")
    out = subprocess.run([sys.executable, "-m", "memdeck.cli", "--demo", "flush", "9b2d", "--dry-run", "--json"],
                         capture_output=True, text=True, env=env, cwd=REPO, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    payload: dict[str, Any] = json.loads(out.stdout)
    return payload


def _bullets(block: str) -> list[str]:
    return [line for line in block.splitlines() if line.startswith("- ")]


async def test_f_drafts_what_the_cli_drafts(config: Config, tmp_path: Path) -> None:
    cli = _cli_dry_run(tmp_path / "cli-home")
    path = next((config.workspace / "sessions").glob("9b2d4e71*.jsonl"))
    today = config.workspace / "memory" / f"{date.today():%Y-%m-%d}.md"
    drafts: list[Draft] = []
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        real = app.bridge.draft_flush

        def recorded(transcript: Transcript) -> Draft:
            draft = real(transcript)
            drafts.append(draft)
            return draft

        app.bridge.draft_flush = recorded  # type: ignore[method-assign]
        app.main.open_session(path)
        await settle(pilot)
        await pilot.press("f")
        for _ in range(200):
            if isinstance(app.screen, FlushScreen):
                break
            await pilot.pause()
        screen = app.screen
        assert isinstance(screen, FlushScreen)
        block, info, title = screen.block, screen.info, screen.title_text
        await pilot.click("#flush-cancel")
        await settle(pilot)
    (draft,) = drafts
    assert [{"text": i.text, "kind": i.kind, "line": i.line} for i in draft.items] == [
        {k: i[k] for k in ("text", "kind", "line")} for i in cli["items"]]
    assert draft.skipped_known == cli["skippedKnown"]
    assert _bullets(block) == _bullets(cli["text"])
    # Both doors file the item under the day it was said (12 Nov), and the preview names that note.
    assert cli["paths"] == ["memory/2026-11-12.md"]
    assert title.endswith("→ memory/2026-11-12.md") and "Append adds this to memory/2026-11-12.md." in info
    n = len(cli["items"])
    assert f"{n} candidate {'memory' if n == 1 else 'memories'}" in info  # "1 candidate memory" (issue 16, case 14)
    # The case: MEMORY.md line 14 already holds the uv preference, so neither door proposes it again.
    assert cli["skippedKnown"] == 2 and [item["line"] for item in cli["items"]] == [20]
    assert not today.exists()  # cancelled: nothing written


def test_the_preview_names_each_day_s_note_and_append_writes_each(tmp_path: Path) -> None:
    """A session of two days: the bridge plans one block per day, names both notes, and an edited preview goes to
    the notes its separators name."""
    from datetime import UTC, datetime

    from engine.config import load_config
    from tui.bridge import Bridge

    def line(ts: str, text: str) -> str:
        return json.dumps({"type": "message", "timestamp": ts, "message": {"role": "user", "content": text}})

    path = tmp_path / "3f2a9c1e-aaaa-bbbb.jsonl"
    path.write_text("\n".join([
        json.dumps({"type": "session", "version": 3, "id": "3f2a9c1e", "timestamp": "2026-11-12T09:00:00Z", "cwd": "/"}),
        line("2026-11-12T19:54:22Z", "Remind me tomorrow at 08:30 to move the backup job."),
        line("2026-11-13T07:05:00Z", "I prefer tea in the morning."),
    ]) + "\n", encoding="utf-8")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    bridge = Bridge(load_config(workspace=workspace))
    transcript = bridge.memory.read_session(path)
    now = datetime(2026, 12, 3, 8, 0, tzinfo=UTC)
    plan = bridge.plan_flush(transcript, bridge.memory.draft_flush(transcript, method="extractive"), now)
    assert bridge.flush_targets(plan) == "memory/2026-11-12.md, memory/2026-11-13.md"
    assert plan.preview.startswith("<!-- flush → memory/2026-11-12.md -->\n")
    assert bridge.flush_heading(plan).startswith("# 2026-11-12")
    edited = plan.preview.replace("I prefer tea", "I prefer green tea")
    rels, _ = bridge.write_flush(plan, edited, now)
    assert rels == ("memory/2026-11-12.md", "memory/2026-11-13.md")
    first = (workspace / rels[0]).read_text(encoding="utf-8")
    second = (workspace / rels[1]).read_text(encoding="utf-8")
    assert "Remind me tomorrow (Fri 13 Nov) at 08:30" in first and "tea" not in first
    assert "I prefer green tea" in second and "<!-- flush" not in first + second
