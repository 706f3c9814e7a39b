"""Key bindings with ids (remappable from the config file's ``[keys]`` table) and how the help screen lists them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from textual.binding import Binding

APP_BINDINGS = [
    Binding("ctrl+f", "focus_search", "Search", id="memdeck.search", priority=True),
    Binding("ctrl+s", "save", "Save", id="memdeck.save", priority=True),
    Binding("ctrl+t", "toggle_mode", "Mode", id="memdeck.mode", priority=True),
    Binding("ctrl+l", "copy_citation", "Copy cite", id="memdeck.copy_citation", priority=True),
    Binding("ctrl+n", "new_daily", "Today", id="memdeck.new_daily", priority=True),
    Binding("ctrl+r", "reindex", "Reindex", id="memdeck.reindex", priority=True),
    Binding("f1", "help", "Help", id="memdeck.help", priority=True, show=False),
    Binding("question_mark", "help", "Help", id="memdeck.help_key"),
    Binding("escape", "escape", "Back", id="memdeck.escape", show=False),
    Binding("ctrl+q", "quit", "Quit", id="memdeck.quit", priority=True),
]
"""Bindings the app owns; panes add their own (tree, results, transcript)."""


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
