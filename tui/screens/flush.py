"""FlushScreen: review and edit the memories drafted from a session before they are appended."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from tui.widgets.markdown_area import MarkdownArea


class FlushScreen(ModalScreen[str | None]):
    """The drafted block in an editor; Append returns the (edited) text, Cancel returns None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "append", "Append", priority=True),
    ]

    def __init__(self, title: str, info: str, block: str, warnings: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.title_text = title
        self.info = info
        self.block = block
        self.warnings = warnings

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog dialog-wide", id="flush"):
            yield Label(Content(self.title_text), classes="dialog-title")
            yield Static(Content(self.info), classes="dialog-message")
            for warning in self.warnings:
                yield Static(Content.styled(f"⚠ {warning}", "$text-warning"), classes="dialog-message")
            yield MarkdownArea(id="flush-text")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Append (ctrl+s)", id="flush-append", variant="primary")
                yield Button("Cancel", id="flush-cancel")

    def on_mount(self) -> None:
        area = self.query_one(MarkdownArea)
        area.load_text(self.block)
        area.focus()

    @on(Button.Pressed, "#flush-append")
    def action_append(self) -> None:
        text = self.query_one(MarkdownArea).text
        self.dismiss(text if text.strip() else None)

    def action_save(self) -> None:
        """The app's save key (``memdeck.save``, remappable) appends here, as ctrl+s does."""
        self.action_append()

    @on(Button.Pressed, "#flush-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
