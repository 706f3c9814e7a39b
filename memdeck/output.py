"""What every memdeck command prints: errors in one shape (a stderr line; JSON on stdout with ``--json``), human text
made display-safe, and the checks of option values (no empty paths, no NaN)."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NoReturn

import click

from engine.display import safe_name, safe_text, show_separators

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


def error_payload(message: str, **extra: Any) -> dict[str, Any]:
    """The one ``--json`` error shape: ``{"ok": false, "error": "<message>"}``, plus a command's own fields
    (``get`` adds memory_get's ``path``, ``text`` and ``disabled``)."""
    return {"ok": False, "error": message, **extra}


def _dumps(payload: Any, indent: int | None = None) -> str:
    text = json.dumps(payload, ensure_ascii=False, indent=indent)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from an undecodable file name: JSON's \udcxx escape instead
        text = json.dumps(payload, indent=indent)
    return text


def echo_json(payload: Any, *, indent: int | None = 2) -> None:
    """Print a command's ``--json`` answer: UTF-8 text, whatever it holds (a transcript or note whose *file name*
    is not UTF-8 gives its name as JSON's ``\\udcff`` escapes, never bytes a JSON reader refuses, nor a crash
    where stdout encodes strictly)."""
    click.echo(_dumps(payload, indent))


def echo_json_error(message: str, **extra: Any) -> None:
    """Print the :func:`error_payload` on stdout (one line)."""
    click.echo(_dumps(error_payload(message, **extra)))


def report_error(message: str, as_json: bool = False, **extra: Any) -> None:
    """Report an error the way every command does: with ``as_json`` the :func:`error_payload` on stdout (the exact
    message: JSON carries text as it is), and always ``memdeck: <message>`` on stderr, display-safe and one line.

    Args:
        message: what went wrong, for a person (and an agent).
        as_json: the command was given ``--json``.
        extra: more fields for the JSON payload.
    """
    if as_json:
        echo_json_error(message, **extra)
    click.echo(f"memdeck: {safe_name(message)}", err=True)


def fail(message: str, as_json: bool = False, code: int = EXIT_ERROR, **extra: Any) -> NoReturn:
    """:func:`report_error`, then exit with ``code`` (1: the command failed; 2: it was used wrongly)."""
    report_error(message, as_json, **extra)
    sys.exit(code)


def say(text: str = "", *, err: bool = False, nl: bool = True) -> None:
    """Print human-readable text: control, bidi and escape characters shown as visible escapes
    (:func:`engine.display.safe_text`; newlines and tabs kept), U+2028/U+2029 inside a line as the editor's ↵/⁋
    (:func:`engine.display.show_separators`: a terminal draws them as nothing). Memory text and file names are
    data; ``--json`` and ``--raw`` give the exact text."""
    click.echo(show_separators(safe_text(text)), err=err, nl=nl)


def say_lines(lines: Iterable[str], *, err: bool = False) -> None:
    """Print lines that each must stay one line (a file name with a newline in a status line shows as ``\\n``)."""
    click.echo("\n".join(safe_name(line) for line in lines), err=err)


def not_empty(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """A click callback: an option given as ``""`` is a usage error, not "use the default" (nor the current folder)."""
    if value is not None and not str(value).strip():
        raise click.BadParameter("must not be empty (leave the option out to use the default)", ctx=ctx, param=param)
    return value


def not_empty_path(ctx: click.Context, param: click.Parameter, value: str | None) -> Path | None:
    """:func:`not_empty` for a folder option, returning a ``Path`` (``click.Path`` would make ``""`` the current
    folder before a callback could see it)."""
    not_empty(ctx, param, value)
    return None if value is None else Path(value)


class FiniteFloat(click.ParamType[float]):
    """A number from ``lo`` to ``hi``: ``nan``, ``inf`` and values outside are usage errors that say what is allowed
    (``click.FloatRange`` lets ``nan`` through: every comparison with it is False)."""

    name = "number"

    def __init__(self, lo: float, hi: float) -> None:
        self.lo, self.hi = lo, hi

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        """``value`` as a float, or a usage error."""
        allowed = f"a finite number from {self.lo:g} to {self.hi:g}"
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{safe_name(str(value))!r} is not a number (expected {allowed})", param, ctx)
        if not math.isfinite(number) or not self.lo <= number <= self.hi:
            self.fail(f"must be {allowed}, got {safe_name(str(value))!r}", param, ctx)
        return number

    def __repr__(self) -> str:
        return f"FiniteFloat({self.lo:g}, {self.hi:g})"
