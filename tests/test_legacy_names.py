"""Classifying file names in a legacy OpenClaw ``sessions/`` folder."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from engine.sessions.legacy import LegacyKind, classify_legacy_name, legacy_sessions, parse_archive_time
from engine.sessions.model import session_id_from_path

DEMO_SESSIONS = Path(__file__).resolve().parents[1] / "engine" / "demo_workspace" / "sessions"
UUID = "3f6c2a9e-8b41-4d7a-9c05-1e2f7b8a6d10"
STAMP = datetime(2026, 1, 16, 14, 30, tzinfo=UTC)

# name → (kind, session id, file id, topic, archived at)
CASES = [
    (f"{UUID}.jsonl", LegacyKind.SESSION, UUID, UUID, None, None),
    ("abc.jsonl", LegacyKind.SESSION, "abc", "abc", None, None),
    ("abc.jsonl.reset.2026-01-16T14-30-00.000Z", LegacyKind.RESET, "abc", "abc", None, STAMP),
    ("abc.jsonl.deleted.2026-01-16T14-30-00.000Z", LegacyKind.DELETED, "abc", "abc", None, STAMP),
    ("abc.jsonl.reset.2026-01-16T14-30-00Z", LegacyKind.RESET, "abc", "abc", None, STAMP),
    ("abc.jsonl.reset.1768573800000", LegacyKind.RESET, "abc", "abc", None, STAMP),
    ("abc.jsonl.reset.someday", LegacyKind.RESET, "abc", "abc", None, None),
    ("abc-topic-42.jsonl", LegacyKind.TOPIC, "abc", "abc-topic-42", "42", None),
    ("abc-topic-42.jsonl.reset.2026-01-16T14-30-00.000Z", LegacyKind.RESET, "abc", "abc-topic-42", "42", STAMP),
    ("abc-topic-7.jsonl.deleted.2026-01-16T14-30-00.000Z", LegacyKind.DELETED, "abc", "abc-topic-7", "7", STAMP),
    ("abc.trajectory.jsonl", LegacyKind.TRAJECTORY, "abc", "abc.trajectory", None, None),
    (
        f"abc.checkpoint.{UUID}.jsonl",
        LegacyKind.CHECKPOINT, "abc", f"abc.checkpoint.{UUID}", None, None,
    ),
    ("sessions.json", LegacyKind.STORE, None, None, None, None),
    ("sessions.json.bak.1768573800000", LegacyKind.BACKUP, None, None, None, STAMP),
    ("abc.jsonl.bak.2026-01-16T14-30-00.000Z", LegacyKind.BACKUP, "abc", "abc", None, STAMP),
    ("abc.jsonl.bak-4242-2026-01-16T14-30-00.000Z", LegacyKind.BACKUP, "abc", "abc", None, STAMP),
    (f"{UUID}.jsonl.imported-1768573800000", LegacyKind.IMPORTED, UUID, UUID, None, STAMP),
    ("sessions.json.imported-1768573800000", LegacyKind.IMPORTED, None, None, None, STAMP),
    (".abc.jsonl", LegacyKind.OTHER, None, None, None, None),
    (".jsonl", LegacyKind.OTHER, None, None, None, None),
    ("abc.jsonl.lock", LegacyKind.OTHER, None, None, None, None),
    ("sessions.json.tmp", LegacyKind.OTHER, None, None, None, None),
    ("notes.md", LegacyKind.OTHER, None, None, None, None),
    ("sub/abc.jsonl", LegacyKind.OTHER, None, None, None, None),
    ("", LegacyKind.OTHER, None, None, None, None),
]


@pytest.mark.parametrize(("name", "kind", "session_id", "file_id", "topic", "when"), CASES, ids=[c[0] or "empty" for c in CASES])
def test_classify(
    name: str, kind: LegacyKind, session_id: str | None, file_id: str | None, topic: str | None, when: datetime | None
) -> None:
    item = classify_legacy_name(name)
    assert (item.name, item.kind, item.session_id, item.file_id, item.topic, item.archived_at) == (
        name, kind, session_id, file_id, topic, when,
    )
    assert item.is_session is (kind in (LegacyKind.SESSION, LegacyKind.TOPIC, LegacyKind.RESET, LegacyKind.DELETED))
    assert item.archived is (kind in (LegacyKind.RESET, LegacyKind.DELETED))


def test_file_id_agrees_with_the_jsonl_reader() -> None:
    for name in ("abc.jsonl", "abc-topic-42.jsonl", "abc.jsonl.reset.2026-01-16T14-30-00.000Z"):
        assert classify_legacy_name(name).file_id == session_id_from_path(Path(name))


def test_legacy_sessions_lists_transcripts_and_archives_only() -> None:
    names = [
        *(entry.name for entry in DEMO_SESSIONS.iterdir()),
        "abc.jsonl.reset.2026-01-16T14-30-00.000Z",
        "abc.trajectory.jsonl",
        f"abc.checkpoint.{UUID}.jsonl",
        "sessions.json.bak.3",
    ]
    listed = legacy_sessions(names)
    assert [item.name for item in listed] == [
        "3f6c2a9e-8b41-4d7a-9c05-1e2f7b8a6d10.jsonl",
        "9b2d4e71-5c3a-4f88-b6e0-7a1c2d3e4f51.jsonl",
        "abc.jsonl.reset.2026-01-16T14-30-00.000Z",
        "c41e8f03-2d7b-4a96-8e15-6f0a9b3c2d74.jsonl",
    ]
    assert [item.archived for item in listed] == [False, False, True, False]


def test_parse_archive_time() -> None:
    assert parse_archive_time("2026-01-16T14-30-00.123Z") == datetime(2026, 1, 16, 14, 30, 0, 123000, tzinfo=UTC)
    assert parse_archive_time("1768573800") == STAMP
    assert parse_archive_time("2026-13-40T99-99-99Z") is None
    assert parse_archive_time("yesterday") is None
