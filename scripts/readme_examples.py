"""The README's console examples: find them, run them against the bundled demo, compare or rewrite their output.

Used by ``tests/test_readme_examples.py`` (compare) and ``scripts/update_readme_examples.py`` (rewrite).

An example is a fenced ```` ```console ```` block in README.md. In it, a line ``$ memdeck …`` is a command and the
lines after it, up to the next ``$`` line or the end of the block, are what it prints (blank lines between
commands are not output). A block right after the line ``<!-- example: model -->`` needs the embedding model
(an index with vectors: hybrid search, ``index``); the others run without it.

How a command runs (so that its output is the same on every machine and every day):

- ``memdeck`` is this checkout's (``python -m memdeck`` with the repo on ``PYTHONPATH``), in a fresh
  ``MEMDECK_HOME`` shared by the README's commands in order, so ``--demo`` is the bundled demo workspace;
- ``MEMDECK_TODAY`` is :data:`TODAY` (query dates, "today"), the zone is UTC (``TZ`` and ``[memory] timezone``),
  terminal width 100, no colour; no ``MEMDECK_*`` or ``OPENCLAW_*`` variable of the caller gets through;
- the output is stdout then stderr, without stderr's progress lines (those starting ``… ``: a terminal shows a
  bar there, redrawn, that a pipe gets as a line every few seconds).

Volatile parts — and only those: timings, the clock time of a flush heading — are written ``…`` in the README.
In an expected line, each ``…`` stands for any text within that one line (so ``in … s`` matches ``in 22.5 s``);
everything else must match exactly, line for line. A rewrite keeps an expected line as written while it still
matches, so the placeholders survive ``scripts/update_readme_examples.py``.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
TODAY = "2026-11-30"
"""The day the examples run on (``MEMDECK_TODAY``): the demo's notes run to 2026-11-27."""
MODEL_MARK = "<!-- example: model -->"
PLACEHOLDER = "…"
FENCE = "```"
TIMEOUT = 600


@dataclass
class Command:
    """One ``$ memdeck …`` line and the output the README shows for it (``lines``: 0-based README line numbers)."""

    line: int
    text: str
    expected: list[str] = field(default_factory=list)
    first: int = 0  # README line of the first expected line
    count: int = 0  # how many README lines the expected output spans (blank trailing lines excluded)


@dataclass
class Example:
    """One console block."""

    start: int  # README line of the opening fence
    needs_model: bool
    commands: list[Command]


def parse(text: str) -> list[Example]:
    """Every console block of the README, with its commands and their expected output."""
    lines = text.split("\n")
    examples: list[Example] = []
    i = 0
    while i < len(lines):
        if lines[i].strip() != f"{FENCE}console":
            i += 1
            continue
        start = i
        needs_model = i > 0 and lines[i - 1].strip() == MODEL_MARK
        commands: list[Command] = []
        i += 1
        while i < len(lines) and lines[i].strip() != FENCE:
            line = lines[i]
            if line.startswith("$ "):
                commands.append(Command(i, line[2:], first=i + 1))
            elif commands:
                commands[-1].expected.append(line)
            elif line.strip():
                raise ValueError(f"README.md:{i + 1}: output before any $ command in a console block")
            i += 1
        if i == len(lines):
            raise ValueError(f"README.md:{start + 1}: console block never closed")
        for command in commands:
            while command.expected and not command.expected[-1].strip():
                command.expected.pop()
            command.count = len(command.expected)
        examples.append(Example(start, needs_model, commands))
        i += 1
    return examples


def environment(home: Path) -> dict[str, str]:
    """The environment every example runs in (see the module's docstring)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MEMDECK_", "OPENCLAW_", "PYTEST_")) and k not in {"COLUMNS", "LINES", "TZ"}}
    home.mkdir(parents=True, exist_ok=True)
    config = home / "config.toml"
    if not config.exists():
        config.write_text('[memory]\ntimezone = "UTC"\n', encoding="utf-8")
    env.update({
        "MEMDECK_HOME": str(home),
        "MEMDECK_TODAY": TODAY,
        "TZ": "UTC",
        "COLUMNS": "100",
        "NO_COLOR": "1",
        "TERM": "dumb",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
    })
    return env


def run(command: str, home: Path) -> list[str]:
    """Run one README command (``memdeck …``) and return what it printed, as the README would show it."""
    argv = shlex.split(command)
    if not argv or argv[0] != "memdeck":
        raise ValueError(f"an example command must start with memdeck: {command!r}")
    proc = subprocess.run([sys.executable, "-m", "memdeck", *argv[1:]], capture_output=True, text=True,
                          encoding="utf-8", env=environment(home), cwd=home, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    if proc.returncode not in (0, 1, 2):
        raise RuntimeError(f"{command!r} exited {proc.returncode}:\n{proc.stderr}")
    err = [line for line in _lines(proc.stderr) if not line.startswith(f"{PLACEHOLDER} ")]
    out = _lines(proc.stdout) + err
    while out and not out[-1].strip():
        out.pop()
    return [line.rstrip() for line in out]


def _lines(text: str) -> list[str]:
    """``text`` cut at newlines only (a U+2028 inside a line stays in it); no last empty line."""
    lines = text.split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def line_matches(expected: str, actual: str) -> bool:
    """Whether ``actual`` is ``expected`` with each ``…`` standing for any text within the line."""
    if PLACEHOLDER not in expected:
        return expected.rstrip() == actual
    pattern = ".*".join(re.escape(part) for part in expected.rstrip().split(PLACEHOLDER))
    return re.fullmatch(pattern, actual) is not None


def differences(expected: list[str], actual: list[str]) -> list[str]:
    """What differs, line by line (empty when the output matches)."""
    problems = []
    for n in range(max(len(expected), len(actual))):
        want = expected[n] if n < len(expected) else "<no line>"
        got = actual[n] if n < len(actual) else "<no line>"
        if n >= len(expected) or n >= len(actual) or not line_matches(want, got):
            problems.append(f"  line {n + 1}:\n    README: {want}\n    actual: {got}")
    return problems


def merged(expected: list[str], actual: list[str]) -> list[str]:
    """The output to write back: each line as the README has it while it still matches (placeholders kept)."""
    return [expected[n] if n < len(expected) and line_matches(expected[n], got) else got
            for n, got in enumerate(actual)]


def runs(examples: list[Example], home: Path, with_model: bool) -> Iterator[tuple[Command, list[str]]]:
    """Each command of the examples in README order (without the model: only the blocks that need none)."""
    for example in examples:
        if example.needs_model and not with_model:
            continue
        for command in example.commands:
            yield command, run(command.text, home)
