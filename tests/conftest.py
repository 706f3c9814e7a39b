"""Shared fixtures: every test gets its own MEMDECK_HOME; nothing touches the real home directory."""

from __future__ import annotations

import fcntl
import os
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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests that embed the demo with the real model first: each takes a minute of one core, and started
    last they would keep the whole run waiting (the order within each group is kept)."""
    items.sort(key=lambda item: item.get_closest_marker("model") is None)


@pytest.fixture(scope="session")
def demo_model_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo workspace (``ws``) and its index (``home``) embedded once with the shipped default model, shared by
    every xdist worker of this run; for tests that only search it (a minute of embedding each otherwise)."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # the run's folder, not older runs'
    root = shared / "demo-model"
    with open(shared / "demo-model.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / "ready").exists():
            from engine.api import MemoryEngine
            from engine.config import load_config

            shutil.rmtree(root, ignore_errors=True)
            shutil.copytree(DEMO_SOURCE, root / "ws")
            with MemoryEngine(load_config(workspace=root / "ws", home=root / "home")) as eng:
                eng.sync(embed=True)
                assert not eng.store.has_pending(), "the shared demo index is fully embedded"
            (root / "ready").write_text("", encoding="utf-8")
    return root


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
