"""What a memory file's name says: dated notes (the daily note, session notes), the daily note's first line,
topics' names and first lines, and where a memory file's copy goes in memdeck's data dir."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from engine.config import Config
from engine.errors import PathRefused

DATED_NOTE = re.compile(r"^memory/([0-9]{4})-([0-9]{2})-([0-9]{2})(?:-([^/]+))?\.md$")
"""The one rule for dated notes: ``memory/YYYY-MM-DD.md`` (a daily note) or ``memory/YYYY-MM-DD-<slug>.md``
(a session note), in ASCII digits (OpenClaw's names). Groups: year, month, day, slug (None for a daily note)."""

_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


@dataclass(frozen=True)
class DatedNote:
    """What a dated note's name says: its day, and the slug of a session note (None for the daily note)."""

    day: date
    slug: str | None = None

    @property
    def is_daily(self) -> bool:
        """True for ``memory/YYYY-MM-DD.md`` itself."""
        return self.slug is None


def dated_note(rel: str) -> DatedNote | None:
    """Read a dated note's name (see :data:`DATED_NOTE`); None for other files and impossible dates."""
    match = DATED_NOTE.match(rel)
    if match is None:
        return None
    try:
        day = date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return None
    return DatedNote(day, match.group(4))


# A name that reads as a date: a 4-digit year, then month and day of 1 or 2 digits in any script (``2026-1-5``,
# full-width ``２０２６-１１-２７``), before ``.md`` or a ``-slug``.
_DATED_LOOKING = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})(?=[-.])")
_CANONICAL_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def check_dated_name(rel: str) -> None:
    """Refuse a name a write would make but no date rule would read as meant.

    - a name that reads as a date but names no real day (``memory/2026-13-45.md``, ``2026-02-30-x.md``): a daily
      note for a day that does not exist, never "today", never found by a date;
    - a date not written ``YYYY-MM-DD`` in ASCII digits (``memory/2026-1-5.md``, full-width digits): neither
      memdeck nor OpenClaw would take it for that day's note; the message names the form that is;
    - a hidden or blank name (``memory/.md``, ``memory/.x.md``, ``memory/ .md``): the scan and the watcher skip
      dot files, so what is written there would never be found.

    Raises:
        PathRefused: saying what is wrong and what a name looks like.
    """
    parts = rel.split("/")
    name = parts[-1]
    if any(part.startswith(".") for part in parts) or not name.removesuffix(".md").strip():
        raise PathRefused(f"path refused: {rel!r} is a hidden or blank name, which the index never reads; "
                          "name the note with letters or digits (memory/<topic>.md)")
    match = _DATED_LOOKING.match(name)
    if match is None:
        return
    try:
        day = date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        raise PathRefused(
            f"path refused: {rel} is named for {match.group()}, which is not a calendar date; "
            "dated notes are memory/YYYY-MM-DD.md (or memory/YYYY-MM-DD-<slug>.md) for a real day"
        ) from None
    if _CANONICAL_DATE.fullmatch(match.group()) is None:
        raise PathRefused(
            f"path refused: {rel} writes the date {match.group()} in a form no date rule reads; "
            f"that day's note is {daily_rel(day)} (or memory/{day:%Y-%m-%d}-<slug>.md)"
        )


def daily_rel(day: date) -> str:
    """The daily note for ``day``: ``memory/YYYY-MM-DD.md``."""
    return f"memory/{day:%Y-%m-%d}.md"


def daily_file(workspace: Path, day: date) -> Path:
    """The daily log for ``day``: ``<workspace>/memory/YYYY-MM-DD.md``."""
    return Path(workspace) / daily_rel(day)


def daily_heading(day: date) -> str:
    """The first line of every new daily note, whoever creates it: ``# 2026-11-27 — Friday, 27 November 2026``.

    English names whatever the locale, as the demo's notes have them (``%A``/``%B`` would follow the locale).
    """
    return f"# {day:%Y-%m-%d} — {_WEEKDAYS[day.weekday()]}, {day.day} {_MONTHS[day.month - 1]} {day.year}"


def heading_for(rel: str) -> str | None:
    dated = dated_note(rel)
    return daily_heading(dated.day) if dated is not None and dated.is_daily else None


# ---------------------------------------------------------------------------------------------
# Topics


def topic_rel(name: str) -> str:
    """Turn what the user typed into ``memory/<name>.md`` (sub-folders allowed, nothing else).

    Raises:
        PathRefused: nothing usable is left of the name.
    """
    text = name.strip().replace("\\", "/")
    if text.startswith("memory/"):
        text = text[len("memory/") :]
    if text.endswith(".md"):
        text = text[:-3]
    parts = []
    for part in text.split("/"):
        slug = re.sub(r"[^\w.-]+", "-", part.strip(), flags=re.UNICODE).strip("-.").lower()
        if slug:
            parts.append(slug)
    if not parts:
        raise PathRefused("a topic needs a name (letters, digits, - or _)")
    return "memory/" + "/".join(parts) + ".md"


def topic_heading(rel: str) -> str:
    """A new topic file's first line: ``# Travel plans`` for ``memory/travel-plans.md``."""
    title = Path(rel).stem.replace("-", " ").replace("_", " ").strip().capitalize() or "Topic"
    return f"# {title}"


def aside_rel(config: Config, rel: str) -> str:
    """Where a memory file's rel goes under a data-dir folder: the rel itself; ``extra/<path>`` for extra paths."""
    return rel if not Path(rel).is_absolute() else "extra/" + Path(rel).as_posix().lstrip("/")
