"""Every config key's type, range and allowed values in one table, checked before the config is built.

This module sits below :mod:`engine.config` (which calls :func:`validate` and hands it each section's defaults):
it never imports it.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
import reprlib
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date, datetime, time
from typing import Any, Literal

from engine.display import has_control_chars, plural, safe_name
from engine.errors import ConfigError
from engine.local_models import LOCAL_MODELS, resolve_local_model
from engine.textio import MAX_FILE_BYTES

PROVIDERS = ("auto", "local", "openai", "gemini", "none", "hash")
FALLBACKS = ("none", "local", "openai", "gemini", "hash")
SEARCH_MODES = ("hybrid", "keyword", "vector")
SOURCES = ("memory", "sessions")
EMBEDDING_ENV_PREFIX = "MEMDECK_EMBEDDING_"

Kind = Literal["int", "float", "bool", "str", "enum", "list", "path", "dict"]

VECTOR_NORMS = ("raw", "minmax", "calibrated")
VECTOR_PLANS = ("windows+lines", "windows", "lines")
"""``[index] vectors`` (:mod:`engine.index.embed_plan`): windows from their text plus line vectors; windows only;
windows as the token-weighted mean of their lines' vectors (``[index] lines_power``)."""
ENV_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
HEADER_NAME = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"  # RFC 9110 token
BINDING_ID = r"[A-Za-z0-9_][A-Za-z0-9_.-]*"
AGENT_ID = r"[A-Za-z0-9_][A-Za-z0-9_.-]*"  # no "/", no leading ".": it becomes a folder name


@dataclass(frozen=True)
class Rule:
    """What one config key accepts; :meth:`check` says what is wrong with a value, in words."""

    kind: Kind
    meaning: str = ""
    lo: float | None = None
    hi: float | None = None
    above: bool = False  # lo itself is not allowed (> lo rather than ≥ lo)
    unit: str = ""
    choices: tuple[str, ...] = ()
    noun: str = ""  # an enum inside a list reports "unknown <noun> 'x'"
    empty: bool = False  # "" is allowed (str and path: "" = the default)
    max_len: int = 256
    pattern: str = ""
    like: str = ""  # what ``pattern`` means, for the message
    prefixes: tuple[str, ...] = ()
    item: Rule | None = None  # list entries and table values
    key_pattern: str = ""  # table keys
    key_like: str = ""
    max_items: int = 100
    hidden: bool = False  # never echo the value (headers, a key pasted where its variable's name belongs)
    min_items: int = 0  # a list with fewer entries is refused with ``if_empty``
    if_empty: str = ""  # why an empty list is refused, and what to write instead
    grammar: Callable[[str], str | None] | None = None  # a text's own syntax (key strings): the problem or None

    def describe(self) -> str:
        """The allowed values in words: ``an integer from 1 to 1000``, ``one of raw, minmax``."""
        unit = f" {self.unit}" if self.unit else ""
        if self.kind == "int":
            return f"an integer from {_num(self.lo)} to {_num(self.hi)}{unit}"
        if self.kind == "float":
            return f"a number {self._range()}"
        if self.kind == "bool":
            return "true or false"
        if self.kind == "enum":
            return f"one of {', '.join(self.choices)}"
        if self.kind == "list":
            if self.item is not None and self.item.kind == "enum":
                return f"a list of strings, each {self.item.describe()}"
            return "a list of strings (paths)" if self.item is not None and self.item.kind == "path" else "a list of strings"
        if self.kind == "dict":
            return f"a table of {self.key_like or 'names'} to strings"
        what = "a path" if self.kind == "path" else "a string"
        if self.like:
            what = self.like
        return what + (' ("" = the default)' if self.empty else "")

    def _range(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        lo, hi = _num(self.lo), _num(self.hi)
        if self.kind == "int":
            return f"at least {lo} and at most {hi}{unit}"
        if self.above:
            return f"greater than {lo} and at most {hi}{unit}"
        return f"between {lo} and {hi}{unit}"

    def _in_range(self, value: float) -> bool:
        low_ok = self.lo is None or (value > self.lo if self.above else value >= self.lo)
        return low_ok and (self.hi is None or value <= self.hi)

    def check(self, value: Any) -> str | None:
        """None when ``value`` is allowed, else the problem in one line (it names the allowed values)."""
        shown = _show(value, self.hidden)
        if self.kind == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                return f"expected an integer ({self._range()}), got {shown}"
            return None if self._in_range(value) else f"must be {self._range()}, got {shown}"
        if self.kind == "float":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return f"expected a number ({self._range()}), got {shown}"
            if not math.isfinite(value):
                return f"must be a finite number ({self._range()}), got {shown}"
            return None if self._in_range(value) else f"must be {self._range()}, got {shown}"
        if self.kind == "bool":
            return None if isinstance(value, bool) else f"expected true or false, got {shown}"
        if self.kind == "enum":
            if not isinstance(value, str):
                return f"expected {self.describe()}, got {shown}"
            if value in self.choices:
                return None
            hint = did_you_mean(value, self.choices)
            if self.noun:
                return f"unknown {self.noun} {shown}{hint} (known: {', '.join(self.choices)})"
            return f"must be {self.describe()}, got {shown}{hint}"
        if self.kind in ("str", "path"):
            return self._check_text(value, shown)
        if self.kind == "list":
            return self._check_list(value, shown)
        return self._check_table(value, shown)

    def _check_text(self, value: Any, shown: str) -> str | None:
        if self.kind == "path" and isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, str):
            return f"expected {self.describe()}, got {shown}"
        if value == "":
            return None if self.empty else "must not be empty"
        if len(value) > self.max_len:
            return f"must be at most {self.max_len} characters, got {len(value)}"
        if has_control_chars(value):
            return f"must not contain control or line-break characters, got {shown}"
        if self.prefixes and not value.startswith(self.prefixes):
            return f"must start with {' or '.join(self.prefixes)}, got {shown}"
        if self.pattern and re.fullmatch(self.pattern, value) is None:
            return f"must be {self.like}, got {shown}"
        return self.grammar(value) if self.grammar is not None else None

    def _check_list(self, value: Any, shown: str) -> str | None:
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, (str, os.PathLike)) for v in value):
            return f"expected {self.describe()}, got {shown}"
        if len(value) > self.max_items:
            return f"must have at most {self.max_items} entries, got {len(value)}"
        if len(value) < self.min_items:
            return self.if_empty or f"must have at least {plural(self.min_items, 'entry', 'entries')}"
        for n, entry in enumerate(value, 1):
            problem = self.item.check(entry) if self.item is not None else None
            if problem is not None:
                return problem if self.item is not None and self.item.noun else f"entry {n}: {problem}"
        return None

    def _check_table(self, value: Any, shown: str) -> str | None:
        if not isinstance(value, Mapping):
            return f"expected {self.describe()}, got {shown}"
        if len(value) > self.max_items:
            return f"must have at most {self.max_items} entries, got {len(value)}"
        for key, entry in value.items():
            name = _show(key)
            if not isinstance(key, str) or len(key) > 100 or re.fullmatch(self.key_pattern or ".+", key) is None:
                return f"{name}: must be {self.key_like or 'a name'} (at most 100 characters)"
            problem = self.item.check(entry) if self.item is not None else None
            if problem is not None:
                return f"{name}: {problem}"
        return None


def _seconds(meaning: str) -> Rule:
    return Rule("float", meaning, lo=0, hi=600, above=True, unit="seconds")


def _share(meaning: str) -> Rule:
    return Rule("float", meaning, lo=0, hi=1)


def _url(meaning: str) -> Rule:
    return Rule("str", meaning, empty=True, max_len=2048, prefixes=("http://", "https://"),
                pattern=r"\S+", like="a URL without spaces")


def _key_env(meaning: str) -> Rule:
    return Rule("str", meaning, empty=True, max_len=128, pattern=ENV_NAME, hidden=True,
                like="the NAME of the environment variable that holds the key (like OPENAI_API_KEY), "
                     "not the key itself")


KEY_MODIFIERS = ("alt", "ctrl", "hyper", "meta", "shift", "super")
"""The modifiers a key string may name (Textual's; it reports them in this, alphabetical, order)."""

NAMED_KEYS = frozenset({
    "escape", "enter", "return", "tab", "space", "backspace", "delete", "insert", "home", "end", "pageup",
    "pagedown", "up", "down", "left", "right", *(f"f{n}" for n in range(1, 25)),
    # Textual's friendlier names for a few characters (textual.keys.KEY_NAME_REPLACEMENTS)
    "slash", "backslash", "at", "minus", "plus", "underscore",
})
"""Keys named by a word, as Textual names them (``textual.keys.Keys``; a test keeps the two in step). Other
punctuation goes by its Unicode name in lowercase with underscores (``question_mark``, ``full_stop``)."""

_KEY_RENAMES = {"solidus": "slash", "reverse_solidus": "backslash", "commercial_at": "at", "hyphen_minus": "minus",
                "plus_sign": "plus", "low_line": "underscore"}


def key_name_of(char: str) -> str:
    """The name Textual gives the key that types ``char`` (``?`` → ``question_mark``, ``a`` → ``a``)."""
    if char.isalnum():
        return char
    try:
        name = unicodedata.name(char).lower().replace("-", "_").replace(" ", "_")
    except ValueError:
        return char
    return _KEY_RENAMES.get(name, name)


def _is_character_name(name: str) -> bool:
    """``name`` is how Textual names a punctuation or symbol key (a Unicode name: ``question_mark``)."""
    if re.fullmatch(r"[a-z][a-z0-9]*(?:_[a-z0-9]+){0,7}", name) is None:
        return False
    words = name.split("_")
    for joins in range(2 ** (len(words) - 1)):  # each "_" stood for a space or a hyphen
        text = words[0]
        for n, word in enumerate(words[1:]):
            text += ("-" if joins >> n & 1 else " ") + word
        try:
            char = unicodedata.lookup(text)
        except KeyError:
            continue
        if len(char) == 1 and key_name_of(char) == name:
            return True
    return False


def key_problem(key: str) -> str | None:
    """None when ``key`` (``ctrl+s``, ``f2``, ``question_mark``) is a key Textual can report, else the problem.

    The grammar: modifiers from :data:`KEY_MODIFIERS`, each at most once, joined by ``+`` to one key: a letter or
    digit, a name from :data:`NAMED_KEYS`, or a punctuation key's Unicode name. A bare punctuation character
    (``?``) is allowed on its own; after a modifier it must be named (``ctrl+question_mark``).
    """
    shown = _show(key)
    if key == "":
        return "an empty key (two commas, or a comma at an end)"
    *modifiers, name = key.split("+")
    seen: set[str] = set()
    for modifier in modifiers:
        if modifier not in KEY_MODIFIERS:
            return (f"unknown modifier {_show(modifier)} in {shown} "
                    f"(modifiers: {', '.join(KEY_MODIFIERS)}, in lowercase; the key comes last)")
        if modifier in seen:
            return f"{modifier} twice in {shown}"
        seen.add(modifier)
    if name == "":
        return f"no key after the modifiers in {shown} (write plus for the + key)"
    # Textual reports a key that types a character as that character: shift+a arrives as "A", and a capital
    # never follows a modifier (ctrl+shift+s, or plain ctrl+s: terminals send ctrl+S as ctrl+s).
    types_a_character = (len(name) == 1 and name.isprintable() and not name.isspace()) or (
        name != "space" and _is_character_name(name))
    if modifiers == ["shift"] and types_a_character:
        instead = name.upper() if len(name) == 1 and name.lower() != name.upper() else "the character it types, like exclamation_mark"
        return f"{shown} never arrives: Textual reports shift and a character key as the character (write {instead})"
    if modifiers and len(name) == 1 and name.lower() != name:
        lower = "+".join([*sorted({*modifiers, "shift"}), name.lower()])
        return (f"{shown} never arrives: after a modifier the letter is lowercase (write {lower}, or "
                f"{'+'.join([*modifiers, name.lower()])})")
    if len(name) == 1 and name.isprintable() and not name.isspace():
        if modifiers and not name.isalnum():
            return f"write {'+'.join([*modifiers, key_name_of(name)])} for {shown} (Textual names that key)"
        return None
    if name in NAMED_KEYS or _is_character_name(name):
        return None
    return (f"unknown key {_show(name)} in {shown} (a letter or digit, a name like f2, enter, escape, tab, space, "
            "pageup, or a character's name like question_mark)")


def key_list_problem(text: str) -> str | None:
    """None when every comma-separated key of a ``[keys]`` value passes :func:`key_problem`, else the first problem."""
    for key in text.split(","):
        problem = key_problem(key.strip())
        if problem is not None:
            return problem
    return None


TOP_LEVEL: dict[str, Rule] = {
    "workspace": Rule("path", "the workspace folder", empty=True, max_len=4096),
    "extra_paths": Rule("list", "more Markdown files or folders to index", max_items=1000,
                        item=Rule("path", max_len=4096)),
    "sources": Rule("list", "what search covers", max_items=16, min_items=1,
                    if_empty='must not be empty (nothing would be searched): write ["memory"] (the default) or '
                             '["memory", "sessions"], or remove the line',
                    item=Rule("enum", choices=SOURCES, noun="source")),
    "sessions_dir": Rule("path", "the agent's sessions folder", empty=True, max_len=4096),
    "agent": Rule("str", "the OpenClaw agent id", max_len=64, pattern=AGENT_ID,
                  like="an agent id like main (letters, digits, _ . -; not starting with .)"),
}
"""Top-level keys that hold values (tables are in SECTIONS and TABLES)."""

SECTIONS: dict[str, dict[str, Rule]] = {
    "embedding": {
        "provider": Rule("enum", "the embedding provider", choices=PROVIDERS),
        "model": Rule("str", "the model; \"\" = the provider's default", empty=True),
        "base_url": _url("the remote endpoint; \"\" = the provider's public API"),
        "api_key_env": _key_env("the variable holding the key; \"\" = the provider's usual ones"),
        "headers": Rule("dict", "extra HTTP headers", key_pattern=HEADER_NAME, key_like="an HTTP header name",
                        max_items=64, item=Rule("str", empty=True, max_len=8192, hidden=True,
                                                like="a string")),
        "dimensions": Rule("int", "vector size asked of the model; 0 = native", lo=0, hi=65536),
        "fallback": Rule("enum", "the provider when the chosen one cannot work", choices=FALLBACKS),
        "batch_size": Rule("int", "texts per request", lo=1, hi=2048),
        "batch_tokens": Rule("int", "estimated tokens per request", lo=1, hi=1_000_000),
        "max_input_tokens": Rule("int", "tokens per embedded window; 0 = the model's limit", lo=0, hi=131072),
        "timeout": _seconds("seconds per remote request"),
        "max_retries": Rule("int", "retries on 429/5xx/timeouts", lo=0, hi=10),
    },
    "chunking": {
        "tokens": Rule("int", "chunk size in tokens", lo=16, hi=8192),
        "overlap": Rule("int", "chunk overlap in tokens (less than tokens)", lo=0, hi=8191),
        "window_tokens": Rule("int", "embedding window in tokens; 0 = the model's limit", lo=0, hi=131072),
        "line_vectors": Rule("bool", "also embed each line"),
    },
    "search": {
        "max_results": Rule("int", "results returned", lo=1, hi=1000),
        "min_score": _share("results whose shown score is below this are dropped"),
        "vector_weight": _share("fusion weight of the vector score"),
        "text_weight": _share("fusion weight of the keyword score"),
        "candidate_multiplier": Rule("int", "candidates per leg = max_results × this", lo=1, hi=100),
        "mmr": Rule("bool", "MMR re-ranking"),
        "mmr_lambda": _share("MMR relevance/diversity balance"),
        "decay": Rule("bool", "temporal decay of dated notes"),
        "half_life_days": Rule("float", "decay half-life", lo=0, hi=36500, above=True, unit="days"),
        "vector_norm": Rule("enum", "vector score normalisation", choices=VECTOR_NORMS),
        "line_weight": _share("share of the vector score from the chunk's best line"),
        "line_text_weight": _share("share of the keyword score from the chunk's best line"),
        "importance": Rule("bool", "OpenClaw's importance comments weigh MEMORY.md/USER.md results"),
        "rerank": Rule("bool", "the learned re-ranker re-orders the top candidates"),
    },
    "index": {
        "max_file_bytes": Rule("int", "a bigger Markdown file is skipped and reported, not indexed", lo=1024,
                               hi=MAX_FILE_BYTES, unit="bytes"),
        "vectors": Rule("enum", "how each chunk is embedded: windows from their text (+ line vectors), or the "
                        "mean of its line vectors", choices=VECTOR_PLANS, noun="vector plan"),
        "lines_power": Rule("float", "with vectors = \"lines\": a window's cosine is its lines' mean cosine / "
                            "|mean|^this (0 = the mean cosine, 1 = the normalised mean)", lo=0, hi=1),
        "line_min_tokens": Rule("int", "a line shorter than this (model tokens) gets no vector; 0 = every line",
                                lo=0, hi=512),
    },
    "llm": {
        "base_url": _url("OpenAI-compatible chat endpoint for flush drafts; \"\" = none"),
        "model": Rule("str", "the chat model", empty=True),
        "api_key_env": _key_env("the variable holding the key"),
        "timeout": _seconds("seconds per request"),
    },
    "memory": {
        "legacy_lowercase_memory": Rule("bool", "also index a root memory.md (OpenClaw 2026.9 skips it)"),
        "timezone": Rule("str", "the zone of the one clock: day files, headings, queries' today, times shown", empty=True, max_len=64,
                         pattern=r"[A-Za-z0-9_+\-]+(?:/[A-Za-z0-9_+\-]+)*",
                         like='an IANA time zone like Europe/Berlin or UTC ("" = the system\'s local zone)'),
    },
    "review": {
        "duplicate_similarity": _share("how alike two statements must read to be duplicates"),
        "conflict_similarity": _share("subject overlap for a changed value to be a conflict"),
        "conflict_min_shared": Rule("float", "least IDF weight of the shared subject words of a conflict", lo=0,
                                    hi=20),
        "promote_min_score": _share("least rule score for a daily-note statement to be proposed for MEMORY.md"),
        "promote_known_similarity": _share("a statement this alike to a curated line is not proposed"),
        "use_vectors": Rule("bool", "also compare with the index's line vectors when it has them"),
    },
    "tui": {
        "theme": Rule("str", "the TUI theme", max_len=100, like="a theme name like memdeck-dark"),
        "search_mode": Rule("enum", "the search mode the TUI starts in", choices=SEARCH_MODES),
    },
}
"""Tables whose keys are fixed: each key's rule."""

TABLES: dict[str, Rule] = {
    "keys": Rule("dict", "key binding overrides", key_pattern=BINDING_ID, key_like="a binding id like memdeck.save",
                 max_items=500, item=Rule("str", max_len=200, like='a string of keys like "ctrl+s,f2"',
                                          grammar=key_list_problem)),
}
"""Tables whose keys are free (binding ids): one rule for the whole table."""

ENV_PREFIXES: dict[str, str] = {"embedding": EMBEDDING_ENV_PREFIX}
"""Sections whose keys can be set as ``<PREFIX><KEY>`` environment variables."""

KNOWN_TOP = frozenset({*TOP_LEVEL, *SECTIONS, *TABLES})


def rule_for(dotted: str) -> Rule:
    """The rule of ``"search.max_results"`` or ``"workspace"``.

    Raises:
        KeyError: no such key.
    """
    section, _, key = dotted.rpartition(".")
    if not section:
        return TOP_LEVEL[key]
    return SECTIONS[section][key]


def check_value(dotted: str, value: Any) -> str | None:
    """None when ``value`` is allowed for the key ``dotted`` (``"tui.theme"``), else the problem."""
    return rule_for(dotted).check(value)


def validate(raw: Mapping[str, Any], *, defaults: Mapping[str, Mapping[str, Any]], path: str = "config.toml",
             environ: Mapping[str, str] | None = None) -> None:
    """Check the config file's values (and ``MEMDECK_EMBEDDING_*`` in ``environ``) against the rules.

    Args:
        raw: the parsed TOML (with any overrides merged in).
        defaults: each section's default values (:func:`engine.config.section_defaults`), which the rules across
            keys read for a key left unset.
        path: the file, for the message.
        environ: the environment whose overrides to check too (None: none).

    Raises:
        ConfigError: one line naming the file (or variable), the key, the allowed values and what was given.
    """
    for key, value in raw.items():
        if key not in KNOWN_TOP:
            raise _error(path, _key(key), f"unknown key{did_you_mean(key, KNOWN_TOP)} "
                                          f"(known: {', '.join(sorted(KNOWN_TOP))})")
        if key in TOP_LEVEL:
            _raise_if(path, key, TOP_LEVEL[key].check(value))
        elif key in TABLES:
            _raise_if(path, key, _table_problem(value) or TABLES[key].check(value))
        else:
            _raise_if(path, key, _table_problem(value))
            for name, entry in value.items():
                rule = SECTIONS[key].get(name) if isinstance(name, str) else None
                if rule is None:
                    known = ", ".join(sorted(SECTIONS[key]))
                    elsewhere = [s for s in SECTIONS if s != key and name in SECTIONS[s]]
                    hint = (f"; did you mean [{elsewhere[0]}] {name}?" if elsewhere
                            else did_you_mean(name, SECTIONS[key]))
                    raise _error(path, f"{key}.{_key(name)}", f"unknown key{hint} (known: {known})")
                _raise_if(path, f"{key}.{name}", rule.check(entry))
    origins: dict[str, str] = {}
    given = {f"{s}.{name}" for s in SECTIONS for name in (raw.get(s) or {})}
    effective = {s: {**defaults.get(s, {}), **(raw.get(s) or {})} for s in SECTIONS}
    for var, section, name, value in _environment(environ or {}):
        _raise_if(f"environment variable {var}", f"{section}.{name}", SECTIONS[section][name].check(value))
        effective[section][name] = value
        given.add(f"{section}.{name}")
        origins[f"{section}.{name}"] = f"environment variable {var}"
    for dotted, check in CROSS_RULES:
        problem = check(effective, given)
        if problem is not None:
            raise _error(origins.get(dotted, path), dotted, problem)


def did_you_mean(given: object, known: Iterable[str]) -> str:
    """``"; did you mean search?"`` for a misspelt or mis-cased name (``serach``, ``Memory``), else ``""``."""
    if not isinstance(given, str) or not given:
        return ""
    names = sorted(known)
    same_case = [name for name in names if name.lower() == given.lower()]
    close = same_case or difflib.get_close_matches(given.lower(), names, n=1, cutoff=0.75)
    return f"; did you mean {close[0]}?" if close else ""


def _environment(environ: Mapping[str, str]) -> Iterator[tuple[str, str, str, Any]]:
    """``(variable, section, key, value)`` for each set override, the text parsed as the key's type."""
    for section, prefix in ENV_PREFIXES.items():
        for name, rule in SECTIONS[section].items():
            var = prefix + name.upper()
            text = environ.get(var)
            if text is None or text.strip() == "":
                continue
            where = f"environment variable {var}"
            value, problem = _parse_env(rule, text)
            _raise_if(where, f"{section}.{name}", problem)
            yield var, section, name, value


def _parse_env(rule: Rule, text: str) -> tuple[Any, str | None]:
    shown = _show(text, rule.hidden or rule.kind == "dict")
    stripped = text.strip()
    if rule.kind == "int":
        try:
            return int(stripped), None
        except ValueError:
            return None, f"expected an integer ({rule._range()}), got {shown}"
    if rule.kind == "float":
        try:
            return float(stripped), None
        except ValueError:
            return None, f"expected a number ({rule._range()}), got {shown}"
    if rule.kind == "bool":
        words = {"true": True, "1": True, "yes": True, "on": True, "false": False, "0": False, "no": False,
                 "off": False}
        if stripped.lower() in words:
            return words[stripped.lower()], None
        return None, f"expected true or false, got {shown}"
    if rule.kind in ("dict", "list"):
        want: type = dict if rule.kind == "dict" else list
        example = '{"X-Org": "a"}' if rule.kind == "dict" else '["a", "b"]'
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            value = None
        if not isinstance(value, want):
            noun = "object" if rule.kind == "dict" else "array"
            return None, f"expected a JSON {noun} like {example}, got {shown}"
        return value, None
    return stripped, None


Sections = Mapping[str, Mapping[str, Any]]


def _overlap_below_tokens(sections: Sections, given: set[str]) -> str | None:
    tokens, overlap = sections["chunking"]["tokens"], sections["chunking"]["overlap"]
    if overlap < tokens:
        return None
    default = "" if "chunking.overlap" in given else " (the default; set a smaller overlap)"
    return f"must be between 0 and chunking.tokens - 1 ({tokens - 1}), got {overlap}{default}"


def _weights_not_both_zero(sections: Sections, given: set[str]) -> str | None:
    if sections["search"]["vector_weight"] + sections["search"]["text_weight"] > 0:
        return None
    return "weights must be ≥ 0 and not both 0 (vector_weight and text_weight are both 0)"


def _known_timezone(sections: Sections, given: set[str]) -> str | None:
    name = sections["memory"]["timezone"]
    if not name:
        return None
    import zoneinfo  # deferred: only a configured zone needs the time zone database

    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return f"unknown time zone {_show(name)} (an IANA name like Europe/Berlin or UTC; \"\" = the system's)"
    return None


def _plan_needs_lines(sections: Sections, given: set[str]) -> str | None:
    plan = sections["index"]["vectors"]
    if sections["chunking"]["line_vectors"] or plan == "windows" or "index.vectors" not in given:
        return None
    return (f"{plan!r} needs line vectors, but chunking.line_vectors is false "
            '(set index.vectors = "windows", or chunking.line_vectors = true)')


def _known_local_model(sections: Sections, given: set[str]) -> str | None:
    """A local model's name, against the catalogue of :mod:`engine.local_models` ("" is the default one)."""
    provider, model = sections["embedding"]["provider"], sections["embedding"]["model"]
    if provider != "local" or not model.strip() or resolve_local_model(model) is not None:
        return None
    return f"unknown local model {model!r} (known: {', '.join(LOCAL_MODELS)})"


CROSS_RULES: tuple[tuple[str, Callable[[Sections, set[str]], str | None]], ...] = (
    ("chunking.overlap", _overlap_below_tokens),
    ("search.vector_weight", _weights_not_both_zero),
    ("memory.timezone", _known_timezone),
    ("embedding.model", _known_local_model),
    ("index.vectors", _plan_needs_lines),
)
"""Rules across keys, run once every key is valid on its own: (the key named, the check)."""


def _table_problem(value: Any) -> str | None:
    return None if isinstance(value, Mapping) else f"expected a table, got {_show(value)}"


def _raise_if(path: str, key: str, problem: str | None) -> None:
    if problem is not None:
        raise _error(path, key, problem)


def _error(path: str, key: str, problem: str) -> ConfigError:
    exc = ConfigError(path, key, problem)
    exc.args = (safe_name(str(exc)),)  # one line on any terminal, whatever the file's name or value held
    return exc


def _key(key: object) -> str:
    return safe_name(key) if isinstance(key, str) else _show(key)


_REPR = reprlib.Repr()
_REPR.maxstring = 60
_REPR.maxother = 60
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = 4
_REPR.maxlevel = 2


def _show(value: Any, hidden: bool = False) -> str:
    """A value as the message shows it: TOML-like, short, never a secret and never a control character."""
    if hidden and isinstance(value, str) and value:
        return f"a value of {plural(len(value), 'character')} (not shown)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        try:
            digits = str(value)
        except ValueError:  # more digits than int→str allows
            return f"an integer of {value.bit_length()} bits"
        return digits if len(digits) <= 30 else f"{digits[:12]}… ({len(digits)} digits)"
    if isinstance(value, (datetime, date, time)):
        return f"the date/time {value.isoformat()}"
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    try:
        return _REPR.repr(value)
    except ValueError:
        return f"a {type(value).__name__}"


def _num(value: float | None) -> str:
    return "?" if value is None else f"{value:g}" if isinstance(value, float) else str(value)
