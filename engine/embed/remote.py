"""Embedding over HTTP: token-budget batches, a pause after a failure, errors that say what to check."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.embed.base import EmbeddingError, estimate_tokens, normalize, public_url, token_batches
from engine.embed.batching import QueryCache
from engine.http import HttpClient, HttpError, RetryPolicy, Transport

BACKOFF_START = 0.5
BACKOFF_MAX = 8.0
# After a failure, calls fail at once for this long: a dead server should not stall every keystroke's search.
PAUSE_SECONDS = 30.0


@dataclass(frozen=True)
class KnownModel:
    """A hosted model's native vector size and input limit (so no probe request is needed)."""

    dims: int
    max_tokens: int


class RemoteEmbedder:
    """Shared machinery of the HTTP providers; subclasses build requests and read answers.

    The API key goes only into request headers: never into the fingerprint, errors, ``repr`` or the index.
    """

    provider = "remote"
    default_base_url = ""
    default_key_env = ""
    default_max_tokens = 512
    max_batch_items = 2048
    known_models: Mapping[str, KnownModel] = {}

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "",
        api_key: str | None = None,
        key_source: str = "",
        headers: Mapping[str, str] | None = None,
        dimensions: int = 0,
        max_tokens: int = 0,
        batch_size: int = 32,
        batch_tokens: int = 8000,
        timeout: float = 60.0,
        retries: int = 3,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.monotonic,
        transport: Transport | None = None,
    ) -> None:
        self.model_id = model
        self.query_cache = QueryCache()  # a repeated search costs no request
        self.base_url = (base_url or self.default_base_url).strip().rstrip("/")
        self.url = public_url(self.base_url)
        self._api_key = api_key or None
        self.key_source = key_source or f"${self.default_key_env}"
        self._headers = dict(headers or {})
        self.requested_dims = dimensions
        known = self.known_models.get(model)
        self.dims = dimensions or (known.dims if known else 0)
        self.max_tokens = max_tokens or (known.max_tokens if known else self.default_max_tokens)
        self.batch_size = max(1, min(batch_size, self.max_batch_items))
        self.batch_tokens = max(1, batch_tokens)
        self.timeout = timeout
        self.retries = max(0, retries)
        # A refused connection fails at once: nothing listens there, and indexing should not stall on it.
        self._http = HttpClient(RetryPolicy(self.retries, BACKOFF_START, BACKOFF_MAX, retry_refused=False),
                                sleep=sleep, rng=rng, transport=transport)
        self._clock = clock
        self._paused_until = 0.0
        self._pause_reason = ""
        self.calls = 0
        self.texts_embedded = 0

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model_id!r}, base_url={self.url!r}, dims={self.dims})"

    # -- the Embedder interface -------------------------------------------------------------------
    @property
    def loaded(self) -> bool:
        """Whether the vector size is known (a model not in the table needs one probe request first)."""
        return self.dims > 0

    def fingerprint(self) -> str:
        """``provider:url:model:dims`` with the requested size or ``native``; never the key or headers."""
        return f"{self.provider}:{self.url}:{self.model_id}:{self.requested_dims or 'native'}"

    def load(self) -> None:
        """Learn the vector size with one short request when the model is not a known one.

        Raises:
            EmbeddingError: the provider could not be reached or refused the request.
        """
        if not self.dims:
            self.embed_query("dimension probe")

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Estimated tokens (no tokenizer for remote models): see :func:`estimate_tokens`."""
        return [estimate_tokens(t) for t in texts]

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit vectors for texts to index, in requests of at most ``batch_size`` texts and ``batch_tokens``.

        Raises:
            EmbeddingError: after retries, with a message saying what to check.
        """
        items = [t if t.strip() else " " for t in texts]
        out: list[list[float]] = []
        for batch in token_batches(self.count_tokens(items), self.batch_size, self.batch_tokens):
            out.extend(self._embed([items[i] for i in batch], query=False))
        return out

    def embed_query(self, text: str) -> list[float]:
        """A unit vector for a search query (at most one retry: a person is waiting).

        Raises:
            EmbeddingError: with a message saying what to check.
        """
        return self.query_cache.get_or_embed(text, lambda t: self._embed([t if t.strip() else " "], query=True)[0])

    def resume(self) -> None:
        """Forget the last failure so the next call tries the server again at once."""
        self._paused_until = 0.0
        self._pause_reason = ""

    # -- subclasses ---------------------------------------------------------------------------------
    def _build(self, texts: list[str], query: bool) -> tuple[str, dict[str, Any]]:
        """The endpoint URL and JSON body for one request."""
        raise EmbeddingError(self.provider, "no request format")  # pragma: no cover - abstract

    def _parse(self, data: Any, count: int) -> list[list[float]]:
        """Vectors from a decoded answer, in input order."""
        raise EmbeddingError(self.provider, "no answer format")  # pragma: no cover - abstract

    def _auth_headers(self) -> dict[str, str]:
        return {}

    def _not_found_hint(self) -> str:
        return f"check embedding.base_url and that the model {self.model_id!r} exists"

    def _is_auth_failure(self, status: int, detail: str) -> bool:
        return status in (401, 403)

    # -- transport ----------------------------------------------------------------------------------
    def _embed(self, texts: list[str], query: bool) -> list[list[float]]:
        url, payload = self._build(texts, query)
        data = self._post(url, payload, retries=min(self.retries, 1) if query else self.retries)
        try:
            vectors = self._parse(data, len(texts))
        except EmbeddingError as exc:
            self._pause(exc.message)
            raise
        for vec in vectors:
            if self.dims and len(vec) != self.dims:
                if self.requested_dims:
                    problem = (f"asked {self.url} for {self.requested_dims}-dim vectors and got {len(vec)}: "
                               f"does {self.model_id!r} support embedding.dimensions? (0 = its native size)")
                else:
                    problem = (f"{self.url} returned {len(vec)}-dim vectors for {self.model_id!r} where "
                               f"{self.dims} were expected; set embedding.dimensions = {len(vec)} if that is right")
                self._pause(problem)
                raise EmbeddingError(self.provider, problem)
            if not self.dims:
                self.dims = len(vec)
        self.calls += 1
        self.texts_embedded += len(texts)
        return [normalize(v) for v in vectors]

    def _pause(self, reason: str) -> None:
        self._paused_until = self._clock() + PAUSE_SECONDS
        self._pause_reason = reason

    def _fail(self, message: str) -> EmbeddingError:
        message = self._redact(message)
        self._pause(message)
        return EmbeddingError(self.provider, message)

    def _redact(self, text: str) -> str:
        if self._api_key and self._api_key in text:
            text = text.replace(self._api_key, "***")
        return text

    def _key_hint(self) -> str:
        if self._api_key is None:
            return f"no API key was sent: set {self.key_source}"
        return f"check the API key in {self.key_source}"

    def _post(self, url: str, payload: dict[str, Any], retries: int) -> Any:
        now = self._clock()
        if now < self._paused_until:
            raise EmbeddingError(
                self.provider,
                f"{self._pause_reason} — not retrying for {self._paused_until - now:.0f} s after that failure")
        headers = {**self._auth_headers(), **self._headers}
        try:
            data = self._http.post_json(url, payload, timeout=self.timeout, headers=headers, retries=retries,
                                        label=self.url)
        except HttpError as exc:
            raise self._fail(self._explain(exc)) from None
        self._paused_until = 0.0
        return data

    def _explain(self, exc: HttpError) -> str:
        """The transport's failure in this provider's terms: which setting or key to check."""
        suffix = f" ({exc.detail})" if exc.detail else ""
        status = exc.status or 0
        if exc.kind == "status" and self._is_auth_failure(status, exc.detail):
            return exc.explain(f"{status} {exc.reason} from {self.url}: {self._key_hint()}{suffix}")
        if exc.kind == "status" and status == 404:
            return exc.explain(f"404 from {self.url}: {self._not_found_hint()}{suffix}")
        if exc.kind == "status" and status == 413:
            return exc.explain(f"413 from {self.url}: the request is too large; lower embedding.batch_tokens "
                               f"or embedding.batch_size{suffix}")
        if exc.kind == "json":
            return exc.explain(f"{self.url} did not answer with JSON: is embedding.base_url an embeddings API "
                               "(it usually ends in /v1)?")
        hint = {"dns": "check embedding.base_url", "timeout": "raise embedding.timeout if the server is slow",
                "config": "check embedding.base_url and embedding.timeout"}.get(exc.kind, "")
        return exc.explain(hint=hint)
