"""Google Gemini embeddings: ``batchEmbedContents`` for documents and ``embedContent`` for queries."""

from __future__ import annotations

from typing import Any

from engine.display import plural
from engine.embed.base import EmbeddingError
from engine.embed.remote import KnownModel, RemoteEmbedder

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"
DEFAULT_MODEL = "gemini-embedding-001"
DEFAULT_KEY_ENV = "GEMINI_API_KEY"
KEY_ENVS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")

GEMINI_MODELS = {
    "gemini-embedding-001": KnownModel(3072, 2048),
    "text-embedding-004": KnownModel(768, 2048),
    "embedding-001": KnownModel(768, 2048),
}


def normalize_gemini_model(name: str) -> str:
    """Strip ``models/``, ``gemini/`` and ``google/``; empty → the default model."""
    name = name.strip()
    for prefix in ("models/", "gemini/", "google/"):
        if name.lower().startswith(prefix):
            name = name[len(prefix):]
    return name or DEFAULT_MODEL


class GeminiEmbedder(RemoteEmbedder):
    """Gemini's REST API with ``RETRIEVAL_DOCUMENT`` / ``RETRIEVAL_QUERY`` task types; key in ``x-goog-api-key``.

    The key travels in a header, never in the URL, so it cannot leak through a logged address.
    """

    provider = "gemini"
    default_base_url = DEFAULT_BASE_URL
    default_key_env = DEFAULT_KEY_ENV
    max_batch_items = 100  # batchEmbedContents takes at most 100 requests
    known_models = GEMINI_MODELS
    default_max_tokens = 2048

    def _content(self, text: str, task: str) -> dict[str, Any]:
        body: dict[str, Any] = {"content": {"parts": [{"text": text}]}, "taskType": task}
        if self.requested_dims:
            body["outputDimensionality"] = self.requested_dims
        return body

    def _build(self, texts: list[str], query: bool) -> tuple[str, dict[str, Any]]:
        if query:
            return f"{self.base_url}/models/{self.model_id}:embedContent", self._content(texts[0], "RETRIEVAL_QUERY")
        requests = [{"model": f"models/{self.model_id}", **self._content(t, "RETRIEVAL_DOCUMENT")} for t in texts]
        return f"{self.base_url}/models/{self.model_id}:batchEmbedContents", {"requests": requests}

    def _auth_headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self._api_key} if self._api_key else {}

    def _is_auth_failure(self, status: int, detail: str) -> bool:
        # Gemini answers a bad key with 400 INVALID_ARGUMENT "API key not valid".
        return status in (401, 403) or (status == 400 and "api key" in detail.lower())

    def _not_found_hint(self) -> str:
        return f"check that the Gemini model {self.model_id!r} exists (e.g. {DEFAULT_MODEL}) and embedding.base_url"

    def _parse(self, data: Any, count: int) -> list[list[float]]:
        if isinstance(data, dict) and isinstance(data.get("embedding"), dict):
            items: Any = [data["embedding"]]
        else:
            items = data.get("embeddings") if isinstance(data, dict) else None
        if not isinstance(items, list) or len(items) != count:
            got = plural(len(items), "embedding") if isinstance(items, list) else "no embeddings"
            raise EmbeddingError(self.provider, f"{self.url} answered with {got} for {plural(count, 'input')}")
        vectors: list[list[float]] = []
        for it in items:
            values = it.get("values") if isinstance(it, dict) else None
            if not isinstance(values, list) or not values or not all(isinstance(x, (int, float)) for x in values):
                raise EmbeddingError(self.provider, f"{self.url} sent an embedding without numeric values")
            vectors.append([float(x) for x in values])
        return vectors
