"""Session notes and flush headings on the user's clock, as OpenClaw 2026.9's session-memory hook names them."""

from __future__ import annotations

import zoneinfo
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from engine.api import Draft, DraftItem, MemoryFiles
from engine.clock import note_timezone, zone_label
from engine.config import load_config
from engine.memory import llm as llm_module
from engine.memory.llm import LLMError
from engine.memory.session_notes import build_session_note
from engine.sessions.model import Transcript
from engine.sessions.reader import read_transcript

DATA = Path(__file__).parent / "data" / "transcripts"
NOW = datetime(2026, 2, 10, 14, 30, 5, tzinfo=UTC)  # 09:30 in New York, 23:30 in Tokyo
LATE = datetime(2026, 2, 11, 2, 15, tzinfo=UTC)  # still 10 February in New York


@pytest.fixture
def chat() -> Transcript:
    return read_transcript(DATA / "chat_preferences.jsonl")


def _memory(tmp_path: Path, zone: str, **overrides: object) -> MemoryFiles:
    data: dict[str, object] = {"memory": {"timezone": zone}, "embedding": {"provider": "none"}}
    data.update(overrides)
    return MemoryFiles(load_config(workspace=tmp_path / "ws", home=tmp_path / "home", overrides=data))


@pytest.mark.parametrize(
    ("zone", "now", "name", "header"),
    [
        ("America/New_York", NOW, "2026-02-10-0930.md", "# Session: 2026-02-10 09:30:05 America/New_York"),
        ("Asia/Tokyo", NOW, "2026-02-10-2330.md", "# Session: 2026-02-10 23:30:05 Asia/Tokyo"),
        ("UTC", NOW, "2026-02-10-1430.md", "# Session: 2026-02-10 14:30:05 UTC"),
        ("America/New_York", LATE, "2026-02-10-2115.md", "# Session: 2026-02-10 21:15:00 America/New_York"),
        ("Europe/Berlin", datetime(2026, 7, 1, 10, 0, tzinfo=UTC), "2026-07-01-1200.md",
         "# Session: 2026-07-01 12:00:00 Europe/Berlin"),  # summer time: its own offset
    ],
)
def test_note_named_by_local_time(tmp_path: Path, chat: Transcript, zone: str, now: datetime, name: str,
                                  header: str) -> None:
    note = _memory(tmp_path, zone).write_session_note(chat, now=now)
    assert note.rel == f"memory/{name}" and note.written and note.warnings == ()
    assert note.path.read_text().startswith(header + "\n\n- **Session Key**: ")


def test_clash_gets_a_counter(tmp_path: Path, chat: Transcript) -> None:
    memory = _memory(tmp_path, "America/New_York")
    rels = [memory.write_session_note(chat, now=NOW).rel for _ in range(3)]
    assert rels == ["memory/2026-02-10-0930.md", "memory/2026-02-10-0930-2.md", "memory/2026-02-10-0930-3.md"]


def test_dry_run_names_without_writing(tmp_path: Path, chat: Transcript) -> None:
    note = _memory(tmp_path, "Asia/Tokyo").write_session_note(chat, now=NOW, dry_run=True)
    assert note.rel == "memory/2026-02-10-2330.md" and not note.written and not note.path.exists()


def test_llm_slug_only_when_configured(tmp_path: Path, chat: Transcript, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []

    def fake_slug(text: str, client: object) -> str:
        asked.append(text)
        return "Vendor Pitch"

    monkeypatch.setattr(llm_module, "slug_with_llm", fake_slug)
    assert _memory(tmp_path / "none", "UTC").write_session_note(chat, now=NOW).rel == "memory/2026-02-10-1430.md"
    assert asked == []  # no [llm]: no slug asked for, and no keyword slug either
    configured = {"llm": {"base_url": "http://127.0.0.1:9/v1", "model": "m"}}
    note = _memory(tmp_path / "llm", "UTC", **configured).write_session_note(chat, now=NOW)
    assert note.rel == "memory/2026-02-10-vendor-pitch.md" and len(asked) == 1

    def failing(text: str, client: object) -> str:
        raise LLMError("model down")

    monkeypatch.setattr(llm_module, "slug_with_llm", failing)
    note = _memory(tmp_path / "down", "UTC", **configured).write_session_note(chat, now=NOW)
    assert note.rel == "memory/2026-02-10-1430.md"  # OpenClaw's fallback: the time
    assert note.warnings == ("LLM slug failed (model down); named by the time",)


def _draft() -> Draft:
    return Draft(items=(DraftItem("I prefer tea", "fact", "3f2a9c1e-aaaa", 4),), session_id="3f2a9c1e-aaaa",
                 method="extractive")


def test_flush_heading_and_day_in_the_configured_zone(tmp_path: Path) -> None:
    memory = _memory(tmp_path, "America/New_York")
    block = memory.render_flush(_draft(), LATE)
    assert block.startswith("## 21:15 — Memory flush from session 3f2a9c1e\n")
    written = memory.append_flush("3f2a9c1e-aaaa", block, LATE)
    assert written.rel == "memory/2026-02-10.md"  # New York's day, not UTC's 11 February
    text = written.path.read_text()
    assert text.startswith("# 2026-02-10 — Tuesday, 10 February 2026\n") and "## 21:15 — Memory flush" in text


def test_system_zone(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, chat: Transcript) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    assert note_timezone("") == zoneinfo.ZoneInfo("Asia/Tokyo")
    assert _memory(tmp_path, "").write_session_note(chat, now=NOW).rel == "memory/2026-02-10-2330.md"
    monkeypatch.setenv("TZ", "CET-1CEST")  # a POSIX rule names no zone: the current offset stands in
    zone = note_timezone("")
    assert datetime.now(zone).utcoffset() == datetime.now().astimezone().utcoffset()
    monkeypatch.setenv("TZ", ":UTC")
    assert zone_label(NOW.astimezone(note_timezone(""))) == "UTC"
    with pytest.raises(ValueError, match="unknown time zone"):
        note_timezone("Mars/Olympus_Mons")


@pytest.mark.parametrize(
    ("when", "label"),
    [
        (NOW, "UTC"),
        (NOW.astimezone(zoneinfo.ZoneInfo("Etc/UTC")), "UTC"),
        (NOW.astimezone(zoneinfo.ZoneInfo("Europe/Berlin")), "Europe/Berlin"),
        (NOW.astimezone(timezone(timedelta(hours=-5))), "UTC-05:00"),
        (NOW.astimezone(timezone(timedelta(hours=1), "CET")), "CET"),
    ],
)
def test_zone_label(when: datetime, label: str) -> None:
    assert zone_label(when) == label


def test_low_level_default_stays_utc(chat: Transcript) -> None:
    west = datetime(2026, 2, 10, 22, 30, tzinfo=timezone(timedelta(hours=-5)))
    assert build_session_note(chat, now=west).startswith("# Session: 2026-02-11 03:30:00 UTC\n")
    tokyo = zoneinfo.ZoneInfo("Asia/Tokyo")
    assert build_session_note(chat, now=west, tz=tokyo).startswith("# Session: 2026-02-11 12:30:00 Asia/Tokyo\n")
