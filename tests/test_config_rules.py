"""Every config key is checked: a wrong type, an out-of-range value or NaN/inf is one clear ConfigError."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from engine.config import (
    SECTION_CLASSES,
    ChunkingConfig,
    Config,
    file_fields,
    load_config,
    section_defaults,
    section_fields,
)
from engine.config_rules import (
    ENV_PREFIXES,
    KNOWN_TOP,
    SECTIONS,
    TABLES,
    TOP_LEVEL,
    Rule,
    check_value,
)
from engine.config_rules import validate as validate_with_defaults
from engine.errors import ConfigError

REPO = Path(__file__).resolve().parent.parent


def validate(raw: dict[str, Any], **kwargs: Any) -> None:
    """The rules as ``load_config`` runs them: with the dataclasses' defaults for the keys left unset."""
    validate_with_defaults(raw, defaults=section_defaults(), **kwargs)
NOT_FILE_KEYS = {"home", "config_path"}  # Config fields that come from arguments, never from the file


def every_key() -> list[tuple[str, Rule]]:
    """(dotted key, rule) for every key the file can hold, tables of free keys included."""
    keys = [(name, rule) for name, rule in TOP_LEVEL.items()]
    keys += [(f"{section}.{name}", rule) for section, rules in SECTIONS.items() for name, rule in rules.items()]
    keys += list(TABLES.items())
    return keys


def nested(dotted: str, value: Any) -> dict[str, Any]:
    section, _, key = dotted.rpartition(".")
    return {section: {key: value}} if section else {key: value}


def bad_values(rule: Rule) -> list[tuple[str, Any]]:
    """(what, value) pairs the rule must refuse: a wrong type, out of range, and NaN/inf for numbers."""
    if rule.kind == "int":
        assert rule.lo is not None and rule.hi is not None
        return [("wrong type", "ten"), ("a float", 2.0), ("a boolean", True), ("below", int(rule.lo) - 1),
                ("above", int(rule.hi) + 1), ("huge", 9223372036854775807), ("nan", math.nan),
                ("inf", math.inf)]
    if rule.kind == "float":
        assert rule.lo is not None and rule.hi is not None
        low = rule.lo if rule.above else rule.lo - 0.5
        return [("wrong type", "ten"), ("a boolean", True), ("below", low), ("above", rule.hi + 1),
                ("nan", math.nan), ("inf", math.inf), ("-inf", -math.inf), ("huge", 10**30)]
    if rule.kind == "bool":
        return [("wrong type", "yes"), ("an integer", 1)]
    if rule.kind == "enum":
        return [("wrong type", 5), ("not a choice", "not-a-choice")]
    if rule.kind in ("str", "path"):
        out: list[tuple[str, Any]] = [("wrong type", 5), ("too long", "a" * (rule.max_len + 1)),
                                      ("a control character", "a\x1b[2Jb"), ("a newline", "a\nb"),
                                      ("a NUL", "a\x00b")]
        if not rule.empty:
            out.append(("empty", ""))
        if rule.pattern or rule.prefixes:
            out.append(("malformed", "not valid/../ at all"))
        return out
    if rule.kind == "list":
        assert rule.item is not None
        return [("wrong type", "notes"), ("an entry of the wrong type", ["a", 3]),
                ("a bad entry", ["a\x00b" if rule.item.kind == "path" else "not-a-choice"]),
                ("too many", ["memory"] * (rule.max_items + 1))]
    assert rule.kind == "dict"
    return [("wrong type", 5), ("a value of the wrong type", {"X-Org": 3}), ("a bad key", {"bad key\n": "a"}),
            ("a value with a control character", {"X-Org": "a\r\nInjected: 1"}),
            ("too many", {f"k{i}": "a" for i in range(rule.max_items + 1)})]


CASES = [pytest.param(dotted, what, value, id=f"{dotted}-{what}")
         for dotted, rule in every_key() for what, value in bad_values(rule)]


# -- the table and the dataclasses cannot drift ---------------------------------------------------------------
def test_every_dataclass_field_has_a_rule_and_every_rule_a_field() -> None:
    assert section_fields() == {name: set(SECTIONS[name]) for name in SECTION_CLASSES}
    file_keys = {f.name for f in fields(Config)} - NOT_FILE_KEYS
    assert file_keys == set(TOP_LEVEL) | set(SECTIONS) | set(TABLES) == KNOWN_TOP
    for name, cls in SECTION_CLASSES.items():  # every section of Config is a dataclass with rules, or a table
        assert {f.name: f.type for f in fields(Config)}[name] == cls.__name__


def test_rule_kinds_match_the_dataclass_types_and_defaults_pass() -> None:
    kinds = {int: {"int"}, float: {"float"}, bool: {"bool"}, str: {"str", "enum", "path"}, dict: {"dict"}}
    for section, cls in SECTION_CLASSES.items():
        default = cls()
        for f in file_fields(cls):
            rule = SECTIONS[section][f.name]
            value = getattr(default, f.name)
            assert rule.kind in kinds[type(value)], f"{section}.{f.name}"
            assert rule.check(value) is None, f"{section}.{f.name}: {rule.check(value)}"


def test_the_tui_section_covers_every_key_the_tui_reads() -> None:
    # The TUI reads its [tui] choices through the engine's UI state (issue 16 #4), and any others directly.
    from engine.state import SETTINGS

    read = set(SETTINGS)
    for path in (REPO / "tui").rglob("*.py"):
        read |= set(re.findall(r"config\.tui\.get\(\s*[\"'](\w+)[\"']", path.read_text(encoding="utf-8")))
    assert read and read <= set(SECTIONS["tui"])


def test_every_env_section_key_is_checked_from_the_environment() -> None:
    assert set(ENV_PREFIXES) <= set(SECTION_CLASSES)


# -- every key, every kind of wrong value ---------------------------------------------------------------------
@pytest.mark.parametrize(("dotted", "what", "value"), CASES)
def test_every_key_refuses_bad_values_in_one_line(tmp_path: Path, dotted: str, what: str, value: Any) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(tomli_w.dumps(nested(dotted, value)), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(workspace=tmp_path, home=tmp_path / "home", config_path=cfg)
    message = str(info.value)
    assert info.value.path == str(cfg)
    assert info.value.key == dotted, message
    assert message.startswith(f"{cfg}: {dotted}: ")
    assert "\n" not in message and "\x1b" not in message and "\x00" not in message
    rule = dict(every_key())[dotted]
    if rule.kind in ("int", "float") and what in ("below", "above", "wrong type", "nan", "inf"):
        hi = rule.hi
        assert hi is not None and (str(hi) if isinstance(hi, int) else f"{hi:g}") in message  # the allowed range is named
    if rule.kind == "enum":
        assert all(choice in message for choice in rule.choices)


@pytest.mark.parametrize(("dotted", "rule"), every_key())
def test_every_key_accepts_its_bounds(dotted: str, rule: Rule) -> None:
    if rule.kind in ("int", "float"):
        assert rule.lo is not None and rule.hi is not None
        assert rule.check(rule.hi) is None
        assert (rule.check(rule.lo) is None) != rule.above
        if rule.kind == "float":
            assert rule.check(int(rule.hi)) is None  # TOML's `timeout = 30` is a number
    elif rule.kind == "enum":
        assert all(rule.check(choice) is None for choice in rule.choices)


ENV_CASES = [
    pytest.param(name, text, id=f"{name}={text}")
    for name, rule in SECTIONS["embedding"].items()
    for text in (
        {"int": ["lots", "-1000000000", "99999999999", "1.5"], "float": ["soon", "nan", "inf", "-1", "1e9"],
         "enum": ["not-a-provider"], "dict": ["[1, 2]", '{"X": 3}', "{"],
         "str": ["a\x1bb", "x" * (rule.max_len + 1)]}[rule.kind]
    )
]


@pytest.mark.parametrize(("name", "text"), ENV_CASES)
def test_every_environment_override_is_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str,
                                               text: str) -> None:
    var = ENV_PREFIXES["embedding"] + name.upper()
    monkeypatch.setenv(var, text)
    with pytest.raises(ConfigError) as info:
        load_config(workspace=tmp_path, home=tmp_path / "home", config_path=tmp_path / "none.toml")
    assert str(info.value).startswith(f"environment variable {var}: embedding.{name}: ")
    assert "\n" not in str(info.value) and "\x1b" not in str(info.value)


# -- valid configurations load ----------------------------------------------------------------------------------
def test_every_default_written_out_loads_as_the_default(tmp_path: Path) -> None:
    data: dict[str, Any] = {"workspace": str(tmp_path), "extra_paths": [], "sources": ["memory"],
                            "sessions_dir": "", "agent": "main",
                            "tui": {"theme": "memdeck-dark", "search_mode": "hybrid"},
                            "keys": {"memdeck.save": "ctrl+s,f2"}}
    for section, cls in SECTION_CLASSES.items():
        default = cls()
        data[section] = {f.name: getattr(default, f.name) for f in file_fields(cls)}
    cfg_file = tmp_path / "config.toml"
    cfg_file.write_text(tomli_w.dumps(data), encoding="utf-8")
    cfg = load_config(home=tmp_path / "home", config_path=cfg_file)
    plain = load_config(workspace=tmp_path, home=tmp_path / "home", config_path=tmp_path / "none.toml")
    for section in SECTION_CLASSES:
        assert getattr(cfg, section) == getattr(plain, section)
    assert cfg.keys == {"memdeck.save": "ctrl+s,f2"} and cfg.tui["search_mode"] == "hybrid"


def test_validate_accepts_an_empty_config_and_typical_settings() -> None:
    validate({})
    validate({"embedding": {"provider": "openai", "base_url": "http://127.0.0.1:11434/v1", "timeout": 30,
                            "headers": {"X-Org": "acme"}, "api_key_env": "MY_KEY"},
              "search": {"max_results": 1000, "vector_weight": 1, "text_weight": 0},
              "chunking": {"tokens": 16, "overlap": 15}, "sources": ["memory", "sessions", "memory"],
              "extra_paths": ["notes", Path("/abs/notes.md")], "agent": "ops-2"})


# -- rules across keys --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("data", "key", "needle"), [
    ({"chunking": {"tokens": 100, "overlap": 100}}, "chunking.overlap", "between 0 and chunking.tokens - 1 (99)"),
    ({"chunking": {"tokens": 50}}, "chunking.overlap", "the default"),
    ({"search": {"vector_weight": 0, "text_weight": 0.0}}, "search.vector_weight", "not both 0"),
])
def test_cross_field_rules(data: dict[str, Any], key: str, needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        validate(data, path="c.toml")
    assert info.value.key == key and needle in str(info.value)


def test_unknown_keys_name_the_key_and_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"^c\.toml: search\.max_resluts: unknown key; did you mean max_results\? \(known: candidate_"):
        validate({"search": {"max_resluts": 3}}, path="c.toml")
    with pytest.raises(ConfigError, match=r"^c\.toml: colour: unknown key \(known: agent, chunking"):
        validate({"colour": "red"}, path="c.toml")
    with pytest.raises(ConfigError, match=r"tui\.colour: unknown key \(known: search_mode, theme\)"):
        validate({"tui": {"colour": "red"}}, path="c.toml")


def test_messages_never_carry_control_characters_or_secrets() -> None:
    with pytest.raises(ConfigError) as info:
        validate({"\x1b]52;c;aGk=\x07": 1}, path="c\n.toml")
    assert "\x1b" not in str(info.value) and "\n" not in str(info.value) and "\\x1b]52" in str(info.value)
    secret = "sk-live-0123456789abcdef"
    for data in ({"embedding": {"api_key_env": secret}}, {"llm": {"api_key_env": secret}},
                 {"embedding": {"headers": {"Authorization": f"Bearer {secret}\n"}}}):
        with pytest.raises(ConfigError) as info:
            validate(data)
        assert secret not in str(info.value) and "not shown" in str(info.value)


def test_a_number_too_big_to_print_is_still_one_line() -> None:
    with pytest.raises(ConfigError, match=r"an integer of \d+ bits"):
        validate({"search": {"max_results": 10**5000}})


def test_check_value_for_single_settings() -> None:
    assert check_value("tui.search_mode", "keyword") is None
    assert check_value("tui.theme", "") == "must not be empty"
    assert check_value("chunking.tokens", ChunkingConfig.tokens) is None
    with pytest.raises(KeyError):
        check_value("tui.nope", 1)


# -- the command line reports it in one line ------------------------------------------------------------------------
@pytest.mark.parametrize(("content", "needle"), [
    ("[llm]\ntimeout = -5\n", "llm.timeout: must be greater than 0 and at most 600 seconds, got -5"),
    ("[search]\nmax_results = 9223372036854775807\n", "search.max_results: must be at least 1 and at most 1000"),
    ("[search]\nmin_score = nan\n", "search.min_score: must be a finite number"),
])
def test_cli_exits_1_with_one_line_and_no_traceback(tmp_path: Path, content: str, needle: str) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(content, encoding="utf-8")
    env = {**os.environ, "MEMDECK_HOME": str(tmp_path / "home"), "MEMDECK_EMBEDDING_PROVIDER": "none"}
    out = subprocess.run([sys.executable, "-m", "memdeck.cli", "--config", str(bad), "--workspace", str(tmp_path),
                          "status"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and str(bad) in lines[0] and needle in lines[0], out.stderr


def test_an_unknown_local_model_is_refused_where_it_was_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The catalogue is engine.local_models (base layer): config checks names without importing engine.embed.
    cfg = tmp_path / "config.toml"
    cfg.write_text('[embedding]\nprovider = "local"\nmodel = "bert-base"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(workspace=tmp_path, home=tmp_path / "home", config_path=cfg)
    assert (info.value.path, info.value.key) == (str(cfg), "embedding.model")
    assert "unknown local model 'bert-base' (known: all-MiniLM-L6-v2," in str(info.value)
    monkeypatch.setenv("MEMDECK_EMBEDDING_MODEL", "nope")
    with pytest.raises(ConfigError) as info:
        load_config(workspace=tmp_path, home=tmp_path / "home", config_path=cfg)
    assert info.value.path == "environment variable MEMDECK_EMBEDDING_MODEL" and "'nope'" in str(info.value)
    monkeypatch.setenv("MEMDECK_EMBEDDING_MODEL", "E5")  # an alias, any case
    assert load_config(workspace=tmp_path, home=tmp_path / "home", config_path=cfg).embedding.model == "E5"
