"""Dates in queries and in daily-note paths: which days and months a query names, and which files they are."""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Callable, Set
from dataclasses import dataclass, replace
from datetime import date, timedelta

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
# A year after the day is read only when it is not the start of an ISO date ("Oct 5, 2026-09-01").
_DAY_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?(?:\s+of)?\s+" + _MONTH_RE + r"(?:,?\s+(\d{4})(?!-\d))?\b",
                        re.I)
_MONTH_DAY = re.compile(r"\b" + _MONTH_RE + r"\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(\d{4})(?!-\d))?", re.I)
_MONTH_YEAR = re.compile(r"\b" + _MONTH_RE + r",?\s+(\d{4})\b", re.I)
_ISO_MONTH = re.compile(r"\b(\d{4})-(\d{1,2})\b(?!-\d)")
# "5.10." and "5.10.2026" (day.month., as Serbian and German write it); not a version "1.2.3" or an address.
_DOTTED = re.compile(r"(?<![\w.])(\d{1,2})\.(\d{1,2})\.(?:(\d{4})\b\.?)?(?!\d)")
# 10月5日, 10月5号, 2026年10月5日, 十月五日.
_ZH_DAY = re.compile(r"(?:(\d{4})年)?([0-9]{1,2}|[一二三四五六七八九十]{1,3})月([0-9]{1,2}|[一二三四五六七八九十]{1,3})(?:日|号|號)")


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
    for d, mon, y in _DOTTED.findall(text):
        found.add((int(y) if y else None, int(mon), int(d)))
    for y, mon, d in _ZH_DAY.findall(text):
        month, day = _zh_number(mon), _zh_number(d)
        if month and day:
            found.add((int(y) if y else None, month, day))
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


# -- resolving date phrases against today ------------------------------------------------------------------
TODAY_ENV = "MEMDECK_TODAY"

_WEEKDAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
                "October", "November", "December")


@dataclass(frozen=True)
class DateSpan:
    """A date phrase of a query resolved to calendar days (both ends inclusive).

    Attributes:
        phrase: the words as the query wrote them (``"last Friday"``, ``"上周五"``).
        start: the first day; ``end``: the last (the same day for a single day).
        label: how the resolution reads (``Wed 21 Oct 2026``, ``Mon 23 Nov – Sun 29 Nov 2026``, ``March 2026``).
        kind: ``day``, ``range`` (a week, a weekend, a few days) or ``month``.
        relative: whether the phrase counts from today ("yesterday", "in March") rather than naming the date
            ("2026-10-05"); a relative phrase's own words leave the keyword query (see ``DATE_WORDS_IN_TERMS``).
        every_year: a day written without a year ("Oct 5"): it lifts that day of every year, while ``start``
            is the most recent one not after today.
        peak: within a ``range`` around one day ("two weeks ago": ±3 days), that day.
        where: the phrase's ``(start, end)`` character offsets in the query.
        keeps_words: a relative phrase whose words stay in the keyword query all the same: a month's name
            ("in March", "3月"), which notes write too ("the trip in March").
    """

    phrase: str
    start: date
    end: date
    label: str
    kind: str = "day"
    relative: bool = True
    every_year: bool = False
    peak: date | None = None
    where: tuple[int, int] = (0, 0)
    keeps_words: bool = False

    def to_json(self) -> dict[str, str]:
        """``{"phrase", "from", "to", "label"}`` (ISO days), as ``--json`` and MCP ``memory_search`` show it."""
        return {"phrase": self.phrase, "from": self.start.isoformat(), "to": self.end.isoformat(),
                "label": self.label}

    def days(self) -> list[date]:
        """Every day of the span, in order."""
        return [self.start + timedelta(days=i) for i in range((self.end - self.start).days + 1)]


def pinned_today() -> date | None:
    """``$MEMDECK_TODAY`` (``YYYY-MM-DD``) as a date — tests and evals pin "today" with it — or None when unset.

    Raises:
        ValueError: the variable is set but is not such a date.
    """
    raw = os.environ.get(TODAY_ENV, "").strip()
    if not raw:
        return None
    try:
        return date.fromisoformat(raw)
    except ValueError:
        raise ValueError(f"{TODAY_ENV}={raw!r} is not a date like 2026-10-21") from None


def day_label(day: date) -> str:
    """``Wed 21 Oct 2026``."""
    return f"{_WEEKDAY_NAMES[day.weekday()]} {day.day} {_MONTH_NAMES[day.month - 1][:3]} {day.year}"


def span_label(start: date, end: date) -> str:
    """``Wed 21 Oct 2026``, ``Mon 23 Nov – Sun 29 Nov 2026``, ``Mon 28 Dec 2026 – Sun 3 Jan 2027``, ``March 2026``."""
    if start == end:
        return day_label(start)
    if start.day == 1 and end == _month_end(start.year, start.month):
        return f"{_MONTH_NAMES[start.month - 1]} {start.year}"
    first = day_label(start)
    if start.year == end.year:
        first = first.rsplit(" ", 1)[0]
    return f"{first} – {day_label(end)}"


def _month_end(year: int, month: int) -> date:
    return date(year + month // 12, month % 12 + 1, 1) - timedelta(days=1)


def _week_start(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _latest_day(today: date, month: int, day: int) -> date | None:
    """The most recent ``month``/``day`` not after today (Feb 29: the last leap year's), None if no such day."""
    for year in range(today.year, today.year - 8, -1):
        try:
            found = date(year, month, day)
        except ValueError:
            continue
        if found <= today:
            return found
    return None


def _latest_month(today: date, month: int) -> tuple[int, int]:
    """The most recent ``month`` not in the future (the current month counts)."""
    return (today.year, month) if month <= today.month else (today.year - 1, month)


def _month_span(year: int, month: int) -> tuple[date, date]:
    return date(year, month, 1), _month_end(year, month)


def _shift_month(year: int, month: int, by: int) -> tuple[int, int]:
    index = year * 12 + month - 1 + by
    return index // 12, index % 12 + 1


# Folding: the rules below read a lowercased copy of the query in Latin letters without diacritics (Serbian
# Cyrillic transliterated, č/ć → c, š → s, ž → z, đ → dj, full-width digits as ASCII), and map what they find
# back to the query's own characters, so "јуче", "juče" and "juce" are one rule.
_CYRILLIC = dict(zip("абвгдђежзијклљмнњопрстћуфхцчџш",
                     ["a", "b", "v", "g", "d", "dj", "e", "z", "z", "i", "j", "k", "l", "lj", "m", "n", "nj",
                      "o", "p", "r", "s", "t", "c", "u", "f", "h", "c", "c", "dz", "s"], strict=True))


def _fold(text: str) -> tuple[str, list[int]]:
    """The folded text and, for each of its characters, the offset of the query character it came from."""
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        low = ch.lower()
        mapped = _CYRILLIC.get(low)
        if mapped is None:
            if low == "đ":
                mapped = "dj"
            elif low.isascii() or "\u4e00" <= low <= "\u9fff":
                mapped = low
            else:
                mapped = "".join(c for c in unicodedata.normalize("NFKD", low) if not unicodedata.combining(c))
                mapped = mapped.lower() if len(mapped) == 1 else low
        out.append(mapped)
        where.extend([i] * len(mapped))
    return "".join(out), where


_EN_NUMBERS = {w: n for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen".split())}
_EN_NUMBERS.update({"a": 1, "an": 1, "a couple of": 2, "couple of": 2})
_SR_NUMBERS = {"jedan": 1, "jednog": 1, "dva": 2, "dve": 2, "dvije": 2, "tri": 3, "cetiri": 4, "pet": 5,
               "sest": 6, "sedam": 7, "osam": 8, "devet": 9, "deset": 10}
_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9}


def _zh_number(text: str) -> int | None:
    """``3``, ``三``, ``十二``, ``二十一``, ``两`` → the number (up to 99), else None."""
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        t = _ZH_DIGITS.get(tens, -1) if tens else 1
        o = _ZH_DIGITS.get(ones, -1) if ones else 0
        return None if t < 0 or o < 0 else t * 10 + o
    return _ZH_DIGITS.get(text) if len(text) == 1 else None


def _number(word: str) -> int | None:
    word = re.sub(r"\s+", " ", word.strip())
    if word.isdigit():
        return int(word)
    return _EN_NUMBERS.get(word, _SR_NUMBERS.get(word))


_EN_WEEKDAYS = {name: i for i, name in enumerate(
    ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"])}
# Serbian weekday stems with their case endings (ponedeljak, ponedeljka, u sredu, srijedom, nedjelju …).
_SR_WEEKDAYS = [(r"pone(?:d|dj)elj(?:ak|ka|ku|kom)", 0), (r"utor(?:ak|ka|ku|kom)", 1),
                (r"sr(?:e|ije)d(?:a|e|u|om)", 2), (r"cetvrt(?:ak|ka|ku|kom)", 3), (r"pet(?:ak|ka|ku|kom)", 4),
                (r"subot(?:a|e|u|om)", 5), (r"ne(?:d|dj)elj(?:a|e|u|om)", 6)]
_ZH_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "七": 6}

_EN_WD = "(" + "|".join(_EN_WEEKDAYS) + ")"
_SR_WD = "(" + "|".join(f"(?:{stem})" for stem, _ in _SR_WEEKDAYS) + ")"
_ZH_WEEK = "(?:星期|礼拜|禮拜|周|週)"
_ZH_NUM = "([0-9]{1,2}|[一二两兩三四五六七八九十]{1,3})"
_EN_NUM = r"(\d{1,3}|a couple of|couple of|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve" \
          r"|thirteen|fourteen)"
_SR_NUM = r"(\d{1,3}|jedan|jednog|dva|dve|dvije|tri|cetiri|pet|sest|sedam|osam|devet|deset)"
_SR_PAST = r"(?:prosl(?:i|og|oga|e|u|a|oj|om))"
_SR_THIS = r"(?:ovaj|ovog|ovoga|ove|ovu|ova|ovoj|ovom|ovo)"
_SR_WEEK = r"(?:ne(?:d|dj)elj[aeiu]|sedmic[aeiu]|tjed(?:an|na|nu))"
_SR_MONTH = r"(?:mesec[aeu]?|mjesec[aeu]?)"
# Serbian month names (folded), with their case endings: "u oktobru", "5. oktobra", "u martu", "maja".
_SR_MONTHS = [("januar", 1), ("februar", 2), ("mart", 3), ("april", 4), ("maj", 5), ("jun", 6), ("jul", 7),
              ("avgust", 8), ("septemb(?:a)?r", 9), ("oktob(?:a)?r", 10), ("novemb(?:a)?r", 11), ("decemb(?:a)?r", 12)]
_SR_MONTH_NAME = "(" + "|".join(f"(?:{stem})" for stem, _ in _SR_MONTHS) + ")(?:a|u|om)?"


def _sr_month(word: str) -> int:
    return next(n for stem, n in _SR_MONTHS if re.fullmatch(stem, word))


def _sr_weekday(word: str) -> int:
    return next(i for stem, i in _SR_WEEKDAYS if re.fullmatch(stem, word))


# What may stand between a relative phrase and the day it counts from ("last weekend before April 10, 2023").
_ANCHOR_GAP = re.compile(r"\s*,?\s*(?:(?:as\s+)?(?:mentioned|said|written|noted|told)\s+)?"
                         r"(?:before|prior\s+to|on|as\s+of)\s+")


class _Resolver:
    """Reads every date phrase of one folded query; each rule adds ``(start offset, end offset, span)``."""

    def __init__(self, text: str, today: date) -> None:
        self.text = text
        self.today = today
        self.folded, self.where = _fold(text)
        self.found: list[tuple[int, int, DateSpan]] = []

    def add(self, m: re.Match[str], start: date, end: date | None = None, kind: str = "day", *,
            relative: bool = True, every_year: bool = False, peak: date | None = None,
            keeps_words: bool = False) -> None:
        end = end or start
        a, b = m.start(), m.end()
        lo, hi = self.where[a], self.where[b - 1] + 1
        phrase = self.text[lo:hi]
        if kind == "month":
            label = f"{_MONTH_NAMES[start.month - 1]} {start.year}"
        else:
            label = span_label(start, end) if peak is None else f"around {day_label(peak)}"
        self.found.append((lo, hi, DateSpan(phrase, start, end, label, kind, relative, every_year, peak, (lo, hi),
                                            keeps_words)))

    def each(self, pattern: str, flags: int = 0) -> list[re.Match[str]]:
        return list(re.finditer(pattern, self.folded, flags))

    # -- the rules ---------------------------------------------------------------------------------------
    def day_offsets(self) -> None:
        t = self.today
        fixed = [(r"\b(?:the\s+)?day\s+before\s+yesterday\b", 2), (r"\byesterday\b", 1), (r"\blast\s+night\b", 1),
                 (r"\b(?:earlier\s+)?today\b", 0), (r"\b(?:this\s+(?:morning|afternoon|evening)|tonight)\b", 0),
                 (r"\bdanas\b", 0), (r"\bjucer?\b", 1), (r"\bprekjucer?\b", 2), (r"\bsinoc\b", 1),
                 ("今天|今日|今早|今晚", 0), ("昨天|昨日|昨晚", 1), ("(?<!大)前天", 2), ("大前天", 3)]
        for pattern, back in fixed:
            for m in self.each(pattern):
                self.add(m, t - timedelta(days=back))
        for m in self.each(r"\b" + _EN_NUM + r"\s+(days?|weeks?)\s+(?:ago|back)\b"):
            self._ago(m, _number(m.group(1)), m.group(2).startswith("week"))
        for m in self.each(r"\ba\s+fortnight\s+ago\b"):
            self._ago(m, 2, True)
        # "a few days ago", "前几天": two to five days back, three the likeliest
        for m in self.each(r"\b(?:a\s+few|several)\s+days\s+(?:ago|back)\b|前几天|前幾天|pre\s+par\s+dana|prije\s+par\s+dana"):
            peak = t - timedelta(days=3)
            self.add(m, t - timedelta(days=5), t - timedelta(days=2), "range", peak=peak)
        for m in self.each(r"\b(?:pre|prije)\s+" + _SR_NUM + r"\s+(dana|dan)\b"):
            self._ago(m, _number(m.group(1)), False)
        for m in self.each(r"\b(?:pre|prije)\s+(?:" + _SR_NUM + r"\s+)?(" + _SR_WEEK + r"|nedelja|nedjelja|sedmica)"
                           r"(?:\s+dana)?\b"):
            self._ago(m, _number(m.group(1)) if m.group(1) else 1, True)
        for m in self.each(_ZH_NUM + "(?:天|日)(?:以)?前"):
            self._ago(m, _zh_number(m.group(1)), False)
        for m in self.each(_ZH_NUM + "(?:个|個)?" + _ZH_WEEK + "(?:以)?前"):
            self._ago(m, _zh_number(m.group(1)), True)
        for m in self.each(r"\b(?:the\s+)?(?:last|past)\s+(\d{1,2}|two|three|four|five|six|seven|eight|nine|ten)"
                           r"\s+days\b"):
            n = _number(m.group(1))
            if n:
                self.add(m, t - timedelta(days=n), t, "range")
        for m in self.each("(?:最近|过去|過去)" + _ZH_NUM + "天"):
            n = _zh_number(m.group(1))
            if n:
                self.add(m, t - timedelta(days=n), t, "range")

    def _ago(self, m: re.Match[str], n: int | None, weeks: bool) -> None:
        if n is None or n > 400:
            return
        if not weeks:
            self.add(m, self.today - timedelta(days=n))
            return
        peak = self.today - timedelta(days=7 * n)
        self.add(m, peak - timedelta(days=3), min(self.today, peak + timedelta(days=3)), "range", peak=peak)

    def weekdays(self) -> None:
        t = self.today
        recent = {wd: t - timedelta(days=(t.weekday() - wd - 1) % 7 + 1) for wd in range(7)}
        this_week = _week_start(t)
        forms: list[tuple[str, str, Callable[[str], int]]] = [
            (r"\b", _EN_WD, _EN_WEEKDAYS.__getitem__),
            (r"\b", _SR_WD, _sr_weekday),
        ]
        for edge, wd_re, which in forms:
            for m in self.each(edge + r"the\s+" + wd_re + r"\s+before\s+last\b"):
                self.add(m, recent[which(m.group(1))] - timedelta(days=7))
            for m in self.each(edge + r"pretprosl\w*\s+" + wd_re + r"\b"):  # pretprošlog petka
                self.add(m, recent[which(m.group(1))] - timedelta(days=7))
            for m in self.each(edge + r"(?:last|previous|this\s+past|past|" + _SR_PAST + r")\s+" + wd_re + r"\b"):
                self.add(m, recent[which(m.group(1))])
            for m in self.each(edge + r"(?:this|" + _SR_THIS + r")\s+" + wd_re + r"\b"):
                self.add(m, this_week + timedelta(days=which(m.group(1))))
            for m in self.each(edge + wd_re + r"\b"):
                self.add(m, recent[which(m.group(1))])
        for m in self.each("(上上|上|这|這|本|这个|這個|上个|上個)?" + _ZH_WEEK + "([一二三四五六日天七])(?!" + "[0-9])"):
            wd = _ZH_WEEKDAY[m.group(2)]
            prefix = m.group(1) or ""
            if prefix.startswith("上上"):
                self.add(m, this_week - timedelta(days=14 - wd))
            elif prefix.startswith("上"):
                self.add(m, this_week - timedelta(days=7 - wd))
            elif prefix:
                self.add(m, this_week + timedelta(days=wd))
            else:
                self.add(m, recent[wd])

    def weeks(self) -> None:
        t = self.today
        this_week = _week_start(t)
        last_week = this_week - timedelta(days=7)
        spans = {
            "last_week": (last_week, last_week + timedelta(days=6)),
            "this_week": (this_week, t),
            "last_weekend": (last_week + timedelta(days=5), last_week + timedelta(days=6)),
            "this_weekend": (this_week + timedelta(days=5), this_week + timedelta(days=6)),
            "weekend": ((this_week + timedelta(days=5), t) if t.weekday() >= 5
                        else (last_week + timedelta(days=5), last_week + timedelta(days=6))),
            "week_before_last": (last_week - timedelta(days=7), last_week - timedelta(days=1)),
            "past_week": (t - timedelta(days=7), t),
        }
        rules = [
            (r"\b(?:the\s+)?week\s+before\s+last\b", "week_before_last"),
            (r"\bpretprosl\w*\s+" + _SR_WEEK + r"\b", "week_before_last"),
            (r"\b(?:last|previous|the\s+previous)\s+week(?!\s*end)\b", "last_week"), (r"\bthis\s+week(?!\s*end)\b", "this_week"),
            (r"\b(?:the\s+)?past\s+(?:7\s+days|seven\s+days|week)\b", "past_week"),
            (r"\b(?:last|previous|this\s+past)\s+week\s*end\b", "last_weekend"),
            (r"\bthis\s+week\s*end\b", "this_weekend"),
            (r"\b(?:on|over|at|during)\s+the\s+week\s*end\b", "weekend"),
            (r"\b" + _SR_PAST + r"\s+" + _SR_WEEK + r"\b", "last_week"),
            (r"\b" + _SR_THIS + r"\s+" + _SR_WEEK + r"\b", "this_week"),
            (r"\b" + _SR_PAST + r"\s+vikend(?:a|u|om)?\b", "last_weekend"),
            (r"\b" + _SR_THIS + r"\s+vikend(?:a|u|om)?\b", "this_weekend"),
            (r"\b(?:za|preko|tokom|na)\s+vikend(?:a|u|om)?\b", "weekend"),
            ("上上(?:个|個)?" + _ZH_WEEK + "(?![一二三四五六日天七末])", "week_before_last"),
            ("(?<!上)上(?:个|個)?" + _ZH_WEEK + "(?![一二三四五六日天七末])", "last_week"),
            ("(?:这|這|本)(?:个|個)?" + _ZH_WEEK + "(?![一二三四五六日天七末])", "this_week"),
            ("上(?:个|個)?" + _ZH_WEEK + "末", "last_weekend"),
            ("(?:这|這|本)(?:个|個)?" + _ZH_WEEK + "末", "this_weekend"),
            ("(?<![上这這本个個周週期拜])" + "(?:周末|週末)", "weekend"),
        ]
        for pattern, name in rules:
            start, end = spans[name]
            for m in self.each(pattern):
                self.add(m, start, end, "range")

    def months(self) -> None:
        t = self.today
        last = _shift_month(t.year, t.month, -1)
        rules = [
            (r"\b(?:last|previous|the\s+previous)\s+month\b", last, False), (r"\bthis\s+month\b", (t.year, t.month), True),
            (r"\b" + _SR_PAST + r"\s+" + _SR_MONTH + r"\b", last, False),
            (r"\b" + _SR_THIS + r"\s+" + _SR_MONTH + r"\b", (t.year, t.month), True),
            ("上(?:个|個)?月", last, False), ("(?:这|這|本)(?:个|個)?月", (t.year, t.month), True),
        ]
        for pattern, (year, month), to_today in rules:
            for m in self.each(pattern):
                start, end = _month_span(year, month)
                self.add(m, start, t if to_today else end, "month")
        # "in March": the most recent March not in the future (a year written after it is the absolute form).
        for m in self.each(r"\b(?:in|during|since|from|for|throughout|of|back\s+in)\s+(?:early\s+|late\s+|mid\s*-?\s*)?"
                           + _MONTH_RE + r"(?![\s,]*\d)(?!\w)"):
            name = m.group(1)
            if name == "may" and not re.match(r"(?:in|during|since|back\s+in)\b", m.group(0)):
                continue  # "of may", "for may" read as the verb too often
            year, month = _latest_month(t, _MONTHS[name])
            start, end = _month_span(year, month)
            self.add(m, start, end, "month", keeps_words=True)
        for m in self.each(r"\b(?:u|tokom|od)\s+" + _SR_MONTH_NAME + r"\b(?!\s*\d)"):
            year, month = _latest_month(t, _sr_month(m.group(1)))
            start, end = _month_span(year, month)
            self.add(m, start, end, "month", keeps_words=True)
        for m in self.each("(今年|去年)?" + _ZH_NUM + "月份?(?![0-9一二两三四五六七八九十]{1,3}(?:日|号|號))"):
            named = _zh_number(m.group(2))
            if not named or not 1 <= named <= 12:
                continue
            given = {"今年": t.year, "去年": t.year - 1}.get(m.group(1) or "")
            year, month = (given, named) if given is not None else _latest_month(t, named)
            start, end = _month_span(year, month)
            self.add(m, start, end, "month", keeps_words=True)
        for m in self.each(r"\bon\s+the\s+(\d{1,2})(?:st|nd|rd|th)\b(?!\s+(?:of\s+)?" + _MONTH_RE + ")"):
            day = int(m.group(1))
            for back in range(0, 4):
                year, month = _shift_month(t.year, t.month, -back)
                try:
                    found = date(year, month, day)
                except ValueError:
                    continue
                if found <= t:
                    self.add(m, found)
                    break

    def absolute(self) -> None:
        for m in self.each(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"):
            self._day(m, int(m.group(1)), int(m.group(2)), int(m.group(3)))
        for m in self.each(_DAY_MONTH.pattern):
            self._day(m, int(m.group(3)) if m.group(3) else None, _MONTHS[m.group(2)], int(m.group(1)))
        for m in self.each(_MONTH_DAY.pattern):
            self._day(m, int(m.group(3)) if m.group(3) else None, _MONTHS[m.group(1)], int(m.group(2)))
        for m in self.each(r"\b(\d{1,2})\.\s*" + _SR_MONTH_NAME + r"\b(?:\s+(\d{4})\b\.?)?"):
            self._day(m, int(m.group(3)) if m.group(3) else None, _sr_month(m.group(2)), int(m.group(1)))
        for m in self.each(_DOTTED.pattern):
            self._day(m, int(m.group(3)) if m.group(3) else None, int(m.group(2)), int(m.group(1)))
        for m in self.each(_ZH_DAY.pattern):
            month, day = _zh_number(m.group(2)), _zh_number(m.group(3))
            if month and day:
                self._day(m, int(m.group(1)) if m.group(1) else None, month, day)
        for m in self.each(r"\b" + _MONTH_RE + r",?\s+(\d{4})\b"):
            self._month(m, int(m.group(2)), _MONTHS[m.group(1)])
        for m in self.each(r"\b(\d{4})-(\d{1,2})\b(?!-\d)"):
            self._month(m, int(m.group(1)), int(m.group(2)))
        for m in self.each(r"(\d{4})年" + _ZH_NUM + "月份?(?![0-9一二两三四五六七八九十]{1,3}(?:日|号|號))"):
            month = _zh_number(m.group(2))
            if month:
                self._month(m, int(m.group(1)), month)

    def _day(self, m: re.Match[str], year: int | None, month: int, day: int) -> None:
        if year is not None:
            try:
                self.add(m, date(year, month, day), relative=False)
            except ValueError:
                pass
            return
        if 1 <= month <= 12:
            found = _latest_day(self.today, month, day)
            if found is not None:
                self.add(m, found, relative=False, every_year=True)

    def _month(self, m: re.Match[str], year: int, month: int) -> None:
        if 1 <= month <= 12 and 1 <= year <= 9999:
            start, end = _month_span(year, month)
            self.add(m, start, end, "month", relative=False)

    def spans(self) -> tuple[DateSpan, ...]:
        """The phrases found, each character in at most one (the longest phrase wins), in query order."""
        # Weeks before weekdays: of two equally long readings the first added wins, and "prošle nedelje" is
        # last week, not last Sunday (nedelja is both).
        self.weeks()
        self.day_offsets()
        self.weekdays()
        self.months()
        self.absolute()
        kept: list[tuple[int, int, DateSpan]] = []
        for lo, hi, span in sorted(self.found, key=lambda f: (-(f[1] - f[0]), f[0])):
            if all(hi <= a or lo >= b for a, b, _ in kept):
                kept.append((lo, hi, span))
        spans = [span for _, _, span in sorted(kept, key=lambda f: f[0])]
        return tuple(self._anchored(span, spans[i + 1]) if i + 1 < len(spans) else span
                     for i, span in enumerate(spans))

    def _anchored(self, span: DateSpan, after: DateSpan) -> DateSpan:
        """``span`` counted from the day written right after it when the words between tie them ("last weekend
        before April 10, 2023", "the Sunday before October 13", "last Friday, as mentioned on 23 January 2022"):
        then "today" is that day, as the one who wrote it saw it."""
        if not span.relative or span.keeps_words or after.relative or after.kind != "day":
            return span
        if not _ANCHOR_GAP.fullmatch(self.text[span.where[1]:after.where[0]].lower()):
            return span
        lo, hi = span.where
        found = [s for s in _Resolver(self.text[lo:hi], after.start).spans() if s.where == (0, hi - lo)]
        return replace(found[0], where=span.where) if found else span


def resolve_dates(text: str, today: date) -> tuple[DateSpan, ...]:
    """Every date phrase of a query resolved against ``today``, in query order (see :class:`DateSpan`).

    Relative days ("yesterday", "3 days ago", "last Friday", bare "Friday" = the most recent one before today,
    "the Friday before last", "on the 3rd"), weeks and weekends ("last week", "this week", "last weekend",
    "2 weeks ago" = that day ±3), months ("last month", "in March" = the most recent March not in the future),
    absolute days ("2026-10-05", "Oct 5", "5 October", "5.10.", "10月5日") and months ("July 2023", "2023-07"),
    in English, Serbian (Latin or Cyrillic, ijekavian or ekavian) and Chinese. Weeks run Monday to Sunday.
    """
    return _Resolver(text, today).spans()
