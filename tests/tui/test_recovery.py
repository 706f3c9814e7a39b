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
from tui.screens.dialogs import ChoiceScreen, DiffScreen, PickScreen

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


# -- more inputs of round 2: what the offer makes of each recovery folder ------------------------
def _copies_of_many(config: Config) -> None:
    for i in range(100):  # more than one a second, of two notes: each a copy of its own
        save_recovery(config, REL if i % 2 else "MEMORY.md", f"text {i}\n", _stamp(config), "SIGTERM")


def _damaged(config: Config) -> None:
    save_recovery(config, REL, "mine\n", _stamp(config), "SIGTERM")
    folder = config.home / "recovery"
    (folder / "0-not-json.json").write_text("{not json", encoding="utf-8")
    (folder / "1-no-fields.json").write_text(json.dumps({"version": 1, "workspace": str(config.workspace.resolve())}),
                                             encoding="utf-8")
    (folder / "2-binary.json").write_bytes(b"\xff\xfe\x00garbage")
    save_recovery(config, "../../etc/passwd", "x\n", None, "SIGTERM")  # names no memory file: never recoverable


def _same_as_disk(config: Config) -> None:  # the signal came during the save: the note holds the text already
    save_recovery(config, REL, (config.workspace / REL).read_text(encoding="utf-8"), None, "SIGTERM")


def _note_deleted(config: Config) -> None:
    save_recovery(config, REL, "mine\n", _stamp(config), "SIGTERM")
    (config.workspace / REL).unlink()


def _other_workspace(config: Config) -> None:
    other = config.workspace.parent / "other"
    other.mkdir()
    save_recovery(tui_config(other), "MEMORY.md", "theirs\n", None, "SIGTERM")


@pytest.mark.parametrize(("prepare", "screen", "left", "warning"), [
    (_copies_of_many, "PickScreen", 100, ""),
    (_damaged, "ChoiceScreen", 5, "4 recovery copies could not be read"),  # all 5 left: 4 for the user to see
    (_same_as_disk, "MainScreen", 0, ""),
    (_note_deleted, "ChoiceScreen", 1, ""),
    (_other_workspace, "MainScreen", 1, ""),
], ids=["100-copies", "damaged", "same-as-disk", "note-deleted", "other-workspace"])
async def test_the_offer_for_each_recovery_folder(config: Config, prepare: object, screen: str, left: int,
                                                  warning: str) -> None:
    prepare(config)  # type: ignore[operator]
    app = make_app(config)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle_offer(pilot)
        assert type(app.screen).__name__ == screen
        toasts = [n.message for n in app._notifications]
        assert any(warning in t for t in toasts) if warning else not toasts, toasts
        if isinstance(app.screen, PickScreen):
            buttons = [b.region for b in app.screen.query("Button")]
            assert all(r.bottom <= 30 for r in buttons), "the list never pushes the buttons off a 30-line terminal"
    folder = config.home / "recovery"
    assert len(list(folder.glob("*.json"))) == left


async def settle_offer(pilot: object) -> None:
    """Until the offer worker waits on a dialog, or is done."""
    app = pilot.app  # type: ignore[attr-defined]
    await wait_until(pilot, lambda: isinstance(app.screen, (ChoiceScreen, PickScreen)) or app.main.recovery_settled,
                     "the recovery offer")
    await pilot.pause()  # type: ignore[attr-defined]


async def test_several_copies_are_one_list_later_keeps_one_discard_all_the_rest(config: Config) -> None:
    _copies_of_many(config)
    app = make_app(config)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, PickScreen), "the list of copies")
        assert len(app.screen.items) == 100  # type: ignore[attr-defined]
        picked = app.screen.items[1]  # type: ignore[attr-defined]
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the dialog of the picked copy")
        await pilot.press("escape")  # later: this one stays
        await wait_until(pilot, lambda: isinstance(app.screen, PickScreen), "the list again")
        assert len(app.screen.items) == 99  # type: ignore[attr-defined]
        await pilot.click("#pick-discard-all")
        await wait_until(pilot, lambda: not isinstance(app.screen, PickScreen), "the list closed")
        # The discards run after the list closes; leaving the app earlier would cancel them (a busy machine).
        await wait_until(pilot, lambda: app.main.recovery_settled, "the discards done")
    (kept,) = list_recovery(config)
    assert picked.startswith(kept.rel)


def _draft(app: object) -> str:
    from tui.widgets.markdown_area import MarkdownArea

    areas = app.screen.query(MarkdownArea)  # type: ignore[attr-defined]
    return areas.first().text if areas else ""


async def test_a_signal_keeps_an_edited_flush_draft_as_its_note_with_the_draft_appended(config: Config) -> None:
    from tui.screens.flush import FlushScreen
    from tui.widgets.markdown_area import MarkdownArea

    disk = (config.workspace / REL).read_text(encoding="utf-8")
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.push_screen(FlushScreen("Flush", "info", "## 10:00 — Memory flush\n\n- drafted\n", target=REL,
                                    heading="# 2026-10-02"))
        await wait_until(pilot, lambda: isinstance(app.screen, FlushScreen) and "drafted" in _draft(app),
                         "the flush draft")
        area = app.screen.query_one(MarkdownArea)
        area.insert("- MY LONG EDIT\n", area.document.end)
        app.stop_on_signal(signal.SIGTERM)
        await pilot.pause()
    (copy,) = list_recovery(config)
    assert copy.rel == REL and copy.original == _stamp(config) and "flush draft" in copy.reason
    assert copy.text == disk.rstrip("\n") + "\n\n## 10:00 — Memory flush\n\n- drafted\n- MY LONG EDIT\n"
    assert (config.workspace / REL).read_text(encoding="utf-8") == disk, "nothing written"


async def test_an_unedited_flush_draft_is_not_kept(config: Config) -> None:
    from tui.screens.flush import FlushScreen

    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.push_screen(FlushScreen("Flush", "info", "- drafted\n", target="memory/2030-01-01.md", heading="# x"))
        await wait_until(pilot, lambda: isinstance(app.screen, FlushScreen) and "drafted" in _draft(app),
                         "the flush draft")
        app.stop_on_signal(signal.SIGTERM)
        await pilot.pause()
    assert list_recovery(config) == [] and app.return_code == 143
