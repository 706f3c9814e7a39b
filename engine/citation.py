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

MAX_LINE = 999_999_999
"""The highest line number a citation may name (nine digits: no Markdown note or transcript comes near it)."""
_HASH_RANGE = re.compile(r"#[Ll](?P<start>[0-9]+)(?:-[Ll]?(?P<end>[0-9]+))?$")
"""``#L14``, ``#L14-L16`` (and ``#L14-16``, as GitHub accepts it; ``#l14``, as a hand types it)."""
_COLON_RANGE = re.compile(r":(?P<start>[0-9]+)(?:-(?P<end>[0-9]+))?$")
"""``:14``, ``:14-16`` (``memdeck search`` prints ``path:start-end``)."""
_NAMED = re.compile(r"^(?P<path>.*\.(?:md|jsonl)) *(?P<tail>[#:].*)$", re.DOTALL)
"""A Markdown or transcript name followed by something anchor-like (``#…`` or ``:…``), well-formed or not: the
last such name, so ``memory/odd#L3.md#L2`` keeps the file ``odd#L3.md``."""
_SESSION_TAIL = re.compile(r"^(?P<path>sessions/[^#]*?) *(?P<tail>#.*|:[0-9]+(?:-[0-9]+)?)$", re.DOTALL)
"""A session citation's anchor where its file name has no ``.jsonl`` end (``….jsonl.reset.<stamp>#L3``): any
``#…`` (checked), or a well-formed ``:N``/``:N-M`` at the very end."""
_ANCHOR_FORMS = "#L<first>, #L<first>-L<last>, :<first> or :<first>-<last>"


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
    if max(len(start), len(end or "")) > len(str(MAX_LINE)) or max(int(start), int(end or 0)) > MAX_LINE:
        raise PathRefused(f"path refused: line numbers go up to {MAX_LINE:,} ({text!r})")
    first = int(start)
    last = int(end) if end else first
    if first < 1:
        raise PathRefused(f"path refused: line numbers start at 1 ({text!r})")
    if last < first:
        raise PathRefused(f"path refused: the line range ends before it starts ({text!r})")
    return first, last - first + 1


def _split(text: str) -> tuple[str, re.Match[str] | None]:
    """``(path, range match)`` of a citation; the match is None for a bare path.

    Raises:
        PathRefused: a ``.md`` / ``.jsonl`` name (or a ``sessions/`` path) followed by ``#…`` or ``:…`` that is none
            of the range forms (``#L0`` passes here: :func:`_range` says why it is wrong).
    """
    if text.endswith((".md", ".jsonl")):
        return text, None  # a name that ends like a note is a name (``memory/odd#L3.md``), never an anchor
    named = _NAMED.match(text) or (_SESSION_TAIL.match(text) if text.startswith("sessions/") else None)
    if named is None:
        return text, None
    tail = named.group("tail")
    match = (_HASH_RANGE if tail.startswith("#") else _COLON_RANGE).fullmatch(tail)
    if match is None:
        raise PathRefused(f"path refused: a line anchor is {_ANCHOR_FORMS} ({text!r})")
    return named.group("path").strip(), match


def parse_citation(raw: str, from_line: int | None = None, lines: int | None = None) -> Citation:
    """Split a citation into its path and line range.

    Accepted: ``path#L14``, ``path#L14-L16``, ``path#L14-16`` (``#l14`` too), ``path:14``, ``path:14-16``, with or
    without spaces before the anchor, after a ``.md`` / ``.jsonl`` name or on a ``sessions/`` path (where a colon
    or ``#`` cannot be part of a name memdeck lists), and a bare path. Explicit ``from_line``/``lines`` win over
    the citation's range: ``from_line`` alone reads from there to the end, ``lines`` alone counts from the cited
    first line.

    Raises:
        PathRefused: a line anchor that is not a range (``#L0``, ``#L16-L14``, ``#Lx``, ``:3:5``, ``#L3-``, a line
            number over :data:`MAX_LINE`); the message lists the forms.
    """
    text = (raw or "").strip()
    path, match = _split(text)
    if match is None:
        return Citation(path, from_line, lines)
    first, count = _range(text, match.group("start"), match.group("end"))
    if from_line is not None:
        return Citation(path, from_line, lines, anchored=True)
    return Citation(path, first, lines if lines is not None else count, anchored=True)
