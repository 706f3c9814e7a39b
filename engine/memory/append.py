"""Writing a reviewed flush: the block a draft becomes, appended atomically to the daily note, and the record
of which sessions were flushed."""

from __future__ import annotations

import contextlib
import os
from datetime import UTC, date, datetime, tzinfo
from pathlib import Path

from engine.memory.draft import Draft, DraftItem
from engine.memory.names import daily_file, daily_heading
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
        single = DraftItem(" ".join(item.text.split()), item.kind, item.session_id, item.line)
        lines.append(single.bullet())
    return "\n".join(lines) + "\n"


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
