"""Forward dates ("tomorrow", "next Friday", "下周五", "sledeći petak"), long counts ("100天前"), numbers that are
not dates ("python 3.12."), and days outside the calendar (``MEMDECK_TODAY=9999-12-31``) — issue 22, class 7."""

from __future__ import annotations

import json
import os
from datetime import date
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.api import MemoryEngine
from engine.clock import TODAY_ENV, pinned_today
from engine.search.dates import query_dates, resolve_dates, resolve_dates_noting
from engine.search.query import parse_query
from memdeck.cli import cli
from tests.helpers import hash_config

THU = date(2026, 10, 22)  # a Thursday
FRI = date(2026, 10, 23)
SAT = date(2026, 10, 24)
DEC = date(2026, 12, 10)
MAX = date.max  # Fri 31 Dec 9999
MIN = date.min  # Mon 1 Jan 0001

# phrase, today, [(phrase as written, from, to)] — or [] when the text names no date.
CASES: list[tuple[str, date, list[tuple[str, str, str]]]] = [
    # English, forward
    ("tomorrow", THU, [("tomorrow", "2026-10-23", "2026-10-23")]),
    ("what is planned for tomorrow", THU, [("tomorrow", "2026-10-23", "2026-10-23")]),
    ("the day after tomorrow", THU, [("the day after tomorrow", "2026-10-24", "2026-10-24")]),
    ("next Friday", THU, [("next Friday", "2026-10-23", "2026-10-23")]),  # the coming Friday
    ("next Friday", FRI, [("next Friday", "2026-10-30", "2026-10-30")]),  # never today
    ("next friday", SAT, [("next friday", "2026-10-30", "2026-10-30")]),
    ("next Monday", THU, [("next Monday", "2026-10-26", "2026-10-26")]),
    ("this coming Friday", THU, [("this coming Friday", "2026-10-23", "2026-10-23")]),
    ("coming Saturday", THU, [("coming Saturday", "2026-10-24", "2026-10-24")]),
    ("upcoming Tuesday", THU, [("upcoming Tuesday", "2026-10-27", "2026-10-27")]),
    ("Friday next week", THU, [("Friday next week", "2026-10-30", "2026-10-30")]),
    ("plan for Friday of next week", THU, [("Friday of next week", "2026-10-30", "2026-10-30")]),
    ("next week", THU, [("next week", "2026-10-26", "2026-11-01")]),
    ("next weekend", THU, [("next weekend", "2026-10-31", "2026-11-01")]),
    ("next month", THU, [("next month", "2026-11-01", "2026-11-30")]),
    ("next month", DEC, [("next month", "2027-01-01", "2027-01-31")]),
    ("in 3 days", THU, [("in 3 days", "2026-10-25", "2026-10-25")]),
    ("in three days", THU, [("in three days", "2026-10-25", "2026-10-25")]),
    ("3 days from now", THU, [("3 days from now", "2026-10-25", "2026-10-25")]),
    ("in 2 weeks", THU, [("in 2 weeks", "2026-11-02", "2026-11-08")]),  # that day ±3, as "2 weeks ago"
    ("in a week", THU, [("in a week", "2026-10-26", "2026-11-01")]),
    # Serbian (Latin and Cyrillic, ekavian and ijekavian)
    ("sutra", THU, [("sutra", "2026-10-23", "2026-10-23")]),
    ("сутра", THU, [("сутра", "2026-10-23", "2026-10-23")]),
    ("prekosutra", THU, [("prekosutra", "2026-10-24", "2026-10-24")]),
    ("sledeći petak", THU, [("sledeći petak", "2026-10-23", "2026-10-23")]),
    ("sljedeći petak", THU, [("sljedeći petak", "2026-10-23", "2026-10-23")]),
    ("idući petak", THU, [("idući petak", "2026-10-23", "2026-10-23")]),
    ("sledeći petak", FRI, [("sledeći petak", "2026-10-30", "2026-10-30")]),
    ("следећи петак", THU, [("следећи петак", "2026-10-23", "2026-10-23")]),
    ("идући петак", THU, [("идући петак", "2026-10-23", "2026-10-23")]),
    ("sledećeg ponedeljka", THU, [("sledećeg ponedeljka", "2026-10-26", "2026-10-26")]),
    ("sledeće nedelje", THU, [("sledeće nedelje", "2026-10-26", "2026-11-01")]),  # nedelja: here the week
    ("iduće sedmice", THU, [("iduće sedmice", "2026-10-26", "2026-11-01")]),
    ("sledećeg meseca", THU, [("sledećeg meseca", "2026-11-01", "2026-11-30")]),
    ("sledećeg vikenda", THU, [("sledećeg vikenda", "2026-10-31", "2026-11-01")]),
    ("petak sledeće nedelje", THU, [("petak sledeće nedelje", "2026-10-30", "2026-10-30")]),
    ("za 3 dana", THU, [("za 3 dana", "2026-10-25", "2026-10-25")]),
    ("за 3 дана", THU, [("за 3 дана", "2026-10-25", "2026-10-25")]),
    ("za dve nedelje", THU, [("za dve nedelje", "2026-11-02", "2026-11-08")]),
    # Chinese (and Japanese 明日)
    ("明天", THU, [("明天", "2026-10-23", "2026-10-23")]),
    ("明日", THU, [("明日", "2026-10-23", "2026-10-23")]),
    ("后天", THU, [("后天", "2026-10-24", "2026-10-24")]),
    ("大后天", THU, [("大后天", "2026-10-25", "2026-10-25")]),
    ("下周五", THU, [("下周五", "2026-10-30", "2026-10-30")]),  # next week's Friday, as 上周五 is last week's
    ("下星期一", THU, [("下星期一", "2026-10-26", "2026-10-26")]),
    ("下礼拜三", THU, [("下礼拜三", "2026-10-28", "2026-10-28")]),
    ("下下周一", THU, [("下下周一", "2026-11-02", "2026-11-02")]),
    ("下周", THU, [("下周", "2026-10-26", "2026-11-01")]),
    ("下周末", THU, [("下周末", "2026-10-31", "2026-11-01")]),
    ("下个月", THU, [("下个月", "2026-11-01", "2026-11-30")]),
    ("3天后", THU, [("3天后", "2026-10-25", "2026-10-25")]),
    ("三天以后", THU, [("三天以后", "2026-10-25", "2026-10-25")]),
    ("两周后", THU, [("两周后", "2026-11-02", "2026-11-08")]),
    # counts of more than two digits
    ("100天前", THU, [("100天前", "2026-07-14", "2026-07-14")]),
    ("365天前", THU, [("365天前", "2025-10-22", "2025-10-22")]),
    ("100 days ago", THU, [("100 days ago", "2026-07-14", "2026-07-14")]),
    ("pre 100 dana", THU, [("pre 100 dana", "2026-07-14", "2026-07-14")]),
    # the past forms are unchanged
    ("last Friday", THU, [("last Friday", "2026-10-16", "2026-10-16")]),
    ("Friday", THU, [("Friday", "2026-10-16", "2026-10-16")]),
    ("上周五", THU, [("上周五", "2026-10-16", "2026-10-16")]),
    ("šta je bilo 5.10.", THU, [("5.10.", "2026-10-05", "2026-10-05")]),
    ("sastanak 12.10. u 10h", THU, [("12.10.", "2026-10-12", "2026-10-12")]),
    # versions, decimals and addresses are not dates
    ("upgrade to python 3.12.", THU, []),
    ("python 3.12", THU, []),
    ("Python 3.12.", THU, []),
    ("v2.4.1", THU, []),
    ("release 2.4.1.", THU, []),
    ("node 20.10", THU, []),
    ("we moved to node 20.10.", THU, []),
    ("ubuntu 20.04.", THU, []),
    ("verzija 3.12.", THU, []),
    ("10.0.0.1", THU, []),
    ("ping 192.168.1.10.", THU, []),
    ("pi is 3.14", THU, []),
    ("the ratio was 1.05.", THU, []),
    ("it costs 4.10.", THU, []),
    # days outside the calendar are not read (the rest of the query is)
    ("tomorrow", MAX, []),
    ("yesterday", MAX, [("yesterday", "9999-12-30", "9999-12-30")]),
    ("today", MAX, [("today", "9999-12-31", "9999-12-31")]),
    ("next week", MAX, []),
    ("this weekend", MAX, []),
    ("next month", MAX, []),
    ("in March", MAX, [("in March", "9999-03-01", "9999-03-31")]),
    ("yesterday", MIN, []),
    ("tomorrow", MIN, [("tomorrow", "0001-01-02", "0001-01-02")]),
    ("last week", MIN, []),
    ("in March", MIN, []),
    ("Oct 5", MIN, []),
    ("2026-10-05 and tomorrow", MAX, [("2026-10-05", "2026-10-05", "2026-10-05")]),
    # round 2: counts of any length, in digits or Chinese numerals (past the calendar: noted, not raised)
    ("10000天前", THU, [("10000天前", "1999-06-06", "1999-06-06")]),
    ("一百天前", THU, [("一百天前", "2026-07-14", "2026-07-14")]),
    ("百天前", THU, [("百天前", "2026-07-14", "2026-07-14")]),
    ("三百六十五天前", THU, [("三百六十五天前", "2025-10-22", "2025-10-22")]),
    ("一千零一天后", THU, [("一千零一天后", "2029-07-19", "2029-07-19")]),
    ("两百天后", THU, [("两百天后", "2027-05-10", "2027-05-10")]),
    ("十万天前", THU, [("十万天前", "1753-01-06", "1753-01-06")]),
    ("in 10000 days", THU, [("in 10000 days", "2054-03-09", "2054-03-09")]),
    ("999 days ago", THU, [("999 days ago", "2024-01-27", "2024-01-27")]),
    ("in 401 days", THU, [("in 401 days", "2027-11-27", "2027-11-27")]),
    ("za 1000 dana", THU, [("za 1000 dana", "2029-07-18", "2029-07-18")]),
    ("in 99999999999999999999 days", THU, []),
    ("in -3 days", THU, []),
    ("in 0 days", THU, [("in 0 days", "2026-10-22", "2026-10-22")]),
    # forward phrases a week further out: never the past
    ("Friday after next", THU, [("Friday after next", "2026-10-30", "2026-10-30")]),
    ("the friday after next", FRI, [("the friday after next", "2026-11-06", "2026-11-06")]),
    ("next next Friday", THU, [("next next Friday", "2026-10-30", "2026-10-30")]),
    ("next next week", THU, [("next next week", "2026-11-02", "2026-11-08")]),
    ("this friday", SAT, [("this friday", "2026-10-23", "2026-10-23")]),  # this week's
    # a day with a time after it (ISO 8601)
    ("2026-10-23T10:00", THU, [("2026-10-23", "2026-10-23", "2026-10-23")]),
    ("met 2026-10-23t09:30z", THU, [("2026-10-23", "2026-10-23", "2026-10-23")]),
    # numbered parts of a text, slashed numbers and other numbers are not days
    ("page 12.10.", THU, []),
    ("see p. 12.10.", THU, []),
    ("chapter 5.10.", THU, []),
    ("section 3.4.", THU, []),
    ("table 3.4.", THU, []),
    ("fig. 2.1.", THU, []),
    ("§ 5.10.", THU, []),
    ("strana 12.10.", THU, []),
    ("član 2.1.", THU, []),
    ("23/10", THU, []),
    ("10/23", THU, []),
    ("3/4 cup", THU, []),
    ("12:30", THU, []),
    ("$4.10", THU, []),
    ("2.5 GB", THU, []),
    ("HTTP/1.1", THU, []),
    ("RFC 2616", THU, []),
    ("ISO 8601", THU, []),
    ("1.2.3.4", THU, []),
    ("3.12.4", THU, []),
    ("python3.12.", THU, []),
    # absolute days still read
    ("23.10.2026.", THU, [("23.10.2026.", "2026-10-23", "2026-10-23")]),
    ("23. oktobar", SAT, [("23. oktobar", "2026-10-23", "2026-10-23")]),
    ("2026年10月23日", THU, [("2026年10月23日", "2026-10-23", "2026-10-23")]),
    ("October 23rd", SAT, [("October 23rd", "2026-10-23", "2026-10-23")]),
]


@pytest.mark.parametrize(("query", "today", "expected"), CASES, ids=[f"{c[0]}@{c[1]}" for c in CASES])
def test_resolve_dates(query: str, today: date, expected: list[tuple[str, str, str]]) -> None:
    spans = resolve_dates(query, today)
    assert [(s.phrase, s.start.isoformat(), s.end.isoformat()) for s in spans] == expected
    for span in spans:
        assert query[span.where[0]:span.where[1]] == span.phrase


@pytest.mark.parametrize("text", ["upgrade to python 3.12.", "node 20.10.", "ubuntu 20.04.", "ratio 1.05."])
def test_versions_name_no_day_for_the_lift(text: str) -> None:
    assert query_dates(text) == set()
    assert parse_query(text, today=THU).dates == frozenset()


def test_forward_words_leave_the_keyword_query() -> None:
    parsed = parse_query("plans for next Friday", today=THU)
    assert parsed.terms == ("plans",)
    assert (2026, 10, 23) in parsed.dates
    assert parse_query("下周五的计划", today=THU).dates == frozenset({(2026, 10, 30)})


@pytest.mark.parametrize(("query", "today", "phrase"), [
    ("tomorrow", MAX, "tomorrow"), ("next week", MAX, "next week"), ("yesterday", MIN, "yesterday"),
    ("in March", MIN, "in March"),
])
def test_a_phrase_outside_the_calendar_is_noted(query: str, today: date, phrase: str) -> None:
    spans, notes = resolve_dates_noting(query, today)
    assert not spans
    assert len(notes) == 1 and repr(phrase) in notes[0] and "not read as a date" in notes[0]
    assert parse_query(query, today=today).date_notes == notes


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    notes = {
        "2026-10-23.md": "# 2026-10-23\n\n- Plan: dentist appointment at 9.\n",
        "2026-10-16.md": "# 2026-10-16\n\n- Dentist called back; the plan is fine.\n",
        "2026-10-21.md": "# 2026-10-21\n\n- Cooked lentil soup.\n",
    }
    for name, text in notes.items():
        (ws / "memory" / name).write_text(text, encoding="utf-8")
    (ws / "MEMORY.md").write_text("# Memory\n\n- I plan my week on Sundays.\n", encoding="utf-8")
    return ws


@pytest.mark.parametrize("query", ["plan next Friday", "plan for tomorrow", "sledeći petak plan", "明天 plan"])
def test_a_forward_phrase_lifts_the_coming_day(workspace: Path, monkeypatch: pytest.MonkeyPatch, query: str) -> None:
    monkeypatch.setenv(TODAY_ENV, "2026-10-22")
    with MemoryEngine(hash_config(workspace)) as eng:
        resp = eng.search(query, mode="keyword")
    assert resp.results[0].path == "memory/2026-10-23.md"


@pytest.mark.parametrize("today", ["9999-12-31", "0001-01-01"])
def test_a_search_at_the_end_of_the_calendar_runs_with_a_note(workspace: Path, monkeypatch: pytest.MonkeyPatch,
                                                              today: str) -> None:
    monkeypatch.setenv(TODAY_ENV, today)
    monkeypatch.setenv("MEMDECK_EMBEDDING_PROVIDER", "hash")
    with MemoryEngine(hash_config(workspace)) as eng:
        resp = eng.search("lentil soup tomorrow and yesterday", mode="keyword")
    assert resp.results and resp.results[0].path == "memory/2026-10-21.md"
    assert any("not read as a date" in w for w in resp.warnings)
    runner = CliRunner()
    as_json = runner.invoke(cli, ["--workspace", str(workspace), "search", "--json", "--mode", "keyword",
                                  "lentil tomorrow yesterday"])
    assert as_json.exit_code == 0, as_json.output
    payload = json.loads(as_json.stdout)
    assert payload["results"] and any("not read as a date" in w for w in payload["warnings"])
    text = runner.invoke(cli, ["--workspace", str(workspace), "search", "--mode", "keyword",
                                "lentil tomorrow yesterday"])
    assert text.exit_code == 0, text.output
    assert "lentil" in text.stdout.lower()
    assert "not read as a date" in text.stderr


@pytest.mark.parametrize("value", ["10000-01-01", "2026-02-30", "2026-1-5", "tomorrow", "+002026-10-22",
                                   "2026-10-22T10:00", "20261022", "2026-W43-4", "２０２６-１０-２２"])
def test_a_bad_pinned_today_is_a_note_and_the_search_runs(workspace: Path, monkeypatch: pytest.MonkeyPatch,
                                                          value: str) -> None:
    monkeypatch.setenv(TODAY_ENV, value)
    with MemoryEngine(hash_config(workspace)) as eng:
        resp = eng.search("lentil yesterday", mode="keyword")
    assert resp.results and any(TODAY_ENV in w and "YYYY-MM-DD" in w for w in resp.warnings)


@pytest.mark.parametrize(("value", "today"), [(" 2026-10-22 ", THU), ("2026-10-22\n", THU), ("", None)])
def test_a_pinned_today_is_read_with_its_spaces(monkeypatch: pytest.MonkeyPatch, value: str,
                                                today: date | None) -> None:
    monkeypatch.setenv(TODAY_ENV, value)
    assert pinned_today() == today


# -- fuzz: the "queries" boundary ---------------------------------------------------------------------------
_FRAGMENTS = st.sampled_from([
    "yesterday", "tomorrow", "next Friday", "Friday next week", "in 3 days", "3 days ago", "last week",
    "next month", "in March", "on the 31st", "Oct 5", "29 Feb", "2026-02-30", "9999-12-31", "0001-01-01",
    "5.10.", "31.12.", "3.12.", "v2.4.1", "10.0.0.1", "100天前", "3天后", "下周五", "上上周日", "下个月", "十二月三十一日",
    "sledeći petak", "za 5 dana", "pre 999 dana", "一百天前", "十万天后", "99999999999999999999 days ago", "最近一万天",
    "Friday after next", "next next week", "2026-10-23T10:00", "page 12.10.", "следећи", "прекосутра", "999 weeks ago", "in 400 weeks",
    '"', "*", "(", ")", ":", "^", "-", "NEAR(", "AND", "\x00", "\ud800", "e\u0301", "１０月５日", " ", "before",
])
QUERIES = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=()), max_size=80),
    st.lists(st.one_of(_FRAGMENTS, st.integers(0, 100000).map(str), st.text(max_size=6)), max_size=12).map(" ".join),
    st.lists(_FRAGMENTS, max_size=8).map("".join),
)
TODAYS = st.one_of(st.dates(), st.sampled_from([date.min, date.max, date(9999, 12, 25), date(1, 1, 6), THU]))
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(QUERIES, TODAYS)
def test_the_date_reader_never_raises(text: str, today: date) -> None:
    spans, notes = resolve_dates_noting(text, today)
    assert all("not read as a date" in n for n in notes)
    for span in spans:
        assert span.start <= span.end and text[span.where[0]:span.where[1]] == span.phrase
        span.to_json()
    parsed = parse_query(text, today=today)
    assert all(isinstance(n, str) for n in parsed.date_notes)
    query_dates(text, today)


@pytest.fixture(scope="module")
def demo_engine(tmp_path_factory: pytest.TempPathFactory) -> Any:
    import shutil

    from engine.demo import DEMO_SOURCE

    target = tmp_path_factory.mktemp("fuzz") / "demo"
    shutil.copytree(DEMO_SOURCE, target)
    with mock.patch.dict(os.environ, {"MEMDECK_HOME": str(tmp_path_factory.mktemp("home"))}), \
            MemoryEngine(hash_config(target)) as eng:
        eng.sync()
        yield eng


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(QUERIES, TODAYS)
def test_a_keyword_search_never_raises(demo_engine: MemoryEngine, text: str, today: date) -> None:
    with mock.patch.dict(os.environ, {TODAY_ENV: today.isoformat()}):
        resp = demo_engine.search(text, mode="keyword", ensure_fresh=False)
    assert isinstance(resp.results, tuple)
    json.dumps(resp.to_json())
