"""memdeck's own remembered UI choices (theme, search mode) in a small JSON file in its data dir, never the config.

Which value wins, per setting (``theme``, ``search_mode``):

1. The config file's ``[tui] <key>``, when the user set it *and changed it since the last choice made in the UI*
   (each choice records the config value it was made over, so an edit of ``config.toml`` is noticed).
2. Else the last choice made in the UI (this file).
3. Else the config file's ``[tui] <key>``; else None: the TUI's own default.

So the config holds the user's default and an edit to it always takes effect; switching theme in the UI is
remembered across restarts without rewriting ``config.toml`` (whose comments the old way dropped). A corrupt or
unreadable state file means the defaults plus a logged warning, never a crash; writes are atomic.

It also holds the one reader and writer of memdeck's small JSON state files (:func:`read_json_state`,
:func:`write_json_state`): this one, the flush record, the review's dismissals and its undo journal.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from engine.config import Config
from engine.display import byte_limit, safe_name
from engine.errors import MemdeckError
from engine.textio import atomic_write_text, make_private_dir

STATE_FILE = "ui-state.json"
STATE_VERSION = 1
MAX_STATE_BYTES = 64 * 1024  # a few choices; anything bigger is not ours

log = logging.getLogger(__name__)

MAX_JSON_STATE_BYTES = 1024 * 1024
"""The largest state file :func:`read_json_state` reads unless told otherwise (memdeck's records are a few KB)."""


@dataclass(frozen=True)
class JsonState:
    """A state file as read: its JSON ``document`` (None: missing, empty or ignored) and why it was ignored."""

    document: Any = None
    warning: str | None = None


def read_json_state(path: Path, what: str, *, max_bytes: int = MAX_JSON_STATE_BYTES,
                    then: str = "ignored") -> JsonState:
    """Read one of memdeck's small JSON state files; never raises.

    A missing file is no document and no warning. One that cannot be read, is larger than ``max_bytes``
    (``/dev/zero`` in its place must not be read whole) or is not UTF-8 JSON (an empty file is not: the writer
    never leaves one) is no document and a warning, logged: ``<what> <path>: <problem>; <then>``.
    """
    try:
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except FileNotFoundError:
        return JsonState()
    except OSError as exc:
        return JsonState(warning=state_warning(path, what, f"cannot read it ({exc.strerror or exc})", then))
    if len(data) > max_bytes:
        return JsonState(warning=state_warning(path, what, f"larger than {byte_limit(max_bytes)}", then))
    try:
        return JsonState(json.loads(data.decode("utf-8")))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return JsonState(warning=state_warning(path, what, "not valid JSON", then))


def write_json_state(path: Path, document: Any) -> None:
    """Replace a state file with ``document`` as JSON: atomically, private (0600 in a 0700 folder).

    Raises:
        OSError: the folder or the file cannot be written.
    """
    make_private_dir(path.parent)
    atomic_write_text(path, json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n", mode=0o600)


def state_warning(path: Path, what: str, problem: str, then: str = "ignored") -> str:
    """``<what> <path>: <problem>; <then>`` on one line, logged as a warning; returned for the caller to show."""
    message = safe_name(f"{what} {path}: {problem}; {then}")
    log.warning("%s", message)
    return message


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
            write_json_state(path, document)
        except OSError as exc:
            raise StateError(f"cannot save memdeck's UI state to {path}: {exc.strerror or exc}") from exc
    return replace(load_state(config), warning=None)


def _configured(config: Config, name: str) -> str | None:
    value = config.tui.get(name)
    return value if isinstance(value, str) else None


def _read_choices(path: Path) -> tuple[dict[str, tuple[str, str | None]], str | None]:
    """``{setting: (value, config value it was chosen over)}`` and a warning when (part of) the file was ignored."""
    read = read_json_state(path, _WHAT, max_bytes=MAX_STATE_BYTES, then=_THEN)
    if read.warning is not None:
        return {}, read.warning
    document = read.document
    if document is None:
        return {}, None
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


_WHAT, _THEN = "memdeck's UI state file", "using the defaults"


def _warn(path: Path, problem: str) -> str:
    return state_warning(path, _WHAT, problem, _THEN)
