"""memdeck's own remembered UI choices (theme, search mode) in a small JSON file in its data dir, never the config.

Which value wins, per setting (``theme``, ``search_mode``):

1. The config file's ``[tui] <key>``, when the user set it *and changed it since the last choice made in the UI*
   (each choice records the config value it was made over, so an edit of ``config.toml`` is noticed).
2. Else the last choice made in the UI (this file).
3. Else the config file's ``[tui] <key>``; else None: the TUI's own default.

So the config holds the user's default and an edit to it always takes effect; switching theme in the UI is
remembered across restarts without rewriting ``config.toml`` (whose comments the old way dropped). A corrupt or
unreadable state file means the defaults plus a logged warning, never a crash; writes are atomic.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from engine.config import Config
from engine.errors import MemdeckError
from engine.textio import atomic_write_text, make_private_dir

STATE_FILE = "ui-state.json"
STATE_VERSION = 1
MAX_STATE_BYTES = 64 * 1024  # a few choices; anything bigger is not ours

log = logging.getLogger(__name__)


class StateError(MemdeckError, ValueError):
    """The UI state cannot be saved (an unwritable data dir, or a value the ``[tui]`` rules refuse)."""


@dataclass(frozen=True)
class UiState:
    """The UI choices in effect (None: the TUI's own default); ``warning`` says why the file was ignored."""

    theme: str | None = None
    search_mode: str | None = None
    warning: str | None = field(default=None, compare=False)


SETTINGS = tuple(f.name for f in fields(UiState) if f.name != "warning")
"""The remembered settings; each is also a ``[tui]`` config key with a rule in ``engine.config_rules``."""


def state_path(config: Config) -> Path:
    """The state file: ``ui-state.json`` in memdeck's data dir (``MEMDECK_HOME`` or the platform data dir)."""
    return config.home / STATE_FILE


def load_state(config: Config) -> UiState:
    """The UI choices in effect for ``config`` (see the module docstring for which value wins).

    Never raises: a corrupt or unreadable file is logged and ignored.
    """
    choices, warning = _read_choices(state_path(config))
    values: dict[str, str | None] = {}
    for name in SETTINGS:
        configured = _configured(config, name)
        choice = choices.get(name)
        if choice is not None and (configured is None or configured == choice[1]):
            values[name] = choice[0]
        else:
            values[name] = configured
    return UiState(**values, warning=warning)


_SAVE_LOCK = threading.Lock()


def save_state(config: Config, **changes: str | None) -> UiState:
    """Remember UI choices (``save_state(cfg, theme="nord")``; None forgets one); returns the state in effect.

    Raises:
        TypeError: a name that is not a setting.
        StateError: a value the ``[tui]`` rules refuse, or the file cannot be written (the message names it).
    """
    from engine.config_rules import check_value  # deferred: only a save needs the rule table

    unknown = sorted(set(changes) - set(SETTINGS))
    if unknown:
        raise TypeError(f"not UI settings: {', '.join(unknown)} (known: {', '.join(SETTINGS)})")
    for name, value in changes.items():
        problem = None if value is None else check_value(f"tui.{name}", value)
        if problem is not None:
            raise StateError(f"cannot remember {name}: {problem}")
    path = state_path(config)
    with _SAVE_LOCK:  # read-modify-write: two saves from one process (theme, then mode) must not drop either
        choices, _ = _read_choices(path)
        for name, value in changes.items():
            if value is None:
                choices.pop(name, None)
            else:
                choices[name] = (value, _configured(config, name))
        document = {"version": STATE_VERSION,
                    "choices": {k: {"value": v, "config": over} for k, (v, over) in sorted(choices.items())}}
        try:
            make_private_dir(path.parent)
            atomic_write_text(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n", mode=0o600)
        except OSError as exc:
            raise StateError(f"cannot save memdeck's UI state to {path}: {exc.strerror or exc}") from exc
    return replace(load_state(config), warning=None)


def _configured(config: Config, name: str) -> str | None:
    value = config.tui.get(name)
    return value if isinstance(value, str) else None


def _read_choices(path: Path) -> tuple[dict[str, tuple[str, str | None]], str | None]:
    """``{setting: (value, config value it was chosen over)}`` and a warning when (part of) the file was ignored."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_STATE_BYTES + 1)
    except FileNotFoundError:
        return {}, None
    except OSError as exc:
        return {}, _warn(path, f"cannot read it ({exc.strerror or exc})")
    if len(data) > MAX_STATE_BYTES:
        return {}, _warn(path, f"larger than {MAX_STATE_BYTES // 1024} KiB")
    try:
        document: Any = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return {}, _warn(path, "not valid JSON")
    if not isinstance(document, dict) or document.get("version") != STATE_VERSION:
        return {}, _warn(path, f"not a version {STATE_VERSION} state file")
    raw = document.get("choices")
    if not isinstance(raw, dict):
        return {}, _warn(path, "no choices table")
    from engine.config_rules import check_value  # deferred: the rule table is not needed without a file

    choices: dict[str, tuple[str, str | None]] = {}
    bad: list[str] = []
    for name, entry in raw.items():
        value = entry.get("value") if isinstance(entry, dict) else None
        over = entry.get("config") if isinstance(entry, dict) else None
        if (name not in SETTINGS or not isinstance(value, str) or check_value(f"tui.{name}", value) is not None
                or not (over is None or isinstance(over, str))):
            bad.append(str(name))
            continue
        choices[name] = (value, over)
    warning = _warn(path, f"ignored entries: {', '.join(sorted(bad)[:5])}") if bad else None
    return choices, warning


def _warn(path: Path, problem: str) -> str:
    from engine.display import safe_name

    message = safe_name(f"memdeck's UI state file {path}: {problem}; using the defaults")
    log.warning("%s", message)
    return message
