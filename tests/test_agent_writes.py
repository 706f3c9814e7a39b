"""Agent writes (memory_append): the text is made plain, and a dated name must be a real day."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.api import MemoryFiles
from engine.config import load_config
from engine.display import safe_text
from engine.errors import MemdeckError, PathRefused
from engine.memory.saving import read_note
from engine.textio import clean_note_text, decode_bytes

DAY = date(2026, 11, 27)

# (label, text the agent sends, what the note gets)
CLEANED = [
    ("NUL", "- a\x00b", "- ab"),
    ("ESC alone", "- a\x1bb", "- ab"),
    ("SGR colour sequence", "- \x1b[31mred\x1b[0m", "- red"),
    ("OSC 52 clipboard write", "- x\x1b]52;c;aGk=\x07y", "- xy"),
    ("BEL", "- ding\x07", "- ding"),
    ("backspace", "- ab\x08c", "- abc"),
    ("vertical tab and form feed", "- a\x0bb\x0cc", "- abc"),
    ("DEL", "- a\x7fb", "- ab"),
    ("C1 8-bit CSI", "- a\x9bb", "- ab"),
    ("NEL is a line break", "- a\x85- b", "- a\n- b"),
    ("U+2028 LINE SEPARATOR", "- a\u2028- b", "- a\n- b"),
    ("U+2029 PARAGRAPH SEPARATOR", "- a\u2029- b", "- a\n- b"),
    ("lone CR", "- a\r- b", "- a\n- b"),
    ("CRLF", "- a\r\n- b", "- a\n- b"),
    ("RLO bidi override", "- \u202eevil", "- evil"),
    ("bidi isolate", "- \u2066x\u2069", "- x"),
    ("lone surrogate", "- half \ud83d emoji", "- half \ufffd emoji"),
    ("tab kept", "- a\tb", "- a\tb"),
    ("plain unicode kept", "- Vračar 😀 下周五", "- Vračar 😀 下周五"),
    ("zero-width joiners kept (emoji, Indic)", "- 👩\u200d👩\u200d👧 क्\u200dष", "- 👩\u200d👩\u200d👧 क्\u200dष"),
    ("NFD kept as sent", "- Vrac\u030car", "- Vrac\u030car"),
    ("combining mark alone kept", "- \u0301", "- \u0301"),
]


@pytest.mark.parametrize(("label", "sent", "kept"), CLEANED, ids=[case[0] for case in CLEANED])
def test_appended_text_is_plain_and_the_note_stays_editable(tmp_path: Path, label: str, sent: str,
                                                             kept: str) -> None:
    config = load_config(workspace=tmp_path)
    memory = MemoryFiles(config)
    memory.append_note(None, "- first", DAY)
    written = memory.append_note(None, sent, DAY)
    raw = (tmp_path / "memory" / "2026-11-27.md").read_bytes()
    text = raw.decode("utf-8")  # encodable: no surrogate reached the disk
    assert text.endswith(kept + "\n")
    note = read_note(config, written.rel)
    assert not note.binary and note.decode_errors == 0
    assert safe_text(note.text) == note.text  # nothing the editor would show as an escape (read-only)
    # The lines reported are the lines of the file, as an editor splits them.
    lines = note.text.splitlines()
    assert lines[written.start_line - 1 : written.end_line] == kept.split("\n")


@pytest.mark.parametrize("text", ["\x00\x1b[2J\x07", " \x00 \n\t", "\u200b", "\u00a0", "\ufeff \u2060", "\u2028\x85"])
def test_text_with_nothing_to_see_is_refused(tmp_path: Path, text: str) -> None:
    memory = MemoryFiles(load_config(workspace=tmp_path))
    with pytest.raises(MemdeckError, match="nothing to append"):
        memory.append_note(None, text, DAY)
    assert not (tmp_path / "memory" / "2026-11-27.md").exists()


@pytest.mark.parametrize("name", [
    "memory/2026-13-45.md", "memory/2026-02-30.md", "memory/2025-02-29.md", "memory/2026-00-10.md",
    "memory/0000-01-01.md", "memory/2026-04-31-standup.md", "memory/projects/2026-13-01.md",
    "memory/2026-02-29.md", "memory/２０２６-１３-０１.md",
])
def test_a_dated_name_that_is_no_real_day_is_refused(tmp_path: Path, name: str) -> None:
    memory = MemoryFiles(load_config(workspace=tmp_path))
    with pytest.raises(PathRefused, match="not a calendar date"):
        memory.append_note(name, "- x")
    assert not (tmp_path / name).exists()


@pytest.mark.parametrize(("name", "meant"), [
    ("memory/2026-1-5.md", "memory/2026-01-05.md"), ("memory/2026-11-5-standup.md", "memory/2026-11-05.md"),
    ("memory/２０２６-１１-２７.md", "memory/2026-11-27.md"),  # full-width digits
])
def test_a_date_not_written_yyyy_mm_dd_is_refused_naming_the_note_meant(tmp_path: Path, name: str,
                                                                         meant: str) -> None:
    memory = MemoryFiles(load_config(workspace=tmp_path))
    with pytest.raises(PathRefused, match=f"that day's note is {meant}"):
        memory.append_note(name, "- x")
    assert not (tmp_path / "memory").exists() or not any((tmp_path / "memory").iterdir())


@pytest.mark.parametrize("name", ["memory/.md", "memory/ .md", "memory/.hidden.md", "memory/.git/x.md"])
def test_a_hidden_or_blank_name_is_refused(tmp_path: Path, name: str) -> None:
    memory = MemoryFiles(load_config(workspace=tmp_path))
    with pytest.raises(PathRefused, match="hidden or blank name"):
        memory.append_note(name, "- x")
    assert not (tmp_path / name).exists()


@pytest.mark.parametrize("name", ["memory/../MEMORY.md", "/etc/x.md", "memory/2026-11-27.MD", "memory/2026-13-01"])
def test_names_outside_memory_are_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(PathRefused):
        MemoryFiles(load_config(workspace=tmp_path)).append_note(name, "- x")


@pytest.mark.parametrize("name", [
    "memory/2024-02-29.md", "memory/2026-11-27-standup.md", "memory/projects/sova.md", "memory/2026-notes.md",
    "memory/20261127.md", "MEMORY.md", "USER.md", "memory/2026-10-23-slug.md", "memory/x.md.md", "memory/1-2-3.md",
    "memory/9999-12-31.md",
])
def test_real_days_and_undated_names_are_written(tmp_path: Path, name: str) -> None:
    memory = MemoryFiles(load_config(workspace=tmp_path))
    written = memory.append_note(name, "- x")
    assert written.rel == name and (tmp_path / name).is_file()


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=60))
def test_clean_note_text_property(text: str) -> None:
    cleaned = clean_note_text(text)
    cleaned.encode("utf-8")
    assert safe_text(cleaned) == cleaned
    assert clean_note_text(cleaned) == cleaned
    assert len(cleaned.splitlines()) == len(decode_bytes(cleaned.encode("utf-8")).text.splitlines())
