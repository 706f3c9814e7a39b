"""The files an index covers: the memory files, plus the agent's sessions when sessions are a source.

It lives in the sessions layer, above the index: listing sessions needs the session source, and the index never
imports ``engine.sessions`` (each :class:`~engine.sessions.sources.SessionFile` reads its own searchable text).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from engine.config import Config
from engine.display import has_control_chars, odd_name_issue
from engine.sessions.agentdb import AgentDbError
from engine.sessions.locate import open_session_source
from engine.sessions.model import SessionReadError
from engine.sessions.sources import SessionFile
from engine.workspace import FolderLink, MemoryFile, ScanReport, memory_file_stats, scan_memory_files

Indexed = Callable[[], Mapping[str, tuple[int, int]]]
"""What the index holds now (``rel → (mtime_ns, size)``), asked for only when the sessions cannot be listed."""


def _session_files(config: Config, indexed: Indexed | None = None) -> tuple[list[MemoryFile], list[str]]:
    """The sessions the index covers, listed through the session source (no transcript is parsed).

    A folder session is its file; a session in OpenClaw's database is named ``sessions/<agent>/<id>.jsonl``
    and read through the source. A source that cannot be listed gives no files and one issue — except an
    OpenClaw database that is there but cannot be read now (locked, damaged): with ``indexed``, the sessions
    the index holds are listed as they were, so a moment's lock does not drop them from the index.
    """
    source = open_session_source(config)
    try:
        files: list[MemoryFile] = list(source.index_files())
    except SessionReadError as exc:
        if source.kind == "folder":
            return [], [str(exc)]  # "sessions directory missing (<dir>)", as OpenClaw's status says
        cause = exc.__cause__
        if indexed is None or (isinstance(cause, AgentDbError) and cause.reason == "missing"):
            return [], [f"sessions unavailable: {exc}"]
        kept: list[MemoryFile] = [SessionFile(rel, Path(rel), "sessions", mtime_ns, size)
                for rel, (mtime_ns, size) in sorted(indexed().items()) if rel.startswith("sessions/")]
        return kept, [f"sessions unavailable: {exc} (the indexed sessions are kept as they were)"]
    # The memory files' rule (engine.workspace): a name with control or line-break characters is reported, not indexed.
    odd = [f.rel for f in files if has_control_chars(f.rel)]
    if not odd:
        return files, []
    return ([f for f in files if not has_control_chars(f.rel)],
            [odd_name_issue(rel) for rel in odd])


def scan_sources(config: Config, indexed: Indexed | None = None) -> ScanReport:
    """The files an index covers: memory files, plus sessions when sessions are a source.

    Args:
        config: the workspace and its sources.
        indexed: what the index holds, for sessions that cannot be read right now (see :func:`_session_files`).
    """
    report = scan_memory_files(config)
    if "sessions" not in config.sources:
        return report
    sessions, problems = _session_files(config, indexed)
    return ScanReport((*report.files, *sessions), (*report.issues, *problems), report.links, report.file_links)


def source_stats(config: Config, issues: list[str] | None = None,
                 indexed: Indexed | None = None, links: list[FolderLink] | None = None) -> dict[str, tuple[int, int]]:
    """``rel → (mtime_ns, size)`` of the files :func:`scan_sources` lists (the cheap form for freshness checks).

    Args:
        config: the workspace and its sources.
        issues: when given, the problems :func:`scan_sources` would report are appended.
        indexed: as for :func:`scan_sources`.
        links: when given, the symlinked folders met in the memory tree (see :class:`engine.workspace.FolderLink`).
    """
    stats = memory_file_stats(config, issues, links)
    if "sessions" in config.sources:
        sessions, problems = _session_files(config, indexed)
        if issues is not None:
            issues.extend(problems)
        stats.update((f.rel, (f.mtime_ns, f.size)) for f in sessions)
    return stats
