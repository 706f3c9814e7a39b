"""Index repairs (``memdeck doctor --fix``): temp files, permissions, damaged files and rows, then a re-index.

Repairs never change memory files. The re-index goes through an engine the caller opens (``open_engine``,
normally ``MemoryEngine``), so health sits below the public API instead of reaching up into it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Protocol

from engine.clock import Clock
from engine.config import Config
from engine.display import plural
from engine.errors import MemdeckError
from engine.health.checks import (
    DoctorReport,
    diagnose,
    loose_files,
    loose_folders,
    rel_to,
    workspace_temp_files,
)
from engine.index import queries, schema
from engine.index.indexer import SyncReport
from engine.index.store import Store
from engine.textio import make_private_dir


class _Recovered(Protocol):
    @property
    def recovered(self) -> tuple[str, ...]: ...


class RepairEngine(Protocol):
    """What the repairs need from the engine: its store, a sync, and what it recovered from."""

    @property
    def store(self) -> Store: ...

    def sync(self) -> SyncReport: ...

    def status(self) -> _Recovered: ...

    def close(self) -> None: ...


OpenEngine = Callable[[Config], RepairEngine]
"""Opens the engine for a configuration (``MemoryEngine`` itself)."""


def repair_rows(store: Store) -> list[str]:
    """Delete orphans, re-add missing FTS rows, queue chunks with missing vectors for embedding, and drop file
    rows that do not match their chunks (the next sync re-indexes them). One transaction; returns what was done.

    Vectors are deleted by explicit rowid: ``rowid IN (SELECT …)`` makes vec0 scan its whole table.
    """
    from engine.index.fts import fts_text

    vec = store.vec_available and schema.VEC_TABLE in schema.table_names(store.conn)
    counts: dict[str, int] = {}

    def add(label: str, n: int) -> None:
        if n > 0:
            counts[label] = counts.get(label, 0) + n

    with store.transaction() as tx:
        for path in queries.mismatched_files(tx):
            add("file rows dropped for re-indexing", queries.delete_file(tx, path))
        # Chunks of files the index does not list (now including those just dropped), with all they own.
        doomed = sorted(queries.unlisted_chunk_ids(tx))
        add("FTS rows of orphaned chunks", queries.delete_fts(tx, doomed))
        if vec:
            add("vectors of orphaned chunks", queries.delete_vectors(tx, doomed))
        add("windows of orphaned chunks", queries.delete_windows(tx, doomed))
        add("orphaned chunks", queries.delete_chunk_rows(tx, doomed))
        chunk_ids = queries.chunk_ids(tx)
        add("orphaned FTS rows", queries.delete_fts(tx, sorted(queries.fts_rowids(tx) - chunk_ids)))
        windows = queries.windows(tx)
        stray = sorted(w for w, c in windows if c not in chunk_ids)
        if vec:
            add("vectors of orphaned windows", queries.delete_vectors_by_rowid(tx, stray))
        add("orphaned windows", queries.delete_windows_by_id(tx, stray))
        lost: set[int] = set()
        if vec:
            vec_ids = queries.vector_rowids(tx)
            kept = {w for w, c in windows if c in chunk_ids}
            add("orphaned vectors", queries.delete_vectors_by_rowid(tx, sorted(vec_ids - kept)))
            # Windows whose vector is gone: embed the whole chunk again.
            lost = {c for w, c in windows if c in chunk_ids and w not in vec_ids}
        lost |= queries.embedded_without_windows(tx)
        requeue = sorted(lost)
        if vec:
            queries.delete_vectors(tx, requeue)
        queries.delete_windows(tx, requeue)
        for chunk_id in requeue:
            add("chunks queued to embed again", queries.mark_unembedded(tx, chunk_id))
        for chunk_id, text, source in queries.chunks_without_fts(tx):
            queries.insert_fts(tx, chunk_id, fts_text(text, source))
            add("FTS rows re-added", 1)
        if queries.fts_check_or_rebuild(tx):
            counts["FTS index rebuilt"] = 1
        if vec and (doomed or stray or requeue or "orphaned vectors" in counts):
            queries.bump_vec_generation(tx)  # in-memory vector copies (a running TUI) reload
    return [f"{label}: {n}" for label, n in counts.items()]


def _instant(config: Config) -> datetime:
    """The time now on the one clock (the user's zone); the system's when a clock variable is unreadable — a
    repair must not fail over a test hook."""
    return Clock.for_config(config).stamp()


def _move_workspace_temps(config: Config, paths: list[Path], actions: list[str]) -> None:
    target_root = config.home / "recovered" / f"{_instant(config):%Y%m%d-%H%M%S}"
    for path in paths:
        rel = rel_to(path, config.workspace)
        target = target_root / (rel if not Path(rel).is_absolute() else path.name)
        make_private_dir(target.parent)
        try:
            shutil.move(str(path), str(target))
        except OSError as exc:
            actions.append(f"could not move {rel}: {exc.strerror or exc}")
            continue
        actions.append(f"moved unfinished save {rel} to {target}")


def _fix_permissions(config: Config, actions: list[str]) -> None:
    for folder in loose_folders(config):
        with contextlib.suppress(OSError):
            os.chmod(folder, 0o700)
            actions.append(f"chmod 700 {folder}")
    for path in loose_files(config):
        with contextlib.suppress(OSError):
            os.chmod(path, 0o600)
            actions.append(f"chmod 600 {path}")


def _reindex(config: Config, open_engine: OpenEngine, aside: Path | None, actions: list[str]) -> None:
    """Sync (rebuilding when the settings changed, embedding what is missing) and say what it did."""
    from engine.index.store import salvage_cache

    engine = open_engine(config)
    try:
        if aside is not None:
            kept = salvage_cache(aside, engine.store)
            if kept:
                actions.append(f"kept {plural(kept, 'cached embedding')} from the damaged index")
        report = engine.sync()
        actions.extend(engine.status().recovered)
        # Reported now: status stops repeating the last recovery.
        queries.delete_meta(engine.store.conn, schema.RECOVERED_META)
        summary = f"indexed: {plural(report.files_indexed, 'file')} re-read, {report.files_removed} removed"
        if report.rebuilt:
            summary += ", rebuilt"
        if report.embedded or report.from_cache:
            summary += f", {report.embedded} embedded, {report.from_cache} from cache"
        actions.append(summary)
        actions.extend(f"note: {issue}" for issue in report.issues)
    finally:
        engine.close()


def repair(config: Config, open_engine: OpenEngine, progress: Callable[[str], None] | None = None,
           now: float | None = None) -> DoctorReport:
    """Diagnose, repair what can be repaired, then diagnose again.

    Repairs: temp files of crashed rebuilds are deleted; unfinished saves are moved out of the workspace
    into ``<home>/recovered/``; damaged-index copies are deleted; loose permissions are tightened; a
    damaged index is moved aside and rebuilt from the Markdown; orphaned rows are deleted, missing FTS rows
    re-added, chunks with missing vectors embedded again; stale files, identity changes and pending
    embeddings are handled by a sync. Memory files are never changed. Secrets are reported, not touched.

    Args:
        config: the configuration.
        open_engine: opens the engine that re-indexes (``MemoryEngine``).
        progress: called with a line before each repair step.
        now: the current time (tests).

    Returns:
        The report after the repairs, with ``actions`` saying what was done.
    """
    from engine.index.indexer import writer_lock
    from engine.index.store import DB_ERRORS, CorruptIndex, move_aside

    def say(line: str) -> None:
        if progress is not None:
            progress(line)

    now = time.time() if now is None else now
    before = diagnose(config, now)
    actions: list[str] = []
    by_check = {f.check: f for f in before.findings}
    if (f := by_check.get("temp-files")) and f.severity != "ok":
        say("deleting temp files of interrupted rebuilds")
        for name in f.details:
            with contextlib.suppress(OSError):
                (config.index_path.parent / name).unlink()
                actions.append(f"deleted {name}")
    if (f := by_check.get("corrupt-copies")) and f.count:
        say("deleting damaged index copies")
        for name in f.details:
            with contextlib.suppress(OSError):
                (config.index_path.parent / name).unlink()
                actions.append(f"deleted {name}")
    if (f := by_check.get("workspace-temp")) and f.count:
        say("moving unfinished saves out of the workspace")
        _move_workspace_temps(config, workspace_temp_files(config, now), actions)
    if (f := by_check.get("permissions")) and f.severity != "ok":
        _fix_permissions(config, actions)
    aside: Path | None = None
    damaged = (f := by_check.get("index")) is not None and f.severity == "error" and f.fix is not None
    row_checks = ("fts", "orphans", "vectors", "files")
    try:
        if damaged:
            say("moving the damaged index aside")
            with writer_lock(config.index_path, wait=10.0):
                if config.index_path.exists():
                    aside = move_aside(config.index_path, _instant(config))
                    actions.append(f"moved the damaged index aside to {aside.name}")
        elif any(by_check.get(c) is not None and by_check[c].severity == "error" for c in row_checks):
            say("repairing index rows")
            with writer_lock(config.index_path, wait=10.0):
                store = Store(config.index_path)
                try:
                    actions.extend(repair_rows(store))
                finally:
                    store.close()
        say("indexing (rebuilds when the settings changed; embeds what is missing)")
        _reindex(config, open_engine, aside, actions)
    except MemdeckError as exc:  # IndexBusy, IndexAccessError, ConfigError, ...
        actions.append(f"could not repair the index: {exc}")
    except (CorruptIndex, OSError, *DB_ERRORS) as exc:  # type: ignore[misc]
        actions.append(f"could not repair the index: {type(exc).__name__}: {exc}")
    after = diagnose(config, now)
    return DoctorReport(after.workspace, after.index_path, after.findings, after.secrets, tuple(actions), fixed=True)
