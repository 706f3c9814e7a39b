"""A symlinked ``memory/`` (stow, Dropbox) and folder links inside it (issue 22): one rule for reads and writes,
said by ``status`` and ``doctor``; loops, duplicates and links out of the user's tree are skipped and reported."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.api import MemoryEngine, MemoryFiles
from engine.errors import MemdeckError, PathRefused
from engine.health.checks import diagnose
from engine.memory.notes import FlushError
from engine.watch import affects_index, watch_plan
from memdeck.cli import cli
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
    raise AssertionError(case)


CASES = ["memory->inside-workspace", "memory->dangling", "memory->a-file", "memory->holds-the-workspace",
         "inner->workspace-folder", "inner->outside", "inner->loop", "inner->duplicate", "inner->same-folder-twice"]


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
    dotfiles = tree.root / "dotfiles" / "memory"
    _note(dotfiles, "a.md", "x")
    tree.memory.symlink_to(dotfiles)
    config = hash_config(tree.workspace)
    assert dotfiles.resolve() in watch_plan(config).recursive
    assert affects_index(str(dotfiles.resolve() / "a.md"), config)  # watchers report resolved paths
