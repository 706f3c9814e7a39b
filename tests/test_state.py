"""memdeck's UI state file: round trip, which value wins, corruption tolerated, atomic and private writes."""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path

import pytest

from engine.config import Config, load_config
from engine.state import (
    MAX_JSON_STATE_BYTES,
    STATE_FILE,
    StateError,
    UiState,
    load_state,
    read_json_state,
    save_state,
    state_path,
)


def make_config(tmp_path: Path, toml: str = "") -> Config:
    cfg_file = tmp_path / "config.toml"
    cfg_file.write_text(toml, encoding="utf-8")
    return load_config(workspace=tmp_path / "ws", home=tmp_path / "home", config_path=cfg_file)


def test_nothing_saved_means_nothing_chosen(tmp_path: Path) -> None:
    state = load_state(make_config(tmp_path))
    assert state == UiState() and state.warning is None
    assert not (tmp_path / "home" / STATE_FILE).exists()


def test_round_trip(tmp_path: Path) -> None:
    cfg = make_config(tmp_path)
    assert save_state(cfg, theme="nord", search_mode="keyword") == UiState("nord", "keyword")
    assert load_state(cfg) == UiState(theme="nord", search_mode="keyword")
    save_state(cfg, search_mode="vector")  # one setting changes, the other stays
    assert load_state(cfg) == UiState(theme="nord", search_mode="vector")
    save_state(cfg, theme=None)  # forgotten
    assert load_state(cfg) == UiState(search_mode="vector")
    assert state_path(cfg) == tmp_path / "home" / STATE_FILE


def test_saving_never_touches_the_config_file(tmp_path: Path) -> None:
    toml = '# my settings\n[tui]\ntheme = "memdeck-light"  # light in the day\n'
    cfg = make_config(tmp_path, toml)
    save_state(cfg, theme="nord")
    assert (tmp_path / "config.toml").read_text(encoding="utf-8") == toml


def test_which_value_wins(tmp_path: Path) -> None:
    # The config's value is the default until a choice is made in the UI.
    cfg = make_config(tmp_path, '[tui]\ntheme = "memdeck-light"\n')
    assert load_state(cfg).theme == "memdeck-light"
    # A UI choice wins over the config's value it was made over (a restart keeps it) …
    save_state(cfg, theme="nord")
    assert load_state(make_config(tmp_path, '[tui]\ntheme = "memdeck-light"\n')).theme == "nord"
    # … until the user edits the config: then the edit wins.
    edited = make_config(tmp_path, '[tui]\ntheme = "gruvbox"\n')
    assert load_state(edited).theme == "gruvbox"
    # With no theme in the config at all, the UI choice stands (and the mode falls back to the config's).
    plain = make_config(tmp_path, '[tui]\nsearch_mode = "keyword"\n')
    assert load_state(plain) == UiState(theme="nord", search_mode="keyword")


def test_a_choice_made_without_a_config_value_yields_to_one_added_later(tmp_path: Path) -> None:
    save_state(make_config(tmp_path), search_mode="vector")
    assert load_state(make_config(tmp_path, '[tui]\nsearch_mode = "hybrid"\n')).search_mode == "hybrid"


@pytest.mark.parametrize("content", [
    b"",
    b"\xff\xfe\x00garbage",
    b"{not json",
    b"[1, 2, 3]",
    b'{"version": 99, "choices": {}}',
    b'{"version": 1, "choices": [1]}',
    b"[" * 50_000,
    b'{"version": 1, "choices": {}}' + b" " * (70 * 1024),
])
def test_a_corrupt_file_means_the_defaults_and_a_warning(tmp_path: Path, content: bytes,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    cfg = make_config(tmp_path, '[tui]\nsearch_mode = "keyword"\n')
    state_path(cfg).parent.mkdir(parents=True)
    state_path(cfg).write_bytes(content)
    with caplog.at_level(logging.WARNING, logger="engine.state"):
        state = load_state(cfg)
    assert state == UiState(search_mode="keyword")  # the config's value, nothing from the file
    assert state.warning is not None and str(state_path(cfg)) in state.warning
    assert any(str(state_path(cfg)) in r.getMessage() for r in caplog.records)
    save_state(cfg, theme="nord")  # and the next save replaces the broken file
    assert load_state(cfg) == UiState(theme="nord", search_mode="keyword") and load_state(cfg).warning is None


def test_bad_entries_are_skipped_and_the_good_ones_kept(tmp_path: Path) -> None:
    cfg = make_config(tmp_path)
    state_path(cfg).parent.mkdir(parents=True)
    state_path(cfg).write_text(json.dumps({"version": 1, "choices": {
        "theme": {"value": "nord", "config": None},
        "search_mode": {"value": "fuzzy", "config": None},  # not a search mode
        "colour": {"value": "red"},
    }}), encoding="utf-8")
    state = load_state(cfg)
    assert state == UiState(theme="nord")
    assert state.warning is not None and "colour" in state.warning and "search_mode" in state.warning


def test_an_unreadable_state_file_is_a_warning(tmp_path: Path) -> None:
    cfg = make_config(tmp_path)
    state_path(cfg).mkdir(parents=True)  # a folder where the file should be
    state = load_state(cfg)
    assert state == UiState() and state.warning is not None and "cannot read" in state.warning


def test_an_unwritable_data_dir_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the data dir should be\n")
    cfg = load_config(workspace=tmp_path, home=blocker / "home", config_path=tmp_path / "none.toml")
    with pytest.raises(StateError, match=r"cannot save memdeck's UI state to .*not-a-folder/home/ui-state\.json"):
        save_state(cfg, theme="nord")
    assert load_state(cfg) == UiState()  # and reading still works


def test_values_are_checked_with_the_tui_rules(tmp_path: Path) -> None:
    cfg = make_config(tmp_path)
    with pytest.raises(StateError, match="search_mode: must be one of hybrid, keyword, vector"):
        save_state(cfg, search_mode="fuzzy")
    with pytest.raises(StateError, match="control"):
        save_state(cfg, theme="evil\x1b]52;c;aGk=\x07")
    with pytest.raises(TypeError, match="colour"):
        save_state(cfg, colour="red")
    assert not state_path(cfg).exists()


def test_writes_are_atomic_and_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = make_config(tmp_path)
    save_state(cfg, theme="nord")
    before = state_path(cfg).read_bytes()
    assert stat.S_IMODE(state_path(cfg).stat().st_mode) == 0o600
    assert stat.S_IMODE(state_path(cfg).parent.stat().st_mode) == 0o700

    def crash(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(StateError, match="No space left on device"):
        save_state(cfg, theme="gruvbox")
    monkeypatch.undo()
    assert state_path(cfg).read_bytes() == before  # the old file, whole
    assert sorted(p.name for p in state_path(cfg).parent.iterdir()) == [STATE_FILE]  # no temp file left
    assert load_state(cfg).theme == "nord"


# -- the one reader and writer of memdeck's small JSON state files ------------------------------------------------
def test_every_state_file_is_written_private_through_the_one_writer(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from engine.memory.append import record_flush
    from engine.review.model import DismissStore
    from engine.review.undo import JournalEntry, ReviewJournal

    home = tmp_path / "home"
    DismissStore(home, tmp_path).dismiss("dup:1", "2026-11-27T10:00:00Z")
    ReviewJournal(home, tmp_path).push(JournalEntry("dismiss", "dismissed one", "2026-11-27T10:00:00Z", "dup:1"))
    record_flush(home / "flush-state.json", "abc", datetime(2026, 11, 27, 10, 0, tzinfo=UTC))
    save_state(make_config(tmp_path), theme="nord")
    for name in ("review-dismissed.json", "review-journal.json", "flush-state.json", "ui-state.json"):
        assert stat.S_IMODE((home / name).stat().st_mode) == 0o600, name
        assert (home / name).read_text(encoding="utf-8").startswith("{\n \""), name  # one format: indent 1
    assert DismissStore(home, tmp_path).ids() == {"dup:1"}
    assert [e.finding_id for e in ReviewJournal(home, tmp_path).entries()] == ["dup:1"]


def test_a_state_file_too_big_or_not_json_is_ignored_with_a_warning(tmp_path: Path,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    from engine.memory.append import record_flush
    from engine.review.model import DismissStore
    from engine.sessions.sources import read_flush_state

    flush = tmp_path / "flush-state.json"
    flush.write_bytes(b" " * (MAX_JSON_STATE_BYTES + 1))  # never read whole (a device there would never end)
    with caplog.at_level(logging.WARNING, logger="engine.state"):
        assert read_flush_state(flush) == {}
        assert read_json_state(flush, "x").document is None
    assert any(f"memdeck's flush record {flush}: larger than 1 MB; ignored" in r.getMessage() for r in caplog.records)
    from datetime import UTC, datetime

    record_flush(flush, "abc", datetime(2026, 11, 27, tzinfo=UTC))  # the bad record is kept aside, not lost
    assert (tmp_path / "flush-state.json.corrupt").stat().st_size == MAX_JSON_STATE_BYTES + 1
    assert set(read_flush_state(flush)) == {"abc"}
    (tmp_path / "review-dismissed.json").write_text("{not json", encoding="utf-8")
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="engine.state"):
        assert DismissStore(tmp_path, tmp_path).ids() == frozenset()
    assert [r.getMessage() for r in caplog.records] == [
        f"memdeck's review dismissals {tmp_path / 'review-dismissed.json'}: not valid JSON; ignored"]
