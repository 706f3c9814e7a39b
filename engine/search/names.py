"""The workspace user's own name, as the curated files write it ("- **Name:** Aidan Gorny", "What to call them:
Jay", "Preferred form of address: Adrian"): a query word that says who is asked about, not what.

In a workspace about one person, "which town does Adrian live in" shares "Adrian" with every line that names
him, and most with the one-line entry that holds nothing else ("What to call them: Adrian"): BM25 ranks that
line first for every question that names the user. The search reads the name here (its own reading, not the
review's) and :func:`engine.search.pipeline.parse` leaves it out of the keyword query when other terms remain.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from engine.index.chunking import has_cjk
from engine.index.fts import split_cjk

# A label line of a curated file that gives the user's name: "Name:", "What to call them:", "Preferred form of
# address:", "Call me:", "Nickname:", "Preferred name:", German "Anrede:"/"Rufname:", Chinese "名字"/"姓名"/"称呼".
_ADDRESS = (r"what to call (?:them|him|her|me)|(?:preferred )?form of address|call (?:me|them|him|her)"
            r"|preferred name|nick ?name|anrede|rufname|称呼|昵称")
_NAME = r"(?:full |first )?name|vorname|名字|姓名"


def _label(words: str) -> re.Pattern[str]:
    return re.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*|__)?\s*(?:" + words + r")"
                      r"\s*(?:\*\*|__)?\s*[:：]\s*(?:\*\*|__)?\s*(?P<value>.*)$", re.IGNORECASE)


_ADDRESS_LABEL = _label(_ADDRESS)  # MEMORY.md also names projects, tools and people: only how to address the user
_NAME_LABEL = _label(_NAME)  # USER.md is about the user: its "Name:" is theirs (its first word: a surname also
# names the family's domain or Wi-Fi, "keller.dev", and is rarely how a question names the user)
_VALUE_END = re.compile(r"[(\[{,;/|—–。，；]|\.\s| - | or | oder |或")
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
MAX_NAME_WORDS = 4  # "Aidan Gorny", "Jay He": a longer value is a sentence, not a name


def names_in(texts: Iterable[tuple[str, str]]) -> frozenset[str]:
    """The lowercased words of the user's name on the name label lines of ``texts`` ((path, text) of curated
    files: the address labels ("What to call them:") of any, and the first word of a ``USER.md`` "Name:"; a
    value ends at a bracket, a comma or a sentence's end, and one of more than four words is no name), with the possessive
    ``name + s`` of a Latin name ("Adrians Kinder"); CJK names as the search's bigrams."""
    out: set[str] = set()
    for path, text in texts:
        user = path.casefold() == "user.md"
        for line in text.split("\n"):
            m = _ADDRESS_LABEL.match(line)
            given = m is None and user and (m := _NAME_LABEL.match(line)) is not None
            if m is None:
                continue
            value = _VALUE_END.split(m.group("value").replace("*", " ").replace("_", " "), maxsplit=1)[0]
            words = _WORD.findall(value)
            if not words or len(words) > MAX_NAME_WORDS:
                continue
            if given:
                words = words[:1]
            for word in words:
                low = word.lower()
                if has_cjk(low):
                    out.update(p for p in split_cjk(low) if has_cjk(p))
                elif len(low) >= 2:
                    out.update((low, low + "s"))
    return frozenset(out)


def without_names(terms: tuple[str, ...], names: frozenset[str]) -> tuple[str, ...]:
    """``terms`` without the user's name, unless nothing else would be left (a query that is only the name)."""
    if not names:
        return terms
    kept = tuple(t for t in terms if t not in names)
    return kept if kept else terms
