"""Config traps (issue 22 #12): key strings Textual never reports, remaps that take another binding's key, binding
ids no binding has, and ``sources = []`` are each refused, naming the key."""

from __future__ import annotations

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
])
def test_bad_key_strings_are_refused_naming_the_binding(tmp_path: Path, keys: str, problem: str) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, {"keys": {"memdeck.save": keys}})
    message = str(info.value)
    assert info.value.key == "keys" and "'memdeck.save'" in message and problem in message, message


@pytest.mark.parametrize("keys", [
    "ctrl+s", "ctrl+s,f2", " f2 , ctrl+s ", "f1", "f24", "question_mark", "?", "ctrl+question_mark", "escape",
    "shift+tab", "ctrl+shift+up", "alt+ctrl+hyper+meta+shift+super+x", "A", "é", "ctrl+plus", "comma",
    "full_stop", "less_than_sign", "pageup", "space", "enter",
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
    assert key_problem(f"ctrl+{name}") is None
    assert key_problem(f"alt+shift+{name}") is None


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
    ({"memdeck.save": "ctrl+x", "memdeck.review": "ctrl+x"}, {"memdeck.review": "ctrl+x"},
     ["memdeck.save", "memdeck.review"]),
    ({"memdeck.svae": "f5"}, {}, ["memdeck.svae", "did you mean memdeck.save"]),
    ({"nothing.like.it": "f5"}, {}, ["nothing.like.it", "no binding has this id"]),
    # accepted: a swap, a free key, another pane's key, the same key twice, modifiers in any order
    ({"memdeck.save": "ctrl+q", "memdeck.quit": "ctrl+s"}, {"memdeck.save": "ctrl+q", "memdeck.quit": "ctrl+s"}, []),
    ({"memdeck.save": "f5,ctrl+s"}, {"memdeck.save": "f5,ctrl+s"}, []),
    ({"results.copy_citation": "r"}, {"results.copy_citation": "r"}, []),  # the tree's r is another pane's
    ({"memdeck.save": "shift+ctrl+x"}, {"memdeck.save": "ctrl+shift+x"}, []),
])
def test_remaps_that_break_a_binding_are_refused_naming_both(keymap: dict[str, str], kept: dict[str, str],
                                                              warned: list[str]) -> None:
    from tui.keys import check_keymap

    checked = check_keymap(keymap, _groups())  # type: ignore[arg-type]
    assert checked.keymap == kept
    text = " | ".join(checked.warnings)
    assert all(word in text for word in warned), text
    assert bool(checked.warnings) == bool(warned)
