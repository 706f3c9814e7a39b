"""HelpScreen: every key binding of every screen and pane, grouped, with its id when it can be remapped."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.dom import DOMNode
from textual.screen import ModalScreen, Screen
from textual.widgets import Label, Static

from tui.keys import KeyHelp

REMAP_HINT = 'Remap a key that has an id in the config file:  [keys]  "memdeck.save" = "ctrl+s,f2"'

UNNAMED_ACTIONS = {
    "help_quit": "How to quit (in a text field: copy)",
    "command_palette": "Command palette",
}
"""Descriptions for Textual's own bindings that have none."""

_SCREEN_ACTIONS = frozenset(b.action for bs in Screen._merge_bindings().key_to_bindings.values() for b in bs)

BindingSource = type[DOMNode] | Binding
"""A class whose bindings (its own and inherited, as Textual merges them) are listed, or one binding."""


def binding_rows(groups: Iterable[tuple[str, Iterable[BindingSource]]], keymap: Mapping[str, str],
                 display: Callable[[Binding], str]) -> list[KeyHelp]:
    """Every binding in effect for each group's classes, from their binding tables, one row per action.

    A class's bindings are what Textual merges from it and its bases (a key a subclass rebinds shows its new
    action only); the keys of one action are joined on one row; the config's ``[keys]`` overrides apply to the
    bindings with an id. memdeck's own bindings come first in each group, the widgets' built-in ones after.

    Args:
        groups: ``(where, classes or bindings)`` pairs, e.g. ``("memory tree", [MemoryTree])``.
        keymap: the config's ``[keys]`` table (binding id → keys).
        display: turns a Binding into its key display (``App.get_key_display``).
    """
    rows: list[KeyHelp] = []
    for where, sources in groups:
        merged: dict[tuple[str, str, str], list[str]] = {}
        own: set[tuple[str, str, str]] = set()
        for source in sources:
            if isinstance(source, Binding):
                found, declared = [source], [source]
            else:
                found = [b for bs in source._merge_bindings().key_to_bindings.values() for b in bs]
                if issubclass(source, Screen) and source is not Screen:  # focus and copy: listed once, for all
                    found = [b for b in found if b.action not in _SCREEN_ACTIONS]
                declared = [b for cls in source.__mro__ if cls.__module__.startswith("tui.")
                            for b in cls.__dict__.get("BINDINGS", []) if isinstance(b, Binding)]
            own_actions = {b.action for b in declared}
            for binding in found:
                description = binding.description or UNNAMED_ACTIONS.get(binding.action, "")
                row = (binding.action, description or binding.action.replace("_", " "), binding.id or "")
                keys = merged.setdefault(row, [])
                keys.extend(k for k in binding.key.split(",") if k.strip() and k not in keys)
                if binding.action in own_actions:
                    own.add(row)
        ordered = [row for row in merged if row in own] + [row for row in merged if row not in own]
        for action, description, binding_id in ordered:
            default = ",".join(merged[(action, description, binding_id)])
            wanted = keymap.get(binding_id, default) if binding_id else default
            shown = ", ".join(display(Binding(k.strip(), action)) for k in wanted.split(",") if k.strip())
            rows.append(KeyHelp(shown, description, binding_id, where))
    return rows


def help_content(rows: list[KeyHelp]) -> Content:
    """A table of keys as Content (one row per binding)."""
    width = max((len(r.keys) for r in rows), default=4) + 2
    desc_width = max((len(r.description) for r in rows), default=8) + 2
    lines: list[Content] = []
    where = None
    for row in rows:
        if row.where != where:
            if where is not None:
                lines.append(Content(""))
            lines.append(Content.styled(row.where, "bold $text-primary"))
            where = row.where
        lines.append(Content.assemble(
            (f"  {row.keys:<{width}}", "bold $text-accent"),
            (f"{row.description:<{desc_width}}", ""),
            (row.binding_id, "$text-muted"),
        ))
    return Content("\n").join(lines)


class HelpScreen(ModalScreen[None]):
    """Keys, grouped by pane."""

    AUTO_FOCUS = "#help-body"  # every binding is a long list: ↑/↓/pgup/pgdn scroll it at once
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,question_mark,f1", "close", "Close")]

    def __init__(self, rows: list[KeyHelp]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog dialog-wide", id="help"):
            yield Label("memdeck — keys", classes="dialog-title")
            with VerticalScroll(id="help-body"):
                yield Static(help_content(self.rows), id="help-table")
            yield Static(Content.styled(REMAP_HINT + "\nctrl+p opens the command palette: every action is there.",
                                        "$text-muted"), id="help-hint")

    def action_close(self) -> None:
        self.dismiss(None)
