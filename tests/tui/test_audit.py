"""Pilot tests of the Audit screen: open it, pick statements, append them to the days they were said, undo."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import OptionList, Static

from engine.config import Config, load_config
from tests.tui.conftest import make_app, settle
from tests.tui.test_review import wait_until
from tui.screens.audit import AuditScreen, statement_key
from tui.screens.review import PromoteScreen

DB = Path(__file__).resolve().parents[1] / "data" / "openclaw-agent.sqlite"
NOV12 = "# 2026-11-12\r\n\r\n- Fixed the digest helper's cron line.\r\n"


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Config:
    """A workspace with a MEMORY.md section and a CRLF daily note, over the repo's copy of OpenClaw's database."""
    monkeypatch.setenv("MEMDECK_TODAY", "2026-12-01")
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n\n## Preferences\n- Tea over coffee.\n", encoding="utf-8")
    (ws / "memory" / "2026-11-12.md").write_bytes(NOV12.encode("utf-8"))
    db = tmp_path / "openclaw-agent.sqlite"
    shutil.copy(DB, db)
    return load_config(workspace=ws, sessions_dir=db, home=tmp_path / "home",
                       overrides={"embedding": {"provider": "none"}})


async def open_audit(pilot: Pilot) -> AuditScreen:
    await settle(pilot)
    await pilot.press("ctrl+o")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, AuditScreen), "the audit screen")
    screen = pilot.app.screen
    assert isinstance(screen, AuditScreen)
    await wait_until(pilot, lambda: screen.loads > 0, "the audit")
    assert screen.report is not None, "the audit failed"
    await settle(pilot)
    return screen


async def highlight(pilot: Pilot, screen: AuditScreen, words: str) -> str:
    """Highlight the statement that says ``words``; its list id."""
    key = next(k for k, (_, st) in screen.statements.items() if words in st.text)
    listing = screen.query_one("#audit-list", OptionList)
    listing.highlighted = next(i for i in range(listing.option_count) if listing.get_option_at_index(i).id == key)
    await settle(pilot)
    return key


async def acted(pilot: Pilot, screen: AuditScreen, loads: int) -> None:
    await wait_until(pilot, lambda: not screen.busy and screen.loads > loads, "the action and the new audit")
    await settle(pilot)


async def test_pick_two_append_them_to_their_days_then_undo_restores(config: Config) -> None:
    mem = config.workspace / "memory"
    app = make_app(config)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_audit(pilot)
        listing = screen.query_one("#audit-list", OptionList)
        rows = [listing.get_option_at_index(i) for i in range(listing.option_count)]
        assert rows[0].disabled and str(rows[0].prompt).startswith("3f6c2a9e")  # newest session first
        uv = await highlight(pilot, screen, "uv for Python")
        detail = str(screen.query_one("#audit-what", Static).render())
        assert "sessions/main/9b2d4e71" in detail and "never flushed, never compacted" in detail
        await pilot.press("space")
        squash = await highlight(pilot, screen, "squash merges")
        await pilot.press("space")
        assert screen.picked == {uv, squash}
        assert str(listing.get_option(squash).prompt).startswith("[x] ")
        loads = screen.loads
        await pilot.press("a")
        await acted(pilot, screen, loads)
        nov12 = (mem / "2026-11-12.md").read_bytes().decode("utf-8")
        assert nov12.startswith(NOV12 + "\r\n## Recovered from sessions (audit 2026-12-01)\r\n\r\n- From now on always "
                                        "use uv for Python projects")
        assert "(from session 9b2d4e71 line 7)\r\n" in nov12
        assert (mem / "2026-11-20.md").read_text(encoding="utf-8").endswith("(from session 3f6c2a9e line 11)\n")
        assert uv not in screen.statements and squash not in screen.statements and not screen.picked
        loads = screen.loads
        await pilot.press("u")
        await acted(pilot, screen, loads)
        assert (mem / "2026-11-12.md").read_bytes() == NOV12.encode("utf-8")
        assert not (mem / "2026-11-20.md").exists()
        assert {uv, squash} <= set(screen.statements)


async def test_promote_one_statement_to_a_memory_section(config: Config) -> None:
    app = make_app(config)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_audit(pilot)
        key = await highlight(pilot, screen, "Telegram over email")
        _, statement = screen.statements[key]
        await pilot.press("p")
        await wait_until(pilot, lambda: isinstance(app.screen, PromoteScreen), "the promote dialog")
        picker = app.screen
        assert isinstance(picker, PromoteScreen)
        await pilot.pause()
        sections = picker.query_one("#promote-sections", OptionList)
        assert str(sections.get_option_at_index(0).prompt) == "§ Preferences" and sections.highlighted == 0
        loads = screen.loads
        picker.query_one("#promote-ok").press()  # type: ignore[attr-defined]
        await acted(pilot, screen, loads)
        assert (config.workspace / "MEMORY.md").read_text(encoding="utf-8") == (
            "# Memory\n\n## Preferences\n- Tea over coffee.\n"
            f"- {statement.text} (from session 5e1f0c3a line {statement.line})\n")
        assert statement_key(statement) not in screen.statements
        loads = screen.loads
        app.main.action_undo_review()  # ctrl+p → Undo review action, over the Audit screen
        await acted(pilot, screen, loads)
        assert (config.workspace / "MEMORY.md").read_text(encoding="utf-8") == \
            "# Memory\n\n## Preferences\n- Tea over coffee.\n"
        assert statement_key(statement) in screen.statements  # listed again
