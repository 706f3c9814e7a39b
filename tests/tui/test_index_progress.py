"""The index status pane while indexing: progress that races the pane's mount, and the vectors count."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

from textual.app import App, ComposeResult
from textual.widgets import ProgressBar

from engine.api import MemoryEngine, Status, SyncProgress
from engine.index.indexer import EMBED_GROUP
from tests.tui.conftest import tui_config
from tui.widgets.index_status import IndexStatus, bootstrap_parts, vector_part


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
def _partly_embedded(workspace: Path, groups: int) -> Status:
    """The demo's status after an index stopped ``groups`` embedding groups in."""
    cancel = threading.Event()

    def stop(p: SyncProgress) -> None:
        if p.phase == "embed" and p.done >= groups * EMBED_GROUP:
            cancel.set()

    with MemoryEngine(tui_config(workspace)) as eng:
        eng.sync(progress=stop, cancel=cancel)
        return eng.status()


def test_vector_part_counts_vectors_in_the_warning_colour_while_some_wait() -> None:
    assert vector_part("ready", False, (1152, 2706)) == ("vectors 1,152/2,706", "$text-warning")
    assert vector_part("vectors 9/56", False) == ("vectors 9/56", "$text-warning")
    assert vector_part("ready", False, (56, 56)) == ("vector: ready", "$text-success")
    assert vector_part("loading", False, (9, 56))[0] == "vector: loading model…"


async def test_the_status_pane_says_vectors_done_of_all_while_embedding_never_ready(demo_workspace: Path) -> None:
    status = _partly_embedded(demo_workspace, 2)
    chunks = status.chunks
    assert status.pending_embeddings == chunks - 2 * EMBED_GROUP
    pane = IndexStatus(id="status")
    app = _Host()
    async with app.run_test(size=(160, 6)) as pilot:
        await app.mount(pane)
        await pilot.pause()
        engine_line = pane.query_one("#status-engine")
        pane.show_status(status, "ready")  # the model is loaded: the engine says "ready", the pane counts
        await pilot.pause()
        assert f"vectors {2 * EMBED_GROUP}/{chunks}" in str(engine_line.render())
        assert "vector: ready" not in str(engine_line.render())
        pane.show_progress("embed", 0, status.pending_embeddings, None, (0, 1000))  # a run resumes
        await pilot.pause()
        bar = pane.query_one("#progress-bar", ProgressBar)
        # on the label's scale: 16 of 98 are in, so the bar starts at 16%, not at 0% beside "16/98"
        assert bar.percentage is not None and abs(bar.percentage - 2 * EMBED_GROUP / chunks) < 0.01
        pane.show_progress("embed", EMBED_GROUP, status.pending_embeddings, None, (500, 1000))  # the run goes on
        await pilot.pause()
        assert f"vectors {3 * EMBED_GROUP}/{chunks}" in str(engine_line.render())
        half = (2 * EMBED_GROUP + status.pending_embeddings / 2) / chunks
        assert bar.percentage is not None and abs(bar.percentage - half) < 0.01
        pane.show_progress("embed", status.pending_embeddings, status.pending_embeddings, None)
        pane.hide_progress()
        pane.show_status(replace(status, pending_embeddings=0, vector_state="ready",
                                 embedded_chunks=chunks), "ready")
        await pilot.pause()
        assert "vector: ready" in str(engine_line.render()) and "vectors " not in str(engine_line.render())
