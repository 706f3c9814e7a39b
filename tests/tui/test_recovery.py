"""Recovery copies: the engine's store, the app keeping the editor's text on a signal, and the offer on next start."""

from __future__ import annotations

import json
import signal
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.api import RecoveryError, discard_recovery, list_recovery, recovery_disk_state, save_recovery
from engine.config import Config
from engine.textio import DiskStamp, read_stamp
from tests.tui.conftest import make_app, settle, tui_config
from tests.tui.test_app import wait_until
from tui.screens.dialogs import ChoiceScreen, DiffScreen

REL = "memory/2026-10-02.md"
TITLE = "Recover unsaved changes?"


def _stamp(config: Config, rel: str = REL) -> DiskStamp | None:
    return read_stamp(config.workspace / rel)


# -- the engine's store ------------------------------------------------------------------------
def test_a_copy_is_private_atomic_and_listed_for_its_workspace_only(config: Config, tmp_path: Path) -> None:
    path = save_recovery(config, REL, "mine\n", _stamp(config), "SIGTERM")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")], "no temp file left behind"
    record = json.loads(path.read_text(encoding="ascii"))
    assert record["rel"] == REL and record["text"] == "mine\n" and record["reason"] == "SIGTERM"
    original = _stamp(config)
    assert original is not None and record["original"]["sha256"] == original.digest
    assert record["original"]["mtime_ns"] == original.mtime_ns
    (copy,) = list_recovery(config)
    assert (copy.rel, copy.text, copy.original, copy.path) == (REL, "mine\n", original, path)
    other = tmp_path / "other"
    other.mkdir()
    assert list_recovery(tui_config(other)) == [], "another workspace's copies are not offered here"
    second = save_recovery(config, REL, "again\n", original, "SIGHUP")
    assert second != path and len(list_recovery(config)) == 2, "a copy never replaces another"
    discard_recovery(config, copy.id)
    assert [c.text for c in list_recovery(config)] == ["again\n"]
    discard_recovery(config, copy.id)  # already gone: fine


@pytest.mark.parametrize("bad", ["", "../x", "a/b", ".hidden"])
def test_discard_refuses_what_is_not_a_copy_name(config: Config, bad: str) -> None:
    with pytest.raises(RecoveryError):
        discard_recovery(config, bad)


def test_disk_state_tells_whether_the_note_changed(config: Config) -> None:
    copy_of = {rel: save_recovery(config, rel, "x", _stamp(config, rel), "SIGTERM")
               for rel in (REL, "MEMORY.md", "memory/new.md")}
    assert copy_of
    (config.workspace / "MEMORY.md").write_text("changed by the agent\n", encoding="utf-8")
    (config.workspace / REL).touch()  # a new mtime, the same bytes: unchanged
    states = {c.rel: recovery_disk_state(config, c) for c in list_recovery(config)}
    assert states == {REL: "unchanged", "MEMORY.md": "changed", "memory/new.md": "new"}
    (config.workspace / REL).unlink()
    assert {c.rel: recovery_disk_state(config, c) for c in list_recovery(config)}[REL] == "missing"


def test_an_unreadable_copy_is_skipped_and_kept(config: Config) -> None:
    save_recovery(config, REL, "good", None, "SIGTERM")
    broken = config.home / "recovery" / "0-broken.json"
    broken.write_text("{not json", encoding="utf-8")
    assert [c.text for c in list_recovery(config)] == ["good"]
    assert broken.exists()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.characters(codec=None), max_size=200))
def test_any_buffer_text_comes_back_unchanged(config: Config, text: str) -> None:
    """Whatever the editor holds — lone surrogates, NUL, U+2028, CRLF — is kept and read back exactly."""
    path = save_recovery(config, REL, text, None, "SIGTERM")
    assert [c.text for c in list_recovery(config) if c.path == path] == [text]
    path.unlink()


# -- the app on a signal -----------------------------------------------------------------------
async def test_a_signal_keeps_the_editors_text_and_exits_128_plus_n(config: Config) -> None:
    """SIGINT as SIGTERM and SIGHUP (tests/tui/test_signals.py runs all three on a real terminal)."""
    sig, code = signal.SIGINT, 130
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.main.open_note(REL)
        await settle(pilot)
        app.main.editor.area.insert("UNSAVED LINE\n", (0, 0))
        mine = app.main.editor.area.text
        app.stop_on_signal(sig)
        await pilot.pause()
    assert app.return_code == code and app.stopped_by == sig
    (copy,) = list_recovery(config)
    assert (copy.rel, copy.text, copy.reason, copy.original) == (REL, mine, sig.name, _stamp(config))
    assert any("kept in" in line and str(copy.path) in line for line in app.rescued)


async def test_a_signal_with_nothing_unsaved_keeps_nothing(config: Config) -> None:
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.main.open_note(REL)
        await settle(pilot)
        app.stop_on_signal(signal.SIGTERM)
        await pilot.pause()
    assert app.return_code == 143
    assert list_recovery(config) == []


# -- the offer on the next start ---------------------------------------------------------------
def _dialog_message(app: object) -> str:
    screen = app.screen  # type: ignore[attr-defined]
    assert isinstance(screen, ChoiceScreen) and screen.title_text == TITLE
    return screen.message


@pytest.mark.parametrize("changed", [False, True], ids=["unchanged", "changed-on-disk"])
async def test_the_next_start_recovers_into_the_editor_as_unsaved_changes(config: Config, changed: bool) -> None:
    target = config.workspace / REL
    disk_before = target.read_text(encoding="utf-8")
    mine = "RECOVERED LINE\n" + disk_before
    save_recovery(config, REL, mine, _stamp(config), "SIGTERM")
    if changed:
        target.write_text(disk_before + "- the agent appended this\n", encoding="utf-8")
    disk = target.read_text(encoding="utf-8")
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the recovery offer")
        message = _dialog_message(app)
        assert REL in message and "SIGTERM" in message
        assert ("CHANGED on disk" in message) == changed
        assert ("not changed on disk" in message) == (not changed)
        await pilot.click("#choice-recover")
        await settle(pilot)
        editor = app.main.editor
        assert editor.rel == REL and editor.area.text == mine and editor.modified
        assert target.read_text(encoding="utf-8") == disk, "nothing is written until the user saves"
        assert list_recovery(config) == [], "the copy is used up once its text is in the editor"


async def test_the_offer_can_discard(config: Config) -> None:
    save_recovery(config, REL, "mine\n", _stamp(config), "SIGHUP")
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the recovery offer")
        await pilot.click("#choice-discard")
        await settle(pilot)
        assert app.main.loaded_editor is None or app.main.editor.rel is None
    assert list_recovery(config) == []


async def test_the_offer_shows_the_diff_then_asks_again_and_later_keeps_it(config: Config) -> None:
    save_recovery(config, REL, "RECOVERED LINE\n", _stamp(config), "SIGINT")
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the recovery offer")
        await pilot.click("#choice-diff")
        await wait_until(pilot, lambda: isinstance(app.screen, DiffScreen), "the diff")
        assert "+RECOVERED LINE" in app.screen.diff  # type: ignore[attr-defined]
        await pilot.click("#diff-close")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the offer again")
        await pilot.click("#choice-later")
        await settle(pilot)
    assert len(list_recovery(config)) == 1
