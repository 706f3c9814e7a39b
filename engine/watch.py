"""The file-watch rules every door uses: which folders to watch, which changes matter, and the debounce."""

from __future__ import annotations

import asyncio
import os
import queue
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from engine.config import Config
from engine.workspace import (
    ROOT_MEMORY_FILES,
    SKIP_DIRS,
    FolderLink,
    linked_rel,
    memory_folder_link,
    memory_tree_roots,
)

WATCH_DEBOUNCE_MS = 400
"""Changes are grouped for this long: with a sync after it, the tree and the index follow within ~1 s."""

WATCH_TICK_MS = 500
"""While nothing changes, :func:`watch_changes` yields an empty set this often (so a caller sees it is alive)."""


@dataclass(frozen=True)
class WatchPlan:
    """Folders to watch recursively, and the workspace root (watched flat: only ``MEMORY.md`` matters there).

    ``links`` holds the folder links the memory tree meets (``memory/`` itself first), followed or not, by the
    scan's rule (:class:`engine.workspace.FolderLink`): :func:`affects_index` maps a change reported through a
    link, or at the folder it leads to, back to the note the scan lists — or to nothing, past a skipped link.
    """

    recursive: tuple[Path, ...]
    flat: tuple[Path, ...]
    links: tuple[FolderLink, ...] = ()


def watch_plan(config: Config) -> WatchPlan:
    """The existing folders worth watching: the memory tree's folders, the extra paths, the sessions folder, the
    root.

    The memory tree's folders are the scan's (:func:`engine.workspace.memory_tree_roots`): ``memory/``, or where a
    followed symlinked ``memory/`` leads (stow, Dropbox), and the target of every followed folder link inside it
    (``memory/projects -> ../projects``) — watched where they are, whether or not the platform's watcher follows
    links. The root is watched flat: a workspace may hold big trees (repositories, ``node_modules``) that are not
    memory and would cost a watch per folder.
    """
    links: list[FolderLink] = []
    recursive: list[Path] = []
    for root in memory_tree_roots(config, links):
        if root not in recursive:
            recursive.append(root)
    for extra in config.extra_paths:
        folder = extra if extra.is_dir() else extra.parent
        if folder.is_dir() and folder not in recursive and not extra.is_symlink():
            recursive.append(folder)
    sessions = config.resolved_sessions_dir
    if sessions.is_dir() and sessions not in recursive:
        recursive.append(sessions)
    flat = (config.workspace,) if config.workspace.is_dir() else ()
    return WatchPlan(tuple(recursive), flat, tuple(links))


def is_relevant(path: str, config: Config) -> bool:
    """Whether a change under the watched folders can matter to a view of memory: a Markdown file, a
    transcript, ``sessions.json``, or the memory folder itself appearing or vanishing.

    Temp files of atomic writes (ours and others') and skipped folders (``.git``, ``node_modules``, …) never do.
    """
    p = Path(path)
    if any(part in SKIP_DIRS for part in _inner_parts(p, config)):
        return False
    name = p.name
    if name.startswith(".") and name.endswith(".tmp"):
        return False
    if name.endswith(".md"):
        return True
    if name.endswith(".jsonl") or ".jsonl.reset." in name or name == "sessions.json":
        return True
    return os.path.normpath(path) == os.path.normpath(config.workspace / "memory")


def _inner_parts(p: Path, config: Config) -> tuple[str, ...]:
    """The path's parts below the watched folder holding it (a workspace inside e.g. ``~/venv`` is not skipped, nor
    a followed symlinked ``memory/`` that leads into one)."""
    link = memory_folder_link(config)
    linked = (Path(link.target),) if link is not None and link.followed else ()
    for root in (*linked, config.workspace, *config.extra_paths, config.resolved_sessions_dir):
        try:
            return p.relative_to(root).parts
        except ValueError:
            continue
    return p.parts


def _under(path: Path, folder: Path) -> str | None:
    """``path`` relative to ``folder`` (``/`` separators), or None outside it."""
    try:
        return PurePosixPath(path.relative_to(folder)).as_posix()
    except ValueError:
        return None


def _workspace_rel(path: Path, config: Config, links: tuple[FolderLink, ...]) -> str | None:
    """The rel the scan would list ``path`` under: a change reported at a followed link's target is the note under
    the link (:func:`engine.workspace.linked_rel`); else its place in the workspace, as named or resolved. None
    outside both."""
    linked = linked_rel(path, links)
    if linked is not None:
        return linked
    for ws in dict.fromkeys((Path(os.path.normpath(config.workspace.absolute())), config.workspace.resolve())):
        inner = _under(path, ws)
        if inner is not None:
            return inner
    return None


def _listed_through(rel: str, links: tuple[FolderLink, ...]) -> bool:
    """Whether the scan lists ``memory/…`` ``rel``: the nearest folder link on its way decides (none: a plain
    folder, listed)."""
    on_way = [link for link in links if rel.startswith(link.rel + "/")]
    return max(on_way, key=lambda link: len(link.rel)).followed if on_way else True


def affects_index(path: str, config: Config, plan: WatchPlan | None = None) -> bool:
    """Whether a change can change the search index: a memory Markdown file (``MEMORY.md``, ``memory/**.md`` by
    the scan's symlink rule, the extra paths), or a transcript in the sessions folder when sessions are a search
    source.

    Watchers report a change through a followed link (``memory/projects/p.md``) or where it leads (the target
    folder, watched in its own right): both are the note the scan lists; past a link the scan skips, nothing is.
    Pass the watcher's ``plan`` (else it is made here: a listing of the memory tree's folders).
    """
    if not is_relevant(path, config):
        return False
    p = Path(os.path.normpath(Path(path).absolute()))
    if p.suffix == ".jsonl":
        return "sessions" in config.sources and p.resolve().parent == config.resolved_sessions_dir.resolve()
    if p.suffix != ".md" or p.name.startswith("."):
        return False
    links = (plan if plan is not None else watch_plan(config)).links
    rel = _workspace_rel(p, config, links)
    if rel is not None and (rel in ROOT_MEMORY_FILES or rel.startswith("memory/")):
        return rel in ROOT_MEMORY_FILES or _listed_through(rel, links)
    resolved = p.resolve()
    extras = [e.resolve() for e in config.extra_paths]
    return any(resolved == extra or extra in resolved.parents for extra in extras)


class _Either:
    """Set when either event is: the caller's stop, or the generator being closed."""

    def __init__(self, *events: threading.Event) -> None:
        self._events = events

    def is_set(self) -> bool:
        return any(event.is_set() for event in self._events)


def watch_changes(config: Config, stop: threading.Event, *, tick_ms: int = WATCH_TICK_MS) -> Iterator[frozenset[Path]]:
    """Watch memory (blocking): yield each debounced set of relevant changed paths until ``stop`` is set.

    An empty set comes every ``tick_ms`` while nothing changes. Filter with :func:`affects_index` when only
    the index matters. Nothing is yielded when there is nothing to watch.

    Raises:
        ImportError: ``watchfiles`` is not installed.
        OSError, RuntimeError: the watcher failed.
    """
    from watchfiles import watch  # deferred: only long-running doors watch

    plan = watch_plan(config)
    groups = [(roots, recursive) for roots, recursive in ((plan.recursive, True), (plan.flat, False)) if roots]
    if not groups:
        return
    closed = threading.Event()
    either = _Either(stop, closed)
    out: queue.Queue[frozenset[Path] | BaseException | None] = queue.Queue()

    def run(roots: tuple[Path, ...], recursive: bool) -> None:
        try:
            for changes in watch(*roots, watch_filter=lambda _change, p: is_relevant(p, config),
                                 debounce=WATCH_DEBOUNCE_MS, stop_event=either, rust_timeout=tick_ms,
                                 yield_on_timeout=True, recursive=recursive, raise_interrupt=False):
                out.put(frozenset(Path(p) for _change, p in changes))
        except BaseException as exc:  # handed to the caller's thread
            out.put(exc)
        finally:
            out.put(None)

    # One thread per group: watchfiles watches one set of roots either recursively or flat, not both.
    threads = [threading.Thread(target=run, args=group, name="memdeck-watch", daemon=True) for group in groups]
    for thread in threads:
        thread.start()
    try:
        running = len(threads)
        while running:
            item = out.get()
            if item is None:
                running -= 1
            elif isinstance(item, BaseException):
                raise item
            else:
                yield item
    finally:
        closed.set()


async def awatch_changes(config: Config, stop: asyncio.Event) -> AsyncIterator[frozenset[Path]]:
    """Watch memory on an event loop: yield each debounced set of relevant changed paths until ``stop`` is set.

    Raises:
        ImportError: ``watchfiles`` is not installed.
        OSError, RuntimeError: the watcher failed.
    """
    from watchfiles import awatch

    plan = watch_plan(config)
    groups = [(roots, recursive) for roots, recursive in ((plan.recursive, True), (plan.flat, False)) if roots]
    out: asyncio.Queue[frozenset[Path] | BaseException | None] = asyncio.Queue()

    async def pump(roots: tuple[Path, ...], recursive: bool) -> None:
        try:
            async for changes in awatch(*roots, watch_filter=lambda _change, p: is_relevant(p, config),
                                        debounce=WATCH_DEBOUNCE_MS, stop_event=stop, recursive=recursive):
                await out.put(frozenset(Path(p) for _change, p in changes))
        except Exception as exc:  # handed to the consumer
            await out.put(exc)
        finally:
            await out.put(None)

    tasks = [asyncio.ensure_future(pump(*group)) for group in groups]
    try:
        running = len(tasks)
        while running:
            item = await out.get()
            if item is None:
                running -= 1
            elif isinstance(item, BaseException):
                raise item
            else:
                yield item
    finally:
        for task in tasks:
            task.cancel()
