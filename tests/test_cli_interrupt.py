"""Ctrl-C in any memdeck command (issue 22 #14, the CLI's doors): exit 130 with one line saying so (the error as
JSON on stdout with ``--json``), never click's "Aborted!" with 1 nor a traceback; ``memdeck mcp --new-token`` and
the token in ``memdeck mcp --help``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdeck.cli import cli
from memdeck.mcp import TOKEN_FILE
from tests.test_messages import WAIT_CAP, _stderr_lines
from tests.test_rel_crash import REPO

# The command as the CLI runs it, with the function it spends its time in replaced by one that says so on stderr
# and then waits on stdin: the test's SIGINT lands inside the command, whatever the machine's speed.
CHILD = """
import importlib
import sys

module_name, attribute = sys.argv.pop(1), sys.argv.pop(1)


def waiting(*args, **kwargs):
    sys.stderr.write("waiting for ctrl+c\\n")
    sys.stderr.flush()
    sys.stdin.readline()
    raise AssertionError("the signal never came")


if module_name != "-":
    owner = importlib.import_module(module_name)
    *path, name = attribute.split(".")
    for part in path:
        owner = getattr(owner, part)
    setattr(owner, name, waiting)
from memdeck.cli import main

sys.argv[0] = "memdeck"
main()
"""


def _interrupt(ws: Path, home: Path, where: tuple[str, str], *args: str) -> tuple[int, str, str]:
    """Run ``memdeck --workspace ws ARGS`` with ``where`` (module, attribute) waiting, SIGINT it there; or, with
    ``("-", cue)``, unchanged, and SIGINT it once it says ``cue`` on stderr (a server, waiting for its client)."""
    cue = "waiting for ctrl+c" if where[0] != "-" else where[1]
    env = {**os.environ, "MEMDECK_HOME": str(home), "MEMDECK_EMBEDDING_PROVIDER": "hash"}
    said: list[str] = []
    # The Popen's with closes its pipes and reaps it; a failed assertion inside kills it first.
    with subprocess.Popen([sys.executable, "-c", CHILD, *where, "--workspace", str(ws), *args], cwd=REPO, env=env,
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        try:
            for line in _stderr_lines(proc):
                said.append(line)
                if line.startswith(cue):
                    proc.send_signal(signal.SIGINT)
            stdout = proc.stdout.read().decode() if proc.stdout else ""
            proc.wait(timeout=WAIT_CAP)
        except BaseException:
            proc.kill()
            raise
    return proc.returncode, "\n".join(said), stdout


@pytest.mark.parametrize(
    ("where", "args"),
    [(("engine.api", "MemoryEngine.search"), ["search", "heron"]),
     (("engine.api", "MemoryEngine.search"), ["search", "--json", "heron"]),
     (("engine.workspace", "read_memory_slice"), ["get", "MEMORY.md"]),
     (("engine.health.doctor", "run_doctor"), ["doctor", "--json"]),
     (("-", "memdeck mcp: ready"), ["mcp"])],  # the real stdio server, on a client that says nothing
    ids=["search", "search-json", "get", "doctor-json", "mcp"],
)
def test_ctrl_c_in_any_command_exits_130_saying_so(demo_workspace: Path, tmp_path: Path, where: tuple[str, str],
                                                   args: list[str]) -> None:
    code, stderr, stdout = _interrupt(demo_workspace, tmp_path / "home", where, *args)
    assert code == 130, stderr
    assert "memdeck: interrupted (Ctrl-C)" in stderr.splitlines()
    assert "Aborted!" not in stderr and "Traceback" not in stderr
    if "--json" in args:
        assert json.loads(stdout) == {"ok": False, "error": "interrupted (Ctrl-C)", "interrupted": True}
    else:
        assert stdout == ""


def test_new_token_replaces_the_token(demo_workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("MEMDECK_HOME", str(home))
    runner = CliRunner()
    first = runner.invoke(cli, ["--workspace", str(demo_workspace), "mcp", "--new-token"])
    second = runner.invoke(cli, ["--workspace", str(demo_workspace), "mcp", "--new-token"])
    assert first.exit_code == 0 and second.exit_code == 0, first.output
    kept = (home / TOKEN_FILE).read_text(encoding="utf-8").strip()
    assert f"New bearer token: {kept}" in second.output and kept not in first.output
    assert f"Kept in {home / TOKEN_FILE}" in second.output


def test_mcp_help_tells_how_clients_authenticate() -> None:
    shown = " ".join(CliRunner().invoke(cli, ["mcp", "--help"]).output.split())
    assert "bearer token" in shown and "Authorization: Bearer <token>" in shown and "mcp-http-token" in shown
    assert "--new-token" in shown
