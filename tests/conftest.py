"""Shared fixtures: every test gets its own MEMDECK_HOME; nothing touches the real home directory."""

from __future__ import annotations

import contextlib
import fcntl
import json
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
    """The README's run with the model first (it embeds the demo: a minute of one core), the tests that reuse its
    vectors (:func:`demo_model_root`) last, so no worker waits for it while others have work (order kept within)."""

    def rank(item: pytest.Item) -> int:
        names = getattr(item, "fixturenames", ())  # the whole closure: demo_model_root's users hold both
        if "demo_model_root" in names:
            return 3
        if "readme_model_run" in names:
            return 0
        return 1 if item.get_closest_marker("model") is not None else 2

    items.sort(key=rank)


def _shared_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This run's folder, shared by its xdist workers (not older runs')."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@pytest.fixture(scope="session")
def readme_model_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every README example run once, the model's included, in a fresh home (``home``: the demo, indexed and
    embedded by its first example); ``runs.json`` holds each command's README line and output. Once per run."""
    shared = _shared_dir(tmp_path_factory)
    root = shared / "readme-model"
    with _locked(shared / "readme-model.lock"):
        if not (root / "runs.json").exists():
            from scripts.readme_examples import README, parse, runs

            examples = parse(README.read_text(encoding="utf-8"))
            out = [{"line": c.line, "text": c.text, "actual": actual} for c, actual in runs(examples, root / "home", True)]
            (root / "runs.json.tmp").write_text(json.dumps(out), encoding="utf-8")
            (root / "runs.json.tmp").replace(root / "runs.json")
    return root


@pytest.fixture(scope="session")
def demo_model_root(tmp_path_factory: pytest.TempPathFactory, readme_model_run: Path) -> Path:
    """The demo workspace (``ws``) and its index (``home``) on the shipped default model, for tests that only
    search it; its vectors come from the README run's index (copied, then synced: nothing is embedded again)."""
    shared = _shared_dir(tmp_path_factory)
    root = shared / "demo-model"
    with _locked(shared / "demo-model.lock"):
        if not (root / "ready").exists():
            import sqlite3

            from engine.api import MemoryEngine
            from engine.config import load_config

            shutil.rmtree(root, ignore_errors=True)
            shutil.copytree(DEMO_SOURCE, root / "ws")
            config = load_config(workspace=root / "ws", home=root / "home")
            (source,) = (readme_model_run / "home" / "index").glob("*.sqlite")
            config.index_path.parent.mkdir(parents=True, exist_ok=True)
            with sqlite3.connect(source) as src, sqlite3.connect(config.index_path) as dst:
                src.backup(dst)  # the WAL's pages too
            with MemoryEngine(config) as eng:
                report = eng.sync(embed=True)
                assert not eng.store.has_pending(), "the shared demo index is fully embedded"
                assert report.embedded == 0, "the README run's vectors are reused"
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
