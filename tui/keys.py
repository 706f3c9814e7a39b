"""The app's commands in one table: key bindings with ids (remappable under ``[keys]``), palette entries, help rows."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from textual.binding import Binding


@dataclass(frozen=True)
class Command:
    """One thing the user can do: a key binding, a command palette entry, or both.

    Attributes:
        action: the action's name (``save`` runs ``action_save``).
        description: the short label of the footer and the help screen (``Save``).
        key: the default key(s); empty for a palette-only command.
        id: the binding id, remappable under ``[keys]`` (bindings only).
        title: the palette entry's name; empty for a key that is not in the palette.
        help: the palette entry's help line.
        on_app: the action is the App's (help, quit, theme); otherwise the main screen's.
        priority: the key is checked before the focused widget's own (Textual's priority binding).
        show: the key is shown in the footer.
    """

    action: str
    description: str
    key: str = ""
    id: str = ""
    title: str = ""
    help: str = ""
    on_app: bool = False
    priority: bool = False
    show: bool = True

    @property
    def target(self) -> str:
        """The action as a binding names it: main-screen actions run on the current screen (``screen.save``).

        Over a dialog the current screen is the dialog, which has no such action: the key then falls through
        to the dialog's own bindings instead of acting on the main screen behind it.
        """
        return self.action if self.on_app else f"screen.{self.action}"

    def binding(self) -> Binding:
        """The App binding for this command (it must have a key)."""
        return Binding(self.key, self.target, self.description, show=self.show, id=self.id or None,
                       priority=self.priority)


# Footer order is binding order, palette order is table order: keep both as they were when reordering rows.
COMMANDS: tuple[Command, ...] = (
    Command("focus_search", "Search", "ctrl+f", "memdeck.search", "Search memory", "Focus the search box",
            priority=True),
    Command("save", "Save", "ctrl+s", "memdeck.save", "Save",
            "Save the open file (atomically; never over a change on disk)", priority=True),
    Command("toggle_mode", "Mode", "ctrl+t", "memdeck.mode", "Toggle search mode", "hybrid → keyword → vector",
            priority=True),
    Command("copy_citation", "Copy cite", "ctrl+l", "memdeck.copy_citation", "Copy citation",
            "Copy the selected result's citation (memory/x.md#L12-L30)", priority=True),
    Command("copy_snippet", "Copy snippet", title="Copy snippet",
            help="Copy the selected result's snippet (or the editor's selection)"),
    Command("close_file", "Close file", title="Close file", help="Close the open file (asks about unsaved changes)"),
    Command("new_daily", "Today", "ctrl+n", "memdeck.new_daily", "New today's note",
            "Open or create memory/YYYY-MM-DD.md for today", priority=True),
    Command("new_topic", "New topic", title="New topic file", help="Create memory/<name>.md"),
    Command("rename", "Rename", title="Rename file", help="Rename the selected memory file (asks first)"),
    Command("delete", "Delete", title="Delete file",
            help="Move the selected memory file to memdeck's trash (asks first)"),
    Command("undo_delete", "Undo delete", title="Undo delete",
            help="Put the last deleted memory file back where it was (from memdeck's trash)"),
    Command("reindex", "Reindex", "ctrl+r", "memdeck.reindex", "Reindex", "Bring the index up to date with the files",
            priority=True),
    Command("rebuild", "Rebuild", title="Rebuild index",
            help="Re-chunk every file into a fresh index (embeddings come from the cache)"),
    Command("cancel_index", "Cancel indexing", title="Cancel indexing",
            help="Stop the running index sync (the index stays consistent)"),
    Command("load_model", "Load model", title="Load model", help="Load the embedding model now (vector search)"),
    Command("review", "Review", "ctrl+g", "memdeck.review", "Review memory",
            "Duplicates, conflicts and facts worth promoting to MEMORY.md: see them side by side and decide",
            priority=True, show=False),
    Command("undo_review", "Undo review", title="Undo review action",
            help="Undo the last review action (promote, supersede, delete copy, merge or dismiss)"),
    Command("open_session", "Open session", title="Open session", help="Pick an agent session transcript to read"),
    Command("flush", "Flush", title="Flush session",
            help="Draft memories from the open session, review, append to today's note"),
    Command("session_note", "Session note", title="Write session note",
            help="Write memory/YYYY-MM-DD-HHMM.md (an LLM's slug when configured) from the open session"),
    Command("change_theme", "Theme", title="Switch theme", help="Pick a theme (the choice is remembered)",
            on_app=True),
    Command("help", "Help", "f1", "memdeck.help", "Help", "Show every key binding", on_app=True, priority=True,
            show=False),
    Command("help", "Help", "question_mark", "memdeck.help_key", on_app=True),
    Command("escape", "Back", "escape", "memdeck.escape", show=False),
    Command("quit", "Quit", "ctrl+q", "memdeck.quit", "Quit", "Quit memdeck (asks about unsaved changes)",
            on_app=True, priority=True),
)
"""Every app-level command; panes add their own keys (tree, results, transcript)."""

APP_BINDINGS = [command.binding() for command in COMMANDS if command.key]
"""The App's bindings, built from :data:`COMMANDS`."""

PALETTE = [command for command in COMMANDS if command.title]
"""The command palette's entries, built from :data:`COMMANDS`."""


@dataclass(frozen=True)
class KeyHelp:
    """One line of the help screen."""

    keys: str
    description: str
    binding_id: str
    where: str


def unknown_ids(keymap: Mapping[str, str], known: Iterable[str]) -> list[str]:
    """Keymap ids from the config that no binding has (typos the user should hear about)."""
    known_set = set(known)
    return sorted(k for k in keymap if k not in known_set)


def describe_bindings(groups: Iterable[tuple[str, Iterable[Binding]]], keymap: Mapping[str, str],
                      display: Callable[[Binding], str]) -> list[KeyHelp]:
    """Bindings with ids as the help screen shows them, keymap overrides applied.

    Args:
        groups: ``(where, bindings)`` pairs, e.g. ``("app", APP_BINDINGS)``.
        keymap: the config's ``[keys]`` table (binding id → keys).
        display: turns a Binding into its key display (``App.get_key_display``).
    """
    rows: list[KeyHelp] = []
    for where, bindings in groups:
        for binding in bindings:
            if not binding.id:
                continue
            keys = keymap.get(binding.id, binding.key)
            shown = ", ".join(display(Binding(k.strip(), binding.action)) for k in keys.split(",") if k.strip())
            rows.append(KeyHelp(shown, binding.description or binding.action, binding.id, where))
    return rows
