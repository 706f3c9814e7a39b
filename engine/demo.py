"""The bundled demo workspace: where it lives in the package and copying it somewhere writable."""

from __future__ import annotations

import shutil
from pathlib import Path

DEMO_SOURCE = Path(__file__).resolve().parent / "demo_workspace"


def write_demo(target: Path, overwrite: bool = False) -> Path:
    """Copy the demo workspace (``MEMORY.md``, ``memory/``, ``sessions/``) into ``target``.

    Existing files are kept unless ``overwrite``; returns ``target``.
    """
    target.mkdir(parents=True, exist_ok=True)
    for src in sorted(DEMO_SOURCE.rglob("*")):
        if src.is_dir() or "__pycache__" in src.parts:
            continue
        dest = target / src.relative_to(DEMO_SOURCE)
        if dest.exists() and not overwrite:
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)
    return target


def demo_home_workspace(home: Path) -> Path:
    """The demo's copy under memdeck's data dir (made on first use, never inside the installed package)."""
    return write_demo(home / "demo-workspace")
