"""Writing a reviewed flush: the block a draft becomes, appended atomically to the daily note, and the record
of which sessions were flushed."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, tzinfo
from pathlib import Path

from engine.memory.draft import Draft, DraftItem
from engine.memory.names import daily_file, daily_heading, daily_rel
from engine.memory.saving import FlushError, append_or_create
from engine.sessions.sources import FLUSH_RECORD
from engine.state import read_json_state, write_json_state
from engine.textio import WriteRefused


def render_flush_block(draft: Draft, now: datetime, tz: tzinfo | None = None) -> str:
    """Render a draft as a timestamped section for a daily file.

    Args:
        draft: the reviewed draft.
        now: the time shown in the heading.
        tz: the user's zone (see :func:`engine.clock.note_timezone`): an aware ``now`` is shown in it.
            None: ``now`` as given.

    Returns:
        ``## HH:MM — Memory flush from session <id8>``, a blank line and one bullet per item,
        ending with a newline; an empty string when the draft has no items.
    """
    if draft.is_empty:
        return ""
    if tz is not None and now.tzinfo is not None:
        now = now.astimezone(tz)
    lines = [f"## {now:%H:%M} — Memory flush from session {draft.session_id[:8]}", ""]
    for item in draft.items:
        single = replace(item, text=" ".join(item.text.split()))
        lines.append(single.bullet())
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# Planning a flush: which daily note each item goes to

FLUSH_DAYS = ("said", "today", "last")
"""Where a flush files its items: ``said`` each under the day it was said (one block per day, the default),
``today`` all in today's note, ``last`` all in the note of the day of the session's last message."""

_SEPARATOR = re.compile(r"^<!-- flush → (memory/(\d{4})-(\d{2})-(\d{2})\.md) -->\s*$")


def separator(rel: str) -> str:
    """The line a flush preview puts before each day's block: ``<!-- flush → memory/2026-11-12.md -->``."""
    return f"<!-- flush → {rel} -->"


@dataclass(frozen=True)
class FlushBlock:
    """One daily note's part of a flush: the block appended to ``memory/<day>.md``.

    Attributes:
        day: the daily note's day.
        rel: ``memory/YYYY-MM-DD.md``.
        text: the block (``## HH:MM — Memory flush from session <id8>`` and its bullets).
        items: the items in it.
    """

    day: date
    rel: str
    text: str
    items: tuple[DraftItem, ...]


@dataclass(frozen=True)
class FlushPlan:
    """Where a reviewed flush goes: one block per daily note, in day order.

    Attributes:
        session_id: the session flushed.
        blocks: the blocks (none when the draft is empty).
        day: how the notes were chosen (:data:`FLUSH_DAYS`).
        fallback: the note an empty plan (or preview text before any separator) goes to.
    """

    session_id: str
    blocks: tuple[FlushBlock, ...]
    day: str
    fallback: date

    @property
    def is_empty(self) -> bool:
        """True when there is nothing to append."""
        return not self.blocks

    @property
    def paths(self) -> tuple[str, ...]:
        """The daily notes written, ``memory/YYYY-MM-DD.md``, in day order (the fallback's when empty)."""
        return tuple(block.rel for block in self.blocks) or (daily_rel(self.fallback),)

    @property
    def preview(self) -> str:
        """The text to review: the one block, or each day's block after its ``<!-- flush → memory/… -->``
        separator (:func:`separator`) when the flush goes to more than one note."""
        if len(self.blocks) == 1:
            return self.blocks[0].text
        return "\n".join(f"{separator(block.rel)}\n{block.text}" for block in self.blocks)

    def split(self, text: str) -> list[tuple[date, str]]:
        """An edited :attr:`preview` back into ``(day, block)`` pairs: each separator starts the block of the
        note it names; text before the first separator goes to the first note. Empty blocks are dropped."""
        first = self.blocks[0].day if self.blocks else self.fallback
        return split_preview(text, first)


def split_preview(text: str, first: date) -> list[tuple[date, str]]:
    """A flush preview's ``(day, block)`` pairs (see :attr:`FlushPlan.split`), in the order written; two parts
    for the same note are joined."""
    parts: dict[date, list[str]] = {}
    current = first
    lines: list[str] = []

    def close() -> None:
        block = "\n".join(lines).strip("\n")
        if block.strip():
            parts.setdefault(current, []).append(block)

    for line in text.split("\n"):
        match = _SEPARATOR.match(line)
        day = None
        if match is not None:
            with contextlib.suppress(ValueError):  # not a day ("2026-02-30"): kept as the user's text
                day = date(int(match.group(2)), int(match.group(3)), int(match.group(4)))
        if day is None:
            lines.append(line)
            continue
        close()
        lines = []
        current = day
    close()
    return [(day, "\n\n".join(blocks) + "\n") for day, blocks in parts.items()]


def _day_of(when: datetime, tz: tzinfo | None) -> datetime:
    return when.astimezone(tz) if tz is not None and when.tzinfo is not None else when


def plan_flush(draft: Draft, now: datetime, tz: tzinfo | None = None, *, day: str = "said",
               turn_times: Iterable[datetime] = (), last_message: datetime | None = None) -> FlushPlan:
    """Plan where a draft's items go.

    Args:
        draft: the (reviewed) draft.
        now: the time now; its day is today's note, its time the heading of a ``today``/``last`` block.
        tz: the user's zone: days and heading times are read in it.
        day: ``said`` (each item under the day it was said: one block per day, its heading's time the last turn
            of that day; an item with no time goes to today), ``today`` or ``last`` (one block, as before).
        turn_times: every message time of the session (the last of a day is that block's heading time).
        last_message: the session's last message time (``last``).

    Raises:
        ValueError: an unknown ``day``.
    """
    if day not in FLUSH_DAYS:
        raise ValueError(f"unknown flush day {day!r} (one of {', '.join(FLUSH_DAYS)})")
    now = _day_of(now, tz)
    today = now.date()
    if day != "said":
        target = _day_of(last_message, tz).date() if day == "last" and last_message is not None else today
        if draft.is_empty:
            return FlushPlan(draft.session_id, (), day, target)
        block = FlushBlock(target, daily_rel(target), render_flush_block(draft, now, tz), draft.items)
        return FlushPlan(draft.session_id, (block,), day, target)
    groups: dict[date, list[DraftItem]] = {}
    for item in draft.items:
        said = _day_of(item.said_at, tz).date() if item.said_at is not None else today
        groups.setdefault(said, []).append(item)
    last_turn: dict[date, datetime] = {}
    for when in turn_times:
        local = _day_of(when, tz)
        if local.date() not in last_turn or local > last_turn[local.date()]:
            last_turn[local.date()] = local
    blocks: list[FlushBlock] = []
    for said in sorted(groups):
        items = groups[said]
        stamps = [_day_of(item.said_at, tz) for item in items if item.said_at is not None]
        heading = last_turn.get(said) or (max(stamps) if stamps else now)
        part = replace(draft, items=tuple(items))
        blocks.append(FlushBlock(said, daily_rel(said), render_flush_block(part, heading, tz), tuple(items)))
    return FlushPlan(draft.session_id, tuple(blocks), day, blocks[0].day if blocks else today)


def append_flush(workspace: Path, block: str, day: date) -> Path:
    """Append a flush block to ``memory/YYYY-MM-DD.md`` atomically, never changing what is there.

    A missing daily note is created with the daily heading (:func:`engine.memory.names.daily_heading`), the
    same first line the editor and the MCP server give a new daily note.

    Args:
        workspace: the workspace root (``memory/`` is created if missing).
        block: the text to append (see :func:`render_flush_block`).
        day: which daily file.

    Returns:
        The daily file.

    Raises:
        FlushError: the block is empty, or the daily file is a symlink or not a regular file.
        OSError: the folder cannot be written.
    """
    if not block.strip():
        raise FlushError("nothing to append: the flush block is empty")
    target = daily_file(workspace, day)
    try:
        append_or_create(target, block, daily_heading(day))
    except WriteRefused as exc:
        raise FlushError(str(exc)) from exc
    return target


def record_flush(state_path: Path, session_id: str, when: datetime) -> None:
    """Record that a session was flushed, in memdeck's flush record (``{session_id: iso time}``).

    A record that cannot be parsed is kept aside as ``<name>.corrupt`` rather than lost.

    Args:
        state_path: the JSON file (e.g. ``<home>/flush-state.json``); its folder is created.
        session_id: the session.
        when: the flush time (stored in UTC).
    """
    path = Path(state_path)
    state: dict[str, str] = {}
    read = read_json_state(path, FLUSH_RECORD, then="kept aside as .corrupt")
    if isinstance(read.document, dict):
        state = {key: value for key, value in read.document.items() if isinstance(value, str)}
    elif read.warning is not None or read.document is not None:
        with contextlib.suppress(OSError):
            os.replace(path, path.with_name(path.name + ".corrupt"))
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    state[session_id] = when.astimezone(UTC).isoformat().replace("+00:00", "Z")
    write_json_state(path, state)
