"""Which paths the TUI watches for changes made by others (an agent appending to today's note)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.config import Config

WATCH_DEBOUNCE_MS = 400
"""watchfiles groups changes for this long; with a sync after it, the tree and index follow within ~1 s."""


@dataclass(frozen=True)
class WatchPlan:
    """Folders to watch recursively and the workspace root (watched flat, for ``MEMORY.md``)."""

    recursive: tuple[Path, ...]
    flat: tuple[Path, ...]


def watch_plan(config: Config) -> WatchPlan:
    """The existing folders worth watching: ``memory/``, extra paths, the sessions folder, the root."""
    recursive: list[Path] = []
    memory = config.workspace / "memory"
    if memory.is_dir() and not memory.is_symlink():
        recursive.append(memory)
    for extra in config.extra_paths:
        folder = extra if extra.is_dir() else extra.parent
        if folder.is_dir() and folder not in recursive and not extra.is_symlink():
            recursive.append(folder)
    sessions = config.resolved_sessions_dir
    if sessions.is_dir():
        recursive.append(sessions)
    flat = (config.workspace,) if config.workspace.is_dir() else ()
    return WatchPlan(tuple(recursive), flat)


def is_relevant(path: str, config: Config) -> bool:
    """Whether a changed path can matter: Markdown memory, a transcript, ``sessions.json``."""
    from engine.workspace import SKIP_DIRS

    p = Path(path)
    if any(part in SKIP_DIRS for part in p.parts):
        return False
    name = p.name
    if name.startswith(".") and name.endswith(".tmp"):
        return False  # our own and others' atomic-write temp files
    if name.endswith(".md"):
        return True
    if name.endswith(".jsonl") or ".jsonl.reset." in name or name == "sessions.json":
        return True
    # The memory folder itself appearing or vanishing.
    return os.path.normpath(path) == os.path.normpath(config.workspace / "memory")
