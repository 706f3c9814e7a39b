"""Words and slugs: the English function words, a word of text, and the slugs session notes are named by
(cleaned as OpenClaw cleans them, or made from a conversation's keywords)."""

from __future__ import annotations

import re
from collections import Counter

SLUG_MAX_CHARS = 30

_STOP_WORDS_TEXT = """
    a about above after again against all also am an and any are aren't as at be because been before
    being below between both but by can can't cannot could couldn't did didn't do does doesn't doing
    don't down during each few for from further had hadn't has hasn't have haven't having he he'd he'll
    he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't
    it it's its itself let's me more most mustn't my myself no nor not of off on once only or other
    ought our ours ourselves out over own same shan't she she'd she'll she's should shouldn't so some
    such than that that's the their theirs them themselves then there there's these they they'd
    they'll they're they've this those through to too under until up very was wasn't we we'd we'll
    we're we've were weren't what what's when when's where where's which while who who's whom why
    why's will with won't would wouldn't you you'd you'll you're you've your yours yourself yourselves
"""
_SLUG_EXTRA_TEXT = """
    just like get got want need know think make sure yes yeah yep nope okay ok thanks thank please hi
    hello hey bye cool great nice good well really actually maybe also one two lol haha sorry right
    user assistant can could would should shall may might must let lets gonna wanna tell say said see
    use used using go going went come back now today tomorrow yesterday thing things something
    anything everything way lot bit much many still even already yet again here there done help
    talk talked talking ask asked asking says told wanted needed prefer prefers preferred love hate
"""
FUNCTION_WORDS = frozenset(_STOP_WORDS_TEXT.split())
"""English function words: they say nothing about what a text is about."""
_STOP_WORDS = FUNCTION_WORDS | frozenset(_SLUG_EXTRA_TEXT.split())

WORD = re.compile(r"[a-z0-9][a-z0-9'-]*[a-z0-9]|[a-z0-9]")
"""A word of lower-cased text (inner apostrophes and hyphens kept)."""


def clean_slug(text: str) -> str:
    """Clean text into a file-name slug as OpenClaw does.

    Lower-case, ``[^a-z0-9-]`` → ``-``, runs of ``-`` collapsed, leading/trailing ``-`` removed,
    cut to 30 characters (at a ``-`` when possible).
    """
    slug = re.sub(r"[^a-z0-9-]", "-", text.strip().lower())
    slug = re.sub(r"-{2,}", "-", slug).strip("-")
    if len(slug) > SLUG_MAX_CHARS:
        cut = slug[:SLUG_MAX_CHARS]
        slug = cut.rsplit("-", 1)[0] if "-" in cut and slug[SLUG_MAX_CHARS] != "-" else cut
        slug = slug.strip("-")
    return slug


def keyword_slug(text: str, words: int = 3) -> str:
    """A slug from the most frequent distinct non-stop-words of ``text`` (ties: first seen first)."""
    counts: Counter[str] = Counter()
    first_seen: dict[str, int] = {}
    for index, match in enumerate(WORD.finditer(text.lower())):
        word = match.group(0).strip("'-")
        if len(word) < 3 or word in _STOP_WORDS or word.isdigit() or "'" in word:
            continue
        counts[word] += 1
        first_seen.setdefault(word, index)
    ranked = sorted(counts, key=lambda word: (-counts[word], first_seen[word]))
    return clean_slug("-".join(ranked[:words]))
