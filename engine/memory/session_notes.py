"""Session notes (§9, but never overwriting): OpenClaw's session-memory note of a conversation, its slug, and
the file it is written to, ``memory/YYYY-MM-DD-<slug>.md``."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime, tzinfo
from pathlib import Path

from engine.clock import Clock, zone_label
from engine.memory.saving import FlushError
from engine.memory.slugs import clean_slug, keyword_slug
from engine.secrets import redact_secrets
from engine.sessions.model import Transcript
from engine.textio import create_new_file

NOTE_MESSAGE_CHARS = 4000

def _in_zone(now: datetime | None, tz: tzinfo | None) -> datetime:
    """``now`` (default: the clock's now, :class:`engine.clock.Clock`) in ``tz`` (None: UTC, the name and header
    rule before OpenClaw 2026.9); a naive ``now`` is a wall time in ``tz``."""
    clock = Clock(tz if tz is not None else UTC)
    return clock.in_zone(now) if now is not None else clock.now()


def _note_messages(transcript: Transcript, messages: int) -> list[tuple[str, str]]:
    kept: list[tuple[str, str]] = []
    for entry in transcript.messages():
        message = entry.message
        if message is None or message.role not in ("user", "assistant"):
            continue
        if message.role == "user" and message.provenance_kind == "inter_session":
            continue
        text = message.text.strip()
        if not text or text.startswith("/"):
            continue
        kept.append((message.role, text))
    return kept[-messages:] if messages > 0 else []


def _note_line(role: str, text: str) -> str:
    if len(text) > NOTE_MESSAGE_CHARS:
        text = text[:NOTE_MESSAGE_CHARS].rstrip() + " …"
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    # Continuation lines are indented so a message's "# ..." never becomes a heading of the note.
    return "\n".join([f"{role}: {lines[0]}", *(f"    {line}" for line in lines[1:])])


def build_session_note(
    transcript: Transcript,
    session_key: str = "unknown",
    source: str = "unknown",
    messages: int = 15,
    now: datetime | None = None,
    *,
    redact: bool = True,
    tz: tzinfo | None = None,
) -> str:
    """Render a session note like OpenClaw's session-memory hook.

    Keeps user/assistant messages with text, drops forwarded (``inter_session``) user messages and
    ``/commands``, then takes the last ``messages``. Secrets are masked unless ``redact`` is False.

    Args:
        transcript: the session.
        session_key: e.g. ``agent:main:main``.
        source: where the session came from (e.g. ``telegram``).
        messages: how many messages to keep (after filtering).
        now: the event time; defaults to now.
        redact: mask secrets in message text.
        tz: the zone of the header, ``# Session: <date> <time> <zone>`` (see :func:`engine.clock.note_timezone`; None: UTC).

    Returns:
        The Markdown note, ending with a newline.
    """
    when = _in_zone(now, tz)
    lines = [
        f"# Session: {when:%Y-%m-%d %H:%M:%S} {zone_label(when)}",
        "",
        f"- **Session Key**: {session_key or 'unknown'}",
        f"- **Session ID**: {transcript.session_id or 'unknown'}",
        f"- **Source**: {source or 'unknown'}",
        "",
    ]
    kept = _note_messages(transcript, messages)
    if kept:
        lines += ["## Conversation Summary", ""]
        for role, text in kept:
            lines.append(_note_line(role, redact_secrets(text) if redact else text))
        lines.append("")
    return "\n".join(lines) + "\n"


def note_slug(
    transcript: Transcript,
    messages: int = 15,
    now: datetime | None = None,
    *,
    slug: str | None = None,
    slugger: Callable[[str], str] | None = None,
    keywords: bool = True,
    tz: tzinfo | None = None,
) -> str:
    """Choose a session note's slug.

    ``slug`` if given (cleaned), else ``slugger(conversation)`` (e.g. an LLM; an exception or an
    empty answer falls through), else (with ``keywords``) the conversation's top keywords, else the ``HHMM``
    of ``now`` in ``tz`` — OpenClaw 2026.9's name when no LLM slug is made (``keywords=False``).

    Args:
        transcript: the session.
        messages: how many messages the note keeps (the slug looks at the same ones).
        now: the event time; defaults to now.
        slug: an explicit slug.
        slugger: makes a slug from the conversation text (secrets already masked).
        keywords: fall back to the conversation's keywords before the time.
        tz: the zone of the ``HHMM`` (None: UTC).
    """
    when = _in_zone(now, tz)
    conversation = "\n".join(f"{role}: {text}" for role, text in _note_messages(transcript, messages))
    chosen = clean_slug(slug) if slug else ""
    if not chosen and slugger is not None and conversation:
        try:
            chosen = clean_slug(slugger(redact_secrets(conversation)))
        except Exception:  # an LLM failure must not lose the note; keywords (or the time) stand in
            chosen = ""
    if not chosen and keywords:
        chosen = keyword_slug(conversation)
    return chosen or f"{when:%H%M}"


def _note_candidates(folder: Path, stem: str) -> Iterable[Path]:
    for counter in range(1, 1000):
        yield folder / (f"{stem}.md" if counter == 1 else f"{stem}-{counter}.md")


def session_note_path(workspace: Path, slug: str, now: datetime | None = None, tz: tzinfo | None = None) -> Path:
    """The path a session note with ``slug`` would get now (the first name not taken; the date in ``tz``)."""
    when = _in_zone(now, tz)
    folder = Path(workspace) / "memory"
    stem = f"{when:%Y-%m-%d}-{slug}"
    for candidate in _note_candidates(folder, stem):
        if not candidate.exists() and not candidate.is_symlink():
            return candidate
    raise FlushError(f"no free file name for {stem}.md in {folder}")


def write_session_note(
    workspace: Path,
    transcript: Transcript,
    session_key: str = "unknown",
    source: str = "unknown",
    messages: int = 15,
    now: datetime | None = None,
    *,
    slug: str | None = None,
    slugger: Callable[[str], str] | None = None,
    redact: bool = True,
    keywords: bool = True,
    tz: tzinfo | None = None,
) -> Path:
    """Write a session note to ``memory/YYYY-MM-DD-<slug>.md`` (the date in ``tz``), never overwriting.

    The slug comes from :func:`note_slug`. When the name is taken, ``-2``, ``-3``, … is appended;
    the file is created atomically and only if it does not exist. OpenClaw 2026.9's names are
    ``keywords=False`` with the user's zone: ``memory/YYYY-MM-DD-HHMM.md``, or an LLM's slug for ``HHMM``.

    Args:
        workspace: the workspace root (``memory/`` is created if missing).
        transcript: the session.
        session_key: e.g. ``agent:main:main``.
        source: where the session came from.
        messages: how many messages to keep.
        now: the event time; defaults to now.
        slug: an explicit slug (cleaned).
        slugger: makes a slug from the conversation text (e.g. :func:`engine.memory.llm.slug_with_llm`).
        redact: mask secrets in the note.
        keywords: let the conversation's keywords name the note when there is no slug (see :func:`note_slug`).
        tz: the zone of the date, the ``HHMM`` and the header (None: UTC).

    Returns:
        The path written.

    Raises:
        FlushError: no free file name could be found.
        OSError: the memory folder cannot be written.
    """
    when = _in_zone(now, tz)
    note = build_session_note(transcript, session_key, source, messages, when, redact=redact, tz=tz)
    chosen = note_slug(transcript, messages, when, slug=slug, slugger=slugger, keywords=keywords, tz=tz)
    folder = Path(workspace) / "memory"
    folder.mkdir(parents=True, exist_ok=True)
    data = note.encode("utf-8")
    stem = f"{when:%Y-%m-%d}-{chosen}"
    for target in _note_candidates(folder, stem):
        if create_new_file(target, data):
            return target
    raise FlushError(f"no free file name for {stem}.md in {folder}")
