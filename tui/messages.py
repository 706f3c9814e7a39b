"""Cross-pane messages: past-tense facts the panes post up to the main screen (and the app above it)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:
    from engine.api import Hit, SearchResponse
    from tui.bridge import TreeModel


class EngineOpened(Message):
    """The index is open: searches, status and sync can run."""


class EngineFailed(Message):
    """The index could not be opened."""

    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class ResultsReady(Message):
    """A search finished and its results are current (stale ones are never posted)."""

    def __init__(self, query: str, response: SearchResponse, seconds: float) -> None:
        super().__init__()
        self.query = query
        self.response = response
        self.seconds = seconds


class ResultChosen(Message):
    """The user picked a search result (Enter or click)."""

    def __init__(self, hit: Hit) -> None:
        super().__init__()
        self.hit = hit


class NoteChosen(Message):
    """The user picked a memory file in the tree."""

    def __init__(self, rel: str) -> None:
        super().__init__()
        self.rel = rel


class SessionChosen(Message):
    """The user picked a session transcript in the tree."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path


class TreeScanned(Message):
    """The workspace and sessions folder were listed."""

    def __init__(self, model: TreeModel) -> None:
        super().__init__()
        self.model = model


class IndexProgressed(Message):
    """Indexing moved on: ``phase`` is ``files`` or ``embed``."""

    def __init__(self, phase: str, done: int, total: int, path: str | None, work: tuple[int, int] = (0, 0)) -> None:
        super().__init__()
        self.phase = phase
        self.done = done
        self.total = total
        self.path = path
        self.work = work  # (characters sent to the model, of all to send): the embedding's progress by work


class IndexFinished(Message):
    """An index sync ended (finished, cancelled or failed). ``busy``: it did not start because another memdeck
    process holds the index's writer lock (a ``memdeck index`` in a terminal): not a failure, the other one is
    doing the work."""

    def __init__(self, summary: str, cancelled: bool = False, error: str | None = None, busy: bool = False) -> None:
        super().__init__()
        self.summary = summary
        self.cancelled = cancelled
        self.error = error
        self.busy = busy


class ModelLoaded(Message):
    """The embedding model finished loading (or failed: see ``state``)."""

    def __init__(self, state: str) -> None:
        super().__init__()
        self.state = state


class StatusRefreshed(Message):
    """Fresh index status and per-file index states."""

    def __init__(self, status: Any, file_states: dict[str, str]) -> None:
        super().__init__()
        self.status = status
        self.file_states = file_states


class NoteSaved(Message):
    """The editor saved a file (it is on disk and re-indexed)."""

    def __init__(self, rel: str, warnings: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.rel = rel
        self.warnings = warnings


class FilesChanged(Message):
    """Files in the workspace or sessions folder changed on disk (seen by the watcher)."""

    def __init__(self, paths: frozenset[Path]) -> None:
        super().__init__()
        self.paths = paths


class FlushAppended(Message):
    """A reviewed flush was appended to a daily note."""

    def __init__(self, rel: str) -> None:
        super().__init__()
        self.rel = rel
