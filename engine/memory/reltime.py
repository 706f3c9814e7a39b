"""Relative times in a drafted memory, resolved against the time the person said them.

"Remind me tomorrow at 08:30" said on Thu 12 Nov means Fri 13 Nov; a memory read a week later must say so. A
flush keeps the person's words and appends the day: ``tomorrow (Fri 13 Nov) at 08:30``, ``next week (Mon 16 –
Sun 22 Nov)``, ``明日(Fri 13 Nov)`` (Chinese and Japanese write no space before the parenthesis).

:func:`resolve_relative` reads days (today, tonight, tomorrow, the day after tomorrow, yesterday), weekdays
ahead ("on Friday", "this Friday", "next Friday" = the coming one, "Friday next week"), counts ahead ("in 3
days", "in two weeks"), weeks ("this week", "next week"), "this weekend" and "next month", in English, Japanese,
Chinese, Serbian (Latin and Cyrillic), German, French, Spanish, Portuguese and Russian. The day is counted in the
clock's zone (the turn's timestamp moved there). A phrase it cannot resolve is left as written; one already
followed by a parenthesis is left alone, so resolving twice changes nothing.

Weeks run Monday to Sunday. A weekday ahead is strictly after the day said ("on Friday" said on a Friday is a
week later); "this Friday" said on a Friday is that day.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo

_WEEKDAY_ABBR = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTH_ABBR = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

Span = tuple[date, date]
"""A resolved span, both ends inclusive (one day: ``(day, day)``)."""


# ---------------------------------------------------------------------------------------------
# Labels


def day_label(day: date, said: date) -> str:
    """``Fri 13 Nov`` (the year added when it is not the year said)."""
    label = f"{_WEEKDAY_ABBR[day.weekday()]} {day.day} {_MONTH_ABBR[day.month - 1]}"
    return label if day.year == said.year else f"{label} {day.year}"


def span_label(start: date, end: date, said: date) -> str:
    """``Fri 13 Nov`` for one day, ``Mon 16 – Sun 22 Nov`` (or ``Mon 30 Nov – Sun 6 Dec``) for a span."""
    if start == end:
        return day_label(start, said)
    if (start.year, start.month) == (end.year, end.month):
        head = f"{_WEEKDAY_ABBR[start.weekday()]} {start.day}"
    elif start.year == end.year:
        head = f"{_WEEKDAY_ABBR[start.weekday()]} {start.day} {_MONTH_ABBR[start.month - 1]}"
    else:
        head = f"{_WEEKDAY_ABBR[start.weekday()]} {start.day} {_MONTH_ABBR[start.month - 1]} {start.year}"
    return f"{head} – {day_label(end, said)}"


def _month_label(start: date, said: date) -> str:
    return f"{calendar.month_name[start.month]} {start.year}"


# ---------------------------------------------------------------------------------------------
# Day arithmetic


def _day(d: date, by: int) -> Span:
    day = d + timedelta(days=by)
    return day, day


def _week(d: date, by: int) -> Span:
    start = d - timedelta(days=d.weekday()) + timedelta(weeks=by)
    return start, start + timedelta(days=6)


def _weekend(d: date, by: int) -> Span:
    start = _week(d, by)[0] + timedelta(days=5)
    return start, start + timedelta(days=1)


def _month(d: date, by: int) -> Span:
    index = d.year * 12 + d.month - 1 + by
    year, month = divmod(index, 12)
    start = date(year, month + 1, 1)
    return start, date(year, month + 1, calendar.monthrange(year, month + 1)[1])


def _coming(d: date, weekday: int) -> Span:
    """The next ``weekday`` strictly after ``d``."""
    return _day(d, (weekday - d.weekday() - 1) % 7 + 1)


def _this(d: date, weekday: int) -> Span:
    """``weekday`` on ``d`` itself, else the coming one."""
    return (d, d) if d.weekday() == weekday else _coming(d, weekday)


def _in_week(d: date, by: int, weekday: int) -> Span:
    start = _week(d, by)[0] + timedelta(days=weekday)
    return start, start


# ---------------------------------------------------------------------------------------------
# The phrase tables


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str]
    resolve: Callable[[re.Match[str], date], Span | None]
    cjk: bool = False
    month: bool = False


_RULES: list[_Rule] = []


def _rule(regex: str, resolve: Callable[[re.Match[str], date], Span | None], *, cjk: bool = False,
          month: bool = False, flags: int = re.I) -> None:
    _RULES.append(_Rule(re.compile(regex, flags), resolve, cjk, month))


def _fixed(by: int) -> Callable[[re.Match[str], date], Span]:
    return lambda _m, d: _day(d, by)


def _weeks(by: int) -> Callable[[re.Match[str], date], Span]:
    return lambda _m, d: _week(d, by)


def _months(by: int) -> Callable[[re.Match[str], date], Span]:
    return lambda _m, d: _month(d, by)


_NUMBER_WORDS = {
    # en
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "a couple of": 2,
    # sr (Latin, Cyrillic)
    "jedan": 1, "dva": 2, "dve": 2, "dvije": 2, "tri": 3, "četiri": 4, "cetiri": 4, "pet": 5, "šest": 6,
    "sedam": 7, "osam": 8, "devet": 9, "deset": 10,
    "један": 1, "два": 2, "две": 2, "двије": 2, "три": 3, "четири": 4, "пет": 5, "шест": 6, "седам": 7,
    "осам": 8, "девет": 9, "десет": 10,
    # de
    "einem": 1, "einer": 1, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "sechs": 6, "sieben": 7, "acht": 8,
    "neun": 9, "zehn": 10,
    # fr
    "un": 1, "une": 1, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "sept": 7, "huit": 8, "neuf": 9, "dix": 10,
    # es / pt
    "uno": 1, "una": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6, "siete": 7, "ocho": 8,
    "nueve": 9, "diez": 10, "um": 1, "uma": 1, "dois": 2, "duas": 2, "três": 3, "quatro": 4, "sete": 7,
    "oito": 8, "nove": 9, "dez": 10,
    # ru
    "один": 1, "одну": 1, "четыре": 4, "пять": 5, "шесть": 6,
    "семь": 7, "восемь": 8, "девять": 9, "десять": 10,
}
_CJK_DIGITS = {"一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_NUM = r"(\d{1,3}|a couple of|an?|one|two|three|four|five|six|seven|eight|nine|ten)"


def _number(text: str) -> int | None:
    text = text.strip().lower()
    if text.isdigit():
        return int(text)
    text = text.translate(str.maketrans("０１２３４５６７８９", "0123456789"))
    if text.isdigit():
        return int(text)
    if text in _NUMBER_WORDS:
        return _NUMBER_WORDS[text]
    if text and all(ch in _CJK_DIGITS for ch in text):
        if len(text) == 1:
            return _CJK_DIGITS[text]
        if text.startswith("十") and len(text) == 2:
            return 10 + _CJK_DIGITS[text[1]]
        if text.endswith("十") and len(text) == 2:
            return 10 * _CJK_DIGITS[text[0]]
        if len(text) == 3 and text[1] == "十":
            return 10 * _CJK_DIGITS[text[0]] + _CJK_DIGITS[text[2]]
    return None


def _ahead(unit_days: int) -> Callable[[re.Match[str], date], Span | None]:
    def resolve(m: re.Match[str], d: date) -> Span | None:
        count = _number(m.group("n"))
        return None if count is None or count > 366 else _day(d, count * unit_days)

    return resolve


def _weekday_rule(names: dict[str, int], how: Callable[[date, int], Span]) -> Callable[[re.Match[str], date], Span]:
    def resolve(m: re.Match[str], d: date) -> Span:
        return how(d, names[_weekday_key(m.group("wd"), names)])

    return resolve


def _weekday_key(word: str, names: dict[str, int]) -> str:
    low = word.lower()
    for key in sorted(names, key=len, reverse=True):
        if low.startswith(key):
            return key
    raise KeyError(word)


def _alternation(names: dict[str, int]) -> str:
    return "|".join(sorted((re.escape(name) for name in names), key=len, reverse=True))


# English ------------------------------------------------------------------------------------------
_EN_WD = {name: i for i, name in enumerate(
    ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))}
_EN_WD_RE = rf"(?P<wd>{_alternation(_EN_WD)})"
_NOT_POSSESSIVE = r"(?!['’]s\b)"
_PART_OF_DAY = r"(?:\s+(?:morning|afternoon|evening|night))?"

_rule(rf"\b(?:the\s+)?day\s+after\s+tomorrow\b{_NOT_POSSESSIVE}", _fixed(2))
_rule(rf"\btomorrow{_PART_OF_DAY}\b{_NOT_POSSESSIVE}", _fixed(1))
_rule(rf"\btoday\b{_NOT_POSSESSIVE}|\btonight\b{_NOT_POSSESSIVE}|\bthis\s+(?:morning|afternoon|evening)\b",
      _fixed(0))
_rule(rf"\byesterday{_PART_OF_DAY}\b{_NOT_POSSESSIVE}", _fixed(-1))
_rule(rf"\b{_EN_WD_RE}\s+(?:next|after\s+this)\s+week\b", _weekday_rule(_EN_WD, lambda d, w: _in_week(d, 1, w)))
_rule(rf"\b(?:on|by|until|till|before|next|coming|this\s+coming)\s+{_EN_WD_RE}\b",
      _weekday_rule(_EN_WD, _coming))
_rule(rf"\bthis\s+{_EN_WD_RE}\b", _weekday_rule(_EN_WD, _this))
_rule(rf"\bin\s+{_NUM.replace('(', '(?P<n>', 1)}\s+days?\b", _ahead(1))
_rule(rf"\bin\s+{_NUM.replace('(', '(?P<n>', 1)}\s+weeks?\b", _ahead(7))
_rule(r"\b(?:next|the\s+coming)\s+week\b", _weeks(1))
_rule(r"\bthis\s+week\b", _weeks(0))
_rule(r"\bthe\s+week\s+after\s+next\b", _weeks(2))
_rule(r"\bthis\s+weekend\b", lambda _m, d: _weekend(d, 0))
_rule(r"\bnext\s+month\b", _months(1), month=True)

# Japanese -----------------------------------------------------------------------------------------
_JA_WD = {"月": 0, "火": 1, "水": 2, "木": 3, "金": 4, "土": 5, "日": 6}
_JA_WD_RE = r"(?P<wd>[月火水木金土日])曜(?:日)?"
_CJK_NUM = r"(?P<n>[0-9０-９]{1,3}|[一二两兩三四五六七八九十]{1,3})"

_rule(r"明後日|あさって", _fixed(2), cjk=True)
_rule(r"明日|あした", _fixed(1), cjk=True)
_rule(r"今日|きょう|今夜|今晩|今朝", _fixed(0), cjk=True)
_rule(r"昨日|きのう", _fixed(-1), cjk=True)
_rule(r"再来週", _weeks(2), cjk=True)
_rule(r"来週(?:の)?" + _JA_WD_RE, _weekday_rule(_JA_WD, lambda d, w: _in_week(d, 1, w)), cjk=True)
_rule(r"今週(?:の)?" + _JA_WD_RE, _weekday_rule(_JA_WD, lambda d, w: _in_week(d, 0, w)), cjk=True)
_rule(r"(?<![来今週の])" + _JA_WD_RE, _weekday_rule(_JA_WD, _this), cjk=True)
_rule(r"来週(?!の?[月火水木金土日]曜)", _weeks(1), cjk=True)
_rule(r"今週(?!の?[月火水木金土日]曜)", _weeks(0), cjk=True)
_rule(r"来月", _months(1), cjk=True, month=True)
_rule(_CJK_NUM + r"日後", _ahead(1), cjk=True)
_rule(_CJK_NUM + r"週間後", _ahead(7), cjk=True)

# Chinese ------------------------------------------------------------------------------------------
_ZH_WD = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_ZH_WEEK = r"(?:周|星期|礼拜|禮拜|週)"
_ZH_WD_RE = _ZH_WEEK + r"(?P<wd>[一二三四五六日天])"

_rule(r"后天|後天", _fixed(2), cjk=True)
_rule(r"明天|明早|明晚", _fixed(1), cjk=True)
_rule(r"今天|今晚|今早", _fixed(0), cjk=True)
_rule(r"昨天", _fixed(-1), cjk=True)
_rule(r"下个?" + _ZH_WD_RE, _weekday_rule(_ZH_WD, lambda d, w: _in_week(d, 1, w)), cjk=True)
_rule(r"(?:这个?|這個?|本)" + _ZH_WD_RE, _weekday_rule(_ZH_WD, lambda d, w: _in_week(d, 0, w)), cjk=True)
_rule(r"(?<![下这這本个個上])" + _ZH_WD_RE, _weekday_rule(_ZH_WD, _this), cjk=True)
_rule(r"下个?" + _ZH_WEEK + r"(?![一二三四五六日天])", _weeks(1), cjk=True)
_rule(r"(?:这个?|這個?|本)" + _ZH_WEEK + r"(?![一二三四五六日天])", _weeks(0), cjk=True)
_rule(r"下个月|下個月", _months(1), cjk=True, month=True)
_rule(_CJK_NUM + r"天(?:后|後|以后|之后)", _ahead(1), cjk=True)
_rule(_CJK_NUM + r"(?:个|個)?(?:星期|周|礼拜)(?:后|後|以后|之后)", _ahead(7), cjk=True)

# Serbian (Latin and Cyrillic) ------------------------------------------------------------------------
_SR_WD = {
    "ponedeljak": 0, "ponedjeljak": 0, "utorak": 1, "sredu": 2, "srijedu": 2, "četvrtak": 3, "cetvrtak": 3,
    "petak": 4, "subotu": 5, "nedelju": 6, "nedjelju": 6,
    "понедељак": 0, "понедјељак": 0, "уторак": 1, "среду": 2, "сриједу": 2, "четвртак": 3, "петак": 4,
    "суботу": 5, "недељу": 6, "недјељу": 6,
}
_SR_WD_RE = rf"(?P<wd>{_alternation(_SR_WD)})"
_SR_NEXT = r"(?:sledeće|sljedeće|sledece|sljedece|iduće|iduce|naredne|следеће|сљедеће|идуће|наредне)"
_SR_NEXT_M = r"(?:sledećeg|sljedećeg|sledeceg|idućeg|iduceg|narednog|следећег|сљедећег|идућег|наредног)"
_SR_WEEK = r"(?:nedelje|nedjelje|sedmice|недеље|недјеље|седмице)"

_rule(r"\bprekosutra\b|\bпрекосутра\b", _fixed(2))
_rule(r"\bsutra\b|\bсутра\b", _fixed(1))
_rule(r"\bdanas\b|\bvečeras\b|\bveceras\b|\bданас\b|\bвечерас\b|\bjutros\b|\bјутрос\b", _fixed(0))
_rule(r"\bjuče\b|\bjučer\b|\bjuce\b|\bјуче\b|\bјучер\b", _fixed(-1))
_rule(rf"\b(?:u|у)\s+{_SR_WD_RE}\b", _weekday_rule(_SR_WD, _coming))
_rule(rf"\b{_SR_NEXT}\s+{_SR_WEEK}\b", _weeks(1))
_rule(rf"\b(?:ove|ове)\s+{_SR_WEEK}\b", _weeks(0))
_rule(rf"\b{_SR_NEXT_M}\s+(?:meseca|mjeseca|месеца|мјесеца)\b", _months(1), month=True)
_rule(r"\b(?:za|за)\s+(?P<n>\d{1,3}|[a-zčćšžđ]+|[а-яђјљњћџ]+)\s+(?:dana|дана)\b", _ahead(1))
_rule(r"\b(?:za|за)\s+(?P<n>\d{1,3}|[a-zčćšžđ]+|[а-яђјљњћџ]+)\s+(?:nedelje|nedjelje|sedmice|недеље|недјеље|седмице)\b",
      _ahead(7))

# German -------------------------------------------------------------------------------------------
_DE_WD = {"montag": 0, "dienstag": 1, "mittwoch": 2, "donnerstag": 3, "freitag": 4, "samstag": 5, "sonnabend": 5,
          "sonntag": 6}
_DE_WD_RE = rf"(?P<wd>{_alternation(_DE_WD)})"

_rule(r"\bübermorgen\b", _fixed(2))
# "morgen" (tomorrow) is lower-case; "Morgen" is the morning ("guten Morgen", "heute Morgen").
_rule(r"(?<![Hh]eute )(?<![Gg]uten )\bmorgen(?:\s+(?:früh|[Aa]bend|[Nn]achmittag|[Vv]ormittag))?\b|"
      r"^Morgen(?:\s+(?:früh|[Aa]bend|[Nn]achmittag|[Vv]ormittag))?\b",
      _fixed(1), flags=0)
_rule(r"\bheute(?:\s+(?:abend|morgen|nachmittag|nacht))?\b", _fixed(0))
_rule(r"\bgestern\b", _fixed(-1))
_rule(rf"\b(?:am|bis|diesen|kommenden|nächsten)\s+{_DE_WD_RE}\b", _weekday_rule(_DE_WD, _coming))
_rule(r"\b(?:nächste|nächster|kommende|kommender)\s+woche\b", _weeks(1))
_rule(r"\bdiese(?:r)?\s+woche\b", _weeks(0))
_rule(r"\bnächsten\s+monat\b|\bim\s+nächsten\s+monat\b", _months(1), month=True)
_rule(r"\bin\s+(?P<n>\d{1,3}|einem|einer|zwei|drei|vier|fünf|sechs|sieben|acht|neun|zehn)\s+tag(?:en)?\b",
      _ahead(1))
_rule(r"\bin\s+(?P<n>\d{1,3}|einer|zwei|drei|vier)\s+woche(?:n)?\b", _ahead(7))

# French -------------------------------------------------------------------------------------------
_FR_WD = {"lundi": 0, "mardi": 1, "mercredi": 2, "jeudi": 3, "vendredi": 4, "samedi": 5, "dimanche": 6}
_FR_WD_RE = rf"(?P<wd>{_alternation(_FR_WD)})"

_rule(r"\baprès-demain\b|\bapres-demain\b", _fixed(2))
_rule(r"(?<!après-)(?<!apres-)\bdemain(?:\s+(?:matin|soir|après-midi))?\b", _fixed(1))
_rule(r"\baujourd'hui\b|\baujourd’hui\b|\bce\s+(?:soir|matin)\b|\bcet\s+après-midi\b", _fixed(0))
_rule(rf"\b{_FR_WD_RE}\s+prochain\b", _weekday_rule(_FR_WD, _coming))
_rule(rf"\bce\s+{_FR_WD_RE}\b", _weekday_rule(_FR_WD, _this))
# A bare weekday is the coming one; "le vendredi" is every Friday and stays as written.
_rule(rf"(?<!\ble )(?<!\bles )(?<!\bce )\b{_FR_WD_RE}\b(?!\s+prochain)(?!s\b)", _weekday_rule(_FR_WD, _coming))
_rule(r"\bla\s+semaine\s+prochaine\b", _weeks(1))
_rule(r"\bcette\s+semaine\b", _weeks(0))
_rule(r"\ble\s+mois\s+prochain\b", _months(1), month=True)
_rule(r"\bdans\s+(?P<n>\d{1,3}|un|deux|trois|quatre|cinq|six|sept|huit|neuf|dix)\s+jours?\b", _ahead(1))
_rule(r"\bdans\s+(?P<n>\d{1,3}|une|deux|trois|quatre)\s+semaines?\b", _ahead(7))

# Spanish ------------------------------------------------------------------------------------------
_ES_WD = {"lunes": 0, "martes": 1, "miércoles": 2, "miercoles": 2, "jueves": 3, "viernes": 4, "sábado": 5,
          "sabado": 5, "domingo": 6}
_ES_WD_RE = rf"(?P<wd>{_alternation(_ES_WD)})"

_rule(r"\bpasado\s+mañana\b", _fixed(2))
# "mañana" is also the morning: "la mañana", "por la mañana", "esta mañana".
_rule(r"(?<!\bla )(?<!\bpasado )(?<!\besta )\bmañana(?:\s+por\s+la\s+(?:mañana|tarde|noche))?\b", _fixed(1))
_rule(r"\bhoy\b|\besta\s+(?:noche|tarde|mañana)\b", _fixed(0))
_rule(r"\bayer\b", _fixed(-1))
_rule(rf"\bel\s+próximo\s+{_ES_WD_RE}\b|\bel\s+{_ES_WD_RE.replace('wd', 'wd2')}\s+que\s+viene\b",
      lambda m, d: _coming(d, _ES_WD[_weekday_key(m.group("wd") or m.group("wd2"), _ES_WD)]))
_rule(rf"\beste\s+{_ES_WD_RE}\b", _weekday_rule(_ES_WD, _this))
_rule(rf"\b(?:el|para\s+el|hasta\s+el)\s+{_ES_WD_RE}\b(?!\s+que\s+viene)", _weekday_rule(_ES_WD, _coming))
_rule(r"\bla\s+(?:próxima\s+semana|semana\s+que\s+viene|semana\s+próxima)\b", _weeks(1))
_rule(r"\besta\s+semana\b", _weeks(0))
_rule(r"\bel\s+(?:próximo\s+mes|mes\s+que\s+viene)\b", _months(1), month=True)
_rule(r"\b(?:en|dentro\s+de)\s+(?P<n>\d{1,3}|un|uno|dos|tres|cuatro|cinco|seis|siete|ocho|nueve|diez)\s+días\b",
      _ahead(1))
_rule(r"\b(?:en|dentro\s+de)\s+(?P<n>\d{1,3}|una|dos|tres|cuatro)\s+semanas?\b", _ahead(7))

# Portuguese ---------------------------------------------------------------------------------------
_PT_WD = {"segunda": 0, "terça": 1, "terca": 1, "quarta": 2, "quinta": 3, "sexta": 4, "sábado": 5, "sabado": 5,
          "domingo": 6}
_PT_WD_RE = rf"(?P<wd>{_alternation(_PT_WD)})(?:-feira)?"

_rule(r"\bdepois\s+de\s+amanhã\b", _fixed(2))
_rule(r"\bamanhã(?:\s+(?:de\s+manhã|à\s+tarde|à\s+noite))?\b", _fixed(1))
_rule(r"\bhoje(?:\s+à\s+noite)?\b|\besta\s+noite\b", _fixed(0))
_rule(r"\bontem\b", _fixed(-1))
_rule(rf"\b(?:na|no)\s+próxim[ao]\s+{_PT_WD_RE}", _weekday_rule(_PT_WD, _coming))
_rule(rf"\b(?:nesta|neste|esta|este)\s+{_PT_WD_RE}", _weekday_rule(_PT_WD, _this))
_rule(rf"\b(?:na|no|até\s+a|até\s+o)\s+{_PT_WD_RE}(?!s\b)", _weekday_rule(_PT_WD, _coming))
_rule(r"\b(?:na\s+)?(?:semana\s+que\s+vem|próxima\s+semana)\b", _weeks(1))
_rule(r"\bnesta\s+semana\b|\besta\s+semana\b", _weeks(0))
_rule(r"\b(?:no\s+)?(?:mês\s+que\s+vem|próximo\s+mês)\b", _months(1), month=True)
_rule(r"\b(?:em|daqui\s+a)\s+(?P<n>\d{1,3}|um|dois|três|quatro|cinco|seis|sete|oito|nove|dez)\s+dias\b",
      _ahead(1))
_rule(r"\b(?:em|daqui\s+a)\s+(?P<n>\d{1,3}|uma|duas|três|quatro)\s+semanas?\b", _ahead(7))

# Russian ------------------------------------------------------------------------------------------
_RU_WD = {"понедельник": 0, "вторник": 1, "среду": 2, "четверг": 3, "пятницу": 4, "субботу": 5,
          "воскресенье": 6}
_RU_WD_RE = rf"(?P<wd>{_alternation(_RU_WD)})"

_rule(r"\bпослезавтра\b", _fixed(2))
_rule(r"\bзавтра(?:\s+(?:утром|днём|днем|вечером))?\b", _fixed(1))
_rule(r"\bсегодня(?:\s+(?:утром|днём|днем|вечером|ночью))?\b", _fixed(0))
_rule(r"\bвчера\b", _fixed(-1))
_rule(rf"\bво?\s+(?:следующ(?:ий|ую|ее)\s+){_RU_WD_RE}\b", _weekday_rule(_RU_WD, _coming))
_rule(rf"\bво?\s+(?:эт(?:от|у|о)\s+){_RU_WD_RE}\b", _weekday_rule(_RU_WD, _this))
_rule(rf"\bво?\s+{_RU_WD_RE}\b", _weekday_rule(_RU_WD, _coming))
_rule(r"\bна\s+следующей\s+неделе\b", _weeks(1))
_rule(r"\bна\s+этой\s+неделе\b", _weeks(0))
_rule(r"\bв\s+следующем\s+месяце\b", _months(1), month=True)
_rule(r"\bчерез\s+(?P<n>\d{1,3}|один|два|три|четыре|пять|шесть|семь|восемь|девять|десять)\s+(?:день|дня|дней)\b",
      _ahead(1))
_rule(r"\bчерез\s+неделю\b", _fixed(7))
_rule(r"\bчерез\s+(?P<n>\d{1,3}|две|три|четыре)\s+недели\b", _ahead(7))


# ---------------------------------------------------------------------------------------------
# Resolution

_ALREADY = re.compile(r"\s?[(（]")


@dataclass(frozen=True)
class Resolved:
    """One phrase resolved: its offsets in the text, the span and the label appended."""

    start: int
    end: int
    span: Span
    label: str
    cjk: bool


def find_relative(text: str, said: date) -> list[Resolved]:
    """Every relative-time phrase of ``text`` resolved against the day ``said``, in text order; of overlapping
    phrases the longest wins. A phrase already followed by a parenthesis is left out."""
    found: list[Resolved] = []
    for rule in _RULES:
        for m in rule.pattern.finditer(text):
            if m.end() == m.start() or _ALREADY.match(text, m.end()):
                continue
            try:
                span = rule.resolve(m, said)
            except (OverflowError, ValueError, KeyError):
                continue
            if span is None:
                continue
            label = _month_label(span[0], said) if rule.month else span_label(span[0], span[1], said)
            found.append(Resolved(m.start(), m.end(), span, label, rule.cjk))
    kept: list[Resolved] = []
    for item in sorted(found, key=lambda r: (-(r.end - r.start), r.start)):
        if all(item.end <= k.start or item.start >= k.end for k in kept):
            kept.append(item)
    return sorted(kept, key=lambda r: r.start)


def resolve_relative(text: str, said_at: datetime | date | None, zone: tzinfo | None = None) -> str:
    """``text`` with each relative time it names followed by the day it means, counted from ``said_at``.

    Args:
        text: a drafted memory ("Remind me tomorrow at 08:30 to …").
        said_at: when it was said; an aware time is moved into ``zone`` first (the clock's zone: the day the
            person lived it). None: the text as it is.
        zone: the clock's zone (None: ``said_at`` as given).

    Returns:
        ``"Remind me tomorrow (Fri 13 Nov) at 08:30 to …"``; a phrase that cannot be resolved stays as written.
    """
    if said_at is None:
        return text
    if isinstance(said_at, datetime):
        if zone is not None and said_at.tzinfo is not None:
            said_at = said_at.astimezone(zone)
        said = said_at.date()
    else:
        said = said_at
    out: list[str] = []
    last = 0
    for item in find_relative(text, said):
        out.append(text[last:item.end])
        out.append(f"({item.label})" if item.cjk else f" ({item.label})")
        last = item.end
    out.append(text[last:])
    return "".join(out)
