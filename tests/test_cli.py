"""The memdeck CLI: human and JSON output, exit codes, clear errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdeck.cli import cli


@pytest.fixture
def run(demo_workspace: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MEMDECK_EMBEDDING_PROVIDER", "hash")
    runner = CliRunner()

    def invoke(*args: str) -> tuple[int, str, str]:
        result = runner.invoke(cli, ["--workspace", str(demo_workspace), *args])
        return result.exit_code, result.stdout, result.stderr

    return invoke


def test_index_then_status_json(run) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run("index")
    assert code == 0 and out.startswith("Indexed 15 files · ") and "embedded" in out
    code, out, _ = run("status", "--json")
    st = json.loads(out)
    assert code == 0
    assert st["files_indexed"] == st["files_on_disk"] == 15
    assert st["provider"] == "hash" and st["requested_provider"] == "hash"
    assert st["vector_state"] in ("ready", "not-loaded") and st["fts_ready"] is True
    assert st["dirty_files"] == 0 and st["chunks"] > 0 and st["cache_entries"] > 0


def test_status_text(run) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run("status")
    assert code == 0
    for label in ("Workspace:", "Index:", "SQLite:", "Provider: hash", "Indexed:", "Dirty:", "Vector:", "FTS:"):
        assert label in out


def test_search_json_line_ranged(run) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run("search", "--json", "--mode", "keyword", "ERR_PG_53300")
    payload = json.loads(out)
    assert code == 0 and payload["mode"] == "keyword"
    top = payload["results"][0]
    assert top["path"] == "memory/2026-10-14.md" and top["startLine"] <= 4 <= top["endLine"]
    assert top["citation"] == f"memory/2026-10-14.md#L{top['startLine']}-L{top['endLine']}"
    assert top["snippetStartLine"] <= 4 <= top["snippetEndLine"]


def test_search_text_output(run) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run("search", "HERON-112")
    assert code == 0
    first = out.splitlines()[0]
    score, where = first.split()[:2]
    assert 0 <= float(score) <= 1 and ":" in where


def test_search_no_matches(run) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run("search", "--mode", "keyword", "zzzqqqxxx")
    assert code == 0 and out.strip() == "No matches."


@pytest.mark.parametrize("query", ['"', "NEAR(", "C++", "don't", "*", "x" * 5000])
def test_search_nasty_queries_exit_zero(run, query: str) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run("search", "--json", query)
    assert code == 0 and isinstance(json.loads(out)["results"], list)


def test_search_missing_query_is_usage_error(run) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run("search")
    assert code == 2 and "missing search query" in err


@pytest.mark.parametrize("query", ["", "   ", "\t\n"])
def test_search_blank_query_is_usage_error_as_in_mcp(run, query: str) -> None:  # type: ignore[no-untyped-def]
    """A blank query used to run: its embedding is noise, and hybrid 'found' the release checklist at 0.23."""
    code, out, err = run("search", query)
    assert code == 2 and "empty search query" in err and not out
    code, out, _ = run("search", "--json", "--query", query)
    assert code == 2 and json.loads(out)["ok"] is False


def test_get_and_refusal(run) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run("get", "memory/2026-10-23.md", "--from", "14", "--lines", "1", "--json")
    assert code == 0 and "violin" in json.loads(out)["text"]
    code, out, err = run("get", "../secret.md", "--json")
    assert code == 1 and json.loads(out)["disabled"] is True and "path refused" in err


def test_invalid_config_names_file_key_and_problem(tmp_path: Path, demo_workspace: Path) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text('[search]\nmax_results = "six"\n')
    result = CliRunner().invoke(cli, ["--config", str(cfg), "--workspace", str(demo_workspace), "status"])
    assert result.exit_code == 1
    assert str(cfg) in result.stderr and "search.max_results" in result.stderr and "integer" in result.stderr


def test_config_syntax_error(tmp_path: Path, demo_workspace: Path) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text("[search\n")
    result = CliRunner().invoke(cli, ["--config", str(cfg), "--workspace", str(demo_workspace), "status"])
    assert result.exit_code == 1 and str(cfg) in result.stderr


def test_demo_command_writes_workspace(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["demo", str(tmp_path / "d")])
    assert result.exit_code == 0 and "Demo workspace written to" in result.stdout
    assert (tmp_path / "d" / "MEMORY.md").exists() and list((tmp_path / "d" / "memory").glob("*.md"))
    assert list((tmp_path / "d" / "sessions").glob("*.jsonl"))


def test_console_script_keyword_search_in_a_subprocess(demo_workspace: Path) -> None:
    env = {**os.environ, "MEMDECK_EMBEDDING_PROVIDER": "none"}
    out = subprocess.run(
        [sys.executable, "-m", "memdeck.cli", "--workspace", str(demo_workspace), "search", "--json", "--mode",
         "keyword", "violin"], capture_output=True, text=True, env=env, check=True)
    assert json.loads(out.stdout)["results"][0]["path"] == "memory/2026-10-23.md"


def test_get_past_the_end_or_of_a_missing_note_says_why_it_is_empty_on_stderr(tmp_path: Path) -> None:
    from engine.config import load_config
    from engine.workspace import read_memory_slice

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n- one\n- two\n", encoding="utf-8")
    cfg = load_config(workspace=ws, home=tmp_path / "h")
    past = read_memory_slice(cfg, "MEMORY.md", 99, None)
    assert past.text == "" and past.note == "MEMORY.md has 3 lines: line 99 is past its end"
    assert past.to_json() == {"path": "MEMORY.md", "text": ""}  # memory_get's shape, unchanged
    assert read_memory_slice(cfg, "memory/1999-01-01.md").note == "memory/1999-01-01.md does not exist (yet)"
    assert read_memory_slice(cfg, "MEMORY.md", 3, 1).note is None  # a real line
    proc = subprocess.run([sys.executable, "-m", "memdeck", "-w", str(ws), "get", "MEMORY.md", "--from", "99"],
                          capture_output=True, text=True, env={**os.environ, "MEMDECK_HOME": str(tmp_path / "h")})
    assert proc.returncode == 0 and proc.stdout.strip() == ""
    assert "note: MEMORY.md has 3 lines: line 99 is past its end" in proc.stderr
