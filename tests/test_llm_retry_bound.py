"""A timed-out LLM completion is sent at most twice and the whole wait is bounded and said (issue 22, class 13).

``[llm] timeout = 5`` used to cost 4 attempts and ~24 s, paying for the same completion four times.
"""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.http import HttpClient, HttpError, Response, RetryPolicy
from engine.memory.llm import ChatClient, LLMError

OK = Response(200, "OK", {}, b'{"choices": [{"message": {"content": "hi"}}]}')


class FakeClock:
    """Monotonic seconds that move only when the client sleeps or an attempt takes its time."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


class Script:
    """A transport answering from a script; a ``TimeoutError`` takes the whole timeout, an answer 10 ms."""

    def __init__(self, clock: FakeClock, *script: Response | BaseException) -> None:
        self.clock = clock
        self.script = list(script)
        self.sent: list[str] = []  # "timeout", "503", "ok" …

    def __call__(self, url: str, body: bytes, headers: Mapping[str, str], timeout: float) -> Response:
        step = self.script.pop(0) if self.script else TimeoutError("timed out")
        if isinstance(step, TimeoutError):
            self.clock.now += timeout
            self.sent.append("timeout")
            raise step
        self.clock.now += 0.01
        if isinstance(step, BaseException):
            self.sent.append(type(step).__name__)
            raise step
        self.sent.append(str(step.status))
        return step


def _chat(clock: FakeClock, transport: Script, timeout: float = 5) -> ChatClient:
    return ChatClient("http://127.0.0.1:9/v1", "m", timeout=timeout, sleep=clock.sleep, rng=random.Random(7),
                      transport=transport, clock=clock)


def test_a_timed_out_completion_is_sent_twice_and_the_wait_is_said() -> None:
    clock = FakeClock()
    transport = Script(clock)  # never answers
    with pytest.raises(LLMError) as info:
        _chat(clock, transport).complete([{"role": "user", "content": "hi"}])
    assert transport.sent == ["timeout", "timeout"]
    assert len(clock.sleeps) == 1
    message = str(info.value)
    assert message.startswith("no answer from http://127.0.0.1:9/v1/chat/completions within 5 s")
    assert re.search(r"\(gave up after 2 attempts, 10\.\d s\)$", message), message
    assert clock.now <= 2 * 5 + 8.0


def test_a_timeout_then_an_answer_returns_it() -> None:
    clock = FakeClock()
    transport = Script(clock, TimeoutError("timed out"), OK)
    assert _chat(clock, transport).complete([{"role": "user", "content": "hi"}]) == "hi"
    assert transport.sent == ["timeout", "200"]


def test_fast_server_errors_keep_their_retries() -> None:
    clock = FakeClock()
    busy = Response(503, "Service Unavailable", {}, b"{}")
    transport = Script(clock, busy, busy, busy, OK)
    assert _chat(clock, transport).complete([{"role": "user", "content": "hi"}]) == "hi"
    assert transport.sent == ["503", "503", "503", "200"]


def test_timeouts_among_other_failures_are_still_retried_once() -> None:
    clock = FakeClock()
    busy = Response(502, "Bad Gateway", {}, b"{}")
    transport = Script(clock, TimeoutError("timed out"), busy, TimeoutError("timed out"), OK)
    with pytest.raises(LLMError, match="gave up after 3 attempts"):
        _chat(clock, transport).complete([{"role": "user", "content": "hi"}])
    assert transport.sent.count("timeout") == 2


def test_a_retry_after_past_the_deadline_gives_up_at_once() -> None:
    clock = FakeClock()
    transport = Script(clock, Response(429, "Too Many Requests", {"retry-after": "25"}, b"{}"), OK)
    with pytest.raises(LLMError, match=r"rate limited \(429\)"):
        _chat(clock, transport).complete([{"role": "user", "content": "hi"}])
    assert transport.sent == ["429"] and clock.sleeps == []


def test_the_policy_defaults_keep_the_old_behaviour_for_other_callers() -> None:
    clock = FakeClock()
    transport = Script(clock)
    client = HttpClient(RetryPolicy(), sleep=clock.sleep, rng=random.Random(1), transport=transport, clock=clock)
    with pytest.raises(HttpError) as info:
        client.post_json("http://127.0.0.1:9/v1/embeddings", {}, timeout=2)
    assert transport.sent == ["timeout"] * 4  # embeddings: 3 retries, no deadline (a batch, not a person)
    assert info.value.attempts == 4 and info.value.waited == pytest.approx(clock.now)


_STEPS = st.sampled_from([TimeoutError("timed out"), ConnectionResetError(104, "reset"),
                          Response(503, "Service Unavailable", {}, b"{}"),
                          Response(429, "Too Many Requests", {"retry-after": "3"}, b"{}"), OK])


@settings(max_examples=80, deadline=None)
@given(st.lists(_STEPS, max_size=6), st.sampled_from([1.0, 5.0, 30.0]), st.integers(0, 5))
def test_any_failures_stay_within_the_deadline(script: list[Any], timeout: float, retries: int) -> None:
    clock = FakeClock()
    transport = Script(clock, *script)
    client = ChatClient("http://127.0.0.1:9/v1", "m", timeout=timeout, retries=retries, sleep=clock.sleep,
                        rng=random.Random(3), transport=transport, clock=clock)
    try:
        client.complete([{"role": "user", "content": "hi"}])
    except LLMError as exc:
        if clock.now >= 1.0 and len(transport.sent) > 1:
            assert f"{len(transport.sent)} attempts, " in str(exc)
    assert transport.sent.count("timeout") <= 2
    assert len(transport.sent) <= retries + 1
    assert clock.now <= 2 * timeout + 8.0 + 1e-9


# -- a real server on 127.0.0.1 that accepts the request and never answers in time --------------------------
@pytest.fixture
def silent_server() -> Iterator[tuple[str, list[str], threading.Event]]:
    received: list[str] = []
    release = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            received.append(self.path)
            release.wait(10)  # the client times out first; teardown releases the handler

        def log_message(self, format: str, *args: Any) -> None:
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", received, release
    finally:
        release.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def test_a_server_that_never_answers_gets_the_completion_twice(
        silent_server: tuple[str, list[str], threading.Event]) -> None:
    base, received, _ = silent_server
    sleeps: list[float] = []
    client = ChatClient(base, "m", timeout=0.3, sleep=sleeps.append)
    with pytest.raises(LLMError, match=r"no answer from .* within 0.3 s") as info:
        client.complete([{"role": "user", "content": "hi"}])
    assert received == ["/v1/chat/completions"] * 2
    assert "2 attempts" in str(info.value) and len(sleeps) == 1


# -- a real server on 127.0.0.1 that answers badly: slowly, without end, or with a wait ---------------------
class _Scripted(BaseHTTPRequestHandler):
    """Answers each POST as ``server.mode`` says; every loop is bounded and ends when ``server.stop`` is set."""

    protocol_version = "HTTP/1.1"
    server: Any

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.server.received.append(self.path)
        mode, stop = self.server.mode, self.server.stop
        try:
            if mode == "drip-body":  # headers at once, then a byte every 50 ms
                self.send_response(200)
                self.send_header("Content-Length", "100000")
                self.end_headers()
                for _ in range(400):
                    if stop.wait(0.05):
                        return
                    self.wfile.write(b" ")
                    self.wfile.flush()
            elif mode == "drip-headers":  # the status line, then a header a byte at a time
                self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                for _ in range(400):
                    if stop.wait(0.05):
                        return
                    self.wfile.write(b"x")
                    self.wfile.flush()
            elif mode == "stall-body":  # headers, then nothing
                self.send_response(200)
                self.send_header("Content-Length", "100")
                self.end_headers()
                self.wfile.flush()
                stop.wait(20)
            elif mode == "endless":  # a body that never ends (chunks until the client hangs up)
                self.send_response(200)
                self.end_headers()
                for _ in range(2000):  # 24 MB at most, far over the test's 1 MB cap
                    if stop.is_set():
                        return
                    self.wfile.write(b"[1," * 4096)
        except OSError:  # the client hung up: what these tests expect
            return

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def bad_server() -> Iterator[Any]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Scripted)
    httpd.daemon_threads = True
    httpd.received, httpd.stop, httpd.mode = [], threading.Event(), ""  # type: ignore[attr-defined]
    httpd.base = f"http://127.0.0.1:{httpd.server_address[1]}/v1"  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.stop.set()  # type: ignore[attr-defined]
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.mark.parametrize("mode", ["drip-body", "drip-headers", "stall-body"])
def test_a_slow_answer_is_a_timeout_within_the_deadline(bad_server: Any, mode: str) -> None:
    """A byte every 50 ms never trips a socket timeout of 0.3 s: the attempt as a whole is bounded."""
    bad_server.mode = mode
    sleeps: list[float] = []
    client = ChatClient(bad_server.base, "m", timeout=0.3, sleep=sleeps.append)
    with pytest.raises(LLMError, match=r"no answer from .* within 0.3 s") as info:
        client.complete([{"role": "user", "content": "hi"}])
    assert "2 attempts" in str(info.value)  # counted as timeouts: the completion is re-sent once
    assert bad_server.received == ["/v1/chat/completions"] * 2


def test_an_endless_answer_is_cut_at_the_cap(bad_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import engine.http

    monkeypatch.setattr(engine.http, "MAX_ANSWER_BYTES", 1024 * 1024)
    bad_server.mode = "endless"
    client = ChatClient(bad_server.base, "m", timeout=30, sleep=lambda s: None)
    with pytest.raises(LLMError, match=r"answered with more than 1 MB \(the most memdeck reads\)$"):
        client.complete([{"role": "user", "content": "hi"}])
    assert len(bad_server.received) == 1  # a too-long answer is not asked for again


@pytest.mark.parametrize(("retry_after", "said"), [
    ("3600", "the server asks to wait 60 min (Retry-After)"),
    ("Wed, 21 Oct 2099 07:28:00 GMT", "days (Retry-After)"),
    ("25", "the server asks to wait 25 s (Retry-After)"),  # fits no deadline of 2 × 5 s + 8 s either
])
def test_a_long_retry_after_is_said_and_not_waited(retry_after: str, said: str) -> None:
    clock = FakeClock()
    transport = Script(clock, Response(429, "Too Many Requests", {"retry-after": retry_after}, b"{}"), OK)
    with pytest.raises(LLMError) as info:
        _chat(clock, transport).complete([{"role": "user", "content": "hi"}])
    assert said in str(info.value) and transport.sent == ["429"] and clock.sleeps == []


@pytest.mark.parametrize(("url", "said"), [
    ("http://127.0.0.1:9/v1", "connection refused: is the server running at http://127.0.0.1:9/v1?"),
    ("http://nonexistent.invalid/v1", "cannot resolve the host in http://nonexistent.invalid/v1/chat/completions"),
])
def test_no_server_is_said_plainly(url: str, said: str) -> None:
    sleeps: list[float] = []
    with pytest.raises(LLMError) as info:
        ChatClient(url, "m", timeout=2, sleep=sleeps.append).complete([{"role": "user", "content": "hi"}])
    assert str(info.value).startswith(said), str(info.value)
