"""Citations as memdeck prints them, read back: the one parser both doors (CLI ``get``, MCP ``memory_get``) use.

memdeck prints a place in memory as

- ``memory/2026-10-23.md#L14-L16`` and ``memory/2026-10-23.md#L14`` (search results' ``citation``, ctrl+l,
  appends, review findings, the MCP prompt), and the same for sessions: ``sessions/<agent>/<id>.jsonl#L12-L30``
  or ``sessions/<file>#L12-L30``;
- ``memory/2026-10-23.md:14-16`` (``memdeck search``'s text output) and ``…:14``.

Any of them pasted back into ``get`` reads those lines. The range is part of the citation; an explicit
``from``/``lines`` given too wins (see :func:`parse_citation`). This module knows nothing about the file system:
which paths may be read is :func:`engine.workspace.resolve_memory_path`'s and the session source's business.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.errors import PathRefused

_HASH_RANGE = re.compile(r"#L(?P<start>\d{1,9})(?:-L?(?P<end>\d{1,9}))?$")
"""``#L14``, ``#L14-L16`` (and ``#L14-16``, as GitHub accepts it)."""
_HASH_ANY = re.compile(r"#L[^#/]*$")
"""Something that meant to be a line anchor, well-formed or not."""
_COLON_RANGE = re.compile(r":(?P<start>\d{1,9})(?:-(?P<end>\d{1,9}))?$")
"""``:14``, ``:14-16`` (``memdeck search`` prints ``path:start-end``)."""


@dataclass(frozen=True)
class Citation:
    """A path with the line range a citation or explicit ``from``/``lines`` named.

    Attributes:
        path: the path without its anchor (``memory/2026-10-23.md``, ``sessions/main/<id>.jsonl``).
        from_line: the first line (1-based), or None for the whole file.
        lines: how many lines, or None for the rest of the file.
        anchored: whether the text carried a line range of its own.
    """

    path: str
    from_line: int | None = None
    lines: int | None = None
    anchored: bool = False


def _range(text: str, start: str, end: str | None) -> tuple[int, int]:
    first = int(start)
    last = int(end) if end else first
    if first < 1:
        raise PathRefused(f"path refused: line numbers start at 1 ({text!r})")
    if last < first:
        raise PathRefused(f"path refused: the line range ends before it starts ({text!r})")
    return first, last - first + 1


def parse_citation(raw: str, from_line: int | None = None, lines: int | None = None) -> Citation:
    """Split a citation into its path and line range.

    Accepted: ``path#L14``, ``path#L14-L16``, ``path#L14-16``, ``path:14``, ``path:14-16`` (the colon forms only
    after a ``.md`` / ``.jsonl`` name or on a ``sessions/`` path, where a colon cannot be part of a name memdeck
    lists), and a bare path. Explicit ``from_line``/``lines`` win over the citation's range: ``from_line``
    alone reads from there to the end, ``lines`` alone counts from the cited first line.

    Raises:
        PathRefused: a line anchor that is not a range (``#L0``, ``#L16-L14``, ``#Lx``).
    """
    text = (raw or "").strip()
    match = _HASH_RANGE.search(text)
    if match is None and _HASH_ANY.search(text) and not text.endswith(".md"):
        raise PathRefused(f"path refused: a line anchor is #L<first> or #L<first>-L<last> ({text!r})")
    if match is None:
        colon = _COLON_RANGE.search(text)
        head = text[: colon.start()] if colon is not None else ""
        if colon is not None and (head.endswith((".md", ".jsonl")) or head.startswith("sessions/")):
            match = colon
    if match is None:
        return Citation(text, from_line, lines)
    path = text[: match.start()]
    first, count = _range(text, match.group("start"), match.group("end"))
    if from_line is not None:
        return Citation(path, from_line, lines, anchored=True)
    return Citation(path, first, lines if lines is not None else count, anchored=True)
