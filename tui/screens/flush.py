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
    """The drafted block in an editor; Append returns the (edited) text, Cancel returns None.

    ``target`` is the (first) daily note the block is for (``memory/YYYY-MM-DD.md``; a flush of several days names
    each day's note in the block's ``<!-- flush → … -->`` separators, and the title names them all) and
    ``heading`` the heading a new one gets: when memdeck is stopped by a signal with an edited draft open, the draft is kept as that note's
    recovery copy (:meth:`unsaved_draft`).
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        # priority: the editor (tab indents) takes a plain escape to move focus, so the first escape did nothing
        Binding("escape", "cancel", "Cancel", priority=True),
        Binding("ctrl+s", "append", "Append", priority=True),
    ]

    def __init__(self, title: str, info: str, block: str, warnings: tuple[str, ...] = (), *,
                 target: str | None = None, heading: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.info = info
        self.block = block
        self.warnings = warnings
        self.target = target
        self.heading = heading

    def unsaved_draft(self) -> str | None:
        """The draft as edited, when the user changed it from what was drafted (else None: drafting it again
        gives it back)."""
        if not self.is_mounted:
            return None
        text = self.query_one(MarkdownArea).text
        return text if text.strip() and text != self.block else None

    def appended_to(self, note_text: str) -> str:
        """``note_text`` with the edited draft appended, as Append would write it (a missing note: its heading
        first)."""
        draft = (self.unsaved_draft() or "").strip("\n")
        if not note_text.strip():
            return f"{self.heading}\n\n{draft}\n" if self.heading else f"{draft}\n"
        return f"{note_text.rstrip(chr(10))}\n\n{draft}\n"

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
        """Close without appending; an edited draft is discarded only when the user says so."""
        if self.unsaved_draft() is None:
            self.dismiss(None)
            return
        from tui.screens.dialogs import ChoiceScreen

        def decided(choice: str | None) -> None:
            if choice == "discard":
                self.dismiss(None)

        self.app.push_screen(ChoiceScreen(
            "Discard the edited draft?", "Nothing is appended; your edits to the draft are lost.",
            [("discard", "Discard", "error"), ("cancel", "Keep editing", "primary")]), decided)
