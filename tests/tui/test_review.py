"""Pilot tests of the Review screen: each action through its keys and dialogs, leaving the files exactly as expected."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Button, Input, OptionList, Static

from engine.config import Config
from engine.review.model import DismissStore, Finding, ReviewReport
from tests.tui.conftest import make_app, settle, tui_config
from tui.app import MemdeckApp
from tui.screens.dialogs import ChoiceScreen, PromptScreen
from tui.screens.review import PromoteScreen, ReviewScreen

MEMORY = """# MEMORY.md — long-term memory

## Preferences
- Prefers green tea over coffee in the morning.

## Team
- Weekly team standup is at 09:30 on Mondays.
- Ana Kovač is the SRE who owns Postgres.
"""

OCT = """# 2026-10-05

- 12:30 Lunch with Stefan at the canteen.
- Deployed HERON-112 to staging.
- Prefers green tea over coffee in the morning.
"""

NOV = """# 2026-11-12

- Weekly team standup moved to 10:00 on Mondays.
- I always want code reviews done in the morning, before 11:00.
- Fixed the flaky ETA test.
"""

FILES = {"MEMORY.md": MEMORY, "memory/2026-10-05.md": OCT, "memory/2026-11-12.md": NOV}


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Config:
    """A tiny workspace with one duplicate, one changed fact and one durable statement; keyword-only."""
    monkeypatch.setenv("MEMDECK_TODAY", "2026-12-01")
    ws = tmp_path / "ws"
    for rel, text in FILES.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text, encoding="utf-8")
    return tui_config(ws, provider="none")


def _read(config: Config, rel: str) -> str:
    return (config.workspace / rel).read_text(encoding="utf-8")


def _snapshot(config: Config) -> dict[str, bytes]:
    return {p.relative_to(config.workspace).as_posix(): p.read_bytes() for p in sorted(config.workspace.rglob("*.md"))}


async def wait_until(pilot: Pilot, condition: Callable[[], bool], what: str) -> None:
    """Let the app run until ``condition`` holds (a bound on a failure only; never a sleep)."""
    deadline = time.monotonic() + 60
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited 60 s for {what}; the screen is {pilot.app.screen!r}")
        await pilot.pause()


async def open_review(pilot: Pilot) -> ReviewScreen:
    await settle(pilot)
    await pilot.press("ctrl+g")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, ReviewScreen), "the review screen")
    screen = pilot.app.screen
    assert isinstance(screen, ReviewScreen)
    await wait_until(pilot, lambda: screen.loads > 0, "the review")
    assert screen.report is not None, "the review failed"
    await settle(pilot)
    return screen


async def pick(pilot: Pilot, screen: ReviewScreen, kind: str) -> Finding:
    """Highlight the first finding of ``kind`` in the list (pressing ``a`` first when only the less sure findings
    have one)."""
    if not any(f.kind == kind for f in screen.findings) and not screen.show_all:
        await show_all(pilot, screen)
    finding = next(f for f in screen.findings if f.kind == kind)
    listing = screen.query_one("#review-list", OptionList)
    listing.highlighted = next(i for i in range(listing.option_count) if listing.get_option_at_index(i).id == finding.id)
    await settle(pilot)
    assert screen.finding == finding
    return finding


async def show_all(pilot: Pilot, screen: ReviewScreen) -> None:
    """Press ``a``: every finding, also those under the confident score."""
    await pilot.press("a")
    await wait_until(pilot, lambda: screen.show_all, "every finding")
    await settle(pilot)


async def after_action(pilot: Pilot, screen: ReviewScreen) -> None:
    await wait_until(pilot, lambda: not screen.busy, "the action")
    await settle(pilot)


def _app(config: Config) -> MemdeckApp:
    return make_app(config)


async def test_promote_into_a_picked_section_then_undo_restores_bytes(config: Config) -> None:
    before = _snapshot(config)
    app = _app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.main.open_note("MEMORY.md")  # an open, unmodified editor of the file follows the review's write
        await settle(pilot)
        screen = await open_review(pilot)
        assert all(f.confident for f in screen.findings)
        await show_all(pilot, screen)
        assert {f.kind for f in screen.findings} == {"duplicate", "conflict", "promote"}
        finding = await pick(pilot, screen, "promote")
        assert finding.items[0].citation == "memory/2026-11-12.md#L4"
        await pilot.press("p")
        await wait_until(pilot, lambda: isinstance(app.screen, PromoteScreen), "the section picker")
        picker = app.screen
        assert isinstance(picker, PromoteScreen)
        sections = picker.query_one("#promote-sections", OptionList)
        labels = [str(sections.get_option_at_index(i).prompt) for i in range(sections.option_count)]
        assert labels[:2] == ["§ Preferences", "§ Team"]
        # The review's suggestion: no section reads like code reviews, so a new one named by topic.
        assert sections.highlighted == 2 and labels[2].startswith("＋ New section")
        sections.focus()
        sections.highlighted = 0  # the user picks § Preferences instead
        await pilot.pause()
        assert sections.highlighted == 0
        await pilot.press("enter")
        await after_action(pilot, screen)
        promoted = MEMORY.replace(
            "- Prefers green tea over coffee in the morning.\n",
            "- Prefers green tea over coffee in the morning.\n"
            "- I always want code reviews done in the morning, before 11:00. (from memory/2026-11-12.md#L4)\n")
        assert _read(config, "MEMORY.md") == promoted
        assert _read(config, "memory/2026-11-12.md") == NOV
        assert all(f.kind != "promote" for f in screen.findings)  # refreshed: it is in MEMORY.md now
        hits = app.bridge.search("code reviews morning", "keyword").results
        assert any(h.path == "MEMORY.md" for h in hits)  # searchable at once
        assert app.main.editor.area.text == promoted
        await pilot.press("u")
        await after_action(pilot, screen)
        assert _snapshot(config) == before
        assert app.main.editor.area.text == MEMORY
        await pick(pilot, screen, "promote")  # once more, into a new section of USER.md (which does not exist)
        await pilot.press("p")
        await wait_until(pilot, lambda: isinstance(app.screen, PromoteScreen), "the section picker")
        picker = app.screen
        assert isinstance(picker, PromoteScreen)
        picker.query_one("#promote-target", Button).press()
        await pilot.pause()
        picker.query_one("#promote-new", Input).value = "Working style"
        await pilot.pause()
        picker.query_one("#promote-ok", Button).press()
        await after_action(pilot, screen)
        assert _read(config, "USER.md") == ("# USER.md\n\n## Working style\n- I always want code reviews done in the "
                                            "morning, before 11:00. (from memory/2026-11-12.md#L4)\n")
        await pilot.press("u")
        await after_action(pilot, screen)
        assert _snapshot(config) == before


async def test_supersede_the_older_statement_and_undo_from_the_palette(config: Config) -> None:
    before = _snapshot(config)
    app = _app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_review(pilot)
        finding = await pick(pilot, screen, "conflict")
        assert finding.current == 1 and screen.item_index == 0  # the older one is selected first
        await pilot.press("right")  # the current one: supersede refuses it
        await pilot.press("s")
        await settle(pilot)
        assert _snapshot(config) == before
        await pilot.press("left", "s")
        await after_action(pilot, screen)
        assert _read(config, "MEMORY.md") == MEMORY.replace(
            "at 09:30 on Mondays.", "at 09:30 on Mondays. (superseded 2026-12-01 → memory/2026-11-12.md#L3)")
        assert _read(config, "memory/2026-11-12.md") == NOV
        await pilot.press("ctrl+p")
        await settle(pilot)
        await pilot.press(*"Undo review")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await wait_until(pilot, lambda: _snapshot(config) == before, "the undo")
        await settle(pilot)
        assert any(f.kind == "conflict" for f in screen.findings)  # back in the list


async def test_delete_copy_asks_with_cancel_focused(config: Config) -> None:
    app = _app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_review(pilot)
        finding = await pick(pilot, screen, "duplicate")
        assert [i.citation for i in finding.items] == ["MEMORY.md#L4", "memory/2026-10-05.md#L5"]
        assert screen.item_index == 1  # the later copy; MEMORY.md's is the one to keep
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the confirmation")
        assert app.focused is not None and app.focused.id == "choice-cancel"
        await pilot.press("enter")  # a reflex Enter cancels
        await settle(pilot)
        assert _read(config, "memory/2026-10-05.md") == OCT
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the confirmation")
        app.screen.query_one("#choice-delete", Button).press()
        await after_action(pilot, screen)
        assert _read(config, "memory/2026-10-05.md") == OCT.replace("- Prefers green tea over coffee in the morning.\n", "")
        assert _read(config, "MEMORY.md") == MEMORY
        await pilot.press("u")
        await after_action(pilot, screen)
        assert _read(config, "memory/2026-10-05.md") == OCT


async def test_merge_edits_one_line_and_deletes_the_other(config: Config) -> None:
    app = _app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_review(pilot)
        await pick(pilot, screen, "duplicate")
        await pilot.press("m")
        await wait_until(pilot, lambda: isinstance(app.screen, PromptScreen), "the merge prompt")
        box = app.screen.query_one("#prompt-input", Input)
        assert box.value == "Prefers green tea over coffee in the morning."
        box.value = "Prefers green tea (no sugar) over coffee in the morning."
        await pilot.press("enter")
        await after_action(pilot, screen)
        assert _read(config, "MEMORY.md") == MEMORY.replace("green tea over", "green tea (no sugar) over")
        assert _read(config, "memory/2026-10-05.md") == OCT.replace("- Prefers green tea over coffee in the morning.\n", "")
        assert all(f.kind != "duplicate" for f in screen.findings)
        await pilot.press("u")
        await after_action(pilot, screen)
        assert _read(config, "MEMORY.md") == MEMORY and _read(config, "memory/2026-10-05.md") == OCT


async def test_dismiss_hides_the_finding_until_undone(config: Config) -> None:
    before = _snapshot(config)
    app = _app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_review(pilot)
        finding = await pick(pilot, screen, "promote")
        await pilot.press("x")
        await after_action(pilot, screen)
        assert finding.id in DismissStore(config.home, config.workspace).ids()
        assert finding.id not in {f.id for f in screen.findings}
        assert screen.report is not None and screen.report.dismissed == 1
        await pilot.press("u")
        await after_action(pilot, screen)
        assert finding.id in {f.id for f in screen.findings}
        assert _snapshot(config) == before
        screen.show_report(ReviewReport((), files=3, statements=9, dismissed=2))  # the empty state says so
        summary = str(screen.query_one("#review-summary", Static).render())
        assert summary.startswith("Nothing to review") and "2 dismissed" in summary


async def test_a_file_changed_since_the_listing_is_refused_and_nothing_written(config: Config) -> None:
    app = _app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_review(pilot)
        await pick(pilot, screen, "conflict")
        changed = MEMORY.replace("09:30", "09:45")  # someone edits the line while the review is on screen
        (config.workspace / "MEMORY.md").write_text(changed, encoding="utf-8")
        before = _snapshot(config)
        await pilot.press("s")
        await after_action(pilot, screen)
        assert _snapshot(config) == before
        assert any("no longer says" in n.message for n in app._notifications)
        await pilot.press("u")  # nothing was recorded, so there is nothing to undo
        await after_action(pilot, screen)
        assert _snapshot(config) == before


async def test_a_shows_the_less_sure_findings_and_hides_them_again(config: Config,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.review import precision

    # Duplicates measured sure, the rest unmeasured (so hidden by default), whatever the calibration measured.
    table = {g: (20, 20) for g in ("duplicate:curated:high", "duplicate:curated:mid", "duplicate:curated:low",
                                   "duplicate:curated:contained", "duplicate:notes:high", "duplicate:notes:mid")}
    monkeypatch.setattr(precision, "_table",
                        lambda path, section="groups": table if section == "groups" else {})
    app = _app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_review(pilot)
        assert screen.report is not None
        everything = list(screen.report.findings)
        confident = [f for f in everything if f.confident]
        assert screen.findings == confident and len(confident) < len(everything)
        summary = str(screen.query_one("#review-summary", Static).render())
        assert f"{len(everything) - len(confident)} less sure hidden (a shows them)" in summary
        await show_all(pilot, screen)
        assert screen.findings == everything
        await pilot.press("a")
        await settle(pilot)
        assert not screen.show_all and screen.findings == confident
