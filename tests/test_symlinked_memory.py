"""A symlinked ``memory/`` (stow, Dropbox) and folder links inside it (issue 22): one rule for reads and writes,
said by ``status`` and ``doctor``; loops, duplicates and links out of the user's tree are skipped and reported."""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.api import MemoryEngine, MemoryFiles
from engine.errors import MemdeckError, PathRefused
from engine.health.checks import diagnose, workspace_temp_files
from engine.memory.saving import FlushError, read_note, save_note
from engine.watch import affects_index, watch_plan
from memdeck.cli import cli
from memdeck.mcp import MemoryService
from tests.helpers import hash_config

DATA = Path(__file__).parent / "data" / "transcripts"
SESSION = "7c1e9a42-5b3d-4f0e-9a1b-2c3d4e5f6a7b"


@dataclass
class Tree:
    root: Path
    workspace: Path

    @property
    def memory(self) -> Path:
        return self.workspace / "memory"


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "MEMORY.md").write_text("# Memory\n\n- tea\n", encoding="utf-8")
    return Tree(tmp_path, ws)


def _note(folder: Path, name: str, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(f"# {name}\n\n- {text}\n", encoding="utf-8")


def test_a_stowed_memory_folder_is_indexed_and_a_second_flush_adds_nothing(tree: Tree, monkeypatch: pytest.MonkeyPatch
                                                                           ) -> None:
    dotfiles = tree.root / "dotfiles" / "agent" / "memory"  # stow: memory -> ~/dotfiles/agent/memory, outside
    _note(dotfiles, "2026-01-05.md", "the heron nests by the pier")
    tree.memory.symlink_to(dotfiles)
    sessions = tree.root / "sessions"
    sessions.mkdir()
    shutil.copy(DATA / "chat_preferences.jsonl", sessions / f"{SESSION}.jsonl")
    home = tree.root / "home"
    home.mkdir()
    (home / "config.toml").write_text(f'sessions_dir = "{sessions}"\n[embedding]\nprovider = "hash"\n')
    monkeypatch.setenv("MEMDECK_HOME", str(home))
    base = ["--workspace", str(tree.workspace)]
    run = CliRunner().invoke

    first = run(cli, [*base, "flush", SESSION[:4], "--extractive"])
    assert first.exit_code == 0, first.output
    second = run(cli, [*base, "flush", SESSION[:4], "--extractive"])
    assert second.exit_code == 0 and "Nothing new to store" in second.output, second.output
    daily = [p for p in dotfiles.iterdir() if p.name != "2026-01-05.md"]
    assert len(daily) == 1 and daily[0].read_text().count("Memory flush from session") == 1

    found = json.loads(run(cli, [*base, "search", "--json", "heron nests pier"]).output)
    assert found["results"][0]["path"] == "memory/2026-01-05.md"
    assert run(cli, [*base, "get", "memory/2026-01-05.md#L3"]).output == "- the heron nests by the pier\n"

    status = run(cli, [*base, "status"]).output
    assert f"Memory folder: memory/ is a symlink to {dotfiles.resolve()}: followed (a folder you own)" in status
    assert "Indexed: 3/3 files" in status
    payload = json.loads(run(cli, [*base, "status", "--json"]).output)
    assert payload["memory_folder"].startswith("memory/ is a symlink to") and payload["memory_folder"].endswith(
        "followed (a folder you own)")
    assert payload["folder_links"] == [{"path": "memory", "target": str(dotfiles.resolve()), "followed": True,
                                        "reason": "a folder you own", "text": payload["memory_folder"]}]
    report = diagnose(hash_config(tree.workspace))
    links = next(f for f in report.findings if f.check == "symlinks")
    assert links.severity == "ok" and links.message == payload["memory_folder"]


def _layout(tree: Tree, case: str) -> tuple[set[str], dict[str, bool], str | None]:
    """Build one link case; return (the rels the scan must list, {link rel: followed}, a rel written through)."""
    outside = tree.root / "outside"
    _note(outside, "o.md", "outside the tree")
    if case == "memory->inside-workspace":
        _note(tree.workspace / "notes" / "memory", "a.md", "inside")
        tree.memory.symlink_to(tree.workspace / "notes" / "memory")
        return {"MEMORY.md", "memory/a.md"}, {"memory": True}, "memory/new.md"
    if case == "memory->dangling":
        tree.memory.symlink_to(tree.root / "gone")
        return {"MEMORY.md"}, {"memory": False}, None
    if case == "memory->a-file":
        (tree.root / "plain.md").write_text("x\n")
        tree.memory.symlink_to(tree.root / "plain.md")
        return {"MEMORY.md"}, {"memory": False}, None
    if case == "memory->holds-the-workspace":
        tree.memory.symlink_to(tree.root)
        return {"MEMORY.md"}, {"memory": False}, None
    if case == "memory->itself":  # a loop of links: memory -> memory
        tree.memory.symlink_to("memory")
        return {"MEMORY.md"}, {"memory": False}, None
    _note(tree.memory, "m.md", "memory itself")
    _note(tree.memory / "sub", "s.md", "a real subfolder")
    if case == "inner->workspace-folder":
        _note(tree.workspace / "projects", "p.md", "a project")
        (tree.memory / "projects").symlink_to(Path("..") / "projects")
        return {"MEMORY.md", "memory/m.md", "memory/sub/s.md", "memory/projects/p.md"}, {"memory/projects": True}, \
            "memory/projects/new.md"
    if case == "inner->outside":
        (tree.memory / "out").symlink_to(outside)
        return {"MEMORY.md", "memory/m.md", "memory/sub/s.md"}, {"memory/out": False}, None
    if case == "inner->loop":
        (tree.memory / "up").symlink_to(Path(".."))
        (tree.memory / "sub" / "self").symlink_to(tree.memory)
        return {"MEMORY.md", "memory/m.md", "memory/sub/s.md"}, {"memory/up": False, "memory/sub/self": False}, None
    if case == "inner->duplicate":
        (tree.memory / "again").symlink_to(tree.memory / "sub")
        return {"MEMORY.md", "memory/m.md", "memory/sub/s.md"}, {"memory/again": False}, None
    if case == "inner->same-folder-twice":
        _note(tree.workspace / "shared", "x.md", "shared")
        (tree.memory / "a").symlink_to(tree.workspace / "shared")
        (tree.memory / "b").symlink_to(tree.workspace / "shared")
        return {"MEMORY.md", "memory/m.md", "memory/sub/s.md", "memory/a/x.md"}, {"memory/a": True, "memory/b": False}, \
            None
    if case == "inner->dangling":  # a Dropbox folder not synced yet: no folder to see, reported all the same
        (tree.memory / "dropbox").symlink_to(tree.root / "not-synced-yet")
        return {"MEMORY.md", "memory/m.md", "memory/sub/s.md"}, {"memory/dropbox": False}, None
    if case == "inner->itself":  # memory/a -> a: ELOOP on every look
        (tree.memory / "a").symlink_to("a")
        return {"MEMORY.md", "memory/m.md", "memory/sub/s.md"}, {"memory/a": False}, None
    raise AssertionError(case)


CASES = ["memory->inside-workspace", "memory->dangling", "memory->a-file", "memory->holds-the-workspace",
         "memory->itself", "inner->workspace-folder", "inner->outside", "inner->loop", "inner->duplicate",
         "inner->same-folder-twice", "inner->dangling", "inner->itself"]


@pytest.mark.parametrize("case", CASES)
def test_one_rule_for_listing_reading_writing_and_reporting(tree: Tree, case: str) -> None:
    listed, links, written = _layout(tree, case)
    config = hash_config(tree.workspace)
    engine = MemoryEngine(config)
    try:
        scan = engine.scan()
        assert {f.rel for f in scan.files} == listed
        assert {link.rel: link.followed for link in scan.links} == links
        for link in scan.links:  # a skipped folder link is reported, like a skipped file symlink
            assert (link.describe() in scan.issues) is (not link.followed)
        status = engine.status()
        assert {link.rel: link.followed for link in status.folder_links} == links
        assert [i for i in status.issues if "folder symlink" in i] == [
            link.describe() for link in scan.links if not link.followed]
        # Reads agree with the listing: every listed file reads, nothing under a skipped link does.
        for rel in listed:
            assert engine.get(rel).text
            # The note's real path (where an editor opened it, behind a followed link) reads as the note.
            real = (tree.workspace / rel).resolve()
            assert (engine.get(f"{real}#L3").path, engine.get(f"{real}#L3").text) == (rel, engine.get(f"{rel}#L3").text)
        for rel, followed in links.items():
            if not followed:
                with pytest.raises(PathRefused, match="symlink"):
                    engine.get(f"{rel}/o.md")
        # Writes agree: a note written through a followed link is listed and found; a skipped one is refused.
        if written is not None:
            engine.append_note(written, "- written through the link")
            engine.sync(embed=False)
            assert written in {f.rel for f in engine.scan().files}
            assert engine.search("written through the link", mode="keyword").results[0].path == written
        for rel, followed in links.items():
            if not followed:
                with pytest.raises((PathRefused, MemdeckError)):
                    engine.append_note(f"{rel}/new.md" if rel != "memory" else "memory/new.md", "- lost")
    finally:
        engine.close()
    doctor = next(f for f in diagnose(config).findings if f.check == "symlinks")
    assert doctor.severity == ("ok" if all(links.values()) else "warn")
    assert set(doctor.details) >= {link.describe() for link in scan.links}
    unreadable = next((f for f in diagnose(config).findings if f.check == "unreadable"), None)
    assert unreadable is None or not any("folder symlink" in d for d in unreadable.details)  # said once, above


def test_a_flush_is_refused_when_memory_is_a_link_memdeck_does_not_follow(tree: Tree) -> None:
    tree.memory.symlink_to(tree.root / "gone")
    memory = MemoryFiles(hash_config(tree.workspace))
    with pytest.raises(FlushError, match=r"memory/: folder symlink to .* skipped"):
        memory.append_flush(SESSION, "## 10:00 — Memory flush\n\n- x\n", datetime(2026, 1, 5, 10, 0))
    assert not (tree.root / "gone").exists()


def test_a_memory_link_to_another_users_folder_is_not_followed(tree: Tree) -> None:
    target = tree.root / "theirs"
    _note(target, "t.md", "someone else's")
    try:
        os.chown(target, 54321, 54321)
    except PermissionError:
        pytest.skip("changing a folder's owner needs root (CI runs as root)")
    if os.getuid() == 54321:
        pytest.skip("the test user owns it")
    tree.memory.symlink_to(target)
    scan = MemoryFiles(hash_config(tree.workspace)).list_notes()
    assert {f.rel for f in scan.files} == {"MEMORY.md"}
    assert f"memory/: folder symlink to {target.resolve()} skipped (owned by another user)" in scan.issues


def test_the_watcher_follows_a_followed_memory_link(tree: Tree) -> None:
    dotfiles = tree.root / "venv" / "dotfiles" / "memory"  # a skipped folder's name above the target is no skip
    _note(dotfiles, "a.md", "x")
    tree.memory.symlink_to(dotfiles)
    config = hash_config(tree.workspace)
    assert dotfiles.resolve() in watch_plan(config).recursive
    assert affects_index(str(dotfiles.resolve() / "a.md"), config)  # watchers report resolved paths


def test_note_symlinks_are_skipped_and_said_like_folder_links(tree: Tree) -> None:
    """A symlinked ``MEMORY.md`` (stow links files too) or ``memory/x.md``: never read or written (memory_get reads
    no symlinks), said in ``status`` and in ``doctor``'s ``symlinks`` check — a warning, like a skipped folder."""
    outside = tree.root / "dotfiles"
    _note(outside, "MEMORY.md", "curated, stowed")
    _note(outside, "x.md", "a linked note")
    (tree.workspace / "MEMORY.md").unlink()
    (tree.workspace / "MEMORY.md").symlink_to(outside / "MEMORY.md")
    _note(tree.memory, "m.md", "memory itself")
    (tree.memory / "x.md").symlink_to(outside / "x.md")
    config = hash_config(tree.workspace)
    engine = MemoryEngine(config)
    try:
        scan = engine.scan()
        assert {f.rel for f in scan.files} == {"memory/m.md"}
        assert scan.file_links == ("MEMORY.md", "memory/x.md")
        assert {"MEMORY.md: symlink skipped", "memory/x.md: symlink skipped"} <= set(engine.status().issues)
        for rel in ("MEMORY.md", "memory/x.md"):
            with pytest.raises(PathRefused, match="is a symlink"):
                engine.get(rel)
            with pytest.raises(MemdeckError):
                engine.append_note(rel, "- through the link")
    finally:
        engine.close()
    assert (outside / "MEMORY.md").read_text() == "# MEMORY.md\n\n- curated, stowed\n"
    assert (outside / "x.md").read_text() == "# x.md\n\n- a linked note\n"
    findings = {f.check: f for f in diagnose(config).findings}
    links = findings["symlinks"]
    assert links.severity == "warn" and links.message.startswith("2 file symlinks in the memory tree skipped")
    assert {"MEMORY.md: symlink skipped", "memory/x.md: symlink skipped"} <= set(links.details)
    assert "unreadable" not in findings or not any("symlink" in d for d in findings["unreadable"].details)


def _linked_tree(tree: Tree) -> tuple[Path, Path]:
    """``memory/`` stowed into dotfiles, holding ``projects -> <ws>/projects`` (followed) and ``out -> <outside>``
    (skipped); returns (the dotfiles memory folder, the projects folder)."""
    dotfiles = tree.root / "dotfiles" / "memory"
    _note(dotfiles, "a.md", "stowed")
    tree.memory.symlink_to(dotfiles)
    projects = tree.workspace / "projects"
    _note(projects, "p.md", "a project")
    (dotfiles / "projects").symlink_to(projects)
    _note(tree.root / "outside", "o.md", "outside")
    (dotfiles / "out").symlink_to(tree.root / "outside")
    return dotfiles, projects


def test_the_watcher_follows_folder_links_inside_memory_by_the_scan_rule(tree: Tree) -> None:
    dotfiles, projects = _linked_tree(tree)
    config = hash_config(tree.workspace)
    plan = watch_plan(config)
    assert plan.recursive[:2] == (dotfiles.resolve(), projects.resolve())
    assert (tree.root / "outside").resolve() not in plan.recursive
    ws = tree.workspace
    for path, watched in [
        (ws / "memory" / "projects" / "p.md", True),  # reported through the links
        (dotfiles / "projects" / "p.md", True),  # through the inner link, at memory/'s target
        (projects / "p.md", True),  # at the inner link's target (its own watch)
        (dotfiles.resolve() / "a.md", True),
        (ws / "memory" / "out" / "o.md", False),  # past a link the scan skips
        (tree.root / "outside" / "o.md", False),
        (ws / "projects-unlinked.md", False),
        (ws / "MEMORY.md", True),
    ]:
        assert affects_index(str(path), config, plan) is watched, path
        assert affects_index(str(path), config) is watched, path  # the plan made on the spot agrees


def test_a_live_edit_behind_an_inner_folder_link_is_reindexed(tree: Tree) -> None:
    _, projects = _linked_tree(tree)
    service = MemoryService(hash_config(tree.workspace))
    service.engine().sync()
    service.start(warm=False, watch=True)
    try:
        assert service.watching.wait(30)
        before = service.timings.syncs
        (projects / "p.md").write_text("# p\n\n- the okapi census\n", encoding="utf-8")
        assert service.wait_for_sync(before, 30)
        hits = service.engine().search("okapi census", mode="keyword", ensure_fresh=False).results
        assert [h.path for h in hits] == ["memory/projects/p.md"]
    finally:
        service.stop()


def test_unfinished_saves_are_found_where_the_scan_reads(tree: Tree) -> None:
    dotfiles, projects = _linked_tree(tree)
    temps = [dotfiles / ".a.md.x1y2.tmp", projects / ".p.md.x1y2.tmp", tree.root / "outside" / ".o.md.x1y2.tmp"]
    for temp in temps:
        temp.write_text("half a save")
    assert workspace_temp_files(hash_config(tree.workspace), time.time() + 3600) == sorted(temps[:2])


def test_doctor_checks_that_a_followed_memory_link_can_be_written(tree: Tree, monkeypatch: pytest.MonkeyPatch
                                                                   ) -> None:
    dotfiles, _ = _linked_tree(tree)
    real_access = os.access
    target = str(dotfiles.resolve())
    # A read-only target (a synced folder shared read-only); faked: root writes whatever the modes say.
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: False if (str(path) == target and mode & os.W_OK)
                        else real_access(path, mode, **kw))
    finding = next(f for f in diagnose(hash_config(tree.workspace)).findings if f.check == "workspace")
    assert finding.severity == "warn" and f"not writable: {target}" in finding.details


def test_a_link_swapped_in_during_a_save_is_replaced_never_written_through(tree: Tree,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """TOCTOU: the note is swapped for a symlink to a file outside between memdeck's checks and its rename. The
    rename replaces the link itself (rename never follows the last part): the file outside keeps its bytes."""
    _note(tree.memory, "n.md", "before")
    config = hash_config(tree.workspace)
    note = read_note(config, "memory/n.md")
    victim = tree.root / "victim.md"
    victim.write_text("not memdeck's to write\n")
    real_replace = os.replace

    def swap_then_replace(src: str, dst: str | Path) -> None:
        if Path(dst) == tree.memory / "n.md":
            os.unlink(dst)
            os.symlink(victim, dst)
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", swap_then_replace)
    save_note(config, "memory/n.md", note.text.replace("before", "after"), note.stamp)
    assert victim.read_text() == "not memdeck's to write\n"
    assert not (tree.memory / "n.md").is_symlink() and "after" in (tree.memory / "n.md").read_text()
