"""Words and slugs: the English function words, a word of text, and the slugs session notes are named by
(cleaned as OpenClaw cleans them, or made from a conversation's keywords)."""

from __future__ import annotations

import re
from collections import Counter

from engine.lexicon import FUNCTION_WORDS as FUNCTION_WORDS  # drafting reads it here
from engine.lexicon import SLUG_STOP_WORDS

SLUG_MAX_CHARS = 30

_STOP_WORDS = SLUG_STOP_WORDS  # engine.lexicon: the function words plus chat filler

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
