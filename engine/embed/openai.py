"""Any OpenAI-compatible ``/v1/embeddings`` endpoint: OpenAI, Ollama, LM Studio, vLLM, llama.cpp server."""

from __future__ import annotations

import base64
import struct
from typing import Any

from engine.display import plural
from engine.embed.base import EmbeddingError
from engine.embed.remote import KnownModel, RemoteEmbedder

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "text-embedding-3-small"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"

OPENAI_MODELS = {
    "text-embedding-3-small": KnownModel(1536, 8191),
    "text-embedding-3-large": KnownModel(3072, 8191),
    "text-embedding-ada-002": KnownModel(1536, 8191),
}


def normalize_openai_model(name: str) -> str:
    """``openai/text-embedding-3-small`` → ``text-embedding-3-small``; empty → the default model."""
    name = name.strip()
    if name.lower().startswith("openai/"):
        name = name[len("openai/"):]
    return name or DEFAULT_MODEL


class OpenAIEmbedder(RemoteEmbedder):
    """``POST {base_url}/embeddings`` with ``{model, input: [...]}``; the key, if any, as a Bearer token.

    Servers other than OpenAI's usually need no key. A model not in :data:`OPENAI_MODELS` reports its vector
    size on the first request (see :meth:`load`) and is given a conservative 512-token input limit unless
    ``embedding.max_input_tokens`` says otherwise.
    """

    provider = "openai"
    default_base_url = DEFAULT_BASE_URL
    default_key_env = DEFAULT_KEY_ENV
    known_models = OPENAI_MODELS

    def _build(self, texts: list[str], query: bool) -> tuple[str, dict[str, Any]]:
        payload: dict[str, Any] = {"model": self.model_id, "input": texts, "encoding_format": "float"}
        if self.requested_dims:
            payload["dimensions"] = self.requested_dims
        return f"{self.base_url}/embeddings", payload

    def _auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}

    def _not_found_hint(self) -> str:
        return (f"check embedding.base_url (most servers want it to end in /v1) and that the model "
                f"{self.model_id!r} exists there (Ollama: ollama pull {self.model_id})")

    def _parse(self, data: Any, count: int) -> list[list[float]]:
        items = data.get("data") if isinstance(data, dict) else None
        if not isinstance(items, list) or len(items) != count:
            got = plural(len(items), "embedding") if isinstance(items, list) else "no embeddings"
            raise EmbeddingError(self.provider, f"{self.url} answered with {got} for {plural(count, 'input')} "
                                                "(expected an OpenAI-style {\"data\": [{\"embedding\": …}]})")
        if all(isinstance(it, dict) and isinstance(it.get("index"), int) for it in items):
            items = sorted(items, key=lambda it: it["index"])
        vectors: list[list[float]] = []
        for it in items:
            raw = it.get("embedding") if isinstance(it, dict) else None
            if isinstance(raw, str):  # base64 little-endian float32, as some servers send regardless
                try:
                    blob = base64.b64decode(raw, validate=True)
                except ValueError:
                    blob = b""
                if not blob or len(blob) % 4:
                    raise EmbeddingError(self.provider, f"{self.url} sent an embedding that is not a list of numbers")
                vectors.append(list(struct.unpack(f"<{len(blob) // 4}f", blob)))
            elif isinstance(raw, list) and raw and all(isinstance(x, (int, float)) for x in raw):
                vectors.append([float(x) for x in raw])
            else:
                raise EmbeddingError(self.provider, f"{self.url} sent an embedding that is not a list of numbers")
        return vectors
