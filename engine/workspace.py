"""Which files are memory, listing them, and the path rules for reading one (memory_get)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

from engine.config import Config
from engine.errors import PathRefused

ROOT_MEMORY_FILES = ("MEMORY.md", "memory.md")
SKIP_DIRS = {".git", "node_modules", ".venv", "venv", "__pycache__", ".dreams"}


@dataclass(frozen=True)
class MemoryFile:
    """A Markdown file that belongs to the memory."""

    rel: str
    path: Path
    source: str
    mtime_ns: int
    size: int


@dataclass(frozen=True)
class ScanReport:
    """The result of listing the workspace: files found and problems met."""

    files: tuple[MemoryFile, ...]
    issues: tuple[str, ...]


def _regular(path: Path) -> os.stat_result | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return st


def _walk_markdown(root: Path, issues: list[str]) -> list[str]:
    """Markdown files under ``root`` as absolute path strings (strings: pathlib costs add up at 100k files)."""
    found: list[str] = []

    def onerror(err: OSError) -> None:
        issues.append(f"{err.filename}: not readable ({err.strerror})")

    for dirpath, dirnames, filenames in os.walk(root, onerror=onerror, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not os.path.islink(os.path.join(dirpath, d)))
        prefix = dirpath + os.sep
        found.extend(prefix + name for name in sorted(filenames) if name.endswith(".md"))
    return found


def rel_posix(path: Path, workspace: Path) -> str:
    """A path relative to the workspace with ``/`` separators; absolute when outside it."""
    try:
        return PurePosixPath(path.relative_to(workspace)).as_posix()
    except ValueError:
        return path.as_posix()


def scan_memory_files(config: Config) -> ScanReport:
    """List ``MEMORY.md``, ``memory.md``, ``memory/**/*.md`` and the extra paths; symlinks are skipped."""
    ws = config.workspace
    issues: list[str] = []
    candidates: list[Path | str] = []
    if not ws.is_dir():
        return ScanReport((), (f"workspace missing ({ws})",))
    seen_inodes: set[tuple[int, int]] = set()
    for name in ROOT_MEMORY_FILES:
        p = ws / name
        if p.exists() or p.is_symlink():
            candidates.append(p)
    mem_dir = ws / "memory"
    if mem_dir.is_dir() and not mem_dir.is_symlink():
        candidates.extend(_walk_markdown(mem_dir, issues))
    for extra in config.extra_paths:
        if extra.is_symlink():
            issues.append(f"additional memory path is a symlink, skipped ({extra})")
        elif extra.is_dir():
            candidates.extend(_walk_markdown(extra, issues))
        elif extra.is_file() and extra.suffix == ".md":
            candidates.append(extra)
        elif not extra.exists():
            issues.append(f"additional memory path missing ({extra})")
    files: list[MemoryFile] = []
    seen: set[str] = set()
    ws_prefix = str(ws) + os.sep
    for cand in candidates:
        p = str(cand)
        try:
            st = os.lstat(p)
        except OSError:
            continue  # vanished since the listing
        rel = p[len(ws_prefix):].replace(os.sep, "/") if p.startswith(ws_prefix) else Path(p).as_posix()
        if not stat.S_ISREG(st.st_mode):
            if stat.S_ISLNK(st.st_mode):
                issues.append(f"{rel}: symlink skipped")
            continue
        key = (st.st_dev, st.st_ino)
        if key in seen_inodes:
            continue  # memory.md and MEMORY.md on a case-insensitive disk are one file
        seen_inodes.add(key)
        if rel in seen:
            continue
        seen.add(rel)
        if not os.access(p, os.R_OK):
            issues.append(f"{rel}: not readable (permission denied)")
            continue
        files.append(MemoryFile(rel=rel, path=Path(p), source="memory", mtime_ns=st.st_mtime_ns, size=st.st_size))
    return ScanReport(tuple(files), tuple(issues))


def _is_memory_rel(rel: str) -> bool:
    return rel in ROOT_MEMORY_FILES or rel.startswith("memory/")


def resolve_memory_path(config: Config, raw: str) -> tuple[str, Path]:
    """Resolve a path an agent or user asked for, refusing anything that is not a memory file.

    Allowed: ``MEMORY.md``, ``memory.md``, ``memory/**.md`` inside the workspace, and Markdown files under
    configured extra paths. Refused: ``..`` escapes, absolute paths outside, URL-encoded or backslash tricks,
    NUL bytes, symlinks (anywhere on the way), non-Markdown files.

    Returns:
        ``(rel, absolute path)``; the file itself may not exist.

    Raises:
        PathRefused: with a message saying why.
    """
    text = (raw or "").strip()
    if not text:
        raise PathRefused("path required")
    if "\x00" in text or any(ord(ch) < 32 for ch in text):
        raise PathRefused(f"path refused: control characters in {text!r}")
    decoded = unquote(text)
    if decoded != text:
        raise PathRefused(f"path refused: URL-encoded paths are not accepted ({text!r})")
    if "\\" in text:
        raise PathRefused(f"path refused: backslashes are not accepted ({text!r})")
    ws = config.workspace.resolve()
    candidate = Path(text).expanduser()
    absolute = candidate if candidate.is_absolute() else ws / candidate
    parts = PurePosixPath(absolute.as_posix()).parts
    if ".." in parts:
        raise PathRefused(f"path refused: '..' is not allowed ({text!r})")
    absolute = Path(os.path.normpath(absolute))
    if not absolute.name.endswith(".md"):
        raise PathRefused(f"path refused: only Markdown memory files can be read ({text!r})")
    allowed_root: Path | None = None
    try:
        rel = PurePosixPath(absolute.relative_to(ws)).as_posix()
        if _is_memory_rel(rel):
            allowed_root = ws
    except ValueError:
        rel = absolute.as_posix()
    if allowed_root is None:
        for extra in config.extra_paths:
            if extra.is_symlink():
                continue
            extra_abs = Path(os.path.normpath(extra if extra.is_absolute() else ws / extra))
            if absolute == extra_abs or extra_abs in absolute.parents:
                allowed_root = extra_abs if extra_abs.is_dir() else extra_abs.parent
                break
    if allowed_root is None:
        raise PathRefused(
            f"path refused: {text!r} is not a memory file (MEMORY.md, memory.md, memory/**/*.md or an extra path)"
        )
    # No symlink anywhere between the root and the file.
    probe = absolute
    while probe != allowed_root and allowed_root in probe.parents:
        if probe.is_symlink():
            raise PathRefused(f"path refused: {text!r} goes through a symlink")
        probe = probe.parent
    if absolute.exists() and not absolute.is_file():
        raise PathRefused(f"path refused: {text!r} is not a regular file")
    return rel, absolute
