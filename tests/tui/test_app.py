"""Pilot tests: the real app on a temp copy of the demo workspace (hashing embedder, no watcher)."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest
from rich.style import Style
from textual.color import Color
from textual.pilot import Pilot

from engine.api import state_path
from engine.config import Config
from tests.tui.conftest import make_app, settle, tui_config, type_query
from tui.bridge import SaveConflict, SessionEntry, build_tree_model
from tui.messages import FilesChanged
from tui.screens.dialogs import ChoiceScreen, DiffScreen
from tui.screens.help import HelpScreen
from tui.widgets.memory_tree import FILL_SLICE, GroupRef, NoteRef
from tui.widgets.search_pane import ResultItem, line_range


def _lines(path: Path, start: int, end: int) -> str:
    return "\n".join(path.read_text(encoding="utf-8").split("\n")[start - 1 : end])


WAIT_CAP = 60.0  # seconds: only a bound on a failure (a dialog that never comes fails the test, clearly)


async def wait_until(pilot: Pilot, condition: Callable[[], bool], what: str) -> None:
    """Let the app process its messages and workers until ``condition`` holds (no count of pauses, no sleep)."""
    deadline = time.monotonic() + WAIT_CAP
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {WAIT_CAP:.0f} s for {what}; the screen is {pilot.app.screen!r}")
        await pilot.pause()


async def test_typing_shows_results_with_line_ranges(config: Config) -> None:
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await type_query(pilot, "pgbouncer")
        options = [app.main.search.results.get_option_at_index(i) for i in range(app.main.search.results.option_count)]
        assert options, "no results"
        for option in options:
            assert isinstance(option, ResultItem)
            hit = option.hit
            assert "pgbouncer" in _lines(config.workspace / hit.path, hit.start_line, hit.end_line).lower()
            assert line_range(hit) in str(option.prompt)
            assert hit.path in str(option.prompt)
        expected = app.bridge.search("pgbouncer", app.main.search.mode).results
        assert [o.hit.citation for o in options] == [h.citation for h in expected]


async def test_stale_results_are_dropped(config: Config) -> None:
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.main.search.query_input.focus()
        await pilot.press(*"pgbouncer")
        await pilot.press(*["backspace"] * 9)
        await pilot.press(*"uv")
        await settle(pilot)
        assert app.main.search.results_query == "uv"
        assert all("pgbouncer" not in o.hit.snippet.lower() or "uv" in o.hit.snippet.lower()
                   for o in (app.main.search.results.get_option_at_index(i)
                             for i in range(app.main.search.results.option_count)))


async def test_enter_opens_the_file_at_the_range(config: Config) -> None:
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await type_query(pilot, "pgbouncer")
        hit = app.main.search.selected_hit
        assert hit is not None
        await pilot.press("enter")
        await settle(pilot)
        editor = app.main.editor
        assert app.main.centre.current == "editor"
        assert editor.rel == hit.path
        assert editor.selected_range == (hit.start_line, hit.end_line)
        selection = editor.area.selection
        assert selection.end == (hit.start_line - 1, 0)  # the cursor sits at the start of the range
        assert selection.start[0] == hit.end_line - 1
        assert app.focused is editor.area
        before = editor.area.text
        await pilot.press("backspace")  # only drops the shown range
        assert editor.area.text == before and editor.area.selection.is_empty
        await pilot.press("Z")  # types at the start of the range; nothing of the range is lost
        lines = editor.area.text.split("\n")
        assert lines[hit.start_line - 1] == "Z" + before.split("\n")[hit.start_line - 1]
        assert editor.area.text.replace("Z", "", 1) == before


async def test_edit_save_is_atomic_and_searchable_at_once(config: Config) -> None:
    target = config.workspace / "memory" / "2026-10-07.md"
    os.chmod(target, 0o640)
    inode = target.stat().st_ino
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.main.open_note("memory/2026-10-07.md")
        await settle(pilot)
        area = app.main.editor.area
        area.move_cursor((area.document.line_count - 1, 0))
        area.insert("- Zanzibarquux rollout owner: Stefan\n")
        assert app.main.editor.modified
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert not app.main.editor.modified
        assert "Zanzibarquux rollout owner" in target.read_text(encoding="utf-8")
        assert target.stat().st_ino != inode, "written in place instead of temp file + rename"
        assert stat.S_IMODE(target.stat().st_mode) == 0o640
        assert not list(target.parent.glob(".*.tmp"))
        await type_query(pilot, "zanzibarquux")
        hits = [app.main.search.results.get_option_at_index(i).hit for i in range(app.main.search.results.option_count)]
        assert any(h.path == "memory/2026-10-07.md" for h in hits)


@pytest.mark.parametrize("choice", ["copy", "reload", "cancel"])
async def test_change_on_disk_while_editing_never_loses_text(config: Config, choice: str) -> None:
    rel = "memory/2026-10-02.md"
    target = config.workspace / rel
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.main.open_note(rel)
        await settle(pilot)
        app.main.editor.area.insert("MY EDIT\n", (0, 0))
        mine = app.main.editor.area.text
        theirs = target.read_text(encoding="utf-8") + "- appended by the agent\n"
        target.write_text(theirs, encoding="utf-8")
        app.main.editor.save_in_background()
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the conflict dialog")
        await pilot.click(f"#choice-{choice}")
        await settle(pilot)
        assert target.read_text(encoding="utf-8") == theirs, "the agent's change was overwritten"
        # Issue 16 #6: "keep mine" goes to memdeck's data dir (never next to the note, where it is indexed as a
        # duplicate); the editor shows the disk's version and its banner says where the copy went.
        assert not list(target.parent.glob("2026-10-02.mine-*.md"))
        copies = list((config.home / "conflict-copies" / "memory").glob("2026-10-02.mine-*.md"))
        if choice == "copy":
            assert len(copies) == 1 and copies[0].read_text(encoding="utf-8") == mine
            assert app.main.editor.rel == rel and app.main.editor.area.text == theirs
            banner = str(app.main.editor.query_one("#editor-banner").render())
            assert str(copies[0]) in banner
        elif choice == "reload":
            assert not copies
            assert app.main.editor.area.text == theirs
        else:
            assert not copies
            assert app.main.editor.area.text == mine and app.main.editor.conflict


async def test_conflict_dialog_shows_the_diff(config: Config) -> None:
    rel = "memory/2026-10-02.md"
    target = config.workspace / rel
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.main.open_note(rel)
        await settle(pilot)
        app.main.editor.area.insert("MY EDIT\n", (0, 0))
        target.write_text("replaced by someone else\n", encoding="utf-8")
        app.main.editor.save_in_background()
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the conflict dialog")
        await pilot.click("#choice-diff")
        await wait_until(pilot, lambda: isinstance(app.screen, DiffScreen), "the diff")
        assert isinstance(app.screen, DiffScreen)
        assert "+MY EDIT" in app.screen.diff and "-replaced by someone else" in app.screen.diff
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the conflict dialog again")
        await pilot.click("#choice-cancel")
        await settle(pilot)
        assert target.read_text(encoding="utf-8") == "replaced by someone else\n"


async def test_save_refuses_when_the_file_changed(config: Config) -> None:
    app = make_app(config)
    note = app.bridge.read_note("MEMORY.md")
    (config.workspace / "MEMORY.md").write_text("someone else\n", encoding="utf-8")
    with pytest.raises(SaveConflict):
        app.bridge.save_note("MEMORY.md", "mine\n", note.stamp)
    assert (config.workspace / "MEMORY.md").read_text(encoding="utf-8") == "someone else\n"


async def test_disk_change_reloads_clean_editor_and_flags_modified_one(config: Config) -> None:
    rel = "memory/2026-11-27.md"
    target = config.workspace / rel
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.main.open_note(rel)
        await settle(pilot)
        target.write_text(target.read_text(encoding="utf-8") + "- agent: remember the dry run\n", encoding="utf-8")
        app.main.post_message(FilesChanged(frozenset({target})))
        await settle(pilot)
        assert "agent: remember the dry run" in app.main.editor.area.text
        assert not app.main.editor.modified and not app.main.editor.conflict
        assert app.main.memory_tree.states.get(rel) == "indexed"
        app.main.editor.area.insert("mine\n", (0, 0))
        target.write_text(target.read_text(encoding="utf-8") + "- another agent line\n", encoding="utf-8")
        app.main.post_message(FilesChanged(frozenset({target})))
        await settle(pilot)
        assert app.main.editor.conflict and app.main.editor.modified
        assert app.main.editor.area.text.startswith("mine\n")


async def test_malformed_transcript_line_shows_a_placeholder(config: Config) -> None:
    sessions = config.workspace / "sessions"
    path = sessions / "0badline-0000-4000-8000-000000000000.jsonl"
    lines = [
        {"type": "session", "version": 3, "id": "0badline", "timestamp": "2026-11-30T09:00:00Z", "cwd": "/w"},
        {"type": "message", "id": "a1", "parentId": None, "timestamp": "2026-11-30T09:00:01Z",
         "message": {"role": "user", "content": "hello there"}},
    ]
    text = "\n".join(json.dumps(x) for x in lines) + "\n{not json at all\n" + json.dumps(
        {"type": "message", "id": "a2", "parentId": "a1", "timestamp": "2026-11-30T09:00:02Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}}) + "\n"
    path.write_text(text, encoding="utf-8")
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.main.open_session(path)
        await settle(pilot)
        view = app.main.transcript
        kinds = [b.kind for b in view.lines.blocks]
        assert kinds == ["meta", "user", "skipped", "assistant"]
        assert view.lines.blocks[2].line == 3
        assert view.summary is not None and view.summary.skipped == 1
        assert "1 line skipped" in str(app.query_one("#transcript-header").render())


async def test_copy_citation_and_snippet(config: Config) -> None:
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await type_query(pilot, "pgbouncer")
        hit = app.main.search.selected_hit
        assert hit is not None
        await pilot.press("ctrl+l")
        await settle(pilot)
        assert app.clipboard == hit.citation == f"{hit.path}#L{hit.start_line}-L{hit.end_line}"
        await pilot.press("down", "y")
        await settle(pilot)
        assert app.clipboard == app.main.search.selected_hit.snippet


async def test_theme_switch_persists(config: Config) -> None:
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert app.theme == "memdeck-dark"
        app.theme = "memdeck-light"
        await settle(pilot)
    # Issue 16 #4: remembered in memdeck's state file, never by rewriting config.toml.
    assert not config.config_path.exists()
    saved = json.loads(state_path(config).read_text(encoding="utf-8"))
    assert saved["choices"]["theme"]["value"] == "memdeck-light"
    again = make_app(tui_config(config.workspace))
    assert again.theme == "memdeck-light"


async def test_broken_user_theme_falls_back_with_a_notification(config: Config) -> None:
    themes = config.config_path.parent / "themes"
    themes.mkdir(parents=True)
    (themes / "broken.toml").write_text('name = "broken"\nprimary = "not a colour"\n', encoding="utf-8")
    config.config_path.write_text('[tui]\ntheme = "broken"\n', encoding="utf-8")
    app = make_app(tui_config(config.workspace))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert app.theme == "memdeck-dark"
        messages = [n.message for n in app._notifications]
        assert any("broken.toml" in m for m in messages)
        assert any("not available" in m for m in messages)


async def test_quit_with_unsaved_changes_asks_first(config: Config) -> None:
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.main.open_note("MEMORY.md")
        await settle(pilot)
        app.main.editor.area.insert("unsaved\n", (0, 0))
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the unsaved-changes question")
        await pilot.click("#choice-cancel")
        await settle(pilot)
        assert app.is_running and app.main.editor.modified


async def test_new_daily_note_and_remapped_save_key(demo_workspace: Path) -> None:
    config = tui_config(demo_workspace, keys={"memdeck.save": "f5"})
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+n")
        await settle(pilot)
        rel = f"memory/{date.today():%Y-%m-%d}.md"
        assert app.main.editor.rel == rel
        assert (demo_workspace / rel).read_text(encoding="utf-8").startswith(f"# {date.today():%Y-%m-%d} — ")
        app.main.editor.area.insert("- a fresh thought\n")
        await pilot.press("f5")
        await settle(pilot)
        assert "a fresh thought" in (demo_workspace / rel).read_text(encoding="utf-8")
        assert app.main.memory_tree.select_note(rel)


async def test_help_lists_bindings_with_ids(config: Config) -> None:
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help screen")
        assert isinstance(app.screen, HelpScreen)
        ids = {row.binding_id for row in app.screen.rows}
        assert {"memdeck.save", "memdeck.search", "results.copy_citation", "transcript.flush"} <= ids


async def test_flush_appends_the_reviewed_draft(config: Config) -> None:
    path = next((config.workspace / "sessions").glob("9b2d4e71*.jsonl"))
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.main.open_session(path)
        await settle(pilot)
        from tui.screens.flush import FlushScreen

        app.run_worker(app.main.run_action("flush"))
        await wait_until(pilot, lambda: isinstance(app.screen, FlushScreen), "the flush review")
        assert isinstance(app.screen, FlushScreen)
        assert "Memory flush from session 9b2d4e71" in app.screen.block
        assert app.screen.target == "memory/2026-11-12.md"  # the day it was said, not today
        await pilot.press("ctrl+s")
        await settle(pilot)
    daily = config.workspace / "memory" / "2026-11-12.md"
    assert "Memory flush from session 9b2d4e71" in daily.read_text(encoding="utf-8")
    assert "9b2d4e71-5c3a-4f88-b6e0-7a1c2d3e4f51" in (config.home / "flush-state.json").read_text(encoding="utf-8")


async def test_flush_escape_closes_at_once_and_an_edited_draft_is_kept_until_discarded() -> None:
    """The editor (tab indents) took the first escape to move focus: it took two to close. An edited draft is
    not lost on a reflex: escape asks first, and "Keep editing" leaves it as it was."""
    from textual.app import App

    from tui.screens.dialogs import ChoiceScreen
    from tui.screens.flush import FlushScreen
    from tui.widgets.markdown_area import MarkdownArea

    closed: list[str | None] = []
    app: App[None] = App()  # the dialog alone: the workbench behind it plays no part
    async with app.run_test(size=(120, 36)) as pilot:
        block = "## 19:55 — Memory flush from session 9b2d4e71\n\n- Remind me tomorrow at 08:30\n"
        app.push_screen(FlushScreen("Flush", "1 candidate", block), closed.append)
        await wait_until(pilot, lambda: isinstance(app.screen, FlushScreen), "the flush review")
        await pilot.press("escape")
        await wait_until(pilot, lambda: closed == [None], "one escape to close")
        flush = FlushScreen("Flush", "1 candidate", block)
        app.push_screen(flush, closed.append)
        await wait_until(pilot, lambda: app.screen is flush, "the flush review")
        await pilot.press(*"my edit")
        edited = flush.query_one(MarkdownArea).text
        assert edited != block
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the discard question")
        await pilot.press("escape")  # = Keep editing
        await wait_until(pilot, lambda: app.screen is flush, "the draft again")
        assert flush.query_one(MarkdownArea).text == edited and closed == [None]
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the discard question")
        await pilot.click("#choice-discard")
        await wait_until(pilot, lambda: len(closed) == 2, "discarded")
        assert closed == [None, None] and not isinstance(app.screen, (FlushScreen, ChoiceScreen))


async def test_status_shows_vector_unavailable_without_a_provider(demo_workspace: Path) -> None:
    app = make_app(tui_config(demo_workspace, provider="none"))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        text = str(app.query_one("#status-engine").render())
        assert "vector: unavailable" in text and "FTS: ready" in text
        await type_query(pilot, "pgbouncer")
        assert app.main.search.results.option_count > 0


async def test_same_hits_keep_the_result_list_and_new_ones_replace_it(config: Config) -> None:
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await type_query(pilot, "pgbouncer")
        pane = app.main.search
        response = pane.response
        assert response is not None and len(response.results) > 1
        before = [pane.results.get_option_at_index(i) for i in range(pane.results.option_count)]
        pane.show_response("pgbouncer ", replace(response))  # the same hits for a longer query
        assert [pane.results.get_option_at_index(i) for i in range(pane.results.option_count)] == before
        assert all(a is b for a, b in zip(before, (pane.results.get_option_at_index(i) for i in range(len(before))),
                                          strict=True))
        pane.show_response("pgbouncer p", replace(response, results=response.results[:1]))
        assert pane.results.option_count == 1
        assert pane.selected_hit == response.results[0]


_SESSIONS = (SessionEntry(Path("/s/a.jsonl"), "a", "2026-11-30 Mara", "a · 3 msgs"),
             SessionEntry(Path("/s/b.jsonl"), "b", "2026-11-29 broken", "b", error="2 bad lines"))


@pytest.mark.parametrize(
    ("sessions", "states"),
    [
        (_SESSIONS, {"MEMORY.md": "indexed", "memory/2026-11-30.md": "changed", "memory/ideas.md": "new",
                     "memory/2026-11-30-talk.md": "not-embedded"}),
        ((), {}),
    ],
)
async def test_tree_label_widths_are_what_is_drawn(config: Config, sessions: tuple[SessionEntry, ...],
                                                   states: dict[str, str]) -> None:
    rels = ["MEMORY.md", "memory/2026-11-30.md", "memory/2026-11-30-talk.md", "memory/ideas.md",
            "memory/ünïcode/汉字.md", "/elsewhere/extra.md"]
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        tree = app.main.memory_tree
        tree.set_model(build_tree_model(rels, config.workspace, sessions))
        tree.set_states(states)
        await settle(pilot)
        for collapse in (False, True):
            if collapse:
                for node in tree.nodes():
                    if node.allow_expand:
                        node.collapse()
                await settle(pilot)
            nodes = tree.nodes()
            assert len(nodes) > len(rels)
            for node in nodes:
                assert tree.get_label_width(node) == tree.render_label(node, Style(), Style()).cell_len, node.label


async def test_panes_mount_after_the_first_screen_once(config: Config) -> None:
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        editor, transcript = app.main.loaded_editor, app.main.loaded_transcript
        assert editor is not None and transcript is not None
        assert await app.main.ensure_editor() is editor and await app.main.ensure_transcript() is transcript
        assert len(app.query("#editor")) == 1 and len(app.query("#transcript")) == 1
        assert app.main.centre.current == "welcome" and not editor.display and not transcript.display


async def test_gc_is_back_on_once_the_first_screen_is_up(config: Config) -> None:
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert gc.isenabled()
    assert gc.isenabled()


@pytest.mark.parametrize("theme", ["memdeck-dark", "memdeck-light"])
async def test_configured_theme_colours_the_first_screen(demo_workspace: Path, theme: str) -> None:
    app = make_app(tui_config(demo_workspace, tui={"theme": theme}))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert app.theme == theme and app.has_class(f"-theme-{theme}")
        assert app.screen.styles.background == Color.parse(app.current_theme.background or "")
        assert app.has_class("-dark-mode") is app.current_theme.dark


async def test_tree_fills_big_groups_and_patches_small_changes(config: Config) -> None:
    days = [f"memory/{2000 + i // 336}-{1 + i // 28 % 12:02d}-{1 + i % 28:02d}.md" for i in range(2 * FILL_SLICE + 7)]
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        tree = app.main.memory_tree

        def daily() -> list[NoteRef]:
            group = next(n for n in tree.nodes() if isinstance(n.data, GroupRef) and n.data.key == "daily")
            assert isinstance(group.data, GroupRef) and group.data.count == len(group.children)
            return [n.data for n in group.children if isinstance(n.data, NoteRef)]

        tree.set_model(build_tree_model(["MEMORY.md", *days], config.workspace))
        await settle(pilot)
        assert [d.rel for d in daily()] == sorted(days, reverse=True)
        nodes = {n.data.rel: n for n in tree.nodes() if isinstance(n.data, NoteRef)}
        changed = [*days[2:], "memory/1999-12-31.md", "memory/2030-01-01.md"]
        tree.set_model(build_tree_model(["MEMORY.md", *changed], config.workspace))
        await settle(pilot)
        assert [d.rel for d in daily()] == sorted(changed, reverse=True)
        kept = [n for n in tree.nodes() if isinstance(n.data, NoteRef) and n.data.rel in nodes]
        assert len(kept) == len(days) - 2 + 1 and all(nodes[n.data.rel] is n for n in kept)  # patched, not rebuilt


async def test_progress_takes_the_index_line_and_the_status_pane_keeps_its_height(config: Config) -> None:
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        status = app.main.status_pane
        height, tree_height = status.size.height, app.main.memory_tree.size.height
        status.show_progress("embed", 3, 56, None)
        await settle(pilot)  # the layout that follows
        label = app.query_one("#progress-label")
        chunks = max(status.status.chunks, 56)
        assert f"embedding chunks {chunks - 53:,}/{chunks:,}" in str(label.render())
        assert not app.query_one("#status-index").display and app.query_one("#status-progress").display
        assert (status.size.height, app.main.memory_tree.size.height) == (height, tree_height)
        # A run that embeds the last 56 of 60 chunks: the row says the index's numbers, as the engine line does
        # (it read `3/56` beside `vectors 7/60`).
        status.status = replace(status.status, chunks=60)
        status.show_progress("embed", 3, 56, None)
        await settle(pilot)
        assert "embedding chunks 7/60" in str(label.render())
        assert "vectors 7/60" in str(app.query_one("#status-engine").render())
        status.hide_progress()
        await settle(pilot)
        assert app.query_one("#status-index").display and not app.query_one("#status-progress").display
        assert status.size.height == height and not status.indexing


async def test_fold_while_a_relayout_is_in_flight_keeps_rows_and_blocks_consistent(
        config: Config, monkeypatch: pytest.MonkeyPatch) -> None:
    from tui.widgets import transcript_view
    from tui.widgets.transcript_layout import Block, measure_blocks

    armed, measured, release = threading.Event(), threading.Event(), threading.Event()
    held: list[int] = []

    def held_measure(blocks: list[Block], width: int) -> object:
        layout = measure_blocks(blocks, width)
        if armed.is_set() and threading.current_thread() is not threading.main_thread() and not held:
            held.append(width)  # the re-wrap for the resize below: measured, then held until the fold is done
            measured.set()
            release.wait(timeout=60)
        return layout

    monkeypatch.setattr(transcript_view, "measure_blocks", held_measure)
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        view = await app.main.ensure_transcript()
        app.main.centre.current = "transcript"
        lines = view.lines
        blocks = [Block("tool", f"call {i}", "word " * 60, line=i + 1, folded=True)
                  for i in range(transcript_view.BIG + 10)]
        lines.set_blocks(blocks)
        lines.focus()
        await settle(pilot)  # laid out at its first width (re-wrapped in a thread, not held)
        assert lines._layout.width == lines.text_width
        armed.set()
        await pilot.resize_terminal(100, 36)  # a big transcript: re-wrapped for the new width in a thread
        assert await asyncio.to_thread(measured.wait, 60)
        await pilot.press("enter")  # unfold the first block while the thread's layout is not in yet
        release.set()
        await settle(pilot)
        assert held and not lines.blocks[0].folded
        fresh = measure_blocks(lines.blocks, lines.text_width)
        assert lines._layout.width == lines.text_width
        assert lines._layout.heights == fresh.heights
        assert lines.virtual_size.height == sum(fresh.heights)


async def test_an_older_widths_relayout_finishing_last_is_dropped(
        config: Config, monkeypatch: pytest.MonkeyPatch) -> None:
    from tui.widgets import transcript_view
    from tui.widgets.transcript_layout import Block, measure_blocks

    armed, measured, release = threading.Event(), threading.Event(), threading.Event()
    held: list[int] = []

    def held_measure(blocks: list[Block], width: int) -> object:
        layout = measure_blocks(blocks, width)
        if armed.is_set() and threading.current_thread() is not threading.main_thread() and not held:
            held.append(width)  # the first resize's re-wrap: held until the second resize's one is in
            measured.set()
            release.wait(timeout=60)
        return layout

    monkeypatch.setattr(transcript_view, "measure_blocks", held_measure)
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        view = await app.main.ensure_transcript()
        app.main.centre.current = "transcript"
        lines = view.lines
        lines.set_blocks([Block("result", f"out {i}", "word " * 60, line=i + 1) for i in range(transcript_view.BIG + 10)])
        await settle(pilot)
        armed.set()
        await pilot.resize_terminal(100, 36)
        assert await asyncio.to_thread(measured.wait, 60)
        await pilot.resize_terminal(140, 36)
        for _ in range(100):  # the second re-wrap lands (no clock: each pause is one trip round the loop)
            await pilot.pause()
            if lines._layout.width == lines.text_width:
                break
        assert lines._layout.width == lines.text_width != held[0]
        release.set()
        await settle(pilot)
        assert lines._layout.width == lines.text_width
        assert lines._layout.heights == measure_blocks(lines.blocks, lines.text_width).heights


async def test_palette_commands_run_on_the_main_screen(config: Config) -> None:
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        before = app.main.search.mode
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Toggle search mode")
        for _ in range(50):
            await pilot.pause()
            if app.screen.query(".option-list--option-highlighted") or app.screen.query("CommandList"):
                break
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is app.main
        assert app.main.search.mode != before


async def test_new_topic_prompt_takes_the_name_at_once(config: Config) -> None:
    from tui.screens.dialogs import PromptScreen

    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.main.action_new_topic()
        for _ in range(50):
            await pilot.pause()
            if isinstance(app.screen, PromptScreen):
                break
        assert isinstance(app.screen, PromptScreen)
        await pilot.press(*"ideas/tmux", "enter")
        await settle(pilot)
        assert (config.workspace / "memory" / "ideas" / "tmux.md").is_file()
        assert app.main.editor.rel == "memory/ideas/tmux.md"
