"""Building safe FTS5 queries from any text, and the text transform that makes CJK searchable."""

from __future__ import annotations

import re

from engine.index.chunking import has_cjk

MAX_TERMS = 48

# English stop words: function words that match nearly every chunk and only add noise to BM25.
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are aren't as at be because been before being below
    between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each
    few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers
    herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more
    most mustn't my myself no nor not of off on once only or other ought our ours ourselves out over own same
    shan't she she'd she'll she's should shouldn't so some such than that that's the their theirs them
    themselves then there there's these they they'd they'll they're they've this those through to too under
    until up very was wasn't we we'd we'll we're we've were weren't what what's when when's where where's which
    while who who's whom why why's with won't would wouldn't you you'd you'll you're you've your yours yourself
    yourselves did does s t d ll m o re ve y ever also just like get got yes""".split()
)

_WORD_RE = re.compile(r"[^\W_]+|_+", re.UNICODE)
_CJK_RUN_RE = re.compile(
    "[\u2e80-\u9fff\ua000-\ua4ff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f\u3040-\u30ff\uff66-\uff9f]+"
)


def cjk_bigrams(run: str) -> list[str]:
    """Overlapping character bigrams of a CJK run (a single character stays itself)."""
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def fts_text(text: str) -> str:
    """The text as stored in the FTS table: CJK runs become space-separated bigrams.

    FTS5's unicode61 tokenizer would make a whole run of Chinese characters one token, so a query for
    two of its characters could never match.
    """
    if not has_cjk(text):
        return text
    return _CJK_RUN_RE.sub(lambda m: " " + " ".join(cjk_bigrams(m.group(0))) + " ", text)


def _split_cjk(token: str) -> list[str]:
    """Split a token at CJK runs: Latin parts stay whole, CJK runs become bigrams."""
    if not has_cjk(token):
        return [token]
    out: list[str] = []
    pos = 0
    for m in _CJK_RUN_RE.finditer(token):
        if m.start() > pos:
            out.append(token[pos : m.start()])
        out.extend(cjk_bigrams(m.group(0)))
        pos = m.end()
    if pos < len(token):
        out.append(token[pos:])
    return out


def _keep(term: str) -> bool:
    if term in STOP_WORDS:
        return False
    if term.isascii() and len(term) == 1 and not term.isdigit():
        return False
    return term.strip("_") != ""


def query_terms(text: str) -> list[str]:
    """The distinct search terms of a query, lowercased, stop words dropped, CJK as bigrams.

    Used both for the FTS query and for highlighting matches in snippets.
    """
    terms: list[str] = []
    seen: set[str] = set()
    for raw in _WORD_RE.findall(text.lower()):
        for term in _split_cjk(raw):
            if term and term not in seen and _keep(term):
                seen.add(term)
                terms.append(term)
            if len(terms) >= MAX_TERMS:
                return terms
    return terms


def build_fts_query(text: str, skip: frozenset[str] = frozenset()) -> str | None:
    """Turn any user text into a valid FTS5 MATCH expression, or None when it has no searchable term.

    Terms are quoted (so ``NEAR(``, ``*``, ``-``, ``:`` and quotes are plain text) and OR-joined, so a natural
    question does not need every word to match; BM25 ranks chunks that match more and rarer terms higher.
    Words written with inner punctuation (``HERON-112``, ``20.04``) also add the exact phrase. Terms in
    ``skip`` are left out (a term in most chunks ranks nothing but costs the most to match).
    """
    parts: list[str] = []
    seen: set[str] = set()
    for term in query_terms(text):
        seen.add(term)
        if term not in skip:
            parts.append(f'"{term}"')
    for word in text.lower().split():
        pieces = [p for raw in _WORD_RE.findall(word) for p in _split_cjk(raw) if p.strip("_")]
        if len(pieces) > 1 and not has_cjk(word):
            phrase = " ".join(pieces)
            if phrase not in seen and len(parts) < MAX_TERMS * 2:
                seen.add(phrase)
                parts.append(f'"{phrase}"')
    if not parts:
        return None
    return " OR ".join(parts)
