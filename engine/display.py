"""Display-safe text: control, bidi and surrogate characters shown as visible escapes, never sent to a terminal."""

from __future__ import annotations

import functools
import re

# THE rule, in one place: C0 controls except tab and newline, DEL, C1 controls (U+0080–U+009F: 8-bit CSI,
# OSC, DCS, ST, NEL) and the bidi embeddings/overrides/isolates that reorder what a terminal shows ("Trojan
# Source"). Lone surrogates (U+D800–U+DFFF) join them: they are what ``os.fsdecode`` makes of a file name's
# undecodable bytes, printing one raises UnicodeEncodeError, and under ``surrogateescape`` U+DC9B would go
# out as the raw byte 0x9B, an 8-bit CSI.
_TEXT_RANGES = "\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_NAME_RANGES = _TEXT_RANGES + "\t\n\u2028\u2029"  # names also: one name, one line, for any line splitter

_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}  # the escapes people read at a glance


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    cp = ord(ch)
    return _NAMED.get(ch) or (f"\\x{cp:02x}" if cp < 0x100 else f"\\u{cp:04x}")


@functools.cache
def _unsafe(names: bool) -> re.Pattern[str]:
    # Compiled on first need (~1 ms): most strings are printable and never get here.
    return re.compile(f"[{_NAME_RANGES if names else _TEXT_RANGES}]")


def safe_text(s: str, keep_newlines: bool = True) -> str:
    """``s`` made safe to show on a terminal or in a TUI: every unsafe character becomes a visible escape.

    Unsafe: C0 controls except newline and tab, DEL, C1 controls U+0080–U+009F, the bidi overrides and
    isolates U+202A–U+202E and U+2066–U+2069, and lone surrogates. ``ESC`` becomes ``\\x1b``, U+202E
    ``\\u202e``. Every introducer and terminator of an escape sequence (ESC, 8-bit CSI/OSC/DCS, BEL, ST) is
    itself escaped and nothing is dropped, so an escape sequence (``ESC]52;…BEL`` clipboard writes, ``ESC[2J``
    screen clears) shows whole as inert text and no fragment of one can reach the terminal. The result
    contains no unsafe character, so ``safe_text`` is idempotent. Memory files are data: they are shown,
    never executed.

    Args:
        s: any text.
        keep_newlines: keep ``\\n`` and ``\\t`` as they are (text); False escapes them too (see
            :func:`safe_name`).
    """
    if s.isprintable():  # every unsafe character is Cc, Cf, Cs, Zl or Zp: none is printable
        return s
    unsafe = _unsafe(not keep_newlines)
    if unsafe.search(s) is None:  # text with newlines: nothing to escape, no copy
        return s
    return unsafe.sub(_escape, s)


def safe_name(s: str) -> str:
    """A file name, title or key made safe to show on one line: :func:`safe_text` that also escapes
    ``\\n``, ``\\t`` and the Unicode line/paragraph separators U+2028/U+2029.

    ``memory/new⏎line.md`` (a real newline) shows as ``memory/new\\nline.md``: one name, one output line.
    """
    return safe_text(s, keep_newlines=False)


SEPARATOR_GLYPHS = {"\u2028": "\u21b5", "\u2029": "\u204b", "\ufeff": "\u237d"}
"""How U+2028 LINE SEPARATOR (↵), U+2029 PARAGRAPH SEPARATOR (⁋) and U+FEFF inside the text (⍽: ZERO WIDTH NO-BREAK
SPACE, a byte-order mark past the start) are shown inside a line: one narrow cell each, where a terminal draws
nothing (they are zero-width) and the text either side would seem glued together, the cursor seem to skip. The
one table: the editor, search snippets and ``memdeck get`` show the same glyphs."""
_SHOW_SEPARATORS = str.maketrans(SEPARATOR_GLYPHS)
_SEPARATORS = re.compile("[" + "".join(SEPARATOR_GLYPHS) + "]")


def show_separators(text: str) -> str:
    """``text`` with U+2028/U+2029/U+FEFF drawn as :data:`SEPARATOR_GLYPHS` (same length: offsets into it hold).

    A display mapping for the doors (the CLI's text output, the TUI's snippets), never applied to data: a
    note keeps its separators, ``--json`` and ``--raw`` give them as they are.
    """
    return text.translate(_SHOW_SEPARATORS) if _SEPARATORS.search(text) else text


def has_control_chars(name: str) -> bool:
    """True when :func:`safe_name` would change ``name`` (a control, bidi, surrogate or line-break character).

    For skipping and reporting file names that cannot be shown or cited as they are.
    """
    return not name.isprintable() and _unsafe(True).search(name) is not None


def odd_name_issue(rel: str) -> str:
    """Why a file name :func:`has_control_chars` is reported and not indexed, in the words a user can act on: a
    name that is not valid UTF-8 (``os.fsdecode`` keeps its bytes as lone surrogates) is not a name with control
    characters."""
    if any("\ud800" <= ch <= "\udfff" for ch in rel):
        return f"{rel}: file name is not valid UTF-8 (its odd bytes shown escaped); rename it to index it"
    return f"{rel}: file name has control or line-break characters; not indexed"


def plural(count: int, noun: str, plural_form: str | None = None, *, grouped: bool = False) -> str:
    """``count`` and ``noun`` in the right number: ``1 file``, ``2 files``, ``0 files``; ``plural_form`` for
    irregular nouns (``plural(2, "entry", "entries")``, ``plural(1, "candidate memory", "candidate memories")``);
    ``grouped`` writes thousands apart (``12,345 lines``).

    The one plural rule for what memdeck prints, so no message says "1 bad lines".
    """
    number = f"{count:,}" if grouped else str(count)
    return f"{number} {noun if count == 1 else plural_form or noun + 's'}"


def byte_size(n: int) -> str:
    """A measured size for people: ``512 B``, ``2.3 KB``, ``30.0 MB``, ``1.5 GB`` (1 KB = 1,024 bytes).

    The one byte-size format: the CLI's status, the doctor, the TUI's index line and big-file banner, and the
    scan's oversize report all show sizes through it.
    """
    value = float(n)
    for unit in ("B", "KB", "MB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


def byte_limit(n: int) -> str:
    """A configured limit, as few digits as it needs: ``4 MB``, ``2 KB``, ``1.5 MB`` (1 KB = 1,024 bytes)."""
    mib = n / (1024 * 1024)
    return f"{mib:g} MB" if mib >= 1 else f"{n / 1024:g} KB"
