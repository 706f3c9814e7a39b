"""Issue 16, the TUI part: failures never kill the app, big files never stall it, the config is never rewritten,
deletes and renames say exactly what they do and can be undone, copies are kept out of memory, names and
transcripts never send escape sequences to the terminal, and narrow screens keep every control usable."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Button, Input

from engine.api import state_path
from engine.config import Config
from tests.tui.conftest import make_app, settle, tui_config
from tui.app import MemdeckApp
from tui.screens.dialogs import ChoiceScreen, ConfirmNameScreen, PromptScreen

SESSION = "9b2d4e71"
CONFLICT_CHOICES = [("reload", "Reload from disk", "warning"), ("copy", "Keep mine as a copy", "primary"),
                    ("diff", "Show diff", "default"), ("cancel", "Cancel", "default")]


async def _until(pilot: Pilot, done: Callable[[], bool], rounds: int = 100) -> None:
    for _ in range(rounds):
        if done():
            return
        await pilot.pause()
    assert done(), "the app never got there"


def _messages(app: MemdeckApp) -> list[str]:
    return [n.message for n in app._notifications]


def _session(config: Config, prefix: str = SESSION) -> Path:
    return next((config.workspace / "sessions").glob(f"{prefix}*.jsonl"))


# -- 1: no worker exception kills the app or loses the editor's text ----------------------------------------
async def test_a_failing_bridge_call_in_a_worker_is_a_notification_and_the_editor_keeps_its_text(
        config: Config, monkeypatch: pytest.MonkeyPatch, allow_worker_errors: None) -> None:
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.main.open_note("MEMORY.md")
        await settle(pilot)
        app.main.editor.area.insert("an unsaved thought\n", (0, 0))
        text = app.main.editor.area.text

        def broken_llm(transcript: object) -> object:
            raise ValueError("[llm] timeout must be greater than 0, got -5")

        monkeypatch.setattr(app.bridge, "draft_flush", broken_llm)
        app.main.open_session(_session(config))
        await settle(pilot)
        app.main.transcript.lines.focus()
        await pilot.pause()
        await pilot.press("f")
        await settle(pilot)
        assert app.is_running and app.return_code is None
        assert [type(e) for e in app.worker_errors] == [ValueError]
        assert any("[llm] timeout must be greater than 0" in m for m in _messages(app)), "shown as typed, no markup"
        assert app.main.editor.area.text == text and app.main.editor.modified
        await pilot.press("ctrl+f", *"heron")  # and it still answers
        await settle(pilot)
        assert app.main.search.query_input.value == "heron"


# -- 3: a big file opens in the lazy read-only viewer, never the editor ------------------------------------
def _big_file(workspace: Path, megabytes: int = 30) -> Path:
    line = "- the heron migrates at dawn; notes on the marsh, the reeds and the weather " * 2 + "\n"
    count = megabytes * 1024 * 1024 // len(line) + 1
    path = workspace / "memory" / "big30.md"
    path.write_text("# Big\n" + line * count, encoding="utf-8")
    return path


async def test_a_30_mb_file_opens_in_the_read_only_viewer_and_the_app_keeps_answering(config: Config) -> None:
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        path = _big_file(config.workspace)  # after the first sync: the test is about opening, not indexing
        app.main.open_note("memory/big30.md", (1000, 1002))  # as a search hit opens it
        await settle(pilot)
        view = app.main.loaded_big_file
        assert view is not None and app.main.centre.current == "bigfile"
        assert view.banner_text == f"large file: read-only here, {path.stat().st_size / 2**20:.1f} MB"
        assert view.banner_text.startswith("large file: read-only here, 30.0 MB")
        assert app.main.loaded_editor is None or app.main.loaded_editor.rel is None, "the editor is not used"
        lines = view.lines
        assert lines.index.done and lines.index.lines == path.read_bytes().count(b"\n")
        assert lines.selected == (1000, 1002) and int(lines.scroll_y) == 997
        assert lines.render_line(2).text.lstrip().startswith("1,000 │ - the heron migrates")
        assert app.focused is lines
        await pilot.press("pagedown")
        await pilot.pause()
        assert int(lines.scroll_y) > 997, "the viewer answers keys"
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert app.main.search.mode == "keyword", "and so does the app"


async def test_a_single_long_line_opens_in_the_viewer_cut_for_display(config: Config) -> None:
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        (config.workspace / "memory" / "one-line.md").write_text("x" * 200_000, encoding="utf-8")
        app.main.open_note("memory/one-line.md")
        await settle(pilot)
        view = app.main.loaded_big_file
        assert view is not None and app.main.centre.current == "bigfile"
        assert view.banner_text == "a line of 200,000 characters: read-only here, 195.3 KB"
        assert view.lines.index.lines == 1
        text = view.lines._text(0)
        assert text.startswith("x" * 100) and "line cut for display" in text and len(text) < 5000


# -- 4: the theme is remembered in the state file; config.toml is never rewritten ---------------------------
async def test_switching_theme_leaves_the_config_file_byte_identical_and_is_remembered(demo_workspace: Path) -> None:
    config = tui_config(demo_workspace)
    config.config_path.parent.mkdir(parents=True, exist_ok=True)
    original = (b"# my precious comment\n[tui]\nsearch_mode = \"hybrid\"  # inline comment\n\n"
                b"[search]\nmax_results = 12\n")
    config.config_path.write_bytes(original)
    config = tui_config(demo_workspace)
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.theme = "memdeck-light"
        await pilot.press("ctrl+t")  # the search mode is remembered the same way
        await settle(pilot)
        mode = app.main.search.mode
    assert config.config_path.read_bytes() == original
    choices = json.loads(state_path(config).read_text(encoding="utf-8"))["choices"]
    assert choices["theme"]["value"] == "memdeck-light" and choices["search_mode"]["value"] == mode
    again = make_app(tui_config(demo_workspace))
    assert again.theme == "memdeck-light" and again.ui_state.search_mode == mode


# -- 5: delete and rename: Cancel by default, typed names, the exact result, a trash and undo ---------------
async def _tree_key(pilot: Pilot, rel: str, key: str) -> None:
    app = pilot.app
    assert isinstance(app, MemdeckApp)
    assert app.main.memory_tree.select_note(rel)
    app.main.memory_tree.focus()
    await pilot.pause()
    await pilot.press(key)
    await pilot.pause()


async def test_delete_opens_with_cancel_focused_and_goes_to_the_trash_with_undo(config: Config) -> None:
    rel = "memory/2026-10-02.md"
    target = config.workspace / rel
    original = target.read_bytes()
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await _tree_key(pilot, rel, "d")
        await _until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        assert app.focused is not None and app.focused.id == "choice-cancel"
        assert "trash" in app.screen.message and "cannot be undone" not in app.screen.message
        await pilot.press("enter")  # one reflexive Enter: nothing happens
        await settle(pilot)
        assert target.read_bytes() == original
        await _tree_key(pilot, rel, "d")
        await _until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        await pilot.click("#choice-delete")
        await settle(pilot)
        assert not target.exists()
        trashed = list((config.home / "trash").glob(f"*/{rel}"))
        assert len(trashed) == 1 and trashed[0].read_bytes() == original
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Undo delete")
        for _ in range(50):
            await pilot.pause()
            if app.screen.query("CommandList"):
                break
        await pilot.press("enter")
        await settle(pilot)
        assert target.read_bytes() == original
        assert app.main.editor.rel == rel
        assert any(m == f"Restored {rel}" for m in _messages(app))


async def test_deleting_memory_md_needs_its_name_typed(config: Config) -> None:
    target = config.workspace / "MEMORY.md"
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await _tree_key(pilot, "MEMORY.md", "d")
        await _until(pilot, lambda: isinstance(app.screen, ConfirmNameScreen))
        assert isinstance(app.focused, Input)
        assert app.screen.query_one("#confirm-ok", Button).disabled
        await pilot.press("enter", *"memory.md", "enter")  # Enter alone, then the wrong case: refused
        await pilot.pause()
        assert isinstance(app.screen, ConfirmNameScreen) and target.is_file()
        app.screen.query_one("#confirm-input", Input).value = ""
        await pilot.press(*"MEMORY.md", "enter")
        await settle(pilot)
        assert not target.exists()
        assert list((config.home / "trash").glob("*/MEMORY.md"))


async def test_rename_shows_the_exact_result_and_keeps_root_files_at_the_root(config: Config) -> None:
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await _tree_key(pilot, "MEMORY.md", "r")
        await _until(pilot, lambda: isinstance(app.screen, PromptScreen))
        prompt = app.screen
        assert isinstance(app.focused, Input) and app.focused.value == "MEMORY.md"
        assert ".md" in prompt.message and "memory/" in prompt.message, "the rules are shown up front"
        app.focused.value = ""
        await pilot.press(*"notes.txt", "enter")
        await _until(pilot, lambda: isinstance(app.screen, PromptScreen) and app.screen is not prompt)
        assert "type memory/notes.txt" in app.screen.message, "a root file is never moved into memory/ silently"
        assert isinstance(app.focused, Input)
        app.focused.value = ""
        await pilot.press(*"memory/notes.txt", "enter")
        await _until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        assert app.screen.message.startswith("Rename MEMORY.md → memory/notes.txt.md?")
        assert ".md added" in app.screen.message and "moves from the workspace root to memory/" in app.screen.message
        assert app.focused is not None and app.focused.id == "choice-cancel"
        await pilot.click("#choice-rename")
        await settle(pilot)
    assert (config.workspace / "memory" / "notes.txt.md").is_file() and not (config.workspace / "MEMORY.md").exists()


# -- 6: a conflict copy goes to the data dir and the banner says where --------------------------------------
async def test_keep_mine_writes_the_copy_outside_memory_and_says_where(config: Config) -> None:
    rel = "memory/2026-10-02.md"
    target = config.workspace / rel
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.main.open_note(rel)
        await settle(pilot)
        app.main.editor.area.insert("MINE\n", (0, 0))
        target.write_text("theirs\n", encoding="utf-8")
        app.main.editor.save_in_background()
        await _until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        assert app.focused is not None and app.focused.id == "choice-cancel", "never a reload over edits by reflex"
        await pilot.click("#choice-copy")
        await settle(pilot)
        copies = list((config.home / "conflict-copies" / "memory").glob("2026-10-02.mine-*.md"))
        assert len(copies) == 1 and copies[0].read_text(encoding="utf-8").startswith("MINE\n")
        assert not list((config.workspace / "memory").rglob("*.mine-*"))
        assert str(copies[0]) in app.main.editor.query_one("#editor-banner").render().plain  # type: ignore[union-attr]
        hits = app.bridge.search("MINE", "keyword").results
        assert not any(".mine-" in h.path for h in hits)


# -- 10: the name field has the focus in both name dialogs --------------------------------------------------
@pytest.mark.parametrize("action", ["new_topic", "rename"])
async def test_name_dialogs_open_with_the_name_field_focused(config: Config, action: str) -> None:
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        if action == "rename":
            assert app.main.memory_tree.select_note("memory/2026-10-02.md")
            app.main.memory_tree.focus()
            await pilot.pause()
        app.run_worker(app.main.run_action(action))
        await _until(pilot, lambda: isinstance(app.screen, PromptScreen))
        await pilot.pause()
        assert isinstance(app.focused, Input) and app.focused.id == "prompt-input"
        await pilot.press("escape")
        await settle(pilot)


# -- 12: no control character from names or transcripts reaches the terminal ------------------------------
OSC = "\x1b]0;PWNED\x07"


def _no_controls(text: str) -> bool:
    return not any(ch in text for ch in ("\x1b", "\x07", "\x9b", "\u202e"))


async def test_names_and_transcripts_with_escape_sequences_are_shown_inert(config: Config) -> None:
    memory = config.workspace / "memory"
    (memory / f"evil{OSC}.md").write_text("# evil name\n", encoding="utf-8")
    (memory / "evil-text.md").write_text(f"# Evil text\n\nsets the title {OSC} and \x9b31m colours\n",
                                         encoding="utf-8")
    session = config.workspace / "sessions" / "0badc0de-0000-4000-8000-000000000000.jsonl"
    lines = _session(config).read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["id"] = session.stem
    user = {"type": "message", "id": "e5c0ffee", "parentId": None, "timestamp": "2026-11-12T19:41:28.402Z",
            "message": {"role": "user", "content": [{"type": "text", "text": f"hello {OSC} there"}],
                        "timestamp": 1794512488402}}
    session.write_text(json.dumps(header) + "\n" + json.dumps(user) + "\n", encoding="utf-8")
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        tree = app.main.memory_tree
        labels = [str(node.label) for node in tree._tree_nodes.values()]
        assert all(_no_controls(label) for label in labels), labels
        app.main.open_note(f"memory/evil{OSC}.md")  # refused by the path rules: the notification names it
        await settle(pilot)
        app.main.open_note("memory/evil-text.md")
        await settle(pilot)
        editor = app.main.editor
        assert editor.read_only and "\\x1b]0;PWNED" in editor.area.text
        assert all(_no_controls(editor.area.render_line(y).text) for y in range(6))
        app.main.open_session(session)
        await settle(pilot)
        view = app.main.transcript
        rows = [view.lines.render_line(y).text for y in range(view.lines.size.height)]
        assert any("\\x1b]0;PWNED\\x07" in row for row in rows), rows
        assert all(_no_controls(row) for row in rows)
        assert all(_no_controls(m) for m in _messages(app)) and any("evil\\x1b" in m for m in _messages(app))
        assert _no_controls(app.export_screenshot())


# -- 14: narrow screens: the query box and every button label stay whole -----------------------------------
async def test_at_60_by_15_the_search_box_keeps_its_width(config: Config) -> None:
    app = make_app(config)
    async with app.run_test(size=(60, 15)) as pilot:
        await settle(pilot)
        box = app.main.search.query_input
        assert box.region.width >= 20 and box.content_region.width >= 16
        await pilot.press(*"pgbouncer pool")
        await settle(pilot)
        assert box.value == "pgbouncer pool"


@pytest.mark.parametrize("size", [(160, 40), (120, 36), (60, 15)])
async def test_the_conflict_dialog_shows_every_button_whole(config: Config, size: tuple[int, int]) -> None:
    app = make_app(config)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        app.push_screen(ChoiceScreen("File changed on disk", "memory/2026-10-02.md changed since you opened it. "
                                     "Nothing has been overwritten.", CONFLICT_CHOICES))
        await _until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        await pilot.pause()
        screen = app.screen.region
        dialog = app.screen.query_one(".dialog").region
        assert screen.contains_region(dialog)
        for ident, label, _ in CONFLICT_CHOICES:
            button = app.screen.query_one(f"#choice-{ident}", Button)
            assert dialog.contains_region(button.region), (ident, button.region, dialog)
            assert button.content_region.width >= len(label), (ident, button.content_region)
            rendered = "".join(s.text for s in button.render_lines(button.region.reset_offset)[
                button.region.height // 2])
            assert label in rendered, (ident, rendered)
