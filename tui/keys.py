"""The app's commands in one table: key bindings with ids (remappable under ``[keys]``), palette entries, help rows."""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from textual.binding import Binding
from textual.keys import KEY_ALIASES, _character_to_key, format_key


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
    Command("audit", "Audit", "ctrl+o", "memdeck.audit", "Audit sessions",
            "What people said in sessions that memory lacks: pick statements, append them to the days they were said",
            priority=True, show=False),
    Command("open_session", "Open session", title="Open session", help="Pick an agent session transcript to read"),
    Command("flush", "Flush", title="Flush session",
            help="Draft memories from the open session, review, append them to the daily note of the day they were said"),
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


RESERVED_KEYS: dict[str, str] = {
    "ctrl+p": "the command palette",
    "ctrl+c": "copy (and Textual's quit hint)",
    "tab": "focus next",
    "shift+tab": "focus previous",
}
"""Keys Textual itself binds for every screen: a remap onto one would take it away."""

@functools.cache
def text_field_keys() -> dict[str, str]:
    """The keys the editor (a TextArea) and the search box (an Input) act on, with what they do there
    (``ctrl+a``: cursor line start): a binding that works while typing (a priority binding: save, search,
    quit …) would take them away there."""
    from textual.widgets import Input, TextArea

    found: dict[str, str] = {"enter": "a new line or running the search", "space": "typing a space"}
    for widget in (TextArea, Input):
        for binding in widget.BINDINGS:
            if isinstance(binding, Binding):
                for key in _keys_of(binding.key):
                    found.setdefault(key, binding.action.split("(")[0].replace("_", " "))
    return found


def _types_a_character(key: str) -> bool:
    """``a``, ``A``, ``question_mark``, ``minus``: a key without modifiers that types its character."""
    if "+" in key:
        return False
    shown = format_key(key)  # the character a character key names; "↑" for up, which is no character key
    return len(shown) == 1 and shown.isprintable() and _character_to_key(shown) == key


_ALIAS_OF = {alias: key for key, aliases in KEY_ALIASES.items() for alias in aliases}
"""``ctrl+i`` → ``tab``: keys a terminal cannot tell apart (Textual reports the second name as an alias)."""

GLOBAL_GROUP = "app"
"""The group whose keys work everywhere: a key there clashes with the same key in any group."""


@dataclass(frozen=True)
class KeymapCheck:
    """What :func:`check_keymap` made of the config's ``[keys]``.

    Attributes:
        keymap: the overrides to apply (binding id → normalised keys); refused ones are left out, so those
            bindings keep their default keys.
        warnings: one line per refused override, naming its binding id (and the other binding's, for a clash).
    """

    keymap: dict[str, str]
    warnings: tuple[str, ...]


def normalize_key(key: str) -> str:
    """A key as Textual reports it: modifiers in its (alphabetical) order, a lone punctuation key by name
    (``shift+ctrl+a`` → ``ctrl+shift+a``, ``?`` → ``question_mark``), so remaps compare and fire as typed."""
    *modifiers, name = key.strip().split("+")
    if not modifiers and len(name) == 1:
        name = _character_to_key(name)
    return "+".join([*sorted(modifiers), name])


def _keys_of(text: str) -> list[str]:
    return list(dict.fromkeys(normalize_key(k) for k in text.split(",") if k.strip()))


def check_keymap(keymap: Mapping[str, str], groups: Iterable[tuple[str, Iterable[Binding]]]) -> KeymapCheck:
    """Refuse the ``[keys]`` overrides that would break a binding: an unknown binding id, or a key another binding
    (or Textual: the palette, copy, focus) already answers to in the same place. The key syntax is the config's
    (:func:`engine.config_rules.key_problem`, checked when the config loads).

    A refused override is left out (its binding keeps its default keys) and named in a warning; clashes are
    settled one at a time in config order, so a swap (``save = "ctrl+q"``, ``quit = "ctrl+s"``) is accepted.

    Args:
        keymap: the config's ``[keys]`` table (binding id → comma-separated keys).
        groups: ``(where, bindings)`` pairs, e.g. ``("app", APP_BINDINGS)``; keys in :data:`GLOBAL_GROUP` work
            everywhere, a pane's only where it has the focus.
    """
    defaults: dict[str, list[str]] = {}
    where: dict[str, set[str]] = {}
    label: dict[str, str] = {}
    while_typing: set[str] = set()  # priority bindings: they fire before the focused editor or search box
    for group, bindings in groups:
        for binding in bindings:
            if not binding.id:
                continue
            if binding.priority:
                while_typing.add(binding.id)
            defaults.setdefault(binding.id, [])
            defaults[binding.id] += [k for k in _keys_of(binding.key) if k not in defaults[binding.id]]
            where.setdefault(binding.id, set()).add(group)
            label.setdefault(binding.id, binding.description or binding.action)
    warnings: list[str] = []
    accepted: dict[str, list[str]] = {}
    for binding_id, text in keymap.items():
        if binding_id not in defaults:
            close = difflib.get_close_matches(binding_id, list(defaults), n=1)
            hint = f" (did you mean {close[0]}?)" if close else " (F1 lists the binding ids)"
            warnings.append(f"[keys] {binding_id}: no binding has this id{hint}; ignored")
            continue
        keys = _keys_of(str(text))
        if keys:
            accepted[binding_id] = keys

    def effective(binding_id: str) -> list[str]:
        return accepted.get(binding_id, defaults[binding_id])

    def clash() -> tuple[str, str, str] | None:
        """(the remapped id, the key, why it cannot have it) of the first clash, in config order."""
        for binding_id, keys in accepted.items():
            for written in keys:
                # A terminal sends ctrl+i as tab and ctrl+m as enter: Textual hands such a key to both names.
                key = _ALIAS_OF.get(written, written)
                same = f" ({written} is {key} to a terminal)" if key != written else ""
                if key in RESERVED_KEYS:
                    return binding_id, written, f"is already the key of {RESERVED_KEYS[key]}{same}"
                for other in defaults:
                    shared = where[binding_id] & where[other] or GLOBAL_GROUP in where[binding_id] | where[other]
                    if other != binding_id and shared and {key, written} & set(effective(other)):
                        return binding_id, written, f"is already the key of {other} ({label[other]}){same}"
                if binding_id in while_typing and _types_a_character(key):
                    return binding_id, written, (f"types a character in the editor and the search box, and "
                                                 f"{binding_id} works while typing there: it would take the key away")
                if binding_id in while_typing and key in text_field_keys():
                    return binding_id, written, (f"is the editor's and the search box's key for "
                                                 f"{text_field_keys()[key]}{same}, and {binding_id} works while "
                                                 "typing there: it would take the key away")
        return None

    while (found := clash()) is not None:
        binding_id, key, why = found
        del accepted[binding_id]
        warnings.append(f"[keys] {binding_id} = \"{keymap[binding_id]}\": {key} {why}; "
                        f"{binding_id} keeps {', '.join(defaults[binding_id]) or 'no key'}")
    return KeymapCheck({k: ",".join(v) for k, v in accepted.items()}, tuple(warnings))
