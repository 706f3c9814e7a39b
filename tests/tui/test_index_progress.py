"""The index status pane while indexing: progress that races the pane's mount, and the vectors count."""

from __future__ import annotations

from pathlib import Path

from textual.app import App, ComposeResult

from tui.widgets.index_status import IndexStatus, bootstrap_parts


class _Host(App[None]):
    """Just the pane, mounted later than the first progress message (as the app can be, on start-up or TSTP/CONT)."""

    def compose(self) -> ComposeResult:
        yield from ()


async def test_progress_before_the_pane_is_mounted_is_kept_not_a_mount_error() -> None:
    pane = IndexStatus(id="status")
    pane.show_progress("embed", 5, 56, None)  # not in the DOM yet: this used to mount into it and raise MountError
    assert pane.indexing
    app = _Host()
    async with app.run_test(size=(100, 6)) as pilot:
        await app.mount(pane)
        await pilot.pause()
        await pilot.pause()
        assert app.query_one("#status-progress").display and not app.query_one("#status-index").display
        assert "embedding chunks 5/56" in str(app.query_one("#progress-label").render())
        pane.show_progress("embed", 9, 56, None)
        await pilot.pause()
        assert "embedding chunks 9/56" in str(app.query_one("#progress-label").render())


async def test_progress_hidden_before_the_pane_is_mounted_never_shows() -> None:
    pane = IndexStatus(id="status")
    pane.show_progress("embed", 5, 56, None)
    pane.hide_progress()
    app = _Host()
    async with app.run_test(size=(100, 6)) as pilot:
        await app.mount(pane)
        await pilot.pause()
        await pilot.pause()
        assert not pane.query("#status-progress") and pane.query_one("#status-index").display
        assert not pane.indexing


async def test_the_pane_says_what_of_memory_md_the_agent_gets(tmp_path: Path) -> None:
    from engine.bootstrap import bootstrap_budget

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "USER.md").write_text("Name: Ana\n", encoding="utf-8")
    body = "\n".join(f"## Topic {s}\n" + "\n".join(f"- fact {s}.{i} about host {s}" for i in range(20))
                     for s in range(60))
    (ws / "MEMORY.md").write_text("# Memory\n\n" + body + "\n", encoding="utf-8")
    budget = bootstrap_budget(ws, config_path=tmp_path / "absent.json")
    memory = budget.file("MEMORY.md")
    assert memory is not None and memory.truncated
    parts = bootstrap_parts(budget)
    text = "".join(p if isinstance(p, str) else p[0] if isinstance(p, tuple) else str(p) for p in parts)
    assert f"agent gets {memory.injected:,} of {memory.chars:,} chars of MEMORY.md" in text
    assert "sections cut" in text and "USER.md 9/4,000 to the agent" in text
    assert ("$text-warning" in [p[1] for p in parts if isinstance(p, tuple)])
