"""Command palette entries: the palette rows of the command table (tui/keys.py), each running its action; and the
Open-session picker, which finds a session by its title or by the start of its id."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from textual.app import App, SystemCommand
from textual.command import CommandPalette, DiscoveryHit, Hit, Provider
from textual.content import Content
from textual.dom import DOMNode
from textual.style import Style as TextualStyle

from tui.keys import PALETTE, Command


def palette_commands(app: App[Any], main: DOMNode) -> Iterable[SystemCommand]:
    """The palette entries: app commands run on ``app``, the others on the main screen ``main``.

    The main screen is named rather than taken as "the current screen": a command runs as the palette closes,
    and the workbench's actions belong to the main screen whatever is on top of it.
    """
    for command in PALETTE:
        yield SystemCommand(command.title, command.help, _runner(app, main, command))


def _runner(app: App[Any], main: DOMNode, command: Command) -> Callable[[], Awaitable[None]]:
    namespace = app if command.on_app else main

    async def run() -> None:
        await app.run_action(command.action, namespace)

    return run


# ---------------------------------------------------------------------------------------------
# The Open-session picker

ID_MIN_CHARS = 2
"""The shortest query that is tried as the start of a session id (one character prefixes everything)."""
TITLE_SHARE = 0.9
"""A title's fuzzy score is scaled below 1, so a session whose id starts with the query always comes first."""


@dataclass(frozen=True)
class SessionChoice:
    """One session in the picker: what it shows (``title``, ``detail``), its id, and what choosing it does."""

    title: str
    session_id: str
    detail: str
    choose: Callable[[], Any]


def session_score(query: str, title: str, session_id: str, fuzzy: Callable[[str], float]) -> float:
    """How well ``query`` picks a session: 1.0 when the id starts with it (case and spaces ignored), else the
    title's fuzzy score scaled by :data:`TITLE_SHARE`; 0 for no match.

    Args:
        query: what the user typed.
        title: the session's title as the picker shows it.
        session_id: its id.
        fuzzy: the palette's fuzzy matcher on a candidate (0 … 1).
    """
    wanted = query.strip().lower()
    if not wanted:
        return 0.0
    if len(wanted) >= ID_MIN_CHARS and session_id.lower().startswith(wanted):
        return 1.0
    return TITLE_SHARE * fuzzy(title)


class SessionProvider(Provider):
    """The picker's one provider: sessions by id prefix or by fuzzy title (titles are shown as plain text, never
    read as markup: they come from the agent's data). :func:`session_provider` makes one for a list."""

    choices: ClassVar[tuple[SessionChoice, ...]] = ()

    async def search(self, query: str) -> AsyncIterator[Hit]:
        matcher = self.matcher(query)
        style: TextualStyle | str = self.match_style if self.match_style is not None else "reverse"
        typed = len(query.strip())
        for choice in self.choices:
            score = session_score(query, choice.title, choice.session_id, matcher.match)
            if score <= 0:
                continue
            shown = Content(choice.title)
            if score == 1.0:
                shown = Content.assemble(shown, "  ", Content(choice.session_id[:typed]).stylize(style),
                                         Content(choice.session_id[typed:max(8, typed)]))
            yield Hit(score, shown, choice.choose, text=choice.title, help=choice.detail)

    async def discover(self) -> AsyncIterator[DiscoveryHit]:
        for choice in self.choices:
            yield DiscoveryHit(Content(choice.title), choice.choose, text=choice.title, help=choice.detail)


def session_provider(choices: Sequence[SessionChoice]) -> type[SessionProvider]:
    """A provider class over these sessions (the palette makes its providers itself, from classes)."""
    return type("Sessions", (SessionProvider,), {"choices": tuple(choices)})


def open_session_picker(app: App[Any], choices: Sequence[SessionChoice]) -> None:
    """Show the Open-session picker: type a title's words or the start of a session id."""
    app.push_screen(CommandPalette(providers=[session_provider(choices)],
                                   placeholder="Open a session: its title, or the start of its id…"))
