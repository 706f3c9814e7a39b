"""What a review finds (findings over cited lines) and the dismissals it remembers in memdeck's data dir."""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.state import read_json_state, write_json_state

KINDS = ("duplicate", "conflict", "promote", "budget")
"""The finding kinds, in the order the CLI and the Review screen list them (``budget``: a section to move out of
a MEMORY.md/USER.md that OpenClaw cuts at a session's start, see :mod:`engine.review.budget`)."""


@dataclass(frozen=True)
class ReviewItem:
    """One cited statement: a line range of a workspace file and its text (the lines joined by newlines)."""

    path: str
    start_line: int
    end_line: int
    text: str
    day: str | None = None  # the note's date (YYYY-MM-DD) for a dated daily note or session note, else None

    @property
    def citation(self) -> str:
        """``path#L4`` or ``path#L4-L6``."""
        if self.start_line == self.end_line:
            return f"{self.path}#L{self.start_line}"
        return f"{self.path}#L{self.start_line}-L{self.end_line}"

    def to_json(self) -> dict[str, Any]:
        """``{"path", "startLine", "endLine", "text"}`` (plus ``date`` when the note is dated)."""
        out: dict[str, Any] = {"path": self.path, "startLine": self.start_line, "endLine": self.end_line,
                               "text": self.text}
        if self.day is not None:
            out["date"] = self.day
        return out


@dataclass(frozen=True)
class Finding:
    """A review finding: its kind, the statements it is about, why, how sure (0–1) and what to do.

    ``current`` (conflicts): the index in ``items`` of the statement that is likely current (the newest);
    the others are the likely superseded ones. ``id`` is stable while the statements' texts and paths stay
    the same (line numbers may move), so a dismissal survives edits elsewhere in the file.
    """

    kind: str
    items: tuple[ReviewItem, ...]
    reason: str
    score: float
    suggestion: str
    current: int | None = None
    id: str = field(default="")
    evidence: str = ""  # the evidence group whose measured precision is the score (engine.review.precision)
    deletable: tuple[int, ...] = ()  # the items (duplicates) another item holds every value and word of
    target: str = ""  # budget: the note the section moves to (``memory/projects.md``)

    @property
    def confident(self) -> bool:
        """Whether the finding's measured precision is high enough to be shown by default."""
        from engine.review.precision import confident

        return confident(self.score)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown finding kind {self.kind!r}")
        if not self.id:
            object.__setattr__(self, "id", finding_id(self.kind, self.items))

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` shape: ``{"kind", "items", "reason", "score", "suggestion"}`` plus ``id``/``current``."""
        out: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "items": [i.to_json() for i in self.items],
            "reason": self.reason,
            "score": round(self.score, 4),
            "suggestion": self.suggestion,
        }
        if self.current is not None:
            out["current"] = self.current
        out["evidence"] = self.evidence
        out["confident"] = self.confident
        if self.kind == "duplicate":
            out["deletable"] = list(self.deletable)
        if self.target:
            out["target"] = self.target
        return out


def finding_id(kind: str, items: tuple[ReviewItem, ...]) -> str:
    """A short stable id: the kind plus each item's path and whitespace-normalised, case-folded text."""
    parts = sorted(f"{i.path}\0{' '.join(i.text.split()).casefold()}" for i in items)
    digest = hashlib.sha256("\n".join([kind, *parts]).encode("utf-8")).hexdigest()
    return f"{kind[0]}-{digest[:12]}"


@dataclass(frozen=True)
class ReviewReport:
    """A review's findings and what it looked at.

    ``files``: files reviewed; ``statements``: statements considered; ``compared``: statements that were new or
    changed since the last review (all of them on a first or ``full`` review); ``dismissed``: findings hidden
    because the user dismissed them; ``hidden``: findings not shown because their measured precision is below
    :data:`engine.review.precision.CONFIDENT` (empty when every finding was asked for); ``seconds``: wall time.
    """

    findings: tuple[Finding, ...]
    files: int = 0
    statements: int = 0
    compared: int = 0
    incremental: bool = False
    dismissed: int = 0
    seconds: float = 0.0
    warnings: tuple[str, ...] = ()
    hidden: tuple[Finding, ...] = ()  # findings below the confident score, left out unless all were asked for

    def to_json(self) -> dict[str, Any]:
        """``{"findings": [...], "stats": {...}}`` (``warnings`` when there are any)."""
        out: dict[str, Any] = {
            "findings": [f.to_json() for f in self.findings],
            "stats": {"files": self.files, "statements": self.statements, "compared": self.compared,
                      "incremental": self.incremental, "dismissed": self.dismissed,
                      "hidden": len(self.hidden), "seconds": round(self.seconds, 3)},
        }
        if self.warnings:
            out["warnings"] = list(self.warnings)
        return out


DISMISSED_FILE = "review-dismissed.json"
_LOCK = threading.Lock()


class DismissStore:
    """Dismissed finding ids, per workspace, in ``<data dir>/review-dismissed.json`` (written atomically).

    A corrupt file is logged and treated as empty (never a crash); it is replaced on the next dismissal.
    """

    def __init__(self, home: Path, workspace: Path) -> None:
        self.path = home / DISMISSED_FILE
        self.key = str(workspace.resolve())

    def _read(self) -> dict[str, dict[str, str]]:
        data = read_json_state(self.path, "memdeck's review dismissals").document
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(v, dict)}

    def ids(self) -> frozenset[str]:
        """The finding ids dismissed in this workspace."""
        return frozenset(self._read().get(self.key, {}))

    def dismiss(self, finding_id: str, when: str) -> None:
        """Remember that ``finding_id`` was dismissed (``when``: an ISO timestamp, shown to no one but kept)."""
        self._change(finding_id, when)

    def undismiss(self, finding_id: str) -> None:
        """Forget a dismissal (the undo of :meth:`dismiss`)."""
        self._change(finding_id, None)

    def _change(self, finding_id: str, when: str | None) -> None:
        with _LOCK:
            data = self._read()
            mine = dict(data.get(self.key, {}))
            if when is None:
                mine.pop(finding_id, None)
            else:
                mine[finding_id] = when
            data[self.key] = mine
            write_json_state(self.path, data)
