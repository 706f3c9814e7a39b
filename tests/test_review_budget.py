"""The review proposes what to move out of a MEMORY.md (or USER.md) that OpenClaw cuts at a session's start: one
finding per section to move (largest first, never the first), moved atomically to a memory/*.md note the search
indexes, undone byte for byte — on a built over-limit workspace, through the engine, the CLI and MCP."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from engine.api import MemoryEngine
from engine.bootstrap import bootstrap_budget
from engine.config import load_config
from engine.review.budget import top_sections
from engine.review.model import Finding
from memdeck.cli import cli


def _section(name: str, lines: int, width: int = 60) -> list[str]:
    return ["", f"## {name}"] + [f"- {name.lower()} fact {i}: " + "x" * width for i in range(lines)]


def _memory() -> str:
    """~34k characters: a small first section, three big ones (Projects the largest), small ones: two of the
    big ones must go."""
    out = ["# Memory"]
    out += _section("Preferences", 20)
    out += _section("Projects", 130)
    out += _section("Hosts", 110)
    out += _section("People", 100)
    for n in range(6):
        out += _section(f"Notes {n}", 8)
    return "\n".join(out) + "\n"


def _engine(tmp_path: Path, memory: str, user: str | None = None) -> MemoryEngine:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_bytes(memory.encode("utf-8"))
    (ws / "memory" / "2026-11-30.md").write_text("# 2026-11-30\n\n- lunch with Priya\n", encoding="utf-8")
    if user is not None:
        (ws / "USER.md").write_text(user, encoding="utf-8")
    eng = MemoryEngine(load_config(workspace=ws, home=tmp_path / "home",
                                   overrides={"embedding": {"provider": "none"}}))
    eng.sync()
    return eng


def _budget(eng: MemoryEngine) -> list[Finding]:
    return list(eng.review(kind="budget").findings)


def test_an_over_limit_memory_gets_the_largest_sections_that_bring_it_under(tmp_path: Path) -> None:
    text = _memory()
    eng = _engine(tmp_path, text)
    try:
        memory = bootstrap_budget(eng.config.workspace).file("MEMORY.md")
        assert memory is not None and memory.truncated and memory.chars > 20_000
        found = _budget(eng)
        headings = [f.items[0].text.split("\n", 1)[0] for f in found]
        assert headings == ["## Projects", "## Hosts"]  # the largest first, as many as it takes
        assert "## Preferences" not in headings  # never the first section
        assert found[0].target == "memory/projects.md"
        assert found[0].reason.startswith(f"MEMORY.md is {memory.chars:,} characters; OpenClaw injects "
                                          f"{memory.injected:,} of it")
        assert "move `## Projects` (" in found[0].reason and "to memory/projects.md" in found[0].reason
        # exactly as many as it takes: without the last one picked it would still be cut
        sizes = {s.heading: s for s in top_sections(text)}
        moved = sum(len("\n".join(text.split("\n")[sizes[h[3:]].start:sizes[h[3:]].end])) for h in headings)
        assert memory.chars - moved <= 20_000
        assert all(f.confident and f.score == 1.0 for f in found)
        payload = found[0].to_json()
        assert payload["kind"] == "budget" and payload["target"] == "memory/projects.md"
    finally:
        eng.close()


def test_moving_a_section_keeps_every_line_and_undo_restores_both_files(tmp_path: Path) -> None:
    text = _memory().replace("\n", "\r\n")  # CRLF: the bytes must come back exactly
    eng = _engine(tmp_path, text)
    ws = eng.config.workspace
    try:
        finding = _budget(eng)[0]
        section = finding.items[0].text.split("\n")
        done = eng.review_apply(finding.id, "move")
        assert set(done.files) == {"MEMORY.md", "memory/projects.md"}
        after = (ws / "MEMORY.md").read_bytes().decode()
        note = (ws / "memory" / "projects.md").read_text(encoding="utf-8")
        assert "## Projects\r\n- Moved to memory/projects.md on " in after
        assert "projects fact 0" not in after
        for line in section[1:]:  # nothing lost: every moved line is in the note
            assert line in note
        assert note.startswith("# Projects\n\nMoved from MEMORY.md on ")
        hits = eng.search("projects fact 42", mode="keyword", corpus="memory").results
        assert hits and hits[0].path == "memory/projects.md"  # memory_search still finds it
        assert eng.review_last_action() == done.summary
        eng.review_undo()
        assert (ws / "MEMORY.md").read_bytes() == text.encode("utf-8")
        assert not (ws / "memory" / "projects.md").exists()
    finally:
        eng.close()


def test_a_move_into_an_existing_note_appends_and_a_changed_section_is_refused(tmp_path: Path) -> None:
    eng = _engine(tmp_path, _memory())
    ws = eng.config.workspace
    try:
        (ws / "memory" / "projects.md").write_text("# Projects\n\n- older project note\n", encoding="utf-8")
        finding = _budget(eng)[0]
        eng.review_apply(finding.id, "move")
        note = (ws / "memory" / "projects.md").read_text(encoding="utf-8")
        assert note.startswith("# Projects\n\n- older project note\n\n## Projects\n- projects fact 0")
        eng.review_undo()
        assert (ws / "memory" / "projects.md").read_text(encoding="utf-8") == "# Projects\n\n- older project note\n"
        # the section changes between the review and the action: nothing is written
        again = _budget(eng)[0]
        assert again.id == finding.id  # undone: the same finding again
        mem = (ws / "MEMORY.md").read_text(encoding="utf-8").replace("projects fact 3:", "projects fact 3 (new):")
        (ws / "MEMORY.md").write_text(mem, encoding="utf-8")
        from engine.review.actions import StatementChanged

        try:
            eng.review_move(again)
        except StatementChanged:
            pass
        else:
            raise AssertionError("a changed section was moved")
        assert (ws / "MEMORY.md").read_text(encoding="utf-8") == mem
        assert (ws / "memory" / "projects.md").read_text(encoding="utf-8") == "# Projects\n\n- older project note\n"
    finally:
        eng.close()


def test_a_memory_within_its_limit_and_user_md_over_its_4000(tmp_path: Path) -> None:
    small = "# Memory\n\n## A\n- one\n\n## B\n- two\n"
    user = "# User\n\n## Name\n- Ana\n" + "".join(f"\n## Part {n}\n" + "- detail " * 90 + "\n" for n in range(6))
    eng = _engine(tmp_path, small, user=user)
    try:
        found = _budget(eng)
        assert found and all(f.items[0].path == "USER.md" for f in found)
        assert found[0].reason.startswith("USER.md is ") and "## Name" not in [f.items[0].text[:7] for f in found]
    finally:
        eng.close()


def test_the_cli_and_mcp_show_the_finding_and_the_cli_moves_it(tmp_path: Path) -> None:
    eng = _engine(tmp_path, _memory())
    ws = eng.config.workspace
    eng.close()
    runner = CliRunner()
    env = {"MEMDECK_EMBEDDING_PROVIDER": "none"}
    out = runner.invoke(cli, ["-w", str(ws), "review"], env=env)
    assert out.exit_code == 0, out.output
    assert "Cut at a session's start: move out of MEMORY.md/USER.md" in out.output
    assert "move `## Projects`" in out.output and "memory/projects.md" in out.output
    payload = json.loads(runner.invoke(cli, ["-w", str(ws), "review", "--json", "--kind", "budget"], env=env).output)
    first = payload["findings"][0]
    assert first["kind"] == "budget" and first["target"] == "memory/projects.md"
    from memdeck.mcp import MemoryService

    service = MemoryService(load_config(workspace=ws, home=tmp_path / "home",
                                        overrides={"embedding": {"provider": "none"}}))
    try:
        outcome = service.review({"kind": "budget"})
    finally:
        service.stop()
    assert first["id"] in json.dumps(outcome.payload)
    moved = runner.invoke(cli, ["-w", str(ws), "review", "apply", first["id"], "--action", "move"], env=env)
    assert moved.exit_code == 0, moved.output
    assert (ws / "memory" / "projects.md").is_file()
    assert runner.invoke(cli, ["-w", str(ws), "review", "undo"], env=env).exit_code == 0
    assert not (ws / "memory" / "projects.md").exists()


async def test_the_review_screen_lists_the_budget_finding_and_v_moves_it_u_undoes(tmp_path: Path) -> None:
    from tests.tui.conftest import make_app, settle, tui_config
    from tests.tui.test_review import after_action, open_review, pick

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    original = _memory().encode("utf-8")
    (ws / "MEMORY.md").write_bytes(original)
    app = make_app(tui_config(ws, provider="none"))
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_review(pilot)
        finding = await pick(pilot, screen, "budget")
        assert finding.target == "memory/projects.md"
        listing = screen.query_one("#review-list")
        assert any("Cut at session start" in str(listing.get_option_at_index(i).prompt)  # type: ignore[attr-defined]
                   for i in range(listing.option_count))  # type: ignore[attr-defined]
        await pilot.press("v")
        await after_action(pilot, screen)
        assert (ws / "memory" / "projects.md").is_file()
        assert "- Moved to memory/projects.md on " in (ws / "MEMORY.md").read_text(encoding="utf-8")
        await pilot.press("u")
        await after_action(pilot, screen)
        await settle(pilot)
        assert (ws / "MEMORY.md").read_bytes() == original
        assert not (ws / "memory" / "projects.md").exists()
