"""Which session source a path or the config names: the one way every door finds an agent's sessions.

It sits over both kinds (:class:`~engine.sessions.dbsource.AgentDbSource`, built on :mod:`engine.sessions.sources`,
and :class:`~engine.sessions.sources.FolderSource`), so neither of those modules imports the other's.
"""

from __future__ import annotations

from pathlib import Path

from engine.config import Config
from engine.sessions.agentdb import DB_FILE_NAME
from engine.sessions.dbsource import AgentDbSource
from engine.sessions.sources import (
    FLUSH_STATE_FILE,
    FolderSource,
    SessionSource,
    explicit_sessions_location,
    openclaw_state_dir,
)


def _agent_of(db_path: Path, default: str) -> str:
    """The agent id in ``<state>/agents/<agent>/agent/openclaw-agent.sqlite``, else ``default``."""
    parent = db_path.parent
    if parent.name == "agent" and parent.parent.parent.name == "agents" and parent.parent.name:
        return parent.parent.name
    return default


def session_source_at(location: Path, *, agent: str = "main", flush_state: Path | None = None,
                      busy_timeout: float | None = None) -> SessionSource:
    """The source a path names: an ``openclaw-agent.sqlite`` file (or a folder holding one) or a sessions folder.

    A legacy ``agents/<agent>/sessions`` folder whose agent has a database next to it (``../agent/``) is read
    through the database (OpenClaw migrated it; the folder keeps only archives, which are listed too).
    """
    path = Path(location).expanduser()
    if path.is_dir():
        inside = path / DB_FILE_NAME
        if inside.is_file():
            legacy = path.parent / "sessions" if path.name == "agent" else None
            return AgentDbSource(inside, agent=_agent_of(inside, agent), flush_state=flush_state,
                                 legacy_folder=legacy, busy_timeout=busy_timeout)
        sibling = path.parent / "agent" / DB_FILE_NAME
        if path.name == "sessions" and sibling.is_file():
            return AgentDbSource(sibling, agent=_agent_of(sibling, agent), flush_state=flush_state,
                                 legacy_folder=path, busy_timeout=busy_timeout)
        return FolderSource(path, flush_state)
    if path.is_file() or path.suffix in (".sqlite", ".sqlite3", ".db"):
        legacy = path.parent.parent / "sessions" if path.parent.name == "agent" else None
        return AgentDbSource(path, agent=_agent_of(path, agent), flush_state=flush_state, legacy_folder=legacy,
                             busy_timeout=busy_timeout)
    return FolderSource(path, flush_state)


def open_session_source(config: Config, *, flush_state: Path | None = None,
                        location: Path | None = None) -> SessionSource:
    """The one way every door finds an agent's sessions.

    ``location`` (else ``MEMDECK_SESSIONS``, else ``sessions_dir`` from ``--sessions`` or the config) may
    name a folder or an ``openclaw-agent.sqlite`` file (see :func:`session_source_at`). Without one:
    OpenClaw's database ``<state>/agents/<agent>/agent/openclaw-agent.sqlite`` when it exists
    (``$OPENCLAW_STATE_DIR``, else ``~/.openclaw``), else the legacy folder ``<state>/agents/<agent>/sessions``.

    Args:
        config: the agent id, the sessions setting and memdeck's data dir.
        flush_state: memdeck's flush record; defaults to ``<home>/flush-state.json``.
        location: a path that wins over the configured one.
    """
    state_file = flush_state if flush_state is not None else config.home / FLUSH_STATE_FILE
    named = location if location is not None else explicit_sessions_location(config)
    if named is not None:
        return session_source_at(named, agent=config.agent, flush_state=state_file)
    agent_dir = openclaw_state_dir() / "agents" / config.agent
    database = agent_dir / "agent" / DB_FILE_NAME
    legacy = agent_dir / "sessions"
    if database.exists():
        return AgentDbSource(database, agent=config.agent, flush_state=state_file, legacy_folder=legacy)
    return FolderSource(legacy, state_file)
