"""The one clock: what time and what day it is for memdeck, in the zone memory notes are dated in.

Every door (CLI, MCP, TUI), every write (a flush's heading and its daily note, an append to today's note, session
notes, review stamps, conflict and recovery copies, the trash) and every query's "today" read the time from a
:class:`Clock`, so near midnight a flush lands in the daily note of the same day its heading's time is on.

- **The zone** is ``[memory] timezone`` (an IANA name such as ``Asia/Tokyo``), else the system's local zone
  (:func:`note_timezone`).
- **MEMDECK_TODAY** (``YYYY-MM-DD``) pins the date, for tests and evals: :meth:`Clock.now` is then that day at the
  current wall time of day in the zone (two writes a minute apart still show a minute apart), and
  :meth:`Clock.today` is that day. Queries count "yesterday" from it; flushes and appends write its daily note.
- **MEMDECK_NOW** (an ISO 8601 time: ``2026-03-01T23:59:00-08:00``; without an offset, a wall time in the zone) is
  a test and eval hook that stands in for the system time, e.g. in a child process. With ``MEMDECK_TODAY`` as well,
  the pinned date wins and the time of day is ``MEMDECK_NOW``'s in the zone.
- In-process, ``Clock(zone, source=lambda: ...)`` injects the time instead (it wins over ``MEMDECK_NOW``).

Both variables are read on every call (a test may set one after an engine is made). A value that is not a date
(or a time) raises :class:`ClockError`, naming the variable and the form it takes.

This is a base module: it imports nothing of memdeck's but the config and the errors.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo

from engine.config import Config
from engine.errors import MemdeckError

TODAY_ENV = "MEMDECK_TODAY"
"""Pins "today" (``YYYY-MM-DD``): tests and evals."""

NOW_ENV = "MEMDECK_NOW"
"""Stands in for the system time (ISO 8601): a test and eval hook."""

_UTC_NAMES = frozenset({"UTC", "Etc/UTC", "Etc/UCT", "UCT", "Etc/Zulu", "Zulu", "Universal", "Etc/Universal",
                        "Etc/GMT", "GMT", "Etc/Greenwich"})


class ClockError(MemdeckError, ValueError):
    """``MEMDECK_TODAY`` or ``MEMDECK_NOW`` is set to something that is not a date (or a time)."""


def pinned_today() -> date | None:
    """``$MEMDECK_TODAY`` (``YYYY-MM-DD``) as a date — tests and evals pin "today" with it — or None when unset.

    Raises:
        ClockError: the variable is set but is not such a date (a ``ValueError`` too).
    """
    raw = os.environ.get(TODAY_ENV, "").strip()
    if not raw:
        return None
    try:
        # Only the form the docs name: fromisoformat alone also takes "20261021" and "2026-W43-3".
        if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", raw) is None:
            raise ValueError(raw)
        return date.fromisoformat(raw)
    except ValueError:
        raise ClockError(f"{TODAY_ENV}={raw!r} is not a date like 2026-10-21 (YYYY-MM-DD)") from None


def pinned_now() -> datetime | None:
    """``$MEMDECK_NOW`` as a time (aware when it names an offset, else a wall time), or None when unset.

    Raises:
        ClockError: the variable is set but is not a date with a time (``2026-03-01T23:59:00-08:00``).
    """
    raw = os.environ.get(NOW_ENV, "").strip()
    if not raw:
        return None
    try:
        if re.match(r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}", raw) is None:
            raise ValueError(raw)
        return datetime.fromisoformat(raw)
    except ValueError:
        raise ClockError(f"{NOW_ENV}={raw!r} is not a time like 2026-03-01T23:59:00-08:00 (ISO 8601)") from None


# ---------------------------------------------------------------------------------------------
# Zones


def _system_zone_name() -> str | None:
    """The system's IANA zone name: what ``TZ`` names, else what ``/etc/localtime`` links to (None: unknown)."""
    raw = os.environ.get("TZ")
    if raw is not None:
        name = raw.lstrip(":")
        if "/zoneinfo/" in name:
            name = name.split("/zoneinfo/", 1)[1]
        # A POSIX rule ("CET-1CEST") passes this too; ZoneInfo then refuses it and the offset is used.
        return name if re.fullmatch(r"[A-Za-z0-9_+-]+(?:/[A-Za-z0-9_+-]+)*", name) else None
    target = os.path.realpath("/etc/localtime")
    return target.split("/zoneinfo/", 1)[1] if "/zoneinfo/" in target else None


def note_timezone(name: str = "") -> tzinfo:
    """The zone memory notes are dated in: ``name`` (an IANA name), else the system's local zone.

    The system zone is used by its IANA name when it has one (so a past or future time gets its own offset);
    otherwise its current offset.

    Raises:
        ValueError: ``name`` is not a known zone (the config rule refuses such a value before this).
    """
    import zoneinfo  # deferred: only a note or a flush needs it

    wanted = name.strip() or _system_zone_name()
    if wanted:
        try:
            return zoneinfo.ZoneInfo(wanted)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
            if name.strip():
                raise ValueError(f"unknown time zone {name!r}") from None
    local = datetime.now().astimezone().tzinfo
    return local if local is not None else UTC


def zone_label(when: datetime) -> str:
    """How a note's header names its zone: ``UTC``, the IANA name (``Europe/Berlin``), else its abbreviation."""
    key = getattr(when.tzinfo, "key", None)
    if isinstance(key, str) and key:
        return "UTC" if key in _UTC_NAMES else key
    name = when.tzname()
    if when.utcoffset() == timedelta(0) and (not name or name in _UTC_NAMES):
        return "UTC"
    return name or when.strftime("UTC%z")


# ---------------------------------------------------------------------------------------------
# The clock


@dataclass(frozen=True)
class Clock:
    """What time and day it is, in ``zone`` (see the module's docstring for ``MEMDECK_TODAY``/``MEMDECK_NOW``).

    Attributes:
        zone: the zone notes are dated in.
        source: stands in for the system time (tests); an aware time is moved into ``zone``, a naive one is a
            wall time there. None: ``MEMDECK_NOW``, else the system time.
    """

    zone: tzinfo
    source: Callable[[], datetime] | None = None

    @classmethod
    def for_config(cls, config: Config, source: Callable[[], datetime] | None = None) -> Clock:
        """The clock of ``[memory] timezone`` (the system's zone when empty).

        Raises:
            ValueError: the zone is unknown (the config rule refuses such a value before this).
        """
        return cls(note_timezone(config.memory.timezone), source)

    def in_zone(self, when: datetime) -> datetime:
        """``when`` in :attr:`zone`: an aware time moved there, a naive one taken as a wall time there."""
        return when.astimezone(self.zone) if when.tzinfo is not None else when.replace(tzinfo=self.zone)

    def instant(self) -> datetime:
        """The time now in :attr:`zone`, with no date pinned: :attr:`source`, else ``MEMDECK_NOW``, else the system.

        Raises:
            ClockError: ``MEMDECK_NOW`` is not a time.
        """
        if self.source is not None:
            return self.in_zone(self.source())
        pinned = pinned_now()
        return self.in_zone(pinned) if pinned is not None else datetime.now(self.zone)

    def stamp(self) -> datetime:
        """The time now in :attr:`zone` for a name or a record that must not fail (a copy moved aside): as
        :meth:`instant`, but the system's time in :attr:`zone` when ``MEMDECK_NOW`` is unreadable."""
        try:
            return self.instant()
        except ClockError:
            return datetime.now(self.zone)

    def now(self) -> datetime:
        """The time now in :attr:`zone`; on ``MEMDECK_TODAY``'s date when it is set (the wall time of day kept).

        Raises:
            ClockError: ``MEMDECK_TODAY`` or ``MEMDECK_NOW`` is set to something else than a date or a time.
        """
        when = self.instant()
        day = pinned_today()
        if day is None:
            return when
        # The same wall time on the pinned day; a ZoneInfo gives the offset of that day.
        return when.replace(year=day.year, month=day.month, day=day.day)

    def today(self) -> date:
        """Today in :attr:`zone` (``MEMDECK_TODAY`` when set).

        Raises:
            ClockError: as :meth:`now`.
        """
        return self.now().date()
