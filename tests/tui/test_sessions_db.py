"""The TUI on OpenClaw 2026.9: sessions from the agent database in the tree, the viewer and the Open-session picker."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest
from textual.command import CommandPalette

from engine.config import Config, load_config
from tests.tui.conftest import make_app, settle
from tui.bridge import Bridge, token_text
from tui.commands import TITLE_SHARE, session_score
from tui.screens.flush import FlushScreen
from tui.widgets.transcript_layout import build_blocks, summary_counts

FIXTURE = Path(__file__).parent.parent / "data" / "openclaw-agent.sqlite"
BENCH = Path(__file__).parent.parent.parent / "bench"
HAND_WRITTEN = "5e1f0c3a-8b2d-4a6e-9f10-2c3d4e5f6a7b"  # compaction + retainedTail, custom_message display false
LIVE = "8555a0a4-0b79-459d-939c-e17cdbbf4fe2"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def agent_db(tmp_path: Path) -> Path:
    """A temp copy of the fixture, where OpenClaw keeps it."""
    db = tmp_path / "state" / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    db.parent.mkdir(parents=True)
    shutil.copy(FIXTURE, db)
    return db


@pytest.fixture
def db_config(demo_workspace: Path, agent_db: Path) -> Config:
    """The demo workspace with its sessions read from the agent database (``sessions_dir`` names the file)."""
    return load_config(workspace=demo_workspace, sessions_dir=agent_db, overrides={"embedding": {"provider": "hash"}})


def test_tree_lists_database_sessions_with_their_token_source(db_config: Config) -> None:
    model = Bridge(db_config).scan_tree()
    assert model.sessions_error is None
    by_id = {s.session_id: s for s in model.sessions}
    assert set(by_id) == {LIVE, HAND_WRITTEN, "3f6c2a9e-8b41-4d7a-9c05-1e2f7b8a6d10",
                          "9b2d4e71-5c3a-4f88-b6e0-7a1c2d3e4f51"}
    assert "24,845 tokens (store total)" in by_id[LIVE].detail  # the session store's fresh totalTokens
    assert "150,930 tokens (last turn usage)" in by_id[HAND_WRITTEN].detail  # no store row: the last reply's usage
    assert not by_id[LIVE].label.endswith("```json {")  # injected metadata never titles a session


@pytest.mark.parametrize(
    ("tokens", "source", "text"),
    [(24845, "store", "24,845 tokens (store total)"), (930, "usage", "930 tokens (last turn usage)"),
     (12, None, "12 tokens"), (None, "store", None), (0, "usage", None)],
)
def test_token_text(tokens: int | None, source: str | None, text: str | None) -> None:
    assert token_text(tokens, source) == text


def test_viewer_hides_undisplayed_custom_messages_and_folds_the_retained_tail(db_config: Config) -> None:
    bridge = Bridge(db_config)
    transcript = bridge.read_transcript(bridge.find_session(HAND_WRITTEN[:8]))
    blocks, summary = build_blocks(transcript)
    text = "\n".join(f"{b.title}\n{b.body}" for b in blocks)
    assert "hidden extension context" not in text and "hidden-note" not in text  # display: false
    assert "OpenClaw runtime context: cron reminder queued" in text  # display: true stays
    (tail,) = [b for b in blocks if b.title.startswith("retained tail")]
    assert tail.kind == "compaction" and tail.folded and tail.foldable
    assert tail.title == "retained tail · 1 message" and tail.body == "user: keep the single-column CV"
    assert tail.line == 16  # the compaction's own line (seq 15 + 1)
    assert summary_counts(summary).endswith("150,930 tokens (last turn usage)")


@pytest.mark.parametrize(
    ("query", "title", "expected"),
    [
        ("5e1f", "2026-04-27 Qiddiya interview prep", 1.0),
        ("5E1F0C3A-8B", "2026-04-27 Qiddiya interview prep", 1.0),
        ("  5e1f0c  ", "2026-04-27 Qiddiya interview prep", 1.0),
        ("5", "2026-04-27 Qiddiya interview prep", 0.0),  # one character is no id prefix
        ("qiddiya", "2026-04-27 Qiddiya interview prep", "fuzzy"),
        ("e1f0", "2026-04-27 Qiddiya interview prep", 0.0),  # inside the id, not its start
        ("", "2026-04-27 Qiddiya interview prep", 0.0),
    ],
)
def test_session_score(query: str, title: str, expected: float | str) -> None:
    score = session_score(query, title, HAND_WRITTEN, lambda candidate: 0.5 if "qiddiya" in query else 0.0)
    assert score == (TITLE_SHARE * 0.5 if expected == "fuzzy" else expected)


def test_head_read_of_a_big_database_session_is_bounded(db_config: Config, agent_db: Path) -> None:
    sys.path.insert(0, str(BENCH))
    try:
        from session_db_open import GROWN_SESSION, grow_session
    finally:
        sys.path.remove(str(BENCH))
    assert GROWN_SESSION == LIVE
    grow_session(agent_db, 1500)
    bridge = Bridge(db_config)
    path = bridge.find_session(LIVE[:8])
    limit = 64 * 1024
    head = bridge.read_transcript_head(path, limit)
    assert head is not None and not head.complete
    whole = bridge.read_transcript(path)
    assert whole.complete and whole.line_count == 1500 and len(whole.entries) == 1500
    rows = len(head.entries) + len(head.skipped)
    assert 0 < rows < 1500
    with sqlite3.connect(f"file:{agent_db}?mode=ro&immutable=1", uri=True) as conn:
        sizes = [n for (n,) in conn.execute("SELECT coalesce(event_utf8_bytes, length(CAST(event_json AS BLOB)))"
                                            " FROM transcript_events WHERE session_id = ? ORDER BY seq", (LIVE,))]
    assert sum(size + 1 for size in sizes[:rows]) <= limit < sum(size + 1 for size in sizes[: rows + 1])


async def test_open_by_id_prefix_and_flush_a_database_session(db_config: Config, agent_db: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    before = _sha256(agent_db)
    monkeypatch.setenv("MEMDECK_SESSIONS", str(agent_db))  # the environment names it too
    app = make_app(db_config)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await app.main.run_action("open_session")
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"5e1f0c")
        for _ in range(50):
            await pilot.pause(0.02)
            if app.screen.query("CommandList Option"):
                break
        await pilot.press("enter")
        await settle(pilot)
        view = app.main.loaded_transcript
        assert view is not None and view.transcript is not None
        assert view.transcript.session_id == HAND_WRITTEN
        header = str(app.query_one("#transcript-header").render())
        assert "(last turn usage)" in header
        assert not any("hidden extension context" in b.body for b in view.lines.blocks)
        await pilot.press("f")
        for _ in range(200):
            if isinstance(app.screen, FlushScreen):
                break
            await pilot.pause(0.02)
        assert isinstance(app.screen, FlushScreen)
        assert "Memory flush from session 5e1f0c3a" in app.screen.block
        target = app.screen.target
        assert target is not None and target.startswith("memory/2026-04-2")  # the day it was said (27 Apr, UTC)
        await pilot.press("ctrl+s")
        await settle(pilot)
    daily = db_config.workspace / target
    text = daily.read_text(encoding="utf-8")
    assert "Memory flush from session 5e1f0c3a" in text and "Telegram" in text
    assert HAND_WRITTEN in (db_config.home / "flush-state.json").read_text(encoding="utf-8")
    assert _sha256(agent_db) == before  # memdeck never writes OpenClaw's database


async def test_a_search_hit_opens_the_database_session_at_its_turn(demo_workspace: Path, agent_db: Path) -> None:
    config = load_config(workspace=demo_workspace, sessions_dir=agent_db,
                         overrides={"embedding": {"provider": "hash"}, "sources": ["memory", "sessions"]})
    app = make_app(config)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        hits = app.bridge.search("Qiddiya interview Riyadh", "keyword").results
        hit = next(h for h in hits if h.source == "sessions")
        assert hit.path == f"sessions/main/{HAND_WRITTEN}.jsonl"  # OpenClaw's citation name, not a file
        app.main.open_hit(hit)
        await settle(pilot)
        view = app.main.loaded_transcript
        assert view is not None and view.transcript is not None and view.transcript.session_id == HAND_WRITTEN
        assert view.lines.blocks[view.lines.cursor].line >= hit.start_line


async def test_a_write_to_the_database_reloads_the_open_session(db_config: Config, agent_db: Path) -> None:
    from tui.messages import FilesChanged

    sys.path.insert(0, str(BENCH))
    try:
        from session_db_open import grow_session
    finally:
        sys.path.remove(str(BENCH))
    app = make_app(db_config)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        assert app.bridge.session_database() == agent_db
        entry = next(s for s in app.main.memory_tree.model.sessions if s.session_id == LIVE)
        assert entry.in_db
        app.main.open_session(entry.path)
        await settle(pilot)
        view = app.main.loaded_transcript
        assert view is not None and view.transcript is not None
        before = len(view.transcript.entries)
        grow_session(agent_db, before + 10)  # OpenClaw appends ten events
        app.main.post_message(FilesChanged(frozenset({agent_db})))  # what the watcher reports for the database
        await settle(pilot)
        assert view.transcript is not None and len(view.transcript.entries) == before + 10
        assert view.transcript.session_id == LIVE
