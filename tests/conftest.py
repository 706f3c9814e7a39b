"""Shared fixtures: every test gets its own MEMDECK_HOME; nothing touches the real home directory."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from engine.demo import DEMO_SOURCE


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("memdeck-home")
    monkeypatch.setenv("MEMDECK_HOME", str(home))
    import os

    for var in ("MEMDECK_WORKSPACE", "MEMDECK_SESSIONS", "MEMDECK_DISABLE_VEC", "MEMDECK_SQLITE_DRIVER",
                "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "MEMDECK_AGENT_DB_TIMEOUT", "MEMDECK_TODAY",
                "OPENCLAW_CONFIG_PATH",
                "MEMDECK_NOW"):
        monkeypatch.delenv(var, raising=False)
    # Session discovery looks in $OPENCLAW_STATE_DIR, else ~/.openclaw: never find the machine's real install.
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(home / "no-openclaw-state"))
    for var in [v for v in os.environ if v.startswith("MEMDECK_EMBEDDING_")]:
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def demo_workspace(tmp_path: Path) -> Path:
    """A private copy of the bundled demo workspace."""
    target = tmp_path / "demo"
    shutil.copytree(DEMO_SOURCE, target)
    return target


@pytest.fixture
def system_zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], None]]:
    """Set this process's system zone (``TZ``); the process's own zone is put back afterwards."""

    def set_zone(name: str) -> None:
        monkeypatch.setenv("TZ", name)
        time.tzset()

    yield set_zone
    monkeypatch.undo()
    time.tzset()
