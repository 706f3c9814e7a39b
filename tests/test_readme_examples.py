"""Every console example in README.md runs against the bundled demo and prints what the README shows.

How the commands run and what ``…`` may stand for (timings and a flush's clock time, nothing else) is written
once, in ``scripts/readme_examples.py``; ``python scripts/update_readme_examples.py`` rewrites the outputs from
real runs. The blocks that need no embedding model run in seconds; the whole README, the model's blocks
included, runs in its own fresh home once (``model``: it indexes the demo with the default model first).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scripts.readme_examples import (
    README,
    Command,
    differences,
    line_matches,
    merged,
    parse,
    runs,
)

EXAMPLES = parse(README.read_text(encoding="utf-8"))


def _check(home: Path, with_model: bool) -> None:
    failures = []
    ran = 0
    for command, actual in runs(EXAMPLES, home, with_model):
        ran += 1
        problems = differences(command.expected, actual)
        if problems:
            failures.append(f"README.md:{command.line + 1}: $ {command.text}\n" + "\n".join(problems))
    assert ran, "no example ran"
    assert not failures, ("README examples differ from real output "
                          "(python scripts/update_readme_examples.py rewrites them):\n" + "\n\n".join(failures))


def test_the_readme_has_examples_of_every_kind() -> None:
    commands = [c.text for e in EXAMPLES for c in e.commands]
    assert len(commands) >= 8 and all(c.expected for e in EXAMPLES for c in e.commands), commands
    assert any(e.needs_model for e in EXAMPLES) and any(not e.needs_model for e in EXAMPLES)
    for verb in ("index", "search", "get", "sessions", "flush", "review", "status"):
        assert any(c.split()[1:2] == [verb] or f" {verb} " in f" {c} " for c in commands), verb


def test_examples_without_the_model(tmp_path: Path) -> None:
    _check(tmp_path / "home", with_model=False)


@pytest.mark.model
def test_every_example_with_the_model(readme_model_run: Path) -> None:
    # Run once per test run in a fresh home (tests/conftest.py), whose embedded demo other tests then reuse.
    ran = json.loads((readme_model_run / "runs.json").read_text(encoding="utf-8"))
    commands = {(c.line, c.text): c for e in EXAMPLES for c in e.commands}
    assert [(r["line"], r["text"]) for r in ran] == list(commands), "every example ran, in README order"
    failures = [f"README.md:{r['line'] + 1}: $ {r['text']}\n" + "\n".join(problems) for r in ran
                if (problems := differences(commands[(r["line"], r["text"])].expected, r["actual"]))]
    assert not failures, ("README examples differ from real output "
                          "(python scripts/update_readme_examples.py rewrites them):\n" + "\n\n".join(failures))


# -- the comparison rule itself -------------------------------------------------------------------------------
def test_a_placeholder_stands_for_text_within_one_line_only() -> None:
    assert line_matches("Indexed 15 files in … s", "Indexed 15 files in 22.5 s")
    assert line_matches("## … — Memory flush", "## 06:47 — Memory flush")
    assert not line_matches("Indexed 15 files in … s", "Indexed 16 files in 22.5 s")
    assert not line_matches("score 0.66", "score 0.67")
    assert not line_matches("a (b) c", "a b c")  # everything but … is literal, regex characters too
    assert differences(["one", "two"], ["one"]) and differences(["one"], ["one", "two"])
    assert not differences(["x … y"], ["x anything y"])


def test_a_rewrite_keeps_matching_lines_as_written() -> None:
    assert merged(["in … s", "old"], ["in 3.1 s", "new", "more"]) == ["in … s", "new", "more"]


def test_a_console_block_is_parsed_into_commands_and_outputs() -> None:
    text = "\n".join([
        "<!-- example: model -->", "```console", "$ memdeck a", "out 1", "", "$ memdeck b", "out 2", "", "```",
        "```console", "$ memdeck c", "```",
    ])
    model, plain = parse(text)
    assert model.needs_model and not plain.needs_model
    assert [(c.text, c.expected, c.first, c.count) for c in model.commands] == [
        ("memdeck a", ["out 1"], 3, 1), ("memdeck b", ["out 2"], 6, 1)]
    assert plain.commands == [Command(10, "memdeck c", [], 11, 0)]
    with pytest.raises(ValueError, match="before any"):
        parse("```console\nstray\n```")
