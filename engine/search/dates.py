"""Dates in queries and in daily-note paths: which days and months a query names, and which files they are."""

from __future__ import annotations

import calendar
import re
import unicodedata
from collections.abc import Callable, Iterator, Set
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import date, timedelta

from engine.lexicon import SERBIAN_CYRILLIC

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
# A time may follow the day: "2026-10-23T10:00" (ISO 8601) names 23 October.
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})(?:\b|(?=[Tt]\d))")
# A year after the day is read only when it is not the start of an ISO date ("Oct 5, 2026-09-01").
_DAY_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?(?:\s+of)?\s+" + _MONTH_RE + r"(?:,?\s+(\d{4})(?!-\d))?\b",
                        re.I)
_MONTH_DAY = re.compile(r"\b" + _MONTH_RE + r"\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(\d{4})(?!-\d))?", re.I)
_MONTH_YEAR = re.compile(r"\b" + _MONTH_RE + r",?\s+(\d{4})\b", re.I)
_ISO_MONTH = re.compile(r"\b(\d{4})-(\d{1,2})\b(?!-\d)")
# "5.10." and "5.10.2026" (day.month., as Serbian and German write it); not a version "1.2.3" or an address.
_DOTTED = re.compile(r"(?<![\w.])(\d{1,2})\.(\d{1,2})\.(?:(\d{4})\b\.?)?(?!\d)")
# Words after which "3.12." or "20.04." is a version, a price or a ratio, not a day: "python 3.12.",
# "ubuntu 20.04.", "it costs 4.10.", "the ratio was 1.05.", "page 12.10." (a sentence's full stop makes any "x.y" look like
# one).
_NUMBER_CUE = re.compile(
    r"(?:\b(?:v|ver|version|versions|verzij[aeiu]|release|python|py|node|nodejs|npm|pip|java|jdk|go|golang|ruby"
    r"|rails|php|perl|rust|rustc|cargo|ios|android|macos|osx|ubuntu|debian|fedora|centos|rhel|kernel|linux"
    r"|windows|gcc|clang|llvm|postgres|postgresql|mysql|mariadb|redis|sqlite|mongodb|django|flask|react|vue"
    r"|angular|typescript|swift|kotlin|scala|dotnet|elixir|erlang|lua|qt|chrome|firefox|safari|electron|docker"
    r"|kubernetes|k8s|helm|terraform|numpy|pandas|torch|pytorch|tensorflow|cuda|openssl|nginx|openclaw|memdeck"
    r"|ratio|rate|score|average|avg|mean|cost|costs|costed|price|priced|paid|pay|pays|eur|usd|gbp|rsd|din"
    r"|dinara|cena|cijena|kosta|košta|kostalo|koštalo|platio|platila"
    # a numbered part of a text: "page 12.10.", "section 5.10.", "strana 3.4.", "član 2.1."
    r"|page|pages|p|pp|chapter|chapters|ch|section|sections|sec|table|tab|figure|fig|step|item|paragraph|para"
    r"|appendix|exercise|lesson|lecture|verse|clause|article|art|rule|part|point|no|nr|num|number"
    r"|strana|strani|stranica|str|poglavlje|poglavlju|odeljak|odjeljak|tacka|tačka|tacki|tački|clan|član|broj|br)\.?"
    r"(?:\s+(?:is|was|are|were|of|at|now|je|bio|bila|bilo|od|na))?"
    r"|\b(?:upgrad|updat|bump|downgrad|migrat)\w*\s+to|[$€£¥=~≈×§#])\s*$",
    re.I)


def _dotted_is_date(text: str, start: int) -> bool:
    """Whether the "d.m." at ``start`` of ``text`` is a day (a version, price or ratio is not: ``_NUMBER_CUE``)."""
    return not _NUMBER_CUE.search(text[max(0, start - 40):start])


# 10月5日, 10月5号, 2026年10月5日, 十月五日 (not the "10月5日" of "110月5日").
_ZH_DAY = re.compile(r"(?:(\d{4})年)?(?<![0-9])([0-9]{1,2}|[一二三四五六七八九十]{1,3})月([0-9]{1,2}|[一二三四五六七八九十]{1,3})(?:日|号|號)")


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
    for m in _DOTTED.finditer(text):
        if _dotted_is_date(text, m.start()):
            d, mon, y = m.groups()
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
            ("2026-10-05"); a relative phrase's own words leave the keyword query (see :func:`engine.search.query.parse_query`).
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
    # monthrange, not "the 1st of next month minus a day": December 9999 has no next month.
    return date(year, month, calendar.monthrange(year, month)[1])


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
_CYRILLIC = {cyr: "".join(c for c in unicodedata.normalize("NFKD", lat.replace("đ", "dj")) if not unicodedata.combining(c))
             for cyr, lat in SERBIAN_CYRILLIC.items() if cyr.islower()}


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
_ZH_UNITS = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
_ZH_MYRIAD = {"万": 10_000, "萬": 10_000}


def _zh_number(text: str) -> int | None:
    """``3``, ``三``, ``十二``, ``二十一``, ``两``, ``一百``, ``三百六十五``, ``一千零一``, ``十万`` → the number, else None.

    Digits without a unit between them are read one by one (``一〇〇`` = 100); two digits side by side in a
    number that has units ("三五百") are not a number.
    """
    if not text:
        return None
    if text.isascii() and text.isdigit():
        return int(text)
    if not any(ch in _ZH_UNITS or ch in _ZH_MYRIAD for ch in text):
        digits = [_ZH_DIGITS.get(ch) for ch in text]
        return None if None in digits else int("".join(str(d) for d in digits))
    total = section = 0
    digit: int | None = None
    for ch in text:
        if ch in _ZH_DIGITS:
            if digit not in (None, 0) and _ZH_DIGITS[ch] != 0:
                return None
            digit = _ZH_DIGITS[ch]
        elif ch in _ZH_UNITS:
            section += (1 if digit is None else digit) * _ZH_UNITS[ch]
            digit = None
        elif ch in _ZH_MYRIAD:
            total += ((section + (digit or 0)) or 1) * _ZH_MYRIAD[ch]
            section, digit = 0, None
        else:
            return None
    return total + section + (digit or 0)


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
# A count is the whole number written, however long: "100天前" is a hundred days, never "00天前"; "10000天前",
# "一百天前" and "in 99999999999999999999 days" are counts too (one past the calendar is noted, see _Resolver.guard).
_ZH_CHARS = "零〇一二两兩三四五六七八九十拾百佰千仟万萬"
_ZH_NUM = f"(?<![0-9{_ZH_CHARS}])([0-9]+|[{_ZH_CHARS}]+)"
_EN_NUM = r"(\d+|a couple of|couple of|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve" \
          r"|thirteen|fourteen)"
_SR_NUM = r"(\d+|jedan|jednog|dva|dve|dvije|tri|cetiri|pet|sest|sedam|osam|devet|deset)"
_SR_PAST = r"(?:prosl(?:i|og|oga|e|u|a|oj|om))"
_SR_THIS = r"(?:ovaj|ovog|ovoga|ove|ovu|ova|ovoj|ovom|ovo)"
# sledeći / sljedeći / idući / naredni (следећи, идући) with their case endings: "sledećeg petka", "iduće sedmice".
_SR_NEXT = r"(?:s(?:l|lj)edec|iduc|naredn)(?:i|eg|ega|e|u|a|oj|em|om)"
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


def _plus(day: date, days: int) -> date:
    """``day`` moved by ``days``; raises ``OverflowError`` past either end of the calendar (see ``_Resolver.guard``)."""
    return day + timedelta(days=days)


def _week_of(today: date, by: int) -> tuple[date, date]:
    """Monday to Sunday of the week ``by`` weeks from today's (-1: last week, 1: next week)."""
    start = _plus(_week_start(today), 7 * by)
    return start, _plus(start, 6)


def _weekend_of(today: date, by: int) -> tuple[date, date]:
    """Saturday and Sunday of the week ``by`` weeks from today's."""
    start = _plus(_week_start(today), 7 * by + 5)
    return start, _plus(start, 1)


def _recent(today: date, weekday: int) -> date:
    """The most recent ``weekday`` before today (a bare "Friday" on a Friday is a week ago)."""
    return _plus(today, -((today.weekday() - weekday - 1) % 7 + 1))


def _coming(today: date, weekday: int) -> date:
    """The next ``weekday`` after today ("next Friday" on a Friday is a week ahead)."""
    return _plus(today, (weekday - today.weekday() - 1) % 7 + 1)


def _in_week(today: date, by: int, weekday: int) -> date:
    """``weekday`` of the week ``by`` weeks from today's ("上周五": -1, "这周五": 0, "下周五", "Friday next week": 1)."""
    return _plus(_week_start(today), 7 * by + weekday)


class _Resolver:
    """Reads every date phrase of one folded query; each rule adds ``(start offset, end offset, span)``.

    A phrase whose day falls outside the calendar (``date.min``..``date.max``: "tomorrow" counted from
    9999-12-31) is kept as a skipped phrase: it still takes its characters (no shorter reading inside it wins)
    and becomes a note instead of a span.
    """

    def __init__(self, text: str, today: date) -> None:
        self.text = text
        self.today = today
        self.folded, self.where = _fold(text)
        self.found: list[tuple[int, int, DateSpan | None]] = []

    def _offsets(self, m: re.Match[str]) -> tuple[int, int]:
        return self.where[m.start()], self.where[m.end() - 1] + 1

    def add(self, m: re.Match[str], start: date, end: date | None = None, kind: str = "day", *,
            relative: bool = True, every_year: bool = False, peak: date | None = None,
            keeps_words: bool = False) -> None:
        end = end or start
        lo, hi = self._offsets(m)
        phrase = self.text[lo:hi]
        if kind == "month":
            label = f"{_MONTH_NAMES[start.month - 1]} {start.year}"
        else:
            label = span_label(start, end) if peak is None else f"around {day_label(peak)}"
        self.found.append((lo, hi, DateSpan(phrase, start, end, label, kind, relative, every_year, peak, (lo, hi),
                                            keeps_words)))

    @contextmanager
    def guard(self, m: re.Match[str]) -> Iterator[None]:
        """Run one match's rule; a day past either end of the calendar skips the phrase (noted, not raised)."""
        try:
            yield
        except (OverflowError, ValueError):  # timedelta past date.max/min; date() of year 0 or 10000
            lo, hi = self._offsets(m)
            self.found.append((lo, hi, None))

    def each(self, pattern: str, flags: int = 0) -> list[re.Match[str]]:
        """The matches of ``pattern`` in the folded text (each rule reads one under :meth:`guard`)."""
        return list(re.finditer(pattern, self.folded, flags))

    # -- the rules ---------------------------------------------------------------------------------------
    def day_offsets(self) -> None:
        t = self.today
        fixed = [(r"\b(?:the\s+)?day\s+before\s+yesterday\b", -2), (r"\byesterday\b", -1), (r"\blast\s+night\b", -1),
                 (r"\b(?:earlier\s+)?today\b", 0), (r"\b(?:this\s+(?:morning|afternoon|evening)|tonight)\b", 0),
                 (r"\b(?:the\s+)?day\s+after\s+tomorrow\b", 2), (r"\btomorrow\b", 1),
                 (r"\bdanas\b", 0), (r"\bjucer?\b", -1), (r"\bprekjucer?\b", -2), (r"\bsinoc\b", -1),
                 (r"\bsutra\b", 1), (r"\bprekosutra\b", 2),
                 ("今天|今日|今早|今晚", 0), ("昨天|昨日|昨晚", -1), ("(?<!大)前天", -2), ("大前天", -3),
                 ("明天|明日|明早|明晚", 1), ("(?<!大)(?:后天|後天)", 2), ("大(?:后天|後天)", 3)]
        for pattern, by in fixed:
            for m in self.each(pattern):
                with self.guard(m):
                    self.add(m, _plus(t, by))
        for m in self.each(r"\b" + _EN_NUM + r"\s+(days?|weeks?)\s+(?:ago|back)\b"):
            with self.guard(m):
                self._count(m, _number(m.group(1)), m.group(2).startswith("week"), -1)
        for m in self.each(r"\bin\s+" + _EN_NUM + r"\s+(days?|weeks?)\b|\b" + _EN_NUM
                           + r"\s+(days?|weeks?)\s+from\s+(?:now|today)\b"):
            with self.guard(m):
                count, unit = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
                self._count(m, _number(count), unit.startswith("week"), 1)
        for m in self.each(r"\ba\s+fortnight\s+ago\b"):
            with self.guard(m):
                self._count(m, 2, True, -1)
        for m in self.each(r"\bin\s+a\s+fortnight\b"):
            with self.guard(m):
                self._count(m, 2, True, 1)
        # "a few days ago", "前几天": two to five days back, three the likeliest ("in a few days": ahead)
        for m in self.each(r"\b(?:a\s+few|several)\s+days\s+(?:ago|back)\b|前几天|前幾天|pre\s+par\s+dana|prije\s+par\s+dana"):
            with self.guard(m):
                self.add(m, _plus(t, -5), _plus(t, -2), "range", peak=_plus(t, -3))
        for m in self.each(r"\bin\s+(?:a\s+few|several)\s+days\b|\bza\s+par\s+dana\b"):
            with self.guard(m):
                self.add(m, _plus(t, 2), _plus(t, 5), "range", peak=_plus(t, 3))
        for m in self.each(r"\b(?:pre|prije)\s+" + _SR_NUM + r"\s+(dana|dan)\b"):
            with self.guard(m):
                self._count(m, _number(m.group(1)), False, -1)
        for m in self.each(r"\bza\s+" + _SR_NUM + r"\s+(dana|dan)\b"):
            with self.guard(m):
                self._count(m, _number(m.group(1)), False, 1)
        weeks = r"(" + _SR_WEEK + r"|nedelja|nedjelja|sedmica|tjedana)"
        for m in self.each(r"\b(?:pre|prije)\s+(?:" + _SR_NUM + r"\s+)?" + weeks + r"(?:\s+dana)?\b"):
            with self.guard(m):
                self._count(m, _number(m.group(1)) if m.group(1) else 1, True, -1)
        # "za dve nedelje", "za nedelju dana" (in a week); a bare "za nedelju" is "for Sunday".
        for m in self.each(r"\bza\s+" + _SR_NUM + r"\s+" + weeks + r"(?:\s+dana)?\b|\bza\s+" + weeks + r"\s+dana\b"):
            with self.guard(m):
                self._count(m, _number(m.group(1)) if m.group(1) else 1, True, 1)
        for m in self.each(_ZH_NUM + "(?:天|日)(?:以)?前"):
            with self.guard(m):
                self._count(m, _zh_number(m.group(1)), False, -1)
        for m in self.each(_ZH_NUM + "(?:个|個)?" + _ZH_WEEK + "(?:以)?前"):
            with self.guard(m):
                self._count(m, _zh_number(m.group(1)), True, -1)
        for m in self.each(_ZH_NUM + "(?:天|日)(?:以|之)?(?:后|後)"):
            with self.guard(m):
                self._count(m, _zh_number(m.group(1)), False, 1)
        for m in self.each(_ZH_NUM + "(?:个|個)?" + _ZH_WEEK + "(?:以|之)?(?:后|後)"):
            with self.guard(m):
                self._count(m, _zh_number(m.group(1)), True, 1)
        for m in self.each(r"\b(?:the\s+)?(?:last|past)\s+(\d{1,2}|two|three|four|five|six|seven|eight|nine|ten)"
                           r"\s+days\b"):
            with self.guard(m):
                n = _number(m.group(1))
                if n:
                    self.add(m, _plus(t, -n), t, "range")
        for m in self.each("(?:最近|过去|過去)" + _ZH_NUM + "天"):
            with self.guard(m):
                n = _zh_number(m.group(1))
                if n and n < 1000:  # a span of days is lifted day by day: "最近一万天" is no span to lift
                    self.add(m, _plus(t, -n), t, "range")

    def _count(self, m: re.Match[str], n: int | None, weeks: bool, sign: int) -> None:
        """``n`` days (or weeks: that day ±3, never past today) back (``sign`` -1) or ahead (1) of today; a day past
        the calendar raises ``OverflowError`` for :meth:`guard` to note."""
        if n is None:
            return
        if not weeks:
            self.add(m, _plus(self.today, sign * n))
            return
        peak = _plus(self.today, sign * 7 * n)
        start, end = _plus(peak, -3), _plus(peak, 3)
        self.add(m, max(start, self.today) if sign > 0 else start, min(self.today, end) if sign < 0 else end,
                 "range", peak=peak)

    def weekdays(self) -> None:
        t = self.today
        forms: list[tuple[str, Callable[[str], int], str, str, str]] = [
            # weekday, its number, "last", "this", "next"
            (_EN_WD, _EN_WEEKDAYS.__getitem__, r"(?:last|previous|this\s+past|past)", r"this",
             r"(?:next|this\s+coming|the\s+coming|coming|upcoming|the\s+next)"),
            (_SR_WD, _sr_weekday, _SR_PAST, _SR_THIS, _SR_NEXT),
        ]
        for wd_re, which, last, this, coming in forms:
            for m in self.each(r"\bthe\s+" + wd_re + r"\s+before\s+last\b"):
                with self.guard(m):
                    self.add(m, _plus(_recent(t, which(m.group(1))), -7))
            for m in self.each(r"\bpretprosl\w*\s+" + wd_re + r"\b"):  # pretprošlog petka
                with self.guard(m):
                    self.add(m, _plus(_recent(t, which(m.group(1))), -7))
            for m in self.each(r"\b" + last + r"\s+" + wd_re + r"\b"):
                with self.guard(m):
                    self.add(m, _recent(t, which(m.group(1))))
            for m in self.each(r"\b" + this + r"\s+" + wd_re + r"\b"):
                with self.guard(m):
                    self.add(m, _in_week(t, 0, which(m.group(1))))
            for m in self.each(r"\b" + coming + r"\s+" + wd_re + r"\b"):
                with self.guard(m):
                    self.add(m, _coming(t, which(m.group(1))))
            for m in self.each(r"\b" + wd_re + r"\b"):
                with self.guard(m):
                    self.add(m, _recent(t, which(m.group(1))))
        # "Friday after next", "next next Friday": the Friday after the coming one
        for m in self.each(r"\b(?:the\s+)?" + _EN_WD + r"\s+after\s+next\b|\bnext\s+next\s+" + _EN_WD + r"\b"):
            with self.guard(m):
                self.add(m, _plus(_coming(t, _EN_WEEKDAYS[m.group(1) or m.group(2)]), 7))
        # "Friday next week", "Friday of next week", "next week's Friday", "petak sledeće nedelje"
        for m in self.each(r"\b" + _EN_WD + r"\s+(?:of\s+)?next\s+week\b|\bnext\s+week(?:'s)?\s+(?:on\s+)?"
                           + _EN_WD + r"\b"):
            with self.guard(m):
                self.add(m, _in_week(t, 1, _EN_WEEKDAYS[m.group(1) or m.group(2)]))
        for m in self.each(r"\b" + _SR_WD + r"\s+" + _SR_NEXT + r"\s+" + _SR_WEEK + r"\b"):
            with self.guard(m):
                self.add(m, _in_week(t, 1, _sr_weekday(m.group(1))))
        weeks = {"上上": -2, "上": -1, "下下": 2, "下": 1}
        for m in self.each("(上上|上|下下|下|这|這|本|这个|這個|上个|上個|下个|下個)?" + _ZH_WEEK
                           + "([一二三四五六日天七])(?![0-9])"):
            with self.guard(m):
                wd = _ZH_WEEKDAY[m.group(2)]
                prefix = m.group(1) or ""
                if not prefix:
                    self.add(m, _recent(t, wd))
                else:
                    self.add(m, _in_week(t, weeks.get(prefix.rstrip("个個"), 0), wd))

    def weeks(self) -> None:
        t = self.today
        spans: dict[str, Callable[[], tuple[date, date]]] = {
            "last_week": lambda: _week_of(t, -1),
            "this_week": lambda: (_week_start(t), t),
            "next_week": lambda: _week_of(t, 1),
            "week_after_next": lambda: _week_of(t, 2),
            "last_weekend": lambda: _weekend_of(t, -1),
            "this_weekend": lambda: _weekend_of(t, 0),
            "next_weekend": lambda: _weekend_of(t, 1),
            "weekend": lambda: (_plus(_week_start(t), 5), t) if t.weekday() >= 5 else _weekend_of(t, -1),
            "week_before_last": lambda: (_week_of(t, -2)[0], _week_of(t, -2)[1]),
            "past_week": lambda: (_plus(t, -7), t),
        }
        rules = [
            (r"\b(?:the\s+)?week\s+before\s+last\b", "week_before_last"),
            (r"\bpretprosl\w*\s+" + _SR_WEEK + r"\b", "week_before_last"),
            (r"\b(?:last|previous|the\s+previous)\s+week(?!\s*end)\b", "last_week"), (r"\bthis\s+week(?!\s*end)\b", "this_week"),
            (r"\b(?:next|the\s+next|the\s+coming|coming)\s+week(?!\s*end)\b", "next_week"),
            (r"\b(?:the\s+)?week\s+after\s+next\b|\bnext\s+next\s+week(?!\s*end)\b", "week_after_next"),
            (r"\b(?:the\s+)?past\s+(?:7\s+days|seven\s+days|week)\b", "past_week"),
            (r"\b(?:last|previous|this\s+past)\s+week\s*end\b", "last_weekend"),
            (r"\b(?:this|this\s+coming|the\s+coming|coming|upcoming)\s+week\s*end\b", "this_weekend"),
            (r"\bnext\s+week\s*end\b", "next_weekend"),
            (r"\b(?:on|over|at|during)\s+the\s+week\s*end\b", "weekend"),
            (r"\b" + _SR_PAST + r"\s+" + _SR_WEEK + r"\b", "last_week"),
            (r"\b" + _SR_THIS + r"\s+" + _SR_WEEK + r"\b", "this_week"),
            (r"\b" + _SR_NEXT + r"\s+" + _SR_WEEK + r"\b", "next_week"),
            (r"\b" + _SR_PAST + r"\s+vikend(?:a|u|om)?\b", "last_weekend"),
            (r"\b" + _SR_THIS + r"\s+vikend(?:a|u|om)?\b", "this_weekend"),
            (r"\b" + _SR_NEXT + r"\s+vikend(?:a|u|om)?\b", "next_weekend"),
            (r"\b(?:za|preko|tokom|na)\s+vikend(?:a|u|om)?\b", "weekend"),
            ("上上(?:个|個)?" + _ZH_WEEK + "(?![一二三四五六日天七末])", "week_before_last"),
            ("(?<!上)上(?:个|個)?" + _ZH_WEEK + "(?![一二三四五六日天七末])", "last_week"),
            ("(?:这|這|本)(?:个|個)?" + _ZH_WEEK + "(?![一二三四五六日天七末])", "this_week"),
            ("下下(?:个|個)?" + _ZH_WEEK + "(?![一二三四五六日天七末])", "week_after_next"),
            ("(?<!下)下(?:个|個)?" + _ZH_WEEK + "(?![一二三四五六日天七末])", "next_week"),
            ("上(?:个|個)?" + _ZH_WEEK + "末", "last_weekend"),
            ("(?:这|這|本)(?:个|個)?" + _ZH_WEEK + "末", "this_weekend"),
            ("下(?:个|個)?" + _ZH_WEEK + "末", "next_weekend"),
            ("(?<![上下这這本个個周週期拜])" + "(?:周末|週末)", "weekend"),
        ]
        for pattern, name in rules:
            for m in self.each(pattern):
                with self.guard(m):
                    start, end = spans[name]()
                    self.add(m, start, end, "range")

    def months(self) -> None:
        t = self.today
        last, this, following = (_shift_month(t.year, t.month, by) for by in (-1, 0, 1))
        rules = [
            (r"\b(?:last|previous|the\s+previous)\s+month\b", last, False), (r"\bthis\s+month\b", this, True),
            (r"\b(?:next|the\s+next|the\s+coming|coming)\s+month\b", following, False),
            (r"\b" + _SR_PAST + r"\s+" + _SR_MONTH + r"\b", last, False),
            (r"\b" + _SR_THIS + r"\s+" + _SR_MONTH + r"\b", this, True),
            (r"\b" + _SR_NEXT + r"\s+" + _SR_MONTH + r"\b", following, False),
            ("上(?:个|個)?月", last, False), ("(?:这|這|本)(?:个|個)?月", this, True), ("下(?:个|個)?月", following, False),
        ]
        for pattern, (year, month), to_today in rules:
            for m in self.each(pattern):
                with self.guard(m):
                    start, end = _month_span(year, month)
                    self.add(m, start, t if to_today else end, "month")
        # "in March": the most recent March not in the future (a year written after it is the absolute form).
        for m in self.each(r"\b(?:in|during|since|from|for|throughout|of|back\s+in)\s+(?:early\s+|late\s+|mid\s*-?\s*)?"
                           + _MONTH_RE + r"(?![\s,]*\d)(?!\w)"):
            with self.guard(m):
                name = m.group(1)
                if name == "may" and not re.match(r"(?:in|during|since|back\s+in)\b", m.group(0)):
                    continue  # "of may", "for may" read as the verb too often
                year, month = _latest_month(t, _MONTHS[name])
                start, end = _month_span(year, month)
                self.add(m, start, end, "month", keeps_words=True)
        for m in self.each(r"\b(?:u|tokom|od)\s+" + _SR_MONTH_NAME + r"\b(?!\s*\d)"):
            with self.guard(m):
                year, month = _latest_month(t, _sr_month(m.group(1)))
                start, end = _month_span(year, month)
                self.add(m, start, end, "month", keeps_words=True)
        for m in self.each("(今年|去年)?" + _ZH_NUM + "月份?(?![0-9一二两三四五六七八九十]{1,3}(?:日|号|號))"):
            with self.guard(m):
                named = _zh_number(m.group(2))
                if not named or not 1 <= named <= 12:
                    continue
                given = {"今年": t.year, "去年": t.year - 1}.get(m.group(1) or "")
                year, month = (given, named) if given is not None else _latest_month(t, named)
                start, end = _month_span(year, month)
                self.add(m, start, end, "month", keeps_words=True)
        for m in self.each(r"\bon\s+the\s+(\d{1,2})(?:st|nd|rd|th)\b(?!\s+(?:of\s+)?" + _MONTH_RE + ")"):
            with self.guard(m):
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
        for m in self.each(_ISO_DATE.pattern):
            with self.guard(m):
                self._day(m, int(m.group(1)), int(m.group(2)), int(m.group(3)))
        for m in self.each(_DAY_MONTH.pattern):
            with self.guard(m):
                self._day(m, int(m.group(3)) if m.group(3) else None, _MONTHS[m.group(2)], int(m.group(1)))
        for m in self.each(_MONTH_DAY.pattern):
            with self.guard(m):
                self._day(m, int(m.group(3)) if m.group(3) else None, _MONTHS[m.group(1)], int(m.group(2)))
        for m in self.each(r"\b(\d{1,2})\.\s*" + _SR_MONTH_NAME + r"\b(?:\s+(\d{4})\b\.?)?"):
            with self.guard(m):
                self._day(m, int(m.group(3)) if m.group(3) else None, _sr_month(m.group(2)), int(m.group(1)))
        for m in self.each(_DOTTED.pattern):
            with self.guard(m):
                if _dotted_is_date(self.folded, m.start()):
                    self._day(m, int(m.group(3)) if m.group(3) else None, int(m.group(2)), int(m.group(1)))
        for m in self.each(_ZH_DAY.pattern):
            with self.guard(m):
                month, day = _zh_number(m.group(2)), _zh_number(m.group(3))
                if month and day:
                    self._day(m, int(m.group(1)) if m.group(1) else None, month, day)
        for m in self.each(r"\b" + _MONTH_RE + r",?\s+(\d{4})\b"):
            with self.guard(m):
                self._month(m, int(m.group(2)), _MONTHS[m.group(1)])
        for m in self.each(r"\b(\d{4})-(\d{1,2})\b(?!-\d)"):
            with self.guard(m):
                self._month(m, int(m.group(1)), int(m.group(2)))
        for m in self.each(r"(\d{4})年" + _ZH_NUM + "月份?(?![0-9一二两三四五六七八九十]{1,3}(?:日|号|號))"):
            with self.guard(m):
                month = _zh_number(m.group(2))
                if month:
                    self._month(m, int(m.group(1)), month)

    def _day(self, m: re.Match[str], year: int | None, month: int, day: int) -> None:
        if year is not None:
            try:
                found = date(year, month, day)
            except ValueError:
                return  # not a day ("2026-02-30"), so not a date at all
            self.add(m, found, relative=False)
            return
        if 1 <= month <= 12:
            found_day = _latest_day(self.today, month, day)
            if found_day is not None:
                self.add(m, found_day, relative=False, every_year=True)

    def _month(self, m: re.Match[str], year: int, month: int) -> None:
        if 1 <= month <= 12 and 1 <= year <= 9999:
            start, end = _month_span(year, month)
            self.add(m, start, end, "month", relative=False)

    def run(self) -> tuple[tuple[DateSpan, ...], tuple[str, ...]]:
        """The phrases found, each character in at most one (the longest phrase wins), in query order, and a
        note for each phrase skipped because its day is outside the calendar."""
        # Weeks before weekdays: of two equally long readings the first added wins, and "prošle nedelje" is
        # last week, not last Sunday (nedelja is both).
        self.weeks()
        self.day_offsets()
        self.weekdays()
        self.months()
        self.absolute()
        kept: list[tuple[int, int, DateSpan | None]] = []
        for lo, hi, span in sorted(self.found, key=lambda f: (-(f[1] - f[0]), f[0])):
            if all(hi <= a or lo >= b for a, b, _ in kept):
                kept.append((lo, hi, span))
        kept.sort(key=lambda f: f[0])
        notes = tuple(f"{self.text[lo:hi]!r} falls outside the calendar counted from {self.today.isoformat()}; "
                      "it is not read as a date" for lo, hi, span in kept if span is None)
        spans = [span for _, _, span in kept if span is not None]
        return tuple(self._anchored(span, spans[i + 1]) if i + 1 < len(spans) else span
                     for i, span in enumerate(spans)), notes

    def _anchored(self, span: DateSpan, after: DateSpan) -> DateSpan:
        """``span`` counted from the day written right after it when the words between tie them ("last weekend
        before April 10, 2023", "the Sunday before October 13", "last Friday, as mentioned on 23 January 2022"):
        then "today" is that day, as the one who wrote it saw it."""
        if not span.relative or span.keeps_words or after.relative or after.kind != "day":
            return span
        if not _ANCHOR_GAP.fullmatch(self.text[span.where[1]:after.where[0]].lower()):
            return span
        lo, hi = span.where
        found = [s for s in _Resolver(self.text[lo:hi], after.start).run()[0] if s.where == (0, hi - lo)]
        return replace(found[0], where=span.where) if found else span


def resolve_dates(text: str, today: date) -> tuple[DateSpan, ...]:
    """Every date phrase of a query resolved against ``today``, in query order (see :class:`DateSpan`).

    Relative days ("yesterday", "3 days ago", "last Friday", bare "Friday" = the most recent one before today,
    "the Friday before last", "on the 3rd"), weeks and weekends ("last week", "this week", "last weekend",
    "2 weeks ago" = that day ±3), months ("last month", "in March" = the most recent March not in the future),
    days and weeks ahead ("tomorrow", "in 3 days", "next Friday" = the coming one, "Friday next week",
    "next week", "next month"), absolute days ("2026-10-05", "Oct 5", "5 October", "5.10.", "10月5日") and
    months ("July 2023", "2023-07"), in English, Serbian (Latin or Cyrillic, ijekavian or ekavian) and Chinese.
    Weeks run Monday to Sunday. Versions, prices, addresses and numbered parts ("python 3.12.", "10.0.0.1",
    "page 12.10.") are not dates, and neither is a slashed "10/23" or "23/10" (which number is the day depends on
    who wrote it). Counts have any length ("10000天前", "一百天前"); "Friday after next" is a week past "next Friday".
    A phrase whose day would fall outside the calendar is left out (:func:`resolve_dates_noting` says which).
    """
    return _Resolver(text, today).run()[0]


def resolve_dates_noting(text: str, today: date) -> tuple[tuple[DateSpan, ...], tuple[str, ...]]:
    """:func:`resolve_dates` and a note for each phrase left out because its day is outside the calendar
    ("'tomorrow' falls outside the calendar counted from 9999-12-31; it is not read as a date")."""
    return _Resolver(text, today).run()
