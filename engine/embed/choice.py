"""Embedding providers behind one small interface, and the choice between them (local → openai → gemini → none)."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from engine.config import Config, EmbeddingConfig
from engine.display import plural
from engine.embed.base import EmbeddingError, estimate_tokens, normalize, public_url
from engine.embed.gemini import DEFAULT_BASE_URL as GEMINI_BASE_URL
from engine.embed.gemini import GEMINI_MODELS, GeminiEmbedder, normalize_gemini_model
from engine.embed.gemini import KEY_ENVS as GEMINI_KEY_ENVS
from engine.embed.local import (
    E5Embedder,
    LocalEmbedder,
    USEEmbedder,
    local_model_path,
    local_model_problem,
    make_local_embedder,
)
from engine.embed.openai import DEFAULT_BASE_URL as OPENAI_BASE_URL
from engine.embed.openai import DEFAULT_KEY_ENV as OPENAI_KEY_ENV
from engine.embed.openai import OPENAI_MODELS, OpenAIEmbedder, normalize_openai_model
from engine.embed.remote import RemoteEmbedder
from engine.local_models import DEFAULT_LOCAL_MODEL, LOCAL_MODELS, LocalModelSpec, resolve_local_model

__all__ = [
    "LOCAL_MODELS",
    "E5Embedder",
    "Embedder",
    "EmbeddingError",
    "GeminiEmbedder",
    "HashingEmbedder",
    "LocalEmbedder",
    "OpenAIEmbedder",
    "ProviderChoice",
    "USEEmbedder",
    "choose_provider",
    "describe_model_change",
    "estimate_tokens",
    "local_model_path",
    "make_embedder",
]

_WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)
AUTO_ORDER = ("local", "openai", "gemini")


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
        return normalize(vec)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        self.texts_embedded += len(texts)
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return [len(_WORD_RE.findall(t)) for t in texts]


@dataclass(frozen=True)
class ProviderChoice:
    """The provider that will be used, what was asked for, and why (always said, for status).

    ``dims`` is None for a remote model whose vector size is learned on its first request. ``base_url`` is the
    remote endpoint without credentials or query (None for local providers).
    """

    requested: str
    provider: str
    model: str | None
    dims: int | None
    reason: str | None
    base_url: str | None = None


@dataclass(frozen=True)
class _Key:
    value: str | None
    source: str  # where it came from or should come from, e.g. "$OPENAI_API_KEY" (never the key itself)


def _model_kind(name: str) -> str:
    """Which provider a configured model name belongs to: ``local``, ``gemini`` or ``openai``."""
    if resolve_local_model(name) is not None:
        return "local"
    lowered = name.strip().lower()
    if normalize_gemini_model(name) in GEMINI_MODELS or lowered.startswith(("gemini", "models/", "google/")):
        return "gemini"
    return "openai"


def _model_for(provider: str, configured: str, explicit: bool) -> str:
    """The model a provider uses: the configured one when it was asked for or fits, else the provider's default."""
    fits = explicit or (bool(configured.strip()) and _model_kind(configured) == provider)
    name = configured if fits else ""
    if provider == "openai":
        return normalize_openai_model(name)
    if provider == "gemini":
        return normalize_gemini_model(name)
    spec = resolve_local_model(name)
    return spec.name if spec is not None else name


def _api_key(provider: str, e: EmbeddingConfig, env: Mapping[str, str]) -> _Key:
    names = (e.api_key_env,) if e.api_key_env else ((OPENAI_KEY_ENV,) if provider == "openai" else GEMINI_KEY_ENVS)
    for name in names:
        if env.get(name):
            return _Key(env[name], f"${name}")
    return _Key(None, f"${names[0]}")


def _remote_target(e: EmbeddingConfig) -> str:
    """The one remote provider that ``base_url``, ``api_key_env``, ``headers`` and ``dimensions`` configure."""
    for name in (e.provider, e.fallback):
        if name in ("openai", "gemini"):
            return name
    return "gemini" if e.model.strip() and _model_kind(e.model) == "gemini" else "openai"


def _settings_for(provider: str, e: EmbeddingConfig) -> EmbeddingConfig:
    """``e`` for the remote provider it configures; the other one gets its defaults (an Ollama URL is no Gemini)."""
    if provider not in ("openai", "gemini") or provider == _remote_target(e):
        return e
    return replace(e, base_url="", api_key_env="", headers={}, dimensions=0)


def _try_provider(
    provider: str, e: EmbeddingConfig, env: Mapping[str, str], explicit: bool
) -> tuple[ProviderChoice | None, str]:
    """A choice for ``provider`` and why, or None and why not (nothing is loaded or contacted)."""
    if provider == "hash":
        return ProviderChoice(e.provider, "hash", HashingEmbedder.model_id, 256, "deterministic test embedder"), ""
    if provider == "none":
        return None, "keyword-only"
    if not explicit and e.model.strip() and _model_kind(e.model) != provider:
        return None, f"not for model {e.model.strip()!r}"
    model = _model_for(provider, e.model, explicit)
    e = _settings_for(provider, e)
    if provider == "local":
        spec: LocalModelSpec | None = resolve_local_model(model)
        if spec is None:
            return None, f"unknown local model {model!r} (known: {', '.join(LOCAL_MODELS)})"
        problem = local_model_problem(spec)
        if problem is not None:
            return None, problem
        return ProviderChoice(e.provider, "local", spec.name, spec.dims, f"local model {spec.name} is installed"), ""
    key = _api_key(provider, e, env)
    url = public_url(e.base_url or (OPENAI_BASE_URL if provider == "openai" else GEMINI_BASE_URL))
    if key.value is None and not e.base_url:
        return None, f"no API key ({key.source} is not set)"
    known = (OPENAI_MODELS if provider == "openai" else GEMINI_MODELS).get(model)
    dims = e.dimensions or (known.dims if known is not None else None)
    why = f"{key.source} is set" if key.value else f"base_url {url} is set (no key needed)"
    return ProviderChoice(e.provider, provider, model, dims, why, url), ""


def choose_provider(config: Config, environ: Mapping[str, str] | None = None) -> ProviderChoice:
    """Decide the provider without loading a model or touching the network.

    ``auto`` takes the first that can work of: the local model (package installed), ``openai`` (a key, or a
    ``base_url`` of a keyless server), ``gemini`` (a key); else ``fallback``; else keyword-only. An explicit
    provider that cannot work falls back to ``fallback``, else keyword-only. ``reason`` always says why.

    Args:
        config: the resolved configuration.
        environ: where to read API keys (default: the process environment).
    """
    e = config.embedding
    env = os.environ if environ is None else environ
    requested = e.provider
    if requested == "none":
        return ProviderChoice(requested, "none", None, None, "provider = none: keyword-only")
    if requested == "hash":
        choice, _ = _try_provider("hash", e, env, True)
        assert choice is not None
        return replace(choice, reason="provider = hash (deterministic test embedder)")
    if requested == "auto":
        notes: list[str] = []
        for name in AUTO_ORDER:
            choice, problem = _try_provider(name, e, env, explicit=False)
            if choice is not None:
                return replace(choice, reason="auto: " + "; ".join([*notes, f"{name}: {choice.reason}"]))
            notes.append(f"{name}: {problem}")
        tried = "auto: " + "; ".join(notes)
    else:
        choice, problem = _try_provider(requested, e, env, explicit=True)
        if choice is not None:
            return replace(choice, reason=f"provider = {requested}: {choice.reason}")
        tried = f"{requested} unavailable ({problem})"
    if e.fallback not in ("none", requested) and not (requested == "auto" and e.fallback in AUTO_ORDER):
        # The fallback keeps the configured model only when it is one of its own; else it uses its default.
        fits = bool(e.model.strip()) and _model_kind(e.model) == e.fallback
        fallback, fb_problem = _try_provider(e.fallback, e if fits else replace(e, model=""), env, explicit=False)
        if fallback is not None:
            return replace(fallback, requested=requested,
                           reason=f"{tried}; fallback = {e.fallback}: {fallback.reason}")
        tried += f"; fallback {e.fallback}: {fb_problem}"
    return ProviderChoice(requested, "none", None, None, f"{tried} → keyword-only")


def make_embedder(
    choice: ProviderChoice, config: Config, environ: Mapping[str, str] | None = None
) -> Embedder | None:
    """Build (but do not load or contact) the embedder for a provider choice; None for keyword-only."""
    e = config.embedding
    env = os.environ if environ is None else environ
    if choice.provider == "hash":
        return HashingEmbedder()
    if choice.provider == "local":
        spec = resolve_local_model(choice.model or DEFAULT_LOCAL_MODEL)
        return make_local_embedder(spec, e.batch_size) if spec is not None else None
    if choice.provider in ("openai", "gemini"):
        e = _settings_for(choice.provider, e)
        key = _api_key(choice.provider, e, env)
        cls: type[RemoteEmbedder] = OpenAIEmbedder if choice.provider == "openai" else GeminiEmbedder
        return cls(
            choice.model or "",
            base_url=e.base_url,
            api_key=key.value,
            key_source=key.source,
            headers=e.headers,
            dimensions=e.dimensions,
            max_tokens=e.max_input_tokens,
            batch_size=e.batch_size,
            batch_tokens=e.batch_tokens,
            timeout=e.timeout,
            retries=e.max_retries,
        )
    return None


def describe_model_change(built: Mapping[str, Any] | None, current: Mapping[str, Any],
                          chunks: Callable[[], int]) -> str | None:
    """The message for an index whose vectors another embedding model made, e.g. after the default changed.

    ``built`` is the identity the index was built with (None: a new index), ``current`` the identity it would
    have now; ``chunks`` counts what will be re-embedded (called only when the model changed). None when the
    vectors fit: same model, or no vectors on either side (keyword-only now leaves the old ones unused).

    Returns:
        ``"embedding model changed: all-MiniLM-L6-v2 → multilingual-e5-small; re-embedding 1,234 chunks once"``.
    """
    if not built:
        return None
    old_fp, new_fp = built.get("fingerprint"), current.get("fingerprint")
    if old_fp is None or new_fp is None or old_fp == new_fp:
        return None
    old, new = str(built.get("model") or old_fp), str(current.get("model") or new_fp)
    if old == new:  # the same model name made differently (another engine, size or input limit)
        old, new = str(old_fp), str(new_fp)
    n = chunks()
    return f"embedding model changed: {old} → {new}; re-embedding {plural(n, 'chunk', grouped=True)} once"
