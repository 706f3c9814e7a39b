"""The files an index covers: the memory files, plus session transcripts when sessions are a source."""

from __future__ import annotations

import os
from pathlib import Path

from engine.config import Config
from engine.workspace import MemoryFile, ScanReport, memory_file_stats, scan_memory_files


def _session_stats(config: Config) -> list[tuple[str, str, int, int]] | None:
    """``(rel, path, mtime_ns, size)`` of the session transcripts (``*.jsonl``, no symlinks), sorted; None: no folder."""
    folder = str(config.resolved_sessions_dir)
    try:
        with os.scandir(folder) as it:
            entries = sorted((e for e in it if e.name.endswith(".jsonl")), key=lambda e: e.name)
    except OSError:
        return [] if os.path.isdir(folder) else None  # an unreadable folder lists nothing, as glob did
    found: list[tuple[str, str, int, int]] = []
    for entry in entries:
        try:
            if entry.is_symlink() or not entry.is_file():
                continue
            st = entry.stat()
        except OSError:
            continue  # removed between listing and stat
        found.append((f"sessions/{entry.name}", entry.path, st.st_mtime_ns, st.st_size))
    return found


def scan_sources(config: Config) -> ScanReport:
    """The files an index covers: memory files, plus session transcripts when sessions are a source."""
    report = scan_memory_files(config)
    if "sessions" not in config.sources:
        return report
    files = list(report.files)
    issues = list(report.issues)
    sessions = _session_stats(config)
    if sessions is None:
        issues.append(f"sessions directory missing ({config.resolved_sessions_dir})")
    else:
        files.extend(MemoryFile(rel, Path(p), "sessions", mtime_ns, size) for rel, p, mtime_ns, size in sessions)
    return ScanReport(tuple(files), tuple(issues))


def source_stats(config: Config, issues: list[str] | None = None) -> dict[str, tuple[int, int]]:
    """``rel → (mtime_ns, size)`` of the files :func:`scan_sources` lists (the cheap form for freshness checks).

    Args:
        config: the workspace and its sources.
        issues: when given, the problems :func:`scan_sources` would report are appended.
    """
    stats = memory_file_stats(config, issues)
    if "sessions" in config.sources:
        sessions = _session_stats(config)
        if sessions is None and issues is not None:
            issues.append(f"sessions directory missing ({config.resolved_sessions_dir})")
        stats.update((rel, (mtime_ns, size)) for rel, _p, mtime_ns, size in sessions or ())
    return stats
