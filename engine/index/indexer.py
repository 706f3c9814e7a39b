"""Keeping the index in step with the Markdown: incremental sync by content hash, then embedding what is new."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from engine.config import Config
from engine.display import byte_limit, plural
from engine.embed.choice import Embedder, ProviderChoice
from engine.embed.nulldir import known_null_direction
from engine.errors import IndexBusy
from engine.index import queries
from engine.index.chunking import Chunk, chunk_document, plan_windows
from engine.index.embed_plan import (
    DEFAULT_PLAN,
    DERIVED_PLANS,
    LinePolicy,
    mean_vector,
    pick_lines,
    vector_plan,
    window_lines,
)
from engine.index.fts import fts_text
from engine.index.queries import bump_vec_generation as bump_vec_generation  # re-exported (bench, tests)
from engine.index.store import Store, deserialize_vector, serialize_vector
from engine.textio import MAX_FILE_BYTES, make_private_dir, read_text_file
from engine.workspace import MemoryFile, is_curated, require_workspace

CHUNKER_VERSION = 6  # 4: OpenClaw's recall comments blanked out of chunk text; curated importance. 5: NFC text.
# 6: a transcript chunk's FTS row without the User:/Assistant: labels
EMBED_SLICE = 256  # texts per embedder call inside a group
EMBED_GROUP = 8
"""Chunks per committed group: progress moves every few chunks, and a stopped run (Ctrl-C, a closed TUI, a search's
time budget) keeps every finished group; the next run resumes with the next chunk in embedding order."""
RATE_META = "embed_rate:"
"""The index's ``meta`` key prefix (``embed_rate:<provider>:<model>``) of the measured embedding speed (chunk chars/s)."""
WINDOW_VERSION = 1


@dataclass(frozen=True)
class SyncProgress:
    """Where a sync is: ``phase`` is ``files`` or ``embed``; ``done`` of ``total`` units (files, chunks).

    ``work_done`` of ``work_total`` (embedding only; 0 of 0 when unknown): the characters of text sent to the
    model, windows and line vectors each counted, so a rate and an ETA follow the work while the head's line
    vectors are embedded and no new chunk is counted (a bar by chunks sat still there, its ETA seconds)."""

    phase: str
    done: int
    total: int
    path: str | None = None
    work_done: int = 0
    work_total: int = 0


@dataclass
class SyncReport:
    """What a sync did."""

    files_indexed: int = 0
    files_unchanged: int = 0
    files_removed: int = 0
    chunks_written: int = 0
    embedded: int = 0
    from_cache: int = 0
    chunks_total: int = 0
    rebuilt: bool = False
    cancelled: bool = False
    seconds: float = 0.0
    embed_chars: int = 0  # chunk text embedded afresh (not from the cache), and the seconds it took
    embed_seconds: float = 0.0
    budget_left: int = 0  # chunks a budgeted embedding run left for later
    issues: list[str] = field(default_factory=list)


ProgressFn = Callable[[SyncProgress], None]


def identity_for(config: Config, choice: ProviderChoice, embedder: Embedder | None) -> dict[str, Any]:
    """What the index was built with; any change forces a full rebuild."""
    return {
        "chunker": CHUNKER_VERSION,
        "chunk_tokens": config.chunking.tokens,
        "chunk_overlap": config.chunking.overlap,
        "window_tokens": config.chunking.window_tokens,
        "sources": sorted(config.sources),
        "provider": choice.provider,
        "model": choice.model,
        "dims": choice.dims,
        "fingerprint": embedder.fingerprint() if embedder is not None else None,
        "windows": WINDOW_VERSION,
        "line_vectors": config.chunking.line_vectors,
        "fts": "porter-unicode61-cjk-bigram",
        # Entries only off the default, so an index built before these settings existed still fits.
        **({"vectors": vector_plan(config)} if config.chunking.line_vectors and vector_plan(config) != DEFAULT_PLAN
           else {}),
        **({"lines_power": config.index.lines_power} if vector_plan(config) in DERIVED_PLANS else {}),
        **LinePolicy.from_env(config.index.line_min_tokens).identity(),
    }


def _lock_pid(fd: int) -> int | None:
    """The pid the lock's holder wrote into the lock file (None if unreadable)."""
    try:
        raw = os.pread(fd, 32, 0)
        return int(raw.decode("ascii").strip()) if raw.strip() else None
    except (OSError, ValueError):
        return None


def lock_holder(index_path: Path) -> int | None:
    """Whether another process holds the index's writer lock right now: its pid (0 if it wrote none), else None.

    A probe, for saying why a command is about to wait: it takes a shared lock and lets go at once, so it never
    holds a writer up."""
    lock_path = index_path.with_name(index_path.name + ".lock")
    try:
        fd = os.open(lock_path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _lock_pid(fd) or 0
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


@contextlib.contextmanager
def writer_lock(index_path: Path, wait: float = 30.0) -> Iterator[None]:
    """One writer per index across processes (``flock``: a dead holder releases it automatically).

    Raises:
        IndexBusy: another process held the lock for longer than ``wait`` seconds.
    """
    lock_path = index_path.with_name(index_path.name + ".lock")
    make_private_dir(lock_path.parent)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    pid = _lock_pid(fd)
                    who = f" (pid {pid})" if pid else ""
                    raise IndexBusy(f"another memdeck process{who} is writing {index_path}; try again when it is "
                                    "done") from None
                time.sleep(0.05)
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists (ours counts; another user's counts too)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def content_hash(text: str) -> str:
    """sha256 of text."""
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Document:
    """A file's searchable content: its text and, for transcripts, the original line of each text line."""

    text: str
    line_map: tuple[int, ...] | None
    decode_errors: int
    issue: str | None = None


@runtime_checkable
class ReadsItself(Protocol):
    """A listed file the index cannot open as Markdown — a session — that reads its own searchable text.

    :class:`engine.sessions.sources.SessionFile` is one; the index never imports ``engine.sessions`` (it sits below).
    """

    def searchable_text(self) -> tuple[str, Sequence[int], int]:
        """``(text, the file's line number of each text line, how many lines were skipped)``.

        Raises:
            OSError: it vanished (``FileNotFoundError``) or cannot be read.
        """
        ...


def load_document(file: MemoryFile) -> Document:
    """Read a memory or session file into searchable text (never raises for bad content).

    Raises:
        OSError: the file vanished (``FileNotFoundError``) or cannot be read.
    """
    if isinstance(file, ReadsItself):
        # A session: through its source (a session in OpenClaw's database has no file to open).
        text, line_map, skipped = file.searchable_text()
        return Document(text, tuple(line_map), skipped)
    if file.source != "memory":
        raise TypeError(f"{file.rel}: a {file.source} file that cannot read itself (see ReadsItself)")
    decoded = read_text_file(file.path, MAX_FILE_BYTES)
    issue = None
    if decoded.binary:
        issue = f"{file.rel}: looks binary (NUL bytes); indexed what decodes"
    elif decoded.errors:
        issue = f"{file.rel}: {plural(decoded.errors, 'byte is', 'bytes are')} not UTF-8; indexed the rest"
    if decoded.truncated:
        limit = byte_limit(MAX_FILE_BYTES)
        issue = f"{file.rel}: larger than {limit}; indexed the first {limit}" + (f" ({issue})" if issue else "")
    return Document(decoded.text, None, decoded.errors, issue)


def _remap(chunk: Chunk, line_map: Sequence[int] | None) -> tuple[int, int, str | None]:
    if line_map is None:
        return chunk.start_line, chunk.end_line, None
    lines = line_map[chunk.start_line - 1 : chunk.end_line]
    return lines[0], lines[-1], json.dumps(list(lines))


def write_document(store: Store, config: Config, file: MemoryFile, doc: Document, digest: str, vec: bool) -> int:
    """Replace a file's chunks in one transaction; returns how many chunks were written."""
    memory = file.source == "memory"
    chunks = chunk_document(doc.text, config.chunking.tokens, config.chunking.overlap, annotations=memory,
                            curated=memory and is_curated(file.rel))
    now = time.time()
    with store.transaction() as conn:
        queries.delete_chunks_of(conn, file.rel, vec)
        for chunk in chunks:
            start, end, line_map = _remap(chunk, doc.line_map)
            queries.insert_chunk(conn, file.rel, file.source, start, end, content_hash(chunk.text), chunk.text,
                                 line_map, fts_text(chunk.text, file.source), now, chunk.importance)
        queries.put_file(conn, file.rel, file.source, digest, file.mtime_ns, file.size, len(chunks),
                         doc.decode_errors, now)
    return len(chunks)


def sync_files(
    store: Store,
    config: Config,
    files: Sequence[MemoryFile],
    report: SyncReport,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
    force: bool = False,
    prune: bool = True,
) -> None:
    """Bring ``files``/``chunks``/``chunks_fts`` in step with the given files (no embedding).

    With ``prune`` (a full scan was given), indexed files missing from ``files`` leave the index.

    Raises:
        WorkspaceUnavailable: ``prune`` and the workspace folder is gone (unmounted, renamed, unreadable): an
            empty scan then means "cannot see", not "deleted", and the index keeps every row.
    """
    if prune:
        require_workspace(config.workspace)
    known = queries.file_states(store.conn)
    vec = store.ensure_vec_table()
    present = {f.rel for f in files}
    for gone in sorted(set(known) - present) if prune else []:
        with store.transaction() as tx:
            queries.delete_chunks_of(tx, gone, vec)
            queries.delete_file(tx, gone)
        report.files_removed += 1
    total = len(files)
    for i, file in enumerate(files):
        if cancel is not None and cancel.is_set():
            report.cancelled = True
            return
        old = known.get(file.rel)
        if not force and old is not None and old[1] == file.mtime_ns and old[2] == file.size:
            report.files_unchanged += 1
            continue
        try:
            doc = load_document(file)
        except FileNotFoundError:
            # Removed between listing and reading: it leaves the index like any deleted file.
            if old is not None:
                with store.transaction() as tx:
                    queries.delete_chunks_of(tx, file.rel, vec)
                    queries.delete_file(tx, file.rel)
                report.files_removed += 1
            report.issues.append(f"{file.rel}: removed while indexing; skipped")
            continue
        except OSError as exc:
            report.issues.append(f"{file.rel}: not readable ({exc.strerror or exc})")
            continue
        if doc.issue:
            report.issues.append(doc.issue)
        digest = content_hash(doc.text + ("\n" + ",".join(map(str, doc.line_map)) if doc.line_map else ""))
        if not force and old is not None and old[0] == digest:
            with store.transaction() as tx:
                queries.touch_file(tx, file.rel, file.mtime_ns, file.size)
            report.files_unchanged += 1
            continue
        report.chunks_written += write_document(store, config, file, doc, digest, vec)
        report.files_indexed += 1
        if progress is not None:
            progress(SyncProgress("files", i + 1, total, file.rel))
    if progress is not None:
        progress(SyncProgress("files", total, total, None))


def quantize(blob: bytes) -> bytes:
    """A float32 vector as int8 (scaled by its largest component): a quarter of the size, cosine within ~1%.

    Line vectors only re-rank a search's candidates, so they are kept small; the cosine with a query is
    ``dot(q, v) / |v|``, which needs no scale.
    """
    import numpy as np  # deferred: only when vectors are written

    vec = np.frombuffer(blob, dtype="<f4")
    top = float(np.abs(vec).max()) if vec.size else 0.0
    if top <= 0.0 or not np.isfinite(top):
        return np.zeros(vec.shape, dtype=np.int8).tobytes()
    return np.round(vec * (127.0 / top)).astype(np.int8).tobytes()


def rate_key(embedder: Embedder) -> str:
    """The ``meta`` key of this embedder's measured speed."""
    return f"{RATE_META}{embedder.provider}:{embedder.model_id}"


def embed_rate(store: Store, embedder: Embedder) -> float | None:
    """The embedder's measured speed on this machine, in chunk characters per second (None: never measured)."""
    raw = store.get_meta(rate_key(embedder))
    try:
        rate = float(raw) if raw is not None else None
    except ValueError:
        return None
    return rate if rate is not None and rate > 0 else None


def _record_rate(store: Store, embedder: Embedder, chars: int, seconds: float) -> None:
    if chars < 20 or seconds <= 0:  # too little to say anything
        return
    measured = chars / seconds
    old = embed_rate(store, embedder)
    rate = measured if old is None else 0.5 * old + 0.5 * measured  # a busy moment does not rule the estimate
    with store.transaction() as tx:
        queries.set_meta(tx, rate_key(embedder), f"{rate:.3f}")


def embed_pending(
    store: Store,
    embedder: Embedder,
    report: SyncReport,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
    batch_size: int = 32,
    window_tokens: int = 0,
    line_vectors: bool = False,
    budget_chars: int | None = None,
    deadline: float | None = None,
    probe: int = 0,
    plan: str = DEFAULT_PLAN,
    line_min_tokens: int = 0,
    lines_power: float = 0.5,
) -> None:
    """Embed the chunks that have no vectors yet, in embedding order (:data:`queries._EMBED_ORDER`), group by group
    (:data:`EMBED_GROUP` chunks, each one transaction), window by window (and line by line), reusing the cache.

    A run that must not keep a reader waiting (a search) is bounded: ``budget_chars`` embeds only the first chunks
    whose text fits it (none when the first does not), ``probe`` only the first ``probe`` chunks (to measure the
    speed when none is known), and ``deadline`` (``time.monotonic()``) stops it between groups; the rest
    (:attr:`SyncReport.budget_left`) waits for the next run. The measured speed is kept in ``meta``
    (:func:`embed_rate`, chunk characters per second).

    ``plan`` (``[index] vectors``, :mod:`engine.index.embed_plan`) says how a window's vector is made; with a
    derived plan (``lines``) a chunk's lines are embedded and its windows are their mean (``lines_power``, its
    ``[index] lines_power``), so there is no separate line phase. ``line_min_tokens`` (``[index]
    line_min_tokens``) leaves shorter lines without a vector.
    """
    del batch_size  # the groups are small and fixed; the embedder batches each call itself
    if not store.ensure_vec_table():
        return
    conn = store.conn
    pending = queries.pending_chunks(conn)
    waiting = len(pending)
    if probe:
        pending = pending[:probe]
    elif budget_chars is not None:
        fits, spent = 0, 0
        for _, text in pending:
            spent += len(text)
            if spent > budget_chars:
                break
            fits += 1
        pending = pending[:fits]
    report.budget_left = waiting - len(pending)
    bounded = bool(probe) or budget_chars is not None or deadline is not None
    if not line_vectors:
        plan = "windows"
    line_vectors = plan != "windows"
    policy = LinePolicy.from_env(line_min_tokens)
    if not pending:
        if line_vectors and not bounded:  # a run stopped after the first windows: their lines are still to come
            _embed_lines(store, embedder, report, cancel, embedder.fingerprint(), queries.head_without_lines(conn),
                         None, policy)
        return
    fingerprint = embedder.fingerprint()
    max_tokens = min(embedder.max_tokens, window_tokens) if window_tokens > 0 else embedder.max_tokens
    total = len(pending)
    chars, seconds = report.embed_chars, report.embed_seconds
    # A full run (not a search's budget) embeds the windows of MEMORY.md, USER.md and the newest notes first: they
    # are searchable by meaning once those are in, and their line vectors are about half their tokens (measured on
    # a generated 3 MB workspace: 43,646 window vs 41,651 line tokens). Their lines follow, then the rest.
    # A derived plan has no head phase: a chunk's windows are made of its lines.
    split = line_vectors and not bounded and plan not in DERIVED_PLANS
    head = min(total, queries.pending_head_count(conn)) if split else 0
    # The lines to come: a stopped run's windowed chunks, then the head's (known exactly once the head is in). Only
    # a full run with a progress reader needs them: a search's bounded run has no line phase and shows no bar.
    lined = ([len(text) for _, text in queries.head_without_lines(conn)] + [len(text) for _, text in pending[:head]]
             if split and progress is not None else [])
    meter = _Meter(progress, pending, head, lined, 2 if plan == "windows+lines" else 1)
    meter.chunks(0, 0)
    if head:
        _embed_groups(store, embedder, report, meter.head if progress else None, cancel, pending[:head],
                      fingerprint, max_tokens, "windows", deadline, EMBED_GROUP, policy)
    if split and not report.cancelled:
        _embed_lines(store, embedder, report, cancel, fingerprint, queries.head_without_lines(conn),
                     meter.lines if progress else None, policy)
    rest = pending[head:] if not report.cancelled else []
    if rest:
        _embed_groups(store, embedder, report, meter.rest if progress else None, cancel, rest, fingerprint,
                      max_tokens, plan, deadline, EMBED_GROUP, policy, lines_power)
    _record_rate(store, embedder, report.embed_chars - chars, report.embed_seconds - seconds)


@dataclass(frozen=True)
class GroupPlan:
    """What a group of chunks is embedded as: the texts sent to the model, the windows to write (each from its
    text's hash, or the mean of its lines' hashes, with weights) and the line vectors to write."""

    texts: dict[str, str]  # content hash → text to embed (or find in the cache)
    windows: list[tuple[int, int, int, str, tuple[str, ...], tuple[float, ...]]]
    """chunk id, first, last, window hash, hashes of the lines it is the mean of (none: its own text), weights"""
    lines: list[tuple[int, int, str]]  # chunk id, line offset, hash


def plan_group(chunks: Sequence[tuple[int, str]], count_tokens: Callable[[Sequence[str]], list[int]],
               max_tokens: int, plan: str, policy: LinePolicy) -> GroupPlan:
    """Which texts ``chunks`` (id, text) need embedded under ``plan`` (:data:`~engine.index.embed_plan.VECTOR_PLANS`),
    and how each window's and line's vector is made of them."""
    texts: dict[str, str] = {}
    windows: list[tuple[int, int, int, str, tuple[str, ...], tuple[float, ...]]] = []
    lines: list[tuple[int, int, str]] = []
    derived = plan in DERIVED_PLANS
    for chunk_id, text in chunks:
        picked = pick_lines(text, count_tokens, policy) if plan != "windows" else []
        line_hash = {off: content_hash(t) for off, t in picked}
        for off, t in picked:
            texts[line_hash[off]] = t
            lines.append((chunk_id, off, line_hash[off]))
        weight: dict[int, float] = {}
        if derived and picked:
            weight = {off: float(max(1, n)) for (off, _), n in zip(picked, count_tokens([t for _, t in picked]),
                                                                   strict=True)}
        for w in plan_windows(text, count_tokens, max_tokens):
            h = content_hash(w.text)
            members = window_lines(w, picked) if derived else []
            if members:
                windows.append((chunk_id, w.first, w.last, h, tuple(line_hash[o] for o, _ in members),
                                tuple(weight.get(o, 1.0) for o, _ in members)))
            else:
                texts[h] = w.text
                windows.append((chunk_id, w.first, w.last, h, (), ()))
    return GroupPlan(texts, windows, lines)


class _Pace:
    """Slices of texts sized to about :attr:`TARGET` seconds of embedding at the speed measured so far in this run,
    so a progress bar moves at least about once a second (a fixed 256-text slice moved it every 8 s at 1.2k
    chars/s on 2 loaded cores). Only a run with a progress reader is paced: the engine batches by itself
    underneath (32 texts a pass), and 48 windows in slices of 4, 8, 16 or 48 took the same time within noise."""

    TARGET = 1.0
    FIRST = 2_000  # characters of the first slice, before any speed is known

    def __init__(self, paced: bool) -> None:
        self.paced = paced
        self.chars = 0
        self.seconds = 0.0

    def end(self, items: Sequence[tuple[str, str]], at: int) -> int:
        """Where the slice that starts at ``at`` ends."""
        if not self.paced:
            return min(len(items), at + EMBED_SLICE)
        budget = self.chars / self.seconds * self.TARGET if self.seconds > 0 and self.chars else self.FIRST
        stop, used = at, 0
        while stop < len(items) and stop - at < EMBED_SLICE and (stop == at or used + len(items[stop][1]) <= budget):
            used += len(items[stop][1])
            stop += 1
        return stop

    def took(self, batch: Sequence[tuple[str, str]], seconds: float) -> None:
        self.chars += sum(len(t) for _, t in batch)
        self.seconds += seconds


GroupProgress = Callable[[int, float], None]
"""Progress inside an embedding phase: (chunks committed, where the work is, in chunks: the committed ones plus the
share of the group being embedded)."""


def _embed_groups(store: Store, embedder: Embedder, report: SyncReport, progress: GroupProgress | None,
                  cancel: threading.Event | None, pending: list[tuple[int, str]], fingerprint: str, max_tokens: int,
                  plan: str, deadline: float | None, step: int, policy: LinePolicy, power: float = 0.5) -> None:
    conn = store.conn
    total = len(pending)
    done = 0
    pace = _Pace(progress is not None)
    null = known_null_direction(embedder.model_id, embedder.dims) if power < 1.0 else None
    for start in range(0, total, step):
        if cancel is not None and cancel.is_set():
            report.cancelled = True
            return
        if start and deadline is not None and time.monotonic() >= deadline:
            report.budget_left += total - start
            return
        group = pending[start : start + step]
        group_chars = sum(len(text) for _, text in group)
        planned = plan_group(group, embedder.count_tokens, max_tokens, plan, policy)
        texts = planned.texts
        hashes = sorted(texts)
        cached = queries.cache_get(conn, embedder.provider, embedder.model_id, fingerprint, hashes)
        missing = {h: t for h, t in texts.items() if h not in cached}
        fresh: dict[str, bytes] = {}
        if missing:
            began = time.monotonic()
            # Similar lengths batch together: less padding, faster encode. Slices keep progress and cancel live.
            items = sorted(missing.items(), key=lambda kv: len(kv[1]))
            at = 0
            while at < len(items):
                if at and cancel is not None and cancel.is_set():
                    report.cancelled = True
                    return
                batch = items[at : pace.end(items, at)]
                slice_began = time.monotonic()
                vectors = embedder.embed_documents([t for _, t in batch])
                pace.took(batch, time.monotonic() - slice_began)
                done_now = {h: serialize_vector(v) for (h, _), v in zip(batch, vectors, strict=True)}
                fresh.update(done_now)
                # Cached at once: a run stopped mid-group (Ctrl-C, a closed TUI) resumes from here next time.
                with store.transaction() as tx:
                    queries.cache_put(tx, embedder.provider, embedder.model_id, fingerprint, embedder.dims, done_now)
                at += len(batch)
                if progress is not None and at < len(items):
                    progress(done, done + len(group) * at / len(items))
            report.embed_seconds += time.monotonic() - began
            report.embed_chars += group_chars
        have = {**cached, **fresh}
        with store.transaction() as tx:
            chunk_ids = sorted({cid for cid, _ in group})
            # A chunk might have been re-written since we read it; only embed rows that still exist.
            queries.delete_vectors(tx, chunk_ids)
            queries.delete_windows(tx, chunk_ids)
            queries.delete_line_vectors(tx, chunk_ids)
            alive = queries.existing_chunks(tx, chunk_ids)
            for chunk_id, first, last, h, members, weights in planned.windows:
                if chunk_id not in alive:
                    continue
                window_id = queries.insert_window(tx, chunk_id, first, last, h)
                blob = (serialize_vector(mean_vector([deserialize_vector(have[m]) for m in members], weights, null,
                                                    power))
                        if members else have[h])
                queries.insert_vector(tx, window_id, blob)
            queries.put_line_vectors(
                tx, [(cid, off, quantize(have[h])) for cid, off, h in planned.lines if cid in alive])
            queries.bump_vec_generation(tx)
            queries.mark_embedded(tx, [c for c in chunk_ids if c in alive])
        report.embedded += len(fresh)
        report.from_cache += sum(1 for h in texts if h in cached)
        done += len(group)
        if progress is not None:
            progress(done, float(done))


class _Meter:
    """The progress of one :func:`embed_pending` run: chunks as the index counts them (``done`` of all pending), and
    the work (:attr:`SyncProgress.work_done`: characters sent to the model) through its phases: the head's windows
    (their text once), the head's line vectors (once more), then the rest (``per_chunk`` times its text: windows
    and lines together under ``windows+lines``)."""

    def __init__(self, progress: ProgressFn | None, pending: list[tuple[int, str]], head: int, lined: list[int],
                 per_chunk: int) -> None:
        self.progress = progress
        self.total = len(pending)
        self.prefix = [0]
        for _, text in pending:
            self.prefix.append(self.prefix[-1] + len(text))
        self.head_work = self.prefix[head]
        self.head_chunks = head
        self.lined = [0]
        for n in lined:
            self.lined.append(self.lined[-1] + n)
        self.per_chunk = per_chunk
        self.work_total = self.head_work + self.lined[-1] + per_chunk * (self.prefix[-1] - self.head_work)

    def chunks(self, done: int, work: int, path: str | None = None) -> None:
        if self.progress is not None:
            self.progress(SyncProgress("embed", done, self.total, path, min(work, self.work_total), self.work_total))

    @staticmethod
    def _at(prefix: list[int], pos: float) -> float:
        """A prefix sum read at a fractional position (the group being embedded counts by its share)."""
        whole = max(0, min(int(pos), len(prefix) - 1))
        if whole + 1 >= len(prefix):
            return prefix[whole]
        return prefix[whole] + (pos - whole) * (prefix[whole + 1] - prefix[whole])

    def head(self, done: int, pos: float) -> None:
        """A progress event of the head's windows (``done`` of the head's chunks, the work at ``pos``)."""
        self.chunks(done, round(self._at(self.prefix, min(pos, self.head_chunks))))

    def lines(self, pos: float) -> None:
        """The head's line vectors are in up to ``pos`` of its chunks (no new chunk is counted)."""
        self.chunks(self.head_chunks, round(self.head_work + self._at(self.lined, pos)))

    def rest(self, done: int, pos: float) -> None:
        """A progress event of the rest (``done`` of the chunks after the head, the work at ``pos``)."""
        at = min(self.head_chunks + done, self.total)
        work = self.head_work + self.lined[-1] + self.per_chunk * (
            self._at(self.prefix, min(self.head_chunks + pos, self.total)) - self.head_work)
        self.chunks(at, round(work))


def _embed_lines(store: Store, embedder: Embedder, report: SyncReport, cancel: threading.Event | None,
                 fingerprint: str, chunks: list[tuple[int, str]], beat: Callable[[float], None] | None,
                 policy: LinePolicy) -> None:
    """Add the line vectors of embedded chunks that have none (their windows went first), group by group, from the
    cache where it has them; ``beat`` is called after each group with the chunks done so far (progress has no new
    chunk to count, only work)."""
    conn = store.conn
    pace = _Pace(beat is not None)
    for start in range(0, len(chunks), EMBED_GROUP):
        if cancel is not None and cancel.is_set():
            report.cancelled = True
            return
        lines = [(cid, i, t, content_hash(t)) for cid, text in chunks[start : start + EMBED_GROUP]
                 for i, t in pick_lines(text, embedder.count_tokens, policy)]
        if not lines:
            if beat is not None:
                beat(min(len(chunks), start + EMBED_GROUP))
            continue
        texts = {h: t for _c, _i, t, h in lines}
        cached = queries.cache_get(conn, embedder.provider, embedder.model_id, fingerprint, sorted(texts))
        missing = sorted(((h, t) for h, t in texts.items() if h not in cached), key=lambda kv: len(kv[1]))
        began = time.monotonic()
        at = 0
        while at < len(missing):
            if at and cancel is not None and cancel.is_set():
                report.cancelled = True
                return
            batch = missing[at : pace.end(missing, at)]
            slice_began = time.monotonic()
            done_now = {h: serialize_vector(v)
                        for (h, _), v in zip(batch, embedder.embed_documents([t for _, t in batch]), strict=True)}
            pace.took(batch, time.monotonic() - slice_began)
            cached.update(done_now)
            with store.transaction() as tx:
                queries.cache_put(tx, embedder.provider, embedder.model_id, fingerprint, embedder.dims, done_now)
            report.embedded += len(done_now)
            at += len(batch)
            if beat is not None and at < len(missing):
                beat(start + min(EMBED_GROUP, len(chunks) - start) * at / len(missing))
        report.embed_seconds += time.monotonic() - began if missing else 0.0
        report.from_cache += len(texts) - len(missing)
        with store.transaction() as tx:
            ids = sorted({cid for cid, _i, _t, _h in lines})
            alive = queries.existing_chunks(tx, ids)  # re-written since it was read: its next embedding adds them
            queries.put_line_vectors(tx, [(cid, off, quantize(cached[h])) for cid, off, _t, h in lines if cid in alive])
        if beat is not None:
            beat(min(len(chunks), start + EMBED_GROUP))
