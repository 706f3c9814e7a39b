"""One review of a workspace: read the statements, compare what changed since the last review, build findings."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from datetime import date, datetime
from typing import TYPE_CHECKING

from engine.clock import Clock, ClockError, note_timezone
from engine.config import Config
from engine.review.budget import budget_findings
from engine.review.cache import (
    ReviewCache,
    cache_path,
    files_path,
    load_files,
    load_texts,
    save_files,
    save_texts,
    settings_fingerprint,
    texts_path,
)
from engine.review.detect import (
    CROSS_LANGUAGE_SIMILARITY,
    Comparer,
    PairResult,
    build_findings,
    candidate_pairs,
    promote_score,
)
from engine.review.model import KINDS, DismissStore, Finding, ReviewReport
from engine.review.statements import CURATED, Statement, curated_headings, read_statements, review_files

if TYPE_CHECKING:
    from engine.index.store import Store

VectorFn = Callable[[Statement, Statement], float | None]


def posting_cap(n: int) -> int:
    """A word in more statements than this is too common to pair on (it still counts in the similarity)."""
    return max(40, min(400, n // 100))


def run_review(config: Config, kind: str | None = None, since: date | None = None, full: bool = False,
               store: Store | None = None, show_all: bool = False) -> ReviewReport:
    """Review the workspace (read-only: only the cache in the data dir is written).

    Args:
        config: the workspace, the data dir and the ``[review]`` thresholds.
        kind: only this kind of finding (``duplicate``, ``conflict``, ``promote`` or ``budget``); None: all.
        since: only findings with a statement from a note dated on/after this day (an undated file — MEMORY.md,
            USER.md, a topic note — counts as dated by its modification time).
        full: ignore the cache and compare every statement with every other.
        store: the index, whose line vectors (when it has them) second the lexical similarity.
        show_all: every finding; else only the confident ones (measured precision ≥ .80), the rest counted in
            ``hidden``.

    Raises:
        ValueError: an unknown ``kind``.
    """
    if kind is not None and kind not in KINDS:
        raise ValueError(f"unknown review kind {kind!r} (one of {', '.join(KINDS)})")
    started = time.monotonic()
    files = review_files(config)
    known_files = {} if full else load_files(files_path(config))
    by_file, problems = read_statements(config, files, known_files)
    stamps = {f.rel: (f.mtime_ns, f.size) for f in files}
    stale = sum(1 for rel in by_file if known_files.get(rel, (None, None))[:2] != stamps[rel])
    stale += len(set(known_files) - set(by_file))
    # Rewriting the whole cache costs more than re-reading a few files next time: only once enough changed.
    if stale > max(20, len(by_file) // 50) or (stale and not known_files):
        save_files(files_path(config), stamps, by_file)
    statements = [s for rel in by_file for s in by_file[rel]]
    vectors: VectorFn | None = None
    vector_id = "none"
    if store is not None and config.review.use_vectors:
        from engine.review.vectors import line_vector_lookup

        found = line_vector_lookup(store, statements)
        if found is not None:
            vectors, vector_id = found
    known_texts = {} if full else load_texts(texts_path(config))
    comparer = Comparer(statements, config.review, vectors, known_texts)
    new_texts = sum(1 for t in comparer.texts if t not in known_texts)
    if new_texts > max(200, len(comparer.texts) // 50) or (new_texts and not known_texts) \
            or len(known_texts) > 2 * len(comparer.texts) + 1000:
        save_texts(texts_path(config), comparer.texts)
    settings = settings_fingerprint(config.review, vector_id)
    path = cache_path(config)
    cache = None if full else ReviewCache.load(path)
    if cache is not None and cache.settings != settings:
        cache = None
    keys = {s.key for s in statements}
    changed: set[str] | None = None
    kept: list[PairResult] = []
    if cache is not None:
        changed = keys - cache.keys
        kept = [p for p in cache.pairs if p.older in keys and p.newer in keys]
    cap = posting_cap(len(statements))
    fresh: list[PairResult] = []
    for a, b in candidate_pairs(statements, comparer, changed, cap):
        result = comparer.compare(a, b)
        if result is not None:
            fresh.append(result)
    pairs = kept + fresh
    promotes = {}
    for s in statements:
        found_promote = promote_score(s, comparer)
        if found_promote is not None and found_promote[0] >= config.review.promote_min_score:
            promotes[s.key] = found_promote
    curated_by_word: dict[str, list[Statement]] = {}
    for c in statements:
        if c.kind == CURATED:
            for w in comparer.feats[c.key].content:
                curated_by_word.setdefault(w, []).append(c)
    known = config.review.promote_known_similarity
    curated_sig = hashlib.sha256("\n".join(sorted(c.key for c in statements if c.kind == CURATED)).encode()
                                 ).hexdigest()[:16]
    was_held = cache.held if cache is not None and cache.curated == curated_sig else {}
    held: dict[str, bool] = {}
    for key in list(promotes):
        if key in comparer.promoted:
            held[key] = True  # promoted already: a curated line cites it
        elif key in was_held:
            held[key] = was_held[key]
        else:
            s = comparer.by_key[key]
            near = {c.key: c for w in comparer.feats[key].content for c in curated_by_word.get(w, ())}
            # Held already when a MEMORY.md/USER.md line says much the same, even below the duplicate threshold.
            # … or one of them holds most of its words (a long lesson holding a short restatement of it)
            held[key] = any(comparer.similarity(s, c) >= known or comparer.holds_most(c, s) for c in near.values())
        if held[key]:
            del promotes[key]
    if cache is None or fresh or changed or len(kept) != len(cache.pairs) or keys != cache.keys \
            or held != was_held:
        ReviewCache(settings, keys, pairs, curated_sig, held).save(path)
    pairs = [*pairs, *comparer.repeats_in_files()]  # (a file's own repeats: cheap, found afresh each review)
    if vectors is not None:
        from engine.review.vectors import LineVectors

        if isinstance(vectors, LineVectors):
            # Across scripts (Serbian in MEMORY.md, Chinese in a note) no word is shared, so no candidate pair
            # holds them: the curated lines' vectors against every note's, each review (a matrix product).
            curated = [s for s in statements if s.kind == CURATED]
            notes = [s for s in statements if s.kind != CURATED]
            for c, s, sim in vectors.across_scripts(curated, notes, CROSS_LANGUAGE_SIMILARITY):
                found_pair = comparer.compare_across(c, s, sim)
                if found_pair is not None:
                    pairs = [*pairs, found_pair]
    headings = sorted({(s.path, s.section) for s in statements if s.kind == CURATED and s.section}
                      | curated_headings(files))
    try:
        today: date | None = Clock.for_config(config).today()
    except ClockError:
        today = None  # an unreadable MEMDECK_TODAY/NOW: no change is held back as announced for later
    findings = build_findings(statements, comparer, pairs, promotes, headings, today)
    findings.extend(budget_findings(config))  # what to move out of a MEMORY.md/USER.md OpenClaw cuts
    if since is not None:
        zone = note_timezone(config.memory.timezone)  # a file's day is its day in the user's zone, as a note's
        mtimes = {f.rel: datetime.fromtimestamp(f.mtime_ns / 1e9, zone).date() for f in files}
        findings = [f for f in findings if any(_day(i.day, mtimes.get(i.path)) >= since for i in f.items)]
    if kind is not None:
        findings = [f for f in findings if f.kind == kind]
    dismissed_ids = DismissStore(config.home, config.workspace).ids()
    shown = [f for f in findings if f.id not in dismissed_ids]
    dismissed = len(findings) - len(shown)
    shown.sort(key=lambda f: (KINDS.index(f.kind), -f.score, f.items[0].path, f.items[0].start_line))
    hidden = [] if show_all else [f for f in shown if not f.confident]
    if hidden:
        shown = [f for f in shown if f.confident]
    return ReviewReport(
        findings=tuple(shown), hidden=tuple(hidden), files=len(by_file), statements=len(statements),
        compared=len(statements) if changed is None else len(changed), incremental=changed is not None,
        dismissed=dismissed, seconds=time.monotonic() - started, warnings=tuple(problems))


def _day(day: str | None, fallback: date | None) -> date:
    if day is not None:
        try:
            return date.fromisoformat(day)
        except ValueError:
            pass
    return fallback or date.min


__all__ = ["Finding", "run_review"]
