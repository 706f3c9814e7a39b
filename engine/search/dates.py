"""Dates in queries and in daily-note paths: which days and months a query names, and which files they are."""

from __future__ import annotations

import re
from collections.abc import Set
from datetime import date

Day = tuple[int | None, int, int]
"""A named calendar day: ``(year or None when the query gave none, month, day)``."""
Month = tuple[int, int]
"""A named month without a day: ``(year, month)``."""

_DATED_RE = re.compile(r"(?:^|/)memory/(?:.*/)?(\d{4})-(\d{2})-(\d{2})(?:-[^/]*)?\.md$")

_MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"], 1)}
_MONTHS.update({name[:3]: num for name, num in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MONTH_RE = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_DAY_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?(?:\s+of)?\s+" + _MONTH_RE + r"(?:,?\s+(\d{4}))?\b", re.I)
_MONTH_DAY = re.compile(r"\b" + _MONTH_RE + r"\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(\d{4}))?", re.I)
_MONTH_YEAR = re.compile(r"\b" + _MONTH_RE + r",?\s+(\d{4})\b", re.I)
_ISO_MONTH = re.compile(r"\b(\d{4})-(\d{1,2})\b(?!-\d)")


def file_date(path: str) -> date | None:
    """The date of a dated daily file (``memory/2026-01-12.md``, ``memory/2026-01-12-slug.md``), else None."""
    m = _DATED_RE.search(path)
    if not m:
        return None
    try:
        return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None


def query_dates(text: str, today: date | None = None) -> set[Day]:
    """Calendar days a query names: ``2026-11-10``, ``October 14``, ``14 Oct 2026`` → ``(year|None, month, day)``.

    ``today`` is the day that relative dates ("yesterday") will count from; the absolute forms read here
    do not need it, and a year-less day stays year-less (it matches that day of every year).
    """
    found: set[Day] = set()
    for y, m, d in _ISO_DATE.findall(text):
        found.add((int(y), int(m), int(d)))
    for d, mon, y in _DAY_MONTH.findall(text):
        found.add((int(y) if y else None, _MONTHS[mon.lower()], int(d)))
    for mon, d, y in _MONTH_DAY.findall(text):
        found.add((int(y) if y else None, _MONTHS[mon.lower()], int(d)))
    return {(y, m, d) for y, m, d in found if 1 <= m <= 12 and 1 <= d <= 31}


def query_months(text: str, today: date | None = None, days: Set[Day] | None = None) -> set[Month]:
    """Months a query names without a day: ``in July 2023``, ``2023-07`` → ``(year, month)``.

    A month that one of the query's named ``days`` (read from ``text`` when not given) falls in is not
    counted again: "14 July 2023" names a day, not July.
    """
    found: set[Month] = set()
    for mon, y in _MONTH_YEAR.findall(text):
        found.add((int(y), _MONTHS[mon.lower()]))
    for y, m in _ISO_MONTH.findall(text):
        if 1 <= int(m) <= 12:
            found.add((int(y), int(m)))
    if days is None:
        days = query_dates(text, today)
    return {(y, m) for y, m in found if not any(dy == y and dm == m for dy, dm, _ in days)}


def date_matches(path: str, dates: Set[Day]) -> bool:
    """Whether a dated daily file is one of the named days."""
    day = file_date(path)
    if day is None:
        return False
    return any((y is None or y == day.year) and m == day.month and d == day.day for y, m, d in dates)


def month_matches(path: str, months: Set[Month]) -> bool:
    """Whether a dated daily file falls in one of the named months."""
    day = file_date(path)
    return day is not None and (day.year, day.month) in months
