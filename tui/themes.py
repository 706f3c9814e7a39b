"""Themes from TOML files (bundled ``themes/`` package and the user's config dir) mapped onto Textual's Theme."""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, fields
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.style import Style
from textual.color import Color, ColorParseError
from textual.theme import Theme

if TYPE_CHECKING:
    from textual.widgets.text_area import TextAreaTheme

DEFAULT_THEME = "memdeck-dark"
EDITOR_THEME = "memdeck"
_COLOR_FIELDS = ("primary", "secondary", "warning", "error", "success", "accent", "foreground", "background",
                 "surface", "panel", "boost")
_KNOWN = {f.name for f in fields(Theme)}


class ThemeError(ValueError):
    """A theme file that cannot be used (the message names the file and the problem)."""


@dataclass(frozen=True)
class ThemeSet:
    """Themes that loaded, and one message per file that did not."""

    themes: tuple[Theme, ...]
    errors: tuple[str, ...]


def parse_theme(data: dict[str, Any], source: str, default_name: str) -> Theme:
    """Build a Textual Theme from a theme file's table.

    Raises:
        ThemeError: unknown keys, a missing primary colour, colours that do not parse, wrong types.
    """
    unknown = sorted(set(data) - _KNOWN)
    if unknown:
        from engine.api import plural  # only for this message

        raise ThemeError(f"{source}: {plural(len(unknown), 'unknown key')}: {', '.join(unknown)}")
    name = data.get("name", default_name)
    if not isinstance(name, str) or not name.strip():
        raise ThemeError(f"{source}: name must be a non-empty string")
    if "primary" not in data:
        raise ThemeError(f"{source}: primary colour missing")
    values: dict[str, Any] = {"name": name.strip()}
    for key in _COLOR_FIELDS:
        if key in data:
            values[key] = _color(data[key], f"{source}: {key}")
    if "dark" in data:
        if not isinstance(data["dark"], bool):
            raise ThemeError(f"{source}: dark must be true or false")
        values["dark"] = data["dark"]
    for key in ("luminosity_spread", "text_alpha"):
        if key in data:
            value = data[key]
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ThemeError(f"{source}: {key} must be a number")
            values[key] = float(value)
    variables = data.get("variables", {})
    if not isinstance(variables, dict) or not all(isinstance(v, str) for v in variables.values()):
        raise ThemeError(f"{source}: [variables] must map names to strings")
    values["variables"] = {str(k): v for k, v in variables.items()}
    return Theme(**values)


def _color(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ThemeError(f"{where} must be a colour string like \"#7AA2F7\"")
    try:
        Color.parse(value)
    except ColorParseError as exc:
        raise ThemeError(f"{where}: {exc}") from None
    return value


def load_theme_text(text: str, source: str, default_name: str) -> Theme:
    """Parse one theme file's text.

    Raises:
        ThemeError: the TOML or the theme is invalid.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ThemeError(f"{source}: not valid TOML ({exc})") from None
    return parse_theme(data, source, default_name)


def _theme_files(folder: Any) -> Iterable[Any]:
    try:
        entries = sorted(folder.iterdir(), key=lambda p: p.name)
    except (FileNotFoundError, NotADirectoryError, OSError):
        return []
    return [p for p in entries if p.name.endswith(".toml") and p.is_file()]


def _bundled_folder() -> Any:
    """The bundled ``themes`` package folder (a wheel's, or the checkout's)."""
    try:
        return resources.files("themes")
    except (NotADirectoryError, ModuleNotFoundError, TypeError):
        import themes  # an editable install made before themes/ was a package sees it as a namespace

        return Path(next(iter(themes.__path__)))


def load_themes(user_dir: Path | None) -> ThemeSet:
    """The bundled themes, then the user's (a user theme with a bundled name replaces it).

    Works from a source checkout and from an installed wheel (``themes`` is a package with its TOML files).
    """
    themes: dict[str, Theme] = {}
    errors: list[str] = []
    sources: list[tuple[Any, str]] = [(p, f"themes/{p.name}") for p in _theme_files(_bundled_folder())]
    if user_dir is not None:
        sources += [(p, str(p)) for p in _theme_files(user_dir)]
    for path, label in sources:
        try:
            text = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            errors.append(f"{label}: cannot read ({exc})")
            continue
        try:
            theme = load_theme_text(text, label, path.name.removesuffix(".toml"))
        except ThemeError as exc:
            errors.append(str(exc))
            continue
        themes[theme.name] = theme
    return ThemeSet(tuple(themes.values()), tuple(errors))


def editor_theme(variables: dict[str, str]) -> TextAreaTheme:
    """The editor's Markdown colours, taken from the app theme's design variables.

    Gutter, cursor and selection come from the TextArea's CSS component classes.
    """
    from textual.widgets.text_area import TextAreaTheme  # deferred: the editor is not on the first screen

    background = Color.parse(variables.get("background", "#000000"))

    def color(name: str, fallback: str) -> str:
        # Blend over the background: design variables may carry alpha, Rich styles cannot.
        try:
            parsed = Color.parse(variables.get(name, fallback))
        except ColorParseError:
            parsed = Color.parse(fallback)
        return (background + parsed).hex6

    primary = color("primary", "#7AA2F7")
    secondary = color("secondary", primary)
    accent = color("accent", primary)
    success = color("success", accent)
    muted = color("foreground-muted", color("foreground", "#888888"))
    return TextAreaTheme(
        name=EDITOR_THEME,
        syntax_styles={
            "heading": Style(color=primary, bold=True),
            "heading.marker": Style(color=muted),
            "bold": Style(bold=True),
            "italic": Style(italic=True),
            "strikethrough": Style(strike=True),
            "inline_code": Style(color=success),
            "code_block": Style(color=success),
            "info_string": Style(color=accent, italic=True),
            "link.label": Style(color=secondary),
            "link.uri": Style(color=muted, underline=True),
            "list.marker": Style(color=accent, bold=True),
            "task.done": Style(color=success, bold=True),
            "task.open": Style(color=accent, bold=True),
            "quote": Style(color=muted, italic=True),
            "rule": Style(color=muted),
            "table": Style(color=muted),
        },
    )
