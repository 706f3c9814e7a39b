"""Configuration: defaults, the TOML config file, environment overrides, and where memdeck keeps its files."""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from engine.errors import ConfigError

APP_NAME = "memdeck"
PROVIDERS = ("auto", "local", "openai", "gemini", "none", "hash")
FALLBACKS = ("none", "local", "openai", "gemini", "hash")
SEARCH_MODES = ("hybrid", "keyword", "vector")
SOURCES = ("memory", "sessions")
EMBEDDING_ENV_PREFIX = "MEMDECK_EMBEDDING_"


@dataclass(frozen=True)
class EmbeddingConfig:
    """Which embedding provider to use, where it is, and how to batch and retry it.

    Every key can also be set as ``MEMDECK_EMBEDDING_<KEY>`` (which wins over the file). ``model = ""`` and
    ``base_url = ""`` mean the provider's default; ``dimensions = 0`` the model's native size;
    ``max_input_tokens = 0`` the model's own limit. Keys live only in the environment (``api_key_env``
    names the variable); ``headers`` may hold secrets too, so they stay out of ``repr``.
    """

    provider: str = "auto"
    model: str = ""
    base_url: str = ""
    api_key_env: str = ""
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    dimensions: int = 0
    fallback: str = "none"
    batch_size: int = 32
    batch_tokens: int = 8000
    max_input_tokens: int = 0
    timeout: float = 60.0
    max_retries: int = 3


@dataclass(frozen=True)
class ChunkingConfig:
    """Chunk size and overlap in tokens (≈4 characters each, CJK weighted)."""

    tokens: int = 400
    overlap: int = 80
    window_tokens: int = 0  # embedding window; 0 = the model's limit
    line_vectors: bool = True  # a small vector per line as well, to re-rank candidates and place snippets


@dataclass(frozen=True)
class SearchConfig:
    """Hybrid search parameters (OpenClaw's defaults, decay and MMR off)."""

    max_results: int = 6
    min_score: float = 0.35
    vector_weight: float = 0.7
    text_weight: float = 0.3
    candidate_multiplier: int = 4
    mmr: bool = False
    mmr_lambda: float = 0.7
    decay: bool = False
    half_life_days: float = 30.0
    vector_norm: str = "raw"  # raw cosine, or "minmax" over the candidates
    line_weight: float = 0.7  # share of the vector score given to the chunk's best line (needs line vectors)
    line_text_weight: float = 0.3  # share of the keyword score given to the chunk's best line (BM25 per line)


@dataclass(frozen=True)
class LLMConfig:
    """An OpenAI-compatible chat endpoint used to draft flushes (optional; ``ChatClient.from_config`` uses it).

    Attributes:
        base_url: e.g. ``http://127.0.0.1:11434/v1`` or ``https://api.openai.com/v1``; empty = no LLM.
        model: the model name; empty = no LLM.
        api_key_env: the environment variable holding the API key (may be unset for local servers).
        timeout: seconds per request.
    """

    base_url: str = ""
    model: str = ""
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float = 30.0


@dataclass(frozen=True)
class Config:
    """Everything the engine needs to know, resolved from defaults, the file, the environment and flags."""

    workspace: Path
    home: Path
    config_path: Path
    extra_paths: tuple[Path, ...] = ()
    sources: tuple[str, ...] = ("memory",)
    sessions_dir: Path | None = None
    agent: str = "main"
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    chunking: ChunkingConfig = field(default_factory=ChunkingConfig)
    search: SearchConfig = field(default_factory=SearchConfig)
    llm: LLMConfig = field(default_factory=LLMConfig)
    tui: dict[str, Any] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)

    @property
    def index_path(self) -> Path:
        """The SQLite index for this workspace and agent (never inside the workspace)."""
        return index_path_for(self.home, self.workspace, self.agent)

    @property
    def resolved_sessions_dir(self) -> Path:
        """The agent's sessions folder: the configured one, else OpenClaw's default."""
        env = os.environ.get("MEMDECK_SESSIONS")
        if env:
            return Path(env).expanduser()
        if self.sessions_dir is not None:
            return self.sessions_dir
        return Path.home() / ".openclaw" / "agents" / self.agent / "sessions"


def memdeck_home() -> Path:
    """Where memdeck writes its config, index and cache: ``MEMDECK_HOME`` or the platform data dir."""
    env = os.environ.get("MEMDECK_HOME")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_data_dir  # deferred: only needed without MEMDECK_HOME

    return Path(user_data_dir(APP_NAME, appauthor=False))


def default_config_path(home: Path | None = None) -> Path:
    """The config file: ``$MEMDECK_HOME/config.toml``, else the platform config dir."""
    if home is not None or os.environ.get("MEMDECK_HOME"):
        return (home or memdeck_home()) / "config.toml"
    from platformdirs import user_config_dir

    return Path(user_config_dir(APP_NAME, appauthor=False)) / "config.toml"


def index_path_for(home: Path, workspace: Path, agent: str) -> Path:
    """One index file per workspace+agent under ``home/index``."""
    resolved = str(Path(workspace).expanduser().resolve())
    digest = hashlib.sha256(f"{resolved}\0{agent}".encode()).hexdigest()[:12]
    name = Path(resolved).name or "root"
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)[:40]
    return home / "index" / f"{safe}-{digest}.sqlite"


def _check_type(path: str, key: str, value: Any, kind: type | tuple[type, ...]) -> Any:
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, bool) and kind is not bool and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise ConfigError(path, key, f"expected {_kind_name(kind)}, got a boolean")
    if not isinstance(value, kind):
        raise ConfigError(path, key, f"expected {_kind_name(kind)}, got {type(value).__name__} {value!r}")
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    if isinstance(kind, tuple):
        return " or ".join(k.__name__ for k in kind)
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false", list: "a list"}.get(
        kind, kind.__name__
    )


def _section(path: str, prefix: str, cls: type, data: Any, base: Any) -> Any:
    if not isinstance(data, dict):
        raise ConfigError(path, prefix, "expected a table")
    known = {f.name: f for f in fields(cls)}
    updates: dict[str, Any] = {}
    for key, value in data.items():
        if key not in known:
            raise ConfigError(path, f"{prefix}.{key}", f"unknown key (known: {', '.join(sorted(known))})")
        current = getattr(base, key)
        updates[key] = _check_type(path, f"{prefix}.{key}", value, type(current))
    return replace(base, **updates)


def _validate(path: str, cfg: Config) -> None:
    e, c, s = cfg.embedding, cfg.chunking, cfg.search
    _validate_embedding(path, e)
    if c.tokens < 16:
        raise ConfigError(path, "chunking.tokens", "must be at least 16")
    if not 0 <= c.overlap < c.tokens:
        raise ConfigError(path, "chunking.overlap", "must be between 0 and chunking.tokens - 1")
    if s.max_results < 1:
        raise ConfigError(path, "search.max_results", "must be at least 1")
    if not 0.0 <= s.min_score <= 1.0:
        raise ConfigError(path, "search.min_score", "must be between 0 and 1")
    if s.vector_weight < 0 or s.text_weight < 0 or s.vector_weight + s.text_weight <= 0:
        raise ConfigError(path, "search.vector_weight", "weights must be ≥ 0 and not both 0")
    if s.candidate_multiplier < 1:
        raise ConfigError(path, "search.candidate_multiplier", "must be at least 1")
    if not 0.0 <= s.mmr_lambda <= 1.0:
        raise ConfigError(path, "search.mmr_lambda", "must be between 0 and 1")
    for key in ("line_weight", "line_text_weight"):
        if not 0.0 <= getattr(s, key) <= 1.0:
            raise ConfigError(path, f"search.{key}", "must be between 0 and 1")
    if s.vector_norm not in ("raw", "minmax"):
        raise ConfigError(path, "search.vector_norm", f"must be raw or minmax, got {s.vector_norm!r}")
    if c.window_tokens < 0:
        raise ConfigError(path, "chunking.window_tokens", "must be 0 (the model's limit) or more")
    if s.half_life_days <= 0:
        raise ConfigError(path, "search.half_life_days", "must be greater than 0")
    for src in cfg.sources:
        if src not in SOURCES:
            raise ConfigError(path, "sources", f"unknown source {src!r} (known: memory, sessions)")


def _validate_embedding(path: str, e: EmbeddingConfig) -> None:
    if e.provider not in PROVIDERS:
        raise ConfigError(path, "embedding.provider", f"must be one of {', '.join(PROVIDERS)}, got {e.provider!r}")
    if e.fallback not in FALLBACKS:
        raise ConfigError(path, "embedding.fallback", f"must be one of {', '.join(FALLBACKS)}, got {e.fallback!r}")
    if e.provider == "local" and e.model.strip():
        from engine.embed.local import LOCAL_MODELS, resolve_local_model  # light: stdlib only

        if resolve_local_model(e.model) is None:
            raise ConfigError(path, "embedding.model",
                              f"unknown local model {e.model!r} (known: {', '.join(LOCAL_MODELS)})")
    if e.base_url and not e.base_url.startswith(("http://", "https://")):
        raise ConfigError(path, "embedding.base_url", f"must start with http:// or https://, got {e.base_url!r}")
    for key, low in (("batch_size", 1), ("batch_tokens", 1), ("dimensions", 0), ("max_input_tokens", 0),
                     ("max_retries", 0)):
        if getattr(e, key) < low:
            raise ConfigError(path, f"embedding.{key}", f"must be at least {low}")
    if e.max_retries > 10:
        raise ConfigError(path, "embedding.max_retries", "must be at most 10")
    if e.timeout <= 0:
        raise ConfigError(path, "embedding.timeout", "must be greater than 0 (seconds)")
    for name, value in e.headers.items():
        if not isinstance(value, str):
            raise ConfigError(path, "embedding.headers", f"{name}: expected a string, got {type(value).__name__}")


def _embedding_env(base: EmbeddingConfig, environ: Mapping[str, str]) -> tuple[EmbeddingConfig, dict[str, str]]:
    """Apply ``MEMDECK_EMBEDDING_<KEY>`` variables; returns the config and which keys came from which variable."""
    updates: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for f in fields(EmbeddingConfig):
        var = EMBEDDING_ENV_PREFIX + f.name.upper()
        raw = environ.get(var)
        if raw is None or raw.strip() == "":
            continue
        kind = type(getattr(base, f.name))
        where = f"environment variable {var}"
        try:
            if kind is int:
                value: Any = int(raw.strip())
            elif kind is float:
                value = float(raw.strip())
            elif kind is dict:
                value = json.loads(raw)
                if not isinstance(value, dict):
                    raise ValueError(raw)
            else:
                value = raw.strip()
        except ValueError:
            expected = {int: "an integer", float: "a number", dict: 'a JSON object like {"X-Org": "a"}'}[kind]
            raise ConfigError(where, f"embedding.{f.name}", f"expected {expected}, got {raw!r}") from None
        updates[f.name] = value
        sources[f"embedding.{f.name}"] = var
    return replace(base, **updates), sources


def read_config_file(path: Path) -> dict[str, Any]:
    """Parse the TOML config file; a missing file is an empty config.

    Raises:
        ConfigError: the file is not valid TOML or cannot be read.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(str(path), "(file)", f"cannot read: {exc.strerror or exc}") from exc
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(str(path), "(file)", "not UTF-8 text") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), "(syntax)", str(exc)) from exc


def load_config(
    workspace: str | Path | None = None,
    home: str | Path | None = None,
    config_path: str | Path | None = None,
    sessions_dir: str | Path | None = None,
    overrides: dict[str, Any] | None = None,
) -> Config:
    """Resolve the configuration.

    Precedence for the workspace: the argument, ``MEMDECK_WORKSPACE``, the config file's ``workspace``,
    then ``~/.openclaw/workspace``. ``MEMDECK_EMBEDDING_<KEY>`` overrides ``embedding.<key>`` (e.g.
    ``MEMDECK_EMBEDDING_PROVIDER=openai``, ``MEMDECK_EMBEDDING_BASE_URL=http://127.0.0.1:11434/v1``).

    Args:
        workspace: an explicit workspace folder (``--workspace``).
        home: an explicit data dir (tests); defaults to :func:`memdeck_home`.
        config_path: an explicit config file; defaults to ``<config dir>/config.toml``.
        sessions_dir: an explicit sessions folder (``--sessions``).
        overrides: nested dict merged over the file's values (same shape as the TOML).

    Raises:
        ConfigError: naming the file, the key and the problem.
    """
    home_path = Path(home).expanduser() if home is not None else memdeck_home()
    cfg_path = Path(config_path).expanduser() if config_path is not None else default_config_path(
        home_path if home is not None else None
    )
    data = read_config_file(cfg_path)
    if overrides:
        data = _merge(data, overrides)
    where = str(cfg_path)
    from engine.config_rules import validate  # deferred: config_rules imports this module's dataclasses

    validate(data, path=where, environ=os.environ)  # every key's type and range, the file's and the env's
    known_top = {"workspace", "extra_paths", "sources", "sessions_dir", "agent", "embedding", "chunking",
                 "search", "llm", "tui", "keys"}
    for key in data:
        if key not in known_top:
            raise ConfigError(where, key, f"unknown key (known: {', '.join(sorted(known_top))})")

    ws_value = workspace or os.environ.get("MEMDECK_WORKSPACE") or data.get("workspace")
    if ws_value is not None and not isinstance(ws_value, (str, Path)):
        raise ConfigError(where, "workspace", "expected a string path")
    ws = Path(ws_value).expanduser() if ws_value else Path.home() / ".openclaw" / "workspace"

    extra_raw = data.get("extra_paths", [])
    if not isinstance(extra_raw, list) or not all(isinstance(p, str) for p in extra_raw):
        raise ConfigError(where, "extra_paths", "expected a list of strings")
    extras = tuple((ws / Path(p).expanduser()) if not Path(p).expanduser().is_absolute() else Path(p).expanduser()
                   for p in extra_raw)

    sources_raw = data.get("sources", ["memory"])
    if not isinstance(sources_raw, list) or not all(isinstance(p, str) for p in sources_raw):
        raise ConfigError(where, "sources", "expected a list of strings like [\"memory\", \"sessions\"]")

    agent = data.get("agent", "main")
    if not isinstance(agent, str) or not agent:
        raise ConfigError(where, "agent", "expected a non-empty string")

    sess_value = sessions_dir or data.get("sessions_dir")
    if sess_value is not None and not isinstance(sess_value, (str, Path)):
        raise ConfigError(where, "sessions_dir", "expected a string path")

    embedding = _section(where, "embedding", EmbeddingConfig, data.get("embedding", {}), EmbeddingConfig())
    embedding, env_keys = _embedding_env(embedding, os.environ)
    cfg = Config(
        workspace=ws,
        home=home_path,
        config_path=cfg_path,
        extra_paths=extras,
        sources=tuple(dict.fromkeys(sources_raw)),
        sessions_dir=Path(sess_value).expanduser() if sess_value else None,
        agent=agent,
        embedding=embedding,
        chunking=_section(where, "chunking", ChunkingConfig, data.get("chunking", {}), ChunkingConfig()),
        search=_section(where, "search", SearchConfig, data.get("search", {}), SearchConfig()),
        llm=_section(where, "llm", LLMConfig, data.get("llm", {}), LLMConfig()),
        tui=_table(where, "tui", data.get("tui", {})),
        keys={str(k): str(v) for k, v in _table(where, "keys", data.get("keys", {})).items()},
    )
    try:
        _validate(where, cfg)
    except ConfigError as exc:
        if exc.key in env_keys:  # name the variable that set it, not the file
            raise ConfigError(f"environment variable {env_keys[exc.key]}", exc.key, exc.problem) from None
        raise
    return cfg


def _table(path: str, key: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(path, key, "expected a table")
    return dict(value)


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def save_config_values(path: Path, updates: dict[str, Any]) -> None:
    """Merge ``updates`` into the TOML config file and write it atomically (tomli-w).

    Used for settings the TUI persists (theme, search mode).
    """
    import tomli_w

    from engine.textio import atomic_write_text, make_private_dir

    data = read_config_file(path)
    merged = _merge(data, updates)
    make_private_dir(path.parent)
    atomic_write_text(path, tomli_w.dumps(merged), mode=0o600)
