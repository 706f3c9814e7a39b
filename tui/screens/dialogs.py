"""Small modal screens: a choice, a name prompt, and a diff viewer."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

Choice = tuple[str, str, str]
"""(id, label, button variant)."""


class ChoiceScreen(ModalScreen[str]):
    """Ask the user to pick one of a few buttons; escape picks ``cancel``."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss_cancel", "Cancel", show=False)]

    def __init__(self, title: str, message: str, choices: list[Choice]) -> None:
        super().__init__()
        self.title_text = title
        self.message = message
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Content(self.title_text), classes="dialog-title")
            yield Static(Content(self.message), classes="dialog-message")
            with Horizontal(classes="dialog-buttons"):
                for ident, label, variant in self.choices:
                    yield Button(Content(label), id=f"choice-{ident}", variant=variant)  # type: ignore[arg-type]

    def on_mount(self) -> None:
        self.query(Button).first().focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss((event.button.id or "choice-cancel").removeprefix("choice-"))

    def action_dismiss_cancel(self) -> None:
        self.dismiss("cancel")


class PromptScreen(ModalScreen[str | None]):
    """Ask for a line of text (a file name); escape cancels."""

    AUTO_FOCUS = "#prompt-input"  # type at once (the app focuses nothing on a screen by itself)
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", show=False)]

    def __init__(self, title: str, message: str, value: str = "", placeholder: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.message = message
        self.value = value
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Content(self.title_text), classes="dialog-title")
            yield Static(Content(self.message), classes="dialog-message")
            yield Input(self.value, placeholder=self.placeholder, id="prompt-input")
            with Horizontal(classes="dialog-buttons"):
                yield Button("OK", id="prompt-ok", variant="primary")
                yield Button("Cancel", id="prompt-cancel")

    @on(Input.Submitted, "#prompt-input")
    @on(Button.Pressed, "#prompt-ok")
    def _ok(self) -> None:
        value = self.query_one("#prompt-input", Input).value.strip()
        self.dismiss(value or None)

    @on(Button.Pressed, "#prompt-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


def diff_content(diff: str) -> Content:
    """A unified diff coloured line by line (the text is never parsed as markup)."""
    lines: list[Content] = []
    for line in diff.rstrip("\n").split("\n"):
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("@@"):
            style = "$text-secondary"
        elif line.startswith("+"):
            style = "$text-success"
        elif line.startswith("-"):
            style = "$text-error"
        else:
            style = "$text-muted"
        lines.append(Content.styled(line, style))
    return Content("\n").join(lines) if lines else Content("No differences.")


class DiffScreen(ModalScreen[None]):
    """Show what the editor has that the disk does not."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "close", "Close")]

    def __init__(self, rel: str, diff: str) -> None:
        super().__init__()
        self.rel = rel
        self.diff = diff

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog dialog-wide"):
            yield Label(Content(f"{self.rel}: disk → editor"), classes="dialog-title")
            with VerticalScroll(classes="diff-body"):
                yield Static(diff_content(self.diff), id="diff-text")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Back", id="diff-close", variant="primary")

    @on(Button.Pressed, "#diff-close")
    def action_close(self) -> None:
        self.dismiss(None)
