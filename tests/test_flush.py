"""Tests for session notes, the extractive drafter, atomic appends, the flush record and `memdeck flush`."""

from __future__ import annotations

import json
import os
import re
import shutil
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import click
import pytest
from click.testing import CliRunner

from engine.memory.append import append_flush, plan_flush, record_flush, render_flush_block, split_preview
from engine.memory.drafting import Draft, DraftItem, clean_statement, draft_extractive
from engine.memory.saving import FlushError
from engine.memory.session_notes import build_session_note, note_slug, write_session_note
from engine.memory.slugs import clean_slug, keyword_slug
from engine.sessions.model import SessionReadError, Transcript
from engine.sessions.reader import read_transcript
from engine.sessions.sources import find_transcript as resolve_session
from engine.sessions.sources import read_flush_state
from memdeck.cli_sessions import SessionsContext, register, run_flush

DATA = Path(__file__).parent / "data" / "transcripts"
NOW = datetime(2026, 2, 10, 14, 30, 5, tzinfo=UTC)


def _line(**obj: object) -> str:
    return json.dumps(obj, separators=(",", ":"))


def _msg(role: str, content: object, **extra: object) -> str:
    return _line(
        type="message", timestamp="2026-02-10T09:00:00Z", message={"role": role, "content": content, **extra}
    )


def _transcript(tmp_path: Path, rows: list[str], name: str = "3f2a9c1e-aaaa-bbbb.jsonl") -> Transcript:
    path = tmp_path / name
    header = _line(type="session", version=3, id="3f2a9c1e", timestamp="2026-02-10T09:00:00Z", cwd="/")
    path.write_text("\n".join([header, *rows]) + "\n")
    return read_transcript(path)


@pytest.fixture
def chat() -> Transcript:
    return read_transcript(DATA / "chat_preferences.jsonl")


# ---------------------------------------------------------------------------------------------
# Session notes


def test_session_note_format_matches_openclaw(tmp_path: Path) -> None:
    t = _transcript(
        tmp_path,
        [
            _msg("user", "Hello there"),
            _msg("assistant", [{"type": "text", "text": "Hi! How can I help?"}]),
        ],
    )
    note = build_session_note(t, "agent:main:main", "telegram", now=NOW)
    assert note == (
        "# Session: 2026-02-10 14:30:05 UTC\n"
        "\n"
        "- **Session Key**: agent:main:main\n"
        "- **Session ID**: 3f2a9c1e-aaaa-bbbb\n"
        "- **Source**: telegram\n"
        "\n"
        "## Conversation Summary\n"
        "\n"
        "user: Hello there\n"
        "assistant: Hi! How can I help?\n"
        "\n"
    )


def test_session_note_without_content_has_no_summary(tmp_path: Path) -> None:
    t = _transcript(tmp_path, [_msg("toolResult", [{"type": "text", "text": "x"}])])
    note = build_session_note(t, "", "", now=NOW)
    assert "## Conversation Summary" not in note
    assert "- **Session Key**: unknown\n" in note and "- **Source**: unknown\n" in note


def test_session_note_filters_before_slicing(tmp_path: Path) -> None:
    rows = [_msg("user", f"message {i}") for i in range(1, 6)]
    rows += [
        _msg("user", "/new"),
        _msg("user", "forwarded", provenance={"kind": "inter_session", "sourceTool": "sessions_send"}),
        _msg("assistant", [{"type": "toolCall", "id": "c", "name": "x", "arguments": {}}]),
        _msg("toolResult", [{"type": "text", "text": "tool output"}]),
        _msg(
            "assistant", [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "final answer"}]
        ),
        _line(type="custom", customType="x"),
    ]
    note = build_session_note(_transcript(tmp_path, rows), "k", "s", messages=3, now=NOW)
    body = note.split("## Conversation Summary\n\n", 1)[1]
    assert body == "user: message 4\nuser: message 5\nassistant: final answer\n\n"


def test_session_note_keeps_multiline_messages_inside_the_note(tmp_path: Path) -> None:
    secret = "sk-proj-AbCdEfGhIjKlMnOpQrSt1234"
    t = _transcript(tmp_path, [_msg("user", f"# Not a heading\n\nkey {secret}\nsecond line")])
    note = build_session_note(t, "k", "s", now=NOW)
    assert "user: # Not a heading\n    key sk-pro…1234\n    second line\n" in note
    assert secret not in note
    assert secret in build_session_note(t, "k", "s", now=NOW, redact=False)


def test_write_session_note_never_overwrites(tmp_path: Path, chat: Transcript) -> None:
    workspace = tmp_path / "ws"
    paths = [
        write_session_note(workspace, chat, "agent:main:main", "cli", now=NOW, slug="Vendor Pitch!")
        for _ in range(3)
    ]
    assert [p.name for p in paths] == [
        "2026-02-10-vendor-pitch.md",
        "2026-02-10-vendor-pitch-2.md",
        "2026-02-10-vendor-pitch-3.md",
    ]
    first = paths[0].read_bytes()
    assert all(p.read_bytes() == first for p in paths)
    assert sorted(os.listdir(workspace / "memory")) == sorted(p.name for p in paths)  # no temp files left


def test_write_session_note_keeps_an_existing_file(tmp_path: Path, chat: Transcript) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    existing = memory / "2026-02-10-mine.md"
    existing.write_text("my own notes\n")
    path = write_session_note(tmp_path, chat, now=NOW, slug="mine")
    assert path.name == "2026-02-10-mine-2.md"
    assert existing.read_text() == "my own notes\n"


def test_note_date_is_utc(tmp_path: Path, chat: Transcript) -> None:
    late_evening_west = datetime(2026, 2, 10, 22, 30, tzinfo=timezone(timedelta(hours=-5)))
    path = write_session_note(tmp_path, chat, now=late_evening_west, slug="x")
    assert path.name == "2026-02-11-x.md"
    assert path.read_text().startswith("# Session: 2026-02-11 03:30:00 UTC\n")


def test_slug_sources(tmp_path: Path, chat: Transcript) -> None:
    seen: list[str] = []

    def slugger(text: str) -> str:
        seen.append(text)
        return "  Dark Mode & Postgres  "

    def failing(text: str) -> str:
        raise RuntimeError("model down")

    assert note_slug(chat, now=NOW, slug="Given") == "given"
    assert note_slug(chat, now=NOW, slugger=slugger) == "dark-mode-postgres"
    assert "sk-proj-abcdefghij" not in seen[0] and "user: ok so I prefer dark mode" in seen[0]
    assert note_slug(chat, now=NOW, slugger=failing) == "work-postgres-analytics"
    assert note_slug(chat, now=NOW, slugger=lambda text: "!!!") == "work-postgres-analytics"
    assert note_slug(chat, messages=100, now=NOW) == "dark-mode-morning"
    empty = _transcript(tmp_path, [_msg("user", "ok thanks")])
    assert note_slug(empty, now=NOW) == "1430"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Vendor Pitch", "vendor-pitch"),
        ("  --API   design!!  ", "api-design"),
        ("café/ünïcode", "caf-n-code"),
        ("a-very-long-slug-that-goes-past-thirty-chars", "a-very-long-slug-that-goes"),
        ("abcdefghijklmnopqrstuvwxyz0123456789", "abcdefghijklmnopqrstuvwxyz0123"),
        ("exactly-thirty-characters-long-x", "exactly-thirty-characters-long"),
        ("", ""),
    ],
)
def test_clean_slug(text: str, expected: str) -> None:
    assert clean_slug(text) == expected
    assert len(clean_slug(text)) <= 30


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "We talked about the Kubernetes migration and Kubernetes upgrades and Helm charts",
            "kubernetes-migration-upgrades",
        ),
        ("hi hello thanks ok", ""),
        ("2026 2027 42", ""),
    ],
)
def test_keyword_slug(text: str, expected: str) -> None:
    assert keyword_slug(text) == expected


# ---------------------------------------------------------------------------------------------
# Extractive drafter

EXPECTED_CHAT_ITEMS = [
    ("preference", "I prefer dark mode in every dashboard you set up for me", 4),
    ("confirmed", "Switched all three Grafana dashboards to dark mode", 7),
    ("identity", "My name is Priya Raman and I work at Northwind Labs as a data engineer", 8),
    ("decision", "We decided to use Postgres 16 for the analytics warehouse, not MySQL", 10),
    ("confirmed", "User prefers Postgres for analytics work", 11),
    ("plan", "Remind me to renew the TLS certificate next Friday (Fri 13 Feb)", 12),
    ("instruction", "I'm vegetarian, so never suggest steakhouses", 13),
    ("fact", "My sister Anna lives in Porto and her birthday is March 3", 18),
    # line 23, "I'll remember that you're allergic to peanuts", is only the assistant's claim: the person's turn
    # before it (line 22) is about dark mode.
    ("plan", "My OPENAI_API_KEY=sk-pro…3456 — I need to rotate it by Friday (Fri 13 Feb)", 24),
]


def test_extractive_draft_of_a_realistic_chat(chat: Transcript) -> None:
    draft = draft_extractive(chat)
    assert [(i.kind, i.text, i.line) for i in draft.items] == EXPECTED_CHAT_ITEMS
    assert draft.method == "extractive" and draft.skipped_known == 0
    assert all(i.session_id == "chat_preferences" for i in draft.items)
    texts = " ".join(i.text for i in draft.items)
    for noise in (
        "good morning",
        "thanks",
        "lol",
        "/status",
        "weather",
        "tabs over spaces",
        "I like it",
        "layout",
    ):
        assert noise.lower() not in texts.lower()
    assert "sk-proj-abcdefghij" not in texts


def test_extractive_draft_is_deterministic(chat: Transcript) -> None:
    assert draft_extractive(chat) == draft_extractive(chat)


def test_extractive_draft_of_small_talk_is_empty() -> None:
    draft = draft_extractive(read_transcript(DATA / "chat_smalltalk.jsonl"))
    assert draft.is_empty and draft.considered > 0


def test_extractive_draft_skips_known_facts(chat: Transcript) -> None:
    asked: list[str] = []

    def known(text: str) -> bool:
        asked.append(text)
        return "Northwind" in text or "dark mode" in text

    draft = draft_extractive(chat, is_known=known)
    assert draft.skipped_known == 3
    assert [i.line for i in draft.items] == [10, 11, 12, 13, 18, 24]
    assert len(asked) == len(EXPECTED_CHAT_ITEMS)  # duplicates are dropped before asking


def test_extractive_draft_turn_range(chat: Transcript) -> None:
    draft = draft_extractive(chat, turn_range=(10, 13))
    assert [i.line for i in draft.items] == [10, 11, 12, 13]


@pytest.mark.parametrize(
    ("role", "text", "expected"),
    [
        (
            "user",
            "From now on, always answer in British English.",
            ("instruction", "From now on, always answer in British English"),
        ),
        ("user", "Don't ever book flights before 9am", ("instruction", "Don't ever book flights before 9am")),
        ("user", "I hate cilantro lol", ("preference", "I hate cilantro")),
        ("user", "I'd rather take the train than fly.", ("preference", "I'd rather take the train than fly")),
        ("user", "I live in Lisbon.", ("identity", "I live in Lisbon")),
        ("user", "I'm a nurse at the county hospital", ("identity", "I'm a nurse at the county hospital")),
        ("user", "let's go with the blue logo", ("decision", "Let's go with the blue logo")),
        (
            "user",
            "We'll use Terraform for the new cluster.",
            ("decision", "We'll use Terraform for the new cluster"),
        ),
        ("user", "todo: file the quarterly taxes", ("plan", "Todo: file the quarterly taxes")),
        (
            "user",
            "Dentist appointment on 2026-03-14 at 10:00",
            ("plan", "Dentist appointment on 2026-03-14 at 10:00"),
        ),
        (
            "user",
            "Our backend runs on Fly.io with two regions",
            ("fact", "Our backend runs on Fly.io with two regions"),
        ),
        ("user", "Marco is my cofounder.", ("fact", "Marco is my cofounder")),
        # What the assistant alone says is never kept (see test_assistant_confirms_what_the_person_said).
        ("assistant", "Got it — I'll use metric units from now on.", None),
        ("assistant", "Noted: your flight is on Friday.", None),
        ("assistant", "Noted: can you send the file?", None),
        ("assistant", "Noted: your standup moved to 9:30.", None),
        ("assistant", "Done, you like short answers, so I set the style to concise.", None),
        ("user", "I like it", None),
        ("user", "Never mind", None),
        ("user", "thanks, that's great!", None),
        ("user", "Do you prefer cats or dogs?", None),
        ("user", "Can you remind me to call Mom tomorrow?", ("plan", "Remind me to call Mom tomorrow (Wed 11 Feb)")),
        ("user", "I went to the market 5 times", None),
        ("user", "This is my first time here", None),
        ("user", "/remember I prefer tea", None),
        ("assistant", "Sure, here is the answer.", None),
        ("assistant", "I prefer to think step by step.", None),
        (
            "user",
            "- I prefer aisle seats\n- my favorite airline is TAP",
            ("preference", "I prefer aisle seats"),
        ),
        ("user", "```\nI prefer code\n```", None),
        ("user", 'I prefer {"a": 1} <x> => ()', None),
    ],
)
def test_extractive_statement_table(
    tmp_path: Path, role: str, text: str, expected: tuple[str, str] | None
) -> None:
    content: object = text if role == "user" else [{"type": "text", "text": text}]
    draft = draft_extractive(_transcript(tmp_path, [_msg(role, content)]))
    got = (draft.items[0].kind, draft.items[0].text) if draft.items else None
    assert got == expected


@pytest.mark.parametrize(
    ("user", "assistant", "expected"),
    [
        ("use metric units from now on please", "Got it — I'll use metric units from now on.",
         ("confirmed", "I'll use metric units from now on")),
        ("my flight is on Friday", "Noted: your flight is on Friday.",
         ("confirmed", "User's flight is on Friday (Fri 13 Feb)")),
        ("the standup moved to 9:30", "Noted: your standup moved to 9:30.",
         ("confirmed", "User's standup moved to 9:30")),
        ("short answers please", "Done, you like short answers, so I set the style to concise.", None),  # 2 of 6
        ("what's the weather?", "Noted: your flight is on Friday.", None),  # the person never said it
        ("my flight is on Friday", "Noted: can you send the file?", None),
    ],
)
def test_assistant_confirms_what_the_person_said(tmp_path: Path, user: str, assistant: str,
                                                 expected: tuple[str, str] | None) -> None:
    """An assistant sentence is kept only when most of it repeats the person's turn just before it."""
    rows = [_msg("user", user), _msg("assistant", [{"type": "text", "text": assistant}])]
    draft = draft_extractive(_transcript(tmp_path, rows))
    got = [(item.kind, item.text) for item in draft.items if item.kind == "confirmed"]
    assert got == ([expected] if expected else [])


def test_a_flush_files_each_item_under_the_day_it_was_said(tmp_path: Path) -> None:
    rows = [
        _line(type="message", timestamp="2026-11-12T19:54:22Z",
              message={"role": "user", "content": "remind me tomorrow at 08:30 to move the backup job"}),
        _line(type="message", timestamp="2026-11-12T21:10:00Z",
              message={"role": "user", "content": "thanks, night"}),
        _line(type="message", timestamp="2026-11-13T07:05:00Z",
              message={"role": "user", "content": "I prefer tea in the morning."}),
    ]
    transcript = _transcript(tmp_path, rows)
    draft = draft_extractive(transcript)
    assert [item.said_at for item in draft.items] == [datetime(2026, 11, 12, 19, 54, 22, tzinfo=UTC),
                                                       datetime(2026, 11, 13, 7, 5, tzinfo=UTC)]
    plan = plan_flush(draft, datetime(2026, 12, 3, 8, 0, tzinfo=UTC), UTC,
                      turn_times=[e.time for e in transcript.messages() if e.time is not None])
    assert plan.paths == ("memory/2026-11-12.md", "memory/2026-11-13.md")
    first, second = plan.blocks
    # The heading's time is the day's last turn, not the flush's time.
    assert first.text.startswith("## 21:10 — Memory flush from session 3f2a9c1e\n\n- Remind me tomorrow (Fri 13 Nov)")
    assert second.text.startswith("## 07:05 — Memory flush from session 3f2a9c1e\n\n- I prefer tea")
    assert plan.preview == ("<!-- flush → memory/2026-11-12.md -->\n" + first.text + "\n"
                            "<!-- flush → memory/2026-11-13.md -->\n" + second.text)
    assert plan.split(plan.preview) == [(date(2026, 11, 12), first.text), (date(2026, 11, 13), second.text)]
    # In Tokyo (UTC+9) the evening turn is already the 13th: both go to that day's note.
    tokyo = ZoneInfo("Asia/Tokyo")
    assert plan_flush(draft, datetime(2026, 12, 3, 8, 0, tzinfo=UTC), tokyo).paths == ("memory/2026-11-13.md",)
    today = plan_flush(draft, datetime(2026, 12, 3, 8, 0, tzinfo=UTC), UTC, day="today")
    assert today.paths == ("memory/2026-12-03.md",) and today.blocks[0].text.startswith("## 08:00 —")
    with pytest.raises(ValueError, match="unknown flush day"):
        plan_flush(draft, datetime(2026, 12, 3, tzinfo=UTC), UTC, day="tomorrow")


def test_an_edited_preview_goes_to_the_notes_its_separators_name() -> None:
    text = ("stray line\n<!-- flush → memory/2026-11-13.md -->\n## 07:05 — b\n\n- two\n"
            "<!-- flush → memory/2026-02-30.md -->\n- kept as text\n<!-- flush → memory/2026-11-12.md -->\n\n")
    assert split_preview(text, date(2026, 11, 12)) == [
        (date(2026, 11, 12), "stray line\n"),
        (date(2026, 11, 13), "## 07:05 — b\n\n- two\n<!-- flush → memory/2026-02-30.md -->\n- kept as text\n"),
    ]


def test_extractive_splits_sentences_but_not_abbreviations(tmp_path: Path) -> None:
    text = "I work at the clinic with Dr. Smith. I prefer e.g. tea over coffee! Remind me to pay rent."
    draft = draft_extractive(_transcript(tmp_path, [_msg("user", text)]))
    assert [i.text for i in draft.items] == [
        "I work at the clinic with Dr. Smith",
        "I prefer e.g. tea over coffee",
        "Remind me to pay rent",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ok so I prefer tea, thanks!", "I prefer tea"),
        ("btw   my name\n is  Ana :)", "My name is Ana"),
        ("- hey, also we decided on Rust lol", "We decided on Rust"),
        ("x " * 150, "X" + ("x " * 150)[1:198].rstrip() + "…"),
    ],
)
def test_clean_statement(text: str, expected: str) -> None:
    assert clean_statement(text) == expected
    assert len(clean_statement(text)) <= 200


def test_long_statement_is_cut_to_one_short_item(tmp_path: Path) -> None:
    text = "I prefer " + " and ".join(f"option number {i}" for i in range(60))
    draft = draft_extractive(_transcript(tmp_path, [_msg("user", text)]))
    assert len(draft.items) == 1
    assert len(draft.items[0].text) <= 200 and draft.items[0].text.endswith("…")


# ---------------------------------------------------------------------------------------------
# Rendering and appending


def _draft(*texts: str) -> Draft:
    items = tuple(DraftItem(text, "fact", "3f2a9c1e-aaaa", line) for line, text in enumerate(texts, start=5))
    return Draft(items=items, session_id="3f2a9c1e-aaaa", method="extractive")


def test_render_flush_block() -> None:
    block = render_flush_block(_draft("I prefer tea", "Multi\nline  item"), NOW)
    assert block == (
        "## 14:30 — Memory flush from session 3f2a9c1e\n"
        "\n"
        "- I prefer tea (session 3f2a9c1e, line 5)\n"
        "- Multi line item (session 3f2a9c1e, line 6)\n"
    )
    assert render_flush_block(_draft(), NOW) == ""


@pytest.mark.parametrize(
    ("existing", "expected_prefix"),
    [
        (None, "# 2026-02-10 — Tuesday, 10 February 2026\n\n".encode()),  # created: the one daily heading
        (b"", b""),
        (b"# Log", b"# Log\n\n"),
        (b"# Log\n", b"# Log\n\n"),
        (b"# Log\n\n", b"# Log\n\n"),
        (b"# Log\r\nline\r\n", b"# Log\r\nline\r\n\r\n"),
        (b"caf\xe9 latin-1\n", b"caf\xe9 latin-1\n\n"),  # undecodable bytes kept exactly
    ],
)
def test_append_flush_keeps_existing_bytes(
    tmp_path: Path, existing: bytes | None, expected_prefix: bytes
) -> None:
    target = tmp_path / "memory" / "2026-02-10.md"
    if existing is not None:
        target.parent.mkdir()
        target.write_bytes(existing)
    block = render_flush_block(_draft("I prefer tea"), NOW)
    path = append_flush(tmp_path, block, date(2026, 2, 10))
    assert path == target
    data = target.read_bytes()
    assert data.startswith(expected_prefix)
    added = block.encode()
    if b"\r\n" in expected_prefix:
        added = added.replace(b"\n", b"\r\n")
    assert data == expected_prefix + added
    assert os.listdir(target.parent) == ["2026-02-10.md"]


def test_append_flush_twice_appends_both(tmp_path: Path) -> None:
    day = date(2026, 2, 10)
    append_flush(tmp_path, render_flush_block(_draft("first"), NOW), day)
    append_flush(tmp_path, render_flush_block(_draft("second"), NOW + timedelta(hours=1)), day)
    text = (tmp_path / "memory" / "2026-02-10.md").read_text()
    assert text.index("first") < text.index("## 15:30") < text.index("second")
    assert "line 5)\n\n## 15:30" in text


def test_append_flush_keeps_file_mode(tmp_path: Path) -> None:
    target = tmp_path / "memory" / "2026-02-10.md"
    target.parent.mkdir()
    target.write_text("x\n")
    target.chmod(0o600)
    append_flush(tmp_path, "- y\n", date(2026, 2, 10))
    assert target.stat().st_mode & 0o777 == 0o600


def test_crash_between_write_and_rename_leaves_original(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "memory" / "2026-02-10.md"
    target.parent.mkdir()
    original = b"# 2026-02-10\n\n- existing entry\n"
    target.write_bytes(original)

    def crash(src: str, dst: str) -> None:
        assert Path(src).read_bytes().startswith(original)  # the full new content was written first
        raise OSError("simulated power cut")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="simulated power cut"):
        append_flush(tmp_path, render_flush_block(_draft("new"), NOW), date(2026, 2, 10))
    assert target.read_bytes() == original
    assert os.listdir(target.parent) == ["2026-02-10.md"]


def test_append_retries_when_the_file_changes_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import engine.textio as textio_module

    target = tmp_path / "memory" / "2026-02-10.md"
    target.parent.mkdir()
    target.write_bytes(b"- mine\n")
    real_write_temp = textio_module._write_temp
    edits = iter([b"- mine\n- typed in the editor meanwhile\n"])

    def racing_write_temp(folder: Path, name: str, data: bytes, mode: int) -> str:
        tmp = real_write_temp(folder, name, data, mode)
        edit = next(edits, None)
        if edit is not None:  # another writer saves the file between our read and our rename
            target.write_bytes(edit)
            os.utime(target, ns=(1, 1))
        return tmp

    monkeypatch.setattr(textio_module, "_write_temp", racing_write_temp)
    append_flush(tmp_path, "- flushed\n", date(2026, 2, 10))
    assert target.read_bytes() == b"- mine\n- typed in the editor meanwhile\n\n- flushed\n"
    assert os.listdir(target.parent) == ["2026-02-10.md"]


def test_append_flush_refuses_symlink_and_empty_block(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("outside\n")
    (memory / "2026-02-10.md").symlink_to(elsewhere)
    with pytest.raises(FlushError, match="symlink"):
        append_flush(tmp_path, "- x\n", date(2026, 2, 10))
    assert elsewhere.read_text() == "outside\n"
    with pytest.raises(FlushError, match="empty"):
        append_flush(tmp_path, "  \n", date(2026, 2, 11))


def test_record_flush_round_trip(tmp_path: Path) -> None:
    state = tmp_path / "home" / "flush-state.json"
    record_flush(state, "aaa", datetime(2026, 2, 10, 10, 0, tzinfo=UTC))
    record_flush(state, "bbb", datetime(2026, 2, 10, 12, 0, tzinfo=timezone(timedelta(hours=2))))
    record_flush(state, "aaa", datetime(2026, 2, 11, 10, 0))  # naive: taken as UTC
    assert json.loads(state.read_text()) == {"aaa": "2026-02-11T10:00:00Z", "bbb": "2026-02-10T10:00:00Z"}
    assert read_flush_state(state)["bbb"] == datetime(2026, 2, 10, 10, 0, tzinfo=UTC)


def test_record_flush_keeps_a_corrupt_record_aside(tmp_path: Path) -> None:
    state = tmp_path / "flush-state.json"
    state.write_text("{corrupt")
    record_flush(state, "aaa", NOW)
    assert (tmp_path / "flush-state.json.corrupt").read_text() == "{corrupt"
    assert json.loads(state.read_text()) == {"aaa": "2026-02-10T14:30:05Z"}


# ---------------------------------------------------------------------------------------------
# memdeck flush (CLI)


@pytest.fixture
def ctx(tmp_path: Path) -> SessionsContext:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    shutil.copy(DATA / "chat_preferences.jsonl", sessions / "7c1e9a42-5b3d-4f0e-9a1b-2c3d4e5f6a7b.jsonl")
    shutil.copy(DATA / "chat_smalltalk.jsonl", sessions / "0b9d8c7e-1111-4222-8333-944455556666.jsonl")
    shutil.copy(DATA / "invalid_json.jsonl", sessions / "0b9d8c7e-2222.jsonl.reset.2026-01-01T00-00-00.000Z")
    (sessions / "sessions.json").write_text(
        json.dumps(
            {
                "agent:main:telegram:direct:1": {
                    "sessionId": "7c1e9a42-5b3d-4f0e-9a1b-2c3d4e5f6a7b",
                    "channel": "telegram",
                }
            }
        )
    )
    return SessionsContext(workspace=tmp_path / "ws", sessions_dir=sessions, home=tmp_path / "home")


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("7c1e9a42-5b3d-4f0e-9a1b-2c3d4e5f6a7b", "7c1e9a42-5b3d-4f0e-9a1b-2c3d4e5f6a7b.jsonl"),
        ("7c1e", "7c1e9a42-5b3d-4f0e-9a1b-2c3d4e5f6a7b.jsonl"),
        ("0b9d8c7e-1", "0b9d8c7e-1111-4222-8333-944455556666.jsonl"),
        ("0b9d8c7e-2", "0b9d8c7e-2222.jsonl.reset.2026-01-01T00-00-00.000Z"),
    ],
)
def test_resolve_session(ctx: SessionsContext, query: str, expected: str) -> None:
    assert resolve_session(ctx.sessions_dir, query).name == expected


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("0b9d", "matches 2 sessions"),
        ("", "no session named"),  # a prefix of every id: refused, never "matches 4 sessions"
        ("  ", "no session named"),
        ("ffff", "no session matching"),
        ("/no/such.jsonl", "name a session by its id"),  # a path is no id: never looked up on the disk
    ],
)
def test_resolve_session_errors(ctx: SessionsContext, query: str, message: str) -> None:
    with pytest.raises(SessionReadError, match=message):
        resolve_session(ctx.sessions_dir, query)


def _group(ctx: SessionsContext) -> click.Group:
    group = click.Group("memdeck")
    register(group, lambda sessions_dir: ctx)
    return group


def test_flush_command_appends_and_records(ctx: SessionsContext) -> None:
    reindexed: list[Path] = []
    ctx = SessionsContext(
        workspace=ctx.workspace,
        sessions_dir=ctx.sessions_dir,
        home=ctx.home,
        is_known=lambda text: "Northwind" in text,
        reindex=reindexed.append,
    )
    before = datetime.now().astimezone().date()
    result = CliRunner().invoke(_group(ctx), ["flush", "7c1e", "--extractive", "--day", "today"])
    after = datetime.now().astimezone().date()
    assert result.exit_code == 0, result.output
    (daily,) = (ctx.workspace / "memory").iterdir()
    assert daily.name in {f"{before:%Y-%m-%d}.md", f"{after:%Y-%m-%d}.md"}  # today's file, midnight-safe
    assert f"Appended 8 items (extractive) to memory/{daily.name} (1 already in memory):" in result.output
    text = daily.read_text()
    assert "— Memory flush from session 7c1e9a42\n" in text
    assert "- I prefer dark mode in every dashboard you set up for me (session 7c1e9a42, line 4)" in text
    assert "Northwind" not in text
    assert reindexed == [daily]
    assert "7c1e9a42-5b3d-4f0e-9a1b-2c3d4e5f6a7b" in read_flush_state(ctx.flush_state_path)


def test_flush_dry_run_writes_nothing(ctx: SessionsContext) -> None:
    result = CliRunner().invoke(_group(ctx), ["flush", "7c1e", "--dry-run", "--day", "last"])
    assert result.exit_code == 0, result.output
    assert "Would append 9 items (extractive) to memory/2026-02-10.md:" in result.output
    assert ("- Remind me to renew the TLS certificate next Friday (Fri 13 Feb) (session 7c1e9a42, line 12)"
            in result.output)
    assert not ctx.workspace.exists()
    assert not ctx.flush_state_path.exists()


def test_run_flush_json_and_day_last(ctx: SessionsContext, capsys: pytest.CaptureFixture[str]) -> None:
    code = run_flush(ctx, "7c1e", method="extractive", day="last", as_json=True, now=NOW)
    assert code == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["path"] == "memory/2026-02-10.md" and payload["appended"] is True
    assert payload["method"] == "extractive" and len(payload["items"]) == 9
    assert payload["items"][0] == {
        "text": "I prefer dark mode in every dashboard you set up for me",
        "kind": "preference",
        "line": 4,
        "saidAt": "2026-02-10T09:03:00Z",
    }
    assert payload["day"] == "last" and payload["paths"] == ["memory/2026-02-10.md"]
    assert [block["path"] for block in payload["blocks"]] == ["memory/2026-02-10.md"]
    # A new daily note starts with the daily heading every door writes, then the block.
    assert (ctx.workspace / "memory" / "2026-02-10.md").read_text() == (
        "# 2026-02-10 — Tuesday, 10 February 2026\n\n" + payload["text"])


def test_flush_with_nothing_to_store(ctx: SessionsContext) -> None:
    result = CliRunner().invoke(_group(ctx), ["flush", "0b9d8c7e-1111"])
    assert result.exit_code == 0, result.output
    assert "Nothing new to store from session 0b9d8c7e." in result.output
    assert not (ctx.workspace / "memory").exists()
    assert "0b9d8c7e-1111-4222-8333-944455556666" in read_flush_state(ctx.flush_state_path)


def test_flush_warns_about_bad_lines(ctx: SessionsContext) -> None:
    result = CliRunner().invoke(_group(ctx), ["flush", "0b9d8c7e-2", "--dry-run"])
    assert result.exit_code == 0
    assert (
        "warning: 5 unusable lines in 0b9d8c7e-2222.jsonl.reset.2026-01-01T00-00-00.000Z skipped"
        in result.output
    )


def test_flush_llm_without_configuration_is_a_usage_error(ctx: SessionsContext) -> None:
    result = CliRunner().invoke(_group(ctx), ["flush", "7c1e", "--llm"])
    assert result.exit_code == 2
    assert "no LLM configured" in result.output


def test_flush_unknown_session(ctx: SessionsContext) -> None:
    result = CliRunner().invoke(_group(ctx), ["flush", "zzzz"])
    assert result.exit_code == 1
    assert "no session matching 'zzzz'" in result.output


def test_flush_note_writes_session_note(ctx: SessionsContext) -> None:
    reindexed: list[Path] = []
    ctx = SessionsContext(ctx.workspace, ctx.sessions_dir, ctx.home, reindex=reindexed.append)
    result = CliRunner().invoke(_group(ctx), ["flush", "7c1e", "--note", "--messages", "2"])
    assert result.exit_code == 0, result.output
    (note,) = (ctx.workspace / "memory").iterdir()
    # OpenClaw 2026.9: no LLM configured, so the note is named by the local time (no keyword slug).
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}-\d{4}\.md", note.name), note.name
    assert f"Wrote session note memory/{note.name}" in result.output
    text = note.read_text()
    assert "- **Session Key**: agent:main:telegram:direct:1\n" in text
    assert "- **Source**: telegram\n" in text
    assert text.endswith("assistant: Sure, happy to help with that!\n\n")
    assert reindexed == [note]


def test_flush_note_dry_run(ctx: SessionsContext, capsys: pytest.CaptureFixture[str],
                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")  # the system zone names the note (OpenClaw 2026.9: the user's zone)
    code = run_flush(ctx, "7c1e", note=True, dry_run=True, now=NOW, as_json=True)
    assert code == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["path"] == "memory/2026-02-10-1430.md"
    assert payload["text"].startswith("# Session: 2026-02-10 14:30:05 UTC\n")
    assert not ctx.workspace.exists()


def test_flush_by_path_and_reindex_failure_is_a_warning(ctx: SessionsContext, tmp_path: Path) -> None:
    def broken(path: Path) -> None:
        raise RuntimeError("index locked")

    ctx = SessionsContext(ctx.workspace, ctx.sessions_dir, ctx.home, reindex=broken)
    path = DATA / "chat_preferences.jsonl"
    result = CliRunner().invoke(_group(ctx), ["flush", str(path), "--extractive"])
    assert result.exit_code == 0, result.output
    assert "warning: written, but not yet searchable: index locked" in result.output
    assert len(list((ctx.workspace / "memory").iterdir())) == 1


def test_flush_append_failure_exits_1(ctx: SessionsContext) -> None:
    memory = ctx.workspace / "memory"
    memory.mkdir(parents=True)
    today = datetime.now().astimezone().date()
    for day in (today, today + timedelta(days=1)):  # midnight-safe
        (memory / f"{day:%Y-%m-%d}.md").mkdir()  # a folder where the daily file should be
    result = CliRunner().invoke(_group(ctx), ["flush", "7c1e", "--day", "today"])
    assert result.exit_code == 1
    assert "could not append" in result.output
    assert not ctx.flush_state_path.exists()
