"""Chunking: line ranges cover every non-blank line, chunk text equals its lines, fences stay whole."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from engine.index.chunking import chunk_markdown, plan_windows, weighted_len


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def _daily(n: int, width: int = 90) -> str:
    return "\n".join(f"- {i:03d} " + ("note " * (width // 5))[: width - 6] for i in range(n)) + "\n"


FENCED = (
    "# Setup\n\nSome intro text here.\n\n```sql\n"
    + "\n".join(f"SELECT {i} FROM t WHERE x = {i};" for i in range(30))
    + "\n\n-- still code\n```\n\nAfter the fence.\n"
)

CASES = {
    "empty": "",
    "one-line": "hello",
    "trailing-newline": "a\nb\n",
    "blank-lines-only": "\n\n\n",
    "daily": _daily(80),
    "headings": "\n".join(f"## Section {i}\n\n" + ("word " * 70 + "\n") * 3 for i in range(8)),
    "fenced": FENCED * 4,
    "front-matter": "---\ntitle: x\ntags: [a, b]\n---\n\n# Title\n\n" + _daily(40),
    "long-line": "x" * 9000 + "\nshort\n",
    "cjk": "数据库迁移计划。" * 400 + "\nEnglish line\n",
    "unclosed-fence": "intro\n\n```\n" + "code line\n" * 300,
    "crlf-free-mixed": "# T\n\n" + "\n\n".join("para " * 50 for _ in range(20)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_ranges_cover_every_nonblank_line_and_text_matches(name: str) -> None:
    text = CASES[name]
    lines = _lines(text)
    chunks = chunk_markdown(text)
    covered: set[int] = set()
    for c in chunks:
        assert 1 <= c.start_line <= c.end_line <= max(1, len(lines))
        covered.update(range(c.start_line, c.end_line + 1))
        if c.start_line == c.end_line and weighted_len(lines[c.start_line - 1]) > 1600:
            assert c.text in lines[c.start_line - 1]  # a hard-split piece of a long line
        else:
            assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line])
        assert c.text.strip()
    for i, line in enumerate(lines, 1):
        if line.strip():
            assert i in covered, f"line {i} not in any chunk"


@pytest.mark.parametrize("name", sorted(CASES))
def test_chunks_respect_budget(name: str) -> None:
    for c in chunk_markdown(CASES[name]):
        assert weighted_len(c.text) <= 1600 + 1


def test_fence_never_split_when_it_fits() -> None:
    text = FENCED * 4
    lines = _lines(text)
    fences: list[tuple[int, int]] = []
    start = None
    for i, line in enumerate(lines, 1):
        if line.startswith("```"):
            if start is None:
                start = i
            else:
                fences.append((start, i))
                start = None
    assert fences
    for c in chunk_markdown(text):
        for a, b in fences:
            inside_start = a < c.start_line <= b
            inside_end = a <= c.end_line < b
            assert not inside_start and not inside_end, f"chunk {c.start_line}-{c.end_line} splits fence {a}-{b}"


def test_heading_starts_its_chunk() -> None:
    text = CASES["headings"]
    chunks = chunk_markdown(text)
    heads = [i for i, line in enumerate(_lines(text), 1) if line.startswith("## ")]
    starts = {c.start_line for c in chunks}
    # Sections are ~1,000 chars: each heading begins a chunk and no chunk ends on a heading.
    assert set(heads) <= starts
    for c in chunks:
        assert not _lines(text)[c.end_line - 1].startswith("#")


def test_overlap_repeats_trailing_lines() -> None:
    chunks = chunk_markdown(_daily(80))
    assert len(chunks) > 2
    for a, b in itertools.pairwise(chunks):
        assert b.start_line <= a.end_line + 1
        assert b.start_line > a.start_line


def test_deterministic() -> None:
    assert chunk_markdown(FENCED * 3) == chunk_markdown(FENCED * 3)


def test_cjk_weighs_more_than_ascii() -> None:
    assert weighted_len("数据库") == 12
    assert weighted_len("abc") == 3
    # 3,200 CJK characters weigh 12,800: many more chunks than the same count of ASCII letters.
    assert len(chunk_markdown("数据库迁移计划。" * 400)) > len(chunk_markdown("abcdefgh" * 400))


def _word_counter(texts: list[str] | tuple[str, ...]) -> list[int]:
    return [len(re.findall(r"\S+", t)) for t in texts]


@pytest.mark.parametrize("n_lines,words", [(3, 5), (40, 12), (10, 300)])
def test_windows_cover_every_line_and_fit(n_lines: int, words: int) -> None:
    text = "\n".join(" ".join(f"w{i}_{j}" for j in range(words)) for i in range(n_lines))
    windows = plan_windows(text, _word_counter, max_tokens=64)
    for w in windows:
        assert _word_counter([w.text])[0] <= 64
    covered = {i for w in windows for i in range(w.first, w.last + 1)}
    assert covered == set(range(n_lines))
    all_words = set(text.split())
    seen = {word for w in windows for word in w.text.split()}
    assert all_words == seen, "every word is embedded in some window"


def test_single_window_when_it_fits() -> None:
    windows = plan_windows("a b c\nd e", _word_counter, max_tokens=64)
    assert len(windows) == 1 and windows[0].text == "a b c\nd e"


# -- curated files: one entry a chunk (OpenClaw 2026.9.6's perEntry chunking of MEMORY.md / USER.md) ------------
CURATED = """# MEMORY.md — long-term memory

## Infrastructure
- Backups: restic to the storage box every night at 02:30.
- Monitoring: Uptime Kuma pings the blog
  every 60 seconds and alerts via ntfy.
  - sub-item: the ntfy topic is private.

## Work
Jonas works on the Pipelines team.
He is fully remote.

### Projects
- "Harbor": event ingestion.
- A code sample:
  ```bash
  - not an entry
  ```
"""


def test_curated_file_is_chunked_per_entry_with_its_heading_path() -> None:
    from engine.index.chunking import chunk_curated

    chunks = chunk_curated(CURATED)
    lines = _lines(CURATED)
    got = [(c.start_line, c.end_line, c.context) for c in chunks]
    # the title and a heading with nothing under it join the entry that follows; a section's prose is one chunk;
    # continuation lines and sub-items stay with their bullet; a "- " line inside a code block is no entry
    assert got == [(1, 4, ""), (5, 7, "Infrastructure"), (9, 11, ""), (13, 14, "Work"), (15, 18, "Work › Projects")]
    for c in chunks:
        assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line])
    covered = {n for c in chunks for n in range(c.start_line, c.end_line + 1)}
    assert {i for i, line in enumerate(lines, start=1) if line.strip()} <= covered
    assert chunks[1].indexed_text == "Infrastructure\n" + chunks[1].text
    assert chunks[0].indexed_text == chunks[0].text  # no context: the lines alone


def test_curated_chunking_applies_to_curated_files_only_and_keeps_importance() -> None:
    from engine.index.chunking import chunk_document

    text = "# Notes\n\n" + "".join(f"- fact number {i} <!-- importance: {1 + i % 9} -->\n" for i in range(30))
    curated = chunk_document(text, curated=True)
    assert len(curated) == 30
    assert [c.importance for c in curated] == [1 + i % 9 for i in range(30)]
    assert [c.text for c in curated][1] == "- fact number 1"
    daily = chunk_document(text, curated=False)
    assert len(daily) == 1 and daily[0].context == ""


def test_a_curated_entry_larger_than_the_budget_is_split_within_its_lines() -> None:
    from engine.index.chunking import chunk_curated

    long_entry = "- " + "\n  ".join(f"continuation line {i} " + "x" * 60 for i in range(40))
    text = "## Big\n" + long_entry + "\n- short one\n"
    chunks = chunk_curated(text, tokens=100, overlap=10)
    assert len(chunks) > 2 and chunks[-1].text == "- short one" and chunks[-1].context == "Big"
    lines = _lines(text)
    for c in chunks:
        assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line])
        assert weighted_len(c.text) <= 100 * 4 + 200
    assert all(c.end_line <= 41 for c in chunks[:-1])


def test_a_curated_hit_names_its_heading_path_and_follows_an_edit(tmp_path: Path) -> None:
    from engine.api import MemoryEngine
    from tests.helpers import hash_config

    ws = tmp_path / "ws"
    ws.mkdir()
    memory = ws / "MEMORY.md"
    memory.write_text("# Memory\n\n## Infrastructure\n- Backups run nightly at 02:00.\n- The NAS is a Synology.\n",
                      encoding="utf-8")
    with MemoryEngine(hash_config(ws)) as eng:
        # The second entry: the first holds its section's heading in its own text (no context needed).
        hit = eng.search("synology", mode="keyword").results[0]
        assert (hit.path, hit.start_line, hit.context) == ("MEMORY.md", 5, "Infrastructure")
        assert hit.to_json()["context"] == "Infrastructure"
        memory.write_text("# Memory\n\n## Home lab\n- Backups run nightly at 02:00.\n- The NAS is a Synology.\n",
                          encoding="utf-8")
        again = eng.search("synology", mode="keyword").results[0]
        assert again.context == "Home lab"  # the file changed: its entries' headings are worked out again
