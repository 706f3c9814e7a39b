"""Privacy: private files and folders, keys never stored or shown, memory text shown as data, secrets found."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.api import MemoryEngine, save_state, state_path
from engine.config import load_config
from engine.display import safe_text as terminal_safe
from memdeck.cli import cli
from tests.helpers import hash_config

API_KEY = "sk-live-" + "7fQ2mZ9xK4pL8nR3vT6yW1bC5dH0jG"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The loosest umask: whatever comes out private was made private on purpose."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def _ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Preferences\n\n- Violin lessons on Thursdays.\n")
    (ws / "memory" / "2026-04-01.md").write_text("- deployed the heron service\n")
    return ws


def test_index_config_and_folders_are_private(tmp_path: Path, open_umask: None) -> None:
    home = tmp_path / "fresh" / "memdeck"  # neither folder exists yet
    ws = _ws(tmp_path)
    cfg = load_config(workspace=ws, home=home, overrides={"embedding": {"provider": "hash"}})
    with MemoryEngine(cfg) as eng:
        eng.sync()
        index = cfg.index_path
        assert _mode(home) == 0o700 and _mode(index.parent) == 0o700
        for path in (index, Path(str(index) + "-wal"), Path(str(index) + "-shm"),
                     index.with_name(index.name + ".lock")):
            assert _mode(path) == 0o600, path
        eng.sync(force=True)  # a rebuild replaces the content, never the permissions
        assert _mode(index) == 0o600
    config = state_path(cfg)  # the UI's remembered choices: memdeck never rewrites config.toml
    save_state(cfg, theme="nord")
    assert _mode(config) == 0o600 and _mode(config.parent) == 0o700
    assert _mode(tmp_path / "fresh") == 0o700, "every folder memdeck creates is private"


def test_recreated_index_after_corruption_is_private(tmp_path: Path, open_umask: None) -> None:
    cfg = hash_config(_ws(tmp_path))
    cfg.index_path.parent.mkdir(parents=True, exist_ok=True)
    cfg.index_path.write_bytes(b"garbage" * 1000)
    with MemoryEngine(cfg) as eng:
        eng.sync()
        assert eng.status().recovered
    assert _mode(cfg.index_path) == 0o600


def test_api_keys_never_reach_the_index_status_or_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _ws(tmp_path)
    config = tmp_path / "config.toml"
    config.write_text('[llm]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "local-model"\n'
                      'api_key_env = "MEMDECK_TEST_KEY"\n')
    monkeypatch.setenv("MEMDECK_TEST_KEY", API_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.setenv("MEMDECK_EMBEDDING_PROVIDER", "hash")
    runner = CliRunner()
    outputs = []
    for args in (["index"], ["status", "--json"], ["status"], ["search", "--json", "violin"], ["doctor", "--json"],
                 ["doctor", "--fix"], ["index", "--force", "--json"]):
        result = runner.invoke(cli, ["--config", str(config), "--workspace", str(ws), *args])
        outputs.append(result.stdout + result.stderr)
    assert not any(API_KEY in out for out in outputs)
    home = Path(os.environ["MEMDECK_HOME"])
    for path in home.rglob("*"):
        if path.is_file():
            assert API_KEY.encode() not in path.read_bytes(), path


NASTY = ("# Notes\n\n- violin \x1b]52;c;cm0gLXJmIH4=\x07 clipboard\n- violin \x1b[2J\x1b[H cleared\n"
         "- violin [bold red]markup[/bold red] and [link=file:///etc/passwd]x[/link]\n"
         "- violin \u202eevil\u202c bidi \x08\x08 backspace\n")


def test_memory_text_is_printed_as_data_not_terminal_commands(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _ws(tmp_path)
    (ws / "memory" / "nasty.md").write_text(NASTY)
    monkeypatch.setenv("MEMDECK_EMBEDDING_PROVIDER", "hash")
    runner = CliRunner()
    out = runner.invoke(cli, ["--workspace", str(ws), "search", "--mode", "keyword", "--max-results", "10",
                              "violin"]).stdout
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out and "\x08" not in out
    assert "\\x1b]52;c;" in out and "\\x1b[2J" in out and "\\u202e" in out
    assert "[bold red]markup[/bold red]" in out, "markup is shown literally, not interpreted"
    payload = json.loads(runner.invoke(cli, ["--workspace", str(ws), "search", "--json", "--mode", "keyword",
                                             "--max-results", "10", "violin"]).stdout)
    snippet = next(h["snippet"] for h in payload["results"] if h["path"] == "memory/nasty.md")
    assert "\x1b]52;c;cm0gLXJmIH4=\x07" in snippet, "JSON carries the exact text for agents"
    piped = runner.invoke(cli, ["--workspace", str(ws), "get", "--raw", "memory/nasty.md"]).stdout
    assert piped == NASTY + "\n", "memory_get through a pipe returns the exact bytes (--raw: text output escapes)"


def test_file_names_are_printed_as_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _ws(tmp_path)
    os.symlink(ws / "MEMORY.md", ws / "memory" / "\x1b[31mred.md")
    monkeypatch.setenv("MEMDECK_EMBEDDING_PROVIDER", "hash")
    out = CliRunner().invoke(cli, ["--workspace", str(ws), "status"]).stdout
    assert "\x1b" not in out and "\\x1b[31mred.md: symlink skipped" in out


@pytest.mark.parametrize("text,shown", [
    ("plain text", "plain text"),
    ("tab\tand\nnewline", "tab\tand\nnewline"),
    ("\x1b[2J", "\\x1b[2J"),
    ("bell\x07", "bell\\x07"),
    ("c1\x9b31m", "c1\\x9b31m"),
    ("del\x7f", "del\\x7f"),
    ("rtl\u202egnp.exe", "rtl\\u202egnp.exe"),
    ("isolate\u2066x\u2069", "isolate\\u2066x\\u2069"),
    ("数据库 🎻 café", "数据库 🎻 café"),
])
def test_terminal_safe(text: str, shown: str) -> None:
    assert terminal_safe(text) == shown


def test_doctor_shows_secrets_masked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _ws(tmp_path)
    (ws / "memory" / "setup.md").write_text(f"# Setup\n\n- export OPENAI_API_KEY={API_KEY}\n")
    monkeypatch.setenv("MEMDECK_EMBEDDING_PROVIDER", "hash")
    result = CliRunner().invoke(cli, ["--workspace", str(ws), "doctor"])
    assert result.exit_code == 1
    assert "WARN  secrets: 1 possible secret in 1 memory file" in result.stdout
    assert "memory/setup.md:3 env: " in result.stdout and API_KEY not in result.stdout
    assert "sk-liv…" in result.stdout


def test_remote_provider_credentials_never_reach_the_index_or_output(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _ws(tmp_path)
    config = tmp_path / "config.toml"
    config.write_text('[embedding]\nprovider = "openai"\nmodel = "text-embedding-3-small"\n'
                      'base_url = "http://memdeck:pw-in-url-SECRET@127.0.0.1:9/v1"\nmax_retries = 0\ntimeout = 1.0\n'
                      'api_key_env = "MEMDECK_TEST_EMBED_KEY"\n[embedding.headers]\nX-Api-Key = "header-SECRET-value"\n')
    monkeypatch.setenv("MEMDECK_TEST_EMBED_KEY", API_KEY)
    secrets = (API_KEY, "pw-in-url-SECRET", "header-SECRET-value")
    runner = CliRunner()
    outputs = []
    for args in (["index"], ["status", "--json"], ["search", "--json", "violin"], ["doctor", "--json"]):
        result = runner.invoke(cli, ["--config", str(config), "--workspace", str(ws), *args])
        outputs.append(result.stdout + result.stderr)
    assert not [s for s in secrets for out in outputs if s in out]
    home = Path(os.environ["MEMDECK_HOME"])
    for path in home.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert not [s for s in secrets if s.encode() in data], path
