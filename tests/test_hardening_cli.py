"""Issue 16, hardening the doors: bad inputs are clear errors with exact exit codes, JSON commands answer in JSON,
nothing a terminal would obey is printed, odd file names and big files are skipped and reported, never indexed."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.api import MemoryEngine
from engine.config import load_config
from engine.display import plural
from engine.errors import ConfigError
from engine.index.chunking import chunk_markdown
from engine.index.indexer import SyncProgress
from engine.workspace import WorkspaceUnavailable, scan_memory_files
from memdeck.cli import ProgressLines, cli
from tests.helpers import hash_config

REPO = Path(__file__).resolve().parent.parent
SESSION_LINES = [
    {"type": "session", "version": 3, "id": "5f0c2b1e-0000-4000-8000-000000000001",
     "timestamp": "2026-03-01T09:00:00.000Z", "cwd": "/tmp"},
    {"type": "message", "id": "m1", "parentId": None, "timestamp": "2026-03-01T09:00:05.000Z",
     "message": {"role": "user", "content": [{"type": "text", "text": "I prefer tea over coffee in the mornings."}]}},
]
UNSAFE = {0x1B, 0x07, *range(0x80, 0xA0)}  # ESC, BEL and the C1 controls (8-bit CSI, OSC, ST, ...)


# -- helpers --------------------------------------------------------------------------------------------------------


class Home:
    """A temp HOME and MEMDECK_HOME with a small workspace and a sessions folder, and a way to run `memdeck`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "memdeck-home"
        self.ws = root / "ws"
        self.sessions = root / "sessions"
        (self.ws / "memory").mkdir(parents=True)
        self.sessions.mkdir()
        (self.ws / "MEMORY.md").write_text("# Preferences\n\n- Violin lessons on Thursdays.\n")
        (self.ws / "memory" / "2026-03-01.md").write_text("- deployed the heron service\n")
        (self.sessions / "5f0c2b1e-0000-4000-8000-000000000001.jsonl").write_text(
            "".join(json.dumps(line) + "\n" for line in SESSION_LINES))

    def env(self, **extra: str) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items() if not k.startswith("MEMDECK_")
                and k not in ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")}
        return {**keep, "HOME": str(self.root), "MEMDECK_HOME": str(self.home), "MEMDECK_EMBEDDING_PROVIDER": "hash",
                **extra}

    def run(self, *args: str, workspace: Path | str | None = None, **env: str) -> subprocess.CompletedProcess[str]:
        """``python -m memdeck.cli --workspace <ws> --sessions <sessions> ARGS`` in a subprocess."""
        ws = self.ws if workspace is None else workspace
        head = ["--workspace", str(ws), "--sessions", str(self.sessions)] if ws != "" else []
        return subprocess.run([sys.executable, "-m", "memdeck.cli", *head, *args], capture_output=True, text=True,
                              env=self.env(**env), cwd=REPO, timeout=180, check=False)

    def memory_snapshot(self) -> dict[str, bytes]:
        return {p.relative_to(self.root).as_posix(): p.read_bytes()
                for p in sorted(self.root.rglob("*")) if p.is_file() and self.home not in p.parents}


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home(tmp_path)


def _no_raw_controls(text: str) -> bool:
    return not any(ord(ch) in UNSAFE for ch in text)


# -- 7. flush of something that is not a transcript -------------------------------------------------------------------


def _not_a_transcript(home: Home, kind: str) -> Path:
    path = home.root / f"{kind}.jsonl"
    if kind == "passwd":
        path.write_text("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n")
    elif kind == "random":
        path.write_bytes(random.Random(16).randbytes(4096))
    else:
        path.write_bytes(b"")
    return path


@pytest.mark.parametrize("mode", [["--note"], [], ["--note", "--json"], ["--json"]], ids=["note", "flush", "note-json",
                                                                                      "flush-json"])
@pytest.mark.parametrize("kind", ["passwd", "random", "empty"])
def test_flush_of_a_file_that_is_not_a_transcript_is_an_error_and_writes_nothing(home: Home, kind: str,
                                                                                 mode: list[str]) -> None:
    path = _not_a_transcript(home, kind)
    before = home.memory_snapshot()
    out = home.run("flush", str(path), *mode)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "not a session transcript" in out.stderr and "nothing to flush" in out.stderr
    if "--json" in mode:
        payload = json.loads(out.stdout)
        assert payload["ok"] is False and "not a session transcript" in payload["error"]
    else:
        assert "Wrote" not in out.stdout and out.stdout == ""
    assert home.memory_snapshot() == before, "no note, no daily file"
    assert not (home.home / "flush-state.json").exists(), "no flush recorded"


def test_flush_of_a_session_without_messages_is_an_error(home: Home) -> None:
    header_only = home.sessions / "6a6a6a6a-0000-4000-8000-000000000002.jsonl"
    header_only.write_text(json.dumps({**SESSION_LINES[0], "id": "6a6a6a6a-0000-4000-8000-000000000002"}) + "\n")
    out = home.run("flush", "6a6a6a6a", "--note")
    assert out.returncode == 1 and "session 6a6a6a6a has no messages yet" in out.stderr
    assert not list((home.ws / "memory").glob("*-*-*-*.md"))


# -- 8. a missing or unusable workspace ------------------------------------------------------------------------------

COMMANDS = [["status"], ["index"], ["search", "violin"], ["doctor"], ["get", "MEMORY.md"], ["sessions"],
            ["flush", "5f0c2b1e", "--dry-run"]]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
@pytest.mark.parametrize("state", ["missing", "a file"])
def test_a_missing_or_file_workspace_is_an_error_for_every_command(home: Home, state: str, args: list[str]) -> None:
    ws = home.root / "nowhere"
    if state == "a file":
        ws.write_text("not a folder\n")
    out = home.run(*args, workspace=ws)
    assert out.returncode == 1, out.stdout + out.stderr
    problem = "workspace missing" if state == "missing" else "workspace is not a folder"
    assert f"memdeck: {problem} ({ws})" in out.stderr
    assert "No problems found" not in out.stdout and out.stdout == ""


def test_index_after_the_workspace_vanished_keeps_the_index(home: Home) -> None:
    assert home.run("index").returncode == 0
    cfg = load_config(workspace=home.ws, home=home.home)
    shutil.move(home.ws, home.root / "ws-moved")  # unmounted, renamed: the files are not gone
    out = home.run("index")
    assert out.returncode == 1 and f"workspace missing ({home.ws})" in out.stderr
    out = home.run("index", "--force", "--json")
    assert out.returncode == 1 and json.loads(out.stdout)["ok"] is False
    shutil.move(home.root / "ws-moved", home.ws)
    with MemoryEngine(cfg) as eng:
        assert eng.store.counts()["files"] == 2, "the index kept every row"


@pytest.mark.parametrize("force", [False, True])
def test_sync_refuses_when_the_workspace_root_is_gone(tmp_path: Path, force: bool) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("- violin\n")
    (ws / "memory" / "2026-03-01.md").write_text("- heron\n")
    cfg = hash_config(ws)
    with MemoryEngine(cfg) as eng:
        eng.sync()
        shutil.rmtree(ws)
        with pytest.raises(WorkspaceUnavailable, match="workspace missing"):
            eng.sync(force=force)
        assert eng.store.counts()["files"] == 2
        assert [h.path for h in eng.search("violin", mode="keyword", ensure_fresh=False).results] == ["MEMORY.md"]
        ws.write_text("now a file")
        with pytest.raises(WorkspaceUnavailable, match="workspace is not a folder"):
            eng.sync()
        assert eng.store.counts()["files"] == 2


# -- 9. --config and --workspace values ------------------------------------------------------------------------------


def test_a_config_file_that_does_not_exist_is_an_error(home: Home) -> None:
    missing = home.root / "nonexistent.toml"
    out = home.run("--config", str(missing), "status")
    assert out.returncode == 1 and f"memdeck: config file not found: {missing}" in out.stderr and out.stdout == ""


@pytest.mark.parametrize("option", ["--workspace", "--sessions", "--config"])
def test_an_empty_path_option_is_a_usage_error(home: Home, option: str) -> None:
    out = home.run(option, "", "status", workspace="")
    assert out.returncode == 2 and "must not be empty" in out.stderr and option in out.stderr


@pytest.mark.parametrize("command", [["sessions"], ["flush", "5f0c2b1e"]])
def test_an_empty_sessions_folder_option_of_a_command_is_a_usage_error(home: Home, command: list[str]) -> None:
    out = home.run(*command, "--sessions", "")
    assert out.returncode == 2 and "must not be empty" in out.stderr


def test_a_huge_integer_in_the_config_is_a_config_error(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text("[search]\nmax_results = " + "9" * 5000 + "\n")
    with pytest.raises(ConfigError, match="syntax"):
        load_config(workspace=tmp_path, config_path=cfg)


# -- 11. every --json command answers in JSON -------------------------------------------------------------------------


def _json_cases(home: Home) -> list[tuple[str, list[str], dict[str, Any], int]]:
    """(command, arguments, run options, exit code): one error case per command that has --json, and more."""
    nowhere = {"workspace": home.root / "nowhere"}
    passwd = str(_not_a_transcript(home, "passwd"))
    return [
        ("status", ["status", "--json"], nowhere, 1),
        ("index", ["index", "--json"], nowhere, 1),
        ("search", ["search", "--json", "violin"], nowhere, 1),
        ("search", ["search", "--json"], {}, 2),
        ("search", ["search", "--json", "--min-score", "nan", "violin"], {}, 2),
        ("search", ["search", "--json", "--max-results", "0", "violin"], {}, 2),
        ("get", ["get", "--json", "../secret.md"], {}, 1),
        ("get", ["get", "--json", "MEMORY.md"], nowhere, 1),
        ("doctor", ["doctor", "--json"], nowhere, 1),
        ("sessions", ["sessions", "--json", "--sessions", str(home.root / "no-sessions")], {}, 1),
        ("sessions", ["sessions", "--json"], nowhere, 1),
        ("flush", ["flush", "--json", "zzzz"], {}, 1),
        ("flush", ["flush", "--json", passwd, "--note"], {}, 1),
        ("flush", ["flush", "--json", "5f0c2b1e", "--llm"], {}, 2),
        ("flush", ["flush", "--json", "5f0c2b1e", "--llm", "--extractive"], {}, 2),
        ("status", ["--config", str(home.root / "none.toml"), "status", "--json"], {}, 1),
        ("review", ["review", "--json"], nowhere, 1),
        ("review", ["review", "--json", "--since", "not-a-date"], {}, 2),
        ("audit", ["audit", "--json"], nowhere, 1),
        ("audit", ["audit", "--json", "--since", "not-a-date"], {}, 2),
        ("audit", ["audit", "--json", "--session", "zzzz"], {}, 1),
    ]


def _commands_with_json() -> set[str]:
    ctx = click.Context(cli)
    found = set()
    for name in cli.list_commands(ctx):
        command = cli.get_command(ctx, name)
        assert command is not None
        if any("--json" in getattr(p, "opts", ()) for p in command.params):
            found.add(name)
    return found


def test_every_command_with_json_answers_errors_as_json(home: Home) -> None:
    cases = _json_cases(home)
    assert {name for name, *_ in cases} == _commands_with_json(), "a command with --json has no error case here"
    failures = []
    for name, args, options, code in cases:
        out = home.run(*args, **options)
        try:
            payload = json.loads(out.stdout)
        except ValueError:
            failures.append(f"{args}: stdout is not JSON: {out.stdout!r} (stderr {out.stderr!r})")
            continue
        shape_ok = payload.get("ok") is False and isinstance(payload.get("error"), str) and payload["error"]
        if out.returncode != code or not shape_ok or not out.stderr.strip():
            failures.append(f"{name} {args}: rc {out.returncode} (want {code}), payload {payload}")
    assert not failures, "\n".join(failures)


# -- 12. nothing a terminal obeys ------------------------------------------------------------------------------------

HOSTILE = ("# Notes\n\n- violin \x1b]0;PWNED\x07 title\n- violin \x1b[2J\x1b[H cleared\n"
           "- violin \x1b]52;c;cm0gLXJmIH4=\x07 clipboard\n- violin \x9b31m c1 csi \x9d8;;x\x9c\n")


def test_get_shows_escape_sequences_as_text(home: Home) -> None:
    (home.ws / "memory" / "hostile.md").write_text(HOSTILE)
    out = home.run("get", "memory/hostile.md")
    assert out.returncode == 0 and _no_raw_controls(out.stdout)
    assert "\\x1b]0;PWNED\\x07" in out.stdout and "\\x1b[2J" in out.stdout and "\\x1b]52;c;" in out.stdout
    assert "\\x9b31m" in out.stdout
    assert json.loads(home.run("get", "--json", "memory/hostile.md").stdout)["text"] == HOSTILE, "JSON stays exact"
    assert home.run("get", "--raw", "memory/hostile.md").stdout == HOSTILE + "\n", "--raw gives the exact text"


def test_search_status_doctor_and_sessions_show_escape_sequences_as_text(home: Home) -> None:
    (home.ws / "memory" / "hostile.md").write_text(HOSTILE)
    bad_session = home.sessions / "\x1b]0;PWNED\x07.jsonl"
    bad_session.write_text("".join(json.dumps(line) + "\n" for line in SESSION_LINES) + "\x1b[2J not json\n")
    outputs = {args[0]: home.run(*args) for args in (["search", "--mode", "keyword", "violin"], ["status"],
                                                     ["doctor"], ["sessions"], ["index"])}
    for name, out in outputs.items():
        assert _no_raw_controls(out.stdout + out.stderr), name
    assert "\\x1b]0;PWNED\\x07" in outputs["search"].stdout
    assert "\\x1b]0;PWNE" in outputs["sessions"].stdout, "the id (the file name) is shown escaped"


def test_terminal_safe_is_gone_in_favour_of_display_safe_text() -> None:
    import engine.textio

    assert not hasattr(engine.textio, "terminal_safe")


names = st.text(alphabet=st.one_of(st.sampled_from(["\x1b", "\x07", "\x9b", "\x9d", "\x85", "\n", "\t", "\u202e",
                                                    "[", "]", ";", "0"]),
                                   st.characters(min_codepoint=0x20, max_codepoint=0x24F)),
                min_size=1, max_size=12).filter(lambda n: "/" not in n and n not in (".", ".."))
contents = st.lists(st.one_of(st.characters(min_codepoint=0, max_codepoint=0xA0),
                              st.sampled_from(["\u202e", "\u2066", "violin ", "\n", "\x1b]52;c;", "\x1b[2J"])),
                    max_size=60).map("".join)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=names, text=contents)
def test_no_cli_text_output_carries_a_raw_control_character(name: str, text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ws, sessions = root / "ws", root / "sessions"
        (ws / "memory").mkdir(parents=True)
        sessions.mkdir()
        (ws / "MEMORY.md").write_text("violin " + text + "\n")
        (ws / "memory" / f"{name}.md").write_text("violin " + text + "\n")
        lines = [SESSION_LINES[0], {**SESSION_LINES[1], "message": {"role": "user", "content": text + " violin"}}]
        (sessions / f"{name}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines) + text + "\n")
        runner = CliRunner(env={"MEMDECK_HOME": str(root / "home"), "MEMDECK_EMBEDDING_PROVIDER": "none"})
        head = ["--workspace", str(ws), "--sessions", str(sessions)]
        for args in (["get", "MEMORY.md"], ["get", f"memory/{name}.md"], ["search", "--mode", "keyword", "violin"],
                     ["sessions"], ["status"]):
            result = runner.invoke(cli, [*head, *args])
            assert result.exit_code in (0, 1), (args, result.output, result.exception)
            assert _no_raw_controls(result.stdout + result.stderr), (args, result.stdout, result.stderr)


# -- 13. file names with control characters --------------------------------------------------------------------------


def test_a_name_with_a_newline_is_skipped_and_reported_escaped(home: Home) -> None:
    (home.ws / "memory" / "new\nline.md").write_text("- zebracorn sighting\n")
    (home.ws / "memory" / "bell\x07.md").write_text("- zebracorn again\n")
    assert home.run("index").returncode == 0
    found = json.loads(home.run("search", "--json", "--mode", "keyword", "zebracorn").stdout)
    assert found["results"] == [], "never indexed, so never found with a path split over two lines"
    status = home.run("status").stdout
    assert "  memory/new\\nline.md: file name has control or line-break characters; not indexed\n" in status
    assert "memory/bell\\x07.md: file name has control" in status
    issues = json.loads(home.run("status", "--json").stdout)["issues"]
    assert "memory/new\nline.md: file name has control or line-break characters; not indexed" in issues
    doctor = home.run("doctor").stdout
    assert "memory/new\\nline.md: file name has control" in doctor
    cfg = load_config(workspace=home.ws, home=home.home)
    assert [f.rel for f in scan_memory_files(cfg).files] == ["MEMORY.md", "memory/2026-03-01.md"]


def test_a_session_file_name_with_control_characters_is_not_indexed(home: Home) -> None:
    (home.sessions / "odd\nname.jsonl").write_text("".join(json.dumps(line) + "\n" for line in SESSION_LINES))
    cfg = load_config(workspace=home.ws, home=home.home, sessions_dir=home.sessions,
                      overrides={"sources": ["memory", "sessions"]})
    from engine.sessions.scan import scan_sources

    scan = scan_sources(cfg)
    assert not [f for f in scan.files if "odd" in f.rel]
    assert "sessions/odd\nname.jsonl: file name has control or line-break characters; not indexed" in scan.issues


def test_a_name_that_is_not_utf8_is_reported_as_such(home: Home) -> None:
    """Undecodable bytes in a name are not control characters: the message says what is wrong with it."""
    odd = os.fsencode(home.ws / "memory") + b"/caf\xe9.md"
    with open(odd, "wb") as f:
        f.write(b"- zebracorn\n")
    (home.sessions / os.fsdecode(b"s\xff.jsonl")).write_text(
        "".join(json.dumps(line) + "\n" for line in SESSION_LINES))
    cfg = load_config(workspace=home.ws, home=home.home, sessions_dir=home.sessions,
                      overrides={"sources": ["memory", "sessions"]})
    from engine.sessions.scan import scan_sources

    issues = scan_sources(cfg).issues
    assert "memory/caf\udce9.md: file name is not valid UTF-8 (its odd bytes shown escaped); rename it to index it" \
        in issues
    assert any(issue.startswith("sessions/s\udcff.jsonl: file name is not valid UTF-8") for issue in issues)
    status = home.run("status")
    assert status.returncode == 0 and "file name is not valid UTF-8" in status.stdout


# -- 3. big inputs ---------------------------------------------------------------------------------------------------


def test_a_file_over_max_file_bytes_is_skipped_and_reported(home: Home) -> None:
    with open(home.ws / "memory" / "big30.md", "wb") as fh:
        fh.truncate(30 * 1024 * 1024)  # sparse: 30 MB on paper, nothing on disk
    out = home.run("index")
    assert out.returncode == 0
    message = "memory/big30.md: 30.0 MB, over max_file_bytes 4 MB: not indexed"
    assert message in out.stderr
    assert f"  {message}\n" in home.run("status").stdout
    assert message in home.run("doctor").stdout
    assert json.loads(home.run("index", "--json").stdout)["files"] == 2


def test_max_file_bytes_is_configurable_and_checked(home: Home) -> None:
    (home.ws / "memory" / "notes.md").write_text("- zebracorn\n" * 200)  # 2.3 KB
    config = home.root / "config.toml"
    config.write_text("[index]\nmax_file_bytes = 2048\n")
    cfg = load_config(workspace=home.ws, home=home.home, config_path=config)
    scan = scan_memory_files(cfg)
    assert "memory/notes.md" not in [f.rel for f in scan.files]
    assert "memory/notes.md: 2.3 KB, over max_file_bytes 2 KB: not indexed" in scan.issues
    config.write_text("[index]\nmax_file_bytes = 0\n")
    out = home.run("--config", str(config), "status")
    assert out.returncode == 1 and "index.max_file_bytes: must be at least 1024" in out.stderr


def test_the_chunker_hard_splits_a_very_long_line() -> None:
    line = "zebracorn " * 200_000  # one 2 MB line
    chunks = chunk_markdown("# Log\n\n" + line + "\n", tokens=400, overlap=80)
    assert len(chunks) > 1000
    assert max(len(c.text) for c in chunks) <= 400 * 4
    assert "".join(c.text for c in chunks if c.start_line == 3) == line


def test_index_progress_lines_are_throttled_by_the_clock() -> None:
    now = [100.0]
    lines: list[str] = []
    progress = ProgressLines(lines.append, every=5.0, clock=lambda: now[0])

    def feed(phase: str, done: int, total: int) -> None:
        progress(SyncProgress(phase, done, total))

    feed("files", 1, 1000)
    now[0] += 4.9
    feed("files", 2, 1000)
    assert lines == [], "a quick index prints no progress"
    now[0] += 0.2
    feed("files", 500, 1000)
    now[0] += 1.0
    feed("files", 600, 1000)
    now[0] += 5.0
    feed("embed", 30, 120)
    assert lines == ["… indexing files: 500/1000 (50%)", "… embedding chunks: 30/120 (25%)"]


def test_index_without_a_terminal_prints_progress_lines(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    import memdeck.cli as cli_module

    ticks = iter(range(0, 10_000, 10))  # every reading of the clock is 10 s later: every update is due
    monkeypatch.setattr(cli_module, "ProgressLines", _fast(cli_module.ProgressLines, lambda: float(next(ticks))))
    result = CliRunner(env={"MEMDECK_EMBEDDING_PROVIDER": "hash"}).invoke(cli, ["--workspace", str(home.ws), "index"])
    assert result.exit_code == 0, result.output
    assert "… indexing files: 2/2 (100%)" in result.stderr
    assert result.stdout.startswith("Indexed 2 files · ")


def _fast(cls: type, clock: Callable[[], float]) -> Callable[..., Any]:
    def make(write: Callable[[str], None], every: float = 5.0) -> Any:
        return cls(write, every, clock)

    return make


# -- 14. plurals and option values -----------------------------------------------------------------------------------


def test_plural() -> None:
    assert [plural(n, "file") for n in (0, 1, 2)] == ["0 files", "1 file", "2 files"]
    assert plural(1, "candidate memory", "candidate memories") == "1 candidate memory"
    assert plural(3, "entry", "entries") == "3 entries"


def test_cli_text_says_1_file_not_1_files(home: Home) -> None:
    (home.ws / "memory" / "2026-03-01.md").unlink()
    out = home.run("index")
    assert out.stdout.startswith("Indexed 1 file · 1 chunk (")
    (home.ws / "MEMORY.md").write_text("- changed\n")
    status = home.run("status").stdout
    assert "Indexed: 1/1 file · 1 chunk" in status and "Dirty: yes (1 file)" in status


def test_a_session_with_one_bad_line_says_1_bad_line(home: Home) -> None:
    path = home.sessions / "5f0c2b1e-0000-4000-8000-000000000001.jsonl"
    path.write_text(path.read_text() + "{not json\n")
    out = home.run("sessions")
    assert out.returncode == 0 and "1 bad line" in out.stdout and "1 bad lines" not in out.stdout


def test_llm_and_extractive_together_is_a_usage_error(home: Home) -> None:
    out = home.run("flush", "5f0c2b1e", "--llm", "--extractive")
    assert out.returncode == 2 and "--llm and --extractive cannot be used together" in out.stderr


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "1.5", "-0.1", "zero"])
def test_a_min_score_that_is_not_a_number_from_0_to_1_is_a_usage_error(home: Home, value: str) -> None:
    out = home.run("search", "--min-score", value, "violin")
    assert out.returncode == 2, out.stdout + out.stderr
    assert "--min-score" in out.stderr and "a finite number from 0 to 1" in out.stderr


@pytest.mark.parametrize("args", [["search", "--max-results", "0", "x"], ["search", "--max-results", "nan", "x"],
                                  ["get", "MEMORY.md", "--from", "0"], ["get", "MEMORY.md", "--lines", "-1"],
                                  ["flush", "5f0c2b1e", "--messages", "0"], ["mcp", "--http", "70000"]])
def test_other_numeric_flags_are_checked_too(home: Home, args: list[str]) -> None:
    out = home.run(*args)
    assert out.returncode == 2 and "Invalid value" in out.stderr
