"""Messages and small UX (issue 22 #14): Ctrl-C in ``memdeck index`` (rc 130, "the index is intact"), doctor on a
read-only workspace and on problems ``--fix`` cannot repair, and counts in the singular."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.api import MemoryEngine
from engine.config import load_config
from engine.health.checks import DoctorReport, Finding, diagnose
from engine.health.doctor import format_report
from tests.helpers import hash_config, obey_file_modes, stream_lines
from tests.test_rel_crash import REPO, assert_consistent

WAIT_CAP = 60.0  # seconds without a line from the child: it hangs, and the test fails instead of waiting on


def _workspace(tmp_path: Path, files: int = 6) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Preferences\n\n- Prefers tabs over spaces.\n", encoding="utf-8")
    for i in range(files):
        (ws / "memory" / f"2026-04-{i + 1:02d}.md").write_text(f"# Day {i}\n\n- heron lantern {i}\n", encoding="utf-8")
    return ws


# -- Ctrl-C in `memdeck index` -------------------------------------------------------------------------------
# `memdeck index` as the CLI runs it, saying on stderr where its sync is; after the first file it waits for a line
# on stdin, so the test's SIGINT lands mid-index whatever the machine's speed.
CHILD = """
import sys

import engine.api
from memdeck.cli import main

real_sync = engine.api.MemoryEngine.sync


def sync(self, *args, **kwargs):
    given = kwargs.get("progress")
    held = []

    def progress(p):
        if given is not None:
            given(p)
        sys.stderr.write(f"progress {p.phase} {p.done} {p.total}\\n")
        sys.stderr.flush()
        if p.phase == "files" and p.done < p.total and not held:
            held.append(p)
            sys.stdin.readline()

    kwargs["progress"] = progress
    return real_sync(self, *args, **kwargs)


engine.api.MemoryEngine.sync = sync
sys.argv[0] = "memdeck"
main()
"""


def _stderr_lines(proc: subprocess.Popen[bytes]) -> Iterator[str]:
    assert proc.stderr is not None
    return stream_lines(proc.stderr.fileno(), WAIT_CAP)


@pytest.mark.parametrize(("as_json", "presses"), [(False, 1), (True, 1), (True, 2)],
                         ids=["text", "json", "json-ctrl-c-twice"])
def test_ctrl_c_in_index_exits_130_and_says_the_index_is_intact(tmp_path: Path, as_json: bool,
                                                                presses: int) -> None:
    ws = _workspace(tmp_path)
    home = tmp_path / "home"
    env = {**os.environ, "MEMDECK_HOME": str(home), "MEMDECK_EMBEDDING_PROVIDER": "hash"}
    args = [sys.executable, "-c", CHILD, "--workspace", str(ws), "index", *(["--json"] if as_json else [])]
    proc = subprocess.Popen(args, cwd=REPO, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    said: list[str] = []
    try:
        assert proc.stdin is not None
        sent = 0
        for line in _stderr_lines(proc):
            said.append(line)
            if sent == 0 and line.startswith("progress files "):  # the first file is in, the child waits
                proc.send_signal(signal.SIGINT)
                sent = 1
            elif sent and line.startswith("memdeck: stopping"):  # the first Ctrl-C was heard
                if sent < presses:
                    proc.send_signal(signal.SIGINT)
                    sent += 1
                else:
                    proc.stdin.write(b"go\n")
                    proc.stdin.close()
        stdout = proc.stdout.read().decode() if proc.stdout else ""
        proc.wait(timeout=WAIT_CAP)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None and not stream.closed:
                stream.close()
    text = "\n".join(said)
    assert proc.returncode == 130, text
    assert "Aborted!" not in text and "Traceback" not in text
    assert "interrupted: the index is intact (1 of 7 files done); run `memdeck index` to continue" in text
    if as_json:
        payload = json.loads(stdout)
        assert payload["ok"] is False and payload["interrupted"] is True
        assert payload["error"].startswith("interrupted: the index is intact")
        assert (payload["filesDone"], payload["filesTotal"]) == (1, 7)
    index = load_config(workspace=ws, home=home).index_path
    assert assert_consistent(index)["files"] == 1  # the one file done is in, whole; nothing half-written
    if presses == 1:
        return
    again = subprocess.run([sys.executable, "-m", "memdeck.cli", "--workspace", str(ws), "index", "--json"],
                           cwd=REPO, env=env, capture_output=True, text=True, timeout=WAIT_CAP)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["files"] == 7 and assert_consistent(index)["files"] == 7


# -- doctor ------------------------------------------------------------------------------------------------
def _doctor(ws: Path, home: Path, *args: str, **popen: Any) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMDECK_HOME": str(home), "MEMDECK_EMBEDDING_PROVIDER": "hash"}
    return subprocess.run([sys.executable, "-m", "memdeck.cli", "--workspace", str(ws), "doctor", *args], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=WAIT_CAP, **popen)


def test_doctor_says_a_read_only_workspace_is_read_only(tmp_path: Path) -> None:
    """Real modes, also as root: doctor runs in a child that file modes bind (``obey_file_modes``)."""
    ws = _workspace(tmp_path, files=2)
    home = tmp_path / "home"
    for folder in (ws / "memory", ws):
        folder.chmod(0o555)
    try:
        text = _doctor(ws, home, preexec_fn=obey_file_modes())
        payload = json.loads(_doctor(ws, home, "--json", preexec_fn=obey_file_modes()).stdout)
    finally:
        for folder in (ws, ws / "memory"):
            folder.chmod(0o755)
    assert text.returncode == 1, text.stdout + text.stderr
    assert "No problems" not in text.stdout
    assert "WARN  workspace: the workspace is read-only: saves, flushes, appends and new notes would fail" in text.stdout
    assert f"not writable: {ws}" in text.stdout and f"not writable: {ws / 'memory'}" in text.stdout
    workspace = next(f for f in payload["findings"] if f["check"] == "workspace")
    assert payload["ok"] is False and workspace["severity"] == "warn" and workspace["fix"] is None
    assert "run `memdeck doctor --fix`" not in text.stdout  # --fix cannot make a folder writable


@pytest.mark.parametrize(("writable", "severity"), [(True, "ok"), (False, "warn")])
def test_the_workspace_check_asks_the_os_whether_it_can_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               writable: bool, severity: str) -> None:
    cfg = hash_config(_workspace(tmp_path, files=1))
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: (writable or not mode & os.W_OK) and real(p, mode, **kw))
    finding = next(f for f in diagnose(cfg).findings if f.check == "workspace")
    assert finding.severity == severity


def _report(*findings: Finding) -> DoctorReport:
    return DoctorReport("/ws", "/index.sqlite", findings)


SECRET = Finding("secrets", "warn", "1 possible secret in 1 memory file", 1, ("MEMORY.md:3 aws: AKIA…",))
TEMP = Finding("temp-files", "warn", "1 temp file from interrupted rebuilds", 1, ("x.rebuild-1",), "delete them")
READ_ONLY = Finding("workspace", "warn", "the workspace is read-only", 1)


@pytest.mark.parametrize(("findings", "last_line"), [
    ((SECRET,), "1 problem found: `--fix` cannot repair it; see above for what to do."),
    ((SECRET, READ_ONLY), "2 problems found: `--fix` cannot repair them; see above for what to do."),
    ((TEMP,), "1 problem found: run `memdeck doctor --fix` to repair it."),
    ((SECRET, TEMP), "2 problems found: `memdeck doctor --fix` repairs 1 of them; the rest needs you (see above)."),
])
def test_doctor_suggests_fix_only_for_what_fix_repairs(findings: tuple[Finding, ...], last_line: str) -> None:
    text = format_report(_report(*findings))
    assert text.splitlines()[-1] == last_line
    assert ("--fix: delete them" in text) == (TEMP in findings)


def test_doctor_on_secrets_names_the_lines_to_edit(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, files=1)
    (ws / "MEMORY.md").write_text("# Keys\n\n- aws key AKIA" + "Z7QF3XK2LM4NPQ8R\n", encoding="utf-8")
    cfg = hash_config(ws)
    with MemoryEngine(cfg) as eng:
        eng.sync()
    text = format_report(diagnose(cfg))
    assert "edit the lines named below" in text and "MEMORY.md:3" in text
    assert "run `memdeck doctor --fix`" not in text and text.splitlines()[-1].startswith("1 problem found: `--fix` cannot")


# -- counts in the singular ---------------------------------------------------------------------------------
COUNTED = re.compile(r"\{[^{}]+\}( bad)? (files|lines|bytes|chunks|entries|embeddings|inputs|tokens|msgs|chars|"
                     r"characters|statements|sessions|messages|attempts|transcripts|findings|results|problems|days|"
                     r"items|notes|candidates|duplicates|conflicts|retries|keys|secrets|folders|rows|"
                     r"vectors|words|hits|errors|warnings|memories|bindings|minutes|hours)\b")
# The other ways a plural gets written by hand: f"{n} file{'s' if n != 1 else ''}", "key(s)",
# 'memory' if n == 1 else 'memories'.
BY_HAND = re.compile(r"""['"]s['"] if [^:]*?!= ?1|['"]['"] if [^:]*?== ?1 else ['"]s['"]|(?<= )(?!len\b|str\b|repr\b|int\b|type\b)[a-z]+\(s\)(?=[ '",])|"""
                     r"""['"][a-z ]+['"] if [\w.()\[\]'"]+ [!=]= ?1 else ['"][a-z ]+['"]""")
AGREEMENT = {  # a word that agrees with a count written beside it through plural(): not a count of its own
    "engine/health/doctor.py": ('"it" if n == 1 else "them"',),
    "tui/screens/review.py": ("'is' if len(rest) == 1 else 'are'",),
    "tui/screens/recovery.py": ("'was' if n == 1 else 'were'",),
}
NEVER_ONE = {  # a count written by hand where it can never be 1 (a limit, or a count that is at least 2)
    "engine/config_rules.py": ("{self.max_len} characters", "{self.max_items} entries"),
    # OpenClaw 2026.9.6's own cut markers, verbatim: what the agent reads must be byte for byte OpenClaw's.
    "engine/bootstrap.py": ("{tail} chars", "{t} chars"),
    "engine/health/checks.py": ("{memory.limit:,} characters",),  # a limit
    "engine/review/detect.py": ("{len(members)} statements",),  # a duplicate group has two or more
    "engine/sessions/excerpt.py": ("{MAX_EXCERPT_CHARS:,} characters",),
    "engine/sessions/sources.py": ("{len(ids)} sessions",),  # an ambiguous id: two or more
    "engine/sessions/dbsource.py": ("{len(matches)} sessions",),
    "engine/sessions/reader.py": ("{raw.length:,} bytes",),  # over the line limit
    "engine/memory/llm.py": ("{len(lines)} messages",),  # "the last k of n", k < n
    "memdeck/mcp.py": ("{len(value)} characters",),  # over the maximum length
    "tui/screens/main.py": ("{longest:,} characters",),  # a line too long to edit
}


def test_no_count_message_writes_a_plural_by_hand() -> None:
    found = []
    for folder in ("engine", "memdeck", "tui"):
        for path in sorted((REPO / folder).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                for match in COUNTED.finditer(line):
                    if not any(ok in match.group(0) for ok in NEVER_ONE.get(rel, ())):
                        found.append(f"{rel}:{n}: {match.group(0)}")
                for match in BY_HAND.finditer(line):
                    if not any(match.group(0) in ok for ok in AGREEMENT.get(rel, ())):
                        found.append(f"{rel}:{n}: {match.group(0)}")
    assert not found, "use engine.display.plural: " + "; ".join(found)


def test_counts_of_one_read_in_the_singular(tmp_path: Path) -> None:
    from engine.display import plural
    from tui.bridge import token_text

    assert token_text(1, "usage") == "1 token (last turn usage)" and token_text(12345, None) == "12,345 tokens"
    assert (plural(1, "byte", grouped=True), plural(1234, "line", grouped=True)) == ("1 byte", "1,234 lines")
    ws = _workspace(tmp_path, files=0)
    (ws / "memory" / "odd.md").write_bytes(b"- caf\xe9 au lait\n")
    cfg = hash_config(ws)
    with MemoryEngine(cfg) as eng:
        issues = eng.sync().issues
    assert "memory/odd.md: 1 byte is not UTF-8; indexed the rest" in issues
    messages = [f.message for f in diagnose(cfg).findings]
    assert "the index is up to date (2 files)" in messages
    details = [d for f in diagnose(cfg).findings for d in f.details]
    assert "memory/odd.md: 1 byte not UTF-8" in details


# -- doctor names what cannot be written, and where ----------------------------------------------------------
def _deny_writes(monkeypatch: pytest.MonkeyPatch, *denied: Path) -> None:
    """``os.access`` says no to writing ``denied`` (as file modes or a read-only mount would, root included)."""
    real = os.access
    refused = {str(p) for p in denied}
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: not (mode & os.W_OK and str(p) in refused)
                        and real(p, mode, **kw))


@pytest.mark.parametrize(("case", "check", "severity", "said"), [
    ("memory-read-only", "workspace", "warn", "memory/ is read-only: flushes, appends, new notes"),
    ("root-read-only", "workspace", "warn", "the workspace folder is read-only: saves of MEMORY.md and USER.md"),
    ("both-read-only", "workspace", "warn", "the workspace is read-only"),
    ("empty-folder", "workspace", "info", "no memory here yet"),
    ("index-not-writable", "permissions", "error", "memdeck cannot write the index"),
    ("data-dir-not-writable", "permissions", "error", "memdeck cannot write its data folder"),
])
def test_doctor_names_what_cannot_be_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str,
                                             check: str, severity: str, said: str) -> None:
    ws = _workspace(tmp_path, files=1)
    cfg = hash_config(ws)
    with MemoryEngine(cfg) as eng:
        eng.sync()
    denied = {"memory-read-only": [ws / "memory"], "root-read-only": [ws], "both-read-only": [ws, ws / "memory"],
              "index-not-writable": [cfg.index_path], "data-dir-not-writable": [cfg.index_path.parent]}
    if case == "empty-folder":
        cfg = hash_config(tmp_path / "empty")
        (tmp_path / "empty").mkdir()
    _deny_writes(monkeypatch, *denied.get(case, []))
    report = diagnose(cfg)
    finding = next(f for f in report.findings if f.check == check)
    assert (finding.severity, said in finding.message) == (severity, True), finding
    for path in denied.get(case, []):
        assert any(str(path) in d for d in finding.details), finding.details
    text = format_report(report)
    assert ("No problems" in text) == (severity == "info")


def test_a_read_only_index_is_found_and_fixed(tmp_path: Path) -> None:
    """Real modes, also as root: a 400 index (which "readable by others" never flagged) is an error --fix repairs."""
    ws = _workspace(tmp_path, files=2)
    home = tmp_path / "home"
    assert _doctor(ws, home, "--fix").returncode == 0
    index = load_config(workspace=ws, home=home).index_path
    index.chmod(0o400)
    before = _doctor(ws, home, preexec_fn=obey_file_modes())
    assert before.returncode == 1, before.stdout + before.stderr
    assert "ERROR permissions: memdeck cannot write the index" in before.stdout
    assert f"not writable: {index} (is 400, want 600)" in before.stdout
    assert before.stdout.splitlines()[-1] == "1 problem found: run `memdeck doctor --fix` to repair it."
    fixed = _doctor(ws, home, "--fix", preexec_fn=obey_file_modes())
    assert f"chmod 600 {index}" in fixed.stdout and fixed.returncode == 0, fixed.stdout + fixed.stderr
