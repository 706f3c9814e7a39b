"""The FTS side of text: the transform that makes CJK searchable, and the safe MATCH expression of a query."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from engine.index.chunking import has_cjk

if TYPE_CHECKING:
    from engine.search.query import ParsedQuery

# At most this many words in a MATCH expression (the query's terms first, then its phrases): twice the
# query's MAX_TERMS.
MAX_PARTS = 96

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


def split_cjk(token: str) -> list[str]:
    """Split a token at CJK runs: Latin parts stay whole, CJK runs become bigrams, as :func:`fts_text` stores them."""
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


def build_fts_query(query: ParsedQuery | str, skip: frozenset[str] = frozenset()) -> str | None:
    """The FTS5 MATCH expression of a query, or None when it has no searchable term.

    Terms are quoted (so ``NEAR(``, ``*``, ``-``, ``:`` and quotes are plain text) and OR-joined, so a natural
    question does not need every word to match; BM25 ranks chunks that match more and rarer terms higher.
    Words written with inner punctuation (``HERON-112``, ``20.04``) also add the exact phrase. Terms in
    ``skip`` are left out (a term in most chunks ranks nothing but costs the most to match).
    """
    if isinstance(query, str):
        # Imported here, not at the top: the query parser builds on split_cjk above.
        from engine.search.query import parse_query

        query = parse_query(query)
    from_terms = [f'"{term}"' for term in query.terms if term not in skip]
    parts = from_terms + [f'"{p}"' for p in query.phrases[: max(0, MAX_PARTS - len(from_terms))]]
    if not parts:
        return None
    return " OR ".join(parts)
