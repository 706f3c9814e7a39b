"""Error types the engine raises; each carries a message a person can act on."""

from __future__ import annotations


class MemdeckError(Exception):
    """Base class for errors shown to the user as one clear line."""


class ConfigError(MemdeckError):
    """The configuration file or an environment setting is invalid."""

    def __init__(self, path: str, key: str, problem: str) -> None:
        self.path = path
        self.key = key
        self.problem = problem
        super().__init__(f"{path}: {key}: {problem}")


class PathRefused(MemdeckError, ValueError):
    """A memory path was refused (outside the workspace, a symlink, not Markdown, ...)."""


class LineRangeRefused(MemdeckError, ValueError):
    """A line range to read was refused: ``from`` or ``lines`` below 1 (memory_get and ``memdeck get``)."""


class IndexBusy(MemdeckError):
    """Another process holds the index's writer lock."""
