"""The review's writes (engine): promote, supersede, delete a copy, merge, dismiss, undo — exact text, conflicts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.api import (
    MemoryEngine,
    NothingToUndo,
    ReviewActionError,
    ReviewWriteConflict,
    StatementChanged,
    merge_text,
)
from engine.config import load_config
from engine.review.model import DismissStore, Finding, ReviewItem

MEMORY = """# MEMORY.md — long-term memory

## Preferences
- Prefers tea over coffee.
- Standup is at 09:30.

## People
- Ana Kovač — SRE, owns Postgres.
"""

SEPT = """# 2026-09-10

- 09:12 Lunch with Stefan at the canteen.
- Uses uv for every Python project.
- Standup moved to 10:00 from next week.
"""

NOV = """# 2026-11-02

- Prefers tea, not coffee.
- Deployed HERON-112 to staging.
"""


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[MemoryEngine]:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    (ws / "memory" / "2026-09-10.md").write_text(SEPT, encoding="utf-8")
    (ws / "memory" / "2026-11-02.md").write_text(NOV, encoding="utf-8")
    eng = MemoryEngine(load_config(workspace=ws, home=tmp_path / "home", overrides={"embedding": {"provider": "none"}}))
    eng.sync()
    yield eng
    eng.close()


def _read(eng: MemoryEngine, rel: str) -> str:
    return (eng.config.workspace / rel).read_text(encoding="utf-8")


def _item(eng: MemoryEngine, rel: str, line: int, day: str | None = None) -> ReviewItem:
    text = _read(eng, rel).split("\n")[line - 1]
    return ReviewItem(rel, line, line, text, day)


def _snapshot(eng: MemoryEngine) -> dict[str, bytes]:
    ws = eng.config.workspace
    return {p.relative_to(ws).as_posix(): p.read_bytes() for p in sorted(ws.rglob("*.md"))}


def test_promote_into_a_section_keeps_a_citation_is_searchable_and_undoes(engine: MemoryEngine) -> None:
    before = _snapshot(engine)
    assert engine.review_sections() == ["Preferences", "People"]
    done = engine.review_promote(_item(engine, "memory/2026-09-10.md", 4, "2026-09-10"), "preferences")
    assert done.files == ("MEMORY.md",)
    assert done.line == "- Uses uv for every Python project. (from memory/2026-09-10.md#L4)"
    assert _read(engine, "MEMORY.md") == MEMORY.replace(
        "- Standup is at 09:30.\n", "- Standup is at 09:30.\n- Uses uv for every Python project. "
        "(from memory/2026-09-10.md#L4)\n")
    hits = engine.search("every Python project", mode="keyword", ensure_fresh=False).results
    assert any(h.path == "MEMORY.md" for h in hits)  # reindexed at once, no sync asked for
    assert engine.review_last_action() == done.summary
    engine.review_undo()
    assert _snapshot(engine) == before
    with pytest.raises(NothingToUndo):
        engine.review_undo()


def test_promote_into_a_new_section_a_new_file_and_refuses_what_is_there(engine: MemoryEngine) -> None:
    item = _item(engine, "memory/2026-09-10.md", 4)
    engine.review_promote(item, "Tooling", text="Uses uv for Python")
    assert _read(engine, "MEMORY.md") == MEMORY + "\n## Tooling\n- Uses uv for Python (from memory/2026-09-10.md#L4)\n"
    with pytest.raises(ReviewActionError, match="already says that"):
        engine.review_promote(item, "Tooling", text="Uses uv for Python")
    engine.review_promote(item, None, target="USER.md")
    assert _read(engine, "USER.md") == "# USER.md\n\n- Uses uv for every Python project. (from memory/2026-09-10.md#L4)\n"
    engine.review_undo()
    assert not (engine.config.workspace / "USER.md").exists()
    with pytest.raises(ReviewActionError, match=r"MEMORY\.md or USER\.md"):
        engine.review_promote(item, None, target="memory/x.md")


def test_supersede_marks_the_old_line_with_today_and_the_current_citation(engine: MemoryEngine,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMDECK_TODAY", "2026-12-01")
    finding = Finding("conflict", (_item(engine, "MEMORY.md", 5), _item(engine, "memory/2026-09-10.md", 5, "2026-09-10")),
                      "standup time changed", 0.9, "mark the MEMORY.md line superseded", current=1)
    done = engine.review_supersede(finding)
    assert _read(engine, "MEMORY.md") == MEMORY.replace(
        "- Standup is at 09:30.", "- Standup is at 09:30. (superseded 2026-12-01 → memory/2026-09-10.md#L5)")
    assert _read(engine, "memory/2026-09-10.md") == SEPT
    assert done.files == ("MEMORY.md",)
    with pytest.raises(StatementChanged):  # the line says more now: the finding is stale
        engine.review_supersede(finding)


def test_delete_one_copy_and_never_the_last_one(engine: MemoryEngine) -> None:
    finding = Finding("duplicate", (_item(engine, "MEMORY.md", 4), _item(engine, "memory/2026-11-02.md", 3)),
                      "same preference", 0.95, "")
    engine.review_delete(finding, 1)
    assert _read(engine, "memory/2026-11-02.md") == NOV.replace("- Prefers tea, not coffee.\n", "")
    lone = Finding("duplicate", (_item(engine, "MEMORY.md", 4), ReviewItem("memory/2026-11-02.md", 3, 3, "- gone")),
                   "x", 0.5, "")
    with pytest.raises(ReviewActionError, match="would lose it"):
        engine.review_delete(lone, 0)
    assert _read(engine, "MEMORY.md") == MEMORY


def test_merge_rewrites_the_first_and_deletes_the_others(engine: MemoryEngine) -> None:
    finding = Finding("duplicate", (_item(engine, "MEMORY.md", 4), _item(engine, "memory/2026-11-02.md", 3)),
                      "same preference", 0.95, "")
    assert merge_text(finding) == "Prefers tea over coffee."
    done = engine.review_merge(finding, "Prefers tea over coffee (green, no sugar).")
    assert done.line == "- Prefers tea over coffee (green, no sugar)."
    assert _read(engine, "MEMORY.md") == MEMORY.replace("Prefers tea over coffee.", "Prefers tea over coffee (green, no sugar).")
    assert _read(engine, "memory/2026-11-02.md") == NOV.replace("- Prefers tea, not coffee.\n", "")
    assert sorted(done.files) == ["MEMORY.md", "memory/2026-11-02.md"]
    engine.review_undo()
    assert _read(engine, "MEMORY.md") == MEMORY and _read(engine, "memory/2026-11-02.md") == NOV
    with pytest.raises(ReviewActionError, match="one line"):
        engine.review_merge(finding, "two\nlines")


def test_lines_that_moved_are_found_and_changed_ones_refused(engine: MemoryEngine) -> None:
    item = _item(engine, "memory/2026-09-10.md", 4)
    path = engine.config.workspace / "memory" / "2026-09-10.md"
    path.write_text(SEPT.replace("# 2026-09-10\n", "# 2026-09-10\n\n- 08:00 Coffee.\n"), encoding="utf-8")
    done = engine.review_promote(item, "Preferences")
    assert done.line == "- Uses uv for every Python project. (from memory/2026-09-10.md#L6)"
    engine.review_undo()
    path.write_text(SEPT.replace("every Python", "most Python"), encoding="utf-8")
    before = _snapshot(engine)
    with pytest.raises(StatementChanged, match=r"memory/2026-09-10.md#L4 no longer says"):
        engine.review_promote(item, "Preferences")
    finding = Finding("duplicate", (_item(engine, "MEMORY.md", 4), item), "x", 0.5, "")
    with pytest.raises(StatementChanged):
        engine.review_merge(finding, "merged")  # the first file is fine, the second is not: nothing is written
    assert _snapshot(engine) == before


def test_undo_refuses_when_the_file_changed_since(engine: MemoryEngine) -> None:
    finding = Finding("duplicate", (_item(engine, "MEMORY.md", 4), _item(engine, "memory/2026-11-02.md", 3)), "x", 0.9, "")
    engine.review_delete(finding, 1)
    path = engine.config.workspace / "memory" / "2026-11-02.md"
    edited = path.read_text(encoding="utf-8") + "- Another line.\n"
    path.write_text(edited, encoding="utf-8")
    with pytest.raises(ReviewWriteConflict, match="changed since"):
        engine.review_undo()
    assert path.read_text(encoding="utf-8") == edited
    assert engine.review_last_action() is not None  # still there, for after the user puts it back


def test_crlf_and_bom_files_keep_their_bytes(engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMDECK_TODAY", "2026-12-01")
    path = engine.config.workspace / "memory" / "2026-11-02.md"
    raw = b"\xef\xbb\xbf" + NOV.replace("\n", "\r\n").encode("utf-8")
    path.write_bytes(raw)
    finding = Finding("conflict", (ReviewItem("memory/2026-11-02.md", 3, 3, "- Prefers tea, not coffee."),
                                   _item(engine, "MEMORY.md", 4)), "x", 0.5, "", current=1)
    engine.review_supersede(finding)
    assert path.read_bytes() == raw.replace(b"not coffee.\r\n",
                                            "not coffee. (superseded 2026-12-01 → MEMORY.md#L4)\r\n".encode())
    engine.review_undo()
    assert path.read_bytes() == raw


def test_dismiss_is_remembered_and_undone(engine: MemoryEngine) -> None:
    finding = Finding("promote", (_item(engine, "memory/2026-09-10.md", 4),), "durable", 0.7, "promote it")
    store = DismissStore(engine.config.home, engine.config.workspace)
    engine.review_dismiss(finding)
    assert finding.id in store.ids()
    engine.review_undo()
    assert finding.id not in store.ids()


def test_a_damaged_journal_means_nothing_to_undo(engine: MemoryEngine) -> None:
    (engine.config.home).mkdir(parents=True, exist_ok=True)
    (engine.config.home / "review-journal.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(NothingToUndo):
        engine.review_undo()
    engine.review_promote(_item(engine, "memory/2026-09-10.md", 4), "People")
    data = json.loads((engine.config.home / "review-journal.json").read_text(encoding="utf-8"))
    assert len(next(iter(data.values()))) == 1


def test_a_write_race_rolls_back_the_files_already_written(engine: MemoryEngine,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    finding = Finding("duplicate", (_item(engine, "MEMORY.md", 4), _item(engine, "memory/2026-11-02.md", 3)), "x", 0.9, "")
    other = engine.config.workspace / "memory" / "2026-11-02.md"
    real_save = MemoryEngine.save_note
    calls: list[str] = []

    def racing_save(self: MemoryEngine, rel: str, text: str, expected: object) -> object:
        if not calls:  # someone appends to the second file just while the first one is written
            other.write_text(NOV + "- Appended by the agent.\n", encoding="utf-8")
        calls.append(rel)
        return real_save(self, rel, text, expected)  # type: ignore[arg-type]

    monkeypatch.setattr(MemoryEngine, "save_note", racing_save)
    with pytest.raises(ReviewWriteConflict, match="changed on disk while the review wrote it"):
        engine.review_merge(finding, "Prefers tea.")
    assert _read(engine, "MEMORY.md") == MEMORY  # rolled back
    assert _read(engine, "memory/2026-11-02.md") == NOV + "- Appended by the agent.\n"  # theirs, untouched
    with pytest.raises(NothingToUndo):
        engine.review_undo()
