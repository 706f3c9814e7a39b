"""Tests for transcript reading, session listing, search text and flush state."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from engine.sessions.model import SessionInfo, SessionReadError, parse_timestamp, session_id_from_path
from engine.sessions.reader import MAX_TEXT_CHARS, read_transcript, session_search_text, summarize_transcript
from engine.sessions.sources import (
    flush_threshold,
    list_sessions,
    needs_flush,
    read_flush_state,
    resolve_sessions_dir,
    store_entry_for,
)
from memdeck.cli_sessions import SessionsContext, register, run_sessions

DATA = Path(__file__).parent / "data" / "transcripts"


def _line(**obj: object) -> str:
    return json.dumps(obj, separators=(",", ":"))


def _user(line_id: str, text: str, ts: str = "2026-01-16T14:31:00Z") -> str:
    return _line(
        type="message", id=line_id, parentId=None, timestamp=ts, message={"role": "user", "content": text}
    )


def _assistant(line_id: str, text: str, ts: str = "2026-01-16T14:31:05Z", total: int = 0) -> str:
    message = {"role": "assistant", "content": [{"type": "text", "text": text}]}
    if total:
        message["usage"] = {"input": total - 10, "output": 10, "totalTokens": total}
    return _line(type="message", id=line_id, parentId=None, timestamp=ts, message=message)


HEADER = _line(type="session", version=3, id="abc", timestamp="2026-01-16T14:30:00Z", cwd="/w")


# ---------------------------------------------------------------------------------------------
# The nasty-file table: every file reads without raising, and bad lines are recorded.


@pytest.mark.parametrize(
    ("name", "entries", "skipped", "version", "messages", "decode_errors"),
    [
        ("valid_v3.jsonl", 16, [], 3, 7, 0),
        (
            "invalid_json.jsonl",
            3,
            [
                (3, "invalid JSON"),
                (4, "not a JSON object (list)"),
                (5, "not a JSON object (int)"),
                (6, "message entry without a message object"),
                (7, "invalid JSON"),
            ],
            3,
            2,
            0,
        ),
        ("truncated_last.jsonl", 3, [(4, "truncated last line")], 3, 2, 0),
        ("unknown_types.jsonl", 8, [], 3, 3, 0),
        ("binary_garbage.jsonl", 3, [(3, "binary data")], 3, 2, 1),
        ("bom.jsonl", 2, [], 3, 1, 0),
        ("crlf.jsonl", 3, [], 3, 2, 0),
        ("non_utf8.jsonl", 3, [], 3, 2, 1),
        ("empty.jsonl", 0, [], None, 0, 0),
        ("blank_lines.jsonl", 0, [], None, 0, 0),
        ("v2_header.jsonl", 3, [], 2, 2, 0),
        ("search_text.jsonl", 7, [], 3, 3, 0),
    ],
)
def test_nasty_transcripts(
    name: str,
    entries: int,
    skipped: list[tuple[int, str]],
    version: int | None,
    messages: int,
    decode_errors: int,
) -> None:
    transcript = read_transcript(DATA / name)
    assert len(transcript.entries) == entries
    assert [
        (s.line, s.reason[: len(reason)]) for s, (_, reason) in zip(transcript.skipped, skipped, strict=True)
    ] == [(line, reason) for line, reason in skipped]
    assert (transcript.header.version if transcript.header else None) == version
    assert sum(1 for _ in transcript.messages()) == messages
    assert transcript.decode_errors == decode_errors
    summary = summarize_transcript(DATA / name)
    assert summary.message_count == messages
    assert summary.skipped == len(skipped)
    assert summary.size == (DATA / name).stat().st_size


def test_valid_v3_every_kind_parsed() -> None:
    t = read_transcript(DATA / "valid_v3.jsonl")
    assert [e.kind for e in t.entries] == [
        "session",
        "model_change",
        "thinking_level_change",
        "message",
        "message",
        "message",
        "message",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
        "message",
        "message",
        "message",
    ]
    assert [e.line for e in t.entries] == list(range(1, 17))
    assert t.header is not None
    assert (t.header.id, t.header.cwd, t.header.timestamp) == (
        "1f0c2d3e-4a5b-4c6d-8e7f-90a1b2c3d4e5",
        "/home/priya/work",
        "2026-01-16T14:30:00.000Z",
    )
    by_line = {e.line: e for e in t.entries}
    assert by_line[2].detail == "openai/gpt-5"
    assert by_line[3].detail == "high"
    user = by_line[4]
    assert user.message is not None and user.message.role == "user"
    assert user.message.text == "What's in my calendar tomorrow?"
    assert (user.id, user.parent_id) == ("00000003", "00000002")
    call = by_line[5].message
    assert call is not None
    assert call.thinking == "The user wants the calendar."
    assert call.text == "Let me check."
    assert len(call.tool_calls) == 1
    assert call.tool_calls[0].name == "calendar_list"
    assert call.tool_calls[0].id == "call_1"
    assert call.tool_calls[0].arguments == '{"day":"2026-01-17","tz":"Europe/Lisbon"}'
    assert call.stop_reason == "toolUse"
    assert call.usage is not None and call.usage.total_tokens == 1054 and call.usage.cost_total == 0.001
    assert (call.model, call.provider) == ("gpt-5", "openai")
    result = by_line[6].message
    assert result is not None and result.role == "toolResult" and result.tool_result is not None
    assert result.tool_result.tool_name == "calendar_list"
    assert result.tool_result.tool_call_id == "call_1"
    assert result.tool_result.is_error is False
    assert result.tool_result.text == "09:00 standup\n14:00 dentist"
    assert (by_line[8].summary, by_line[8].tokens_before) == ("User asked about the calendar.", 181234)
    assert by_line[9].summary == "Explored another branch."
    assert by_line[10].custom_type == "openclaw.cache-ttl"
    assert by_line[11].detail == "Injected context"
    assert by_line[12].detail == "calendar"
    assert by_line[13].detail == "Calendar chat"
    image = by_line[14].message
    assert image is not None and image.images == 1 and image.text == "Here is a photo"
    failed = by_line[15].message
    assert (
        failed is not None and failed.error_message == "upstream overloaded" and failed.stop_reason == "error"
    )
    assert failed.usage is not None and failed.usage.total_tokens == 2600  # summed when totalTokens is 0
    bash = by_line[16].message
    assert bash is not None and (bash.role, bash.raw_role, bash.text) == (
        "other",
        "bashExecution",
        "$ ls -la\ntotal 0",
    )
    assert t.compactions == 1
    assert t.last_message_time == datetime(2026, 1, 16, 15, 2, tzinfo=UTC)


def test_unknown_types_kept_as_unknown() -> None:
    t = read_transcript(DATA / "unknown_types.jsonl")
    assert [(e.kind, e.raw_type) for e in t.entries[1:4]] == [
        ("unknown", "future_thing"),
        ("unknown", None),
        ("unknown", None),
    ]
    assert t.entries[-1].kind == "unknown" and t.entries[-1].raw_type == "unknown"
    assert t.unknown_count == 4
    custom_role = t.entries[5].message
    assert custom_role is not None and (custom_role.role, custom_role.raw_role) == ("other", "custom")
    odd = t.entries[6].message
    assert odd is not None and odd.role == "assistant" and odd.text == "" and odd.usage is None


@pytest.mark.parametrize(
    ("name", "line", "text"),
    [
        ("bom.jsonl", 2, "BOM first line"),
        ("crlf.jsonl", 2, "Windows line ends"),
        ("non_utf8.jsonl", 2, "caf\ufffd au lait ☕"),
        ("binary_garbage.jsonl", 4, "After garbage"),
        ("truncated_last.jsonl", 3, "Will do."),
        ("invalid_json.jsonl", 8, "Still here."),
    ],
)
def test_good_lines_around_bad_ones_survive(name: str, line: int, text: str) -> None:
    t = read_transcript(DATA / name)
    entry = next(e for e in t.entries if e.line == line)
    assert entry.message is not None and entry.message.text == text


def test_v2_header_and_epoch_ms_timestamps() -> None:
    t = read_transcript(DATA / "v2_header.jsonl")
    assert t.header is not None and (t.header.version, t.header.id) == (2, "legacy-session-0001")
    assert t.entries[1].timestamp == "2025-11-02T08:00:00Z"
    assert t.entries[2].time == datetime(2025, 11, 2, 8, 0, 5, tzinfo=UTC)
    summary = summarize_transcript(DATA / "v2_header.jsonl")
    assert summary.last_message == datetime(2025, 11, 2, 8, 0, 5, tzinfo=UTC)
    assert summary.total_tokens == 15
    assert summary.header_id == "legacy-session-0001"


def test_line_over_one_megabyte_is_read_and_capped(tmp_path: Path) -> None:
    big = "x" * (1_500_000)
    result = {
        "role": "toolResult",
        "toolName": "dump",
        "content": [{"type": "text", "text": "y" * 2_100_000}],
    }
    path = tmp_path / "big.jsonl"
    path.write_text(
        "\n".join(
            [
                HEADER,
                _user("u1", big),
                _line(type="message", id="t1", message=result),
                _assistant("a1", "after the big ones"),
            ]
        )
        + "\n"
    )
    t = read_transcript(path)
    assert t.skipped == ()
    big_message = t.entries[1].message
    assert big_message is not None and len(big_message.text) == MAX_TEXT_CHARS and big_message.truncated
    tool = t.entries[2].message
    assert tool is not None and tool.tool_result is not None and len(tool.tool_result.text) == MAX_TEXT_CHARS
    last = t.entries[3].message
    assert last is not None and last.text == "after the big ones"


@pytest.mark.parametrize("trailing_newline", [True, False])
def test_line_over_the_limit_is_skipped_not_held(tmp_path: Path, trailing_newline: bool) -> None:
    huge = _user("u1", "z" * 5000)
    path = tmp_path / "huge.jsonl"
    lines = [HEADER, huge, _assistant("a1", "fine"), huge]
    path.write_text("\n".join(lines) + ("\n" if trailing_newline else ""))
    t = read_transcript(path, max_line_bytes=1000)
    assert [(s.line, s.reason.split(" (")[0]) for s in t.skipped] == [
        (2, "line too long"),
        (4, "line too long"),
    ]
    assert [e.line for e in t.entries] == [1, 3]
    assert t.line_count == 4
    assert summarize_transcript(path, max_line_bytes=1000).message_count == 1


def test_deeply_nested_json_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text(HEADER + "\n" + "[" * 200_000 + "\n" + _user("u1", "ok") + "\n")
    t = read_transcript(path)
    assert len(t.skipped) == 1 and t.skipped[0].line == 2
    assert [e.line for e in t.entries] == [1, 3]


def test_wrongly_typed_fields_never_crash(tmp_path: Path) -> None:
    path = tmp_path / "types.jsonl"
    rows = [
        _line(type="session", version="three", id=7, timestamp=12, cwd=None),
        _line(
            type="message", id=1, parentId=[], timestamp={"x": 1}, message={"role": 5, "content": {"a": 1}}
        ),
        _line(
            type="message",
            message={
                "role": "assistant",
                "content": [
                    None,
                    3,
                    "bare string",
                    {"type": "toolCall", "name": 9, "arguments": float("nan")},
                ],
                "usage": {"input": "1", "output": True, "totalTokens": 1e400, "cost": "free"},
                "provenance": "x",
            },
        ),
        _line(type="compaction", summary=5, tokensBefore="many"),
    ]
    path.write_text("\n".join(rows) + "\n")
    t = read_transcript(path)
    assert t.skipped == ()
    assert t.header is not None and (t.header.version, t.header.id, t.header.timestamp) == (None, None, None)
    odd = t.entries[1]
    assert odd.id is None and odd.message is not None and odd.message.role == "other"
    assistant = t.entries[2].message
    assert assistant is not None and assistant.text == "bare string"
    assert assistant.tool_calls[0].name == "?" and assistant.tool_calls[0].arguments == "NaN"
    assert assistant.usage is not None and assistant.usage.total_tokens == 0
    assert (t.entries[3].summary, t.entries[3].tokens_before) == ("", None)
    summarize_transcript(path)


@pytest.mark.parametrize("kind", ["missing", "folder"])
def test_unreadable_path_raises_session_read_error(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "nope.jsonl"
    if kind == "folder":
        path.mkdir()
    with pytest.raises(SessionReadError, match=r"nope\.jsonl"):
        read_transcript(path)
    with pytest.raises(SessionReadError):
        summarize_transcript(path)


def test_summary_matches_full_read() -> None:
    summary = summarize_transcript(DATA / "valid_v3.jsonl")
    assert summary.session_id == "valid_v3"
    assert summary.started == datetime(2026, 1, 16, 14, 30, tzinfo=UTC)
    assert summary.last_message == datetime(2026, 1, 16, 15, 2, tzinfo=UTC)
    assert (summary.message_count, summary.user_messages, summary.assistant_messages) == (7, 2, 3)
    assert summary.total_tokens == 2600
    assert summary.compactions == 1


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-01-16T14:30:00.000Z", datetime(2026, 1, 16, 14, 30, tzinfo=UTC)),
        ("2026-01-16T16:30:00+02:00", datetime(2026, 1, 16, 14, 30, tzinfo=UTC)),
        ("2026-01-16T14:30:00", datetime(2026, 1, 16, 14, 30, tzinfo=UTC)),
        (1768573800000, datetime(2026, 1, 16, 14, 30, tzinfo=UTC)),
        ("yesterday", None),
        (None, None),
        (True, None),
        (1e300, None),
        ("x" * 100, None),
    ],
)
def test_parse_timestamp(value: object, expected: datetime | None) -> None:
    assert parse_timestamp(value) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("abc.jsonl", "abc"),
        ("abc-topic-42.jsonl", "abc-topic-42"),
        ("abc.jsonl.reset.2026-01-16T14-30-00.000Z", "abc"),
        ("export.json", "export"),
    ],
)
def test_session_id_from_path(name: str, expected: str) -> None:
    assert session_id_from_path(Path(name)) == expected


# ---------------------------------------------------------------------------------------------
# Search text (§8.2)


def test_session_search_text_openclaw_case() -> None:
    content, line_map = session_search_text(read_transcript(DATA / "search_text.jsonl"))
    assert content == "User: Hello world\nAssistant: Hi there, how can I help?\nUser: Tell me a joke"
    assert line_map == [4, 6, 7]


def test_session_search_text_skips_tools_thinking_and_redacts(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    secret = "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
    pem = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----"
    rows = [
        HEADER,
        _user("u1", f"my token is {secret}"),
        _line(
            type="message",
            message={
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "secret thoughts"},
                    {"type": "toolCall", "id": "c", "name": "x", "arguments": {}},
                ],
            },
        ),
        _line(
            type="message", message={"role": "toolResult", "content": [{"type": "text", "text": "tool out"}]}
        ),
        _user("u2", f"key:\n{pem}"),
        _user("u3", "   \n  "),
    ]
    path.write_text("\n".join(rows) + "\n")
    content, line_map = session_search_text(read_transcript(path))
    assert content == (
        "User: my token is ghp_Ab…6789\n"
        "User: key: -----BEGIN PRIVATE KEY----- …redacted… -----END PRIVATE KEY-----"
    )
    assert line_map == [2, 5]


def test_session_search_text_of_empty_transcript() -> None:
    assert session_search_text(read_transcript(DATA / "empty.jsonl")) == ("", [])


# ---------------------------------------------------------------------------------------------
# Sessions folder


@pytest.mark.parametrize(
    ("explicit", "env", "config", "expected"),
    [
        ("/x/explicit", "/x/env", "/x/config", "/x/explicit"),
        (None, "/x/env", "/x/config", "/x/env"),
        (None, None, "/x/config", "/x/config"),
        (None, None, None, "HOME/.openclaw/agents/ops/sessions"),
    ],
)
def test_resolve_sessions_dir_precedence(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    explicit: str | None,
    env: str | None,
    config: str | None,
    expected: str,
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("OPENCLAW_STATE_DIR", raising=False)  # the default: ~/.openclaw
    if env is None:
        monkeypatch.delenv("MEMDECK_SESSIONS", raising=False)
    else:
        monkeypatch.setenv("MEMDECK_SESSIONS", env)
    result = resolve_sessions_dir(
        Path(explicit) if explicit else None, Path(config) if config else None, agent="ops"
    )
    assert result == Path(expected.replace("HOME", str(tmp_path)))


def _ms(when: datetime) -> int:
    return int(when.timestamp() * 1000)


@pytest.fixture
def sessions_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "aaaa1111-main.jsonl").write_text(
        "\n".join(
            [
                HEADER,
                _user("u1", "hi", ts="2026-01-16T10:00:00Z"),
                _assistant("a1", "hello", ts="2026-01-16T10:00:05Z", total=5000),
            ]
        )
        + "\n"
    )
    (folder / "bbbb2222-group.jsonl").write_text(
        "\n".join(
            [
                HEADER,
                _user("u1", "team", ts="2026-01-17T09:00:00Z"),
                _assistant("a1", "ok", ts="2026-01-17T09:00:05Z", total=181000),
                "{broken",
            ]
        )
        + "\n"
    )
    (folder / "cccc3333.jsonl.reset.2026-01-10T08-00-00.000Z").write_text(
        HEADER + "\n" + _user("u1", "old", ts="2026-01-10T07:00:00Z") + "\n"
    )
    (folder / "notes.txt").write_text("not a transcript")
    (folder / "sub").mkdir()
    (folder / "sub" / "dddd.jsonl").write_text(HEADER + "\n")
    store = {
        "agent:main:main": {
            "sessionId": "aaaa1111-main",
            "updatedAt": _ms(datetime(2026, 1, 16, 10, 0, tzinfo=UTC)),
            "sessionFile": str(folder / "aaaa1111-main.jsonl"),
            "chatType": "direct",
            "totalTokens": 7000,
            "contextTokens": 128000,
            "compactionCount": 2,
            "memoryFlushAt": _ms(datetime(2026, 1, 15, 12, 0, tzinfo=UTC)),
            "memoryFlushCompactionCount": 1,
        },
        "agent:main:telegram:group:42": {
            "sessionId": "bbbb2222-group",
            "updatedAt": 1,
            "chatType": "group",
            "channel": "telegram",
            "displayName": "Team chat",
            "totalTokens": 999,
            "totalTokensFresh": False,
        },
        "cron:nightly": "not an object",
    }
    (folder / "sessions.json").write_text(json.dumps(store))
    return folder


def test_list_sessions_joins_store_archives_and_flush_record(sessions_dir: Path, tmp_path: Path) -> None:
    state = tmp_path / "flush-state.json"
    state.write_text(json.dumps({"bbbb2222-group": "2026-01-17T09:30:00Z", "bogus": "not a time"}))
    infos = list_sessions(sessions_dir, state)
    assert [(i.session_id, i.archived) for i in infos] == [
        ("bbbb2222-group", False),
        ("aaaa1111-main", False),
        ("cccc3333", True),
    ]
    group, main, archived = infos
    assert (group.session_key, group.chat_type, group.channel, group.display_name) == (
        "agent:main:telegram:group:42",
        "group",
        "telegram",
        "Team chat",
    )
    assert group.total_tokens == 181000  # the store's total is stale: the transcript's usage wins
    assert group.skipped_lines == 1
    assert group.flushed and group.flushed_at == datetime(2026, 1, 17, 9, 30, tzinfo=UTC)
    assert (main.session_key, main.total_tokens, main.context_tokens, main.compactions) == (
        "agent:main:main",
        7000,
        128000,
        2,
    )
    assert main.memory_flush_at == datetime(2026, 1, 15, 12, 0, tzinfo=UTC)
    assert main.memory_flush_compaction_count == 1 and main.flushed and main.flushed_at is None
    assert main.started == datetime(2026, 1, 16, 14, 30, tzinfo=UTC)
    assert main.last_message == datetime(2026, 1, 16, 10, 0, 5, tzinfo=UTC)
    assert main.message_count == 2
    assert archived.session_key is None and not archived.flushed and archived.message_count == 1


def test_list_sessions_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(SessionReadError, match="not found"):
        list_sessions(tmp_path / "missing")


def test_list_sessions_with_corrupt_store_and_state(sessions_dir: Path, tmp_path: Path) -> None:
    (sessions_dir / "sessions.json").write_bytes(b"\x00\xff{not json")
    state = tmp_path / "flush-state.json"
    state.write_text("[1, 2]")
    infos = list_sessions(sessions_dir, state)
    assert len(infos) == 3
    assert all(i.session_key is None and i.flushed_at is None for i in infos)


def test_store_entry_for(sessions_dir: Path) -> None:
    entry = store_entry_for(sessions_dir / "bbbb2222-group.jsonl")
    assert entry is not None and (entry.session_key, entry.channel) == (
        "agent:main:telegram:group:42",
        "telegram",
    )
    assert store_entry_for(sessions_dir / "cccc3333.jsonl.reset.2026-01-10T08-00-00.000Z") is None


def test_read_flush_state_handles_missing_and_bad(tmp_path: Path) -> None:
    assert read_flush_state(None) == {}
    assert read_flush_state(tmp_path / "none.json") == {}
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert read_flush_state(bad) == {}


# ---------------------------------------------------------------------------------------------
# Flush state (§10)

T0 = datetime(2026, 1, 16, 12, 0, tzinfo=UTC)


def _info(**kwargs: object) -> SessionInfo:
    base: dict[str, object] = {
        "session_id": "s",
        "path": Path("s.jsonl"),
        "archived": False,
        "size": 1000,
        "mtime": T0,
        "last_message": T0,
    }
    base.update(kwargs)
    return SessionInfo(**base)  # type: ignore[arg-type]


def test_flush_threshold_defaults() -> None:
    assert flush_threshold() == 176_000
    assert flush_threshold(100, 10, 5) == 85


@pytest.mark.parametrize(
    ("info", "kwargs", "expected"),
    [
        (_info(total_tokens=85, context_tokens=100), {"reserve": 10, "soft": 5}, True),  # boundary inclusive
        (_info(total_tokens=84, context_tokens=100), {"reserve": 10, "soft": 5}, False),
        (_info(total_tokens=176_000), {}, True),  # window falls back to 200000
        (_info(total_tokens=175_999), {}, False),
        (_info(total_tokens=90), {"context_window": 100, "reserve": 10, "soft": 5}, True),
        (_info(total_tokens=None), {}, False),
        (_info(total_tokens=180_000, flushed_at=T0 + timedelta(minutes=1)), {}, False),
        (_info(total_tokens=180_000, flushed_at=T0 - timedelta(minutes=1)), {}, True),
        (
            _info(total_tokens=180_000, memory_flush_at=T0, memory_flush_compaction_count=3, compactions=3),
            {},
            False,
        ),
        (
            _info(
                total_tokens=180_000,
                memory_flush_at=T0 - timedelta(hours=1),
                memory_flush_compaction_count=2,
                compactions=3,
            ),
            {},
            True,
        ),
        (_info(total_tokens=180_000, memory_flush_compaction_count=0, compactions=0), {}, True),  # not #47143
        (_info(total_tokens=10, size=3 * 1024 * 1024), {}, True),  # forced by transcript size
        (_info(total_tokens=10, size=3 * 1024 * 1024), {"force_bytes": 0}, False),
    ],
)
def test_needs_flush(info: SessionInfo, kwargs: dict[str, int], expected: bool) -> None:
    assert needs_flush(info, **kwargs) is expected


# ---------------------------------------------------------------------------------------------
# memdeck sessions (CLI)


def _ctx(tmp_path: Path, sessions: Path) -> SessionsContext:
    return SessionsContext(workspace=tmp_path / "ws", sessions_dir=sessions, home=tmp_path / "home")


def test_run_sessions_json(sessions_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_sessions(_ctx(tmp_path, sessions_dir), as_json=True) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["sessionsDir"] == str(sessions_dir)
    rows = {row["sessionId"]: row for row in payload["sessions"]}
    assert set(rows) == {"aaaa1111-main", "bbbb2222-group", "cccc3333"}
    assert rows["bbbb2222-group"]["needsFlush"] is True
    assert rows["bbbb2222-group"]["totalTokens"] == 181000
    assert rows["cccc3333"]["archived"] is True
    assert rows["aaaa1111-main"]["memoryFlushAt"] == "2026-01-15T12:00:00Z"
    assert rows["aaaa1111-main"]["lastMessage"] == "2026-01-16T10:00:05Z"


def test_sessions_command_table_via_click(sessions_dir: Path, tmp_path: Path) -> None:
    calls: list[Path | None] = []

    def make_context(sessions_dir: Path | None) -> SessionsContext:
        calls.append(sessions_dir)
        return _ctx(tmp_path, sessions_dir or tmp_path / "elsewhere")

    group = click.Group("memdeck")
    register(group, make_context)
    result = CliRunner().invoke(group, ["sessions", "--sessions", str(sessions_dir)])
    assert result.exit_code == 0, result.output
    assert calls == [sessions_dir]
    lines = result.output.splitlines()
    assert lines[0].split() == ["ID", "STARTED", "LAST", "MESSAGE", "MSGS", "TOKENS", "FLUSHED", "NOTES", "TITLE"]
    assert lines[1].startswith("bbbb2222 ") and "181,000" in lines[1] and "needs flush" in lines[1]
    assert "1 bad line" in lines[1]
    assert lines[2].startswith("aaaa1111 ") and "openclaw" in lines[2]
    assert lines[3].startswith("cccc3333 ") and "archived" in lines[3]


def test_sessions_command_missing_folder(tmp_path: Path) -> None:
    group = click.Group("memdeck")
    register(group, lambda sessions_dir: _ctx(tmp_path, tmp_path / "missing"))
    result = CliRunner().invoke(group, ["sessions"])
    assert result.exit_code == 1
    assert "sessions folder not found" in result.output


def test_sessions_command_empty_folder(tmp_path: Path) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    group = click.Group("memdeck")
    register(group, lambda sessions_dir: _ctx(tmp_path, folder))
    result = CliRunner().invoke(group, ["sessions"])
    assert result.exit_code == 0 and "No sessions in" in result.output
    result = CliRunner().invoke(group, ["sessions", "--json"])
    assert json.loads(result.output)["sessions"] == []


def test_ids_sharing_a_prefix_are_shown_long_enough(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    for name in ("deadbeef-0001", "deadbeef-0002"):
        (folder / f"{name}.jsonl").write_text(HEADER + "\n")
    os.utime(folder / "deadbeef-0001.jsonl", (1_700_000_000, 1_700_000_000))
    group = click.Group("memdeck")
    register(group, lambda sessions_dir: _ctx(tmp_path, folder))
    result = CliRunner().invoke(group, ["sessions"])
    assert result.exit_code == 0
    ids = [line.split()[0] for line in result.output.splitlines()[1:]]
    assert sorted(ids) == ["deadbeef-0001", "deadbeef-0002"]
