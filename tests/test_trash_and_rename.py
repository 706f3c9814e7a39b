"""Deleting into memdeck's trash and back, renames that say exactly where a file goes, copies kept aside."""

from __future__ import annotations

import errno
import json
import os
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest

from engine.api import MemoryFiles
from engine.config import load_config
from engine.errors import MemdeckError, PathRefused


def _memory(workspace: Path) -> MemoryFiles:
    (workspace / "memory" / "projects").mkdir(parents=True, exist_ok=True)
    (workspace / "MEMORY.md").write_text("# Long-term\n\n- prefers tea\n", encoding="utf-8")
    (workspace / "memory" / "projects" / "heron.md").write_text("# Heron\n", encoding="utf-8")
    return MemoryFiles(load_config(workspace=workspace))


def test_delete_moves_the_file_to_the_trash_and_undo_puts_it_back(tmp_path: Path) -> None:
    memory = _memory(tmp_path / "ws")
    original = (tmp_path / "ws" / "MEMORY.md").read_bytes()
    deleted = memory.delete_note("MEMORY.md")
    assert not (tmp_path / "ws" / "MEMORY.md").exists()
    trash = memory.config.home / "trash"
    assert deleted.trashed == trash / deleted.entry / "MEMORY.md" and deleted.trashed.read_bytes() == original
    record = json.loads((trash / deleted.entry / "deleted.json").read_text(encoding="utf-8"))
    assert record["rel"] == "MEMORY.md" and record["path"] == str(tmp_path / "ws" / "MEMORY.md")
    assert stat.S_IMODE(trash.stat().st_mode) == 0o700
    assert [d.rel for d in memory.list_deleted()] == ["MEMORY.md"]
    restored = memory.restore_deleted()
    assert restored.rel == "MEMORY.md"
    assert (tmp_path / "ws" / "MEMORY.md").read_bytes() == original
    assert memory.list_deleted() == [] and not (trash / deleted.entry).exists()
    with pytest.raises(MemdeckError, match="nothing to restore"):
        memory.restore_deleted()


def test_undo_takes_the_latest_delete_and_never_overwrites(tmp_path: Path) -> None:
    memory = _memory(tmp_path / "ws")
    first = memory.delete_note("memory/projects/heron.md")
    (tmp_path / "ws" / "memory" / "projects").rmdir()  # the folder went too: undo makes it again
    later = datetime.now(UTC).replace(year=2099)
    from engine.memory.trash import delete_note

    second = delete_note(memory.config, "MEMORY.md", now=later)
    assert [d.entry for d in memory.list_deleted()] == [second.entry, first.entry]
    (tmp_path / "ws" / "MEMORY.md").write_text("a new one meanwhile\n", encoding="utf-8")
    with pytest.raises(MemdeckError, match="exists again"):
        memory.restore_deleted()
    assert second.trashed.is_file(), "the deleted version stays in the trash"
    assert (tmp_path / "ws" / "MEMORY.md").read_text(encoding="utf-8") == "a new one meanwhile\n"
    assert memory.restore_deleted(first.entry).rel == "memory/projects/heron.md"
    assert (tmp_path / "ws" / "memory" / "projects" / "heron.md").read_text(encoding="utf-8") == "# Heron\n"


def test_the_trash_of_another_workspace_is_not_offered(tmp_path: Path) -> None:
    one = _memory(tmp_path / "one")
    two = _memory(tmp_path / "two")
    one.delete_note("MEMORY.md")
    assert two.list_deleted() == []
    with pytest.raises(MemdeckError):
        two.restore_deleted()


def test_delete_across_file_systems_copies_then_removes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    memory = _memory(tmp_path / "ws")
    real_link = os.link

    def no_cross_device_links(src: object, dst: object, *args: object, **kwargs: object) -> None:
        if ".tmp" not in str(src):  # create_new_file's own temp-file link stays (same folder)
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        real_link(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "link", no_cross_device_links)
    deleted = memory.delete_note("memory/projects/heron.md")
    assert deleted.trashed.read_text(encoding="utf-8") == "# Heron\n"
    assert not (tmp_path / "ws" / "memory" / "projects" / "heron.md").exists()
    memory.restore_deleted()
    assert (tmp_path / "ws" / "memory" / "projects" / "heron.md").read_text(encoding="utf-8") == "# Heron\n"


def test_a_refused_or_missing_file_is_not_deleted(tmp_path: Path) -> None:
    memory = _memory(tmp_path / "ws")
    with pytest.raises(PathRefused):
        memory.delete_note("../outside.md")
    with pytest.raises(FileNotFoundError):
        memory.delete_note("memory/nope.md")
    assert memory.list_deleted() == []


@pytest.mark.parametrize(("rel", "typed", "new_rel", "rules"), [
    ("MEMORY.md", "memory/notes.txt", "memory/notes.txt.md", (".md added", "moves from the workspace root")),
    ("MEMORY.md", "memory", "memory.md", (".md added",)),
    ("memory/projects/heron.md", "falcon", "memory/projects/falcon.md", (".md added",)),
    ("memory/projects/heron.md", "ideas/falcon.md", "memory/ideas/falcon.md", ("moves from memory/projects/",)),
    ("memory/projects/heron.md", "Big Bird", "memory/projects/big-bird.md", (".md added", "name cleaned")),
    ("memory/projects/heron.md", "memory/projects/heron.md", "memory/projects/heron.md", ()),
])
def test_rename_plans_say_exactly_where_the_file_goes(tmp_path: Path, rel: str, typed: str, new_rel: str,
                                                       rules: tuple[str, ...]) -> None:
    memory = _memory(tmp_path / "ws")
    plan = memory.plan_rename(rel, typed)
    assert plan.new_rel == new_rel
    assert len(plan.rules) == len(rules) and all(r.startswith(w) for r, w in zip(plan.rules, rules, strict=True))
    assert plan.where == ("root" if "/" not in new_rel else new_rel.rsplit("/", 1)[0] + "/")


def test_a_root_file_never_moves_into_memory_by_accident(tmp_path: Path) -> None:
    memory = _memory(tmp_path / "ws")
    for typed in ("notes.txt", "projects/notes"):
        with pytest.raises(PathRefused, match="type memory/"):
            memory.plan_rename("MEMORY.md", typed)
    assert (tmp_path / "ws" / "MEMORY.md").is_file()
    assert memory.rename_note("MEMORY.md", "memory/notes.txt") == "memory/notes.txt.md"
    assert (tmp_path / "ws" / "memory" / "notes.txt.md").read_text(encoding="utf-8").startswith("# Long-term")


def test_a_rename_onto_an_existing_file_is_refused_before_asking(tmp_path: Path) -> None:
    memory = _memory(tmp_path / "ws")
    (tmp_path / "ws" / "memory" / "projects" / "falcon.md").write_text("taken\n", encoding="utf-8")
    with pytest.raises(MemdeckError, match="already exists"):
        memory.plan_rename("memory/projects/heron.md", "falcon")


def test_conflict_copies_go_to_the_data_dir_not_the_memory_folder(tmp_path: Path) -> None:
    memory = _memory(tmp_path / "ws")
    copy = memory.write_copy("memory/projects/heron.md", "mine\n", datetime(2026, 12, 1, 18, 57, 45))
    assert copy == memory.config.home / "conflict-copies" / "memory" / "projects" / "heron.mine-20261201-185745.md"
    assert copy.read_text(encoding="utf-8") == "mine\n"
    assert [f.rel for f in memory.list_notes().files] == ["MEMORY.md", "memory/projects/heron.md"]
