"""README.md stays a true user's document: every config key, CLI option and MCP argument it should name, the
install and test commands CI runs, and links that lead to files of this repository."""

from __future__ import annotations

import re
from pathlib import Path

import click

from engine.config_rules import SECTIONS, TABLES, TOP_LEVEL

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    """The text of the ``## title`` section, up to the next ``## `` heading."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, re.M | re.S)
    assert match, f"README has no section '## {title}'"
    return match.group(1)


def test_every_config_key_is_in_the_configuration_table() -> None:
    text = section("Configuration")
    wanted = [*TOP_LEVEL, *(f"{s}.{k}" for s, keys in SECTIONS.items() for k in keys)]
    missing = [key for key in wanted if f"| `{key}` |" not in text]
    assert not missing, f"config keys missing from the README's Configuration table: {missing}"
    for table in TABLES:
        assert f"| `[{table}]` |" in text, table


def test_every_cli_command_and_option_is_documented() -> None:
    from memdeck.cli import cli

    text = section("The command line")
    ctx = click.Context(cli)
    for param in cli.params:
        for opt in param.opts:
            if opt.startswith("--"):
                assert f"`{opt}" in text or f" {opt}" in text, opt
    for name in cli.list_commands(ctx):
        command = cli.get_command(ctx, name)
        assert command is not None
        assert f"| `memdeck {name}" in text, f"`memdeck {name}` has no row in the command table"
        row = next(line for line in text.splitlines() if line.startswith(f"| `memdeck {name}"))
        for param in command.params:
            for opt in param.opts:
                if opt.startswith("--") and opt not in ("--help", "--json"):
                    assert opt in row, f"memdeck {name} {opt} is not in its row of the command table"
        if isinstance(command, click.Group):  # `memdeck review apply`, `memdeck review undo`
            for sub_name in command.list_commands(ctx):
                sub = command.get_command(ctx, sub_name)
                assert sub is not None
                start = f"| `memdeck {name} {sub_name}"
                assert start in text, f"`memdeck {name} {sub_name}` has no row in the command table"
                row = next(line for line in text.splitlines() if line.startswith(start))
                for param in sub.params:
                    for opt in param.opts:
                        if opt.startswith("--") and opt not in ("--help", "--json"):
                            assert opt in row, f"memdeck {name} {sub_name} {opt} is not in its row"


def test_mcp_tools_and_every_argument_are_documented() -> None:
    from memdeck.mcp import AppendArguments, AuditArguments, GetArguments, ReviewArguments, SearchArguments

    text = section("MCP: memdeck for agents")
    for tool, model in (("memory_search", SearchArguments), ("memory_get", GetArguments),
                        ("memory_append", AppendArguments), ("memory_review", ReviewArguments),
                        ("memory_audit", AuditArguments)):
        row = next((line for line in text.splitlines() if line.startswith(f"| `{tool}` |")), None)
        assert row, f"{tool} has no row in the MCP tools table"
        for name, info in model.model_fields.items():
            arg = info.alias or name
            assert f"`{arg}`" in row, f"{tool}'s argument {arg} is not in its row"


def test_mcp_and_cli_name_the_same_readable_paths() -> None:
    readable = ("`MEMORY.md`", "`USER.md`", "`DREAMS.md`", "`memory.md`", "`memory/**.md`", "`extra_paths`")
    mcp_get = next(line for line in section("MCP: memdeck for agents").splitlines()
                   if line.startswith("| `memory_get` |"))
    cli_get = re.search(r"### What `get` reads\n(.*?)(?=^### )", README, re.M | re.S)
    assert cli_get
    for path in readable:
        assert path in mcp_get and path in cli_get.group(1), path


def test_the_install_and_test_commands_are_what_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    install = section("Install and run")
    assert "git clone " in install and "&& cd memdeck" in install
    assert "pip install -e . && memdeck --demo" in install and "torch" not in install.split("```")[1]
    assert 'python -m pip install --quiet -e .\n' in ci and 'pip install --quiet -e ".[dev]"' in ci
    assert '-e ".[torch,dev]"' in ci and "pytest -q -m torch" in ci
    assert "memdeck --demo" in install
    assert '```sh\npip install -e ".[dev]" && python -m pytest -q\n```' in install and "\npython -m pytest -q\n" in ci
    assert "-n 0" in install


def test_links_stay_inside_the_repository() -> None:
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README) + re.findall(r"`((?:bench|engine|tests|scripts|"
                                                                               r"screenshots|themes)/[^`*\s]+)`",
                                                                               README)
    assert targets
    for target in targets:
        if target.startswith(("http://", "https://")):
            continue
        assert not target.startswith(".."), f"README cites a file outside the repository: {target}"
        assert (ROOT / target).exists(), f"README cites {target}, which does not exist"
    assert "../" not in README.replace("../../etc/passwd", "")


def test_the_lab_notebook_claims_are_gone() -> None:
    # What the issue found false or contradictory in the README; the numbers live in bench/README.md now.
    for phrase in ("runs in numpy (", "are met;", "Default configuration,", "about a second", "shared/reference"):
        assert phrase not in README, phrase
    assert "held-out" in section("Retrieval quality") and "bench/README.md" in section("Retrieval quality")
    assert "## Why markdown-it-py" in README
