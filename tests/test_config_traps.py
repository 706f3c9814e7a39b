"""Config traps (issue 22 #12): key strings Textual never reports, remaps that take another binding's key, binding
ids no binding has, and ``sources = []`` are each refused, naming the key."""

from __future__ import annotations

import os
import string
from pathlib import Path

import pytest
import tomli_w
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.config import load_config
from engine.config_rules import NAMED_KEYS, key_list_problem, key_problem
from engine.errors import ConfigError


def _load(tmp_path: Path, data: dict[str, object]) -> object:
    cfg = tmp_path / "config.toml"
    cfg.write_text(tomli_w.dumps(data), encoding="utf-8")
    return load_config(workspace=tmp_path, home=tmp_path / "home", config_path=cfg)


# -- key syntax: the config refuses what Textual would never report ------------------------------------------
@pytest.mark.parametrize(("keys", "problem"), [
    ("ctrl+nonsense+zz", "unknown modifier 'nonsense'"),
    ("zz", "unknown key 'zz'"),
    ("Ctrl+S", "unknown modifier 'Ctrl'"),
    ("ctrl+ctrl+s", "ctrl twice"),
    ("ctrl+", "no key after the modifiers"),
    ("ctrl+s,", "an empty key"),
    ("ctrl+s,,f2", "an empty key"),
    ("ctrl+?", "write ctrl+question_mark"),
    ("f25", "unknown key 'f25'"),
    ("hyphen_minus", "unknown key"),  # Textual calls that key "minus"
    ("latin_small_letter_a", "unknown key"),  # and that one "a"
    ("ctrl+s f2", "unknown key"),
    # keys Textual never reports: a capital after a modifier, shift with a character key
    ("ctrl+S", "write ctrl+shift+s, or ctrl+s"),
    ("alt+A", "write alt+shift+a, or alt+a"),
    ("shift+a", "(write A)"),
    ("shift+1", "never arrives"),
    ("shift+question_mark", "never arrives"),
    ("f2,shift+é", "(write É)"),
])
def test_bad_key_strings_are_refused_naming_the_binding(tmp_path: Path, keys: str, problem: str) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, {"keys": {"memdeck.save": keys}})
    message = str(info.value)
    assert info.value.key == "keys" and "'memdeck.save'" in message and problem in message, message


@pytest.mark.parametrize("keys", [
    "ctrl+s", "ctrl+s,f2", " f2 , ctrl+s ", "f1", "f24", "question_mark", "?", "ctrl+question_mark", "escape",
    "shift+tab", "ctrl+shift+up", "alt+ctrl+hyper+meta+shift+super+x", "A", "é", "ctrl+plus", "comma",
    "full_stop", "less_than_sign", "pageup", "space", "enter", "ctrl+shift+s", "alt+shift+a", "shift+space",
    "shift+f2", "ctrl+s,ctrl+s",
])
def test_good_key_strings_load(tmp_path: Path, keys: str) -> None:
    assert key_list_problem(keys) is None
    cfg = _load(tmp_path, {"keys": {"memdeck.save": keys}})
    assert cfg.keys == {"memdeck.save": keys}  # type: ignore[attr-defined]


def _textual_keys() -> list[str]:
    """Every key name Textual reports without modifiers: its named keys and each printable character's name."""
    from textual.keys import Keys, _character_to_key

    named = [k.value for k in Keys if "+" not in k.value and not k.value.startswith("<") and "-" not in k.value]
    chars = [_character_to_key(c) for c in string.ascii_letters + string.digits + string.punctuation]
    return sorted(set(named) | set(chars))


@pytest.mark.parametrize("name", _textual_keys())
def test_every_key_textual_names_is_accepted_with_and_without_modifiers(name: str) -> None:
    assert key_problem(name) is None
    capital = len(name) == 1 and name != name.lower()  # Textual reports ctrl+shift+a, never ctrl+A
    assert (key_problem(f"ctrl+{name}") is None) != capital
    assert (key_problem(f"alt+shift+{name}") is None) != capital


def test_the_named_keys_are_textual_names() -> None:
    # engine/ must not import textual: its own list of key names stays in step with Textual's here.
    assert set(NAMED_KEYS) <= set(_textual_keys())


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*"ctrlshiftaz?+,_ 1", "ctrl+", "shift+", "f2", "question_mark"]), max_size=12))
def test_key_grammar_never_crashes_and_accepts_only_textual_keys(parts: list[str]) -> None:
    text = "".join(parts)
    problem = key_list_problem(text)
    assert problem is None or (isinstance(problem, str) and "\n" not in problem)
    if problem is None:
        names = set(_textual_keys())
        for key in text.split(","):
            *mods, name = key.strip().split("+")
            assert set(mods) <= {"alt", "ctrl", "hyper", "meta", "shift", "super"}
            assert name in names or (not mods and len(name) == 1), key


# -- misspelt names: the message says which was meant -----------------------------------------------------
@pytest.mark.parametrize(("data", "key", "hint"), [
    ({"serach": {"max_results": 5}}, "serach", "did you mean search?"),
    ({"Search": {"max_results": 5}}, "Search", "did you mean search?"),
    ({"search": {"max_resluts": 5}}, "search.max_resluts", "did you mean max_results?"),
    ({"search": {"timeout": 5}}, "search.timeout", "did you mean [embedding] timeout?"),
    ({"sources": ["Memory"]}, "sources", "unknown source 'Memory'; did you mean memory?"),
    ({"sources": ["session"]}, "sources", "did you mean sessions?"),
    ({"tui": {"search_mode": "Keyword"}}, "tui.search_mode", "did you mean keyword?"),
    ({"embedding": {"provider": "openia"}}, "embedding.provider", "did you mean openai?"),
    ({"sources": "memory"}, "sources", "expected a list of strings"),
    ({"llm": {"timeout": 0}}, "llm.timeout", "greater than 0"),
    ({"llm": {"timeout": float("nan")}}, "llm.timeout", "finite"),
    ({"llm": {"timeout": 1e9}}, "llm.timeout", "at most 600"),
    ({"memory": {"timezone": "Mars/Olympus"}}, "memory.timezone", "unknown time zone 'Mars/Olympus'"),
    ({"memory": {"timezone": "UTC+3"}}, "memory.timezone", "unknown time zone 'UTC+3'"),
])
def test_a_misspelt_or_bad_value_is_refused_naming_the_key(tmp_path: Path, data: dict[str, object], key: str,
                                                           hint: str) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, data)
    assert info.value.key == key and hint in str(info.value), str(info.value)


# -- the config file itself ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("raw", "problem"), [
    (b"[search]\nmax_results = 1\nmax_results = 2\n", "line 3"),
    ("[search]\nmax_results = 3\n".encode("utf-16"), "UTF-16 text: save it as UTF-8"),
    (b'a = "\xff"\n', "not UTF-8 text (byte 6 is not)"),
    (b'\xef\xbb\xbfa = "\xff"\n', "not UTF-8 text (byte 9 is not)"),
    (b"#" * (1024 * 1024 + 1), "larger than 1024 KB"),
], ids=["duplicate-key", "utf-16", "bad-byte", "bad-byte-after-bom", "over-1-mib"])
def test_a_config_file_that_cannot_be_read_says_why(tmp_path: Path, raw: bytes, problem: str) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_bytes(raw)
    with pytest.raises(ConfigError) as info:
        load_config(workspace=tmp_path, home=tmp_path / "home", config_path=cfg)
    assert problem in str(info.value) and str(cfg) in str(info.value), str(info.value)


def test_a_config_with_a_byte_order_mark_loads(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_bytes(b"\xef\xbb\xbf[search]\r\nmax_results = 3\r\n")  # as Windows Notepad saves it
    assert load_config(workspace=tmp_path, home=tmp_path / "home", config_path=cfg).search.max_results == 3


def test_a_device_as_the_config_is_read_only_so_far(tmp_path: Path) -> None:
    # --config /dev/zero read until memory ran out (the 1 MiB file above stands in for it: this test must not
    # exhaust memory where the cap is missing); /dev/null is an empty config, as people use it.
    assert load_config(workspace=tmp_path, home=tmp_path / "home", config_path=os.devnull).search.max_results


# -- sources ------------------------------------------------------------------------------------------------
def test_empty_sources_is_refused_naming_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, {"sources": []})
    assert info.value.key == "sources"
    assert "nothing would be searched" in str(info.value) and '["memory"]' in str(info.value)


# -- remaps onto another binding's key, unknown ids (the TUI's binding table) ------------------------------


def _groups() -> list[tuple[str, list[object]]]:
    from tui.app import MemdeckApp

    return MemdeckApp.binding_groups(None)  # type: ignore[arg-type]  # reads no instance state


@pytest.mark.parametrize(("keymap", "kept", "warned"), [
    ({"memdeck.save": "ctrl+q"}, {}, ["memdeck.save", "ctrl+q", "memdeck.quit", "keeps ctrl+s"]),
    ({"memdeck.save": "f1"}, {}, ["memdeck.save", "memdeck.help"]),
    ({"memdeck.save": "ctrl+p"}, {}, ["memdeck.save", "command palette"]),
    ({"memdeck.quit": "ctrl+c"}, {}, ["memdeck.quit", "copy"]),
    ({"memdeck.quit": "question_mark"}, {}, ["memdeck.quit", "memdeck.help_key"]),
    ({"memdeck.save": "?"}, {}, ["memdeck.save", "memdeck.help_key"]),  # "?" is question_mark to Textual
    ({"review.refresh": "ctrl+s"}, {}, ["review.refresh", "memdeck.save"]),  # app keys work everywhere
    ({"memdeck.search": "r"}, {}, ["memdeck.search", "tree.rename"]),
    ({"memdeck.save": "f9", "memdeck.review": "f9"}, {"memdeck.review": "f9"},
     ["memdeck.save", "memdeck.review"]),
    ({"memdeck.svae": "f5"}, {}, ["memdeck.svae", "did you mean memdeck.save"]),
    ({"nothing.like.it": "f5"}, {}, ["nothing.like.it", "no binding has this id"]),
    # accepted: a swap, a free key, another pane's key, the same key twice, modifiers in any order
    ({"memdeck.save": "ctrl+q", "memdeck.quit": "ctrl+s"}, {"memdeck.save": "ctrl+q", "memdeck.quit": "ctrl+s"}, []),
    ({"memdeck.save": "f5,ctrl+s"}, {"memdeck.save": "f5,ctrl+s"}, []),
    ({"results.copy_citation": "r"}, {"results.copy_citation": "r"}, []),  # the tree's r is another pane's
    ({"memdeck.save": "shift+ctrl+x"}, {"memdeck.save": "ctrl+shift+x"}, []),
    ({"memdeck.save": "ctrl+s,ctrl+s"}, {"memdeck.save": "ctrl+s"}, []),
    ({"memdeck.help_key": "f5"}, {"memdeck.help_key": "f5"}, []),
    # a binding that works while typing (save, quit …) may not take a key the editor or the search box uses
    ({"memdeck.save": "q"}, {}, ["memdeck.save", "types a character", "keeps ctrl+s"]),
    ({"memdeck.quit": "A"}, {}, ["memdeck.quit", "types a character"]),
    ({"memdeck.quit": "full_stop"}, {}, ["memdeck.quit", "types a character"]),
    ({"memdeck.save": "ctrl+a"}, {}, ["memdeck.save", "cursor line start"]),
    ({"memdeck.save": "ctrl+z"}, {}, ["memdeck.save", "undo"]),
    ({"memdeck.search": "ctrl+v"}, {}, ["memdeck.search", "paste"]),
    ({"memdeck.save": "backspace"}, {}, ["memdeck.save", "delete left"]),
    ({"memdeck.save": "up"}, {}, ["memdeck.save", "cursor up"]),
    ({"memdeck.save": "home"}, {}, ["memdeck.save", "cursor line start"]),
    ({"memdeck.save": "enter"}, {}, ["memdeck.save", "transcript.fold"]),
    ({"memdeck.save": "escape"}, {}, ["memdeck.save", "memdeck.escape"]),
    ({"memdeck.save": "ctrl+m"}, {}, ["memdeck.save", "ctrl+m is enter to a terminal"]),
    ({"memdeck.save": "ctrl+i"}, {}, ["memdeck.save", "focus next", "ctrl+i is tab to a terminal"]),
    ({"memdeck.help_key": "ctrl+s", "memdeck.save": "question_mark"}, {},
     ["memdeck.save", "types a character", "memdeck.help_key", "memdeck.save (Save)"]),
])
def test_remaps_that_break_a_binding_are_refused_naming_both(keymap: dict[str, str], kept: dict[str, str],
                                                              warned: list[str]) -> None:
    from tui.keys import check_keymap

    checked = check_keymap(keymap, _groups())  # type: ignore[arg-type]
    assert checked.keymap == kept
    text = " | ".join(checked.warnings)
    assert all(word in text for word in warned), text
    assert bool(checked.warnings) == bool(warned)
