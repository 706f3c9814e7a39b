"""The fast paths of the CLI and the freshness check: no numpy at start-up, `get` without the index, dirty files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engine.api import MemoryEngine
from engine.config import Config, load_config
from engine.demo import DEMO_SOURCE
from engine.workspace import memory_file_stats, scan_memory_files
from memdeck.cli import cli

HEAVY = ("numpy", "sqlite_vec", "torch", "sentence_transformers", "engine.memory.drafting", "memdeck.cli_sessions")

# Runs the real `memdeck` entry point in a fresh interpreter, then reports which heavy modules it imported.
PROBE = f"HEAVY = {HEAVY!r}\n" + """
import json, sys
sys.argv = ["memdeck", *sys.argv[1:]]
from memdeck.cli import main
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code or 0
print("\\nPROBE " + json.dumps({"code": code, "loaded": sorted(m for m in HEAVY if m in sys.modules),
                                "engine_api": "engine.api" in sys.modules}), file=sys.stderr)
"""


def _probe(args: list[str], env: dict[str, str]) -> tuple[dict[str, Any], str]:
    out = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=env,
                         check=False, timeout=120)
    line = [ln for ln in out.stderr.splitlines() if ln.startswith("PROBE ")][-1]
    return json.loads(line[len("PROBE "):]), out.stdout


def _clean_env(**extra: str) -> dict[str, str]:
    """This environment without memdeck or provider settings, plus ``extra``."""
    keep = {k: v for k, v in os.environ.items()
            if not k.startswith("MEMDECK_") and k not in ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")}
    return {**keep, **extra}


@pytest.fixture(scope="module")
def cli_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An indexed copy of the demo workspace and the environment a `memdeck` process needs to use it."""
    root = tmp_path_factory.mktemp("cli-speed")
    workspace = root / "demo"
    shutil.copytree(DEMO_SOURCE, workspace)
    env = _clean_env(MEMDECK_HOME=str(root / "home"), MEMDECK_WORKSPACE=str(workspace),
                     MEMDECK_EMBEDDING_PROVIDER="hash")
    out = subprocess.run([sys.executable, "-m", "memdeck.cli", "index"], capture_output=True, text=True, env=env,
                         check=False, timeout=120)
    assert out.returncode == 0, out.stderr
    return env


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        (["status"], "sqlite-vec v"),
        (["status", "--json"], '"vec_version": "v'),
        (["get", "memory/2026-10-23.md", "--from", "14", "--lines", "1"], "violin"),
        (["search", "--mode", "keyword", "--json", "violin"], '"path": "memory/2026-10-23.md"'),
        (["search", "--mode", "keyword", "zzqxwvyk"], "No matches."),
    ],
)
def test_cli_commands_import_no_numpy_sqlite_vec_or_session_tools(cli_env: dict[str, str], args: list[str],
                                                                   expect: str) -> None:
    report, stdout = _probe(args, cli_env)
    assert report["code"] == 0
    assert expect in stdout  # status shows sqlite-vec loaded: the extension came from its file, not the package
    assert report["loaded"] == []


def test_cli_get_reads_the_file_without_opening_the_index(demo_workspace: Path, tmp_path: Path) -> None:
    home = tmp_path / "never-indexed"
    env = _clean_env(MEMDECK_HOME=str(home), MEMDECK_WORKSPACE=str(demo_workspace))
    report, stdout = _probe(["get", "MEMORY.md", "--json"], env)
    assert report["code"] == 0 and not report["engine_api"]
    assert json.loads(stdout)["path"] == "MEMORY.md"
    assert not list(home.rglob("*.sqlite")), "get must not create or open an index"


@pytest.mark.parametrize(
    "args",
    [
        ["MEMORY.md"],
        ["memory/2026-10-23.md", "--from", "14", "--lines", "1"],
        ["memory/2026-10-23.md", "--from", "3"],
        ["memory/2026-10-23.md", "--lines", "2"],
        ["memory/2026-10-23.md", "--from", "9999"],
        ["memory/not-written-yet.md"],
    ],
)
def test_cli_get_matches_the_engine(demo_workspace: Path, args: list[str]) -> None:
    cfg = load_config(workspace=demo_workspace)
    opts = dict(zip(args[1::2], args[2::2], strict=True))
    from_line = int(opts["--from"]) if "--from" in opts else None
    lines = int(opts["--lines"]) if "--lines" in opts else None
    with MemoryEngine(cfg) as eng:
        expected = eng.get(args[0], from_line, lines).to_json()
    result = CliRunner().invoke(cli, ["--workspace", str(demo_workspace), "get", *args, "--json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout) == expected


@pytest.mark.parametrize("path", ["../secret.md", "memory/../../x.md", "notes.txt", "memory/a%2e%2e.md", "/etc/x.md"])
def test_cli_get_refuses_what_the_engine_refuses(demo_workspace: Path, path: str) -> None:
    result = CliRunner().invoke(cli, ["--workspace", str(demo_workspace), "get", path, "--json"])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["disabled"] is True and "path refused" in result.stderr


def test_sessions_and_flush_commands_are_still_listed_and_run() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    assert all(f"  {name} " in result.stdout for name in ("flush", "sessions", "status", "get", "search"))
    assert CliRunner().invoke(cli, ["flush", "--help"]).exit_code == 0
    assert CliRunner().invoke(cli, ["sessions", "--help"]).exit_code == 0


# -- the freshness check -----------------------------------------------------------------------------


def _bump(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000))


def _edit(ws: Path) -> set[str]:
    (ws / "memory" / "2026-10-23.md").write_text("- a changed line, same mtime bumped below\n")
    _bump(ws / "memory" / "2026-10-23.md")
    return {"memory/2026-10-23.md"}


def _touch_only(ws: Path) -> set[str]:
    _bump(ws / "MEMORY.md")
    return {"MEMORY.md"}


def _new_nested(ws: Path) -> set[str]:
    (ws / "memory" / "projects" / "deep").mkdir(parents=True, exist_ok=True)
    (ws / "memory" / "projects" / "deep" / "new.md").write_text("# new\n")
    return {"memory/projects/deep/new.md"}


def _deleted(ws: Path) -> set[str]:
    (ws / "memory" / "2026-10-23.md").unlink()
    return {"memory/2026-10-23.md"}


def _ignored(ws: Path) -> set[str]:
    (ws / "memory" / "node_modules").mkdir()
    (ws / "memory" / "node_modules" / "x.md").write_text("skipped folder\n")
    (ws / "memory" / "notes.txt").write_text("not Markdown\n")
    (ws / "memory" / "link.md").symlink_to(ws / "MEMORY.md")
    (ws / "memory" / "folder.md").mkdir()
    return set()


def _new_session(ws: Path) -> set[str]:
    (ws / "sessions" / "zz-new.jsonl").write_text('{"type":"session","id":"zz"}\n')
    return {"sessions/zz-new.jsonl"}


def _session_link(ws: Path) -> set[str]:
    (ws / "sessions" / "link.jsonl").symlink_to(ws / "MEMORY.md")
    return set()


@pytest.mark.parametrize(
    ("change", "sources"),
    [
        (lambda ws: set(), ("memory",)),
        (_edit, ("memory",)),
        (_touch_only, ("memory",)),
        (_new_nested, ("memory",)),
        (_deleted, ("memory",)),
        (_ignored, ("memory",)),
        (_new_session, ("memory", "sessions")),
        (_new_session, ("memory",)),  # sessions not a source: not dirty
        (_session_link, ("memory", "sessions")),
    ],
)
def test_dirty_files_fast_path_agrees_with_the_scan(demo_workspace: Path, change: Any,
                                                    sources: tuple[str, ...]) -> None:
    cfg = load_config(workspace=demo_workspace, sessions_dir=demo_workspace / "sessions",
                      overrides={"embedding": {"provider": "hash"}, "sources": list(sources)})
    with MemoryEngine(cfg) as eng:
        eng.sync()
        assert eng.dirty_files() == []
        expected = change(demo_workspace)
        if "sessions" not in sources:
            expected = {p for p in expected if not p.startswith("sessions/")}
        fast = eng.dirty_files()
        assert set(fast) == expected
        assert fast == eng.dirty_files(eng.scan())
        assert eng.status().dirty_files == len(expected)
        eng.sync()
        assert eng.dirty_files() == []


def _layout(root: Path) -> Config:
    ws = root / "ws"
    (ws / "memory" / "a" / "b").mkdir(parents=True)
    (ws / "memory" / ".git").mkdir()
    (ws / "MEMORY.md").write_text("root\n")
    (ws / "memory" / "z.md").write_text("z\n")
    (ws / "memory" / "a" / "y.md").write_text("y\n")
    (ws / "memory" / "a" / "b" / "x.md").write_text("x\n")
    (ws / "memory" / ".git" / "HEAD.md").write_text("skipped\n")
    (ws / "memory" / "hard.md").hardlink_to(ws / "memory" / "z.md")
    extra = root / "extra"
    (extra / "deep").mkdir(parents=True)
    (extra / "deep" / "e.md").write_text("e\n")
    (root / "single.md").write_text("single\n")
    return load_config(workspace=ws, overrides={"embedding": {"provider": "none"},
                                                "extra_paths": [str(extra), str(root / "single.md")]})


def test_memory_file_stats_lists_exactly_what_the_scan_lists(tmp_path: Path) -> None:
    cfg = _layout(tmp_path)
    scan = scan_memory_files(cfg)
    stats = memory_file_stats(cfg)
    assert list(stats) == [f.rel for f in scan.files]
    assert stats == {f.rel: (f.mtime_ns, f.size) for f in scan.files}
    # Folder by folder, files before sub-folders, sorted; .git skipped; a hard link counted once.
    assert list(stats) == ["MEMORY.md", "memory/hard.md", "memory/a/y.md", "memory/a/b/x.md",
                           (tmp_path / "extra" / "deep" / "e.md").as_posix(), (tmp_path / "single.md").as_posix()]


_SCAN_AS_NOBODY = """
import json, os, sys
from engine.config import load_config
from engine.workspace import memory_file_stats, scan_memory_files
cfg = load_config(workspace=sys.argv[1], overrides={"embedding": {"provider": "none"}})
os.setgid(65534)
os.setuid(65534)  # root reads every file: drop to nobody so the permission bits mean what they say
print(json.dumps({"stats": list(memory_file_stats(cfg)), "issues": scan_memory_files(cfg).issues}))
"""


def test_unreadable_file_is_an_issue_not_a_file(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        # As root (CI) the check runs in a child that drops to nobody; its workspace must be reachable by it.
        root = Path(tempfile.mkdtemp(prefix="memdeck-perm-"))
        root.chmod(0o755)
        try:
            cfg = _layout(root)
            (cfg.workspace / "memory" / "z.md").chmod(0)
            env = {**os.environ, "MEMDECK_HOME": str(root / "home")}
            out = subprocess.run([sys.executable, "-c", _SCAN_AS_NOBODY, str(cfg.workspace)], capture_output=True,
                                 text=True, env=env, cwd=str(root))
            assert out.returncode == 0, out.stderr
            seen = json.loads(out.stdout)
            stats, issues = seen["stats"], seen["issues"]
        finally:
            shutil.rmtree(root, ignore_errors=True)
    else:
        cfg = _layout(tmp_path)
        secret = cfg.workspace / "memory" / "z.md"
        secret.chmod(0)
        try:
            stats, issues = list(memory_file_stats(cfg)), scan_memory_files(cfg).issues
        finally:
            secret.chmod(0o644)
    assert "memory/z.md" not in stats and "memory/hard.md" not in stats  # one unreadable inode, two names
    assert "MEMORY.md" in stats and "memory/a/y.md" in stats
    assert any(i.startswith("memory/hard.md: not readable") or i.startswith("memory/z.md: not readable")
               for i in issues), issues


def test_workspace_moved_away_reports_everything_deleted(demo_workspace: Path, tmp_path: Path) -> None:
    cfg = load_config(workspace=demo_workspace, overrides={"embedding": {"provider": "hash"}})
    with MemoryEngine(cfg) as eng:
        eng.sync()
        indexed = eng.store.counts()["files"]
        shutil.move(str(demo_workspace), str(tmp_path / "moved"))
        assert len(eng.dirty_files()) == indexed
        assert eng.dirty_files() == eng.dirty_files(eng.scan())


@pytest.mark.parametrize("sources", [("memory",), ("memory", "sessions")])
def test_status_counts_and_issues_match_the_scan(tmp_path: Path, sources: tuple[str, ...]) -> None:
    cfg = _layout(tmp_path)
    (cfg.workspace / "memory" / "link.md").symlink_to(cfg.workspace / "MEMORY.md")
    cfg = load_config(workspace=cfg.workspace, sessions_dir=tmp_path / "no-sessions-here",
                      overrides={"embedding": {"provider": "hash"}, "sources": list(sources),
                                 "extra_paths": [str(tmp_path / "extra"), str(tmp_path / "single.md")]})
    with MemoryEngine(cfg) as eng:
        eng.sync()
        (cfg.workspace / "memory" / "a" / "new.md").write_text("new\n")
        scan = eng.scan()
        st = eng.status()
        assert st.files_on_disk == len(scan.files) == st.files_indexed + 1
        assert st.dirty_files == 1
        assert st.issues == scan.issues
        assert "memory/link.md: symlink skipped" in st.issues
        assert any(i.startswith("sessions directory missing") for i in st.issues) == ("sessions" in sources)
