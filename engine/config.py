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

from engine.config_rules import EMBEDDING_ENV_PREFIX, validate
from engine.errors import ConfigError

APP_NAME = "memdeck"
MAX_CONFIG_BYTES = 1024 * 1024
"""The largest config file read (a config is a few KB; this stops a device or a mistaken path being read whole)."""


@dataclass(frozen=True)
class EmbeddingConfig:
    """Which embedding provider to use, where it is, and how to batch and retry it.

    Every key can also be set as ``MEMDECK_EMBEDDING_<KEY>`` (which wins over the file). ``model = ""`` and
    ``base_url = ""`` mean the provider's default (the local one is ``multilingual-e5-small``; an index another
    model built rebuilds once); ``dimensions = 0`` the model's native size;
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
class SearchHeuristics:
    """The search's fixed heuristics, measured on the evals (bench/README.md) and not set from the config file:
    the evals switch each off by replacing this value (``replace(settings, heuristics=...)``).

    Attributes:
        date_boosts: lift the dated notes a query names (its day, week or month) on the keyword leg.
        day_boost: a named or resolved day's lift: above .5, the best a note outside the named period reaches
            once BM25 is halved.
        range_boost: a day of a named week or weekend ("last week", "上周末"): BM25 picks among its days.
        near_boost: a day beside the one a "two weeks ago" names (±3 days): people count weeks loosely.
        month_boost: a day of a named month.
        calibrated_date_lift: under calibrated fusion and a relative date, a dated note's keyword part is at
            least its lift.
        date_words_in_terms: a relative date phrase's words stay in the keyword query ("yesterday", "ago").
        date_words_without_notes: a relative date phrase whose days hold no dated note keeps its words in the
            keyword query (``engine.search.pipeline.parse``); off, every such phrase's words leave it.
        spread_limit: a chunk with this share of its lines already in a better-ranked result of the same file
            goes behind the rest (above 1: never).
        drop_common_terms: leave the query terms found in more than half of the chunks out of the MATCH.
        pool: how a calibrated hybrid search takes its candidate pool (the ``want`` candidates the re-ranker
            and the results are chosen from, ``engine.search.pipeline.pool``): ``"shown"`` by the score a hit
            shows, ``"raw"`` by OpenClaw's fused score of the uncalibrated legs, ``"union"`` each leg's own top,
            ``"slot"`` / ``"raw-slot"`` the shown / raw pool with the vector leg's best candidate held at the
            ``vector_slot``-th place at least. Either way the pool is then
            ordered by, and ``min_score`` judges, the shown score. ``"raw-slot"``: the raw pool (the nested CV's
            pick on LoCoMo dev over ``"shown"``, hybrid hit@1 .736 against .730) with the slot, which lifts the
            curated-fact set's hybrid top-3 from 8 to 18 of 22 at the same hit@1 in every LoCoMo fold (MRR@10
            .814 against .816; bench/results/2026-12-03-retrieval-nested.md).
        vector_slot: under ``pool = "slot"`` / ``"raw-slot"``, the place the vector leg's best candidate holds
            at least (3: the first two stay the fused score's; the top 3 holds the vector leg's favourite).
        slot_by_score: a favourite the raw pool left out goes where its shown score puts it when that is above
            ``vector_slot`` (off: always at ``vector_slot``, even above a better score). Off: curated hybrid
            top-1 8 → 12 of 22 with it, LoCoMo hit@1 −.002 (conv-42 −.010), XQuAD ±.005.
        keyword_evidence: how a hybrid search weighs its keyword leg (``engine.search.pipeline.keyword_evidence``):
            ``"off"`` OpenClaw's fixed weights; ``"script"`` a leg that matched nothing abstains and each chunk's
            keyword weight follows the share of its letters in the query's scripts; ``"terms"`` and ``"best"``
            also scale it by the share of the query's terms the leg found (anywhere; in its best match).
            ``"script"`` since 2026-12-04 (bench/results/2026-12-04-fusion.md, lead's addendum): a chunk the
            leg cannot read keeps OpenClaw's vector weight and its keyword part counts for nothing. Against
            ``"off"``: LoCoMo dev the same ranking for all 760 questions (all-Latin text: every chunk is
            readable), XQuAD English questions over Chinese / Russian paragraphs .555 / .586 → .723 / .805 with
            mono en/zh/ru unchanged, and the dated (44/45), curated (18/22 top 3) and multilingual (18/20) evals
            unchanged. (Renormalising the unreadable chunk's vector part to full weight, as first built, cost the
            mixed-script dated eval 44 → 35.)
        evidence_full: under ``"terms"`` / ``"best"``, the share of the query's terms from which the keyword
            leg weighs in full (``min(1, share / evidence_full)``; 1: in proportion to the share).
        vector_lead: under ``pool = "slot"`` / ``"raw-slot"`` in a calibrated hybrid search, the margin of the
            vector leg's best candidate over its second (both probabilities) from which that favourite holds the
            1st place instead of ``vector_slot`` (0: off; ``engine.search.pipeline.vector_slot``). ``.15`` since
            2026-12-04 (bench/results/2026-12-04-curated-fusion.md): the nested LoCoMo CV's pick in 5 of 5 outer
            folds among the variants the side evals admitted (.05 / .10 cost XQuAD zh .022 / .012), the same
            LoCoMo ranking in every fold (nested hit@1 .737 ± .023, MRR .815), curated-fact hybrid top-1 8 → 14 of
            22 (top-3 18), XQuAD ru .894 → .903, zh .956 → .953, en and cross-lingual unchanged, multilingual
            18/20 and dates 44/45 unchanged. The score (OpenClaw's 0.7·vector + 0.3·keyword) does not change,
            only the favourite's place.
        drop_user_name: a query term that is the workspace user's name (a name label of ``USER.md``, an
            address label of ``MEMORY.md``: ``engine.search.names``) leaves the keyword query when other terms
            remain: it says who is asked about, which every line about them shares, and BM25 ranked the
            one-line "What to call them: Jay" above the line that answers "Jay在哪个时区?".
        modal_stop_words: the query also drops the modal and hedge words ("must might may shall likely
            probably maybe perhaps", :data:`engine.lexicon.MODAL_WORDS`) from its terms; off by default
            (bench/results/2026-12-06-retrieval.md).
        vector_prf: vector pseudo-relevance feedback (Rocchio), β (0: off): the query vector becomes
            ``normalize(q + β·mean of the best-window vectors of the first vector pass's top prf_k chunks)``
            and the vector leg (windows and line vectors) is searched with it (``engine.search.pipeline.
            feedback_vector``); off by default (bench/results/2026-12-06-retrieval.md).
        prf_k: under ``vector_prf``, how many of the first pass's nearest chunks feed the query back.
        snippet_answer: a snippet whose last line asks a question with the query's words takes the next line
            (the answer) in place of first lines whose query words the rest holds
            (``engine.search.snippets._answer``); off by default: LoCoMo hybrid snip@1 .649 → .661, snip@5
            .831 → .836, keyword snip@5 .823 → .816, shaped on the same questions
            (bench/results/2026-12-06-retrieval.md).
        curated_prior: b (0: off): a curated chunk's (``MEMORY.md`` / ``USER.md``) fused score × ``1 + b``, after
            decay and importance (stage 5b, ``engine.search.pipeline.weigh``), so it weighs the raw pool too; off by
            default (bench/results/2026-12-06-curated-prior.md).
        curated_slot: m (0: off): the best curated candidate whose shown score is at least ``(1 − m)`` × the 3rd
            result's takes the 3rd place when it stands lower (or outside the raw pool), after the vector slot
            (``engine.search.pipeline.curated_slot``); off by default (bench/results/2026-12-06-curated-prior.md).
    """

    date_boosts: bool = True
    day_boost: float = 0.55
    range_boost: float = 0.55
    near_boost: float = 0.4
    month_boost: float = 0.3
    calibrated_date_lift: bool = True
    date_words_in_terms: bool = False
    spread_limit: float = 0.7
    drop_common_terms: bool = True
    date_words_without_notes: bool = True
    pool: str = "raw-slot"
    vector_slot: int = 3
    slot_by_score: bool = False
    keyword_evidence: str = "script"
    evidence_full: float = 1.0
    vector_lead: float = 0.15
    drop_user_name: bool = True
    modal_stop_words: bool = False
    vector_prf: float = 0.0
    prf_k: int = 3
    snippet_answer: bool = False
    curated_prior: float = 0.0
    curated_slot: float = 0.0


INTERNAL = {"internal": True}
"""Field metadata of a setting the config file does not hold (it has no rule in ``engine.config_rules``)."""


def file_fields(cls: Any) -> tuple[Any, ...]:
    """The fields of a config section that the config file may set (all but those marked :data:`INTERNAL`)."""
    return tuple(f for f in fields(cls) if not f.metadata.get("internal"))


@dataclass(frozen=True)
class SearchConfig:
    """Hybrid search parameters (OpenClaw's defaults, decay and MMR off)."""

    max_results: int = 6
    min_score: float = 0.0  # on the scale a hit's score shows (Hit); 0: an answer found by meaning alone scores ~.01
    vector_weight: float = 0.7
    text_weight: float = 0.3
    candidate_multiplier: int = 4
    mmr: bool = False
    mmr_lambda: float = 0.7
    decay: bool = False
    half_life_days: float = 30.0
    vector_norm: str = "calibrated"  # both legs → probability of relevance per model; "raw" cosine; "minmax"
    line_weight: float = 0.5  # share of the vector score given to the chunk's best line (needs line vectors)
    line_text_weight: float = 0.3  # share of the keyword score given to the chunk's best line (BM25 per line)
    importance: bool = True  # OpenClaw's <!-- importance: N --> in MEMORY.md/USER.md: score × (0.75 + 0.05·N)
    rerank: bool = False  # the learned re-ranker (engine/search/rerank.json); opt-in: it hurt Chinese paraphrases
    heuristics: SearchHeuristics = field(default_factory=SearchHeuristics, metadata=INTERNAL)


@dataclass(frozen=True)
class MemoryConfig:
    """Which workspace files are memory, and the clock memory notes are written by.

    Attributes:
        legacy_lowercase_memory: also index a root ``memory.md`` (OpenClaw before 2026.9 did; 2026.9 skips it).
        timezone: the zone of memdeck's one clock (:mod:`engine.clock`): which day file a flush or an append
            goes to and its heading's time, session-note names, review stamps, "today" and "yesterday" in a
            query, and every time shown: ``""`` = the system's local zone, else an IANA name such as
            ``Europe/Berlin`` (or ``UTC``).
    """

    legacy_lowercase_memory: bool = False
    timezone: str = ""


@dataclass(frozen=True)
class IndexConfig:
    """What the indexer takes in: a Markdown file larger than ``max_file_bytes`` is skipped (and reported by
    ``status`` and ``doctor``), never read: one pasted log must not stall every sync or flood the index.

    ``vectors`` says what a chunk is embedded as (:data:`engine.index.embed_plan.VECTOR_PLANS`): ``windows+lines``
    (each window from its text, plus a vector per line), ``windows`` (no line vectors), ``lines`` (each
    window's vector the token-weighted mean ``m`` of its lines' vectors, its cosine with a query
    ``q·m / |m|^lines_power``: a chunk costs only its lines). ``line_min_tokens`` > 0 leaves lines shorter than that without a vector."""

    max_file_bytes: int = 4 * 1024 * 1024
    vectors: str = "windows+lines"  # engine.index.embed_plan.VECTOR_PLANS: how each window's vector is made
    lines_power: float = 0.5  # vectors = "lines": cosine = lines' mean cosine / |mean|^lines_power
    line_min_tokens: int = 0  # a picked line shorter than this (model tokens) gets no vector of its own


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
class ReviewConfig:
    """Thresholds of ``memdeck review`` (duplicates, conflicts, facts to promote); see ``engine/review``.

    Attributes:
        duplicate_similarity: how alike (0–1: IDF-weighted shared words and character trigrams, lifted by the
            line vectors' cosine when the index has them) two statements must read to be duplicates.
        conflict_similarity: how much of the shorter statement's subject (its words without the values) the
            other must share for a different time, number, version, name or a reversal to be a conflict.
        conflict_min_shared: the least IDF weight the shared subject words must carry (one uncommon word is
            about 2; a name in every line about 1), so "Mara" alone never makes two lines one subject.
        promote_min_score: the least rule score (0–1) a daily-note statement needs to be proposed for MEMORY.md.
        promote_known_similarity: a statement this alike to a MEMORY.md/USER.md line is held there already
            (not proposed); lower than ``duplicate_similarity`` on purpose.
        use_vectors: compare with the index's line vectors too, when it has them (read from the index only;
            the model is never loaded).
    """

    duplicate_similarity: float = 0.6
    conflict_similarity: float = 0.6
    conflict_min_shared: float = 2.0
    promote_min_score: float = 0.6
    promote_known_similarity: float = 0.4
    use_vectors: bool = True


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
    index: IndexConfig = field(default_factory=IndexConfig)
    llm: LLMConfig = field(default_factory=LLMConfig)
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    review: ReviewConfig = field(default_factory=ReviewConfig)
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


SECTION_CLASSES: dict[str, type] = {
    "embedding": EmbeddingConfig, "chunking": ChunkingConfig, "search": SearchConfig, "llm": LLMConfig,
    "index": IndexConfig,
    "memory": MemoryConfig,
    "review": ReviewConfig,
}
"""The dataclass each section builds (a test keeps the rules and the fields identical)."""


def section_fields() -> dict[str, set[str]]:
    """Each dataclass section's field names (what the rules must cover exactly)."""
    return {name: {f.name for f in file_fields(cls)} for name, cls in SECTION_CLASSES.items()}


def section_defaults() -> dict[str, dict[str, Any]]:
    """Each dataclass section's default values, by key: what :func:`engine.config_rules.validate` assumes unset."""
    return {name: {f.name: getattr(cls(), f.name) for f in file_fields(cls)} for name, cls in SECTION_CLASSES.items()}


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


def _section(data: Mapping[str, Any], base: Any) -> Any:
    """``base`` with the table's values (:func:`engine.config_rules.validate` has checked every key and type)."""
    updates: dict[str, Any] = {}
    for key, value in data.items():
        # TOML writes ``timeout = 60`` as an integer: a float field gets a float.
        updates[key] = float(value) if isinstance(getattr(base, key), float) else value
    return replace(base, **updates)


def _embedding_env(base: EmbeddingConfig, environ: Mapping[str, str]) -> EmbeddingConfig:
    """Apply ``MEMDECK_EMBEDDING_<KEY>`` variables (:func:`engine.config_rules.validate` has checked them)."""
    updates: dict[str, Any] = {}
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
    return replace(base, **updates)


def read_config_file(path: Path) -> dict[str, Any]:
    """Parse the TOML config file; a missing file is an empty config.

    Raises:
        ConfigError: the file is not valid TOML or cannot be read.
    """
    try:
        # Only so much of it: --config /dev/zero would read forever (/dev/null and <(…) are fine configs).
        with path.open("rb") as handle:
            raw = handle.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(str(path), "(file)", f"cannot read: {exc.strerror or exc}") from exc
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(str(path), "(file)", f"larger than {MAX_CONFIG_BYTES // 1024} KB: not a memdeck config")
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ConfigError(str(path), "(file)", "UTF-16 text: save it as UTF-8")
    try:
        # A UTF-8 byte-order mark (Windows Notepad writes one) is no TOML syntax error: it is dropped.
        return tomllib.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        at = exc.start + (3 if raw.startswith(b"\xef\xbb\xbf") else 0) + 1  # utf-8-sig counts after the mark
        raise ConfigError(str(path), "(file)", f"not UTF-8 text (byte {at} is not): save it as UTF-8") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), "(syntax)", str(exc)) from exc
    except ValueError as exc:  # an integer over Python's 4300-digit int limit: the parser's own ValueError
        raise ConfigError(str(path), "(syntax)", f"a value the parser cannot read: {exc}") from exc


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
    # Every key's type, range and allowed values, the file's and the environment's: the rest only builds.
    validate(data, defaults=section_defaults(), path=str(cfg_path), environ=os.environ)

    ws_value = workspace or os.environ.get("MEMDECK_WORKSPACE") or data.get("workspace")
    ws = Path(ws_value).expanduser() if ws_value else Path.home() / ".openclaw" / "workspace"
    extras = tuple((ws / Path(p).expanduser()) if not Path(p).expanduser().is_absolute() else Path(p).expanduser()
                   for p in data.get("extra_paths", []))
    sources_raw = data.get("sources", ["memory"])
    sess_value = sessions_dir or data.get("sessions_dir")

    embedding = _section(data.get("embedding", {}), EmbeddingConfig())
    embedding = _embedding_env(embedding, os.environ)
    cfg = Config(
        workspace=ws,
        home=home_path,
        config_path=cfg_path,
        extra_paths=extras,
        sources=tuple(dict.fromkeys(sources_raw)),
        # Absolute: a session found in it is handed on as a path, and a relative one would be read as a name.
        sessions_dir=Path(sess_value).expanduser().absolute() if sess_value else None,
        agent=data.get("agent", "main"),
        embedding=embedding,
        chunking=_section(data.get("chunking", {}), ChunkingConfig()),
        search=_section(data.get("search", {}), SearchConfig()),
        index=_section(data.get("index", {}), IndexConfig()),
        llm=_section(data.get("llm", {}), LLMConfig()),
        memory=_section(data.get("memory", {}), MemoryConfig()),
        review=_section(data.get("review", {}), ReviewConfig()),
        tui=dict(data.get("tui", {})),
        keys={str(k): str(v) for k, v in data.get("keys", {}).items()},
    )
    return cfg


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out
