"""Display-safe text: no control, bidi or surrogate character survives, and escaping twice changes nothing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.display import has_control_chars, safe_name, safe_text

UNSAFE = {*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F, *range(0x80, 0xA0), *range(0x202A, 0x202F),
          *range(0x2066, 0x206A), *range(0xD800, 0xE000)}
NAME_UNSAFE = UNSAFE | {0x09, 0x0A, 0x2028, 0x2029}

# Text rich in the characters that matter: controls, C1, bidi, surrogates, plus ordinary text.
nasty = st.text(alphabet=st.one_of(
    st.characters(min_codepoint=0, max_codepoint=0xA0),
    st.sampled_from(["\u202a", "\u202e", "\u2066", "\u2069", "\u2028", "\u2029", "\ud800", "\udc9b", "\udfff",
                     "\\", "x", "1", "b", "[", "]", ";", "é", "中", "\U0001f600"]),
    st.characters(codec=None),
))


@given(nasty)
def test_safe_text_leaves_no_unsafe_code_point_and_is_idempotent(text: str) -> None:
    out = safe_text(text)
    assert not {ord(ch) for ch in out} & UNSAFE
    assert safe_text(out) == out
    out.encode("utf-8")  # printable on any UTF-8 terminal: no lone surrogate left
    assert out.count("\n") == text.count("\n") and out.count("\t") == text.count("\t")


@given(nasty)
def test_safe_name_is_one_line_and_idempotent(text: str) -> None:
    out = safe_name(text)
    assert not {ord(ch) for ch in out} & NAME_UNSAFE
    assert len(out.splitlines()) <= 1
    assert safe_name(out) == out and not has_control_chars(out)
    assert has_control_chars(text) == (out != text)


@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs")).filter(
    lambda ch: ord(ch) not in NAME_UNSAFE)))
def test_safe_text_keeps_ordinary_text_unchanged(text: str) -> None:
    assert safe_text(text) == text
    assert safe_name(text) == text and not has_control_chars(text)


@pytest.mark.parametrize(("text", "shown"), [
    ("plain", "plain"),
    ("two\nlines\tand a tab", "two\nlines\tand a tab"),
    ("\x1b]0;PWNED\x07", "\\x1b]0;PWNED\\x07"),  # window title
    ("\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H"),  # clear screen, cursor home
    ("\x1b]52;c;cm0gLXJmIH4=\x1b\\", "\\x1b]52;c;cm0gLXJmIH4=\\x1b\\"),  # OSC 52: set the clipboard
    ("\x9b2J", "\\x9b2J"),  # 8-bit CSI
    ("\x9d0;t\x9c", "\\x9d0;t\\x9c"),  # 8-bit OSC … ST
    ("a\rb", "a\\rb"),  # carriage return overwrites the line
    ("\x00\x08\x0b\x0c\x7f", "\\x00\\x08\\x0b\\x0c\\x7f"),
    ("\x85", "\\x85"),  # NEL
    ("\u202eevil\u202c", "\\u202eevil\\u202c"),  # right-to-left override ("Trojan Source")
    ("\u2066\u2067\u2068\u2069\u202a\u202b\u202d", "\\u2066\\u2067\\u2068\\u2069\\u202a\\u202b\\u202d"),
    ("bad\udc9bname", "bad\\udc9bname"),  # an undecodable byte as os.fsdecode gives it
    ("café 中文 🙂 \u200d", "café 中文 🙂 \u200d"),
    ("\\x1b is literal text", "\\x1b is literal text"),
])
def test_exact_escapes(text: str, shown: str) -> None:
    assert safe_text(text) == shown


@pytest.mark.parametrize(("name", "shown"), [
    ("memory/new\nline.md", "memory/new\\nline.md"),
    ("memory/tab\there.md", "memory/tab\\there.md"),
    ("memory/\u2028sep.md", "memory/\\u2028sep.md"),
    ("memory/\x1b[31mred.md", "memory/\\x1b[31mred.md"),
    ("memory/2026-01-02.md", "memory/2026-01-02.md"),
])
def test_safe_name(name: str, shown: str) -> None:
    assert safe_name(name) == shown
    assert safe_text(name, keep_newlines=False) == shown
    assert has_control_chars(name) == (name != shown)


def test_nothing_to_escape_returns_the_same_object() -> None:
    text = "a long ordinary note\n" * 1000
    assert safe_text(text) is text


def test_every_unsafe_code_point_is_escaped_and_non_printable() -> None:
    named = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}
    for cp in sorted(NAME_UNSAFE):
        expected = named.get(cp) or (f"\\x{cp:02x}" if cp < 0x100 else f"\\u{cp:04x}")
        assert not chr(cp).isprintable()  # the fast path (isprintable → nothing to escape) is sound
        assert safe_name(chr(cp)) == expected
        assert safe_text(chr(cp)) == (chr(cp) if cp in (0x09, 0x0A, 0x2028, 0x2029) else expected)


def test_one_byte_size_format_everywhere() -> None:
    from engine.api import byte_size as through_the_api
    from engine.display import byte_limit, byte_size
    from engine.workspace import oversize_issue

    assert through_the_api is byte_size  # the TUI's index line and big-file banner use this one
    assert [byte_size(n) for n in (0, 1023, 1024, 2400, 30 * 2**20, 3 * 2**29, 2**50)] == [
        "0 B", "1023 B", "1.0 KB", "2.3 KB", "30.0 MB", "1.5 GB", "1048576.0 GB"]
    assert [byte_limit(n) for n in (2048, 4 * 2**20, 3 * 2**19)] == ["2 KB", "4 MB", "1.5 MB"]
    # The scan's oversize report reads like the status line (it said "0.5 MB" where status said "512.0 KB").
    assert oversize_issue("memory/a.md", 512 * 1024, 256 * 1024) == (
        "memory/a.md: 512.0 KB, over max_file_bytes 256 KB: not indexed")
