"""Command palette entries: every action the app has, by name."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING

from textual.app import SystemCommand

if TYPE_CHECKING:
    from tui.app import MemdeckApp

PALETTE = [
    ("Search memory", "Focus the search box", "focus_search"),
    ("Toggle search mode", "hybrid → keyword → vector", "toggle_mode"),
    ("Copy citation", "Copy the selected result's citation (memory/x.md#L12-L30)", "copy_citation"),
    ("Copy snippet", "Copy the selected result's snippet (or the editor's selection)", "copy_snippet"),
    ("Save", "Save the open file (atomically; never over a change on disk)", "save"),
    ("Close file", "Close the open file (asks about unsaved changes)", "close_file"),
    ("New today's note", "Open or create memory/YYYY-MM-DD.md for today", "new_daily"),
    ("New topic file", "Create memory/<name>.md", "new_topic"),
    ("Rename file", "Rename the selected memory file (asks first)", "rename"),
    ("Delete file", "Delete the selected memory file (asks first)", "delete"),
    ("Reindex", "Bring the index up to date with the files", "reindex"),
    ("Rebuild index", "Re-chunk every file into a fresh index (embeddings come from the cache)", "rebuild"),
    ("Cancel indexing", "Stop the running index sync (the index stays consistent)", "cancel_index"),
    ("Load model", "Load the embedding model now (vector search)", "load_model"),
    ("Open session", "Pick an agent session transcript to read", "open_session"),
    ("Flush session", "Draft memories from the open session, review, append to today's note", "flush"),
    ("Write session note", "Write memory/YYYY-MM-DD-<slug>.md from the open session", "session_note"),
    ("Switch theme", "Pick a theme (the choice is remembered)", "change_theme"),
    ("Help", "Show every key binding", "help"),
    ("Quit", "Quit memdeck (asks about unsaved changes)", "quit"),
]


def palette_commands(app: MemdeckApp) -> Iterable[SystemCommand]:
    """The palette entries, each running the app action of the same name."""
    for title, help_text, action in PALETTE:
        yield SystemCommand(title, help_text, _runner(app, action))


def _runner(app: MemdeckApp, action: str) -> Callable[[], Awaitable[None]]:
    async def run() -> None:
        await app.run_action(action)

    return run
