"""Plain tests of the TUI's pure parts: highlighting, snippets, wrapping, transcript blocks, tree grouping, themes."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from engine.search.pipeline import Hit
from engine.sessions.reader import read_transcript
from tui.bridge import PathRefused, build_tree_model, topic_rel
from tui.keys import APP_BINDINGS, check_keymap
from tui.screens.help import binding_rows
from tui.themes import ThemeError, editor_theme, load_theme_text, load_themes
from tui.watch import is_relevant
from tui.widgets.markdown_area import highlight_document, highlight_line
from tui.widgets.search_pane import SNIPPET_LINES, render_hit, snippet_lines
from tui.widgets.transcript_layout import build_blocks, wrap_text


@pytest.mark.parametrize(
    ("lines", "row", "expected"),
    [
        (["## Heading"], 0, [(0, 2, "heading.marker"), (2, None, "heading")]),
        (["#hashtag"], 0, []),
        (["- item with `code`"], 0, [(0, 1, "list.marker"), (12, 18, "inline_code")]),
        (["- [x] done"], 0, [(0, 1, "list.marker"), (2, 5, "task.done")]),
        (["**bold** and *it*"], 0, [(0, 8, "bold"), (13, 17, "italic")]),
        (["see [docs](https://x.y)"], 0, [(5, 9, "link.label"), (11, 22, "link.uri")]),
        (["```python", "x = 1"], 0, [(0, 3, "heading.marker"), (3, 9, "info_string")]),
        (["```python", "x = 1  # not a heading"], 1, [(0, None, "code_block")]),
        (["```", "x", "```"], 2, [(0, None, "heading.marker")]),
        (["> quoted"], 0, [(0, None, "quote")]),
        (["> quoted", "lazy continuation"], 1, [(0, None, "quote")]),
        (["---"], 0, [(0, None, "rule")]),
        (["`**not bold**`"], 0, [(0, 14, "inline_code")]),
        (["Title", "====="], 0, [(0, None, "heading")]),
        (["Title", "====="], 1, [(0, None, "heading.marker")]),
        (["> ## Quoted heading"], 0, [(0, 4, "heading.marker"), (4, None, "heading")]),
        (["- ```sh", "  ls"], 0, [(0, 5, "heading.marker"), (5, 7, "info_string")]),
        (["para", "2. not an item"], 1, []),  # an ordered list other than 1. cannot interrupt a paragraph
        (["| a | b |", "|---|---|"], 0, [(0, 1, "table"), (4, 5, "table"), (8, 9, "table")]),
        (["---", "title: *x*", "---", "text"], 1, [(0, None, "code_block")]),
    ],
)
def test_highlight_line_follows_the_block_model(lines: list[str], row: int,
                                               expected: list[tuple[int, int | None, str]]) -> None:
    out = highlight_document(lines, {})
    got = out.get(row, [])
    assert sorted(got, key=lambda s: (s[0], s[2])) == sorted(expected, key=lambda s: (s[0], s[2]))


def test_highlight_line_by_role() -> None:
    assert highlight_line("x = 1  # not a heading", "code") == [(0, None, "code_block")]
    assert highlight_line("# x", "heading") == [(0, 1, "heading.marker"), (1, None, "heading")]
    assert highlight_line("- a", "text", item=True) == [(0, 1, "list.marker")]
    assert highlight_line("- a", "text") == []  # not an item start by the model: no marker


def test_highlight_document_uses_byte_offsets_and_tracks_fences() -> None:
    cache: dict = {}  # type: ignore[type-arg]
    lines = ["# Café", "```", "# not a heading", "```", "`é`"]
    out = highlight_document(lines, cache)
    assert out[0] == [(0, 1, "heading.marker"), (1, None, "heading")]
    assert out[2] == [(0, None, "code_block")]
    assert out[4] == [(0, 4, "inline_code")]  # "`é`" is 4 bytes
    assert highlight_document(lines, cache) == out  # cached the same


def _hit(snippet: str, spans: tuple[tuple[int, int], ...], start: int = 10, source: str = "memory") -> Hit:
    lines = snippet.count("\n")
    return Hit("memory/x.md", start, start + lines, 0.8, 0.7, 0.9, snippet, start, start + lines, spans, source,
               f"memory/x.md#L{start}-L{start + lines}")


@pytest.mark.parametrize(
    ("snippet", "spans", "numbers", "line_spans"),
    [
        ("a\nb\nc pg\nd\ne", ((6, 8),), [12, 13, 14], [((2, 4),), (), ()]),
        ("pg one\ntwo", ((0, 2),), [10, 11], [((0, 2),), ()]),
        ("a\nb\nc\nd pg", ((8, 10),), [11, 12, 13], [(), (), ((2, 4),)]),
        ("x\n\n\n", (), [10], [()]),
    ],
)
def test_snippet_lines_start_at_the_first_match(snippet: str, spans: tuple[tuple[int, int], ...],
                                                numbers: list[int], line_spans: list[tuple[tuple[int, int], ...]]) -> None:
    lines = snippet_lines(_hit(snippet, spans))
    assert [ln.number for ln in lines] == numbers
    assert [ln.spans for ln in lines] == line_spans


@pytest.mark.parametrize(("best", "numbers"), [(15, [14, 15, 16]), (10, [10, 11, 12]), (17, [15, 16, 17]),
                                             (None, [10, 11, 12]), (99, [10, 11, 12])])
def test_a_hit_found_by_meaning_alone_shows_the_line_closest_in_meaning(best: int | None, numbers: list[int]) -> None:
    # no keyword span: the rows start a line before the engine's best line (were: always the first three)
    hit = replace(_hit("## Reminder\n- clocks go back\n- check ETA jobs\n\n## Personal\n- violin on Thursdays\n"
                       "- Tuesday pick-ups\n- keep Thursdays free", ()), best_line=best)
    assert [ln.number for ln in snippet_lines(hit)] == numbers


@pytest.mark.parametrize("snippet", ["pg", "a pg\nb", "a\nb\nc pg", "a\nb\nc\nd\ne pg", "x\n\n\n"])
def test_every_result_has_the_same_height(snippet: str) -> None:
    spans = ((snippet.index("pg"), snippet.index("pg") + 2),) if "pg" in snippet else ()
    assert len(render_hit(_hit(snippet, spans)).plain.split("\n")) == 1 + SNIPPET_LINES


def test_render_hit_never_parses_markup() -> None:
    content = render_hit(_hit("[bold]not markup[/bold] $var", ((0, 6),)))
    plain = content.plain
    assert "[bold]not markup[/bold] $var" in plain
    assert "memory/x.md" in plain and "L10" in plain and "0.80" in plain and "vec 0.70" in plain


@pytest.mark.parametrize(
    ("text", "width", "expected"),
    [
        ("short", 20, ["short"]),
        ("one two three four", 9, ["one two", "three", "four"]),
        ("a\n\nb", 10, ["a", "", "b"]),
        ("abcdefghijklmnopqrstuvwxyz", 10, ["abcdefghij", "klmnopqrst", "uvwxyz"]),
        ("汉字汉字汉字", 8, ["汉字汉字", "汉字"]),
    ],
)
def test_wrap_text(text: str, width: int, expected: list[str]) -> None:
    assert wrap_text(text, max(8, width)) == expected


def _write_jsonl(path: Path, lines: list[object]) -> Path:
    out = []
    for line in lines:
        out.append(line if isinstance(line, str) else json.dumps(line))
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def test_build_blocks_folds_tools_and_marks_bad_lines(tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path / "s.jsonl", [
        {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-11-30T09:00:00Z"},
        {"type": "message", "id": "a", "timestamp": "2026-11-30T09:00:01Z",
         "message": {"role": "user", "content": "run it"}},
        "{broken",
        {"type": "message", "id": "b", "timestamp": "2026-11-30T09:00:02Z",
         "message": {"role": "assistant", "content": [
             {"type": "thinking", "thinking": "let me think about it"},
             {"type": "toolCall", "id": "t1", "name": "exec", "arguments": {"command": "ls"}}],
             "usage": {"input": 10, "output": 5, "totalTokens": 15}}},
        {"type": "message", "id": "c", "timestamp": "2026-11-30T09:00:03Z",
         "message": {"role": "toolResult", "toolCallId": "t1", "toolName": "exec", "isError": True,
                     "content": [{"type": "text", "text": "boom\nbang"}]}},
        {"type": "compaction", "id": "d", "timestamp": "2026-11-30T09:00:04Z", "summary": "earlier",
         "tokensBefore": 1234},
        {"type": "weird", "id": "e"},
    ])
    blocks, summary = build_blocks(read_transcript(path))
    assert [b.kind for b in blocks] == ["meta", "user", "skipped", "thinking", "tool", "result", "compaction", "meta"]
    assert blocks[2].line == 3 and "line 3" in blocks[2].title
    assert blocks[3].folded and "5 words" in blocks[3].title
    assert blocks[4].title.startswith("exec · error") and blocks[4].error
    assert blocks[5].title == "exec result · error · 2 lines" and blocks[5].folded
    assert "1,234 tokens before" in blocks[6].title
    assert "unknown entry type 'weird'" in blocks[7].title
    assert (summary.messages, summary.tool_calls, summary.compactions, summary.skipped, summary.tokens) == (
        3, 1, 1, 1, 15)


def test_tree_model_groups_and_orders_files(tmp_path: Path) -> None:
    rels = ["MEMORY.md", "memory/2026-11-27.md", "memory/2026-11-30.md", "memory/2026-11-20-release-checklist.md",
            "memory/projects/heron.md", "memory/2026-13-45.md", str(tmp_path / "notes" / "x.md")]
    model = build_tree_model(rels, tmp_path)
    assert [e.rel for e in model.root] == ["MEMORY.md"]
    assert [e.label for e in model.daily] == ["2026-11-30 Mon", "2026-11-27 Fri"]
    assert model.daily[0].day == date(2026, 11, 30)
    assert [e.label for e in model.session_notes] == ["2026-11-20 release-checklist"]
    assert [e.label for e in model.topics] == ["2026-13-45.md", "projects/heron.md"]
    assert [e.label for e in model.extras] == ["notes/x.md"]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Travel plans", "memory/travel-plans.md"),
        ("projects/Kestrel", "memory/projects/kestrel.md"),
        ("memory/ideas.md", "memory/ideas.md"),
        ("../../etc/passwd", "memory/etc/passwd.md"),
    ],
)
def test_topic_rel(name: str, expected: str) -> None:
    assert topic_rel(name) == expected


def test_topic_rel_refuses_empty_names() -> None:
    with pytest.raises(PathRefused):
        topic_rel(" / ")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('primary = "#123456"\nshiny = true\n', "unknown key"),
        ('name = "x"\n', "primary colour missing"),
        ('primary = "nope"\n', "primary"),
        ('primary = "#123456"\ndark = "yes"\n', "dark must be true or false"),
        ("primary = ", "not valid TOML"),
    ],
)
def test_bad_theme_files_say_why(text: str, problem: str) -> None:
    with pytest.raises(ThemeError, match=problem):
        load_theme_text(text, "t.toml", "t")


def test_bundled_and_user_themes_load(tmp_path: Path) -> None:
    (tmp_path / "mine.toml").write_text('primary = "#FF8800"\ndark = true\n', encoding="utf-8")
    (tmp_path / "bad.toml").write_text("primary = 3\n", encoding="utf-8")
    found = load_themes(tmp_path)
    names = {t.name for t in found.themes}
    assert {"memdeck-dark", "memdeck-light", "mine"} <= names
    assert len(found.errors) == 1 and "bad.toml" in found.errors[0]
    theme = editor_theme({"primary": "#7AA2F7", "background": "#000000", "foreground-muted": "rgba(255,255,255,0.5)", "accent": "#ffffff 50%"})
    assert theme.syntax_styles["heading"].color is not None


def test_keymap_overrides_show_in_help_and_typos_are_found() -> None:
    rows = binding_rows([("app", APP_BINDINGS)], {"memdeck.save": "f5,ctrl+s"}, lambda b: b.key)
    save = next(r for r in rows if r.binding_id == "memdeck.save")
    assert save.keys == "f5, ctrl+s"
    checked = check_keymap({"memdeck.save": "f5", "memdeck.svae": "f6"}, [("app", APP_BINDINGS)])
    assert checked.keymap == {"memdeck.save": "f5"}
    assert any("memdeck.svae" in w and "did you mean memdeck.save" in w for w in checked.warnings)


@pytest.mark.parametrize(
    ("path", "relevant"),
    [
        ("/w/memory/2026-11-30.md", True),
        ("/w/memory/.2026-11-30.md.abc.tmp", False),
        ("/w/sessions/abc.jsonl", True),
        ("/w/sessions/sessions.json", True),
        ("/w/memory/node_modules/x.md", False),
        ("/w/memory/picture.png", False),
    ],
)
def test_watch_filter(path: str, relevant: bool, tmp_path: Path) -> None:
    from engine.config import load_config

    assert is_relevant(path, load_config(workspace=tmp_path)) is relevant


HEAVY_OR_LATER = (
    "torch", "sentence_transformers", "numpy", "sqlite3", "sqlean", "sqlite_vec", "mistune", "pyperclip",
    "engine.api", "engine.search.pipeline",
    # not on the first screen: mounted or imported once it is painted
    "tui.widgets.note_editor", "tui.widgets.transcript_view", "tui.widgets.transcript_layout", "tui.screens.dialogs",
    "textual.widgets._text_area",
)


def test_importing_the_app_loads_no_heavy_modules() -> None:
    code = f"import sys, tui.app; print([m for m in {HEAVY_OR_LATER!r} if m in sys.modules])"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_every_command_names_an_action_that_exists() -> None:
    from tui.app import MemdeckApp
    from tui.keys import COMMANDS, PALETTE
    from tui.screens.main import MainScreen

    for command in COMMANDS:
        owner = MemdeckApp if command.on_app else MainScreen
        assert callable(getattr(owner, f"action_{command.action}", None)), command
    assert [b.id for b in APP_BINDINGS] == [c.id for c in COMMANDS if c.key]
    assert all(c.id for c in COMMANDS if c.key) and len({b.id for b in APP_BINDINGS}) == len(APP_BINDINGS)
    assert {c.action for c in PALETTE} >= {"rebuild", "new_topic", "rename", "delete", "change_theme",
                                           "open_session", "flush", "session_note", "save", "quit"}
    # Main-screen keys act on the current screen: over a dialog they fall through to the dialog's own keys.
    assert next(b for b in APP_BINDINGS if b.id == "memdeck.save").action == "screen.save"
    assert next(b for b in APP_BINDINGS if b.id == "memdeck.quit").action == "quit"


class _FakeBridge:
    is_open = True


class _FakeHost:
    def __init__(self) -> None:
        self.started: list[tuple[bool, bool | None]] = []

    def run_worker(self, work: object, **_: object) -> None:
        args = work.args  # type: ignore[attr-defined]  # a functools.partial of SyncQueue._run
        self.started.append((args[0], args[1]))


def test_sync_queue_runs_one_sync_and_merges_what_is_asked_meanwhile() -> None:
    from tui.screens.sync_queue import SyncQueue

    host = _FakeHost()
    queue = SyncQueue(_FakeBridge(), host)  # type: ignore[arg-type]
    queue.request(embed=False)
    first_cancel = queue._cancel
    queue.request()
    queue.request(force=True, embed=True)
    assert host.started == [(False, False)] and queue.running
    assert first_cancel.is_set()  # a plain sync is asked to stop early for the queued one
    assert queue.finished() == (False, True)
    assert host.started == [(False, False), (True, True)] and queue.running
    queue.request()
    queue.cancel()
    assert queue.finished() == (True, False)  # the user's cancel drops what was queued
    assert host.started == [(False, False), (True, True)] and not queue.running


def test_no_tui_module_imports_one_that_imports_it_back() -> None:
    # grimp counts every import, TYPE_CHECKING and function-level ones too: the workbench's mixins and the review
    # screen see MainScreen only as the tui.screens.workbench Protocol.
    import grimp

    graph = grimp.build_graph("tui")
    modules = sorted(graph.modules)
    cycles = [(a, b) for i, a in enumerate(modules) for b in modules[i + 1:]
              if graph.chain_exists(a, b) and graph.chain_exists(b, a)]
    assert not cycles, cycles


def test_a_match_far_along_a_line_is_brought_into_view() -> None:
    line = "- Stefan owns HERON-151 end to end, his first feature lead. Mara is reviewer and backup."
    at = line.index("backup")
    shown = render_hit(_hit(line, ((at, at + 6),))).plain.split("\n")[1]
    assert "…" in shown and shown.index("backup") < 50  # the list cuts rows at ~80 cells: "backup" was past it
    near = "- backup at the start stays as it is"
    assert render_hit(_hit(near, ((2, 8),))).plain.split("\n")[1].endswith(near)
