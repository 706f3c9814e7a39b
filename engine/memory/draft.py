"""A flush draft: the candidate memories drafted from a session (by either drafter), for the user to review."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

MAX_ITEM_CHARS = 200
DRAFT_KINDS = ("preference", "identity", "decision", "instruction", "plan", "fact", "confirmed")


@dataclass(frozen=True)
class DraftItem:
    """One candidate memory.

    Attributes:
        text: a standalone statement, one line, at most 200 characters.
        kind: one of :data:`DRAFT_KINDS`.
        session_id: the session it came from.
        line: the JSONL line of the message it came from.
        said_at: when that message was said (its timestamp; None when the transcript has none): a flush files
            the item under that day's note.
    """

    text: str
    kind: str
    session_id: str
    line: int
    said_at: datetime | None = None

    def bullet(self) -> str:
        """The Markdown bullet with its back-reference: ``- <text> (session <id8>, line <N>)``."""
        return f"- {self.text} (session {self.session_id[:8]}, line {self.line})"


@dataclass(frozen=True)
class Draft:
    """Candidate memories drafted from a session, for the user to review before appending.

    Attributes:
        items: the candidates, in transcript order.
        session_id: the session drafted from.
        method: ``extractive`` or ``llm``.
        considered: statements (extractive) or transcript lines (LLM) looked at.
        skipped_known: candidates dropped because memory already holds them.
        warnings: things the user should know (e.g. the transcript was cut for the LLM).
    """

    items: tuple[DraftItem, ...]
    session_id: str
    method: str
    considered: int = 0
    skipped_known: int = 0
    warnings: tuple[str, ...] = ()

    @property
    def is_empty(self) -> bool:
        """True when there is nothing to store."""
        return not self.items
