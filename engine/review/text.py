"""What the review rules read in a statement: content words, typed values (times, numbers, versions, weekdays,
names), negation and change cues, one-off event markers and durable-fact cues."""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from engine.lexicon import CJK_CHARS, CJK_RE, REVIEW_STOP_WORDS, SERBIAN_CYRILLIC

STOPWORDS = REVIEW_STOP_WORDS  # the one list of English function words, plus the review's extras

NEGATIONS = frozenset({"not", "no", "never", "don't", "doesn't", "didn't", "isn't", "aren't", "won't", "can't",
                       "cannot", "stopped", "quit", "longer", "anymore", "dislike", "dislikes", "hate", "hates",
                       "avoid", "avoids", "gave",
                       "ne", "nije", "nisu", "nikad"})  # (Serbian: not, isn't, aren't, never)
"""Words that turn a statement around ("no longer likes", "stopped drinking", "hates")."""

CHANGE_CUES = frozenset({"moved", "move", "moves", "switched", "switch", "switches", "changed", "change", "changes",
                         "now", "instead", "replaced", "replaces", "new", "from", "rescheduled", "shifted",
                         "updated", "upgraded", "downgraded", "relocated", "became", "anymore", "longer",
                         "starting", "today", "onwards", "going", "forward", "raised", "lowered", "increased",
                         "reduced", "cut", "bumped", "dropped", "later", "earlier", "revised", "adjusted",
                         # Serbian: now, from now on, switched, changed, moved, updated, transferred
                         "sada", "ubuduće", "prešao", "prešla", "prešli", "promenio", "promenila", "promenjeno",
                         "pomeren", "pomerena", "pomereno", "ažuriran", "ažurirana", "prebačen", "prebačena"})
"""Words that say a value changed ("standup moved to 10:00", "switched to coffee"), left out of the subject."""

WEEKDAYS = {"monday": "mon", "tuesday": "tue", "wednesday": "wed", "thursday": "thu", "friday": "fri",
            "saturday": "sat", "sunday": "sun", "mon": "mon", "tue": "tue", "tues": "tue", "wed": "wed",
            "thu": "thu", "thur": "thu", "thurs": "thu", "fri": "fri", "sat": "sat", "sun": "sun"}
DAYPARTS = {"morning": "morning", "mornings": "morning", "afternoon": "afternoon", "afternoons": "afternoon",
            "evening": "evening", "evenings": "evening", "night": "night", "nights": "night",
            "lunchtime": "noon", "midday": "noon", "weekend": "weekend", "weekends": "weekend",
            "weekday": "weekday", "weekdays": "weekday"}
"""Parts of the day (and of the week) a habit is set at: a value like a weekday ("gym mornings" → "evenings")."""
MONTHS = {"january": "jan", "february": "feb", "march": "mar", "april": "apr", "june": "jun", "july": "jul",
          "august": "aug", "september": "sep", "october": "oct", "november": "nov", "december": "dec",
          "jan": "jan", "feb": "feb", "mar": "mar", "apr": "apr", "jun": "jun", "jul": "jul", "aug": "aug",
          "sep": "sep", "sept": "sep", "oct": "oct", "nov": "nov", "dec": "dec"}

# Serbian (Latin; Cyrillic is transliterated first): weekdays with their "on …" forms ("petkom": on Fridays; not
# "nedelje", which is also "week"), and months with their "of …" forms ("17. oktobra").
WEEKDAYS.update({w: d for d, forms in (("mon", "ponedeljak ponedeljkom"), ("tue", "utorak utorkom"),
                                       ("wed", "sreda sredom sredu"), ("thu", "četvrtak četvrtkom"),
                                       ("fri", "petak petkom"), ("sat", "subota subotom subotu subote"),
                                       ("sun", "nedeljom")) for w in forms.split()})
MONTHS.update({w: m for m, forms in (("jan", "januar januara"), ("feb", "februar februara"), ("mar", "mart marta"),
                                     ("apr", "aprila"), ("may", "maja"), ("jun", "juna"), ("jul", "jula"),
                                     ("aug", "avgust avgusta"), ("sep", "septembar septembra"),
                                     ("oct", "oktobar oktobra"), ("nov", "novembar novembra"),
                                     ("dec", "decembar decembra")) for w in forms.split()})
_MON = r"(?:jan|feb|mar|apr|may|maj|jun|jul|aug|avg|sep|oct|okt|nov|dec)[a-z]*\.?"  # (English and Serbian)
_TOKEN = re.compile(
    r"(?P<meet>(?<![\d:])\b1:1\b(?![\d:]))"  # a one-on-one (a word: "the weekly 1:1 with Wei"), not a time
    r"|(?P<date>\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}\.\d{1,2}\.\d{4}\b"
    r"|\b\d{1,2}(?:st|nd|rd|th|\.)?\s+(?:of\s+)?" + _MON + r"(?:,?\s+(?:19|20)\d{2}\b)?"
    r"|\b" + _MON + r"\s+\d{1,2}(?:st|nd|rd|th)?\b(?!:)(?:,?\s+(?:19|20)\d{2}\b)?)"
    r"|(?P<year>\b(?:19|20)\d{2}\b(?![.,]\d))"  # (not the first part of a version "2025.12.4")
    r"|(?P<time>(?<!:)\b\d{1,2}:\d{2}(?::\d{2})?\s*(?:[ap]\.?m\.?)?(?!\d|:\d|\.\d)|\b\d{1,2}\.\d{2}\s*[ap]\.?m\.?|\b\d{1,2}\s*[ap]\.?m\.?\b|\bnoon\b|\bmidnight\b)"
    r"|(?P<version>\bv?\d+(?:\.\d+){1,3}\b|\bv\d+\b)"
    r"|(?P<money>[€$£]\s?\d[\d,]*(?:\.\d+)?|\b\d[\d,]*(?:\.\d+)?\s?(?:eur|usd|gbp|euros?|dollars?)\b)"
    r"|(?P<number>\b\d+(?:[.,]\d+)?\b)"
    r"|(?P<word>[^\W\d_]+(?:['’][^\W\d_]+)?)",
    re.IGNORECASE,
)

# What is not a value however many digits it holds: URLs, paths, file names, commit hashes, ticket and issue
# ids, UUIDs, mixed letter-digit tokens, and a list's numbering. Blanked before values are typed; each is kept
# as a ``ref`` (two statements that name different commits are not the same statement, nor do they conflict).
_REFS = re.compile(
    r"(?P<url>\b(?:https?|ftp|file)://\S+|\bwww\.\S+)"
    r"|(?P<path>(?<![\w/])(?:~|\.{1,2})?/?(?:[\w.@+-]+/)+[\w.@+-]*|`[^`\s]*[/\\._-][^`\s]*`)"
    r"|(?P<file>\b[\w-]+(?:\.[\w-]+)*\.(?:md|py|ts|tsx|js|mjs|cjs|json|jsonl|toml|yaml|yml|ini|cfg|txt|log|csv|sh|"
    r"sql|sqlite|db|lock|rs|go|java|kt|rb|php|c|h|cpp|hpp|css|html|xml|pdf|png|jpe?g|svg|zip|gz|tgz|env|conf)\b)"
    r"|(?P<uuid>\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b)"
    r"|(?P<slug>\b(?=[\w-]*\d)(?=[\w-]*[^\W\d_])(?=[\w-]{20})[^\W_]+(?:-[^\W_]+){3,}\b)"  # an id of words ("forge-staff-engineer-b9bf88f1")
    r"|(?P<hash>\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}\b)"
    r"|(?P<ticket>\b[A-Z][A-Z0-9]{1,9}-\d+\b|(?<![\w&])#\d+\b|\bPR\s?#?\d+\b)"
    r"|(?P<mixed>\b(?=\w*[^\W\d_])(?=\w*\d)\w*[^\W\d_]\d\w*\b|\b\d+[^\W\d_]{2,}\w*\b)"
    r"|(?P<listno>^\(?\d{1,3}[.)]\s|(?<=\s)\(\d{1,2}\)\s|\b(?:step|item|option|no\.)\s?\d{1,3}\b)",
    re.IGNORECASE,
)
_MAYBE_REF = re.compile(r"[\d/`]|\.[^\W\d_]")
"""What every ref needs somewhere (a digit, a slash, a backtick or a dot before a letter): a quick test first."""
_UNITS = re.compile(r"^\d+(?:k|m|g|t)?(?:b|kb|mb|gb|tb|ms|s|h|min|km|kg|px|%|x|rpm|fps|gbps|mbps|am|pm)$", re.IGNORECASE)


_HASH_REF = re.compile(r"(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-"
                       r"[0-9a-f]{4}-[0-9a-f]{12}")


def cited_refs(refs: frozenset[str]) -> frozenset[str]:
    """The refs that name a thing (a path, a file, a URL, a ticket), without commit hashes and UUIDs: a
    statement citing another commit for the same fact says the same thing (tests/data/review_labels/SPEC.md)."""
    return frozenset(r for r in refs if not _HASH_REF.fullmatch(r))


_CYRILLIC_TABLE = str.maketrans(SERBIAN_CYRILLIC)
_HAS_CYRILLIC = re.compile("[\u0400-\u04ff]")
_CJK_FULL_DATE = re.compile(r"((?:19|20)\d{2})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")
_CJK_DATE = re.compile(r"(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")
_CJK_WEEKDAY = re.compile(r"(?:星期|礼拜|周)([一二三四五六日天])")
_CJK_WEEKDAYS = {"一": "Monday", "二": "Tuesday", "三": "Wednesday", "四": "Thursday", "五": "Friday",
                 "六": "Saturday", "日": "Sunday", "天": "Sunday"}
_CJK_NEGATION = re.compile("[不没別别]")
_CJK_DROP = re.compile("不再|再也不|已经不|现在|改成|改为|换成|换到|以后|每天|每周|每星期|每个?月|不|没有|没")
"""What a Chinese run's words leave out: negations, change cues and cadence words (English drops "not",
"now", "every" as stop words and cues; the flags are read before)."""
"""A negation inside a Chinese phrase ("不吃香菜": does not eat coriander)."""
_CJK_CHANGE = re.compile("现在|改成|改为|换成|换到|提到|调到|从.{0,6}起|不再|以后")
"""Words that say a value changed in Chinese ("now", "changed to", "raised to", "from … on", "no longer")."""
_ENGLISH_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def normalize_script(text: str) -> str:
    """Serbian Cyrillic written in Latin (one language, two scripts: "Драган" is "Dragan"), and Chinese dates
    and weekdays in the forms the value rules read ("2月14日" → "14 Feb", "星期一" → "Monday"), set apart from the
    characters around them."""
    if _HAS_CYRILLIC.search(text):
        text = text.translate(_CYRILLIC_TABLE)
    if CJK_RE.search(text):
        text = _CJK_FULL_DATE.sub(lambda m: f" {m.group(1)}-{int(m.group(2)):02d}-{int(m.group(3)):02d} ", text)
        text = _CJK_DATE.sub(lambda m: f" {int(m.group(2))} {_ENGLISH_MONTHS[int(m.group(1)) - 1]} "
                             if 1 <= int(m.group(1)) <= 12 else m.group(0), text)
        text = _CJK_WEEKDAY.sub(lambda m: f" {_CJK_WEEKDAYS[m.group(1)]} ", text)
        # digits against characters ("380元", "22日回") would read as one mixed token: set them apart
        text = re.sub(f"([{CJK_CHARS}])(?=[0-9A-Za-z])|([0-9A-Za-z])(?=[{CJK_CHARS}])",
                      lambda m: (m.group(1) or m.group(2)) + " ", text)
    return text


def blank_refs(clean: str) -> tuple[str, frozenset[str]]:
    """The text with its URLs, paths, file names, hashes, ids and list numbering blanked out, and those refs
    (case-folded), so that no digit inside them is read as a number, a time or a date."""
    if not _MAYBE_REF.search(clean):
        return clean, frozenset()  # no digit, slash, backtick or ".ext": nothing to blank (most statements)
    refs: set[str] = set()

    def repl(m: re.Match[str]) -> str:
        raw = m.group(0)
        if m.lastgroup == "mixed" and _UNITS.match(raw):
            return raw  # "200ms", "5km", "41%": a measure, a number with its unit
        if m.lastgroup != "listno":
            refs.add(raw.strip("`").casefold())
        return " " * len(raw)

    return _REFS.sub(repl, clean), frozenset(refs)


def _undouble(w: str) -> str:
    """"swimm" → "swim", "plann" → "plan" (a doubled consonant before -ing/-ed), but "fill", "pass", "buzz"."""
    if len(w) >= 4 and w[-1] == w[-2] and w[-1] in "bdgmnprt":
        return w[:-1]
    return w


def stem(word: str) -> str:
    """A very light English stemmer: enough to match "prefers"/"prefer", "meetings"/"meeting"."""
    w = word.casefold().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 6 and w.endswith("ly"):
        return w[:-2]
    if len(w) > 5 and w.endswith("ing"):
        return _undouble(w[:-3])
    if len(w) > 4 and w.endswith("ed") and not w.endswith("eed"):
        return _undouble(w[:-2])
    if len(w) > 3 and w.endswith("es") and w[-3] in "sxz":
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss") and not w.endswith("us"):
        return w[:-1]
    if len(w) >= 5 and w[-1] in "aeiou" and w[-2] not in "aeiou":
        # A final vowel is an inflection in Serbian ("pijaca"/"pijacu", "Sofija"/"Sofiju") and often a silent e
        # in English ("state"/"stated", "require"/"required"): dropped on every side alike.
        return w[:-1]
    return w


def _time_value(raw: str) -> str:
    s = raw.casefold().replace(" ", "").replace(".", ":")
    if s in ("noon",):
        return "12:00"
    if s == "midnight":
        return "00:00"
    pm = s.endswith(("pm", "p:m:", "p:m"))
    am = s.endswith(("am", "a:m:", "a:m"))
    digits = re.sub(r"[^\d:]", "", s).strip(":")
    if ":" in digits:
        h, m = digits.split(":", 2)[:2]  # (seconds say no other time of day: "22:14:47" is 22:14)
    else:
        h, m = digits, "00"
    hour = int(h or 0)
    if pm and hour < 12:
        hour += 12
    if am and hour == 12:
        hour = 0
    return f"{hour:02d}:{int(m[:2] or 0):02d}"


_SENTENCE_START = frozenset(".:;!?—–-•(\"'„“”«»[")


_MONTH_NUMBER = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
                                             "nov", "dec"), 1)}
_MONTH_NUMBER.update({"maj": 5, "avg": 8, "okt": 10})  # Serbian


def _day_value(raw: str) -> str:
    """``2026-03-14``, ``14.03.2026``, ``14 March 2026``, ``Mar 14, 2026`` as ``2026-03-14``; without a year as
    ``03-14`` (see :func:`same_dates`)."""
    raw = raw.strip()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", raw):
        return raw
    dotted = re.fullmatch(r"(\d{1,2})\.(\d{1,2})\.(\d{4})", raw)
    if dotted:
        return f"{dotted.group(3)}-{int(dotted.group(2)):02d}-{int(dotted.group(1)):02d}"
    year = re.search(r"\b(?:19|20)\d{2}\b", raw)
    rest = raw[:year.start()] if year else raw
    digits = re.search(r"\d{1,2}", rest)
    month = re.search(r"[a-z]{3}", rest.casefold())
    if digits is None or month is None:
        return raw.casefold()
    day = f"{_MONTH_NUMBER.get(month.group(0), 0):02d}-{int(digits.group(0)):02d}"
    return f"{year.group(0)}-{day}" if year else day


def same_dates(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether two statements' dates are the same days: ``2026-02-18`` is ``Feb 18, 2026`` and, when one side
    gives no year, ``Feb 18``."""
    if a == b:
        return True
    if any(len(x) == 5 for x in a | b):
        return {x[-5:] for x in a} == {x[-5:] for x in b}
    return False


@dataclass(frozen=True)
class Features:
    """What the rules compare, computed once per statement (and kept in the review cache between reviews)."""

    words: tuple[str, ...]  # content words, stemmed, in order
    values: dict[str, frozenset[str]]  # kind (time, number, version, money, weekday, month, date, name, ref) → values
    negated: bool
    change: bool
    squashed: str  # the text lower-cased with punctuation squeezed out (its trigrams are made when needed)
    initial: str | None = None  # a capitalised first word (a name, or just the sentence's first word)
    starts: frozenset[str] = frozenset()  # every capitalised sentence-initial word (names or not)

    @functools.cached_property
    def content(self) -> frozenset[str]:
        """The content words as a set."""
        return frozenset(self.words)

    @functools.cached_property
    def grams(self) -> frozenset[str]:
        """Character trigrams of the squashed text."""
        sq = self.squashed
        return frozenset(sq[i:i + 3] for i in range(max(0, len(sq) - 2)))

    def to_raw(self) -> tuple[Any, ...]:
        """The fields as plain tuples, sets and strings (what the review cache stores)."""
        return (self.words, self.values, self.negated, self.change, self.squashed, self.initial, self.starts)

    @classmethod
    def from_raw(cls, raw: tuple[Any, ...]) -> Features:
        """The features :meth:`to_raw` gave.

        Raises:
            TypeError, ValueError: not that shape.
        """
        words, values, negated, change, squashed, initial, starts = raw
        if not (isinstance(words, tuple) and isinstance(values, dict) and isinstance(squashed, str)
                and isinstance(starts, frozenset)):
            raise ValueError("not review features")
        return cls(words, values, bool(negated), bool(change), squashed, initial, starts)


_VERSION_WORD = re.compile(r"(?:\b(?:version|ver|verzij[a-z]*|release|edition|izdanj[a-z]*)\.?|版本?)\s*$", re.IGNORECASE)
_NAME_BEFORE = re.compile(r"(?<![.:;!?\-–—•(\"'\w])\s*([A-Z][\w+]*)\s+$")


def year_kind(text: str, start: int) -> str:
    """A four-digit year's kind by what stands before it: ``version`` after a version word ("verziju 2024",
    "edition 2022") or a product's name ("Trados Studio 2022", "Office 2019"), else ``year``.

    A product's name is a capitalised word inside a sentence that is neither a month ("March 2022" is a time)
    nor a function word ("In 2022")."""
    before = text[max(0, start - 40):start]
    if _VERSION_WORD.search(before):
        return "version"
    m = _NAME_BEFORE.search(text[:start])
    if m is not None:
        word = m.group(1)
        low = word.casefold()
        head = text[:m.start(1)].rstrip()
        if head and head[-1] not in _SENTENCE_START and low not in MONTHS and low[:3] not in MONTHS.values() \
                and low not in STOPWORDS and not word.isupper():
            return "version"
    return "year"


_QUOTED = re.compile(r'"[^"\n]{1,80}"|“[^”\n]{1,80}”|„[^“”\n]{1,80}[“”]|«[^»\n]{1,80}»')
"""A quoted span: a title, a button's or a message's words."""
_MEMO: dict[str, Features] = {}


def features(clean: str) -> Features:
    """The :class:`Features` of a clean statement (memoised: the same line recurs across notes and reviews)."""
    found = _MEMO.get(clean)
    if found is None:
        if len(_MEMO) > 200_000:
            _MEMO.clear()
        found = _MEMO[clean] = _features(clean)
    return found


def _features(clean: str) -> Features:
    words: list[str] = []
    values: dict[str, set[str]] = {}
    negated = False
    change = False
    first_word = True
    initial: str | None = None
    starts: set[str] = set()
    clean = normalize_script(clean)
    original = clean
    clean, refs = blank_refs(clean)
    if refs:
        values["ref"] = set(refs)
    quoted = [(q.start(), q.end()) for q in _QUOTED.finditer(clean)]
    for m in _TOKEN.finditer(clean):
        kind = "word" if m.lastgroup == "meet" else m.lastgroup
        if kind == "year":
            kind = year_kind(clean, m.start())
        text = m.group(0)
        if quoted and kind in ("word", "number", "year") and any(a < m.start() < b for a, b in quoted):
            # A quoted title, button or message ("Click \"Create New Workspace\"", "the \"Video 2 Spring Farm\"
            # workspace") names a thing by its words: no person, count, change or negation in it.
            low = text.casefold()
            if kind == "word" and not (low in STOPWORDS or low in CHANGE_CUES or low in NEGATIONS or len(low) < 2
                                       or CJK_RE.match(text)):
                words.append(stem(low))
            first_word = False
            continue
        at = m.start() - 1
        while at >= 0 and clean[at] == " " and original[at] == " ":
            at -= 1
        if at < 0 or clean[at] in _SENTENCE_START:
            first_word = True  # "Noted: Saving …": a capital after a colon or a dash starts a sentence
        if kind == "word" and CJK_RE.match(text):
            # A run of Chinese (or Japanese) characters is a phrase with no spaces: its character pairs are its
            # words (as the search index reads it), each character alone when the run is one character long.
            if _CJK_NEGATION.search(text):
                negated = True
            if _CJK_CHANGE.search(text):
                change = True
            # Negations, change cues, cadence words and a closing 了 are left out of its words, as in English
            # ("not", "now", "every"): "李梅现在早上不喝绿茶了" has the pairs of "李梅早上喝绿茶", the subject
            # of the line it reverses.
            text = _CJK_DROP.sub("", text) or text
            text = text[:-1] if len(text) > 2 and text.endswith("了") else text
            words.extend(text[i:i + 2] for i in range(max(1, len(text) - 1)))
            first_word = False
            continue
        if kind == "word":
            low = text.casefold().replace("’", "'")
            if low in WEEKDAYS or (low.endswith("s") and low[:-1] in WEEKDAYS and len(low) > 4):
                values.setdefault("weekday", set()).add(WEEKDAYS.get(low, WEEKDAYS.get(low[:-1], low)))
                first_word = False
                continue
            if low in MONTHS and (len(low) > 3 or text[0].isupper()):
                values.setdefault("month", set()).add(MONTHS[low])
                first_word = False
                continue
            if low in DAYPARTS:
                values.setdefault("daypart", set()).add(DAYPARTS[low])
                first_word = False
                continue
            if low in NEGATIONS:
                negated = True
            if low in CHANGE_CUES:
                change = True
            if low in STOPWORDS or low in CHANGE_CUES or low in NEGATIONS or len(low) < 2:
                first_word = False
                continue
            if text[0].isupper() and not text.isupper():
                if first_word:
                    starts.add(stem(low))
                    if initial is None and not words:
                        initial = stem(low)
                else:
                    values.setdefault("name", set()).add(stem(low))
            words.append(stem(low))
            first_word = False
        else:
            first_word = False
            assert kind is not None
            if kind == "time":
                values.setdefault("time", set()).add(_time_value(text))
            elif kind == "version":
                values.setdefault("version", set()).add(text.casefold().lstrip("v"))
            elif kind == "date":
                values.setdefault("date", set()).add(_day_value(text))
            elif kind == "money":
                values.setdefault("money", set()).add(re.sub(r"[^\d.]", "", text))
            else:
                values.setdefault(kind, set()).add(text.replace(",", "."))
    low = original.casefold()
    if "no longer" in low or "not anymore" in low or "gave up" in low or "više ne" in low:
        negated = True
    squashed = re.sub(r"\s+", " ", re.sub(r"[^\w:]+", " ", clean.casefold())).strip()
    return Features(tuple(words), {k: frozenset(v) for k, v in values.items()}, negated, change, squashed,
                    initial, frozenset(starts))


def value_units(clean: str) -> dict[tuple[str, str], frozenset[str]]:
    """Each typed value of a statement (``(kind, value)`` as :func:`features` types it; every content word as a
    possible ``name``) with the content word right after it, stemmed (its unit or the noun it counts: what the value is a value *of*). In
    "Fedora 40 + 32 GB RAM" 32 counts "gb" and 40 none; in "standup moved to 10:00" 10:00 has none."""
    text, _ = blank_refs(normalize_script(clean))
    toks: list[tuple[str, str, str | None]] = []  # (kind, value, the content word's stem or None)
    apart: list[bool] = []  # per token: whether punctuation stands between it and the one before
    last = 0
    for m in _TOKEN.finditer(text):
        kind = "word" if m.lastgroup == "meet" else m.lastgroup
        if kind == "year":
            kind = year_kind(text, m.start())
        raw = m.group(0)
        apart.append(bool(text[last:m.start()].strip()))
        last = m.end()
        if kind == "word":
            low = raw.casefold().replace("’", "'")
            if low in WEEKDAYS or (low.endswith("s") and low[:-1] in WEEKDAYS and len(low) > 4):
                toks.append(("weekday", WEEKDAYS.get(low, WEEKDAYS.get(low[:-1], low)), None))
            elif low in MONTHS and (len(low) > 3 or raw[0].isupper()):
                toks.append(("month", MONTHS[low], None))
            elif low in DAYPARTS:
                toks.append(("daypart", DAYPARTS[low], None))
            elif low in STOPWORDS or low in CHANGE_CUES or low in NEGATIONS or len(low) < 2:
                toks.append(("", low, None))
            else:
                toks.append(("", low, stem(low)))
        elif kind == "time":
            toks.append(("time", _time_value(raw), None))
        elif kind == "version":
            toks.append(("version", raw.casefold().lstrip("v"), None))
        elif kind == "date":
            toks.append(("date", _day_value(raw), None))
        elif kind == "money":
            toks.append(("money", re.sub(r"[^\d.]", "", raw), None))
        elif kind is not None:
            toks.append((kind, raw.replace(",", "."), None))
    out: dict[tuple[str, str], set[str]] = {}
    for i, (kind, value, word) in enumerate(toks):
        if kind or word:  # a content word may be a name ("Kingston RAM"): looked up only for the names
            # the word right after it ("32 GB"), not one past a comma or a bracket ("Python 3.12 (merged …")
            unit = toks[i + 1][2] if i + 1 < len(toks) and not apart[i + 1] else None
            out.setdefault((kind or "name", word or value), set()).update([unit] if unit else [])
    return {k: frozenset(v) for k, v in out.items()}


_STARTS = r"(?:from|starting(?:\s+from)?|beginning|as\s+of|effective(?:\s+from)?)"
_LATER = re.compile(
    r"\b" + _STARTS + r"\s+(?:(?P<next>next\s+(?:week|month|year))|(?P<iso>\d{4}-\d{2}-\d{2})\b|"
    r"(?:(?P<day>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?)?(?P<month>" + _MON + r")(?:\s+(?P<year>(?:19|20)\d{2}))?\b)",
    re.IGNORECASE)


def takes_effect(clean: str, said: date) -> date | None:
    """The day a change a statement announces for later takes effect, read against the day it was said: "from
    next month" (the 1st of the next month), "starting next week" (its Monday), "from May" / "as of 1 June 2026"
    / "effective 2026-06-01"; None when it names no such start or the start is not after ``said``."""
    m = _LATER.search(clean)
    if m is None:
        return None
    start: date | None = None
    if m.group("next"):
        unit = m.group("next").split()[-1].casefold()
        if unit == "week":
            start = said + timedelta(days=7 - said.weekday())
        elif unit == "month":
            start = date(said.year + (said.month == 12), said.month % 12 + 1, 1)
        else:
            start = date(said.year + 1, 1, 1)
    elif m.group("iso"):
        try:
            start = date.fromisoformat(m.group("iso"))
        except ValueError:
            return None
    else:
        month = _MONTH_NUMBER.get(m.group("month").casefold()[:3], 0)
        if not month:
            return None
        year = int(m.group("year")) if m.group("year") else said.year  # "from March", said in April: since March
        try:
            start = date(year, month, int(m.group("day") or 1))
        except ValueError:
            return None
    return start if start > said else None


class Idf:
    """Inverse document frequency of content words over the workspace's statements."""

    def __init__(self, docs: Iterable[Iterable[str]]) -> None:
        counts: Counter[str] = Counter()
        n = 0
        for words in docs:
            counts.update(set(words))
            n += 1
        # At least 200 statements' worth: in a tiny workspace every word would look common.
        self.n = max(n, 200)
        self.counts = counts
        self.weights = {w: math.log(1.0 + self.n / c) for w, c in counts.items()}
        self.unseen = math.log(1.0 + self.n)

    def __call__(self, word: str) -> float:
        """``log(1 + N / df)``: a word in every statement weighs ~0.7, a word seen once ``log(1 + N)``."""
        return self.weights.get(word, self.unseen)

    def total(self, words: Iterable[str]) -> float:
        """The summed weight of some words."""
        get, unseen = self.weights.get, self.unseen
        return sum(get(w, unseen) for w in words)


def weighted_jaccard(a: frozenset[str], b: frozenset[str], idf: Idf) -> float:
    """Shared words' weight over all words' weight (IDF weights)."""
    if not a or not b:
        return 0.0
    shared = a & b
    if not shared:
        return 0.0
    inter = idf.total(shared)
    return inter / (idf.total(a) + idf.total(b) - inter)


def weighted_overlap(a: frozenset[str], b: frozenset[str], idf: Idf) -> tuple[float, float]:
    """(shared weight over the smaller side's weight, the shared weight itself)."""
    if not a or not b:
        return 0.0, 0.0
    inter = idf.total(a & b)
    small = min(idf.total(a), idf.total(b))
    return (inter / small if small else 0.0), inter


def dice(a: frozenset[str], b: frozenset[str]) -> float:
    """Dice coefficient of two character n-gram sets."""
    if not a or not b:
        return 0.0
    return 2 * len(a & b) / (len(a) + len(b))
