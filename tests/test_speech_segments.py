"""segments(): a message as its speech and its injected blocks, in order (what the transcript viewer folds).

Two promises, checked on the rule table of tests/test_speech.py, on every message of the fixture transcripts and
the fixture agent database, and on generated text: the speech segments joined are exactly what strip_injected /
spoken() give, and the segments cover the message from its first character to its last.
"""

from __future__ import annotations

import shutil
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.sessions.agentdb import open_agent_db
from engine.sessions.reader import parse_line, read_transcript, spoken
from engine.sessions.speech import (
    INJECTED,
    SPEECH,
    SpeechSegment,
    segments,
    speech_segments,
    strip_injected,
)
from tests.test_speech import CASES
from tests.test_speech import SPEECH as PLAIN_SPEECH
from tests.test_speech_injected import COMPOSIO, CV

DATA = Path(__file__).parent / "data"


def _check(text: str, parts: tuple[SpeechSegment, ...], speech: str) -> None:
    """Both promises, and what each segment says of itself."""
    assert "".join(s.text for s in parts if s.kind == SPEECH) == speech
    if not text:
        assert parts == ()
        return
    assert parts[0].start == 0 and parts[-1].end == len(text)
    for before, after in pairwise(parts):
        assert before.end == after.start
        assert (before.kind, after.kind) != (INJECTED, INJECTED)  # consecutive blocks make one fold
    for part in parts:
        assert part.kind in (SPEECH, INJECTED)
        raw = text[part.start : part.end]
        if part.kind == INJECTED:
            assert part.text == raw and part.label and part.text.strip()
            assert part.lines == len(raw.strip("\r\n").split("\n"))
        else:
            # Nothing of the speech comes from elsewhere: its visible characters are the span's, in order.
            visible = [c for c in part.text if not c.isspace()]
            it = iter(c for c in raw if not c.isspace())
            assert all(c in it for c in visible)
    # Nothing lost: every visible character of the message is in one segment's text, in order.
    assert [c for c in text if not c.isspace()] == [
        c for part in parts for c in (part.text if part.kind == INJECTED else text[part.start : part.end])
        if not c.isspace()
    ]


@pytest.mark.parametrize(("case", "text", "left", "kinds"), CASES, ids=[case[0] for case in CASES])
def test_every_rule_case_segments_to_its_speech(case: str, text: str, left: str, kinds: tuple[str, ...]) -> None:
    parts = segments(text)
    _check(text, parts, strip_injected(text))
    assert any(p.kind == INJECTED for p in parts) is bool(kinds)


@pytest.mark.parametrize("text", PLAIN_SPEECH)
def test_plain_speech_is_one_speech_segment(text: str) -> None:
    parts = segments(text)
    assert [(p.kind, p.text) for p in parts] == [(SPEECH, strip_injected(text))]


def test_a_plugin_block_and_the_metadata_before_the_words_fold_to_one_labelled_block() -> None:
    meta = 'Sender (untrusted metadata):\n```json\n{"label": "Ada"}\n```'
    text = f"{COMPOSIO}\n\n{meta}\n\n[Sun 2026-03-08 22:03 GMT+9] {CV}"
    parts = segments(text)
    assert [(p.kind, p.label, p.lines) for p in parts] == [(INJECTED, "composio, context, envelope", 10),
                                                          (SPEECH, "", 1)]
    assert parts[0].text == text[: parts[0].end] and parts[0].text.endswith("GMT+9]")
    assert parts[1].text == CV


def test_blocks_between_words_keep_the_words_on_both_sides() -> None:
    text = f"first words\n\n{COMPOSIO}\n\nlast words"
    parts = segments(text)
    assert [(p.kind, p.label) for p in parts] == [(SPEECH, ""), (INJECTED, "composio"), (SPEECH, "")]
    assert parts[0].text == "first words" and parts[2].text == "\n\nlast words"
    assert text[parts[1].start : parts[1].end] == COMPOSIO


@pytest.mark.parametrize(("text", "label"), [
    ("Read HEARTBEAT.md if it exists (workspace context). Follow it strictly.", "heartbeat"),
    ("Pre-compaction memory flush. Store durable memories now (use memory/2026-03-08.md).", "flush"),
    ("[cron:abc123 daily digest] Summarise the inbox", "cron"),
    ("/compact keep the API notes", "command"),
    ("NO_REPLY", "notice"),
])
def test_a_whole_message_of_injected_text_folds_entirely(text: str, label: str) -> None:
    assert segments(text) == (SpeechSegment(INJECTED, label, text, 1, 0, len(text)),)


def test_queued_items_keep_their_words_and_fold_their_wrappers() -> None:
    text = ("[Queued messages while agent was busy]\n\n---\nQueued #1\n[Sun 2026-03-08 22:03 GMT+9] first\n\n"
            "---\nQueued #2 (from Ada)\nsecond")
    parts = segments(text)
    _check(text, parts, strip_injected(text))
    assert strip_injected(text) == "first\n\nsecond"
    assert [(p.kind, p.label) for p in parts] == [(INJECTED, "queued, envelope"), (SPEECH, ""),
                                                 (INJECTED, "queued"), (SPEECH, "")]


def test_blank_and_empty_text() -> None:
    assert segments("") == ()
    assert segments(" \n ") == (SpeechSegment(SPEECH, "", "", 0, 0, 3),)


def test_a_message_that_is_no_speech_by_its_role_is_one_injected_block() -> None:
    assert speech_segments("user", "hello", provenance_kind="inter_session") == (
        SpeechSegment(INJECTED, "inter-session", "hello", 1, 0, 5),)
    assert speech_segments("assistant", "ok", provider="openclaw", model="delivery-mirror")[0].label == "gateway"
    assert speech_segments("user", "hello") == segments("hello")


def _check_message(message: object) -> None:
    from engine.sessions.model import Message

    assert isinstance(message, Message)
    parts = speech_segments(message.role, message.text, provenance_kind=message.provenance_kind,
                            provider=message.provider, model=message.model)
    _check(message.text, parts, spoken(message))


TRANSCRIPTS = sorted((DATA / "transcripts").rglob("*.jsonl"))


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=[p.name for p in TRANSCRIPTS])
def test_every_message_of_the_fixture_transcripts(path: Path) -> None:
    for entry in read_transcript(path).entries:
        if entry.message is not None:
            _check_message(entry.message)


def test_every_message_of_the_fixture_agent_database(tmp_path: Path) -> None:
    copy = tmp_path / "openclaw-agent.sqlite"
    shutil.copyfile(DATA / "openclaw-agent.sqlite", copy)
    db = open_agent_db(copy)
    checked = folded = 0
    for session in db.list_sessions():
        for number, (_seq, line) in enumerate(db.event_lines(session.session_id), start=1):
            entry = parse_line(number, line.encode() if isinstance(line, str) else line)
            if entry is None or entry.message is None:
                continue
            _check_message(entry.message)
            checked += 1
            folded += any(p.kind == INJECTED for p in segments(entry.message.text))
    assert checked > 50 and folded >= 16  # every user turn there opens with the Sender block


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([
    "hello", "words here", "", " ", "\n", "\r\n", "```", "```json", "{}", "<composio>", "</composio>", "<div>",
    "Sender (untrusted metadata):", "Sender: ⟦openclaw:ctx⟧", "[Sun 2026-03-08 22:03 GMT+9] ", "System: [12:00] done",
    "[message_id: 5]", "[[reply_to_current]]", "[Queued messages while agent was busy]", "---", "Queued #1",
    "[Startup context loaded by runtime]", "[Untrusted daily memory: memory/a.md]", "END_QUOTED_NOTES",
    "Read HEARTBEAT.md if it exists", "Exec finished (x)", "/new", "NO_REPLY", "<relevant-memories>",
    "</relevant-memories>", "OpenClaw runtime context (internal):", "Conversation info (untrusted metadata): ```{}```",
]), max_size=14), st.sampled_from(["\n", "\n\n", " "]))
def test_segments_always_cover_the_text_and_join_to_its_speech(pieces: list[str], sep: str) -> None:
    text = sep.join(pieces)
    _check(text, segments(text), strip_injected(text))
