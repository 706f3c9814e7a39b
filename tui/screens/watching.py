"""Watching: files changed by others (an agent appending to today's note, OpenClaw writing a session) reach the
workbench's tree, index, editor and transcript viewer."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work

from tui.bridge import MemdeckError
from tui.messages import FilesChanged

if TYPE_CHECKING:
    from tui.screens.workbench import Workbench


class Watching:
    """The workbench's file watcher (``watch_files``, started once the index is open) and what a change does."""

    @work(group="watch", exclusive=True)
    async def watch_files(self: Workbench) -> None:
        """Watch memory files and transcripts; changes by others reach the tree, index and editor."""
        from watchfiles import awatch

        from tui.watch import WATCH_DEBOUNCE_MS, is_relevant, watch_plan

        plan = watch_plan(self.config)
        self.watch_stop = asyncio.Event()
        watchers = [awatch(*plan.recursive, debounce=WATCH_DEBOUNCE_MS, stop_event=self.watch_stop)] if plan.recursive else []
        if plan.flat:
            watchers.append(awatch(*plan.flat, debounce=WATCH_DEBOUNCE_MS, recursive=False, stop_event=self.watch_stop))

        async def pump(watcher: object) -> None:
            async for changes in watcher:  # type: ignore[attr-defined]
                paths = frozenset(Path(p) for _, p in changes if is_relevant(p, self.config))
                if paths:
                    self.post_message(FilesChanged(paths))

        # OpenClaw 2026.9 writes sessions into its agent database (and its WAL): a write there is a change to
        # the sessions, reported as the database's path. Its folder is watched flat; only the database counts.
        database = await asyncio.to_thread(_session_database, self)
        pumps = [pump(w) for w in watchers]
        if database is not None and database.parent.is_dir():
            names = {database.name, f"{database.name}-wal"}

            async def pump_database(watcher: object) -> None:
                async for changes in watcher:  # type: ignore[attr-defined]
                    if any(Path(p).name in names for _, p in changes):
                        self.post_message(FilesChanged(frozenset({database})))

            pumps.append(pump_database(awatch(database.parent, debounce=WATCH_DEBOUNCE_MS, recursive=False,
                                              stop_event=self.watch_stop)))

        try:
            await asyncio.gather(*pumps)
        except (OSError, RuntimeError) as exc:
            self.notify(f"Not watching for changes: {exc}", severity="warning")

    async def on_files_changed(self: Workbench, message: FilesChanged) -> None:
        self.sync.request()
        self.scan_tree(with_sessions=True)
        memory = self.config.workspace / "memory"
        if memory in message.paths and self.watch_enabled:
            self.watch_stop.set()
            self.watch_files()  # memory/ appeared or vanished: watch it (again)
        if self.centre.current == "editor":
            await self.editor.check_disk()
        big = self.loaded_big_file
        if self.centre.current == "bigfile" and big is not None and big.path in message.paths and big.rel:
            self.open_note(big.rel)  # changed on disk: read it again (its size may now suit the editor)
        if self.centre.current == "transcript":
            transcript = self.transcript
            if transcript.path in message.paths or _in_changed_database(self, transcript.path, message.paths):
                transcript.load(transcript.path, transcript.label, keep_position=True)


def _session_database(screen: Workbench) -> Path | None:
    try:
        return screen.bridge.session_database()
    except (MemdeckError, OSError):
        return None


def _in_changed_database(screen: Workbench, path: Path | None, changed: frozenset[Path]) -> bool:
    """Whether ``path`` is a session of OpenClaw's database and the database is among ``changed``."""
    if path is None or not any(p.name.endswith(".sqlite") for p in changed):
        return False
    return any(s.in_db and s.path == path for s in screen.memory_tree.model.sessions)
