"""The review's undo journal: each review action's files (their text before, a hash of their text after) in the data dir."""

from __future__ import annotations

import base64
import binascii
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.state import read_json_state, write_json_state

JOURNAL_FILE = "review-journal.json"
JOURNAL_LIMIT = 50
JOURNAL_MAX_BYTES = 512 * 1024 * 1024
"""The largest journal read: it keeps whole files' text before each of its last actions (a bound, not a budget)."""
"""How many review actions per workspace can be undone (the oldest are forgotten)."""

_LOCK = threading.Lock()


@dataclass(frozen=True)
class FileChange:
    """One file a review action wrote: its text before (None: the action created it) and the digest after.

    ``after`` is the sha256 of the bytes written (a :class:`~engine.textio.DiskStamp` digest), so undo can tell
    whether anyone changed the file since. ``before_data`` holds the exact bytes before when writing ``before``
    back would not give them (a line deleted from a file of mixed line endings); None otherwise (most actions:
    the journal stays small).
    """

    rel: str
    before: str | None
    after: str
    before_data: bytes | None = None

    def to_json(self) -> dict[str, Any]:
        """The journal's shape for one file."""
        row: dict[str, Any] = {"rel": self.rel, "before": self.before, "after": self.after}
        if self.before_data is not None:
            row["before_b64"] = base64.b64encode(self.before_data).decode("ascii")
        return row

    @classmethod
    def from_json(cls, data: Any) -> FileChange | None:
        """A journal row, or None when it is not one (a damaged journal is skipped, never a crash)."""
        if not isinstance(data, dict):
            return None
        rel, before, after, raw = data.get("rel"), data.get("before"), data.get("after"), data.get("before_b64")
        if not isinstance(rel, str) or not isinstance(after, str) or not (before is None or isinstance(before, str)):
            return None
        before_data: bytes | None = None
        if raw is not None:
            if not isinstance(raw, str):
                return None
            try:
                before_data = base64.b64decode(raw, validate=True)
            except (binascii.Error, ValueError):
                return None
        return cls(rel, before, after, before_data)


@dataclass(frozen=True)
class JournalEntry:
    """One review action that can be undone: what it was, when, and its files (none for a dismissal)."""

    action: str
    summary: str
    at: str
    finding_id: str = ""
    files: tuple[FileChange, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The journal's shape for one action."""
        return {"action": self.action, "summary": self.summary, "at": self.at, "finding_id": self.finding_id,
                "files": [f.to_json() for f in self.files]}

    @classmethod
    def from_json(cls, data: Any) -> JournalEntry | None:
        """A journal entry, or None when it is not one."""
        if not isinstance(data, dict):
            return None
        action, summary, at = data.get("action"), data.get("summary"), data.get("at")
        finding_id, raw_files = data.get("finding_id", ""), data.get("files", [])
        if not all(isinstance(v, str) for v in (action, summary, at, finding_id)) or not isinstance(raw_files, list):
            return None
        files = [FileChange.from_json(f) for f in raw_files]
        if any(f is None for f in files):
            return None
        return cls(str(action), str(summary), str(at), str(finding_id), tuple(f for f in files if f is not None))


class ReviewJournal:
    """The undo stack of review actions, per workspace, in ``<data dir>/review-journal.json`` (atomic writes).

    A corrupt journal is logged and read as empty (nothing to undo), then replaced on the next action.
    """

    def __init__(self, home: Path, workspace: Path) -> None:
        self.path = home / JOURNAL_FILE
        self.key = str(workspace.resolve())

    def _read(self) -> dict[str, list[Any]]:
        data = read_json_state(self.path, "memdeck's review undo journal", max_bytes=JOURNAL_MAX_BYTES).document
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(v, list)}

    def _write(self, data: dict[str, list[Any]]) -> None:
        write_json_state(self.path, data)

    def entries(self) -> list[JournalEntry]:
        """This workspace's undoable actions, oldest first."""
        with _LOCK:
            raw = self._read().get(self.key, [])
        return [e for e in (JournalEntry.from_json(r) for r in raw) if e is not None]

    def last(self) -> JournalEntry | None:
        """The action an undo would undo, if any."""
        entries = self.entries()
        return entries[-1] if entries else None

    def push(self, entry: JournalEntry) -> None:
        """Record an action (the oldest beyond :data:`JOURNAL_LIMIT` are dropped).

        Raises:
            OSError: the journal cannot be written.
        """
        with _LOCK:
            data = self._read()
            mine = [*data.get(self.key, []), entry.to_json()][-JOURNAL_LIMIT:]
            data[self.key] = mine
            self._write(data)

    def pop(self, entry: JournalEntry) -> None:
        """Forget ``entry`` once it is undone (only if it is still the last one: two undos never drop two).

        Raises:
            OSError: the journal cannot be written.
        """
        with _LOCK:
            data = self._read()
            mine = list(data.get(self.key, []))
            if mine and JournalEntry.from_json(mine[-1]) == entry:
                mine.pop()
                data[self.key] = mine
                self._write(data)
