"""Which files are memory, listing them, and the path rules for reading one (memory_get)."""

from __future__ import annotations

import errno
import os
import stat
import unicodedata
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote

from engine.config import Config
from engine.display import byte_limit, byte_size, has_control_chars, odd_name_issue, plural
from engine.errors import LineRangeRefused, MemdeckError, PathRefused
from engine.textio import read_text_file

CURATED_ROOT_FILES = ("MEMORY.md", "USER.md")
"""The root files OpenClaw 2026.9 indexes: curated memory, where importance comments weigh results."""
LEGACY_ROOT_FILE = "memory.md"
"""The lower-case name older OpenClaw releases indexed; 2026.9 skips it (``[memory] legacy_lowercase_memory``)."""
DREAMS_FILE = "DREAMS.md"
"""OpenClaw's dream diary: readable with memory_get, never indexed (as OpenClaw)."""
ROOT_MEMORY_FILES = (*CURATED_ROOT_FILES, LEGACY_ROOT_FILE)
"""Every root file that can be indexed (``memory.md`` only when configured); all of them are curated memory."""
READABLE_ROOT_FILES = (*ROOT_MEMORY_FILES, DREAMS_FILE)
"""Root files ``memdeck get`` / memory_get may read."""
MAX_PATH_BYTES = 4096
"""The longest path ``get`` looks at (Linux's PATH_MAX): no file system opens a longer one."""
SKIP_DIRS = {".git", "node_modules", ".venv", "venv", "__pycache__", ".dreams"}


@dataclass(frozen=True)
class MemoryFile:
    """A Markdown file that belongs to the memory."""

    rel: str
    path: Path
    source: str
    mtime_ns: int
    size: int


class WorkspaceUnavailable(MemdeckError):
    """The workspace folder is missing, not a folder or not readable: nothing in it can be listed or indexed."""


def workspace_problem(path: Path) -> str | None:
    """Why ``path`` cannot be the workspace (``workspace missing (<path>)``, ...), or None when it can."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return f"workspace missing ({path})"
    except OSError as exc:
        return f"workspace not readable ({path}: {exc.strerror or exc})"
    if not stat.S_ISDIR(st.st_mode):
        return f"workspace is not a folder ({path})"
    if not os.access(path, os.R_OK | os.X_OK):
        return f"workspace not readable ({path}: permission denied)"
    return None


def require_workspace(path: Path) -> None:
    """Raise unless ``path`` can be the workspace.

    Raises:
        WorkspaceUnavailable: with :func:`workspace_problem`'s reason.
    """
    problem = workspace_problem(path)
    if problem is not None:
        raise WorkspaceUnavailable(problem)


def oversize_issue(rel: str, size: int, limit: int) -> str:
    """The report for a file over ``[index] max_file_bytes``: ``memory/big.md: 30.0 MB, over max_file_bytes 4 MB:
    not indexed``."""
    return f"{rel}: {byte_size(size)}, over max_file_bytes {byte_limit(limit)}: not indexed"


@dataclass(frozen=True)
class FolderLink:
    """A symlinked folder met on the way to memory files, and whether memdeck follows it.

    One rule decides for reads (scan, index, ``get``, the tree) and writes (flush, appends, new notes) alike
    (:func:`memory_folder_link`, :func:`_inner_link`): ``memory/`` itself is followed when it points into the
    workspace or to a folder the user running memdeck owns (stow's ``memory -> ~/dotfiles/agent/memory``, a
    Dropbox folder); a folder link inside the memory tree is followed when it points into the workspace (or into
    ``memory/``'s own target) outside what is listed already. Loops (a link to a folder holding ``memory/``)
    and duplicates (a second way to the same folder) are skipped and reported.

    Attributes:
        rel: the link as the workspace names it: ``memory`` or ``memory/projects`` (absolute outside it).
        target: where it leads (resolved), or what it says when that does not exist.
        followed: whether memdeck reads and writes through it.
        reason: why, in a few words.
    """

    rel: str
    target: str
    followed: bool
    reason: str

    def describe(self) -> str:
        """``memory/ is a symlink to /home/u/dotfiles/memory: followed (a folder you own)`` or ``memory/x/: folder
        symlink to /srv/x skipped (outside the workspace)``."""
        if self.followed:
            return f"{self.rel}/ is a symlink to {self.target}: followed ({self.reason})"
        return f"{self.rel}/: folder symlink to {self.target} skipped ({self.reason})"

    def to_json(self) -> dict[str, Any]:
        """``{"path", "target", "followed", "reason", "text"}`` for ``status --json``."""
        return {"path": self.rel, "target": self.target, "followed": self.followed, "reason": self.reason,
                "text": self.describe()}


@dataclass(frozen=True)
class ScanReport:
    """The result of listing the workspace: files found and problems met.

    ``links`` holds every symlinked folder met under ``memory/`` (and ``memory/`` itself), followed or not;
    ``file_links`` the rels of the note symlinks skipped (``MEMORY.md``, ``memory/x.md``: file symlinks are never
    read), each also in ``issues`` as ``<rel>: symlink skipped``.
    """

    files: tuple[MemoryFile, ...]
    issues: tuple[str, ...]
    links: tuple[FolderLink, ...] = ()
    file_links: tuple[str, ...] = ()


def _regular(path: Path) -> os.stat_result | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return st


def _within(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or inside it (both resolved)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _owned_by_user(st: os.stat_result) -> bool:
    uid = os.getuid() if hasattr(os, "getuid") else None
    return uid is None or st.st_uid == uid


def memory_folder_link(config: Config) -> FolderLink | None:
    """What memdeck does with a symlinked ``memory/`` (None when it is no symlink).

    Followed when it leads to a folder inside the workspace or to a folder the user running memdeck owns
    (stow links ``memory/`` into ``~/dotfiles``, Dropbox users into ``~/Dropbox``); skipped — nothing under it
    read or written — when the target is missing, not a folder, another user's, or holds the workspace (a loop).
    """
    mem = config.workspace / "memory"
    try:
        if not stat.S_ISLNK(os.lstat(mem).st_mode):
            return None
    except OSError:
        return None
    try:
        target = os.path.realpath(mem, strict=True)
    except OSError as exc:
        reason = "a loop of symlinks" if exc.errno == errno.ELOOP else "its target does not exist"
        return FolderLink("memory", _link_text(str(mem)), False, reason)
    ws_real = os.path.realpath(config.workspace)
    try:
        st = os.stat(target)
    except OSError as exc:
        return FolderLink("memory", target, False, f"not readable: {exc.strerror or exc}")
    if not stat.S_ISDIR(st.st_mode):
        return FolderLink("memory", target, False, "not a folder")
    if _within(ws_real, target):
        return FolderLink("memory", target, False, "a loop: it holds the workspace")
    if _within(target, ws_real):
        return FolderLink("memory", target, True, "inside the workspace")
    if not _owned_by_user(st):
        return FolderLink("memory", target, False, "owned by another user")
    return FolderLink("memory", target, True, "a folder you own")


def _inner_link(link_path: str, rel: str, ws_real: str, mem_real: str, walked: list[str]) -> FolderLink:
    """The rule for a folder symlink inside the memory tree: followed into the workspace (or ``memory/``'s own
    target), unless it loops back over ``memory/`` or leads to a folder already listed (``walked``)."""
    try:
        target = os.path.realpath(link_path, strict=True)
    except OSError as exc:
        reason = "a loop of symlinks" if exc.errno == errno.ELOOP else "its target does not exist"
        return FolderLink(rel, _link_text(link_path), False, reason)
    if not os.path.isdir(target):
        return FolderLink(rel, target, False, "not a folder")
    if _within(mem_real, target) or _within(ws_real, target):
        return FolderLink(rel, target, False, "a loop: it holds memory/")
    if any(_within(target, root) for root in walked):
        return FolderLink(rel, target, False, "a folder already listed: its files are read there")
    if not (_within(target, ws_real) or _within(target, mem_real)):
        return FolderLink(rel, target, False, "outside the workspace")
    return FolderLink(rel, target, True, "inside the workspace")


def _walk_markdown(root: Path, issues: list[str], links: list[FolderLink] | None = None, *,
                   workspace: Path | None = None) -> list[str]:
    """Markdown files under ``root`` as absolute path strings (strings: pathlib costs add up at 100k files).

    Folder symlinks are followed by the rule of :class:`FolderLink` when ``workspace`` is given (the memory
    tree), else skipped; a skipped one is reported in ``issues``, like a skipped file symlink.
    """
    found: list[str] = []
    ws_prefix = str(workspace) + os.sep if workspace is not None else None
    ws_real = os.path.realpath(workspace) if workspace is not None else ""
    mem_real = os.path.realpath(root)
    walked = [mem_real]

    def onerror(err: OSError) -> None:
        issues.append(f"{err.filename}: not readable ({err.strerror})")

    def rel_of(path: str) -> str:
        if ws_prefix is not None and path.startswith(ws_prefix):
            rel = path[len(ws_prefix):]
            return rel if os.sep == "/" else rel.replace(os.sep, "/")
        return path

    tops = [str(root)]
    while tops:
        for dirpath, dirnames, filenames in os.walk(tops.pop(0), onerror=onerror, followlinks=False):
            kept: list[str] = []
            for d in sorted(dirnames):
                if d in SKIP_DIRS:
                    continue
                full = os.path.join(dirpath, d)
                if not os.path.islink(full):
                    kept.append(d)
                    continue
                if workspace is None:
                    link = FolderLink(rel_of(full), os.path.realpath(full), False, "not followed in an extra path")
                else:
                    link = _inner_link(full, rel_of(full), ws_real, mem_real, walked)
                if links is not None:
                    links.append(link)
                if link.followed:
                    walked.append(link.target)
                    tops.append(full)
                else:
                    issues.append(link.describe())
            dirnames[:] = kept
            prefix = dirpath + os.sep
            found.extend(prefix + name for name in sorted(filenames) if name.endswith(".md"))
            for name in sorted(filenames):
                # A link os.walk could not enter (dangling, a loop of links: a Dropbox folder not synced yet) may
                # be a folder of notes: reported like any skipped folder link. A note's own link (``x.md``) is a
                # file symlink, reported where files are checked.
                full = prefix + name
                if not name.endswith(".md") and os.path.islink(full) and not os.path.exists(full):
                    dead = _inner_link(full, rel_of(full), ws_real, mem_real, walked) if workspace is not None \
                        else FolderLink(rel_of(full), _link_text(full), False, "its target does not exist")
                    if links is not None:
                        links.append(dead)
                    issues.append(dead.describe())
    return found


def _link_text(path: str) -> str:
    """What a symlink says (its target as written), ``?`` when it cannot be read."""
    try:
        return os.readlink(path)
    except OSError:
        return "?"


def memory_tree_paths(config: Config, issues: list[str] | None = None) -> list[str]:
    """Every ``memory/**/*.md`` path (absolute strings, listing order) by the scan's symlink rule: the one walk
    every reader of the memory tree (index, review) uses, so they all see the same files."""
    found = issues if issues is not None else []
    link = memory_folder_link(config)
    mem = config.workspace / "memory"
    if (link is not None and not link.followed) or not mem.is_dir():
        return []
    return _walk_markdown(mem, found, workspace=config.workspace)


def memory_tree_roots(config: Config, links: list[FolderLink] | None = None) -> list[Path]:
    """The real folders the memory tree's files are read from, by the scan's symlink rule: ``memory/`` (or where a
    followed symlinked ``memory/`` leads), then the target of every followed folder link inside it; none when
    ``memory/`` is missing or a link the rule skips.

    Walked one by one without following links, they hold exactly the folders the scan lists: the watcher watches
    them and the doctor looks in them for unfinished saves. ``links``, when given, receives every folder link met
    (``memory/`` itself first), followed or not.
    """
    mem = config.workspace / "memory"
    link = memory_folder_link(config)
    if link is not None and links is not None:
        links.append(link)
    if (link is not None and not link.followed) or not mem.is_dir():
        return []
    met: list[FolderLink] = []
    _walk_markdown(mem, [], met, workspace=config.workspace)
    if links is not None:
        links.extend(met)
    first = Path(link.target) if link is not None else mem
    return [first, *(Path(item.target) for item in met if item.followed)]


def linked_rel(path: Path, links: list[FolderLink] | tuple[FolderLink, ...]) -> str | None:
    """The rel the scan lists a file under when ``path`` names it where a followed folder link leads (the folder a
    symlinked ``memory/`` or ``memory/projects`` points to): ``<dotfiles>/memory/a.md`` → ``memory/a.md``; None
    when it is under no followed link's target. ``path`` is absolute and normalised."""
    followed = sorted((link for link in links if link.followed), key=lambda link: len(link.target), reverse=True)
    for link in followed:
        try:
            inner = PurePosixPath(path.relative_to(link.target)).as_posix()
        except ValueError:
            continue
        return f"{link.rel}/{inner}" if inner != "." else link.rel
    return None


def indexed_root_files(config: Config) -> tuple[str, ...]:
    """The root files this configuration indexes: ``MEMORY.md``, ``USER.md`` (and ``memory.md`` when configured)."""
    return ROOT_MEMORY_FILES if config.memory.legacy_lowercase_memory else CURATED_ROOT_FILES


def is_curated(rel: str) -> bool:
    """Whether a memory file is curated long-term memory (a root file), where importance comments count."""
    return rel in ROOT_MEMORY_FILES


def is_indexed(config: Config, rel: str) -> bool:
    """Whether a readable memory file is one the index holds (``DREAMS.md`` never is; ``memory.md`` only when
    configured)."""
    return rel in indexed_root_files(config) if rel in READABLE_ROOT_FILES else True


def _root_names(ws: Path, wanted: tuple[str, ...]) -> list[str]:
    """The wanted root files present under exactly that name, in ``wanted`` order.

    Listed rather than probed: on a case-insensitive disk ``MEMORY.md`` opens a file named ``memory.md``, which
    2026.9 skips.
    """
    try:
        with os.scandir(ws) as entries:
            present = {entry.name for entry in entries if entry.name in wanted}
    except OSError:
        return []
    return [name for name in wanted if name in present]


def rel_posix(path: Path, workspace: Path) -> str:
    """A path relative to the workspace with ``/`` separators; absolute when outside it."""
    try:
        return PurePosixPath(path.relative_to(workspace)).as_posix()
    except ValueError:
        return path.as_posix()


def file_link_issue(rel: str) -> str:
    """The scan's report of a note that is a symlink: ``MEMORY.md: symlink skipped``."""
    return f"{rel}: symlink skipped"


def _memory_stats(config: Config, issues: list[str], paths: list[str] | None = None,
                  links: list[FolderLink] | None = None,
                  file_links: list[str] | None = None) -> dict[str, tuple[int, int]]:
    """``rel → (mtime_ns, size)`` of every readable memory file, in listing order.

    Plain strings and ints, one ``lstat`` per file: at 25k files a ``Path`` or a kept ``stat_result`` per file
    cost more than the system calls themselves. ``paths``, when given, receives each file's absolute path in
    the same order; ``links``, every symlinked folder met in the memory tree (followed or not); ``file_links``, the
    rel of every note symlink skipped.
    """
    ws = config.workspace
    candidates: list[Path | str] = []
    stats: dict[str, tuple[int, int]] = {}
    problem = workspace_problem(ws)
    if problem is not None:
        issues.append(problem)
        return stats
    limit = config.index.max_file_bytes
    candidates.extend(ws / name for name in _root_names(ws, indexed_root_files(config)))
    mem_dir = ws / "memory"
    link = memory_folder_link(config)
    if link is not None:
        if links is not None:
            links.append(link)
        if not link.followed:
            issues.append(link.describe())
    if (link is None or link.followed) and mem_dir.is_dir():
        candidates.extend(_walk_markdown(mem_dir, issues, links, workspace=ws))
    for extra in config.extra_paths:
        if extra.is_symlink():
            issues.append(f"additional memory path is a symlink, skipped ({extra})")
        elif extra.is_dir():
            candidates.extend(_walk_markdown(extra, issues))
        elif extra.is_file() and extra.suffix == ".md":
            candidates.append(extra)
        elif not extra.exists():
            issues.append(f"additional memory path missing ({extra})")
    seen_inodes: set[tuple[int, int]] = set()
    ws_prefix = str(ws) + os.sep
    cut = len(ws_prefix)
    uid = os.getuid() if hasattr(os, "getuid") else None
    for cand in candidates:
        path = str(cand)
        try:
            st = os.lstat(path)
        except OSError:
            continue  # vanished since the listing
        if path.startswith(ws_prefix):
            rel = path[cut:] if os.sep == "/" else path[cut:].replace(os.sep, "/")
        else:
            rel = Path(path).as_posix()
        mode = st.st_mode
        if not stat.S_ISREG(mode):
            if stat.S_ISLNK(mode):
                issues.append(file_link_issue(rel))
                if file_links is not None:
                    file_links.append(rel)
            continue
        key = (st.st_dev, st.st_ino)
        if key in seen_inodes:
            continue  # memory.md and MEMORY.md on a case-insensitive disk (or hard links) are one file
        seen_inodes.add(key)
        if rel in stats:
            continue
        # The owner's read bit decides for the owner (exact: an ACL's owner entry is those bits); only other
        # users' files cost an ``access`` system call.
        if not (uid is not None and st.st_uid == uid and mode & stat.S_IRUSR) and not os.access(path, os.R_OK):
            issues.append(f"{rel}: not readable (permission denied)")
            continue
        if has_control_chars(rel):
            # One name, one line: a name that a terminal, a citation or the TUI tree would split or garble is
            # reported (escaped where shown), never indexed.
            issues.append(odd_name_issue(rel))
            continue
        if st.st_size > limit:
            issues.append(oversize_issue(rel, st.st_size, limit))
            continue
        stats[rel] = (st.st_mtime_ns, st.st_size)
        if paths is not None:
            paths.append(path)
    return stats


def scan_memory_files(config: Config) -> ScanReport:
    """List ``MEMORY.md``, ``USER.md``, ``memory/**/*.md`` and the extra paths; file symlinks are skipped,
    folder symlinks in the memory tree followed or skipped by the rule of :class:`FolderLink`.

    A root ``memory.md`` only with ``[memory] legacy_lowercase_memory``; ``DREAMS.md`` never (as OpenClaw 2026.9).
    """
    issues: list[str] = []
    paths: list[str] = []
    links: list[FolderLink] = []
    file_links: list[str] = []
    stats = _memory_stats(config, issues, paths, links, file_links)
    files = [MemoryFile(rel=rel, path=Path(p), source="memory", mtime_ns=mtime_ns, size=size)
             for (rel, (mtime_ns, size)), p in zip(stats.items(), paths, strict=True)]
    return ScanReport(tuple(files), tuple(issues), tuple(links), tuple(file_links))


def memory_file_stats(config: Config, issues: list[str] | None = None,
                      links: list[FolderLink] | None = None) -> dict[str, tuple[int, int]]:
    """``rel → (mtime_ns, size)`` of the files :func:`scan_memory_files` lists, without building them.

    The freshness check before every CLI search compares this with the index's ``files`` table; building a
    :class:`MemoryFile` (a ``Path``) per file was most of its cost (25k files: 0.9 s before, 0.36 s now).

    Args:
        config: the workspace and extra paths.
        issues: when given, the scan's problems (symlinks skipped, unreadable files, ...) are appended.
        links: when given, the symlinked folders met in the memory tree are appended (see :class:`FolderLink`).
    """
    return _memory_stats(config, issues if issues is not None else [], links=links)


def _is_memory_rel(rel: str) -> bool:
    return rel in READABLE_ROOT_FILES or rel.startswith("memory/")


def _spelled_as_on_disk(absolute: Path, root: Path) -> Path:
    """``absolute`` with each part below ``root`` that does not exist as typed replaced by the one entry of its
    folder that is the same name in another Unicode normalisation form.

    macOS writes names decomposed (NFD: ``cafe`` + U+0301), an agent or a terminal types them composed (NFC):
    ``memory/café.md`` must read, and append to, the note the tree lists, not miss it (or create a twin that
    looks the same). A name that exists as typed is used as typed; two candidates are left alone.
    """
    try:
        parts = absolute.relative_to(root).parts
    except ValueError:
        return absolute
    if all(part.isascii() for part in parts) or os.path.lexists(absolute):
        return absolute
    current = root
    for part in parts:
        if not part.isascii() and not os.path.lexists(current / part):
            wanted = unicodedata.normalize("NFC", part)
            try:
                same = [name for name in os.listdir(current) if unicodedata.normalize("NFC", name) == wanted]
            except OSError:
                return absolute
            if len(same) != 1:
                return absolute
            part = same[0]
        current = current / part
    return current


def resolve_memory_path(config: Config, raw: str) -> tuple[str, Path]:
    """Resolve a path an agent or user asked for, refusing anything that is not a memory file.

    Allowed: ``MEMORY.md``, ``USER.md``, ``DREAMS.md``, ``memory.md``, ``memory/**.md`` inside the workspace (what
    OpenClaw 2026.9's memory_get reads, plus the legacy lower-case file), and Markdown files under configured
    extra paths. Refused: ``..`` escapes, absolute paths outside, URL-encoded or backslash tricks,
    NUL bytes, a symlinked file, a folder symlink on the way that the scan does not follow (the rule of
    :class:`FolderLink`: what is read or written here is what the index lists), non-Markdown files.

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
    if len(text.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
        # Refused before any work: checking each folder on the way costs time in the number of parts squared.
        raise PathRefused(f"path refused: {text[:100]!r}…: File name too long (over {plural(MAX_PATH_BYTES, 'byte', grouped=True)})")
    try:
        return _resolve_memory_path(config, text)
    except OSError as exc:  # a name the file system cannot hold (ENAMETOOLONG), a link loop (ELOOP), ...
        shown = text if len(text) <= 120 else text[:100] + "…"
        raise PathRefused(f"path refused: {shown!r}: {exc.strerror or exc}") from None


def _resolve_memory_path(config: Config, text: str) -> tuple[str, Path]:
    ws = config.workspace.resolve()
    try:
        candidate = Path(text).expanduser()
    except RuntimeError as exc:  # ``~name`` of a user that does not exist
        raise PathRefused(f"path refused: {text!r}: {exc}") from exc
    absolute = candidate if candidate.is_absolute() else ws / candidate
    parts = PurePosixPath(absolute.as_posix()).parts
    if ".." in parts:
        raise PathRefused(f"path refused: '..' is not allowed ({text!r})")
    absolute = Path(os.path.normpath(absolute))
    if not absolute.name.endswith(".md"):
        if absolute.name.endswith(".jsonl"):
            raise PathRefused(f"path refused: only Markdown memory files can be read ({text!r}); a session is read "
                              "by its citation (sessions/<file> or sessions/<agent>/<id>.jsonl), with sessions as "
                              "a source")
        raise PathRefused(f"path refused: only Markdown memory files can be read ({text!r})")
    if candidate.is_absolute():
        # A workspace named through a symlink (``--workspace ~/ws`` with ``~/ws -> /srv/ws``): an absolute path
        # pasted as the user knows the workspace names the same files as the resolved one.
        named = Path(os.path.normpath(config.workspace.absolute()))
        if named != ws and (absolute == named or named in absolute.parents):
            absolute = ws / absolute.relative_to(named)
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
    if allowed_root is None and candidate.is_absolute():
        # The real path of a note behind a followed folder link (where an editor opened it, what a watcher
        # reports) is that note: read by its rel, through every check the rel meets.
        links: list[FolderLink] = []
        memory_tree_roots(config, links)
        mapped = linked_rel(absolute, links)
        if mapped is not None and mapped.startswith("memory/"):
            return _resolve_memory_path(config, mapped)
    if allowed_root is None:
        raise PathRefused(
            f"path refused: {text!r} is not a memory file (MEMORY.md, USER.md, DREAMS.md, memory/**/*.md or an "
            "extra path)"
        )
    try:
        spelled = _spelled_as_on_disk(absolute, allowed_root)
        if spelled != absolute:
            absolute = spelled
            rel = (PurePosixPath(absolute.relative_to(ws)).as_posix() if absolute.is_relative_to(ws)
                   else absolute.as_posix())
        _check_links(config, text, absolute, allowed_root, ws)
        if absolute.exists() and not absolute.is_file():
            raise PathRefused(f"path refused: {text!r} is not a regular file")
    except OSError as exc:
        if exc.errno != errno.ENAMETOOLONG:
            raise
        # No such file can exist; said as a refusal, like every other path that cannot be a memory file.
        raise PathRefused(f"path refused: a name in {text!r} is too long for the file system") from None
    return rel, absolute


def _check_links(config: Config, text: str, absolute: Path, allowed_root: Path, ws: Path) -> None:
    """Refuse a path through a symlink the scan would not follow: the file itself, any folder link under an
    extra path, a folder link in the memory tree that :class:`FolderLink`'s rule skips.

    Raises:
        PathRefused: naming the link and the rule.
    """
    # The folders below the root, nearest the root first, the file excluded: built part by part (``parents``
    # tested against ``parents`` cost time in the number of parts squared: seconds for a deep made-up path).
    folders: list[Path] = []
    try:
        inner = absolute.relative_to(allowed_root).parts[:-1]
    except ValueError:
        inner = ()
    folder = allowed_root
    for part in inner:
        folder = folder / part
        folders.append(folder)
    listed: dict[str, FolderLink] | None = None
    for folder in folders:
        if not folder.is_symlink():
            continue
        if allowed_root != ws:
            raise PathRefused(f"path refused: {text!r} goes through a symlink ({folder})")
        rel = PurePosixPath(folder.relative_to(ws)).as_posix()
        if rel == "memory":
            link = memory_folder_link(config)
        else:
            if listed is None:
                # The scan's own verdicts: whether a link is a duplicate depends on what was listed before it,
                # so the memory tree is listed once (only for a path through a folder link inside it).
                found: list[FolderLink] = []
                _walk_markdown(ws / "memory", [], found, workspace=ws)
                listed = {item.rel: item for item in found}
            link = listed.get(rel)
        if link is None or not link.followed:
            shown = link.describe() if link is not None else f"{rel}/: a folder symlink the scan does not reach"
            raise PathRefused(f"path refused: {text!r} goes through a symlink memdeck does not follow ({shown})")
    if absolute.is_symlink():  # after the folders: past a link loop the file cannot even be looked at
        raise PathRefused(f"path refused: {text!r} is a symlink")


def check_memory_folder(config: Config) -> None:
    """Refuse to write under ``memory/`` when the scan would not read it (a symlink the rule skips): what is
    written must be what is indexed.

    Raises:
        PathRefused: ``memory/`` is a symlink that is not followed, or not a folder.
    """
    link = memory_folder_link(config)
    if link is not None and not link.followed:
        raise PathRefused(f"cannot write under memory/: {link.describe()}")


@dataclass(frozen=True)
class GetResult:
    """A slice of a memory file."""

    path: str
    text: str
    from_line: int | None = None
    lines: int | None = None
    total_lines: int | None = None  # the file's line count (None: the file does not exist)

    @property
    def note(self) -> str | None:
        """Why the text is empty when the reader asked for lines (memory_get's rule gives "" without a word):
        the file does not exist, or the range starts past its end."""
        if self.text:
            return None
        if self.total_lines is None:
            return f"{self.path} does not exist (yet)"
        if self.from_line and self.from_line > self.total_lines:
            return f"{self.path} has {plural(self.total_lines, 'line')}: line {self.from_line:,} is past its end"
        return None

    def to_json(self) -> dict[str, Any]:
        """``{"path", "text"}`` exactly as OpenClaw's memory_get returns it (an empty read says nothing more there;
        the CLI's text output says :attr:`note` on stderr)."""
        return {"path": self.path, "text": self.text}


def check_line_range(from_line: int | None, lines: int | None) -> None:
    """The one rule for a line range to read (every door's memory_get): ``from`` and ``lines``, when given, are 1
    or more. Zero or a negative number is refused rather than read as "the whole file".

    Raises:
        LineRangeRefused: ``from`` or ``lines`` is below 1 (the message names it, as both doors spell it).
    """
    for name, value in (("from", from_line), ("lines", lines)):
        if value is not None and value < 1:
            raise LineRangeRefused(f"{name} must be 1 or more (lines are counted from 1), not {value}")


def read_memory_slice(config: Config, path: str, from_line: int | None = None,
                      lines: int | None = None) -> GetResult:
    """memory_get: a 1-based slice of a memory file (whole file without from/lines); needs no index.

    Args:
        config: the workspace and extra paths (the path rules of :func:`resolve_memory_path`).
        path: as the agent or user gave it (relative to the workspace, or absolute under an extra path).
        from_line: the first line, 1-based.
        lines: how many lines.

    A citation as memdeck prints it (``memory/2026-10-23.md#L14-L16``, ``…#L14``, ``…:14-16``) reads its lines
    (:func:`engine.citation.parse_citation`: an explicit ``from_line``/``lines`` wins over the cited range).

    Raises:
        PathRefused: the path is not a memory file or escapes the workspace (:func:`resolve_memory_path`), or its
            line anchor is not a range.
        LineRangeRefused: ``from_line`` or ``lines`` is below 1 (:func:`check_line_range`).
    """
    from engine.citation import parse_citation

    check_line_range(from_line, lines)
    cited = parse_citation(path, from_line, lines)
    from_line, lines = cited.from_line, cited.lines
    rel, absolute = resolve_memory_path(config, cited.path)
    try:
        text = read_text_file(absolute).text
    except (FileNotFoundError, NotADirectoryError):  # a missing file reads as empty (memory_get's rule)
        return GetResult(rel, "", from_line, lines)
    all_lines = text.split("\n")
    if text.endswith("\n"):
        all_lines.pop()
    if not from_line and not lines:
        return GetResult(rel, text, total_lines=len(all_lines))
    start = max(1, int(from_line or 1))
    count = max(1, int(lines)) if lines else None
    chosen = all_lines[start - 1 : (start - 1 + count) if count else None]
    return GetResult(rel, "\n".join(chosen), start, count, len(all_lines))
