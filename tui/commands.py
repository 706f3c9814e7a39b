"""Command palette entries: the palette rows of the command table (tui/keys.py), each running its action."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from textual.app import App, SystemCommand
from textual.dom import DOMNode

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
