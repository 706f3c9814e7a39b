"""Tests for the OpenAI-compatible chat client and the LLM drafter, against a real local HTTP server."""

from __future__ import annotations

import json
import random
import socket
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from engine.config import LLMConfig
from engine.memory.llm import (
    ChatClient,
    LLMError,
    draft_with_llm,
    parse_llm_draft,
    slug_with_llm,
)
from engine.sessions.model import Transcript
from engine.sessions.reader import read_transcript
from memdeck.cli_sessions import SessionsContext, run_flush

DATA = Path(__file__).parent / "data" / "transcripts"
SECRET_KEY = "test-key-0123456789abcdef"


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class FakeServer:
    """A real HTTP server on 127.0.0.1 answering from a script of replies."""

    base_url: str
    replies: deque[Reply] = field(default_factory=deque)
    requests: list[dict[str, Any]] = field(default_factory=list)

    def answer(self, content: str) -> None:
        self.replies.append(Reply(body={"choices": [{"message": {"role": "assistant", "content": content}}]}))

    def fail(self, status: int, body: Any = None, **headers: str) -> None:
        self.replies.append(Reply(status=status, body=body, headers=headers))


def _completion(content: str) -> dict[str, Any]:
    return {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}


@pytest.fixture
def server() -> Iterator[FakeServer]:
    fake = FakeServer(base_url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            fake.requests.append({"path": self.path, "headers": dict(self.headers), "body": json.loads(raw)})
            reply = (
                fake.replies.popleft()
                if fake.replies
                else Reply(500, {"error": {"message": "no reply scripted"}})
            )
            if isinstance(reply.body, bytes):
                payload = reply.body
            else:
                payload = json.dumps(reply.body if reply.body is not None else {}).encode()
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name.replace("_", "-"), value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    fake.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        yield fake
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


class SleepRecorder:
    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def _client(server: FakeServer, **kwargs: Any) -> tuple[ChatClient, SleepRecorder]:
    sleeper = SleepRecorder()
    options: dict[str, Any] = {"api_key": SECRET_KEY, "sleep": sleeper, "rng": random.Random(7)}
    options.update(kwargs)
    return ChatClient(server.base_url, "test-model", **options), sleeper


@pytest.fixture
def chat() -> Transcript:
    return read_transcript(DATA / "chat_preferences.jsonl")


# ---------------------------------------------------------------------------------------------
# The client


def test_complete_sends_an_openai_request(server: FakeServer) -> None:
    server.answer("  Hello from the model  ")
    client, sleeper = _client(server)
    answer = client.complete([{"role": "user", "content": "hi"}], max_tokens=12)
    assert answer == "Hello from the model"
    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == f"Bearer {SECRET_KEY}"
    assert request["headers"]["Content-Type"] == "application/json"
    assert request["body"] == {
        "model": "test-model",
        "messages": [{"role": "user", "content": "hi"}],
        "temperature": 0.2,
        "stream": False,
        "max_tokens": 12,
    }
    assert sleeper.calls == []


def test_full_endpoint_url_and_no_key(server: FakeServer) -> None:
    server.answer("ok")
    client = ChatClient(server.base_url + "/chat/completions/", "m")
    assert client.complete([{"role": "user", "content": "x"}]) == "ok"
    assert server.requests[0]["path"] == "/v1/chat/completions"
    assert "Authorization" not in server.requests[0]["headers"]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            [{"type": "text", "text": "part one, "}, {"type": "text", "text": "part two"}],
            "part one, part two",
        ),
        ("<think>let me reason about this</think>\nThe answer", "The answer"),
    ],
)
def test_answer_shapes(server: FakeServer, content: Any, expected: str) -> None:
    server.replies.append(Reply(body={"choices": [{"message": {"content": content}}]}))
    client, _ = _client(server)
    assert client.complete([{"role": "user", "content": "x"}]) == expected


def test_429_then_200_honours_retry_after(server: FakeServer) -> None:
    server.fail(429, {"error": {"message": "slow down"}}, Retry_After="2")
    server.answer("finally")
    client, sleeper = _client(server)
    assert client.complete([{"role": "user", "content": "x"}]) == "finally"
    assert sleeper.calls == [2.0]
    assert len(server.requests) == 2


def test_5xx_retries_with_exponential_backoff_and_jitter(server: FakeServer) -> None:
    server.fail(503)
    server.fail(502)
    server.answer("ok")
    client, sleeper = _client(server, backoff=0.5)
    assert client.complete([{"role": "user", "content": "x"}]) == "ok"
    assert len(sleeper.calls) == 2
    assert 0.5 <= sleeper.calls[0] <= 1.0
    assert 1.0 <= sleeper.calls[1] <= 2.0


def test_5xx_gives_up_after_retries(server: FakeServer) -> None:
    for _ in range(3):
        server.fail(500, {"error": {"message": "model crashed"}})
    client, sleeper = _client(server, retries=2)
    with pytest.raises(LLMError) as info:
        client.complete([{"role": "user", "content": "x"}])
    message = str(info.value)
    assert (
        "server error 500" in message and "model crashed" in message and "gave up after 3 attempts" in message
    )
    assert len(server.requests) == 3 and len(sleeper.calls) == 2


def test_401_names_the_key_variable_and_does_not_retry(server: FakeServer) -> None:
    server.fail(401, {"error": {"message": "Incorrect API key provided"}})
    client, sleeper = _client(server, api_key_env="MEMDECK_TEST_KEY")
    with pytest.raises(LLMError) as info:
        client.complete([{"role": "user", "content": "x"}])
    message = str(info.value)
    assert "401" in message and "check the API key in $MEMDECK_TEST_KEY" in message
    assert SECRET_KEY not in message and SECRET_KEY not in repr(client)
    assert len(server.requests) == 1 and sleeper.calls == []


@pytest.mark.parametrize(
    ("status", "body", "needle"),
    [
        (404, {"error": {"message": "model not found"}}, "check [llm] base_url"),
        (400, {"error": {"message": "bad parameter"}}, "400 Bad Request from"),
        (200, b"<html>not json</html>", "did not answer with JSON"),
        (200, {"choices": []}, "no choices[0].message.content"),
        (200, {"choices": [{"message": {"content": None}}]}, "empty answer"),
    ],
)
def test_other_failures_are_clear(server: FakeServer, status: int, body: Any, needle: str) -> None:
    server.fail(status, body)
    client, sleeper = _client(server)
    with pytest.raises(LLMError) as info:
        client.complete([{"role": "user", "content": "x"}])
    assert needle in str(info.value)
    assert len(server.requests) == 1 and sleeper.calls == []


def test_connection_refused_says_is_the_server_running() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}/v1"
    sleeper = SleepRecorder()
    client = ChatClient(base, "m", retries=1, sleep=sleeper)
    with pytest.raises(LLMError) as info:
        client.complete([{"role": "user", "content": "x"}])
    assert f"is the server running at {base}?" in str(info.value)
    assert "gave up after 2 attempts" in str(info.value)
    assert len(sleeper.calls) == 1


@pytest.mark.parametrize(
    ("base_url", "model", "needle"), [("", "m", "base_url"), ("http://x/v1", " ", "model")]
)
def test_missing_configuration(base_url: str, model: str, needle: str) -> None:
    with pytest.raises(LLMError, match=needle):
        ChatClient(base_url, model)


def test_settings_read_the_key_from_the_environment(server: FakeServer) -> None:
    server.answer("ok")
    settings = LLMConfig(base_url=server.base_url, model="m", api_key_env="MY_LLM_KEY", timeout=5)
    client = ChatClient.from_config(settings, environ={"MY_LLM_KEY": "from-env-key"})
    assert client.timeout == 5 and client.api_key_env == "MY_LLM_KEY"
    client.complete([{"role": "user", "content": "x"}])
    assert server.requests[0]["headers"]["Authorization"] == "Bearer from-env-key"
    server.answer("ok")
    ChatClient.from_config(settings, environ={}).complete([{"role": "user", "content": "x"}])  # a local server needs no key
    assert "Authorization" not in server.requests[1]["headers"]


# ---------------------------------------------------------------------------------------------
# Drafting


LLM_ANSWER = """Here is what I found:
- [preference] User prefers dark mode in every dashboard (line 4)
- [todo] Renew the TLS certificate next Friday (line 12).
- [person] User's sister Anna lives in Porto (line 999)
* [decision]: Postgres 16 is the analytics warehouse
- [mystery] User is allergic to peanuts (L23)
- [preference] User prefers dark mode in every dashboard (line 22)
1. [fact] The key is sk-proj-abcdefghijklmnopqrstuvwxyz123456 (line 24)
Not a bullet line
"""


def test_draft_with_llm(server: FakeServer, chat: Transcript) -> None:
    server.answer(LLM_ANSWER)
    client, _ = _client(server)
    draft = draft_with_llm(chat, client, existing_memory_hint="User's name is Priya.")
    assert draft.method == "llm"
    assert [(i.kind, i.text, i.line) for i in draft.items] == [
        ("preference", "User prefers dark mode in every dashboard", 4),
        ("plan", "Renew the TLS certificate next Friday (Fri 13 Feb)", 12),  # resolved when the model did not
        ("fact", "User's sister Anna lives in Porto", 18),  # line 999 is not in the chat: best match
        ("decision", "Postgres 16 is the analytics warehouse", 10),  # no line given: best match
        ("fact", "User is allergic to peanuts", 23),
        ("fact", "The key is sk-pro…3456", 24),
    ]
    request = server.requests[0]["body"]
    system, user = request["messages"]
    assert system["role"] == "system" and "NOTHING_TO_STORE" in system["content"]
    # The prompt asks for the person's language, relative times resolved against each turn's time, and no
    # assistant-only claims; each turn shows its time.
    assert "in the language the user wrote it in" in system["content"]
    assert "Resolve relative times against that line's time" in system["content"]
    assert "drop anything only the assistant claimed" in system["content"]
    assert (
        "[4] (Tue 10 Feb 2026 09:03) User: ok so I prefer dark mode in every dashboard you set up for me, thanks"
        in user["content"]
    )
    assert ("[7] (Tue 10 Feb 2026 09:06) Assistant: Done — switched all three Grafana dashboards to dark mode."
            in user["content"])
    assert "/status" not in user["content"] and "tabs over spaces" not in user["content"]
    assert "updated 3 dashboards" not in user["content"]  # tool results are not sent
    assert "sk-proj-abcdefghij" not in user["content"]
    assert "Already in memory (do not repeat):\nUser's name is Priya." in user["content"]


@pytest.mark.parametrize("answer", ["NOTHING_TO_STORE", "  nothing_to_store.  ", "- NOTHING_TO_STORE"])
def test_draft_with_llm_nothing_to_store(server: FakeServer, chat: Transcript, answer: str) -> None:
    server.answer(answer)
    client, _ = _client(server)
    assert draft_with_llm(chat, client).is_empty


def test_draft_with_llm_filters_known_and_cuts_long_chats(server: FakeServer, chat: Transcript) -> None:
    server.answer(
        "- [confirmed] User is allergic to peanuts (line 23)\n- [plan] Rotate the API key by Friday (line 24)"
    )
    client, _ = _client(server)
    draft = draft_with_llm(chat, client, is_known=lambda text: "peanuts" in text, max_chars=300)
    assert [i.line for i in draft.items] == [24] and draft.skipped_known == 1
    assert draft.warnings and "only its last" in draft.warnings[0]
    sent = server.requests[0]["body"]["messages"][1]["content"]
    assert "[24] (Tue 10 Feb 2026 09:22) User:" in sent and "[4] (" not in sent


def test_draft_with_llm_turn_range_and_empty(server: FakeServer, chat: Transcript) -> None:
    server.answer("- [decision] Postgres 16 for analytics (line 10)")
    client, _ = _client(server)
    draft = draft_with_llm(chat, client, turn_range=(10, 11))
    sent = server.requests[0]["body"]["messages"][1]["content"]
    assert sent.splitlines()[1:] == [
        "[10] (Tue 10 Feb 2026 09:09) User: We decided to use Postgres 16 for the analytics warehouse, not MySQL.",
        "[11] (Tue 10 Feb 2026 09:10) Assistant: Noted: you prefer Postgres for analytics work. Anything else?",
    ]
    assert [i.line for i in draft.items] == [10]
    empty = read_transcript(DATA / "empty.jsonl")
    assert draft_with_llm(empty, client).is_empty
    assert len(server.requests) == 1  # nothing to send: no request


def test_parse_llm_draft_without_conversation() -> None:
    assert parse_llm_draft("- [fact] anything (line 1)", read_transcript(DATA / "empty.jsonl")) == []


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("vendor-pitch", "vendor-pitch"),
        ("Slug: `Vendor Pitch`\nBecause the chat was about a pitch.", "vendor-pitch"),
        ('"API design & review"', "api-design-review"),
        ("???", ""),
    ],
)
def test_slug_with_llm(server: FakeServer, answer: str, expected: str) -> None:
    server.answer(answer)
    client, _ = _client(server)
    assert slug_with_llm("user: let's talk about the vendor pitch\n" * 500, client) == expected
    body = server.requests[0]["body"]
    assert body["max_tokens"] == 20
    assert len(body["messages"][1]["content"]) <= 6000


# ---------------------------------------------------------------------------------------------
# memdeck flush with an LLM


def _ctx(tmp_path: Path, server: FakeServer) -> SessionsContext:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    (sessions / "7c1e9a42.jsonl").write_bytes((DATA / "chat_preferences.jsonl").read_bytes())
    return SessionsContext(
        workspace=tmp_path / "ws",
        sessions_dir=sessions,
        home=tmp_path / "home",
        llm=LLMConfig(base_url=server.base_url, model="test-model", api_key_env="MEMDECK_TEST_LLM_KEY"),
    )


def test_run_flush_uses_the_llm_when_configured(
    tmp_path: Path, server: FakeServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMDECK_TEST_LLM_KEY", SECRET_KEY)
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "MEMORY.md").write_text("# Memory\n- User's name is Priya.\n")
    server.answer("- [preference] User prefers dark mode (line 4)")
    now = datetime(2026, 2, 10, 11, 0, tzinfo=UTC)
    assert run_flush(_ctx(tmp_path, server), "7c1e", now=now) == 0
    out = capsys.readouterr().out
    assert "Appended 1 item (llm) to memory/2026-02-10.md:" in out
    assert (tmp_path / "ws" / "memory" / "2026-02-10.md").read_text() == (  # a new note: the daily heading first
        "# 2026-02-10 — Tuesday, 10 February 2026\n\n"
        # Filed under the day it was said, headed by that day's last turn.
        "## 09:23 — Memory flush from session 7c1e9a42\n\n- User prefers dark mode (session 7c1e9a42, line 4)\n"
    )
    request = server.requests[0]
    assert request["headers"]["Authorization"] == f"Bearer {SECRET_KEY}"
    assert "User's name is Priya." in request["body"]["messages"][1]["content"]


def test_run_flush_auto_falls_back_to_extractive(
    tmp_path: Path, server: FakeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.fail(401, {"error": {"message": "bad key"}})
    assert run_flush(_ctx(tmp_path, server), "7c1e", dry_run=True) == 0
    captured = capsys.readouterr()
    assert "LLM draft failed" in captured.err and "check the API key in $MEMDECK_TEST_LLM_KEY" in captured.err
    assert "used the extractive drafter" in captured.err
    assert "(extractive)" in captured.out


def test_run_flush_explicit_llm_failure_exits_1(
    tmp_path: Path, server: FakeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.fail(403, {"error": {"message": "forbidden"}})
    assert run_flush(_ctx(tmp_path, server), "7c1e", method="llm") == 1
    assert "LLM draft failed: 403" in capsys.readouterr().err
    assert not (tmp_path / "ws" / "memory").exists()


def test_run_flush_note_uses_llm_slug(
    tmp_path: Path, server: FakeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.answer("dashboards-and-postgres")
    now = datetime(2026, 2, 10, 11, 0, tzinfo=UTC)
    assert run_flush(_ctx(tmp_path, server), "7c1e", note=True, now=now) == 0
    assert (tmp_path / "ws" / "memory" / "2026-02-10-dashboards-and-postgres.md").is_file()
    assert "Wrote session note memory/2026-02-10-dashboards-and-postgres.md" in capsys.readouterr().out


def test_run_flush_note_falls_back_to_the_time_when_llm_fails(
    tmp_path: Path, server: FakeServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", "UTC")  # the note is named in the user's zone
    server.fail(401)
    now = datetime(2026, 2, 10, 11, 0, tzinfo=UTC)
    assert run_flush(_ctx(tmp_path, server), "7c1e", note=True, now=now) == 0
    # OpenClaw 2026.9's fallback when the LLM makes no slug: the time, HHMM (no keyword slug).
    assert (tmp_path / "ws" / "memory" / "2026-02-10-1100.md").is_file()
    assert "LLM slug failed" in capsys.readouterr().err
