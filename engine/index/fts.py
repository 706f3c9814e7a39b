"""The FTS side of text: the transform that makes CJK searchable (the MATCH expression of a query is built
by the search layer, :func:`engine.search.query.build_fts_query`)."""

from __future__ import annotations

import re

from engine.index.chunking import has_cjk
from engine.lexicon import CJK_RUN_RE

SPEAKER_LABEL_RE = re.compile(r"^(?:User|Assistant): ", re.MULTILINE)
"""The speaker label that starts each line of a transcript's search text
(:func:`engine.sessions.reader.session_search_text`): shown in snippets, never a word a query matches."""


def cjk_bigrams(run: str) -> list[str]:
    """Overlapping character bigrams of a CJK run (a single character stays itself)."""
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def fts_text(text: str, source: str = "memory") -> str:
    """The text as stored in the FTS table: CJK runs become space-separated bigrams, and a transcript chunk
    (``source`` other than ``"memory"``) loses its lines' ``User: ``/``Assistant: `` labels.

    FTS5's unicode61 tokenizer would make a whole run of Chinese characters one token, so a query for
    two of its characters could never match. The labels are memdeck's, not words anyone said: indexed, every
    transcript chunk matched "user" or "assistant", and "what did the user approve" ranked a chunk that said
    neither "approve" nor anything like it first at 1.00.
    """
    if source != "memory":
        text = SPEAKER_LABEL_RE.sub("", text)
    if not has_cjk(text):
        return text
    return CJK_RUN_RE.sub(lambda m: " " + " ".join(cjk_bigrams(m.group(0))) + " ", text)


def split_cjk(token: str) -> list[str]:
    """Split a token at CJK runs: Latin parts stay whole, CJK runs become bigrams, as :func:`fts_text` stores them."""
    if not has_cjk(token):
        return [token]
    out: list[str] = []
    pos = 0
    for m in CJK_RUN_RE.finditer(token):
        if m.start() > pos:
            out.append(token[pos : m.start()])
        out.extend(cjk_bigrams(m.group(0)))
        pos = m.end()
    if pos < len(token):
        out.append(token[pos:])
    return out

