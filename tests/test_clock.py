"""One clock (issue 23): every door's writes and every query's "today" are in ``[memory] timezone``.

Near midnight in a zone other than the system's, a flush (the engine's, ``memdeck flush``'s) and an MCP
``memory_append`` land in the configured zone's daily note, with a heading time of that same day.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zoneinfo
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from engine.api import Draft, DraftItem, MemoryEngine, MemoryFiles, daily_heading
from engine.clock import NOW_ENV, TODAY_ENV, Clock, ClockError
from engine.config import Config, load_config
from memdeck.cli_sessions import SessionsContext, run_flush
from memdeck.mcp import MemoryService

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data" / "transcripts"
SESSION = "7c1e9a42-5b3d-4f0e-9a1b-2c3d4e5f6a7b"
LA, TOKYO = "America/Los_Angeles", "Asia/Tokyo"

# (the system's zone, [memory] timezone, the wall time in the configured zone): a minute before and after its
# midnight. Tokyo is 17 h ahead of Los Angeles in March: at 00:01 in Tokyo it is still the day before in Los
# Angeles, and at 23:59 in Los Angeles it is already the next day in Tokyo — the minutes the old doors split.
MIDNIGHT = [
    pytest.param(LA, TOKYO, datetime(2026, 3, 1, 23, 59), id="tokyo-23:59-on-an-LA-system"),
    pytest.param(LA, TOKYO, datetime(2026, 3, 2, 0, 1), id="tokyo-00:01-on-an-LA-system"),
    pytest.param(TOKYO, LA, datetime(2026, 3, 1, 23, 59), id="LA-23:59-on-a-tokyo-system"),
    pytest.param(TOKYO, LA, datetime(2026, 3, 2, 0, 1), id="LA-00:01-on-a-tokyo-system"),
]


def _instant(zone: str, wall: datetime) -> datetime:
    return wall.replace(tzinfo=zoneinfo.ZoneInfo(zone))


def _config(tmp_path: Path, zone: str, workspace: Path | None = None) -> Config:
    return load_config(workspace=workspace or tmp_path / "ws", home=tmp_path / "home",
                       sessions_dir=tmp_path / "sessions",
                       overrides={"memory": {"timezone": zone}, "embedding": {"provider": "none"}})


def _sessions(tmp_path: Path) -> Path:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    shutil.copy(DATA / "chat_preferences.jsonl", sessions / f"{SESSION}.jsonl")
    return sessions


def _draft() -> Draft:
    return Draft(items=(DraftItem("I prefer tea", "fact", "3f2a9c1e-aaaa", 4),), session_id="3f2a9c1e-aaaa",
                 method="extractive")


def _same_day(path: Path, wall: datetime) -> None:
    """The daily note of ``wall``'s day, headed with that day, holding a flush headed with ``wall``'s time."""
    assert path.name == f"{wall:%Y-%m-%d}.md"
    text = path.read_text(encoding="utf-8")
    assert text.startswith(daily_heading(wall.date()) + "\n")
    assert f"\n## {wall:%H:%M} — Memory flush from session " in text


# ---------------------------------------------------------------------------------------------
# The clock itself


def test_the_zone_is_the_configured_one(tmp_path: Path) -> None:
    assert Clock.for_config(_config(tmp_path, TOKYO)).zone == zoneinfo.ZoneInfo(TOKYO)
    fixed = datetime(2026, 3, 1, 15, 0, tzinfo=zoneinfo.ZoneInfo(LA))
    clock = Clock.for_config(_config(tmp_path, TOKYO), source=lambda: fixed)
    assert clock.now() == fixed and clock.now().tzinfo == zoneinfo.ZoneInfo(TOKYO)
    assert clock.today() == date(2026, 3, 2)  # 15:00 in Los Angeles is 08:00 the next day in Tokyo


def test_a_pinned_today_keeps_the_wall_time_and_takes_that_days_offset(monkeypatch: pytest.MonkeyPatch) -> None:
    winter = datetime(2026, 1, 15, 23, 59, 30, tzinfo=zoneinfo.ZoneInfo(LA))
    clock = Clock(zoneinfo.ZoneInfo(LA), source=lambda: winter)
    monkeypatch.setenv(TODAY_ENV, "2026-07-04")
    now = clock.now()
    assert (now.date(), now.hour, now.minute, now.second) == (date(2026, 7, 4), 23, 59, 30)
    assert now.utcoffset() == timedelta(hours=-7)  # summer time on the pinned day, not January's -8
    assert clock.today() == date(2026, 7, 4)
    assert clock.instant() == winter  # the pin moves "now", never the instant it is read from


def test_memdeck_now_stands_in_for_the_system_time(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock(zoneinfo.ZoneInfo(TOKYO))
    monkeypatch.setenv(NOW_ENV, "2026-03-01T07:01:00-08:00")  # an offset: that instant, shown in Tokyo
    assert clock.now() == datetime(2026, 3, 2, 0, 1, tzinfo=zoneinfo.ZoneInfo(TOKYO))
    monkeypatch.setenv(NOW_ENV, "2026-03-01 23:59")  # no offset: a wall time in the clock's zone
    assert clock.now() == datetime(2026, 3, 1, 23, 59, tzinfo=zoneinfo.ZoneInfo(TOKYO))
    monkeypatch.setenv(TODAY_ENV, "2026-10-22")  # both: the pinned day at MEMDECK_NOW's time of day
    assert clock.now() == datetime(2026, 10, 22, 23, 59, tzinfo=zoneinfo.ZoneInfo(TOKYO))
    injected = Clock(zoneinfo.ZoneInfo(TOKYO), source=lambda: datetime(2030, 1, 1, 12, 0, tzinfo=UTC))
    monkeypatch.delenv(TODAY_ENV)
    assert injected.now() == datetime(2030, 1, 1, 21, 0, tzinfo=zoneinfo.ZoneInfo(TOKYO))  # injected wins


@pytest.mark.parametrize(("var", "value", "form"), [
    (TODAY_ENV, "22.10.2026", "YYYY-MM-DD"), (TODAY_ENV, "20261022", "YYYY-MM-DD"),
    (NOW_ENV, "2026-10-22", "ISO 8601"), (NOW_ENV, "tomorrow at noon", "ISO 8601"),
])
def test_a_clock_variable_that_is_no_date_says_so(monkeypatch: pytest.MonkeyPatch, var: str, value: str,
                                                  form: str) -> None:
    monkeypatch.setenv(var, value)
    with pytest.raises(ClockError, match=form) as raised:
        Clock(zoneinfo.ZoneInfo(TOKYO)).now()
    assert var in str(raised.value) and isinstance(raised.value, ValueError)


# ---------------------------------------------------------------------------------------------
# Flushes near midnight, in a zone other than the system's


@pytest.mark.parametrize(("system", "zone", "wall"), MIDNIGHT)
def test_engine_flush_lands_in_the_configured_day(tmp_path: Path, system_zone: Callable[[str], None],
                                                  system: str, zone: str, wall: datetime) -> None:
    system_zone(system)
    instant = _instant(zone, wall)
    memory = MemoryFiles(_config(tmp_path, zone), clock=Clock.for_config(_config(tmp_path, zone),
                                                                        source=lambda: instant))
    now = memory.now()
    written = memory.append_flush("3f2a9c1e-aaaa", memory.render_flush(_draft(), now), now)
    assert written.rel == f"memory/{wall:%Y-%m-%d}.md"
    _same_day(written.path, wall)


@pytest.mark.parametrize(("system", "zone", "wall"), MIDNIGHT)
def test_cli_flush_at_the_system_clock_lands_in_the_configured_day(
        tmp_path: Path, system_zone: Callable[[str], None], capsys: pytest.CaptureFixture[str],
        system: str, zone: str, wall: datetime) -> None:
    """``run_flush`` given the time as the system clock reads it (what ``memdeck flush`` used to pick its day
    file by) still writes the configured zone's day."""
    system_zone(system)
    sessions = _sessions(tmp_path)
    config = _config(tmp_path, zone)
    ctx = SessionsContext(config.workspace, sessions, config.home, config=config)
    system_now = _instant(zone, wall).astimezone(zoneinfo.ZoneInfo(system))
    assert run_flush(ctx, "7c1e", method="extractive", day="today", as_json=True, now=system_now) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["path"] == f"memory/{wall:%Y-%m-%d}.md" and payload["appended"] is True
    assert payload["text"].startswith(f"## {wall:%H:%M} — Memory flush from session 7c1e9a42\n")
    _same_day(config.workspace / payload["path"], wall)


@pytest.mark.parametrize(("system", "zone", "wall"), MIDNIGHT)
def test_memdeck_flush_in_a_child_process_lands_in_the_configured_day(
        tmp_path: Path, system: str, zone: str, wall: datetime) -> None:
    """``memdeck flush`` with the child's ``TZ`` in one zone and ``[memory] timezone`` in the other, at a time
    set by ``MEMDECK_NOW`` (written as the system's clock shows it, with its offset)."""
    sessions = _sessions(tmp_path)
    home, workspace = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    workspace.mkdir()
    (home / "config.toml").write_text(f'[memory]\ntimezone = "{zone}"\n\n[embedding]\nprovider = "none"\n',
                                      encoding="utf-8")
    system_now = _instant(zone, wall).astimezone(zoneinfo.ZoneInfo(system))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDECK_")}
    env.update(MEMDECK_HOME=str(home), TZ=system, MEMDECK_NOW=system_now.isoformat(), PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-m", "memdeck.cli", "--workspace", str(workspace), "--sessions",
                          str(sessions), "flush", "7c1e", "--extractive", "--day", "today", "--json"],
                         capture_output=True, text=True, env=env, cwd=REPO, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    assert payload["path"] == f"memory/{wall:%Y-%m-%d}.md" and payload["appended"] is True
    _same_day(workspace / payload["path"], wall)


def test_a_pinned_today_dates_the_flush_as_it_dates_a_query(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """``MEMDECK_TODAY`` (the evals' "today") names the daily note a flush writes, at the clock's time of day."""
    config = _config(tmp_path, TOKYO)
    ctx = SessionsContext(config.workspace, _sessions(tmp_path), config.home, config=config)
    monkeypatch.setenv(NOW_ENV, "2026-03-01T23:59:00+09:00")
    monkeypatch.setenv(TODAY_ENV, "2026-10-22")
    assert run_flush(ctx, "7c1e", method="extractive", day="today", as_json=True) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["path"] == "memory/2026-10-22.md"
    _same_day(config.workspace / payload["path"], datetime(2026, 10, 22, 23, 59))


def test_a_bad_clock_variable_fails_the_flush_before_it_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    config = _config(tmp_path, TOKYO)
    ctx = SessionsContext(config.workspace, _sessions(tmp_path), config.home, config=config)
    monkeypatch.setenv(TODAY_ENV, "soon")
    assert run_flush(ctx, "7c1e", method="extractive", as_json=True) == 1
    assert TODAY_ENV in json.loads(capsys.readouterr().out)["error"]
    assert not config.workspace.exists()


# ---------------------------------------------------------------------------------------------
# MCP memory_append, session notes and a query's "today" read the same clock


@pytest.mark.parametrize(("system", "zone", "wall"), MIDNIGHT)
def test_mcp_append_writes_the_configured_days_note(demo_workspace: Path, tmp_path: Path,
                                                    system_zone: Callable[[str], None],
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    system: str, zone: str, wall: datetime) -> None:
    system_zone(system)
    monkeypatch.setenv(NOW_ENV, _instant(zone, wall).astimezone(zoneinfo.ZoneInfo(system)).isoformat())
    service = MemoryService(_config(tmp_path, zone, demo_workspace), allow_write=True)
    service.ready.clear()  # no index needed: the append is what is tested
    out = service.append({"text": "- The heron feeder moved to the east pond."})
    assert not out.is_error, out.payload
    rel = f"memory/{wall:%Y-%m-%d}.md"
    assert out.payload["path"] == rel and out.payload["created"] is True
    text = (demo_workspace / rel).read_text(encoding="utf-8")
    assert text == f"{daily_heading(wall.date())}\n\n- The heron feeder moved to the east pond.\n"
    service.stop()


def test_mcp_append_with_a_bad_clock_variable_is_an_error_payload(demo_workspace: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NOW_ENV, "noon")
    service = MemoryService(_config(tmp_path, TOKYO, demo_workspace), allow_write=True)
    out = service.append({"text": "- something"})
    assert out.is_error and NOW_ENV in out.payload["error"]
    service.stop()


def test_session_note_review_stamp_and_query_today_read_the_clock(tmp_path: Path,
                                                                  system_zone: Callable[[str], None]) -> None:
    system_zone(LA)
    wall = datetime(2026, 3, 2, 0, 1)  # Tokyo; still 1 March on the system
    config = _config(tmp_path, TOKYO)
    clock = Clock.for_config(config, source=lambda: _instant(TOKYO, wall))
    from engine.sessions.reader import read_transcript

    memory = MemoryFiles(config, clock=clock)
    note = memory.write_session_note(read_transcript(DATA / "chat_preferences.jsonl"), method="extractive")
    assert note.rel == "memory/2026-03-02-0001.md"
    assert note.text.startswith("# Session: 2026-03-02 00:01:00 Asia/Tokyo\n")
    engine = MemoryEngine(config, clock=clock)
    try:
        warnings: list[str] = []
        assert engine._query_today(warnings) == date(2026, 3, 2) and warnings == []
    finally:
        engine.close()
    from engine.review.actions import review_today

    assert review_today(memory) == date(2026, 3, 2)


def test_recovery_and_conflict_copies_are_named_by_the_clock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             system_zone: Callable[[str], None]) -> None:
    system_zone(LA)
    monkeypatch.setenv(NOW_ENV, "2026-03-02T00:01:00+09:00")
    config = _config(tmp_path, TOKYO)
    from engine.api import save_recovery

    copy = save_recovery(config, "MEMORY.md", "unsaved", None, "SIGTERM")
    assert copy.name.startswith("20260302-000100-")
    assert json.loads(copy.read_text(encoding="ascii"))["saved_at"] == "2026-03-02T00:01:00"
    (config.workspace).mkdir(parents=True)
    (config.workspace / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    aside = MemoryFiles(config).write_copy("MEMORY.md", "mine\n")
    assert aside.name == "MEMORY.mine-20260302-000100.md"


# ---------------------------------------------------------------------------------------------
# Times shown: in the zone the notes are dated in, not the system's


def test_times_shown_are_in_the_configured_zone(tmp_path: Path, system_zone: Callable[[str], None],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """``memdeck sessions``, the TUI's session tree and transcript and the status pane's sync time show the
    configured zone's time: a session started at 00:01 in Tokyo is not listed on the day before (Los Angeles)."""
    from memdeck.cli_sessions import run_sessions
    from tui.bridge import Bridge
    from tui.widgets.index_status import format_clock
    from tui.widgets.transcript_layout import format_stamp

    system_zone(LA)
    sessions = _sessions(tmp_path)
    config = _config(tmp_path, TOKYO)
    ctx = SessionsContext(config.workspace, sessions, config.home, config=config)
    info = ctx.memory().list_sessions()[0]
    assert info.started is not None and info.last_activity is not None
    tokyo = zoneinfo.ZoneInfo(TOKYO)
    shown, system = info.started.astimezone(tokyo), info.started.astimezone(zoneinfo.ZoneInfo(LA))
    assert f"{shown:%Y-%m-%d %H:%M}" != f"{system:%Y-%m-%d %H:%M}"
    assert run_sessions(ctx, as_json=False) == 0
    table = capsys.readouterr().out
    assert f"{shown:%Y-%m-%d %H:%M}" in table and f"{system:%Y-%m-%d %H:%M}" not in table
    bridge = Bridge(config)
    assert bridge.timezone.utcoffset(info.started) == tokyo.utcoffset(info.started)
    entries, problem = bridge._list_sessions()
    assert problem is None
    last = info.last_activity.astimezone(tokyo)
    assert [entry.label[:10] for entry in entries] == [f"{last:%Y-%m-%d}"]
    stamp = info.started.isoformat()
    assert format_stamp(stamp, tokyo) == f"{shown:%H:%M:%S}" != format_stamp(stamp)
    at = info.started.timestamp()
    assert format_clock(at, tokyo) == f"{shown:%H:%M:%S}" != format_clock(at)
