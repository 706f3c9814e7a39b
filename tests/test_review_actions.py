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
                      "same preference", 0.95, "", deletable=(1,))
    engine.review_delete(finding, 1)
    assert _read(engine, "memory/2026-11-02.md") == NOV.replace("- Prefers tea, not coffee.\n", "")
    lone = Finding("duplicate", (_item(engine, "MEMORY.md", 4), ReviewItem("memory/2026-11-02.md", 3, 3, "- gone")),
                   "x", 0.5, "", deletable=(0,))
    with pytest.raises(ReviewActionError, match="would lose it"):
        engine.review_delete(lone, 0)
    assert _read(engine, "MEMORY.md") == MEMORY


def test_a_copy_that_says_more_than_the_kept_statement_is_never_deleted(engine: MemoryEngine) -> None:
    finding = Finding("duplicate", (_item(engine, "MEMORY.md", 4), _item(engine, "memory/2026-11-02.md", 3)),
                      "same preference", 0.95, "")  # the review found no item that the other holds
    before = _snapshot(engine)
    with pytest.raises(ReviewActionError, match="merge the statements instead"):
        engine.review_delete(finding, 1)
    assert _snapshot(engine) == before


def test_merge_rewrites_the_first_and_deletes_the_others(engine: MemoryEngine) -> None:
    finding = Finding("duplicate", (_item(engine, "MEMORY.md", 4), _item(engine, "memory/2026-11-02.md", 3)),
                      "same preference", 0.95, "", deletable=(1,))
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
    finding = Finding("duplicate", (_item(engine, "MEMORY.md", 4), _item(engine, "memory/2026-11-02.md", 3)), "x", 0.9, "", deletable=(1,))
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
    finding = Finding("duplicate", (_item(engine, "MEMORY.md", 4), _item(engine, "memory/2026-11-02.md", 3)), "x", 0.9, "", deletable=(1,))
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


# -- every review write keeps the file's format: encoding, BOM, line endings; undo is byte for byte ----------------

FORMATS = {
    # name: (BOM, codec, line ending)
    "crlf": (b"", "utf-8", "\r\n"),
    "cr-only": (b"", "utf-8", "\r"),
    "bom-crlf": (b"\xef\xbb\xbf", "utf-8", "\r\n"),
    "utf16le-bom-crlf": (b"\xff\xfe", "utf-16-le", "\r\n"),
    "utf16be-bom-lf": (b"\xfe\xff", "utf-16-be", "\n"),
    "utf16le-no-bom": (b"", "utf-16-le", "\n"),
    "utf32le-bom": (b"\xff\xfe\x00\x00", "utf-32-le", "\r\n"),
}


def _stored(name: str, text: str) -> bytes:
    bom, codec, ending = FORMATS[name]
    return bom + text.replace("\n", ending).encode(codec)


def _review_action(engine: MemoryEngine, action: str) -> tuple[str, str]:
    """Run one review action on the tea statements (MEMORY.md#L4, 2026-11-02#L3); the texts it should leave."""
    tea_nov = ReviewItem("memory/2026-11-02.md", 3, 3, "- Prefers tea, not coffee.", "2026-11-02")
    tea_memory = ReviewItem("MEMORY.md", 4, 4, "- Prefers tea over coffee.")
    finding = Finding("duplicate", (tea_nov, tea_memory), "same preference", 0.9, "", current=1, deletable=(0,))
    if action == "supersede":
        engine.review_supersede(finding)
        return MEMORY, NOV.replace("not coffee.", "not coffee. (superseded 2026-12-01 → MEMORY.md#L4)")
    if action == "delete":
        engine.review_delete(finding, 0)
        return MEMORY, NOV.replace("- Prefers tea, not coffee.\n", "")
    if action == "merge":
        engine.review_merge(finding, "Prefers green tea.")
        return MEMORY.replace("- Prefers tea over coffee.\n", ""), NOV.replace("tea, not coffee", "green tea")
    engine.review_promote(ReviewItem("memory/2026-11-02.md", 4, 4, "- Deployed HERON-112 to staging."), "People")
    return (MEMORY + "- Deployed HERON-112 to staging. (from memory/2026-11-02.md#L4)\n", NOV)


@pytest.mark.parametrize("action", ["supersede", "delete", "merge", "promote"])
@pytest.mark.parametrize("name", sorted(FORMATS))
def test_review_writes_keep_the_files_format_and_undo_restores_the_bytes(
        engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch, name: str, action: str) -> None:
    monkeypatch.setenv("MEMDECK_TODAY", "2026-12-01")
    ws = engine.config.workspace
    (ws / "MEMORY.md").write_bytes(_stored(name, MEMORY))
    (ws / "memory" / "2026-11-02.md").write_bytes(_stored(name, NOV))
    before = _snapshot(engine)
    memory, nov = _review_action(engine, action)
    assert (ws / "MEMORY.md").read_bytes() == _stored(name, memory)
    assert (ws / "memory" / "2026-11-02.md").read_bytes() == _stored(name, nov)
    engine.review_undo()
    assert _snapshot(engine) == before


@pytest.mark.parametrize("action", ["supersede", "delete", "merge"])
def test_undo_after_an_action_on_mixed_line_endings_is_byte_for_byte(
        engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch, action: str) -> None:
    # The deleted line ended with LF in a mostly CRLF file: the text before, written back, would end it CRLF.
    monkeypatch.setenv("MEMDECK_TODAY", "2026-12-01")
    ws = engine.config.workspace
    (ws / "MEMORY.md").write_bytes(MEMORY.replace("\n", "\r\n").replace("coffee.\r\n", "coffee.\n").encode())
    (ws / "memory" / "2026-11-02.md").write_bytes(b"# 2026-11-02\r\n\r\n- Prefers tea, not coffee.\n"
                                                  b"- Deployed HERON-112 to staging.\r")
    before = _snapshot(engine)
    _review_action(engine, action)
    assert _snapshot(engine) != before
    engine.review_undo()
    assert _snapshot(engine) == before


@pytest.mark.parametrize(("data", "message"), [
    (b"# 2026-11-02\n\n- Prefers tea, not coffee.\n- caf\xe9\n", r"not valid UTF-8 \(1 byte cannot be read\)"),
    (b"\xff\xfe" + "# 2026-11-02\n\n- Prefers tea, not coffee.\n".encode("utf-16-le") + b"\x00",
     r"not valid UTF-16 LE"),
    (b"# 2026-11-02\n\n- Prefers tea, not coffee.\n" + b"x" * 9000 + b"\x00\n", "looks like a binary file"),
], ids=["latin-1-byte", "utf16-odd-length", "nul-after-8k"])
def test_a_file_whose_edit_would_lose_bytes_is_refused(engine: MemoryEngine, data: bytes, message: str) -> None:
    path = engine.config.workspace / "memory" / "2026-11-02.md"
    path.write_bytes(data)
    finding = Finding("duplicate", (ReviewItem("memory/2026-11-02.md", 3, 3, "- Prefers tea, not coffee."),
                                    _item(engine, "MEMORY.md", 4)), "x", 0.9, "", deletable=(0,))
    with pytest.raises(ReviewActionError, match=message):
        engine.review_delete(finding, 0)
    assert path.read_bytes() == data


def test_a_heading_inside_a_four_backtick_fence_is_no_section(engine: MemoryEngine) -> None:
    # One block model: a ```` fence holding a ``` line is code to its closing ````, so the "## Fake" in it is not a
    # section to promote into (a fence toggle read it as one).
    path = engine.config.workspace / "MEMORY.md"
    path.write_text(MEMORY + "\n````md\n```\n## Fake\n```\n````\n\n## Later\n\n- a fact\n", encoding="utf-8")
    assert engine.review_sections() == ["Preferences", "People", "Later"]


def test_a_merge_keeps_every_detail_or_needs_a_wording_and_keeps_the_indent(tmp_path: Path) -> None:
    from engine.review.actions import merge_keeps_all
    from engine.review.model import Finding, ReviewItem

    def finding(*texts: str) -> Finding:
        items = tuple(ReviewItem("MEMORY.md", i + 1, i + 1, t, None) for i, t in enumerate(texts))
        return Finding("duplicate", items, "r", 0.9, "s", id="d-000000000001", evidence="duplicate:notes:high")

    assert merge_keeps_all(finding("- Prefers tea over coffee.", "- prefers tea over coffee"))
    assert not merge_keeps_all(finding("- 时间: 2026年1月31日", "- 时间: 2026年2月1日"))
    assert not merge_keeps_all(finding("- Card.cs optimised (dict cache, dirty flags)",
                                       "- Card.cs optimised: dict cache, static empty lists"))
