"""What each file name in a legacy OpenClaw ``sessions/`` folder is (pure: names in, kinds out)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum


class LegacyKind(StrEnum):
    """The role of one file in a legacy ``agents/<id>/sessions/`` folder."""

    SESSION = "session"
    """``<id>.jsonl``: a transcript."""
    TOPIC = "topic"
    """``<id>-topic-<thread>.jsonl``: a transcript of one chat topic (Telegram forum thread)."""
    RESET = "reset"
    """``<file>.jsonl.reset.<time>``: archived by ``/new`` or ``/reset`` (still a session, archived)."""
    DELETED = "deleted"
    """``<file>.jsonl.deleted.<time>``: archived when the session was deleted (a session, archived)."""
    TRAJECTORY = "trajectory"
    """``<id>.trajectory.jsonl``: a trajectory export, a different event schema; not a session."""
    CHECKPOINT = "checkpoint"
    """``<id>.checkpoint.<uuid>.jsonl``: a copy taken at a compaction checkpoint; not a session."""
    STORE = "store"
    """``sessions.json``: the session store (keys, titles, token counts)."""
    BACKUP = "backup"
    """``sessions.json.bak.<n>``, ``<file>.bak.<time>``, ``<file>.bak-<pid>-<time>``: repair backups."""
    IMPORTED = "imported"
    """``<file>.imported-<ms>``: moved aside after OpenClaw imported it into its database."""
    OTHER = "other"
    """Anything else (temporary files, locks, notes)."""


SESSION_KINDS = frozenset({LegacyKind.SESSION, LegacyKind.TOPIC, LegacyKind.RESET, LegacyKind.DELETED})
ARCHIVED_KINDS = frozenset({LegacyKind.RESET, LegacyKind.DELETED})


@dataclass(frozen=True)
class LegacyName:
    """One classified file name.

    Attributes:
        name: the file name as given.
        kind: what the file is.
        session_id: the OpenClaw session id the file belongs to (the transcript header's ``id``,
            the ``sessionId`` in ``sessions.json``); None for the store and unrelated files.
        file_id: the transcript's own name without ``.jsonl`` and any archive suffix — unique per
            file, unlike ``session_id`` (``abc-topic-42`` for ``abc-topic-42.jsonl.reset.…``).
        topic: the thread id of a ``-topic-<thread>`` transcript.
        archived_at: the time in a ``.reset.`` / ``.deleted.`` / ``.bak.`` / ``.imported-`` suffix.
    """

    name: str
    kind: LegacyKind
    session_id: str | None = None
    file_id: str | None = None
    topic: str | None = None
    archived_at: datetime | None = None

    @property
    def is_session(self) -> bool:
        """True for transcripts a sessions listing shows (archives included)."""
        return self.kind in SESSION_KINDS

    @property
    def archived(self) -> bool:
        """True for ``.reset.`` and ``.deleted.`` archives."""
        return self.kind in ARCHIVED_KINDS


# OpenClaw writes archive times as ISO-8601 with '-' for ':' (file-name safe), e.g. 2026-01-16T14-30-00.000Z.
_ARCHIVE_TIME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2})-(\d{2})-(\d{2})(?:\.(\d{1,6}))?Z$")
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_CHECKPOINT = re.compile(rf"^(?P<base>.+)\.checkpoint\.{_UUID}\.jsonl$")
_TOPIC = re.compile(r"^(?P<base>.+)-topic-(?P<topic>[^./\\]+)$")
_ARCHIVE = re.compile(r"^(?P<file>.+\.jsonl)\.(?P<reason>reset|deleted)\.(?P<when>[^/\\]+)$")
_BACKUP = re.compile(r"^(?P<file>.+)\.(?:bak\.(?P<when>[^/\\]+)|bak-\d+-(?P<ts>[^/\\]+))$")
_IMPORTED = re.compile(r"^(?P<file>.+)\.imported-(?P<ms>\d{10,16})$")


def parse_archive_time(text: str) -> datetime | None:
    """The time in an archive suffix: ``2026-01-16T14-30-00.000Z`` or epoch milliseconds; else None."""
    match = _ARCHIVE_TIME.match(text)
    if match:
        year, month, day, hour, minute, second = (int(part) for part in match.groups()[:6])
        fraction = match.group(7) or "0"
        try:
            return datetime(
                year, month, day, hour, minute, second, int(fraction.ljust(6, "0")[:6]), tzinfo=UTC
            )
        except ValueError:
            return None
    if text.isdigit() and 10 <= len(text) <= 16:
        number = int(text)
        try:
            # 10 digits are seconds; more are milliseconds.
            return datetime.fromtimestamp(number if len(text) == 10 else number / 1000.0, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    return None


def _transcript(name: str, file_id: str, kind: LegacyKind, when: datetime | None = None) -> LegacyName:
    """Classify a transcript's own id (``file_id``, the name without ``.jsonl``)."""
    if not file_id or file_id.startswith("."):
        return LegacyName(name, LegacyKind.OTHER)
    checkpoint = _CHECKPOINT.match(f"{file_id}.jsonl")
    if checkpoint:
        return LegacyName(name, LegacyKind.CHECKPOINT, checkpoint.group("base"), file_id, archived_at=when)
    if file_id.endswith(".trajectory"):
        base = file_id[: -len(".trajectory")]
        return LegacyName(name, LegacyKind.TRAJECTORY, base or None, file_id, archived_at=when)
    topic = _TOPIC.match(file_id)
    if topic:
        session_kind = LegacyKind.TOPIC if kind is LegacyKind.SESSION else kind
        return LegacyName(name, session_kind, topic.group("base"), file_id, topic.group("topic"), when)
    return LegacyName(name, kind, file_id, file_id, archived_at=when)


def classify_legacy_name(name: str) -> LegacyName:
    """Say what a file in a legacy ``sessions/`` folder is, from its name alone.

    Examples: ``abc.jsonl`` → session ``abc``; ``abc.jsonl.reset.2026-01-16T14-30-00.000Z`` →
    archived session ``abc``; ``abc-topic-42.jsonl`` → topic 42 of session ``abc``;
    ``abc.trajectory.jsonl`` and ``abc.checkpoint.<uuid>.jsonl`` → not sessions.

    Args:
        name: a file name (a path's last component; anything with a separator is ``other``).

    Returns:
        The classification; ``is_session`` tells whether a listing should show it.
    """
    if not name or "/" in name or "\\" in name or "\x00" in name:
        return LegacyName(name, LegacyKind.OTHER)
    if name == "sessions.json":
        return LegacyName(name, LegacyKind.STORE)
    imported = _IMPORTED.match(name)
    if imported:
        inner = classify_legacy_name(imported.group("file"))
        return LegacyName(
            name, LegacyKind.IMPORTED, inner.session_id, inner.file_id, inner.topic,
            parse_archive_time(imported.group("ms")),
        )
    backup = _BACKUP.match(name)
    if backup and not name.endswith(".jsonl"):
        inner = classify_legacy_name(backup.group("file"))
        when = parse_archive_time(backup.group("when") or backup.group("ts") or "")
        return LegacyName(name, LegacyKind.BACKUP, inner.session_id, inner.file_id, inner.topic, when)
    archive = _ARCHIVE.match(name)
    if archive:
        kind = LegacyKind.RESET if archive.group("reason") == "reset" else LegacyKind.DELETED
        file_id = archive.group("file")[: -len(".jsonl")]
        return _transcript(name, file_id, kind, parse_archive_time(archive.group("when")))
    if name.endswith(".jsonl"):
        return _transcript(name, name[: -len(".jsonl")], LegacyKind.SESSION)
    return LegacyName(name, LegacyKind.OTHER)


def legacy_sessions(names: Iterable[str]) -> list[LegacyName]:
    """The transcripts among ``names`` (archives included), sorted by name."""
    return sorted(
        (item for item in map(classify_legacy_name, names) if item.is_session), key=lambda item: item.name
    )
