"""Relative and absolute dates in a query resolve against a fixed today, in English, Serbian and Chinese."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.api import MemoryEngine
from engine.clock import TODAY_ENV, pinned_today
from engine.search.dates import DateSpan, resolve_dates, span_label
from engine.search.pipeline import parse
from engine.search.query import parse_query
from memdeck.cli import cli
from tests.helpers import hash_config

THU = date(2026, 10, 22)  # a Thursday: yesterday is Wed 21 Oct 2026
MON = date(2026, 10, 19)
JAN = date(2027, 1, 12)  # a Tuesday in January: last month and "in March" fall in the year before

# query, today, [(phrase, from, to)] — every phrase the query holds, in query order.
CASES: list[tuple[str, date, list[tuple[str, str, str]]]] = [
    # English days
    ("what did I do yesterday", THU, [("yesterday", "2026-10-21", "2026-10-21")]),
    ("the day before yesterday", THU, [("the day before yesterday", "2026-10-20", "2026-10-20")]),
    ("notes from today", THU, [("today", "2026-10-22", "2026-10-22")]),
    ("3 days ago", THU, [("3 days ago", "2026-10-19", "2026-10-19")]),
    ("five days ago", THU, [("five days ago", "2026-10-17", "2026-10-17")]),
    ("a day ago", THU, [("a day ago", "2026-10-21", "2026-10-21")]),
    ("ten days ago", THU, [("ten days ago", "2026-10-12", "2026-10-12")]),
    ("2 weeks ago", THU, [("2 weeks ago", "2026-10-05", "2026-10-11")]),
    ("a week ago", THU, [("a week ago", "2026-10-12", "2026-10-18")]),
    ("last friday", THU, [("last friday", "2026-10-16", "2026-10-16")]),
    ("last Wednesday", THU, [("last Wednesday", "2026-10-21", "2026-10-21")]),
    ("last Thursday", THU, [("last Thursday", "2026-10-15", "2026-10-15")]),
    ("this Monday", THU, [("this Monday", "2026-10-19", "2026-10-19")]),
    ("on Tuesday", THU, [("Tuesday", "2026-10-20", "2026-10-20")]),
    ("Thursday", THU, [("Thursday", "2026-10-15", "2026-10-15")]),  # bare: the most recent one before today
    ("Monday", MON, [("Monday", "2026-10-12", "2026-10-12")]),
    ("the Friday before last", THU, [("the Friday before last", "2026-10-09", "2026-10-09")]),
    ("last weekend", THU, [("last weekend", "2026-10-17", "2026-10-18")]),
    ("last weekend", MON, [("last weekend", "2026-10-17", "2026-10-18")]),
    ("over the weekend", MON, [("over the weekend", "2026-10-17", "2026-10-18")]),
    ("last week", THU, [("last week", "2026-10-12", "2026-10-18")]),
    ("this week", THU, [("this week", "2026-10-19", "2026-10-22")]),
    ("the week before last", THU, [("the week before last", "2026-10-05", "2026-10-11")]),
    ("last month", THU, [("last month", "2026-09-01", "2026-09-30")]),
    ("last month", JAN, [("last month", "2026-12-01", "2026-12-31")]),
    ("this month", THU, [("this month", "2026-10-01", "2026-10-22")]),
    ("what happened on the 3rd", THU, [("on the 3rd", "2026-10-03", "2026-10-03")]),
    ("on the 25th", THU, [("on the 25th", "2026-09-25", "2026-09-25")]),
    ("in March", THU, [("in March", "2026-03-01", "2026-03-31")]),
    ("in March", JAN, [("in March", "2026-03-01", "2026-03-31")]),
    ("in October", THU, [("in October", "2026-10-01", "2026-10-31")]),
    ("previous week", THU, [("previous week", "2026-10-12", "2026-10-18")]),
    ("previous Friday", THU, [("previous Friday", "2026-10-16", "2026-10-16")]),
    ("a fortnight ago", THU, [("a fortnight ago", "2026-10-05", "2026-10-11")]),
    ("a few days ago", THU, [("a few days ago", "2026-10-17", "2026-10-20")]),
    ("3 days back", THU, [("3 days back", "2026-10-19", "2026-10-19")]),
    ("the last 3 days", THU, [("the last 3 days", "2026-10-19", "2026-10-22")]),
    ("this morning", THU, [("this morning", "2026-10-22", "2026-10-22")]),
    ("last night", THU, [("last night", "2026-10-21", "2026-10-21")]),
    # absolute forms (a year-less day shows its most recent date; it still lifts that day of every year)
    ("Oct 5", THU, [("Oct 5", "2026-10-05", "2026-10-05")]),
    ("Dec 5", THU, [("Dec 5", "2025-12-05", "2025-12-05")]),
    ("5 October", THU, [("5 October", "2026-10-05", "2026-10-05")]),
    ("2026-10-05", THU, [("2026-10-05", "2026-10-05", "2026-10-05")]),
    ("šta je bilo 5.10.", THU, [("5.10.", "2026-10-05", "2026-10-05")]),
    ("5.10.2025.", THU, [("5.10.2025.", "2025-10-05", "2025-10-05")]),
    ("14 Oct 2026", THU, [("14 Oct 2026", "2026-10-14", "2026-10-14")]),
    ("October 14", THU, [("October 14", "2026-10-14", "2026-10-14")]),
    ("in July 2023", THU, [("July 2023", "2023-07-01", "2023-07-31")]),
    ("notes from 2026-09", THU, [("2026-09", "2026-09-01", "2026-09-30")]),
    # Serbian, Latin and Cyrillic, ekavian and ijekavian, with and without diacritics
    ("šta sam radio danas", THU, [("danas", "2026-10-22", "2026-10-22")]),
    ("juče", THU, [("juče", "2026-10-21", "2026-10-21")]),
    ("jučer", THU, [("jučer", "2026-10-21", "2026-10-21")]),
    ("juce", THU, [("juce", "2026-10-21", "2026-10-21")]),
    ("prekjuče", THU, [("prekjuče", "2026-10-20", "2026-10-20")]),
    ("данас", THU, [("данас", "2026-10-22", "2026-10-22")]),
    ("јуче", THU, [("јуче", "2026-10-21", "2026-10-21")]),
    ("прекјуче", THU, [("прекјуче", "2026-10-20", "2026-10-20")]),
    ("u ponedeljak", THU, [("ponedeljak", "2026-10-19", "2026-10-19")]),
    ("u ponedjeljak", THU, [("ponedjeljak", "2026-10-19", "2026-10-19")]),
    ("utorak", THU, [("utorak", "2026-10-20", "2026-10-20")]),
    ("u sredu", THU, [("sredu", "2026-10-21", "2026-10-21")]),
    ("srijeda", THU, [("srijeda", "2026-10-21", "2026-10-21")]),
    ("četvrtak", THU, [("četvrtak", "2026-10-15", "2026-10-15")]),
    ("prošlog petka", THU, [("prošlog petka", "2026-10-16", "2026-10-16")]),
    ("u subotu", THU, [("subotu", "2026-10-17", "2026-10-17")]),
    ("u nedelju", THU, [("nedelju", "2026-10-18", "2026-10-18")]),  # nedelja: Sunday …
    ("nedjelja", THU, [("nedjelja", "2026-10-18", "2026-10-18")]),
    ("prošle nedelje", THU, [("prošle nedelje", "2026-10-12", "2026-10-18")]),  # … and, after prošle, the week
    ("prošle nedjelje", THU, [("prošle nedjelje", "2026-10-12", "2026-10-18")]),
    ("prošle sedmice", THU, [("prošle sedmice", "2026-10-12", "2026-10-18")]),
    ("прошле недеље", THU, [("прошле недеље", "2026-10-12", "2026-10-18")]),
    ("ове седмице", THU, [("ове седмице", "2026-10-19", "2026-10-22")]),
    ("понедељак", THU, [("понедељак", "2026-10-19", "2026-10-19")]),
    ("петак", THU, [("петак", "2026-10-16", "2026-10-16")]),
    ("недеља", THU, [("недеља", "2026-10-18", "2026-10-18")]),
    ("pre 3 dana", THU, [("pre 3 dana", "2026-10-19", "2026-10-19")]),
    ("prije tri dana", THU, [("prije tri dana", "2026-10-19", "2026-10-19")]),
    ("pre dva dana", THU, [("pre dva dana", "2026-10-20", "2026-10-20")]),
    ("прије 5 дана", THU, [("прије 5 дана", "2026-10-17", "2026-10-17")]),
    ("pre dve nedelje", THU, [("pre dve nedelje", "2026-10-05", "2026-10-11")]),
    ("prošlog meseca", THU, [("prošlog meseca", "2026-09-01", "2026-09-30")]),
    ("prošlog vikenda", THU, [("prošlog vikenda", "2026-10-17", "2026-10-18")]),
    ("pretprošle nedelje", THU, [("pretprošle nedelje", "2026-10-05", "2026-10-11")]),
    ("pretprošlog petka", THU, [("pretprošlog petka", "2026-10-09", "2026-10-09")]),
    ("šta sam radio u oktobru", THU, [("u oktobru", "2026-10-01", "2026-10-31")]),
    ("у марту", THU, [("у марту", "2026-03-01", "2026-03-31")]),
    ("5. oktobra", THU, [("5. oktobra", "2026-10-05", "2026-10-05")]),
    ("12. marta 2025.", THU, [("12. marta 2025.", "2025-03-12", "2025-03-12")]),
    ("maj je lep", THU, []),
    # Chinese
    ("今天做了什么", THU, [("今天", "2026-10-22", "2026-10-22")]),
    ("昨天", THU, [("昨天", "2026-10-21", "2026-10-21")]),
    ("前天", THU, [("前天", "2026-10-20", "2026-10-20")]),
    ("星期一", THU, [("星期一", "2026-10-19", "2026-10-19")]),
    ("星期日", THU, [("星期日", "2026-10-18", "2026-10-18")]),
    ("星期天", THU, [("星期天", "2026-10-18", "2026-10-18")]),
    ("周四", THU, [("周四", "2026-10-15", "2026-10-15")]),
    ("周日", THU, [("周日", "2026-10-18", "2026-10-18")]),
    ("上周五", THU, [("上周五", "2026-10-16", "2026-10-16")]),
    ("上周一", THU, [("上周一", "2026-10-12", "2026-10-12")]),  # last week's Monday, not this week's
    ("上星期二", THU, [("上星期二", "2026-10-13", "2026-10-13")]),
    ("上礼拜四", THU, [("上礼拜四", "2026-10-15", "2026-10-15")]),
    ("这周二", THU, [("这周二", "2026-10-20", "2026-10-20")]),
    ("这周", THU, [("这周", "2026-10-19", "2026-10-22")]),
    ("本周", THU, [("本周", "2026-10-19", "2026-10-22")]),
    ("上周", THU, [("上周", "2026-10-12", "2026-10-18")]),
    ("上周末", THU, [("上周末", "2026-10-17", "2026-10-18")]),
    ("上个月", THU, [("上个月", "2026-09-01", "2026-09-30")]),
    ("这个月", THU, [("这个月", "2026-10-01", "2026-10-22")]),
    ("3天前", THU, [("3天前", "2026-10-19", "2026-10-19")]),
    ("三天前", THU, [("三天前", "2026-10-19", "2026-10-19")]),
    ("前几天", THU, [("前几天", "2026-10-17", "2026-10-20")]),
    ("两周前", THU, [("两周前", "2026-10-05", "2026-10-11")]),
    ("上上周三", THU, [("上上周三", "2026-10-07", "2026-10-07")]),
    ("去年3月", THU, [("去年3月", "2025-03-01", "2025-03-31")]),
    ("今早", THU, [("今早", "2026-10-22", "2026-10-22")]),
    ("十天前", THU, [("十天前", "2026-10-12", "2026-10-12")]),
    ("10月5日", THU, [("10月5日", "2026-10-05", "2026-10-05")]),
    ("9月28号", THU, [("9月28号", "2026-09-28", "2026-09-28")]),
    ("十月五号", THU, [("十月五号", "2026-10-05", "2026-10-05")]),
    ("2025年3月2日", THU, [("2025年3月2日", "2025-03-02", "2025-03-02")]),
    # several phrases in one query, in order
    ("yesterday and last Friday", THU, [("yesterday", "2026-10-21", "2026-10-21"),
                                        ("last Friday", "2026-10-16", "2026-10-16")]),
    # a relative phrase tied to the day written after it counts from that day
    ("last weekend before April 10, 2023", THU, [("last weekend", "2023-04-08", "2023-04-09"),
                                                 ("April 10, 2023", "2023-04-10", "2023-04-10")]),
    ("the Sunday before October 13, 2023", THU, [("Sunday", "2023-10-08", "2023-10-08"),
                                                 ("October 13, 2023", "2023-10-13", "2023-10-13")]),
    ("last week, as mentioned on November 6, 2023", THU, [("last week", "2023-10-30", "2023-11-05"),
                                                          ("November 6, 2023", "2023-11-06", "2023-11-06")]),
    ("last month before 2026-06-10", THU, [("last month", "2026-05-01", "2026-05-31"),
                                           ("2026-06-10", "2026-06-10", "2026-06-10")]),
    ("yesterday and 2026-10-05", THU, [("yesterday", "2026-10-21", "2026-10-21"),
                                       ("2026-10-05", "2026-10-05", "2026-10-05")]),
    # not dates
    ("what may happen next", THU, []),
    ("deploy v1.2.3 to 10.0.0.1", THU, []),
    ("we meet on Fridays", THU, []),
    ("sredi ovo do petka", THU, [("petka", "2026-10-16", "2026-10-16")]),
    ("the 3rd attempt", THU, []),
    ("", THU, []),
]


@pytest.mark.parametrize(("query", "today", "expected"), CASES, ids=[f"{c[0]}@{c[1]}" for c in CASES])
def test_resolve_dates(query: str, today: date, expected: list[tuple[str, str, str]]) -> None:
    spans = resolve_dates(query, today)
    assert [(s.phrase, s.start.isoformat(), s.end.isoformat()) for s in spans] == expected
    for span in spans:
        assert query[span.where[0]:span.where[1]] == span.phrase


@pytest.mark.parametrize(("query", "label"), [
    ("yesterday", "Wed 21 Oct 2026"),
    ("last week", "Mon 12 Oct – Sun 18 Oct 2026"),
    ("last month", "September 2026"),
    ("this month", "October 2026"),
    ("2 weeks ago", "around Thu 8 Oct 2026"),
    ("上周末", "Sat 17 Oct – Sun 18 Oct 2026"),
])
def test_labels(query: str, label: str) -> None:
    assert [s.label for s in resolve_dates(query, THU)] == [label]


def test_a_range_across_new_year_names_both_years() -> None:
    assert span_label(date(2026, 12, 28), date(2027, 1, 3)) == "Mon 28 Dec 2026 – Sun 3 Jan 2027"


def test_to_json_is_the_documented_shape() -> None:
    (span,) = resolve_dates("yesterday", THU)
    assert span.to_json() == {"phrase": "yesterday", "from": "2026-10-21", "to": "2026-10-21",
                              "label": "Wed 21 Oct 2026"}


def test_flags_of_the_kinds() -> None:
    yesterday, week, ago, month, oct5, iso = resolve_dates(
        "yesterday, last week, 2 weeks ago, last month, Oct 5, 2026-09-01", THU)
    assert (yesterday.kind, yesterday.relative, yesterday.every_year) == ("day", True, False)
    assert (week.kind, week.peak) == ("range", None)
    assert (ago.kind, ago.peak) == ("range", date(2026, 10, 8))
    assert month.kind == "month"
    assert (oct5.relative, oct5.every_year) == (False, True)
    assert (iso.relative, iso.every_year) == (False, False)


def test_parse_query_lifts_resolved_days_and_drops_relative_words() -> None:
    parsed = parse_query("What did I cook yesterday and last week, and in 2026-09?", today=THU)
    assert parsed.terms == ("cook", "2026", "09")  # the relative phrases' words left the keyword query
    assert (2026, 10, 21) in parsed.dates
    assert parsed.months == frozenset({(2026, 9)})
    assert [(s.start, s.end) for s in parsed.ranges] == [(date(2026, 10, 12), date(2026, 10, 18))]
    zh = parse_query("昨天晚饭做了什么", today=THU)
    assert "昨天" not in zh.terms and "天晚" not in zh.terms and "晚饭" in zh.terms
    assert parse_query("上个月", today=THU).months == frozenset({(2026, 9)})
    assert parse_query("Oct 5", today=THU).dates == frozenset({(None, 10, 5)})  # every year's Oct 5


def test_the_vector_leg_embeds_the_query_without_its_relative_dates() -> None:
    assert parse_query("What did I cook yesterday?", today=THU).vector_text == "What did I cook ?"
    assert parse_query("yesterday", today=THU).vector_text == "yesterday"  # nothing else left
    assert parse_query("notes from 2026-10-05", today=THU).vector_text == "notes from 2026-10-05"


def test_pinned_today(monkeypatch: pytest.MonkeyPatch) -> None:
    assert pinned_today() is None
    monkeypatch.setenv(TODAY_ENV, "2026-10-22")
    assert pinned_today() == THU
    monkeypatch.setenv(TODAY_ENV, "22.10.2026")
    with pytest.raises(ValueError, match="MEMDECK_TODAY"):
        pinned_today()


def test_pathological_queries_stay_quick() -> None:
    for text in ("1 " * 3000, "上" * 5000, "the day before " * 500, "5.5." * 2000, "prošle " * 2000):
        resolve_dates(text, THU)  # returns (no catastrophic backtracking); the suite's time limit guards it


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    notes = {
        "2026-10-21.md": "# 2026-10-21\n\n- Cooked lentil soup for dinner.\n",
        "2026-10-20-1430.md": "# Session 2026-10-20 14:30\n\n- Cooked pad thai with Ana.\n",
        "2026-10-14.md": "# 2026-10-14\n\n- Yesterday I cooked risotto; cooking is fun, I cook a lot.\n",
        "2026-10-15.md": "# 2026-10-15\n\n- Went to the cinema.\n",
    }
    for name, text in notes.items():
        (ws / "memory" / name).write_text(text, encoding="utf-8")
    (ws / "MEMORY.md").write_text("# Memory\n\n- I cook most evenings.\n", encoding="utf-8")
    return ws


@pytest.mark.parametrize(("query", "top"), [
    ("what did I cook yesterday", "memory/2026-10-21.md"),
    ("šta sam kuvao juče", "memory/2026-10-21.md"),
    ("昨天做了什么", "memory/2026-10-21.md"),
    ("what did I cook the day before yesterday", "memory/2026-10-20-1430.md"),  # a session note of the day
    ("what did I do last week", "memory/2026-10-14.md"),
])
def test_search_lifts_the_resolved_day(workspace: Path, monkeypatch: pytest.MonkeyPatch, query: str,
                                       top: str) -> None:
    monkeypatch.setenv(TODAY_ENV, "2026-10-22")
    with MemoryEngine(hash_config(workspace)) as eng:
        resp = eng.search(query, mode="keyword")
    assert resp.results[0].path == top
    assert resp.dates and isinstance(resp.dates[0], DateSpan)
    assert "dates" in resp.to_json()


def test_search_keeps_other_results(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TODAY_ENV, "2026-10-22")
    with MemoryEngine(hash_config(workspace)) as eng:
        lifted = eng.search("cook yesterday", mode="keyword")
        plain = eng.search("cook", mode="keyword")
    assert lifted.results[0].path == "memory/2026-10-21.md"
    assert {h.path for h in plain.results} <= {h.path for h in lifted.results}  # a lift, never a filter
    assert "dates" not in plain.to_json()


def test_a_bad_pinned_today_is_a_warning(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TODAY_ENV, "not-a-date")
    with MemoryEngine(hash_config(workspace)) as eng:
        resp = eng.search("cook yesterday", mode="keyword")
    assert any("MEMDECK_TODAY" in w for w in resp.warnings)
    assert resp.dates[0].phrase == "yesterday" and resp.results


def test_a_phrase_whose_days_hold_no_note_keeps_its_words(workspace: Path) -> None:
    with MemoryEngine(hash_config(workspace)) as eng:
        eng.sync()
        found = parse(eng.store, "risotto yesterday", THU, ("memory",))
        empty = parse(eng.store, "risotto yesterday", date(2026, 6, 2), ("memory",))
    assert found.terms == ("risotto",)  # Wed 21 Oct has a note: lifted, the word leaves the keyword query
    assert empty.terms == ("risotto", "yesterday") and empty.resolved[0].keeps_words  # 1 Jun has none
    assert empty.vector_text == "risotto yesterday"


def test_cli_shows_the_resolution_first(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TODAY_ENV, "2026-10-22")
    monkeypatch.setenv("MEMDECK_EMBEDDING_PROVIDER", "hash")
    runner = CliRunner()
    text = runner.invoke(cli, ["--workspace", str(workspace), "search", "--mode", "keyword",
                               "what did I cook yesterday"])
    assert text.exit_code == 0, text.output
    assert text.stdout.splitlines()[0] == "yesterday → Wed 21 Oct 2026"
    as_json = runner.invoke(cli, ["--workspace", str(workspace), "search", "--json", "--mode", "keyword",
                                  "last week"])
    assert json.loads(as_json.stdout)["dates"] == [
        {"phrase": "last week", "from": "2026-10-12", "to": "2026-10-18", "label": "Mon 12 Oct – Sun 18 Oct 2026"}]


def test_tui_search_header_shows_the_resolution() -> None:
    from engine.api import SearchResponse
    from tui.widgets.search_pane import SearchPane

    resp = SearchResponse((), "none", None, "keyword", dates=resolve_dates("yesterday", THU))
    # _info reads only its arguments: the header line is checked without starting the app.
    header = SearchPane._info(None, "yesterday", resp)  # type: ignore[arg-type]
    assert "yesterday → Wed 21 Oct 2026" in header.plain


def test_mcp_memory_search_payload_has_the_dates(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memdeck.mcp import MemoryService

    monkeypatch.setenv(TODAY_ENV, "2026-10-22")
    service = MemoryService(hash_config(workspace), warm_wait=60.0)
    try:
        out = service.search({"query": "什么 昨天"})
    finally:
        service.stop()
    assert not out.is_error
    assert out.payload["dates"] == [{"phrase": "昨天", "from": "2026-10-21", "to": "2026-10-21",
                                     "label": "Wed 21 Oct 2026"}]
    assert out.payload["results"][0]["path"] == "memory/2026-10-21.md"
