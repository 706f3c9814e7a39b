"""Index health checks (``memdeck doctor`` without ``--fix``): what they find, and the report they make."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from engine.bootstrap import bootstrap_budget
from engine.clock import note_timezone
from engine.config import Config
from engine.display import byte_size, plural
from engine.index import queries, schema
from engine.index.indexer import lock_holder, pid_alive
from engine.secrets import find_secrets
from engine.sessions.scan import scan_sources
from engine.textio import read_text_file
from engine.workspace import (
    ScanReport,
    file_link_issue,
    memory_folder_link,
    memory_tree_roots,
    scan_memory_files,
    workspace_problem,
)

SEVERITIES = ("ok", "info", "warn", "error")
WORKSPACE_TEMP_AGE = 600.0
"""A workspace temp file older than this (seconds) is a crashed save, not one in progress."""


@dataclass(frozen=True)
class SecretFound:
    """A likely secret in a memory file; ``preview`` masks the secret itself."""

    path: str
    line: int
    kind: str
    preview: str

    def to_dict(self) -> dict[str, Any]:
        """A plain dict for JSON."""
        return {"path": self.path, "line": self.line, "kind": self.kind, "preview": self.preview}


@dataclass(frozen=True)
class Finding:
    """One health check's result.

    Attributes:
        check: a stable id (``workspace``, ``index``, ``fts``, ``vectors``, ``orphans``, ``files``, ``identity``,
            ``stale``, ``temp-files``, ``workspace-temp``, ``corrupt-copies``, ``lock``, ``sqlite-vec``, ``model``,
            ``permissions``, ``unreadable``, ``symlinks``, ``sessions``, ``secrets``, ``bootstrap``).
        severity: ``ok``, ``info``, ``warn`` or ``error``.
        message: one line for a person.
        count: how many things the check found (rows, files, ...).
        details: more lines (paths, row counts), shown under the message.
        fix: what ``--fix`` does about it; None when it cannot be fixed automatically.
    """

    check: str
    severity: str
    message: str
    count: int = 0
    details: tuple[str, ...] = ()
    fix: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A plain dict for JSON."""
        return {"check": self.check, "severity": self.severity, "message": self.message, "count": self.count,
                "details": list(self.details), "fix": self.fix}


@dataclass(frozen=True)
class DoctorReport:
    """What ``memdeck doctor`` found (after repairs when ``--fix`` ran) and what it did."""

    workspace: str
    index_path: str
    findings: tuple[Finding, ...]
    secrets: tuple[SecretFound, ...] = ()
    actions: tuple[str, ...] = ()
    fixed: bool = False

    @property
    def problems(self) -> tuple[Finding, ...]:
        """Findings that need attention (``warn`` and ``error``)."""
        return tuple(f for f in self.findings if f.severity in ("warn", "error"))

    @property
    def ok(self) -> bool:
        """True when nothing needs attention."""
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        """The ``doctor --json`` payload."""
        return {
            "ok": self.ok,
            "workspace": self.workspace,
            "indexPath": self.index_path,
            "fixed": self.fixed,
            "findings": [f.to_dict() for f in self.findings],
            "secrets": [s.to_dict() for s in self.secrets],
            "actions": list(self.actions),
        }


# -- the secret scanner ----------------------------------------------------------------------------


def scan_secrets(config: Config) -> list[SecretFound]:
    """Find API keys, tokens, passwords and private keys in the memory files (never in sessions).

    Memory files are plain text that agents paste into prompts and people sync and share; a secret in
    one is a leak waiting to happen. Previews are masked (see :func:`engine.secrets.find_secrets`).

    Args:
        config: the configuration (workspace and extra paths).

    Returns:
        Findings in file order, then line order. Unreadable files are skipped.
    """
    found: list[SecretFound] = []
    for file in scan_memory_files(config).files:
        try:
            text = read_text_file(file.path).text
        except OSError:
            continue
        for hit in find_secrets(text):
            found.append(SecretFound(file.rel, hit.line, hit.kind, hit.preview))
    return found


# -- helpers ------------------------------------------------------------------------------------------


_n = plural  # the one plural rule (engine.display)


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _rebuild_owner(name: str) -> int | None:
    """The pid in ``<index>.rebuild-<pid>-<time>[-wal|-shm]``."""
    tail = name.split(".rebuild-", 1)[1] if ".rebuild-" in name else ""
    pid = tail.split(".")[0].split("-")[0]
    return int(pid) if pid.isdigit() else None


def workspace_temp_files(config: Config, now: float) -> list[Path]:
    """Temp files a crashed save left in the workspace (``.<name>.<random>.tmp``, older than 10 minutes).

    Looked for where saves write: the workspace root, the memory tree's folders by the scan's symlink rule (a
    followed symlinked ``memory/`` where it leads, followed folder links inside it: see
    :func:`engine.workspace.memory_tree_roots`) and the extra paths.
    """
    roots = [config.workspace, *memory_tree_roots(config),
             *(p for p in config.extra_paths if p.is_dir() and not p.is_symlink())]
    found: list[Path] = []
    seen: set[Path] = set()
    for root in roots:
        if not root.is_dir():
            continue
        walker: Iterable[tuple[str, list[str], list[str]]]
        if root == config.workspace:
            walker = [(str(root), [], [e.name for e in root.iterdir() if e.is_file()])]
        else:
            walker = os.walk(root, followlinks=False)
        for dirpath, _dirs, names in walker:
            for name in names:
                if not (name.startswith(".") and name.endswith(".tmp") and ".md." in name):
                    continue
                path = Path(dirpath) / name
                try:
                    st = path.lstat()
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode) and now - st.st_mtime > WORKSPACE_TEMP_AGE and path not in seen:
                    seen.add(path)
                    found.append(path)
    return sorted(found)


def _expected_identity(config: Config, vec_loaded: bool) -> dict[str, Any]:
    from engine.embed.choice import choose_provider, make_embedder
    from engine.index.indexer import identity_for

    choice = choose_provider(config)
    embedder = make_embedder(choice, config)
    return identity_for(config, choice, embedder if vec_loaded and embedder is not None else None)


# -- checks ---------------------------------------------------------------------------------------


def _check_sqlite_vec() -> Finding:
    from engine.index.store import CorruptIndex, IndexAccessError, connect_raw

    try:
        conn, driver = connect_raw(Path(":memory:"))
    except (CorruptIndex, IndexAccessError) as exc:
        return Finding("sqlite-vec", "error", f"SQLite cannot start: {exc}")
    conn.close()
    if driver.vec_version is None:
        return Finding("sqlite-vec", "warn", f"sqlite-vec is not available ({driver.vec_error}): vector search is off, "
                       "keyword search works")
    return Finding("sqlite-vec", "ok", f"sqlite-vec {driver.vec_version} loads ({driver.name} {driver.sqlite_version})")


def _check_model(config: Config) -> Finding:
    from engine.embed.choice import choose_provider

    choice = choose_provider(config)  # decides without loading anything
    if choice.provider == "none":
        if choice.requested == "none":
            return Finding("model", "ok", "keyword-only by configuration (embedding.provider = none)")
        return Finding("model", "warn", f"no embedding model, search is keyword-only: {choice.reason}")
    if choice.provider != choice.requested and choice.requested not in ("auto", choice.provider):
        return Finding("model", "warn", f"using the fallback {choice.provider}: {choice.reason}")
    loaded = " (loaded on first vector search)" if choice.provider == "local" else ""
    return Finding("model", "ok", f"{choice.provider}: {choice.model}{loaded}")


def _check_files_on_disk(config: Config, now: float) -> list[Finding]:
    folder = config.index_path.parent
    out: list[Finding] = []
    leftovers: list[Path] = []
    copies: list[Path] = []
    if folder.is_dir():
        for entry in sorted(folder.iterdir()):
            if ".rebuild-" in entry.name:
                owner = _rebuild_owner(entry.name)
                base = folder / entry.name.split(".rebuild-", 1)[0]
                # Nobody holds that index's writer lock, or its owner is dead: nobody is rebuilding into it.
                if lock_holder(base) is None or owner is None or not pid_alive(owner):
                    leftovers.append(entry)
            elif ".corrupt-" in entry.name:
                copies.append(entry)
    if leftovers:
        size = sum(_file_size(p) for p in leftovers)
        out.append(Finding("temp-files", "warn", f"{_n(len(leftovers), 'temp file')} from interrupted rebuilds ({byte_size(size)})",
                           len(leftovers), tuple(p.name for p in leftovers), "delete them"))
    else:
        out.append(Finding("temp-files", "ok", "no temp files left by interrupted rebuilds"))
    if copies:
        size = sum(_file_size(p) for p in copies)
        out.append(Finding("corrupt-copies", "info",
                           f"{_n(len(copies), 'damaged index copy', 'damaged index copies')} kept for inspection ({byte_size(size)})",
                           len(copies), tuple(p.name for p in copies), "delete them"))
    temps = workspace_temp_files(config, now)
    if temps:
        rels = tuple(rel_to(p, config.workspace) for p in temps)
        out.append(Finding("workspace-temp", "warn",
                           f"{_n(len(temps), 'unfinished save')} in the workspace (temp files a crash left behind)",
                           len(temps), rels, f"move them to {config.home / 'recovered'}"))
    else:
        out.append(Finding("workspace-temp", "ok", "no unfinished saves in the workspace"))
    holder = lock_holder(config.index_path)
    if holder is not None:
        who = f"pid {holder}" if holder else "another process"
        out.append(Finding("lock", "info", f"the index is being written by {who}; repairs wait for it", 1))
    else:
        out.append(Finding("lock", "ok", "no process holds the writer lock"))
    return out


def rel_to(path: Path, workspace: Path) -> str:
    """``path`` relative to the workspace (POSIX), or as it is when it lies outside."""
    try:
        return path.relative_to(workspace).as_posix()
    except ValueError:
        return str(path)


def private_paths(config: Config) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """The folders (want 700) and files (want 600) memdeck keeps private."""
    index = config.index_path
    folders = (config.home, index.parent)
    files = (index, Path(str(index) + "-wal"), Path(str(index) + "-shm"), index.with_name(index.name + ".lock"),
             config.config_path, config.home / "memdeck.log")
    return folders, files


def loose_folders(config: Config) -> list[Path]:
    """Private folders others can read or enter, or memdeck cannot write (not 700: ``--fix`` sets it)."""
    out: list[Path] = []
    for folder in private_paths(config)[0]:
        with contextlib.suppress(OSError):
            if folder.is_dir() and stat.S_IMODE(folder.stat().st_mode) != 0o700:
                mode = stat.S_IMODE(folder.stat().st_mode)
                if mode & 0o077 or mode & 0o700 != 0o700:
                    out.append(folder)
    return out


def loose_files(config: Config) -> list[Path]:
    """Private files (not symlinks) others can read or write, or memdeck cannot write (``--fix`` sets 600)."""
    out: list[Path] = []
    for path in private_paths(config)[1]:
        with contextlib.suppress(OSError):
            if path.is_file() and not path.is_symlink():
                mode = stat.S_IMODE(path.stat().st_mode)
                if mode & 0o077 or mode & 0o600 != 0o600:
                    out.append(path)
    return out


def _unwritable(path: Path) -> bool:
    """memdeck's own file or folder that it cannot write (its mode, or a read-only mount: root too)."""
    try:
        return path.exists() and not path.is_symlink() and not os.access(path, os.W_OK)
    except OSError:
        return False


def _mode(path: Path) -> str:
    try:
        return f"{stat.S_IMODE(path.stat().st_mode):o}"
    except OSError:
        return "?"


def _check_permissions(config: Config) -> Finding:
    folders, files = loose_folders(config), loose_files(config)
    stuck = [path for path in (*private_paths(config)[0], *private_paths(config)[1]) if _unwritable(path)]
    loose = [f"{folder} is {_mode(folder)} (want 700)" for folder in folders if folder not in stuck]
    loose += [f"{path} is {_mode(path)} (want 600)" for path in files if path not in stuck]
    if stuck:
        # Before "readable by others": a 444 index is readable by others too, but what stops memdeck is that it
        # cannot write it (every index run, save and flush would fail).
        index = config.index_path
        what = ("the index" if all(p.name.startswith(index.name) for p in stuck)
                else "its data folder" if all(p.is_dir() for p in stuck) else "its index and data folder")
        fixable = [p for p in stuck if p in folders or p in files]
        return Finding("permissions", "error",
                       f"memdeck cannot write {what}: `memdeck index`, saves and flushes fail until it can",
                       len(stuck), tuple(f"not writable: {p} (is {_mode(p)}, want {700 if p.is_dir() else 600})"
                                         for p in stuck) + tuple(loose),
                       "chmod folders 700 and files 600" if fixable else None)
    if loose:
        return Finding("permissions", "warn", f"{_n(len(loose), 'memdeck file or folder', 'memdeck files or folders')} readable by others",
                       len(loose), tuple(loose), "chmod folders 700 and files 600")
    return Finding("permissions", "ok", "index, config and folders are private (600/700)")


@dataclass
class _IndexFacts:
    exists: bool = False
    damaged: str | None = None
    vec_loaded: bool = False
    findings: list[Finding] = field(default_factory=list)


def _check_index(config: Config) -> _IndexFacts:
    from engine.index.store import DB_ERRORS, CorruptIndex, IndexAccessError, check_header, connect_raw

    facts = _IndexFacts()
    path = config.index_path
    if not path.exists():
        facts.findings.append(Finding("index", "info", "no index yet: `memdeck index` builds it", fix="build it"))
        return facts
    facts.exists = True
    rebuild = "move it aside and rebuild it from the Markdown"
    try:
        check_header(path)
        conn, driver = connect_raw(path)
    except CorruptIndex as exc:
        facts.damaged = str(exc)
        facts.findings.append(Finding("index", "error", f"the index is damaged: {exc}", fix=rebuild))
        return facts
    except IndexAccessError as exc:
        facts.findings.append(Finding("index", "error", str(exc)))
        return facts
    facts.vec_loaded = driver.vec_version is not None
    try:
        tables = schema.table_names(conn, views=True)
        missing = [t for t in schema.CORE_TABLES if t not in tables]
        if missing:
            facts.damaged = f"tables missing: {', '.join(missing)}"
            facts.findings.append(Finding("index", "error", f"not a memdeck index ({facts.damaged})", fix=rebuild))
            return facts
        try:
            version = schema.stored_version(conn)
        except schema.SchemaProblem:
            version = 0
        if version > schema.SCHEMA_VERSION:
            facts.damaged = f"made by a newer memdeck (schema {version}, this one knows {schema.SCHEMA_VERSION})"
            facts.findings.append(Finding("index", "error", f"the index was {facts.damaged}", fix=rebuild))
            return facts
        problems = queries.quick_check(conn, 20)
        if problems != ["ok"]:
            facts.damaged = problems[0]
            facts.findings.append(Finding("index", "error", f"the index is damaged: {problems[0]}", len(problems),
                                          tuple(problems), rebuild))
            return facts
        size = sum(os.path.getsize(str(path) + s) for s in ("", "-wal") if os.path.exists(str(path) + s))
        facts.findings.append(Finding("index", "ok", f"index file is sound ({byte_size(size)}, schema {version})"))
        recovered = queries.get_meta(conn, schema.RECOVERED_META)
        with contextlib.suppress(ValueError, TypeError, AttributeError, KeyError):
            last: dict[str, Any] = json.loads(recovered) if recovered else {}
            if last:
                zone = note_timezone(config.memory.timezone)  # times are shown in the user's zone
                when = f"{datetime.fromtimestamp(float(last['at']), zone):%Y-%m-%d %H:%M}"
                facts.findings.append(Finding("recovered", "info", f"rebuilt after damage on {when}: {last['note']}",
                                              1, fix="forget it"))
        facts.findings.extend(_check_rows(conn, facts.vec_loaded, schema.VEC_TABLE in tables))
        facts.findings.extend(_check_identity_and_freshness(config, conn, facts.vec_loaded))
    except DB_ERRORS as exc:
        facts.damaged = str(exc)
        facts.findings.append(Finding("index", "error", f"the index is damaged: {exc}", fix=rebuild))
    finally:
        conn.close()
    return facts


def _check_rows(conn: Any, vec_loaded: bool, has_vec_table: bool) -> list[Finding]:
    """Every chunk has its FTS row and (once embedded) its windows and vectors; nothing points nowhere."""
    out: list[Finding] = []
    chunk_ids = queries.chunk_ids(conn)
    fts_ids = queries.fts_rowids(conn)
    windows = queries.windows(conn)
    window_ids = {w for w, _ in windows}
    with_windows = {c for _, c in windows}
    embedded = queries.embedded_chunk_ids(conn)
    files_indexed = queries.file_count(conn)

    no_fts = chunk_ids - fts_ids
    if no_fts:
        out.append(Finding("fts", "error", f"{_n(len(no_fts), 'chunk')} without a keyword (FTS) row: keyword search misses them",
                           len(no_fts), fix="re-add their FTS rows"))
    else:
        out.append(Finding("fts", "ok", f"every chunk ({len(chunk_ids)}) has its FTS row"))

    orphan_lines: list[str] = []
    fts_orphans = fts_ids - chunk_ids
    if fts_orphans:
        orphan_lines.append(f"{_n(len(fts_orphans), 'FTS row')} without a chunk")
    window_orphans = {w for w, c in windows if c not in chunk_ids}
    if window_orphans:
        orphan_lines.append(f"{_n(len(window_orphans), 'embedding window')} without a chunk")
    chunk_orphans = queries.unlisted_chunk_ids(conn)
    if chunk_orphans:
        orphan_lines.append(f"{_n(len(chunk_orphans), 'chunk')} of files the index does not list")
    vec_ids: set[int] | None = None
    if has_vec_table and vec_loaded:
        vec_ids = queries.vector_rowids(conn)
        vec_orphans = vec_ids - window_ids
        if vec_orphans:
            orphan_lines.append(f"{_n(len(vec_orphans), 'vector')} without a window")
    if orphan_lines:
        total = sum(int(line.split()[0]) for line in orphan_lines)
        out.append(Finding("orphans", "error", f"{_n(total, 'orphaned row')}", total, tuple(orphan_lines),
                           "delete them"))
    else:
        out.append(Finding("orphans", "ok", "no orphaned rows"))

    missing_vec: set[int] = embedded - with_windows
    if vec_ids is not None:
        missing_vec |= {c for w, c in windows if w not in vec_ids and c in chunk_ids}
    if missing_vec:
        out.append(Finding("vectors", "error", f"{_n(len(missing_vec), 'embedded chunk')} without vectors: vector "
                           "search misses them", len(missing_vec), fix="embed them again"))
    elif has_vec_table and not vec_loaded:
        out.append(Finding("vectors", "info", "vectors not checked: sqlite-vec is not available"))
    else:
        out.append(Finding("vectors", "ok", f"every embedded chunk ({len(embedded)}) has its vectors"))

    mismatched = queries.mismatched_files(conn)
    if mismatched:
        out.append(Finding("files", "error", f"{_n(len(mismatched), 'file row')} not matching the chunks",
                           len(mismatched), tuple(mismatched[:20]), "index them again"))
    else:
        out.append(Finding("files", "ok", f"every file row ({files_indexed}) matches its chunks"))
    pending = len(chunk_ids - embedded)
    if pending and has_vec_table:
        out.append(Finding("pending", "info", f"{_n(pending, 'chunk')} not embedded yet", pending, fix="embed them"))
    return out


def _check_identity_and_freshness(config: Config, conn: Any, vec_loaded: bool) -> list[Finding]:
    out: list[Finding] = []
    identity = queries.get_meta(conn, "identity")
    stored: Any = None
    if identity is not None:
        with contextlib.suppress(ValueError):
            stored = json.loads(identity)
    files_indexed = queries.file_count(conn)
    expected = _expected_identity(config, vec_loaded)
    if not isinstance(stored, dict):
        if files_indexed:
            out.append(Finding("identity", "warn", "the index does not record what it was built with",
                               fix="rebuild it"))
        else:
            out.append(Finding("identity", "ok", "empty index"))
    elif stored != expected:
        keys = sorted(k for k in set(stored) | set(expected) if stored.get(k) != expected.get(k))
        details = tuple(f"{k}: {stored.get(k)!r} → {expected.get(k)!r}" for k in keys)
        from engine.embed.choice import describe_model_change  # the words status and index use

        change = describe_model_change(stored, expected, lambda: queries.chunk_count(conn))
        head = f"{change} on the next index" if change else "the next index rebuilds it"
        out.append(Finding("identity", "warn", f"the index was built with other settings ({', '.join(keys)}); "
                           + head, len(keys), details, "rebuild it"))
    else:
        out.append(Finding("identity", "ok", "index identity matches the settings (provider, model, chunking)"))
    scan = scan_sources(config)
    known = queries.file_stats(conn)
    present = {f.rel for f in scan.files}
    changed = [f.rel for f in scan.files if f.rel in known and known[f.rel] != (f.mtime_ns, f.size)]
    new = [f.rel for f in scan.files if f.rel not in known]
    gone = sorted(p for p in known if p not in present)
    stale = len(changed) + len(new) + len(gone)
    if stale:
        details = tuple([f"changed: {p}" for p in changed[:10]] + [f"new: {p}" for p in new[:10]]
                        + [f"deleted: {p}" for p in gone[:10]])
        out.append(Finding("stale", "info", f"{_n(stale, 'file')} changed since the last index "
                           f"({len(changed)} changed, {len(new)} new, {len(gone)} deleted)", stale, details,
                           "index them"))
    else:
        out.append(Finding("stale", "ok", f"the index is up to date ({_n(len(present), 'file')})"))
    undecodable = [f"{path}: {_n(n, 'byte')} not UTF-8" for path, n in queries.undecodable_files(conn)]
    skipped = _skipped_finding(_file_issues(scan) + undecodable)
    if skipped is not None:
        out.append(skipped)
    return out


def _file_issues(scan: ScanReport) -> list[str]:
    """The scan's issues but the skipped symlinks, folders and notes (:func:`_check_folder_links` reports those)."""
    links = {link.describe() for link in scan.links if not link.followed}
    links.update(file_link_issue(rel) for rel in scan.file_links)
    return [issue for issue in scan.issues if issue not in links]


def _check_folder_links(scan: ScanReport) -> Finding | None:
    """The symlink rule where it applies: a symlinked ``memory/`` (stow, Dropbox) and folder links inside it,
    followed or skipped (see :class:`engine.workspace.FolderLink`), and notes that are symlinks (never read: a
    symlinked ``MEMORY.md`` is as unseen as a skipped folder, so it is said here, with the same weight); None when
    there are none."""
    if not scan.links and not scan.file_links:
        return None
    skipped = [link for link in scan.links if not link.followed]
    details = tuple(link.describe() for link in scan.links) + tuple(file_link_issue(rel) for rel in scan.file_links)
    if skipped or scan.file_links:
        parts = [_n(len(skipped), "folder symlink")] if skipped else []
        parts += [_n(len(scan.file_links), "file symlink")] if scan.file_links else []
        rules = ("memory/ may link to a folder you own; a folder link inside it must lead into the workspace (or "
                 "into memory/'s own target)") if skipped else ""
        if scan.file_links:
            rules += ("; " if rules else "") + ("a note that is a symlink is never read or written: put the file "
                                                "itself there (or link its folder)")
        return Finding("symlinks", "warn", f"{' and '.join(parts)} in the memory tree skipped: the notes behind them "
                       "are not indexed, and memdeck does not write through them", len(skipped) + len(scan.file_links),
                       (*details, rules))
    head = next((link for link in scan.links if link.rel == "memory"), scan.links[0])
    more = len(scan.links) - 1
    return Finding("symlinks", "ok", head.describe() + (f" (and {_n(more, 'more folder link')})" if more else ""),
                   len(scan.links), details)


def _skipped_finding(unreadable: list[str]) -> Finding | None:
    """What the scan skipped (unreadable, oversized, control characters in the name) or read only in part."""
    if not unreadable:
        return None
    return Finding("unreadable", "info", f"{_n(len(unreadable), 'file')} skipped or only partly readable",
                   len(unreadable), tuple(unreadable[:30]))


def _check_workspace(config: Config) -> Finding:
    problem = workspace_problem(config.workspace)
    if problem is not None:
        return Finding("workspace", "error", f"{problem}: nothing can be indexed (set --workspace, "
                       "MEMDECK_WORKSPACE or workspace in the config)")
    # Saves, flushes, appends and new notes write a temp file next to the note and rename it: each needs its folder
    # writable (memory/ once it exists, the workspace itself for MEMORY.md and for making memory/). os.access
    # also sees a read-only mount, which stops root too.
    memory = config.workspace / "memory"
    link = memory_folder_link(config)  # a followed symlinked memory/ is written where it leads
    mem_folder = memory if link is None else Path(link.target) if link.followed else None
    folders = [config.workspace] + ([mem_folder] if mem_folder is not None and mem_folder.is_dir() else [])
    read_only = [folder for folder in folders if not os.access(folder, os.W_OK)]
    details = tuple(f"not writable: {folder}" for folder in read_only)
    if read_only == [memory]:
        return Finding("workspace", "warn", "memory/ is read-only: flushes, appends, new notes and saves of the "
                       "daily notes would fail (MEMORY.md and USER.md can be edited); make memory/ writable",
                       1, details)
    if read_only == [config.workspace] and len(folders) == 2:
        return Finding("workspace", "warn", "the workspace folder is read-only: saves of MEMORY.md and USER.md "
                       "would fail (notes in memory/ can be edited); make the folder writable", 1, details)
    if read_only:
        return Finding("workspace", "warn", "the workspace is read-only: saves, flushes, appends and new notes "
                       "would fail (reading, search and the index work); make it writable to edit memory",
                       len(read_only), details)
    if not any((config.workspace / name).exists() for name in ("MEMORY.md", "USER.md", "memory", "memory.md")):
        return Finding("workspace", "info", f"no memory here yet: {config.workspace} has no MEMORY.md, USER.md "
                       "or memory/ folder; if the agent's workspace is elsewhere, give --workspace (or set "
                       "workspace in the config)")
    return Finding("workspace", "ok", "the workspace folder is readable and writable")


def _check_secrets(config: Config) -> tuple[Finding, list[SecretFound]]:
    secrets = scan_secrets(config)
    if not secrets:
        return Finding("secrets", "ok", "no API keys, tokens, passwords or private keys in the memory files"), secrets
    files = sorted({s.path for s in secrets})
    details = tuple(f"{s.path}:{s.line} {s.kind}: {s.preview}" for s in secrets[:50])
    return Finding("secrets", "warn",
                   f"{_n(len(secrets), 'possible secret')} in {_n(len(files), 'memory file')} (plain text: anyone with the files "
                   "can copy them): edit the lines named below and move the secrets to a password manager or an "
                   "environment variable (--fix never changes memory files)",
                   len(secrets), details), secrets


def _check_sessions(config: Config) -> Finding:
    """Where sessions come from and whether they can be read: a locked, damaged or newer OpenClaw database is a
    finding (memdeck never repairs OpenClaw's files: ``openclaw doctor`` does)."""
    from engine.sessions.locate import open_session_source  # deferred: only doctor needs it
    from engine.sessions.sources import KIND_AGENT_DB

    where = open_session_source(config).describe()
    used = "sessions" in config.sources
    if where.kind != KIND_AGENT_DB:
        if where.available:
            return Finding("sessions", "ok", f"sessions: folder {where.location} ({where.detail})", where.sessions or 0)
        # No sessions folder is no problem of its own (the index check names it when sessions are a source).
        return Finding("sessions", "info", f"sessions: {where.detail}" + ("" if used else " (not a search source)"))
    if not where.available:
        severity = "error" if where.problem in ("damaged", "not-a-database", "unsupported") else "warn"
        advice = {"locked": "OpenClaw is writing it; try again in a moment",
                  "damaged": "run `openclaw doctor` to check it; memdeck only reads it",
                  "needs-zstandard": "pip install zstandard"}.get(where.problem or "", "")
        return Finding("sessions", severity, f"OpenClaw's session database cannot be read: {where.detail}",
                       details=(advice,) if advice else ())
    summary = (f"sessions: OpenClaw database {where.location} (schema {where.schema_version}, "
               f"{_n(where.sessions or 0, 'session')})")
    if where.newer_schema or where.warnings:
        return Finding("sessions", "warn" if where.newer_schema else "info", summary, where.sessions or 0,
                       where.warnings)
    return Finding("sessions", "ok", summary, where.sessions or 0)


def _check_bootstrap(config: Config) -> Finding:
    """Whether OpenClaw cuts MEMORY.md, USER.md or another bootstrap file out of what a session starts with."""
    budget = bootstrap_budget(config.workspace, config.agent)
    problem = (f"; {budget.config_problem} (OpenClaw's default limits assumed)",) if budget.config_problem else ()
    cut = budget.cut
    if not cut:
        memory = budget.file("MEMORY.md")
        size = f"MEMORY.md {memory.chars:,} of {memory.limit:,} characters" if memory and memory.present else \
            "no MEMORY.md"
        return Finding("bootstrap", "info" if problem else "ok",
                       f"OpenClaw injects every bootstrap file whole ({size}){''.join(problem)}")
    return Finding(
        "bootstrap", "warn",
        f"OpenClaw cuts {plural(len(cut), 'bootstrap file')} out of what a session starts with: "
        + ", ".join(f.name for f in cut) + "".join(problem),
        count=len(cut),
        details=(*(f.describe() for f in cut),
                 "move what the agent needs less often out of MEMORY.md into a dated or topic note (memdeck review), "
                 "or raise agents.defaults.bootstrapMaxChars / bootstrapTotalMaxChars in OpenClaw's config"),
    )


def diagnose(config: Config, now: float | None = None) -> DoctorReport:
    """Check the index and its surroundings without changing anything.

    Args:
        config: the configuration.
        now: the current time (tests).

    Returns:
        The report; ``report.ok`` is True when nothing needs attention.
    """
    now = time.time() if now is None else now
    findings: list[Finding] = [_check_workspace(config), _check_sqlite_vec(), _check_model(config)]
    facts = _check_index(config)
    findings.extend(facts.findings)
    scan = scan_sources(config)
    if not any(f.check == "unreadable" for f in findings):  # no sound index to compare with: still say what the scan skips
        skipped = _skipped_finding(_file_issues(scan))
        if skipped is not None:
            findings.append(skipped)
    links = _check_folder_links(scan)
    if links is not None:
        findings.append(links)
    findings.extend(_check_files_on_disk(config, now))
    findings.append(_check_permissions(config))
    findings.append(_check_sessions(config))
    findings.append(_check_bootstrap(config))
    secret_finding, secrets = _check_secrets(config)
    findings.append(secret_finding)
    return DoctorReport(str(config.workspace), str(config.index_path), tuple(findings), tuple(secrets))
