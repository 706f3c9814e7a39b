"""memory_search: the keyword leg (FTS5 BM25), the vector leg (sqlite-vec KNN), fusion, selection, snippets."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import date
from typing import Any

from engine.config import SearchConfig, SearchHeuristics
from engine.index import queries
from engine.index.chunking import chunk_curated, has_cjk, importance_multiplier
from engine.index.store import DB_ERRORS, Store, is_corruption, serialize_vector
from engine.index.vectors import VectorIndex
from engine.search.calibration import Calibration, calibration_for
from engine.search.dates import DateSpan, date_matches, file_date, month_matches
from engine.search.fusion import (
    Fused,
    decay_factor,
    fuse_scores,
    mmr_order,
    normalize_bm25,
    query_scripts,
    script_overlap,
)
from engine.search.names import names_in, without_names
from engine.search.query import ParsedQuery, build_fts_query, parse_query
from engine.search.rerank import LegInputs, Reranker, candidate_features, shipped_reranker
from engine.search.snippets import best_line_bm25, extract_snippet, stem, term_weights
from engine.workspace import ROOT_MEMORY_FILES, is_curated

MIN_CANDIDATES = 50
COMPLETION_DEPTH = 8
_HEURISTICS = SearchHeuristics()


@dataclass(frozen=True)
class Hit:
    """One search result: where it is, how it scored, and the snippet an agent reads.

    ``score`` (0–1, or up to 1.25 with an importance weight) is the one score of a result: it orders the
    results, every door shows it, and ``min_score`` judges it. Its scale depends on the search:

    - hybrid, a calibrated model (the shipped local models): ``0.7·vectorScore + 0.3·textScore`` where both
      parts are fitted probabilities that the chunk holds what was asked (most hits score .02–.35);
    - hybrid, an uncalibrated model (remote providers): OpenClaw's ``0.7·cosine + 0.3·keyword``;
    - keyword (including a hybrid search that fell back to keyword): BM25 relative to the best match (1.0),
      blended with the best line's, halved and lifted when the query names a date;
    - vector: the best window's cosine blended with the best line's;
    - re-ranked (``rerank = true``): the re-ranker's probability (``rerank`` says how much it moved).

    When the legs are weighed by what the keyword leg can see (``SearchHeuristics.keyword_evidence``), a hybrid
    hit's ``vector_weight`` and ``text_weight`` are its legs' weights: ``vector_weight·vectorScore +
    text_weight·textScore`` (OpenClaw's 0.7/0.3 when the keyword leg sees the whole query in the chunk's
    script; 0.7/0 for a chunk in a script the query is not; 1/0 when the leg matched nothing and abstains).
    """

    path: str
    start_line: int
    end_line: int
    score: float
    vector_score: float | None
    text_score: float
    snippet: str
    snippet_start_line: int
    snippet_end_line: int
    spans: tuple[tuple[int, int], ...]
    source: str
    citation: str
    rerank: float | None = None  # the re-ranker's change to the fused score (None: not re-ranked)
    text_weight: float | None = None  # the keyword part's weight in the fused score (None: OpenClaw's 0.3)
    vector_weight: float | None = None  # the vector part's weight when the legs were weighed (None: 0.7)
    context: str = ""  # a curated entry's heading path ("Work › Projects"), empty for other chunks
    best_line: int | None = None  # the file line closest in meaning to the query (its line vector), if known
    placed: str = ""  # "vector": placed above a higher score as the vector leg's surest candidate (vector_slot);
    # "curated": as the best curated candidate (curated_slot)

    def to_json(self) -> dict[str, Any]:
        """OpenClaw's result shape plus score parts, snippet lines and spans (camelCase)."""
        out: dict[str, Any] = {
            "path": self.path,
            "startLine": self.start_line,
            "endLine": self.end_line,
            "score": round(self.score, 6),
            "vectorScore": None if self.vector_score is None else round(self.vector_score, 6),
            "textScore": round(self.text_score, 6),
            "snippet": self.snippet,
            "snippetStartLine": self.snippet_start_line,
            "snippetEndLine": self.snippet_end_line,
            "spans": [list(s) for s in self.spans],
            "source": self.source,
            "citation": self.citation,
        }
        if self.context:
            out["context"] = self.context
        if self.best_line is not None:
            out["bestLine"] = self.best_line
        if self.placed:
            # Above a higher score on purpose: the vector leg's surest candidate holds its place (vector_slot).
            out["placed"] = self.placed
        if self.text_weight is not None:
            # score = vectorWeight·vectorScore + textWeight·textScore (OpenClaw's 0.7/0.3 at full evidence)
            vw = self.vector_weight if self.vector_weight is not None else 1.0 - self.text_weight
            out["vectorWeight"] = round(vw, 6)
            out["textWeight"] = round(self.text_weight, 6)
        if self.rerank is not None:
            # score = 0.7·vectorScore + 0.3·textScore (OpenClaw's formula) + rerank
            out["rerank"] = round(self.rerank, 6)
        return out


@dataclass(frozen=True)
class SearchResponse:
    """Results plus what produced them and anything the reader should know (degradations)."""

    results: tuple[Hit, ...]
    provider: str
    model: str | None
    mode: str
    warnings: tuple[str, ...] = ()
    dates: tuple[DateSpan, ...] = ()  # the query's date phrases as resolved (shown above the results)
    not_embedded: int = 0  # chunks searched by keyword only (no vectors yet); each door says what embeds them
    embed_seconds: float | None = None  # ≈ seconds embedding them takes at the measured speed (None: unknown)

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` payload (``dates`` only when the query named one)."""
        out: dict[str, Any] = {
            "results": [h.to_json() for h in self.results],
            "provider": self.provider,
            "model": self.model,
            "mode": self.mode,
        }
        if self.dates:
            out["dates"] = [span.to_json() for span in self.dates]
        if self.warnings:
            out["warnings"] = list(self.warnings)
        if self.not_embedded:
            out["notEmbedded"] = self.not_embedded
            if self.embed_seconds is not None:
                out["embedSeconds"] = round(self.embed_seconds, 1)
        return out


def citation(path: str, start: int, end: int) -> str:
    """``path#L12-L30`` (or ``path#L12`` for one line)."""
    return f"{path}#L{start}" if start == end else f"{path}#L{start}-L{end}"


@dataclass(frozen=True)
class _Row:
    id: int
    path: str
    source: str
    start_line: int
    end_line: int
    text: str
    line_map: tuple[int, ...] | None
    importance: int | None = None


def common_terms(store: Store, terms: Sequence[str]) -> frozenset[str]:
    """The query terms found in more than half of the chunks (each count stops just past half).

    FTS5's BM25 gives such a term an IDF of ~0 (``log((N - n + 0.5) / (n + 0.5))`` clamped to 1e-6), so it
    changes no ranking, yet matching it walks most of the index: at 10k chunks a query of four such words cost
    35 ms against a few for its rare words. Dropping them from the MATCH keeps the ranking and bounds the cost.
    """
    if len(terms) < 2:
        return frozenset()
    total = queries.chunk_count(store.conn)
    if total < 4:
        return frozenset()
    half = total // 2 + 1
    common = set()
    for term in terms:
        n = queries.fts_match_count(store.conn, '"' + term.replace('"', '""') + '"', half)
        if n >= half:
            common.add(term)
    return frozenset(common) if len(common) < len(terms) else frozenset()


def keyword_candidates(
    store: Store, query: ParsedQuery, limit: int, sources: Sequence[str], drop_common: bool = True
) -> dict[int, float]:
    """Chunk id → raw FTS5 ``bm25()`` rank (negative; lower is better) for the top ``limit`` matches.

    ``drop_common`` leaves the terms of most chunks out of the MATCH (:func:`common_terms`)."""
    try:
        fts = build_fts_query(query, common_terms(store, query.terms) if drop_common else frozenset())
        if fts is None:
            return {}
        if not queries.has_other_sources(store.conn, sources):
            # Every chunk is from a wanted source: skip the join, which doubles FTS5's cost.
            rows = queries.fts_match(store.conn, fts, limit)
        else:
            rows = queries.fts_match_in_sources(store.conn, fts, sources, limit)
    except DB_ERRORS as exc:
        if is_corruption(exc):
            raise  # the engine moves a damaged index aside and rebuilds it
        return {}
    return {int(r[0]): float(r[1]) for r in rows}


def vector_candidates(
    store: Store, qvec: list[float], limit: int, sources: Sequence[str]
) -> tuple[dict[int, float], dict[int, tuple[int, int]]]:
    """Chunk id → best window cosine similarity, and that window's line offsets, for the nearest chunks."""
    blob = serialize_vector(qvec)
    k = min(4096, limit * 3)
    rows = queries.vec_knn(store.conn, blob, k, sources)
    scores: dict[int, float] = {}
    focus: dict[int, tuple[int, int]] = {}
    for chunk_id, distance, first, last in rows:
        if distance is None:
            continue
        sim = 1.0 - float(distance)
        if chunk_id not in scores:
            scores[int(chunk_id)] = sim
            focus[int(chunk_id)] = (int(first), int(last))
        if len(scores) >= limit:
            break
    return scores, focus


def feedback_vector(store: Store, qvec: list[float], k: int, beta: float, sources: Sequence[str],
                    vindex: VectorIndex | None = None) -> list[float]:
    """Vector pseudo-relevance feedback (Rocchio; ``SearchHeuristics.vector_prf``): ``normalize(q + β·m)``, where
    ``m`` is the mean of the (unit) best-window vectors of the ``k`` chunks nearest ``qvec``; ``qvec`` itself when
    no chunk is near or ``beta`` ≤ 0. The window vectors are read from the index by chunk id (≤ ``k`` chunks'
    windows), so the cost is one more nearest-chunk search. A hit's vector score is then its cosine to the new
    vector."""
    if beta <= 0 or k <= 0:
        return qvec
    import numpy as np  # deferred: a vector search has the model (and numpy) loaded already

    in_memory = vindex is not None and vindex.worthwhile(store)
    nearest = vindex.nearest if in_memory and vindex is not None else vector_candidates
    scores, focus = nearest(store, qvec, k, sources)
    top = sorted(scores, key=lambda c: (-scores[c], c))[:k]
    if not top:
        return qvec
    q = np.asarray(qvec, dtype=np.float32)
    windows = {(c, first, last): blob for c, first, last, blob in queries.window_vectors_for(store.conn, top)}
    picked = [windows.get((c, *focus[c])) for c in top if c in focus]
    vecs = [np.frombuffer(b, dtype=np.float32) for b in picked if b is not None and len(b) == 4 * q.size]
    if not vecs:
        return qvec
    mat = np.stack(vecs)
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    q_norm = float(np.linalg.norm(q)) or 1.0
    moved = q / q_norm + beta * (mat / norms).mean(axis=0)
    length = float(np.linalg.norm(moved))
    return [float(x) for x in (moved / length if length > 0 else q)]


def vector_scores_for(
    store: Store, qvec: list[float], ids: Sequence[int]
) -> tuple[dict[int, float], dict[int, tuple[int, int]]]:
    """Exact cosine similarity for specific chunks (best window), to complete keyword candidates."""
    if not ids:
        return {}, {}
    blob = serialize_vector(qvec)
    rows = queries.vec_distances_for(store.conn, blob, ids)
    scores: dict[int, float] = {}
    focus: dict[int, tuple[int, int]] = {}
    for chunk_id, distance, first, last in rows:
        if distance is None:
            continue
        sim = 1.0 - float(distance)
        if sim > scores.get(int(chunk_id), -2.0):
            scores[int(chunk_id)] = sim
            focus[int(chunk_id)] = (int(first), int(last))
    return scores, focus


def line_scores_for(store: Store, qvec: list[float], ids: Sequence[int],
                    known: Mapping[int, Sequence[tuple[int, bytes]]] | None = None) -> dict[int, dict[int, float]]:
    """Chunk id → {line offset in the chunk: cosine similarity} from the chunks' line vectors.

    ``known`` holds line vectors already read (:func:`line_vectors_of`, while the query was being embedded): only
    the other chunks' are read now. The rows are put in the order the one read of every chunk returns them, so the
    one matrix product gives the same floats bit for bit (a product's rounding depends on a row's position).
    """
    if not ids:
        return {}
    import numpy as np  # deferred: a vector search has the model (and numpy) loaded already

    q = np.asarray(qvec, dtype=np.float32)
    rows = [r for r in line_rows(store, ids, known) if len(r[2]) == q.size]
    if not rows:
        return {}
    mat = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.int8).reshape(len(rows), q.size).astype(np.float32)
    norms = np.linalg.norm(mat, axis=1)
    norms[norms == 0] = 1.0
    sims = (mat @ q) / (norms * (float(np.linalg.norm(q)) or 1.0))
    out: dict[int, dict[int, float]] = {}
    for (chunk_id, line, _blob), sim in zip(rows, sims.tolist(), strict=True):
        out.setdefault(int(chunk_id), {})[int(line)] = float(sim)
    return out


def line_rows(store: Store, ids: Sequence[int], known: Mapping[int, Sequence[tuple[int, bytes]]] | None = None
              ) -> list[tuple[int, int, bytes]]:
    """(chunk id, line offset, int8 vector) of these chunks' line vectors, as one read of the index returns them;
    the chunks in ``known`` are not read again."""
    if known is None:
        return queries.line_vectors_for(store.conn, ids)
    have = line_vectors_of(store, [i for i in ids if i not in known])
    return [(chunk_id, line, blob) for chunk_id in _sql_order(ids)
            for line, blob in (known[chunk_id] if chunk_id in known else have.get(chunk_id, ()))]


def line_vectors_of(store: Store, ids: Sequence[int]) -> dict[int, list[tuple[int, bytes]]]:
    """Chunk id → its (line offset, int8 vector) rows by offset, for each of ``ids`` (an empty list: none)."""
    out: dict[int, list[tuple[int, bytes]]] = {int(i): [] for i in ids}
    for chunk_id, line, blob in queries.line_vectors_for(store.conn, list(out)):
        out[chunk_id].append((line, blob))
    for rows in out.values():
        rows.sort(key=lambda r: r[0])
    return out


def _sql_order(ids: Sequence[int]) -> list[int]:
    """``ids`` in the order a read of the index by ids returns them: ascending within each slice of
    ``queries.SLICE`` ids, the slices in turn (SQLite walks an ``IN (…)`` list through a sorted index)."""
    items = list(ids)
    return [i for start in range(0, len(items), queries.SLICE) for i in sorted(items[start : start + queries.SLICE])]


def range_days(ranges: Sequence[DateSpan], heuristics: SearchHeuristics = _HEURISTICS) -> dict[date, float]:
    """Each day of the query's week-like spans with its boost (the larger one where spans overlap)."""
    out: dict[date, float] = {}
    for span in ranges:
        boost = heuristics.near_boost if span.peak is not None else heuristics.range_boost
        for day in span.days():
            out[day] = max(out.get(day, 0.0), boost)
    return out


def parse(store: Store, text: str, today: date, sources: Sequence[str],
          heuristics: SearchHeuristics = _HEURISTICS) -> ParsedQuery:
    """The search's one parse of its query text, relative dates counted from ``today``; each relative date
    phrase whose days hold no dated note keeps its words in the keyword query.

    A phrase that names days without notes is not about those notes: in a transcript "last weekend" is the
    speaker's, not today's (LoCoMo "What event did John volunteer at last weekend?" fell from rank 3 to none
    with the words dropped), and such a phrase lifts nothing, so its words may as well match what they say.
    ``heuristics.date_words_without_notes`` off drops every relative phrase's words (the evals' switch).
    """
    keeps = (lambda span: not _has_notes(store, span, sources)) if heuristics.date_words_without_notes else None
    parsed = parse_query(text, today, keeps_words=keeps, date_words_in_terms=heuristics.date_words_in_terms,
                         modal_stop_words=heuristics.modal_stop_words)
    if heuristics.drop_user_name and "memory" in sources and parsed.terms:
        terms = without_names(parsed.terms, user_names(store))
        if terms != parsed.terms:
            parsed = replace(parsed, terms=terms, bigrams=tuple(t for t in parsed.bigrams if t in terms))
    return parsed


def user_names(store: Store) -> frozenset[str]:
    """The workspace user's name as its curated files give it (:func:`engine.search.names.names_in`), read from
    the index once per version of those files."""
    hashes = queries.file_hashes(store.conn, ROOT_MEMORY_FILES)
    key = tuple(sorted(hashes.items()))
    if not hashes:
        return frozenset()
    if key not in _NAMES:
        rows = load_rows(store, [chunk_id for chunk_id, _ in queries.chunk_ids_for_paths(store.conn, sorted(hashes))])
        if len(_NAMES) >= _CONTEXTS_KEPT:
            _NAMES.pop(next(iter(_NAMES)))
        _NAMES[key] = names_in((r.path, r.text) for r in rows.values())
    return _NAMES[key]


_NAMES: dict[tuple[tuple[str, str], ...], frozenset[str]] = {}
"""(curated file, its content hash) pairs → the user's name words read from them (:func:`user_names`)."""


def _has_notes(store: Store, span: DateSpan, sources: Sequence[str]) -> bool:
    if span.kind == "month":
        patterns = [f"%{span.start.year:04d}-{span.start.month:02d}-%"]
    else:
        patterns = [f"%{day.isoformat()}%" for day in span.days()]
    paths = queries.daily_paths_like(store.conn, patterns, sources)
    return any((day := file_date(p)) is not None and span.start <= day <= span.end for p in paths)


def dated_chunks(store: Store, query: ParsedQuery, sources: Sequence[str],
                 heuristics: SearchHeuristics = _HEURISTICS) -> dict[int, float]:
    """Chunks of the dated daily notes (and session notes) whose day, range or month the query names, with
    their keyword boost (:class:`SearchHeuristics`): a named or resolved day ``day_boost``, a day of a week or
    weekend ``range_boost``, a day around "N weeks ago" ``near_boost``, a day of a month ``month_boost`` (the
    largest that applies)."""
    dates, months, spans = query.dates, query.months, range_days(query.ranges, heuristics)
    if not dates and not months and not spans:
        return {}
    # Only the files whose names hold a named day or month (a superset the rules below then check exactly):
    # reading every path cost 13.6 ms per dated query at 10k chunks and 74 ms at 100k.
    patterns = [f"%{y:04d}-{m:02d}-{d:02d}%" if y is not None else f"%-{m:02d}-{d:02d}%" for y, m, d in dates]
    patterns += [f"%{y:04d}-{m:02d}-%" for y, m in months]
    patterns += [f"%{day.isoformat()}%" for day in spans]
    paths = queries.daily_paths_like(store.conn, patterns, sources)
    boosts: dict[str, float] = {}
    for p in paths:
        day = file_date(p)
        boost = heuristics.day_boost if dates and date_matches(p, dates) else 0.0
        if day is not None:
            boost = max(boost, spans.get(day, 0.0))
        if not boost and months and month_matches(p, months):
            boost = heuristics.month_boost
        if boost:
            boosts[p] = boost
    if not boosts:
        return {}
    return {chunk_id: boosts[path] for chunk_id, path in queries.chunk_ids_for_paths(store.conn, sorted(boosts))}


def load_rows(store: Store, ids: Sequence[int], known: Mapping[int, _Row] | None = None) -> dict[int, _Row]:
    """The chunks for the given ids (those in ``known`` not read again), in the order the index returns them."""
    if not ids:
        return {}
    if known:
        have = load_rows(store, [i for i in ids if i not in known])
        return {i: known[i] if i in known else have[i] for i in _sql_order(ids) if i in known or i in have}
    out: dict[int, _Row] = {}
    for r in queries.chunk_rows(store.conn, ids):
        line_map = tuple(json.loads(r[6])) if r[6] else None
        out[int(r[0])] = _Row(int(r[0]), r[1], r[2], int(r[3]), int(r[4]), r[5], line_map, r[7])
    return out


# -- the request, the hooks, and the values the stages hand on ----------------------------------------------
@dataclass(frozen=True)
class SearchRequest:
    """What one search asks for.

    Attributes:
        query: the one parse of the query text (:func:`parse`).
        mode: ``hybrid``, ``keyword`` or ``vector`` (as run: a hybrid search without a query vector is keyword).
        qvec: the query embedding (None: no vector leg).
        max_results: results returned at most.
        min_score: no result scores below it, on the scale results show (:attr:`Hit.score`).
        sources: the sources searched (``memory``, ``sessions``).
        model: the embedding model's name (it picks the calibration).
        english_only_vectors: the model reads only English: CJK queries let the keyword leg lead.
    """

    query: ParsedQuery
    mode: str
    qvec: list[float] | None
    max_results: int
    min_score: float
    sources: tuple[str, ...]
    model: str | None = None
    english_only_vectors: bool = False

    @property
    def use_kw(self) -> bool:
        """Whether the keyword leg runs."""
        return self.mode in ("hybrid", "keyword")

    @property
    def use_vec(self) -> bool:
        """Whether the vector leg runs."""
        return self.mode in ("hybrid", "vector") and self.qvec is not None

    def depth(self, settings: SearchConfig) -> int:
        """Candidates taken from each leg."""
        return max(self.max_results * settings.candidate_multiplier, MIN_CANDIDATES)


@dataclass(frozen=True)
class SearchHooks:
    """What an evaluation plugs into a search (a product search passes none).

    Attributes:
        reranker: replaces the shipped re-ranker (the CV harness passes each fold's).
        calibration: replaces the shipped calibration (a CV fold's).
        collect: receives the top candidates' re-ranker features (for training), whether or not re-ranking is on.
    """

    reranker: Reranker | None = None
    calibration: Calibration | None = None
    collect: list[dict[str, Any]] | None = None


NO_HOOKS = SearchHooks()


@dataclass
class Candidates:
    """The candidate chunks of both legs with their raw scores.

    Attributes:
        deep: chunk id → raw FTS5 ``bm25()`` rank of the deep keyword list (its tail completes vector candidates).
        ranks: the keyword candidates: the top of ``deep``, plus the vector candidates it holds.
        vector: chunk id → best-window cosine (None: no vector leg), including the keyword and dated candidates.
        focus: chunk id → the best window's line offsets.
        dated: the chunks of the dated notes the query names, with their lift (see :func:`dated_chunks`).
    """

    deep: dict[int, float]
    ranks: dict[int, float]
    vector: dict[int, float] | None
    focus: dict[int, tuple[int, int]]
    dated: dict[int, float]


@dataclass
class Legs:
    """Each leg's score per candidate, in [0, 1], as fused.

    Attributes:
        keyword: normalised BM25 (mixed with best-line BM25), then lifted by dates and calibrated.
        vector: best-window cosine mixed with the best line's (None: no vector leg), then normalised.
        window: the raw best-window cosines (re-ranker features).
        lines: chunk id → {line offset: cosine} of its line vectors.
        best_lines: chunk id → best-line BM25 (raw).
        rows: the chunks already read from the index.
        calibrated: whether both legs are probabilities of relevance (:func:`calibrate`).
    """

    keyword: dict[int, float]
    vector: dict[int, float] | None
    window: dict[int, float] | None
    lines: dict[int, dict[int, float]]
    best_lines: dict[int, float]
    rows: dict[int, _Row]
    calibrated: bool = False
    raw: tuple[dict[int, float] | None, dict[int, float]] | None = None
    evidence: dict[int, float] | None = None  # what the keyword leg sees per chunk (:func:`keyword_evidence`)
    unembedded: frozenset[int] = frozenset()  # keyword candidates with no vectors yet: the vector leg abstains

    @property
    def uncalibrated(self) -> tuple[dict[int, float] | None, dict[int, float]]:
        """The vector leg (None: none, or empty) and the keyword leg as they were before :func:`calibrate`."""
        return self.raw if self.raw is not None else (self.vector or None, self.keyword)


# -- the stages ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Early:
    """What a search reads before its query vector exists: :func:`read_early` runs it while the query is embedded
    (a worker thread runs the model), and the stages take it instead of reading the same things again.

    Attributes:
        key: what it was read for (the parse, the sources, the keyword depth, the heuristics): the stages use it
            only for a request with the same key (:func:`early_key`), so results never depend on it.
        deep: the deep keyword list (:func:`keyword_candidates`), as :func:`candidates` reads it.
        dated: the dated chunks (:func:`dated_chunks`).
        rows: the top keyword candidates' chunks (:func:`load_rows`).
        lines: the line vectors of the top keyword candidates and the dated chunks (:func:`line_vectors_of`).
    """

    key: tuple[Any, ...]
    deep: dict[int, float]
    dated: dict[int, float]
    rows: dict[int, _Row]
    lines: dict[int, list[tuple[int, bytes]]]


def _deep_limit(settings: SearchConfig, req: SearchRequest, use_vec: bool) -> int:
    depth = req.depth(settings)
    return depth * COMPLETION_DEPTH if use_vec else depth


def early_key(settings: SearchConfig, req: SearchRequest, use_vec: bool) -> tuple[Any, ...]:
    """What :class:`Early` depends on: the same key, the same reads."""
    return (req.query, req.sources, req.use_kw, _deep_limit(settings, req, use_vec), settings.heuristics,
            settings.line_text_weight > 0, settings.line_weight > 0 and use_vec)


def read_early(store: Store, settings: SearchConfig, req: SearchRequest) -> Early:
    """Everything :func:`candidates` and :func:`legs` read that does not need the query vector, for a request
    that will have one (``req.qvec`` is not read): the deep keyword list, the dated chunks, the top keyword
    candidates' chunks and their line vectors (and the dated chunks')."""
    heur = settings.heuristics
    key = early_key(settings, req, True)
    if not req.use_kw:
        return Early(key, {}, {}, {}, {})
    deep = keyword_candidates(store, req.query, _deep_limit(settings, req, True), req.sources, heur.drop_common_terms)
    top = [k for k, _ in sorted(deep.items(), key=lambda kv: kv[1])[: req.depth(settings)]]
    dated = dated_chunks(store, req.query, req.sources, heur) if heur.date_boosts else {}
    rows = load_rows(store, top) if top and req.query.terms and settings.line_text_weight > 0 else {}
    lines = line_vectors_of(store, list(dict.fromkeys([*top, *dated]))) if settings.line_weight > 0 else {}
    return Early(key, deep, dated, rows, lines)


def candidates(store: Store, settings: SearchConfig, req: SearchRequest, vindex: VectorIndex | None,
               early: Early | None = None) -> Candidates:
    """Stage 1: the keyword leg's FTS matches and the vector leg's nearest chunks, each completed with the other
    leg's score, and the chunks of the dates the query names (with their vector scores).

    ``early`` (:func:`read_early` for this request) stands in for the keyword list and the dated chunks."""
    depth = req.depth(settings)
    heur = settings.heuristics
    # One FTS query, deeper than the candidate list: its tail completes the vector candidates' keyword scores
    # (a second MATCH restricted by rowid costs as much as the first).
    if early is not None:
        deep = dict(early.deep)
    else:
        deep = keyword_candidates(store, req.query, _deep_limit(settings, req, req.use_vec), req.sources,
                                  heur.drop_common_terms) if req.use_kw else {}
    ranks = dict(sorted(deep.items(), key=lambda kv: kv[1])[:depth])
    vec: dict[int, float] | None = None
    focus: dict[int, tuple[int, int]] = {}
    in_memory = vindex is not None and req.use_vec and vindex.worthwhile(store)
    nearest = vindex.nearest if in_memory and vindex is not None else vector_candidates
    scores_for = vindex.scores_for if in_memory and vindex is not None else vector_scores_for
    qvec = req.qvec
    if req.use_vec and qvec is not None:
        vec, focus = nearest(store, qvec, depth, req.sources)
        if req.use_kw:
            more, more_focus = scores_for(store, qvec, [i for i in ranks if i not in vec])
            vec.update(more)
            focus.update(more_focus)
            ranks.update({i: deep[i] for i in vec if i not in ranks and i in deep})
    if early is not None:
        dated = dict(early.dated)
    else:
        dated = dated_chunks(store, req.query, req.sources, heur) if req.use_kw and heur.date_boosts else {}
    if dated and vec is not None and qvec is not None:
        more, more_focus = scores_for(store, qvec, [c for c in dated if c not in vec])
        vec.update(more)
        focus.update(more_focus)
    return Candidates(deep, ranks, vec, focus, dated)


def legs(store: Store, settings: SearchConfig, req: SearchRequest, cands: Candidates,
         early: Early | None = None) -> Legs:
    """Stage 2: each leg's [0, 1] score: BM25 relative to the best match, blended with each chunk's best line's
    BM25; the best window's cosine blended with the best line's (``line_weight``), min-max scaled if asked.

    ``early`` (:func:`read_early` for this request) holds chunks and line vectors already read."""
    keyword = normalize_bm25(cands.ranks)
    terms = req.query.terms
    rows: dict[int, _Row] = {}
    best_lines: dict[int, float] = {}
    if keyword and terms and settings.line_text_weight > 0:
        rows = load_rows(store, list(keyword), early.rows if early is not None else None)
        best_lines = _best_lines(rows, terms)
        keyword = _mix_best_lines(best_lines, keyword, settings.line_text_weight)
    vec = cands.vector
    lines: dict[int, dict[int, float]] = {}
    window = dict(vec) if vec else None  # raw best-window cosines, before the best line joins them
    if vec and req.qvec is not None and settings.line_weight > 0:
        # A question usually matches one line (a turn, a bullet): each chunk's best line joins its window.
        lines = line_scores_for(store, req.qvec, list(vec), early.lines if early is not None else None)
        m = settings.line_weight
        vec = {k: (1 - m) * v + m * max(lines[k].values()) if k in lines else v for k, v in vec.items()}
    if vec and settings.vector_norm == "minmax":
        lo, hi = min(vec.values()), max(vec.values())
        vec = {k: (v - lo) / (hi - lo) if hi > lo else 1.0 for k, v in vec.items()}
    return Legs(keyword, vec, window, lines, best_lines, rows)


def lift_dates(keyword: dict[int, float], dated: dict[int, float]) -> dict[int, float]:
    """Stage 3: a query that names a day ("what happened on October 14", "yesterday", "上周五"), a week ("last
    week") or a month ("in July 2023", "last month") lifts that period's notes, never hiding the others: BM25
    takes half the keyword scale and the named period adds to it, so the notes keep their BM25 order among
    themselves."""
    if not dated:
        return keyword
    lifted = {k: v / 2 for k, v in keyword.items()}
    for chunk_id, boost in dated.items():
        lifted[chunk_id] = min(1.0, boost + lifted.get(chunk_id, 0.0))
    return lifted


def calibrate(settings: SearchConfig, req: SearchRequest, leg: Legs, dated: dict[int, float],
              cal: Calibration) -> Legs:
    """Stage 4: under ``vector_norm = "calibrated"`` in a hybrid search with a fitted model, both legs as
    probabilities of relevance fitted for this model, so 0.7·vector + 0.3·keyword adds comparable parts (an
    unknown model keeps raw cosines: nobody fitted its range)."""
    vmap, kmap = cal.vector_leg, cal.keyword_leg
    if not (leg.vector and settings.vector_norm == "calibrated" and req.mode == "hybrid" and req.use_vec
            and vmap is not None and kmap is not None):
        return leg
    vec = {k: vmap(v) for k, v in leg.vector.items()}
    keyword = {k: kmap(v) for k, v in leg.keyword.items()}
    if dated and settings.heuristics.calibrated_date_lift and any(
            s.relative and not s.keeps_words for s in req.query.resolved):
        # A relative phrase ("yesterday", "上周五") left the keyword query, so the lift is the keyword leg's
        # only sign of the day, and the keyword fit squashes a lifted note without a matching word to ~.07
        # (.55 → kmap): such a note keeps at least its lift on the calibrated scale. Named dates keep their
        # words and the plain fit (a floor for them too cost dev CV hit@1 .735 → .726, conv-41 −.033).
        for chunk_id, boost in dated.items():
            keyword[chunk_id] = max(keyword.get(chunk_id, 0.0), boost)
    return replace(leg, keyword=keyword, vector=vec, calibrated=True, raw=(dict(leg.vector), dict(leg.keyword)))


def fuse(settings: SearchConfig, req: SearchRequest, leg: Legs) -> list[Fused]:
    """Stage 5: OpenClaw's weighted sum of the legs (a vector search: the vector leg; a keyword search: the
    keyword leg), best first."""
    if req.mode == "vector":
        return fuse_scores(leg.vector or {}, {}, 1.0, 0.0)
    if not req.use_vec:
        return fuse_scores(None, leg.keyword)
    wv, wt = settings.vector_weight, settings.text_weight
    if req.english_only_vectors and req.query.has_cjk:
        # all-MiniLM-L6-v2 reads Chinese, Japanese and Korean poorly (XQuAD zh hybrid hit@1 .878 at
        # 0.7/0.3 vs .931 at 0.3/0.7): let the bigram keyword leg lead for such queries.
        wv, wt = min(wv, wt), max(wv, wt)
    return fuse_scores(leg.vector, leg.keyword, wv, wt, leg.evidence, leg.unembedded)


EVIDENCE = ("off", "script", "terms", "best", "chunk", "chunk-no-cjk")
"""How a hybrid search weighs its keyword leg (:attr:`engine.config.SearchHeuristics.keyword_evidence`)."""


def keyword_evidence(settings: SearchConfig, req: SearchRequest, leg: Legs, rows: dict[int, _Row],
                     dated: Mapping[int, float] | None = None) -> dict[int, float] | None:
    """Stage 4b: what the keyword leg can see of the query, per candidate (0…1), for :func:`fuse_scores`; None
    under OpenClaw's fixed weights (``keyword_evidence = "off"``, or not a hybrid search).

    The keyword leg votes with full weight only where it can read the query: a leg that matched nothing
    abstains (every chunk's evidence is 0: the vector part is the score), and for each chunk the weight
    follows the share of the chunk's letters written in the query's scripts (:func:`script_overlap`: an
    English question over a Chinese note matches nothing but its odd Latin name or number). ``"terms"`` also
    scales it by the share of the query's terms found in any keyword candidate; ``"best"`` by the best
    candidate's IDF-weighted share of the terms (BM25 relative to the best match hides how little that
    best match holds); ``"chunk"`` each chunk's keyword weight by that chunk's own IDF-weighted share of the
    terms (a note holding one ordinary word of the question votes with that word's share of the weight, not
    with the full weight its BM25 relative to the best match gives it). Any share counts in full from
    ``heuristics.evidence_full`` up: ``min(1, share / evidence_full)`` (a Chinese question's bigrams that span
    two words match no note, so even the right paragraph holds only part of the query). ``"chunk-no-cjk"``:
    ``"chunk"`` for a query without CJK, ``"script"`` for one with it (XQuAD zh hybrid hit@1 under ``"chunk"``
    .940 against .953; bench/results/2026-12-06-retrieval.md).

    A chunk of a dated note the query names (``dated``: "昨天", "last Friday") is read in full whatever its
    script: the leg's date lift reads the note's date, not its words, so a Chinese question about yesterday
    finds yesterday's English note.
    """
    mode = settings.heuristics.keyword_evidence
    if mode not in EVIDENCE:
        raise ValueError(f"unknown keyword evidence {mode!r} (one of {', '.join(EVIDENCE)})")
    if mode == "off" or req.mode != "hybrid" or not req.use_vec:
        return None
    if mode == "chunk-no-cjk":  # "chunk" unless the query holds CJK (its bigrams span words: "script" for it)
        mode = "script" if req.query.has_cjk else "chunk"
    if not leg.keyword:
        return {}
    share = 1.0
    terms = req.query.terms
    # the keyword candidates' text, lowered, only for the modes that look for the terms in it (every query)
    matched = [rows[k].text.lower() for k in leg.keyword if k in rows] if mode in ("terms", "best", "chunk") else []
    full = settings.heuristics.evidence_full
    per_chunk: dict[int, float] = {}
    if mode in ("terms", "best", "chunk") and terms and matched:
        probes = {t: t if t in req.query.bigrams else stem(t) for t in terms}

        def counted(value: float) -> float:  # a share counts in full from evidence_full up
            return min(1.0, value / full) if full > 0 else 1.0

        if mode == "terms":
            found = bridged(terms, {t for t in terms if any(probes[t] in text for text in matched)})
            share = counted(len(found) / len(terms))
        else:
            weights = term_weights(matched, terms)
            total = sum(weights.values()) or 1.0

            def held(text: str) -> float:  # the IDF-weighted share of the terms ``text`` holds
                return sum(weights[t] for t in bridged(terms, {t for t in terms if probes[t] in text})) / total

            if mode == "best":
                share = counted(max(held(text) for text in matched))
            else:
                per_chunk = {k: counted(held(rows[k].text.lower())) for k in leg.keyword if k in rows}
    scripts = query_scripts(req.query.text)
    keys = set(leg.vector or {}) | set(leg.keyword)
    dated = dated or {}
    return {k: 1.0 if k in dated else per_chunk.get(k, share) * (script_overlap(scripts, rows[k].text)
                                                                  if k in rows else 1.0)
            for k in keys}


def bridged(terms: Sequence[str], found: set[str]) -> set[str]:
    """``found`` plus each CJK bigram of ``terms`` whose two characters the found bigrams on either side of it
    hold: "黑豹队" gives 黑豹, 豹队; "谁带领黑豹队" also 领黑, which spans two words and so is in no note, yet
    the note holding 带领 and 黑豹 holds what it asks. (Without it the share of a Chinese question's terms
    that even its own paragraph holds is about half.)"""
    out = set(found)
    for i in range(1, len(terms) - 1):
        before, term, after = terms[i - 1], terms[i], terms[i + 1]
        if term not in found and len(term) == len(before) == len(after) == 2 and has_cjk(term) \
                and before in found and after in found and before[1] == term[0] and term[1] == after[0]:
            out.add(term)
    return out


def weigh(settings: SearchConfig, req: SearchRequest, fused: list[Fused], rows: dict[int, _Row]) -> list[Fused]:
    """Stage 5b: OpenClaw's weights of the fused score: temporal decay of dated notes (``decay``: a note's age
    in days counted to the query's today, the one clock's), then the importance of curated chunks
    (``importance``)."""
    if settings.decay:
        today = req.query.today
        fused = [replace(f, score=f.score * decay_factor(rows[f.key].path, settings.half_life_days, today))
                 for f in fused if f.key in rows]
        fused.sort(key=lambda f: (-f.score, f.key))
    if settings.importance:
        fused = apply_importance(fused, rows)
    if settings.heuristics.curated_prior > 0:
        fused = apply_curated_prior(fused, rows, settings.heuristics.curated_prior)
    return fused


def _curated(row: _Row | None) -> bool:
    return row is not None and row.source == "memory" and is_curated(row.path)


def apply_curated_prior(fused: list[Fused], rows: dict[int, _Row], prior: float) -> list[Fused]:
    """A curated chunk's (``MEMORY.md`` / ``USER.md``) score × ``1 + prior`` (``SearchHeuristics.curated_prior``):
    a one-line curated fact and a long daily note whose cosines differ by hundredths are not ordered by the
    note's extra words alone. Every other score is unchanged."""
    out = [replace(f, score=f.score * (1.0 + prior)) if _curated(rows.get(f.key)) else f for f in fused]
    out.sort(key=lambda f: (-f.score, f.key))
    return out


POOLS = ("shown", "raw", "union", "slot", "raw-slot")
"""The orders a candidate pool may be taken by (:attr:`engine.config.SearchHeuristics.pool`)."""


def pool(settings: SearchConfig, req: SearchRequest, fused: list[Fused], leg: Legs, rows: dict[int, _Row],
         want: int) -> list[Fused]:
    """Stage 6: the pool, the ``want`` candidates (scoring above 0) that the re-ranker and the results are
    chosen from, in the shown score's order, a chunk whose lines mostly repeat a better-ranked one's moved
    behind the rest.

    ``heuristics.pool`` says how the ``want`` are taken. ``"shown"``: the best by the score a hit shows.
    ``"raw"`` (a calibrated hybrid search only): the best by OpenClaw's fused score of the *uncalibrated* legs
    (``0.7·cosine + 0.3·keyword``, with the same decay and importance weights), then ordered by the calibrated
    score: the raw score takes the pool, the calibrated one orders it. ``"union"``: as OpenClaw merges its
    legs' candidate lists, the pool is each leg's own top ``want`` (by its vector or keyword part), all of them,
    ordered by the shown score. ``"slot"``: the shown pool, where the vector leg's best candidate holds at
    least the ``heuristics.vector_slot``-th place (moved up from below it, keeping its score:
    :func:`vector_slot`), so a fact the vector leg is surest of is in the top results however many notes share
    the query's words, while the places above it stay the fused score's; ``"raw-slot"``: the raw pool, with
    that slot. In a calibrated hybrid search a favourite that leads the vector leg's next candidate by
    ``heuristics.vector_lead`` holds the 1st place instead of the slot. Either way ``min_score`` then judges
    the shown score (:func:`to_hits`), so no hit below it is returned. ``heuristics.curated_slot`` (> 0) then
    gives the best curated candidate the 3rd place when its score is near enough the 3rd's (:func:`curated_slot`).
    """
    mode = settings.heuristics.pool
    if mode not in POOLS:
        raise ValueError(f"unknown search pool {mode!r} (one of {', '.join(POOLS)})")
    spread = [f for f in spread_overlaps(fused, rows, settings.heuristics.spread_limit) if f.score > 0]
    chosen = _pool(settings, req, fused, leg, rows, want, mode, spread)
    margin = settings.heuristics.curated_slot
    return curated_slot(chosen, spread, rows, want, margin) if margin > 0 else chosen


CURATED_PLACE = 3
"""The place the best curated candidate takes under ``SearchHeuristics.curated_slot``."""


def curated_slot(chosen: list[Fused], candidates: list[Fused], rows: dict[int, _Row], want: int, margin: float,
                 place: int = CURATED_PLACE) -> list[Fused]:
    """``chosen`` with the best-scoring curated candidate of ``candidates`` (``chosen``'s superset, best first)
    at the ``place``-th place when it stands lower (or ``chosen`` lacks it) and its score is at least
    ``(1 − margin)`` × the score of ``chosen``'s ``place``-th (``SearchHeuristics.curated_slot``). Its score is
    unchanged; above a higher score it says so (``placed = "curated"``)."""
    if len(chosen) < place:
        return chosen
    best = next((f for f in candidates if _curated(rows.get(f.key))), None)
    if best is None or any(f.key == best.key for f in chosen[:place]):
        return chosen
    if best.score < (1.0 - margin) * chosen[place - 1].score:
        return chosen
    rest = [f for f in chosen if f.key != best.key]
    if any(f.score > best.score for f in rest[place - 1 : max(place - 1, want - 1)]):
        best = replace(best, placed="curated")  # it stands above a higher score: the hit says why
    return [*rest[: place - 1], best, *rest[place - 1 :]][: max(want, len(chosen))]


def _pool(settings: SearchConfig, req: SearchRequest, fused: list[Fused], leg: Legs, rows: dict[int, _Row],
          want: int, mode: str, spread: list[Fused]) -> list[Fused]:
    slot = max(1, settings.heuristics.vector_slot)
    if mode == "union":
        tops: set[int] = set()
        for part in (leg.vector or {}, leg.keyword):
            tops.update(k for k, v in sorted(part.items(), key=lambda kv: (-kv[1], kv[0]))[:want] if v > 0)
        return [f for f in spread if f.key in tops]
    by_score = settings.heuristics.slot_by_score
    # the lead counts on the calibrated scale only (an uncalibrated model's cosines live in a range nobody fitted)
    lead = settings.heuristics.vector_lead if leg.calibrated else 0.0
    if mode == "slot":
        return vector_slot(spread, spread, want, slot, by_score, lead)
    if mode not in ("raw", "raw-slot") or not leg.calibrated:
        return vector_slot(spread, spread, want, slot, by_score, lead) if mode == "raw-slot" else spread[:want]
    raw_v, raw_k = leg.uncalibrated
    raw = weigh(settings, req, fuse(settings, req, replace(leg, vector=raw_v or {}, keyword=raw_k)), rows)
    kept = {f.key for f in [f for f in raw if f.score > 0 and f.key in rows][:want]}
    chosen = [f for f in spread if f.key in kept]
    return vector_slot(chosen, spread, want, slot, by_score, lead) if mode == "raw-slot" else chosen


def vector_slot(chosen: list[Fused], candidates: list[Fused], want: int, slot: int, by_score: bool = False,
                lead: float = 0.0) -> list[Fused]:
    """The top ``want`` of ``chosen`` (best first), with the one of ``candidates`` (``chosen``'s superset)
    that has the best vector part at the ``slot``-th place when ``chosen`` ranks it below that or lacks it.
    A keyword search (no vector part): ``chosen`` as it is.

    ``by_score``: a favourite that ``chosen`` lacks (the raw pool left it out) goes where its own score puts
    it among ``chosen`` when that is above the slot — the slot is the place it holds *at least*; without it,
    a favourite whose shown score is the best of all stood third, below two lower scores.

    ``lead`` (> 0): a favourite whose vector part leads the next best vector part among ``candidates`` by at
    least ``lead`` is one the vector leg is sure of, and it holds the 1st place (its score unchanged): a
    curated line the vector leg ranks far ahead of everything else is not pushed down by notes that hold the
    query's words without saying what it asks."""
    scored = [f for f in candidates if f.vector is not None]
    if not scored:
        return chosen[:want]
    best = min(scored, key=lambda f: (-(f.vector or 0.0), f.key))
    if lead > 0:
        second = max((f.vector or 0.0 for f in scored if f.key != best.key), default=0.0)
        if (best.vector or 0.0) - second >= lead:
            slot = 1
    at = next((i for i, f in enumerate(chosen) if f.key == best.key), None)
    if at is not None and at < slot:
        return chosen[:want]
    rest = [f for f in chosen if f.key != best.key]
    place = slot - 1
    if by_score:
        place = min(place, sum(1 for f in rest if (-f.score, f.key) < (-best.score, best.key)))
    if any(f.score > best.score for f in rest[place : max(place, want - 1)]):
        best = replace(best, placed="vector")  # it stands above a higher score: the hit says why
    return [*rest[:place], best, *rest[place:]][:want]


def rerank(settings: SearchConfig, req: SearchRequest, hooks: SearchHooks, chosen: list[Fused], cands: Candidates,
           leg: Legs, rows: dict[int, _Row], weights: dict[str, float], cal: Calibration,
           active: tuple[Any, Reranker] | None) -> tuple[list[Fused], dict[int, float]]:
    """Stage 7: the learned re-ranker's probability replaces the fused score of the top candidates (when on),
    and the candidates' features go to ``hooks.collect`` (when asked). Returns the list and each score's change."""
    if active is None and hooks.collect is None:
        return chosen, {}
    terms = req.query.terms
    depth_c = active[1].depth if active is not None else (shipped_reranker() or Reranker({})).depth
    top = chosen[:depth_c]
    best_lines = leg.best_lines
    if not best_lines and terms and settings.line_text_weight <= 0:
        # best-line BM25 was not mixed in: compute it for the keyword leg's candidates the re-ranker sees
        best_lines = _best_lines({f.key: rows[f.key] for f in top if f.key in rows and f.key in cands.ranks}, terms)
    feats = candidate_features(
        [f.key for f in top], {k: r.text for k, r in rows.items()}, {f.key: f.score for f in top},
        {k: importance_multiplier(r.importance) - 1.0 for k, r in rows.items() if r.importance is not None},
        terms, weights, LegInputs(cands.ranks, best_lines, leg.window, leg.lines, cands.dated, cal))
    if hooks.collect is not None:
        raw_v, raw_k = leg.uncalibrated
        hooks.collect.append({
            "keys": [f.key for f in top], "features": feats,
            "rows": {f.key: (rows[f.key].path, rows[f.key].start_line, rows[f.key].end_line)
                     for f in top if f.key in rows},
            # raw leg values, so a trainer can refit the calibration per fold
            "raw": {f.key: {"window": (leg.window or {}).get(f.key),
                            "line": max(leg.lines[f.key].values()) if leg.lines.get(f.key) else None,
                            "vleg": None if raw_v is None else raw_v.get(f.key, 0.0),
                            "kleg": raw_k.get(f.key, 0.0)}
                    for f in top},
        })
    if active is None:
        return chosen, {}
    ranked, deltas = _rerank(chosen, feats, active[0], len(top))
    return spread_overlaps(ranked, rows, settings.heuristics.spread_limit), deltas


def to_hits(settings: SearchConfig, req: SearchRequest, chosen: list[Fused], rows: dict[int, _Row],
            focus: dict[int, tuple[int, int]], weights: dict[str, float], lines: dict[int, dict[int, float]],
            deltas: dict[int, float], store: Store | None = None) -> list[Hit]:
    """Stage 8: the candidates scoring at least ``min_score`` (the score a hit shows), MMR-ordered if asked, at
    most ``max_results``, each with its snippet (a line another hit of its file shows already is not shown
    twice)."""
    passing = [f for f in chosen if f.score >= req.min_score]
    if settings.mmr:
        order = mmr_order([(f.key, f.score, rows[f.key].text) for f in passing], settings.mmr_lambda)
        by_key = {f.key: f for f in passing}
        passing = [by_key[k] for k in order]
    hits: list[Hit] = []
    shown: dict[str, set[int]] = {}
    top = passing[: req.max_results]
    contexts = curated_contexts(store, [rows[f.key] for f in top if f.key in rows]) if store is not None else {}
    for f in top:
        row = rows.get(f.key)
        if row is None:
            continue
        seen = shown.setdefault(row.path, set())
        hit = _to_hit(row, f, req.query.terms, focus.get(f.key), weights, lines.get(f.key), seen, deltas.get(f.key),
                      settings.heuristics.snippet_answer)
        if row.id in contexts:
            hit = replace(hit, context=contexts[row.id])
        seen.update(range(hit.snippet_start_line, hit.snippet_end_line + 1))
        hits.append(hit)
    # "placed" says why a hit stands above a higher score; where it no longer does (re-ranked), it says nothing.
    return [replace(h, placed="") if h.placed and not any(o.score > h.score for o in hits[i + 1:]) else h
            for i, h in enumerate(hits)]


def run_search(store: Store, settings: SearchConfig, req: SearchRequest, vindex: VectorIndex | None = None,
               hooks: SearchHooks = NO_HOOKS, early: Early | None = None) -> list[Hit]:
    """Search an index: candidates → legs → date lift → calibrate → fuse → pool → re-rank → hits.

    ``vindex`` holds an in-memory copy of the vectors, used instead of sqlite-vec's KNN on large indexes.
    Every stage reads the request's one parse of the query (:func:`parse`). ``early`` is what
    :func:`read_early` read while the query was embedded; it is used only when it was read for this request
    (a search whose embedding failed reads its keyword list again, at its own depth): the hits are the same.
    """
    cal = hooks.calibration if hooks.calibration is not None else calibration_for(req.model)
    heur = settings.heuristics
    if heur.vector_prf > 0 and req.use_vec and req.qvec is not None:
        req = replace(req, qvec=feedback_vector(store, req.qvec, heur.prf_k, heur.vector_prf, req.sources, vindex))
    if early is not None and early.key != early_key(settings, req, req.use_vec):
        early = None
    cands = candidates(store, settings, req, vindex, early)
    leg = legs(store, settings, req, cands, early)
    leg = replace(leg, keyword=lift_dates(leg.keyword, cands.dated))
    leg = calibrate(settings, req, leg, cands.dated, cal)
    if leg.vector is not None and (unseen := [k for k in leg.keyword if k not in leg.vector]):
        # While the index is being embedded, the vector leg cannot see the newest chunks: it abstains for them.
        leg = replace(leg, unembedded=frozenset(queries.unembedded_among(store.conn, unseen)))
    keys = sorted(set(leg.vector or {}) | set(leg.keyword))
    extra = load_rows(store, [k for k in keys if k not in leg.rows])
    rows = {k: leg.rows.get(k) or extra[k] for k in keys if k in leg.rows or k in extra}
    leg = replace(leg, evidence=keyword_evidence(settings, req, leg, rows, cands.dated))
    fused = fuse(settings, req, leg)
    weights = term_weights([r.text for r in rows.values()], req.query.terms)
    fused = weigh(settings, req, fused, rows)
    active = _active_reranker(settings, hooks.reranker, req.mode, req.use_vec, cal)
    want = len(fused) if settings.mmr else max(req.max_results, active[1].depth if active is not None else 0)
    chosen = pool(settings, req, fused, leg, rows, want)
    chosen, deltas = rerank(settings, req, hooks, chosen, cands, leg, rows, weights, cal, active)
    return to_hits(settings, req, chosen, rows, cands.focus, weights, leg.lines, deltas, store)


def curated_contexts(store: Store, rows: Sequence[_Row]) -> dict[int, str]:
    """The heading path of each curated entry among ``rows`` (chunk id → ``"Work › Projects"``).

    The index keeps a chunk's lines only; every non-blank line of a curated file is in one of its chunks, so
    the file's lines are put back together from them and chunked again (:func:`chunk_curated`, the indexer's
    own cut), and each row's context is the one of the chunk that starts where it does.
    """
    paths = sorted({r.path for r in rows if r.source == "memory" and is_curated(r.path)})
    if not paths:
        return {}
    hashes = queries.file_hashes(store.conn, paths)
    todo = [p for p in paths if (p, hashes.get(p)) not in _CONTEXTS]
    if todo:  # once per version of the file, not once a search (a search runs at each keystroke)
        whole = load_rows(store, [chunk_id for chunk_id, _ in queries.chunk_ids_for_paths(store.conn, todo)])
        for path in todo:
            lines: dict[int, str] = {}
            for r in whole.values():
                if r.path == path:
                    for n, line in enumerate(r.text.split("\n"), start=r.start_line):
                        lines[n] = line
            text = "\n".join(lines.get(n, "") for n in range(1, max(lines, default=0) + 1))
            if len(_CONTEXTS) >= _CONTEXTS_KEPT:
                _CONTEXTS.pop(next(iter(_CONTEXTS)))
            _CONTEXTS[(path, hashes.get(path))] = {c.start_line: c.context for c in chunk_curated(text)} if lines else {}
    out: dict[int, str] = {}
    for r in rows:
        context = _CONTEXTS.get((r.path, hashes.get(r.path)), {}).get(r.start_line) if r.path in paths else None
        if context:
            out[r.id] = context
    return out


_CONTEXTS: dict[tuple[str, str | None], dict[int, str]] = {}
"""(curated file, its indexed content hash) → entry start line → heading path: what :func:`curated_contexts`
worked out for that version of the file."""
_CONTEXTS_KEPT = 32


def apply_importance(fused: list[Fused], rows: dict[int, _Row]) -> list[Fused]:
    """OpenClaw's recall weight, after decay: a curated chunk's score × ``0.75 + 0.05·N`` (N: its importance).

    Only ``MEMORY.md``/``USER.md`` chunks carry an importance (the indexer reads it from their
    ``<!-- importance: N -->`` comments); every other score is unchanged, so without such comments nothing moves.
    Like OpenClaw's, a weighted score may pass 1 (at most 1.25).
    """
    if not any(row.importance is not None for row in rows.values()):
        return fused
    out = []
    for f in fused:
        row = rows.get(f.key)
        weight = importance_multiplier(row.importance) if row is not None else 1.0
        out.append(f if weight == 1.0 else replace(f, score=f.score * weight))
    out.sort(key=lambda f: (-f.score, f.key))
    return out


def _file_lines(row: _Row) -> list[int]:
    return list(row.line_map) if row.line_map is not None else list(range(row.start_line, row.end_line + 1))


def spread_overlaps(fused: list[Fused], rows: dict[int, _Row], limit: float) -> list[Fused]:
    """Move a chunk whose lines mostly repeat a better-ranked chunk of the same file behind the others.

    Overlapping chunks (the chunker's overlap, a back-filled last chunk) would otherwise take two of the few
    result slots with the same lines.
    """
    kept: list[Fused] = []
    later: list[Fused] = []
    shown: dict[str, set[int]] = {}
    for f in fused:
        row = rows.get(f.key)
        if row is None:
            kept.append(f)
            continue
        lines = _file_lines(row)
        seen = shown.setdefault(row.path, set())
        if lines and sum(1 for n in lines if n in seen) / len(lines) >= limit:
            later.append(f)
            continue
        seen.update(lines)
        kept.append(f)
    return kept + later


def _active_reranker(settings: SearchConfig, override: Reranker | None, mode: str, use_vec: bool,
                     cal: Calibration) -> tuple[Any, Reranker] | None:
    """The linear model that re-ranks this search, with its re-ranker, or None.

    Hybrid searches use the ``hybrid`` model only for a calibrated embedding model (its vector features are
    probabilities fitted per model); an unknown model keeps OpenClaw's order. Keyword searches (including a
    hybrid search that fell back to keyword) use the ``keyword`` model. Vector-only searches are not re-ranked.
    """
    if not settings.rerank and override is None:
        return None
    rr = override or shipped_reranker()
    if rr is None:
        return None
    if mode == "hybrid" and use_vec:
        model = rr.model_for("hybrid") if cal.knows_model else None
    elif mode in ("hybrid", "keyword") and not use_vec:
        model = rr.model_for("keyword")
    else:
        model = None
    return (model, rr) if model is not None else None


def _rerank(chosen: list[Fused], feats: dict[int, dict[str, float]], model: Any, depth: int
            ) -> tuple[list[Fused], dict[int, float]]:
    """The first ``depth`` candidates re-scored by ``model`` (score = its probability) and re-sorted; the rest
    follow, capped at the lowest re-ranked score so the list stays sorted. Returns the list and each delta."""
    head = [replace(f, score=model.score(feats[f.key])) for f in chosen[:depth]]
    deltas = {h.key: h.score - f.score for h, f in zip(head, chosen[:depth], strict=True)}
    head.sort(key=lambda f: (-f.score, f.key))
    floor = min((h.score for h in head), default=0.0)
    tail = []
    for f in chosen[depth:]:
        capped = min(f.score, floor)
        deltas[f.key] = capped - f.score
        tail.append(replace(f, score=capped))
    return head + tail, deltas


def _best_lines(rows: dict[int, _Row], terms: Sequence[str]) -> dict[int, float]:
    """Each candidate's best-line BM25 (raw), the candidates standing in for the collection."""
    texts = [r.text for r in rows.values()]
    weights = term_weights(texts, terms)
    lines = [len(line) for t in texts for line in t.split("\n") if line.strip()]
    avg = sum(lines) / len(lines) if lines else 1.0
    return {k: best_line_bm25(r.text, terms, weights, avg) for k, r in rows.items()}


def _mix_best_lines(best: dict[int, float], keyword: dict[int, float], share: float) -> dict[int, float]:
    """Blend each candidate's best-line BM25 (normalised by the best candidate's) into its keyword score."""
    top = max(best.values(), default=0.0)
    if top <= 0:
        return keyword
    return {k: (1 - share) * v + share * best.get(k, 0.0) / top for k, v in keyword.items()}


def _to_hit(row: _Row, f: Fused, terms: Sequence[str], focus: tuple[int, int] | None,
            weights: dict[str, float] | None = None, line_scores: dict[int, float] | None = None,
            shown: set[int] | None = None, rerank: float | None = None, answer: bool = False) -> Hit:
    skip = {i for i, n in enumerate(_file_lines(row)) if n in shown} if shown else None
    snippet = extract_snippet(row.text, 1, terms, focus=focus, term_weights=weights, line_scores=line_scores,
                              skip=skip, answer=answer)
    if row.line_map is not None:
        s_start = row.line_map[min(len(row.line_map), snippet.start_line) - 1]
        s_end = row.line_map[min(len(row.line_map), snippet.end_line) - 1]
    else:
        s_start = row.start_line + snippet.start_line - 1
        s_end = row.start_line + snippet.end_line - 1
    best_line = None
    if line_scores:
        numbers = _file_lines(row)
        offset = max(line_scores, key=lambda i: (line_scores[i], -i))
        best_line = numbers[offset] if 0 <= offset < len(numbers) else None
    return Hit(
        path=row.path,
        start_line=row.start_line,
        end_line=row.end_line,
        score=f.score,
        vector_score=f.vector,
        text_score=f.keyword,
        snippet=snippet.text,
        snippet_start_line=s_start,
        snippet_end_line=s_end,
        spans=snippet.spans,
        source=row.source,
        citation=citation(row.path, row.start_line, row.end_line),
        rerank=rerank,
        text_weight=f.text_weight,
        vector_weight=f.vector_weight,
        best_line=best_line,
        placed=f.placed,
    )


def hit_dict(hit: Hit) -> dict[str, Any]:
    """A plain dict of a hit (snake_case), for tests and debugging."""
    return asdict(hit)
