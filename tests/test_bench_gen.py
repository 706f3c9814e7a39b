"""The benchmark workspace generator: deterministic per seed, about the requested chunk count, varied Markdown."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from engine.index.chunking import chunk_markdown

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _gen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_workspace", BENCH / "gen_workspace.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_workspace", module)
    spec.loader.exec_module(module)
    return module


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*.md")):
        h.update(p.relative_to(root).as_posix().encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path: Path) -> None:
    gen = _gen()
    gen.generate_workspace(tmp_path / "a", 120, seed=3)
    gen.generate_workspace(tmp_path / "b", 120, seed=3)
    gen.generate_workspace(tmp_path / "c", 120, seed=4)
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b")
    assert _digest(tmp_path / "a") != _digest(tmp_path / "c")


@pytest.mark.parametrize("chunks", [40, 400])
def test_about_the_requested_chunk_count(tmp_path: Path, chunks: int) -> None:
    gen = _gen()
    gen.generate_workspace(tmp_path, chunks, seed=7)
    got = gen.count_chunks(tmp_path)
    assert 0.75 * chunks <= got <= 1.25 * chunks


def test_realistic_markdown(tmp_path: Path) -> None:
    gen = _gen()
    ws = gen.generate_workspace(tmp_path, 300, seed=7)
    assert ws.files[0] == "MEMORY.md"
    assert any(f.startswith("memory/2019-") for f in ws.files)
    text = "\n".join((tmp_path / f).read_text(encoding="utf-8") for f in ws.files)
    assert text.count("```") % 2 == 0 and "```python" in text  # fences open and close
    assert any("\u4e00" <= ch <= "\u9fff" for ch in text)  # some Chinese
    assert "\n# " in "\n" + text and "\n## " in text and "\n- " in text
    assert any(rare in text for rare in gen.RARE) and any(name in text for name in gen.NAMES)
    for f in ws.files:  # every file's fences are balanced, so the chunker never sees a dangling one
        assert (tmp_path / f).read_text(encoding="utf-8").count("```") % 2 == 0
    assert chunk_markdown(text)  # chunks without error
