"""HelpScreen: every key binding with its id, and how to remap it."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from tui.keys import KeyHelp

REMAP_HINT = 'Remap any key in the config file:  [keys]  "memdeck.save" = "ctrl+s,f2"'


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
