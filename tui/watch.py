"""What the TUI watches for changes made by others (an agent appending to today's note): the engine's rules."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from engine.api import WATCH_DEBOUNCE_MS, WatchPlan, awatch_changes, is_relevant, watch_plan

if TYPE_CHECKING:
    import asyncio
    from pathlib import Path

    from engine.config import Config

__all__ = ["WATCH_DEBOUNCE_MS", "WatchPlan", "is_relevant", "watch_changes", "watch_plan"]


def watch_changes(config: Config, stop: asyncio.Event) -> AsyncIterator[frozenset[Path]]:
    """Each debounced set of relevant changed paths under the engine's watch plan, until ``stop`` is set."""
    return awatch_changes(config, stop)
