"""Small UX of issue 22: F1 lists every binding, the ctrl+c toast is plain text, ctrl+n's cursor is below the heading."""

from __future__ import annotations

import pytest
from textual.binding import Binding
from textual.screen import Screen

from engine.config import Config
from tests.tui.conftest import make_app, settle
from tests.tui.test_app import wait_until
from tui.app import MemdeckApp
from tui.screens.audit import AuditScreen
from tui.screens.dialogs import ChoiceScreen, DiffScreen
from tui.screens.flush import FlushScreen
from tui.screens.help import HelpScreen, binding_rows, help_content
from tui.screens.review import PromoteScreen, ReviewScreen
from tui.widgets.big_file_view import BigLines
from tui.widgets.markdown_area import MarkdownArea
from tui.widgets.memory_tree import MemoryTree
from tui.widgets.search_pane import ResultList, SearchPane
from tui.widgets.transcript_view import TranscriptLines, TranscriptView

# (where, class): every binding of every screen and pane, as Textual merges them.
PANES = [
    ("app", MemdeckApp), ("every screen", Screen), ("search box", SearchPane), ("search results", ResultList),
    ("memory tree", MemoryTree), ("editor", MarkdownArea), ("big file viewer", BigLines),
    ("transcript", TranscriptLines), ("transcript", TranscriptView), ("memory review", ReviewScreen),
    ("promote to memory", PromoteScreen), ("session audit", AuditScreen), ("flush review", FlushScreen), ("dialogs", ChoiceScreen),
    ("dialogs", DiffScreen), ("help", HelpScreen),
]


def _display(binding: Binding) -> str:
    return binding.key


@pytest.mark.parametrize(("where", "cls"), PANES, ids=[f"{w}:{c.__name__}" for w, c in PANES])
def test_help_rows_list_every_binding_of_every_pane(config: Config, where: str, cls: type) -> None:
    app = make_app(config)
    rows = [r for r in app.key_help() if r.where == where]
    shown = {key.strip() for r in rows for key in r.keys.split(",")}
    inherited_from_screen = {b.action for bs in Screen._merge_bindings().key_to_bindings.values() for b in bs}
    for key, bindings in cls._merge_bindings().key_to_bindings.items():
        for binding in bindings:
            if cls is not Screen and issubclass(cls, Screen) and binding.action in inherited_from_screen:
                continue  # listed once, under "every screen"
            assert app.get_key_display(Binding(key, binding.action)) in shown, \
                f"{key} ({binding.action}) of {cls.__name__} is not in F1's {where!r} group"


async def test_f1_shows_every_group(config: Config) -> None:
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help screen")
        screen = app.screen
        assert isinstance(screen, HelpScreen)
        table = help_content(screen.rows).plain
        for where in dict(PANES):
            assert where in table
        assert "Supersede all older" in table and "Session note" in table and "review.supersede_all" in table
        body = screen.query_one("#help-body")
        assert app.focused is body, "the long list scrolls from the keyboard at once"
        await pilot.press("pagedown")
        await wait_until(pilot, lambda: body.scroll_y > 0, "the list to scroll")


async def test_f1_names_the_review_keys_and_the_transcripts(config: Config) -> None:
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        rows = {(r.where, r.keys): r for r in app.key_help()}
        for where, key, binding_id in [("memory review", "S", "review.supersede_all"),
                                       ("memory review", "p", "review.promote"),
                                       ("transcript", "f", "transcript.flush"), ("transcript", "n", "transcript.note")]:
            assert rows[(where, key)].binding_id == binding_id


def test_keymap_overrides_and_unnamed_bindings_in_the_rows() -> None:
    rows = binding_rows([("tree", [MemoryTree])], {"tree.rename": "f2"}, _display)
    rename = next(r for r in rows if r.binding_id == "tree.rename")
    assert rename.keys == "f2"
    assert rows[0].binding_id, "memdeck's own bindings come first"
    assert any(r.binding_id == "" and r.keys == "space" for r in rows), "built-in keys are listed too"


async def test_f1_shows_the_keys_keys_remapped_to(demo_workspace: object) -> None:
    from tests.tui.conftest import tui_config

    config = tui_config(demo_workspace, keys={"memdeck.save": "f9", "tree.rename": "f6",  # type: ignore[arg-type]
                                              "review.promote": "P", "transcript.flush": "F"})
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        rows = {r.binding_id: r.keys for r in app.key_help() if r.binding_id}
        assert (rows["memdeck.save"], rows["tree.rename"], rows["review.promote"], rows["transcript.flush"]) == \
            ("f9", "f6", "P", "F")


@pytest.mark.parametrize("name", ["[b]bold[-b]", "[link=https://x.test]here", "[red]x[/red]", "[/]", "[@click=quit]q"],
                         ids=["bold", "link", "style", "closing-tag", "action"])
async def test_a_toast_naming_a_file_shows_its_markup_as_typed(config: Config, name: str) -> None:
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        message = f"Saved memory/{name}.md"
        app.notify(message, title=name)
        await pilot.pause()
        (toast,) = list(app._notifications)
        assert (toast.message, toast.title, toast.markup) == (message, name, False)


async def test_ctrl_c_says_how_to_quit_in_plain_text(config: Config) -> None:
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.main.memory_tree.focus()
        await pilot.pause()
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: bool(app._notifications), "the ctrl+c toast")
        (toast,) = list(app._notifications)
        assert "[b]" not in toast.message and "[/b]" not in toast.message
        assert toast.message == "Press ^q to quit memdeck"


@pytest.mark.parametrize("existing", ["", "\n", "\r\n", "no-newline"],
                         ids=["new-note", "note-with-entries", "crlf-note", "no-final-newline"])
async def test_ctrl_n_puts_the_cursor_below_the_heading(config: Config, existing: str) -> None:
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        rel = app.bridge.daily_rel(app.bridge.now().date())
        target = config.workspace / rel
        if existing:
            app.bridge.create_daily(app.bridge.now().date())
            heading = target.read_text(encoding="utf-8").rstrip("\n")
            eol = "\n" if existing == "no-newline" else existing
            body = f"{heading}{eol}{eol}- an earlier entry" + ("" if existing == "no-newline" else eol)
            target.write_bytes(body.encode("utf-8"))
        await pilot.press("ctrl+n")
        await settle(pilot)
        editor = app.main.editor
        assert editor.rel == rel and not editor.modified, "opening today's note changes nothing"
        lines = editor.area.text.split("\n")
        assert lines[0].startswith("# ")
        assert editor.area.cursor_location == editor.area.document.end
        assert editor.area.cursor_location[0] > 0, "below the heading"
        await pilot.press(*"typed")
        assert editor.area.text.split("\n")[0] == lines[0], "the heading is untouched"
        assert editor.area.text.rstrip("\n").endswith("typed")


async def test_a_big_tree_fills_with_few_relayouts(config: Config, monkeypatch: pytest.MonkeyPatch) -> None:
    """3,000 daily notes: the tree's caches are invalidated per slice, not per node (each invalidation costs a
    full re-layout of every line on the next frame: what made keystrokes take 1–2 s at 20,000 files)."""
    from textual.widgets import Tree

    from tui.bridge import build_tree_model
    from tui.widgets.memory_tree import GroupRef, NoteRef

    days = [f"memory/{1900 + i // 336}-{1 + i // 28 % 12:02d}-{1 + i % 28:02d}.md" for i in range(3000)]
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        tree = app.main.memory_tree
        calls = {"invalidate": 0}
        invalidate = Tree._invalidate

        def counting(self: Tree[object]) -> None:
            calls["invalidate"] += 1
            invalidate(self)

        monkeypatch.setattr(Tree, "_invalidate", counting)
        tree.set_model(build_tree_model(["MEMORY.md", *days], config.workspace))
        await settle(pilot)
        group = next(n for n in tree.nodes() if isinstance(n.data, GroupRef) and n.data.key == "daily")
        assert [n.data.rel for n in group.children if isinstance(n.data, NoteRef)] == sorted(days, reverse=True)
        assert calls["invalidate"] <= 20, f"{calls['invalidate']} invalidations for 3,000 notes"
