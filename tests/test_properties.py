"""Property tests (hypothesis): the chunker, the FTS query builder, the JSONL reader, fusion and memory_get."""

from __future__ import annotations

import json
import os
import random
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from engine.errors import PathRefused
from engine.index.chunking import chunk_markdown
from engine.index.fts import fts_text
from engine.search.fusion import fuse_scores, mmr_order, normalize_bm25
from engine.search.query import build_fts_query, parse_query, query_terms
from engine.sessions.reader import read_transcript, session_search_text, summarize_transcript
from engine.textio import decode_bytes

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Text that looks like Markdown memory: headings, lists, fences, blank lines, long lines, CJK, odd characters.
_LINE = st.one_of(
    st.just(""),
    st.just("```"),
    st.just("~~~python"),
    st.just("---"),
    st.builds(lambda level, t: "#" * level + " " + t, st.integers(1, 6), st.text(max_size=30)),
    st.builds(lambda t: "- " + t, st.text(max_size=80)),
    st.text(max_size=120).map(lambda t: t.replace("\n", " ").replace("\r", " ")),
    st.text(alphabet="数据库记忆検索한국어", min_size=50, max_size=900),
    st.builds(lambda n: "word " * n, st.integers(0, 700)),
)
MARKDOWN = st.lists(_LINE, max_size=80).map(lambda lines: "\n".join(line.replace("\n", " ") for line in lines))


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


@FAST
@given(MARKDOWN, st.booleans(), st.integers(16, 400), st.integers(0, 200))
def test_chunk_ranges_cover_the_file_exactly(text: str, trailing: bool, tokens: int, overlap: int) -> None:
    text = text + "\n" if trailing else text
    overlap = min(overlap, tokens - 1)
    chunks = chunk_markdown(text, tokens, overlap)
    assert chunks == chunk_markdown(text, tokens, overlap), "deterministic"
    lines = _lines(text)
    covered: set[int] = set()
    pieces: dict[int, list[str]] = {}
    for c in chunks:
        assert 1 <= c.start_line <= c.end_line <= len(lines)
        exact = "\n".join(lines[c.start_line - 1 : c.end_line])
        if c.text != exact:
            # A line longer than the budget is hard-split: its pieces share its line number.
            assert c.start_line == c.end_line and c.text in lines[c.start_line - 1]
            pieces.setdefault(c.start_line, []).append(c.text)
        assert c.text.strip(), "no chunk is only whitespace"
        covered.update(range(c.start_line, c.end_line + 1))
    for i, line in enumerate(lines, 1):
        if line.strip():
            assert i in covered, f"line {i} is in no chunk"
    for line_no, parts in pieces.items():
        assert "".join(parts) == lines[line_no - 1], "the pieces of a split line are the whole line"
    starts = [c.start_line for c in chunks]
    assert starts == sorted(starts)


@pytest.fixture(scope="module")
def fts_db() -> Any:
    from engine.index.store import connect_raw

    conn, _ = connect_raw(Path(":memory:"), query_only=False)
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='porter unicode61 remove_diacritics 2')")
    for text in ("multi-agent setup on ubuntu 20.04", "don't force-push", "数据库 连接池", "C++ NEAR(x) AND y*",
                 "violin lessons", '"quoted" text'):
        conn.execute("INSERT INTO t(text) VALUES (?)", (fts_text(text),))
    yield conn
    conn.close()


ANY_TEXT = st.text(alphabet=st.characters(blacklist_categories=()), max_size=300)
FTS_NOISE = st.lists(st.sampled_from(['"', "'", "(", ")", "*", "^", ":", "-", "+", "NEAR", "AND", "OR", "NOT",
                                      "{", "}", "NEAR(", "\x00", "\\", "col:", " ", "数据", "20.04", "e\u0301"]),
                     max_size=40).map("".join)


@FAST
@given(st.one_of(ANY_TEXT, FTS_NOISE, st.tuples(ANY_TEXT, FTS_NOISE).map("".join)))
def test_fts_query_never_raises_and_is_always_valid_match_syntax(fts_db: Any, text: str) -> None:
    parsed = parse_query(text, date(2026, 12, 1))
    query = build_fts_query(parsed)
    terms = parsed.terms
    if query is None:
        # only text without keyword terms builds no query ("today" alone: a relative date's own words leave the
        # keyword query, its day is lifted instead)
        assert not terms or all(not t.strip('"') for t in terms)
        assert not query_terms(text) or parsed.resolved or all(not t.strip('"') for t in query_terms(text))
        return
    assert query.isprintable()
    fts_db.execute("SELECT rowid, bm25(t) FROM t WHERE t MATCH ? ORDER BY bm25(t)", (query,)).fetchall()


@FAST
@given(st.lists(st.one_of(
    st.binary(max_size=200),
    st.recursive(st.none() | st.booleans() | st.floats(allow_nan=False) | st.text(max_size=20),
                 lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=10), kids, max_size=4),
                 max_leaves=10).map(lambda v: json.dumps(v).encode()),
    st.fixed_dictionaries({"type": st.sampled_from(["session", "message", "compaction", "custom", "weird"]),
                           "message": st.fixed_dictionaries({
                               "role": st.sampled_from(["user", "assistant", "toolResult", 7]),
                               "content": st.one_of(st.text(max_size=40), st.lists(st.dictionaries(
                                   st.sampled_from(["type", "text", "name"]), st.text(max_size=10)), max_size=3)),
                           })}).map(lambda v: json.dumps(v).encode()),
), max_size=30), st.sampled_from([b"\n", b"\r\n"]))
def test_jsonl_reader_never_raises(tmp_path_factory: pytest.TempPathFactory, lines: list[bytes], sep: bytes) -> None:
    path = tmp_path_factory.mktemp("jsonl") / "s.jsonl"
    path.write_bytes(sep.join(lines))
    transcript = read_transcript(path)
    text, line_map = session_search_text(transcript)
    assert len(line_map) == len(text.split("\n")) if text else not line_map
    summarize_transcript(path)


@FAST
@given(st.binary(max_size=2000))
def test_decoding_any_bytes_never_raises(data: bytes) -> None:
    decoded = decode_bytes(data)
    assert "\x00" not in decoded.text and "\r" not in decoded.text and decoded.errors >= 0


SCORES = st.one_of(st.floats(min_value=-2.0, max_value=2.0), st.just(float("nan")))


@FAST
@given(st.dictionaries(st.integers(0, 50), SCORES, max_size=30),
       st.dictionaries(st.integers(0, 50), st.floats(0, 1), max_size=30),
       st.floats(0, 1), st.floats(0, 1), st.randoms(use_true_random=False))
def test_fusion_scores_in_unit_range_and_independent_of_order(vector: dict[int, float], keyword: dict[int, float],
                                                             wv: float, wt: float, rnd: random.Random) -> None:
    assume(wv + wt > 0)
    fused = fuse_scores(vector, keyword, wv, wt)
    for f in fused:
        assert 0.0 <= f.score <= 1.0 and 0.0 <= f.keyword <= 1.0
        assert f.vector is None or 0.0 <= f.vector <= 1.0
    assert {f.key for f in fused} == set(vector) | set(keyword), "a union of both legs"

    def shuffled(d: dict[int, float]) -> dict[int, float]:
        items = list(d.items())
        rnd.shuffle(items)
        return dict(items)

    assert fuse_scores(shuffled(vector), shuffled(keyword), wv, wt) == fused
    keyword_only = fuse_scores(None, keyword)
    assert keyword_only == fuse_scores(None, shuffled(keyword))
    assert all(0.0 <= f.score <= 1.0 for f in keyword_only)


@FAST
@given(st.dictionaries(st.integers(0, 100), st.floats(-1e6, 1e6), max_size=40))
def test_bm25_normalisation_in_unit_range(ranks: dict[int, float]) -> None:
    scores = normalize_bm25(ranks)
    assert set(scores) == set(ranks) and all(0.0 <= s <= 1.0 for s in scores.values())
    if ranks and min(ranks.values()) < 0:
        assert max(scores.values()) == 1.0


@FAST
@given(st.lists(st.tuples(st.integers(0, 30), st.floats(0, 1), st.text(max_size=30)), max_size=15,
                unique_by=lambda t: t[0]), st.floats(0, 1))
def test_mmr_keeps_every_candidate(items: list[tuple[int, float, str]], lam: float) -> None:
    order = mmr_order(items, lam)
    assert sorted(order) == sorted(k for k, _, _ in items)


# -- memory_get never reads outside ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def get_engine(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from engine.api import MemoryEngine
    from engine.config import load_config

    root = tmp_path_factory.mktemp("get")
    ws = root / "ws"
    (ws / "memory" / "sub").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("inside memory\n")
    (ws / "memory" / "notes.md").write_text("inside notes\n")
    (ws / "memory" / "sub" / "deep.md").write_text("inside deep\n")
    (ws / "NOTES.md").write_text("OUTSIDE-not-memory\n")
    (ws / "memory" / "data.txt").write_text("OUTSIDE-not-markdown\n")
    (root / "secret.md").write_text("OUTSIDE-secret\n")
    os.symlink(root / "secret.md", ws / "memory" / "link.md")
    os.symlink(root, ws / "memory" / "linkdir")
    old = os.environ.get("MEMDECK_HOME")
    os.environ["MEMDECK_HOME"] = str(root / "home")
    try:
        eng = MemoryEngine(load_config(workspace=ws, home=root / "home", overrides={"embedding": {"provider": "none"}}))
    finally:
        if old is None:
            os.environ.pop("MEMDECK_HOME", None)
        else:
            os.environ["MEMDECK_HOME"] = old
    yield eng, ws, root
    eng.close()


_SEGMENTS = st.sampled_from(["..", ".", "", "memory", "sub", "MEMORY.md", "notes.md", "deep.md", "NOTES.md",
                             "data.txt", "secret.md", "link.md", "linkdir", "%2e%2e", "%2F", "..%2f", "\\", "..\\..",
                             "~", "\x00", "ws", "get0", "etc", "passwd", "\u2024\u2024", "..;", "%00", "memory.md"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_SEGMENTS, min_size=1, max_size=7), st.sampled_from(["", "/", "//", "./", "WS", "ROOT"]),
       st.booleans())
def test_get_never_reads_outside(get_engine: Any, segments: list[str], prefix: str, with_range: bool) -> None:
    eng, ws, root = get_engine
    head = {"WS": f"{ws}/", "ROOT": f"{root}/"}.get(prefix, prefix)
    path = head + "/".join(segments)
    try:
        result = eng.get(path, 1, 5) if with_range else eng.get(path)
    except PathRefused:
        return
    assert "OUTSIDE" not in result.text
    resolved = (ws / result.path).resolve() if not Path(result.path).is_absolute() else Path(result.path).resolve()
    assert resolved == ws.resolve() / "MEMORY.md" or resolved == ws.resolve() / "memory.md" or \
        (ws.resolve() / "memory") in resolved.parents
    assert resolved.suffix == ".md"
