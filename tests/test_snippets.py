"""Snippets: the best-matching whole-line window, its own line range, and match spans."""

from __future__ import annotations

from engine.search.snippets import extract_snippet, match_spans


def test_short_chunk_is_whole() -> None:
    s = extract_snippet("one\ntwo\nthree", 10, ["two"])
    assert (s.text, s.start_line, s.end_line) == ("one\ntwo\nthree", 10, 12)
    assert s.spans == ((4, 7),)


def test_window_moves_to_the_match() -> None:
    lines = [f"filler line number {i} with nothing much in it at all" for i in range(40)]
    lines[30] = "the postgres pool ran out: ERR_PG_53300 too many connections"
    s = extract_snippet("\n".join(lines), 5, ["postgres", "pool"])
    assert len(s.text) <= 700
    assert s.start_line <= 35 <= s.end_line
    assert s.text.split("\n")[35 - s.start_line].startswith("the postgres pool")
    for a, b in s.spans:
        assert s.text[a:b].lower() in ("postgres", "pool")


def test_focus_used_when_no_term_matches() -> None:
    lines = [f"line {i} " + "x" * 60 for i in range(40)]
    s = extract_snippet("\n".join(lines), 1, [], focus=(20, 22))
    assert s.start_line == 21


def test_overlong_line_is_cut_around_match() -> None:
    text = "word " * 400 + "needle " + "word " * 400
    s = extract_snippet(text, 7, ["needle"])
    assert len(s.text) <= 700 and "needle" in s.text
    assert s.start_line == s.end_line == 7


def test_spans_by_stem_and_cjk() -> None:
    text = "Deployments deployed; 数据库迁移"
    spans = match_spans(text, ["deployment", "数据"])
    assert [text[a:b] for a, b in spans] == ["Deployments", "deployed", "数据"]


def test_a_hit_names_the_line_closest_in_meaning_in_file_lines() -> None:
    from engine.search.fusion import Fused
    from engine.search.pipeline import _Row, _to_hit

    text = "## Reminder\n- clocks go back\n\n## Personal\n- violin on Thursdays\n- Tuesday pick-ups"
    row = _Row(7, "memory/2026-10-23.md", "memory", 9, 14, text, None)
    hit = _to_hit(row, Fused(7, 0.02, 0.03, 0.0), ("instrument",), None, line_scores={1: 0.78, 4: 0.84, 5: 0.80})
    assert hit.best_line == 13 and hit.to_json()["bestLine"] == 13  # offset 4 of a chunk starting at line 9
    mapped = _Row(7, "memory/x.md", "memory", 1, 30, text, (1, 2, 3, 20, 21, 30))  # a chunk with a line map
    assert _to_hit(mapped, Fused(7, 0.02, 0.03, 0.0), (), None, line_scores={4: 0.9}).best_line == 21
    plain = _to_hit(row, Fused(7, 0.5, None, 1.0), ("violin",), None)  # keyword search: no line vectors
    assert plain.best_line is None and "bestLine" not in plain.to_json()
