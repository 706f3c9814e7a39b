"""Small modal screens: a choice, a pick from a list, a name prompt, a typed-name confirmation, and a diff viewer.

Titles and messages name files and quote memory: they are shown through ``engine.display``'s one rule, so no
control character of a file name reaches the terminal.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from engine.api import safe_name, safe_text

Choice = tuple[str, str, str]
"""(id, label, button variant)."""


class ChoiceScreen(ModalScreen[str]):
    """Ask the user to pick one of a few buttons; escape picks ``cancel``.

    The focused button — what one Enter picks — is ``focus``, by default Cancel when there is one: a dialog
    that guards a destructive action (delete, rename, discard, reload over edits) never does it on a reflex.
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss_cancel", "Cancel", show=False)]

    def __init__(self, title: str, message: str, choices: list[Choice], focus: str | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.message = message
        self.choices = choices
        ids = [ident for ident, _, _ in choices]
        self.focus_id = focus if focus in ids else "cancel" if "cancel" in ids else ids[0] if ids else None

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Content(safe_name(self.title_text)), classes="dialog-title")
            yield Static(Content(safe_text(self.message)), classes="dialog-message")
            with Horizontal(classes="dialog-buttons"):
                for ident, label, variant in self.choices:
                    yield Button(Content(label), id=f"choice-{ident}", variant=variant)  # type: ignore[arg-type]

    def on_mount(self) -> None:
        if self.focus_id is not None:
            self.query_one(f"#choice-{self.focus_id}", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss((event.button.id or "choice-cancel").removeprefix("choice-"))

    def action_dismiss_cancel(self) -> None:
        self.dismiss("cancel")


class PickScreen(ModalScreen[str]):
    """Pick one item of a list (Enter on it returns its index, as text), or one of a few buttons (their ids).

    Escape returns ``later``. For lists too long for one dialog each (the recovery copies a crash left).
    """

    AUTO_FOCUS = "#pick-list"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "later", "Later", show=False)]
    DEFAULT_CSS = """
    PickScreen #pick-list { height: auto; max-height: 12; margin-top: 1; }
    """

    def __init__(self, title: str, message: str, items: list[str], choices: list[Choice]) -> None:
        super().__init__()
        self.title_text = title
        self.message = message
        self.items = items
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog dialog-wide"):
            yield Label(Content(safe_name(self.title_text)), classes="dialog-title")
            yield Static(Content(safe_text(self.message)), classes="dialog-message")
            yield OptionList(*(Option(Content(safe_name(item)), id=str(i)) for i, item in enumerate(self.items)),
                             id="pick-list")
            with Horizontal(classes="dialog-buttons"):
                for ident, label, variant in self.choices:
                    yield Button(Content(label), id=f"pick-{ident}", variant=variant)  # type: ignore[arg-type]

    @on(OptionList.OptionSelected, "#pick-list")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id or "later")

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss((event.button.id or "pick-later").removeprefix("pick-"))

    def action_later(self) -> None:
        self.dismiss("later")


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
            yield Label(Content(safe_name(self.title_text)), classes="dialog-title")
            yield Static(Content(safe_text(self.message)), classes="dialog-message")
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


class ConfirmNameScreen(ModalScreen[bool]):
    """Confirm a destructive action by typing the file's name (for files too important for one click).

    The action's button stays disabled until the input holds exactly ``name``; Enter in the input confirms only
    then; escape and Cancel refuse.
    """

    AUTO_FOCUS = "#confirm-input"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", show=False)]

    def __init__(self, title: str, message: str, name: str, action: str = "Delete") -> None:
        super().__init__()
        self.title_text = title
        self.message = message
        self.name_to_type = name
        self.action_label = action

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Content(safe_name(self.title_text)), classes="dialog-title")
            yield Static(Content(safe_text(self.message)), classes="dialog-message")
            yield Input(placeholder=safe_name(self.name_to_type), id="confirm-input")
            with Horizontal(classes="dialog-buttons"):
                yield Button(self.action_label, id="confirm-ok", variant="error", disabled=True)
                yield Button("Cancel", id="confirm-cancel")

    @property
    def matches(self) -> bool:
        """Whether the input holds the name exactly."""
        return self.query_one("#confirm-input", Input).value == self.name_to_type

    @on(Input.Changed, "#confirm-input")
    def _typed(self) -> None:
        self.query_one("#confirm-ok", Button).disabled = not self.matches

    @on(Input.Submitted, "#confirm-input")
    @on(Button.Pressed, "#confirm-ok")
    def _ok(self, event: Input.Submitted | Button.Pressed) -> None:
        event.stop()
        if self.matches:
            self.dismiss(True)
        else:
            self.app.bell()

    @on(Button.Pressed, "#confirm-cancel")
    def action_cancel(self) -> None:
        self.dismiss(False)


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
        lines.append(Content.styled(safe_text(line), style))
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
            yield Label(Content(f"{safe_name(self.rel)}: disk → editor"), classes="dialog-title")
            with VerticalScroll(classes="diff-body"):
                yield Static(diff_content(self.diff), id="diff-text")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Back", id="diff-close", variant="primary")

    @on(Button.Pressed, "#diff-close")
    def action_close(self) -> None:
        self.dismiss(None)
