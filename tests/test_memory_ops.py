"""One engine API for every memory operation: the same first line, the same rules, atomic writes, every door."""

from __future__ import annotations

import json
import os
import re
import shutil
from datetime import date, datetime, time
from pathlib import Path

import pytest

import engine.textio as textio_module
from engine.api import (
    FolderSource,
    MemoryEngine,
    MemoryFiles,
    SaveConflict,
    SessionSource,
    daily_heading,
    dated_note,
)
from engine.config import load_config
from engine.errors import MemdeckError
from engine.sessions.model import Transcript
from memdeck.cli_sessions import SessionsContext, run_flush
from memdeck.mcp import MemoryService
from tests.helpers import hash_config
from tui.bridge import Bridge

REPO = Path(__file__).resolve().parents[1]
SESSION = "9b2d4e71-5c3a-4f88-b6e0-7a1c2d3e4f51"
DAY = date(2026, 2, 10)


def _fresh(demo_workspace: Path, name: str) -> Path:
    """A copy of the demo workspace with no note for :data:`DAY` (so each door creates it)."""
    target = demo_workspace.parent / name
    shutil.copytree(demo_workspace, target)
    assert not (target / "memory" / f"{DAY:%Y-%m-%d}.md").exists()
    return target


# -- the same first line from every door -----------------------------------------------------
def test_every_door_gives_a_new_daily_note_the_same_first_line(demo_workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rel = f"memory/{DAY:%Y-%m-%d}.md"

    cli_ws = _fresh(demo_workspace, "cli")
    ctx = SessionsContext(workspace=cli_ws, sessions_dir=cli_ws / "sessions", home=cli_ws.parent / "cli-home")
    assert run_flush(ctx, "9b2d", method="extractive", day="today",
                     now=datetime.combine(DAY, time(12, 0)).astimezone()) == 0
    capsys.readouterr()

    tui_ws = _fresh(demo_workspace, "tui")
    created_rel, created = Bridge(load_config(workspace=tui_ws)).create_daily(DAY)  # what ctrl+n calls
    assert (created_rel, created) == (rel, True)

    mcp_ws = _fresh(demo_workspace, "mcp")
    service = MemoryService(hash_config(mcp_ws), allow_write=True)
    out = service.append({"text": "- written by an agent", "file": rel})
    service.stop()
    assert not out.is_error and out.payload["created"] is True

    firsts = {door: (ws / rel).read_text(encoding="utf-8").split("\n")[0] for door, ws in
              (("cli", cli_ws), ("tui", tui_ws), ("mcp", mcp_ws))}
    assert firsts == dict.fromkeys(firsts, daily_heading(DAY))
    assert daily_heading(DAY) == "# 2026-02-10 — Tuesday, 10 February 2026"
    # The form the demo's own daily notes have.
    demo_first = (demo_workspace / "memory" / "2026-11-27.md").read_text(encoding="utf-8").split("\n")[0]
    assert demo_first == daily_heading(date(2026, 11, 27))


def test_creating_the_daily_note_never_overwrites_it(tmp_path: Path) -> None:
    memory = MemoryFiles(load_config(workspace=tmp_path))
    assert memory.create_daily(DAY) == (f"memory/{DAY:%Y-%m-%d}.md", True)
    target = tmp_path / "memory" / f"{DAY:%Y-%m-%d}.md"
    target.write_text("mine\n", encoding="utf-8")
    assert memory.create_daily(DAY) == (f"memory/{DAY:%Y-%m-%d}.md", False)
    assert target.read_text(encoding="utf-8") == "mine\n"
    assert sorted(os.listdir(target.parent)) == [target.name]  # no temp file left behind


# -- one rule each ----------------------------------------------------------------------------
def test_one_is_known_rule() -> None:
    defs = [f"{path.relative_to(REPO)}:{number}"
            for folder in ("engine", "tui", "memdeck", "tests")
            for path in sorted((REPO / folder).rglob("*.py"))
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if re.search(r"\bdef\s+is_known\b", line)]
    assert len(defs) == 1 and defs[0].startswith("engine/memory/drafting.py:"), defs


def test_the_watch_rules_are_the_engines(demo_workspace: Path) -> None:
    import engine.watch
    import tui.watch

    assert tui.watch.is_relevant is engine.watch.is_relevant
    assert tui.watch.watch_plan is engine.watch.watch_plan
    assert tui.watch.WATCH_DEBOUNCE_MS == engine.watch.WATCH_DEBOUNCE_MS
    mcp_source = (REPO / "memdeck" / "mcp.py").read_text(encoding="utf-8")
    assert "debounce" not in mcp_source and "from watchfiles" not in mcp_source
    config = hash_config(demo_workspace)
    service = MemoryService(config)
    for rel in ("MEMORY.md", "memory/x.md", "AGENTS.md", "memory/.x.md.abc.tmp", "sessions/a.jsonl"):
        path = str(demo_workspace / rel)
        assert service.is_watched(path) is engine.watch.affects_index(path, config)


@pytest.mark.parametrize(
    ("rel", "day", "slug"),
    [("memory/2026-11-27.md", date(2026, 11, 27), None),
     ("memory/2026-11-20-release-checklist.md", date(2026, 11, 20), "release-checklist"),
     ("memory/2026-13-45.md", None, None), ("memory/projects/2026-01-01.md", None, None),
     ("memory/2026-01-01.bak.md", None, None), ("MEMORY.md", None, None)],
)
def test_dated_note_names(rel: str, day: date | None, slug: str | None) -> None:
    dated = dated_note(rel)
    if day is None:
        assert dated is None
    else:
        assert dated is not None and (dated.day, dated.slug) == (day, slug)


# -- notes ------------------------------------------------------------------------------------
def test_save_conflict_carries_the_disk_text(demo_workspace: Path) -> None:
    memory = MemoryFiles(load_config(workspace=demo_workspace))
    note = memory.read_note("MEMORY.md")
    (demo_workspace / "MEMORY.md").write_text("someone else\n", encoding="utf-8")
    with pytest.raises(SaveConflict) as caught:
        memory.save_note("MEMORY.md", "mine\n", note.stamp)
    assert caught.value.disk_text == "someone else\n" and caught.value.rel == "MEMORY.md"
    again = memory.save_note("MEMORY.md", "mine\n", memory.disk_stamp("MEMORY.md"))
    assert (demo_workspace / "MEMORY.md").read_text(encoding="utf-8") == "mine\n"
    assert again.stamp == memory.disk_stamp("MEMORY.md")


def test_a_save_racing_another_writer_writes_nothing(demo_workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    memory = MemoryFiles(load_config(workspace=demo_workspace))
    target = demo_workspace / "MEMORY.md"
    note = memory.read_note("MEMORY.md")
    real_write_temp = textio_module._write_temp

    def racing_write_temp(folder: Path, name: str, data: bytes, mode: int) -> str:
        tmp = real_write_temp(folder, name, data, mode)
        target.write_text("typed by an agent meanwhile\n", encoding="utf-8")  # after the check, before the rename
        return tmp

    monkeypatch.setattr(textio_module, "_write_temp", racing_write_temp)
    with pytest.raises(SaveConflict) as caught:
        memory.save_note("MEMORY.md", "mine\n", note.stamp)
    assert caught.value.disk_text == "typed by an agent meanwhile\n"
    assert target.read_text(encoding="utf-8") == "typed by an agent meanwhile\n"
    assert not [p for p in os.listdir(demo_workspace) if p.endswith(".tmp")]


def test_copies_topics_and_renames_never_overwrite(tmp_path: Path) -> None:
    memory = MemoryFiles(load_config(workspace=tmp_path))
    assert memory.create_topic("Travel plans") == "memory/travel-plans.md"
    assert (tmp_path / "memory" / "travel-plans.md").read_text(encoding="utf-8") == "# Travel plans\n\n"
    with pytest.raises(MemdeckError, match="already exists"):
        memory.create_topic("travel plans")
    when = datetime(2026, 2, 10, 9, 30)
    first = memory.write_copy("memory/travel-plans.md", "one\n", when)
    second = memory.write_copy("memory/travel-plans.md", "two\n", when)
    # Issue 16 #6: conflict copies live in memdeck's data dir, where neither memdeck nor OpenClaw indexes them.
    copies = memory.config.home / "conflict-copies" / "memory"
    assert (first, second) == (copies / "travel-plans.mine-20260210-093000.md",
                               copies / "travel-plans.mine-20260210-093000-2.md")
    assert first.read_text(encoding="utf-8") == "one\n"
    assert not list((tmp_path / "memory").glob("*.mine-*"))
    assert memory.create_topic("taken") == "memory/taken.md"
    with pytest.raises(MemdeckError, match="already exists"):
        memory.rename_note("memory/travel-plans.md", "taken")
    assert memory.rename_note("memory/travel-plans.md", "trips") == "memory/trips.md"
    assert not (tmp_path / "memory" / "travel-plans.md").exists()
    memory.delete_note("memory/trips.md")
    assert not (tmp_path / "memory" / "trips.md").exists()


def test_append_note_reports_the_lines_it_wrote(tmp_path: Path) -> None:
    memory = MemoryFiles(load_config(workspace=tmp_path))
    first = memory.append_note(None, "- one\n", DAY)
    assert (first.rel, first.start_line, first.end_line, first.created) == (f"memory/{DAY:%Y-%m-%d}.md", 1, 3, True)
    second = memory.append_note(first.rel, "- two\n- three")
    assert (second.start_line, second.end_line, second.created, second.citation) == (
        5, 6, False, f"{first.rel}#L5-L6")
    topic = memory.append_note("memory/projects/x.md", "- plain")
    assert (tmp_path / topic.rel).read_text(encoding="utf-8") == "- plain\n"  # only daily notes get a heading


# -- sessions ---------------------------------------------------------------------------------
def test_the_folder_is_a_session_source(demo_workspace: Path) -> None:
    source: SessionSource = FolderSource(demo_workspace / "sessions")
    assert source.describe().available and source.describe().kind == "folder"
    infos = source.list_sessions()
    assert SESSION in [info.session_id for info in infos]
    assert source.find("9b2d").name == f"{SESSION}.jsonl"
    assert source.read("9b2d").session_id == SESSION
    entry = source.store_entry("9b2d")
    assert entry is not None and entry.session_key
    missing = FolderSource(demo_workspace / "nowhere").describe()
    assert not missing.available and "no sessions folder" in missing.detail


def test_a_head_read_keeps_the_files_line_numbers(demo_workspace: Path) -> None:
    memory = MemoryFiles(load_config(workspace=demo_workspace, sessions_dir=demo_workspace / "sessions"))
    path = demo_workspace / "sessions" / f"{SESSION}.jsonl"
    whole = memory.read_session(path)
    assert memory.read_session_head(path, limit=whole.size) is None  # small enough: read it whole
    head = memory.read_session_head(path, limit=whole.size // 2)
    assert isinstance(head, Transcript) and not head.complete and head.size == whole.size
    assert 0 < len(head.entries) < len(whole.entries)
    assert head.entries == whole.entries[: len(head.entries)]
    assert not head.skipped  # the line cut at the limit is left out, not reported as truncated


# -- drafting ---------------------------------------------------------------------------------
def test_drafts_skip_what_the_index_holds(demo_workspace: Path) -> None:
    config = hash_config(demo_workspace, sessions_dir=str(demo_workspace / "sessions"))
    with MemoryEngine(config) as engine:
        transcript = engine.read_session("9b2d")
        without = MemoryFiles(config).draft_flush(transcript)
        draft = engine.draft_flush(transcript)
    assert [i.line for i in without.items] == [7, 8, 20]
    assert [i.line for i in draft.items] == [20]  # the uv preference is MEMORY.md's line 14 already
    assert draft.skipped_known == 2 and not draft.warnings


def test_a_broken_known_check_costs_a_warning_not_the_draft(demo_workspace: Path) -> None:
    memory = MemoryFiles(load_config(workspace=demo_workspace, sessions_dir=demo_workspace / "sessions"))

    def broken(statement: str) -> bool:
        raise MemdeckError("index locked")

    draft = memory.draft_flush(memory.read_session("9b2d"), is_known=broken)
    assert len(draft.items) == 3 and draft.skipped_known == 0
    assert any("index locked" in warning for warning in draft.warnings)


def test_cli_flush_json_matches_the_engine(demo_workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = hash_config(demo_workspace, sessions_dir=str(demo_workspace / "sessions"))
    with MemoryEngine(config) as engine:
        ctx = SessionsContext(workspace=demo_workspace, sessions_dir=demo_workspace / "sessions",
                              home=config.home, is_known=engine.knows, config=config)
        assert run_flush(ctx, "9b2d", dry_run=True, as_json=True) == 0
        payload = json.loads(capsys.readouterr().out)
        draft = engine.draft_flush(engine.read_session("9b2d"))
    assert [{k: i[k] for k in ("text", "kind", "line")} for i in payload["items"]] == [
        {"text": i.text, "kind": i.kind, "line": i.line} for i in draft.items]
    assert all(i["saidAt"] for i in payload["items"])  # each item carries the time it was said
    assert payload["skippedKnown"] == draft.skipped_known
