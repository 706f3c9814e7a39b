"""engine.http: the one retry rule, Retry-After (seconds and dates), backoff with jitter, clear errors, timeouts."""

from __future__ import annotations

import json
import math
import random
import socket
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Iterator, Mapping
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from engine.embed.base import EmbeddingError
from engine.embed.openai import OpenAIEmbedder
from engine.http import (
    MAX_RETRY_AFTER,
    HttpClient,
    HttpError,
    Response,
    RetryPolicy,
    error_detail,
    is_retryable_status,
    parse_retry_after,
    public_url,
    validate_timeout,
)
from engine.memory.llm import ChatClient, LLMError
from tests.test_rel_crash import REPO

NOW = 1_750_000_000.0
URL = "http://127.0.0.1:9/v1/embeddings"
TOKEN = "sk-test-TOKEN-0123456789abcdef"


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


class FakeTransport:
    """Answers from a script: a :class:`Response` is returned, an exception raised; every call is recorded."""

    def __init__(self, *script: Response | BaseException) -> None:
        self.script: deque[Response | BaseException] = deque(script)
        self.calls: list[dict[str, Any]] = []

    def __call__(self, url: str, body: bytes, headers: Mapping[str, str], timeout: float) -> Response:
        self.calls.append({"url": url, "body": json.loads(body), "headers": dict(headers), "timeout": timeout})
        step = self.script.popleft() if self.script else ok()
        if isinstance(step, BaseException):
            raise step
        return step


def ok(data: Any = None) -> Response:
    return Response(200, "OK", {"content-type": "application/json"}, json.dumps(data or {"ok": True}).encode())


def fail(status: int, reason: str = "", body: Any = None, **headers: str) -> Response:
    raw = body if isinstance(body, bytes) else json.dumps(body or {"error": {"message": f"scripted {status}"}}).encode()
    return Response(status, reason, {k.lower().replace("_", "-"): v for k, v in headers.items()}, raw)


def _client(*script: Response | BaseException, **policy: Any) -> tuple[HttpClient, FakeTransport, Sleeps]:
    transport, sleeps = FakeTransport(*script), Sleeps()
    client = HttpClient(RetryPolicy(**policy), sleep=sleeps, rng=random.Random(5), transport=transport,
                        wall_clock=lambda: NOW)
    return client, transport, sleeps


# -- Retry-After ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "expected"),
    [("3", 3.0), ("0", 0.0), ("1.5", 1.5), ("-4", 0.0), ("600", MAX_RETRY_AFTER), (" 7 ", 7.0),
     (None, None), ("", None), ("soon", None), ("inf", None), ("nan", None)],
)
def test_retry_after_in_seconds(value: str | None, expected: float | None) -> None:
    assert parse_retry_after(value, now=NOW) == expected


@pytest.mark.parametrize(("offset", "expected"), [(12, 12.0), (-60, 0.0), (3600, MAX_RETRY_AFTER)])
def test_retry_after_as_an_http_date(offset: int, expected: float) -> None:
    header = formatdate(NOW + offset, usegmt=True)  # e.g. "Sun, 15 Jun 2025 15:06:52 GMT"
    assert parse_retry_after(header, now=NOW) == pytest.approx(expected)
    assert parse_retry_after(header, now=NOW, cap=5.0) == pytest.approx(min(expected, 5.0))


def test_retry_after_is_honoured_in_seconds_and_as_a_date() -> None:
    client, transport, sleeps = _client(fail(429, Retry_After="2"), fail(503, Retry_After=formatdate(NOW + 9, usegmt=True)),
                                        ok({"v": 1}))
    assert client.post_json(URL, {"x": 1}, timeout=5) == {"v": 1}
    assert sleeps.calls == [2.0, pytest.approx(9.0)]
    assert len(transport.calls) == 3


def test_a_long_retry_after_is_capped() -> None:
    client, _, sleeps = _client(fail(429, Retry_After="86400"), max_retry_after=4.0)
    client.post_json(URL, {}, timeout=5)
    assert sleeps.calls == [4.0]


# -- the retry rule --------------------------------------------------------------------------------------
@pytest.mark.parametrize("status", [429, 500, 501, 502, 503, 504, 599])
def test_429_and_every_5xx_are_retried(status: int) -> None:
    assert is_retryable_status(status)
    client, transport, sleeps = _client(fail(status))
    assert client.post_json(URL, {}, timeout=5) == {"ok": True}
    assert len(transport.calls) == 2 and len(sleeps.calls) == 1


def test_backoff_doubles_with_jitter_up_to_the_cap() -> None:
    client, _, sleeps = _client(*[fail(503)] * 6, retries=6, backoff=0.5, max_backoff=3.0)
    client.post_json(URL, {}, timeout=5)
    bases = [0.5, 1.0, 2.0, 3.0, 3.0, 3.0]
    assert len(sleeps.calls) == 6
    for got, base in zip(sleeps.calls, bases, strict=True):
        assert base <= got <= base * 1.2
    assert len(set(sleeps.calls)) == 6, "jitter spreads equal delays apart"


def test_gives_up_after_the_retries_saying_how_often_it_tried() -> None:
    client, transport, sleeps = _client(*[fail(503, "Service Unavailable", {"error": {"message": "overloaded"}})] * 4,
                                        retries=3)
    with pytest.raises(HttpError) as info:
        client.post_json(URL, {}, timeout=5)
    exc = info.value
    assert (exc.kind, exc.status, exc.attempts, exc.retried) == ("status", 503, 4, True)
    assert str(exc) == "503 Service Unavailable from http://127.0.0.1:9/v1/embeddings: overloaded (gave up after 4 attempts)"
    assert len(transport.calls) == 4 and len(sleeps.calls) == 3


def test_a_per_call_retry_count_overrides_the_policy() -> None:
    client, transport, _ = _client(*[fail(500)] * 5, retries=4)
    with pytest.raises(HttpError, match="gave up after 2 attempts"):
        client.post_json(URL, {}, timeout=5, retries=1)
    assert len(transport.calls) == 2


@pytest.mark.parametrize("status", [400, 401, 403, 404, 408, 409, 413, 422])
def test_other_4xx_answers_are_not_retried(status: int) -> None:
    assert not is_retryable_status(status)
    client, transport, sleeps = _client(fail(status, "Nope", {"error": {"message": "bad input"}}))
    with pytest.raises(HttpError) as info:
        client.post_json(URL, {}, timeout=5)
    assert (info.value.status, info.value.detail, info.value.retried) == (status, "bad input", False)
    assert str(info.value) == f"{status} Nope from http://127.0.0.1:9/v1/embeddings: bad input"
    assert len(transport.calls) == 1 and sleeps.calls == []


@pytest.mark.parametrize(
    ("error", "kind", "needle"),
    [
        (TimeoutError("timed out"), "timeout", "no answer from http://127.0.0.1:9/v1/embeddings within 5 s"),
        (ConnectionResetError(104, "Connection reset by peer"), "network", "cannot reach"),
        (ConnectionRefusedError(111, "Connection refused"), "refused", "is the server running at"),
    ],
)
def test_connection_errors_are_retried(error: BaseException, kind: str, needle: str) -> None:
    client, transport, sleeps = _client(error, ok({"after": "retry"}))
    assert client.post_json(URL, {}, timeout=5) == {"after": "retry"}
    assert len(transport.calls) == 2 and len(sleeps.calls) == 1
    client, _, sleeps = _client(error, error, retries=1)
    with pytest.raises(HttpError) as info:
        client.post_json(URL, {}, timeout=5)
    assert info.value.kind == kind and needle in str(info.value) and "gave up after 2 attempts" in str(info.value)


def test_a_refused_connection_can_fail_at_once_and_a_bad_host_always_does() -> None:
    client, transport, sleeps = _client(ConnectionRefusedError(111, "refused"), retry_refused=False)
    with pytest.raises(HttpError, match=r"^connection refused: is the server running at http://127\.0\.0\.1:9/v1/embeddings\?$"):
        client.post_json(URL, {}, timeout=5)
    assert len(transport.calls) == 1 and sleeps.calls == []
    client, transport, sleeps = _client(socket.gaierror(-2, "Name or service not known"))
    with pytest.raises(HttpError) as info:
        client.post_json(URL, {}, timeout=5)
    assert info.value.kind == "dns" and len(transport.calls) == 1 and sleeps.calls == []


def test_a_bug_in_the_transport_is_not_mistaken_for_a_network_failure() -> None:
    client, _, sleeps = _client(RuntimeError("boom"))
    with pytest.raises(RuntimeError, match="boom"):
        client.post_json(URL, {}, timeout=5)
    assert sleeps.calls == []


# -- answers and errors ----------------------------------------------------------------------------------
def test_sends_json_with_the_headers_and_decodes_the_answer() -> None:
    client, transport, _ = _client(ok({"data": [1, 2]}))
    assert client.post_json(URL, {"input": ["a"]}, timeout=2.5, headers={"Authorization": "Bearer k"}) == {"data": [1, 2]}
    (call,) = transport.calls
    assert call["body"] == {"input": ["a"]} and call["timeout"] == 2.5
    assert call["headers"]["Content-Type"] == "application/json" and call["headers"]["Authorization"] == "Bearer k"


def test_a_2xx_answer_that_is_not_json_is_a_clear_error() -> None:
    client, transport, sleeps = _client(Response(200, "OK", {}, b"<html>a login page</html>"))
    with pytest.raises(HttpError, match="did not answer with JSON") as info:
        client.post_json(URL, {}, timeout=5)
    assert info.value.kind == "json" and len(transport.calls) == 1 and sleeps.calls == []


def test_errors_never_show_credentials() -> None:
    echo = {"error": {"message": f"Incorrect API key provided: {TOKEN}; header x-key={TOKEN[:-2]}xy"}}
    client, _, _ = _client(fail(401, "Unauthorized", echo))
    url = f"https://user:hunter2-pw@api.example.com/v1/embeddings?key={TOKEN}"
    with pytest.raises(HttpError) as info:
        client.post_json(url, {}, timeout=5, headers={"Authorization": f"Bearer {TOKEN}", "X-Key": TOKEN[:-2] + "xy"})
    text = str(info.value)
    assert TOKEN not in text and "hunter2" not in text and "?key" not in text
    assert info.value.endpoint == "https://api.example.com/v1/embeddings"
    assert "Incorrect API key provided: ***" in text


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"error": {"message": "model  not\\nfound"}}', "model not found"),
        (b'{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED"}}', "RESOURCE_EXHAUSTED"),
        (b'{"error": "plain string"}', "plain string"),
        (b'{"message": "top-level message"}', "top-level message"),
        (b"Bad Gateway from nginx", "Bad Gateway from nginx"),
        (b"x" * 1000, "x" * 300 + "…"),
        (b"", ""),
    ],
)
def test_error_detail_finds_the_servers_message(body: bytes, expected: str) -> None:
    assert error_detail(body) == expected


# -- timeouts and addresses ------------------------------------------------------------------------------
@pytest.mark.parametrize("timeout", [0, -1, -0.5, math.nan, math.inf, True, "5", None])
def test_a_bad_timeout_is_a_clear_error_and_nothing_is_sent(timeout: Any) -> None:
    with pytest.raises(HttpError, match="the timeout must be a positive number of seconds"):
        validate_timeout(timeout)
    client, transport, _ = _client()
    with pytest.raises(HttpError) as info:
        client.post_json(URL, {}, timeout=timeout)
    assert info.value.kind == "config" and "Timeout value out of range" not in str(info.value)
    assert transport.calls == []


@pytest.mark.parametrize("timeout", [0.001, 1, 30.0])
def test_a_positive_timeout_is_accepted(timeout: float) -> None:
    assert validate_timeout(timeout) == float(timeout)


def test_the_clients_report_a_bad_timeout_in_their_own_terms() -> None:
    with pytest.raises(LLMError, match=r"\[llm\] timeout: the timeout must be a positive number"):
        ChatClient("http://127.0.0.1:9/v1", "m", timeout=0)
    emb = OpenAIEmbedder("stub-small", base_url="http://127.0.0.1:9/v1", timeout=-1.0, sleep=Sleeps())
    with pytest.raises(EmbeddingError, match=r"positive number of seconds.*embedding\.timeout"):
        emb.embed_documents(["x"])


@pytest.mark.parametrize("url", ["ftp://example.com/v1", "http://", "file:///etc/passwd", "http://host:port/v1",
                                 "127.0.0.1:11434/v1"])
def test_a_bad_address_is_a_clear_error(url: str) -> None:
    client, transport, _ = _client()
    with pytest.raises(HttpError, match="not a valid http:// or https:// address") as info:
        client.post_json(url, {}, timeout=5)
    assert info.value.kind == "config" and transport.calls == []


def test_public_url_drops_credentials_query_and_fragment() -> None:
    assert public_url("https://u:p@Example.com:8443/v1/?key=s#x") == "https://example.com:8443/v1"
    assert public_url("http://[::1]:11434/v1/") == "http://[::1]:11434/v1"


# -- against a real server -------------------------------------------------------------------------------
@pytest.fixture
def server() -> Iterator[tuple[str, deque[tuple[int, dict[str, str], bytes]], list[str]]]:
    script: deque[tuple[int, dict[str, str], bytes]] = deque()
    paths: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            paths.append(self.path)
            status, headers, body = script.popleft() if script else (200, {}, b'{"ok": true}')
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", script, paths
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def test_urllib_transport_against_a_local_server(
    server: tuple[str, deque[tuple[int, dict[str, str], bytes]], list[str]],
) -> None:
    base, script, paths = server
    script.append((503, {"Retry-After": formatdate(NOW + 3, usegmt=True)}, b'{"error": {"message": "warming up"}}'))
    script.append((429, {"retry-after": "1"}, b"{}"))
    script.append((200, {"Content-Type": "application/json"}, b'{"answer": 42}'))
    sleeps = Sleeps()
    client = HttpClient(sleep=sleeps, rng=random.Random(1), wall_clock=lambda: NOW)
    assert client.post_json(f"{base}/chat/completions", {"q": 1}, timeout=5) == {"answer": 42}
    assert sleeps.calls == [pytest.approx(3.0), 1.0]
    assert paths == ["/v1/chat/completions"] * 3
    script.append((400, {}, b'{"error": {"message": "unknown field"}}'))
    with pytest.raises(HttpError) as info:
        client.post_json(f"{base}/x", {}, timeout=5)
    assert (info.value.status, info.value.reason, info.value.detail) == (400, "Bad Request", "unknown field")
    assert sleeps.calls == [pytest.approx(3.0), 1.0], "a 4xx is not retried"


def test_retry_after_is_parsed_only_in_engine_http() -> None:
    found = subprocess.run(["grep", "-rln", "--include=*.py", "-i", "retry-after", "engine"], cwd=REPO,
                           capture_output=True, text=True, check=False).stdout.split()
    assert found == ["engine/http.py"], found


def test_importing_engine_http_loads_no_urllib_request() -> None:
    code = "import sys, engine.http; print('urllib.request' in sys.modules, 'http.client' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


@pytest.mark.parametrize(("status", "retried"), [(429, True), (500, True), (501, True), (503, True), (408, False),
                                                 (409, False), (425, False), (400, False)])
def test_embeddings_and_chat_share_one_retry_rule(status: int, retried: bool) -> None:
    embed_answer = ok({"data": [{"index": 0, "embedding": [0.6, 0.8]}]})
    chat_answer = ok({"choices": [{"message": {"content": "fine"}}]})
    embed_transport = FakeTransport(fail(status), embed_answer)
    emb = OpenAIEmbedder("stub", base_url="http://127.0.0.1:9/v1", sleep=Sleeps(), transport=embed_transport)
    chat_transport = FakeTransport(fail(status), chat_answer)
    chat = ChatClient("http://127.0.0.1:9/v1", "m", sleep=Sleeps(), transport=chat_transport)
    if retried:
        assert emb.embed_documents(["x"]) == [[pytest.approx(0.6), pytest.approx(0.8)]]
        assert chat.complete([{"role": "user", "content": "x"}]) == "fine"
    else:
        with pytest.raises(EmbeddingError):
            emb.embed_documents(["x"])
        with pytest.raises(LLMError):
            chat.complete([{"role": "user", "content": "x"}])
    assert len(embed_transport.calls) == len(chat_transport.calls) == (2 if retried else 1)
