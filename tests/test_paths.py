"""memory_get path rules: only memory files, no escapes, no symlinks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.api import MemoryEngine
from engine.errors import PathRefused
from tests.helpers import hash_config


@pytest.fixture
def engine(tmp_path: Path) -> MemoryEngine:
    ws = tmp_path / "ws"
    (ws / "memory" / "topics").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\nline two\nline three\n")
    (ws / "memory" / "2026-01-01.md").write_text("a\nb\nc\nd\n")
    (ws / "memory" / "topics" / "heron.md").write_text("heron notes\n")
    (ws / "NOTES.md").write_text("not memory\n")
    (ws / "memory" / "data.txt").write_text("not markdown\n")
    (tmp_path / "secret.md").write_text("outside\n")
    os.symlink(tmp_path / "secret.md", ws / "memory" / "link.md")
    os.symlink(tmp_path, ws / "memory" / "linkdir")
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "team.md").write_text("team notes\n")
    eng = MemoryEngine(hash_config(ws, extra_paths=[str(extra)]))
    yield eng
    eng.close()


@pytest.mark.parametrize(
    "path,start,count,text",
    [
        ("MEMORY.md", None, None, "# Memory\nline two\nline three\n"),
        ("MEMORY.md", 2, 1, "line two"),
        ("memory/2026-01-01.md", 2, 2, "b\nc"),
        ("memory/2026-01-01.md", 3, None, "c\nd"),
        ("memory/2026-01-01.md", 99, 5, ""),
        ("memory/topics/heron.md", None, None, "heron notes\n"),
        ("memory/missing.md", None, None, ""),
        ("  MEMORY.md  ", 1, 1, "# Memory"),
    ],
)
def test_get_reads_slices(engine: MemoryEngine, path: str, start: int | None, count: int | None, text: str) -> None:
    assert engine.get(path, start, count).text == text


def test_get_extra_path(engine: MemoryEngine, tmp_path: Path) -> None:
    assert engine.get(str(tmp_path / "extra" / "team.md")).text == "team notes\n"


@pytest.mark.parametrize(
    "path",
    [
        "", "NOTES.md", "../secret.md", "memory/../../secret.md", "memory/../NOTES.md", "/etc/passwd",
        "memory/data.txt", "memory/link.md", "memory/linkdir/secret.md", "memory%2F..%2F..%2Fsecret.md",
        "memory\\..\\..\\secret.md", "memory/2026-01-01.md\x00.md", "sessions/x.jsonl", "~/secret.md",
        "memory", "memory/",
    ],
)
def test_get_refuses(engine: MemoryEngine, path: str) -> None:
    with pytest.raises(PathRefused):
        engine.get(path)


def test_absolute_path_inside_workspace_is_allowed(engine: MemoryEngine) -> None:
    absolute = engine.config.workspace / "MEMORY.md"
    assert engine.get(str(absolute), 1, 1).text == "# Memory"


def test_symlinks_are_not_indexed(engine: MemoryEngine) -> None:
    rels = {f.rel for f in engine.scan().files}
    assert "memory/link.md" not in rels and not any(r.startswith("memory/linkdir") for r in rels)
    assert {"MEMORY.md", "memory/2026-01-01.md", "memory/topics/heron.md"} <= rels
