"""The TUI's one door to the engine: plain synchronous calls (run them off the event loop), plain data back.

Every memory operation is the engine's (:class:`engine.api.MemoryEngine`, or before the index is open the
same operations without it, :class:`engine.api.MemoryFiles`); this module only adds threads' worth of
convenience and the tree's presentation. ``engine.api`` is imported on first use, never with the app.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.errors import MemdeckError, PathRefused

if TYPE_CHECKING:  # deferred: the first screen needs none of these (engine.api alone pulls in SQLite)
    from engine.api import (
        AuditReport,
        Deleted,
        Draft,
        Finding,
        FlushPlan,
        Lost,
        MemoryEngine,
        MemoryFiles,
        RenamePlan,
        ReviewAction,
        ReviewItem,
        ReviewReport,
        SearchResponse,
        SessionInfo,
        Status,
        SyncProgress,
        SyncReport,
        Transcript,
    )
    from engine.api import DiskStamp as DiskStamp
    from engine.api import Note as Note
    from engine.api import SaveConflict as SaveConflict
    from engine.api import SaveResult as SaveResult
    from engine.api import same_content as same_content
    from engine.api import topic_rel as topic_rel
    from engine.config import Config

__all__ = [
    "Bridge",
    "DiskStamp",
    "MemdeckError",
    "Note",
    "NoteEntry",
    "PathRefused",
    "SaveConflict",
    "SaveResult",
    "SessionEntry",
    "TreeModel",
    "build_tree_model",
    "same_content",
    "token_text",
    "topic_rel",
    "unified_diff",
]

SEARCH_MODES = ("hybrid", "keyword", "vector")
_FROM_ENGINE = frozenset({"DiskStamp", "Note", "SaveConflict", "SaveResult", "same_content", "topic_rel"})


def __getattr__(name: str) -> Any:
    """The engine's plain types and helpers the widgets use, imported with ``engine.api`` on first use."""
    if name not in _FROM_ENGINE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import engine.api

    return getattr(engine.api, name)


@dataclass(frozen=True)
class NoteEntry:
    """One memory file in the tree.

    Attributes:
        rel: workspace-relative path (absolute for extra paths outside the workspace).
        label: what the tree shows.
        kind: ``root``, ``daily``, ``session-note``, ``topic`` or ``extra``.
        day: the date of daily files and session notes.
    """

    rel: str
    label: str
    kind: str
    day: date | None = None


@dataclass(frozen=True)
class SessionEntry:
    """One agent session in the tree (a transcript file, or a session in OpenClaw's agent database).

    ``path`` is what the engine reads it by: the file, or a database session's stand-in
    ``sessions/<agent>/<id>.jsonl`` (never a file to open). ``title`` is the session's name without the date.
    """

    path: Path
    session_id: str
    label: str
    detail: str
    archived: bool = False
    error: str | None = None
    title: str = ""
    in_db: bool = False


TOKEN_SOURCES = {"store": "store total", "usage": "last turn usage"}
"""What a session's token count is, in words: the agent's session store total, or the last reply's usage."""


def token_text(tokens: int | None, source: str | None) -> str | None:
    """``12,345 tokens (store total)``; None without a count."""
    if not tokens:
        return None
    from engine.api import plural  # a session's counts come from the engine: it is loaded

    what = TOKEN_SOURCES.get(source or "")
    return plural(tokens, "token", grouped=True) + (f" ({what})" if what else "")


@dataclass(frozen=True)
class TreeModel:
    """Everything the memory tree shows, grouped."""

    root: tuple[NoteEntry, ...] = ()
    daily: tuple[NoteEntry, ...] = ()
    session_notes: tuple[NoteEntry, ...] = ()
    topics: tuple[NoteEntry, ...] = ()
    extras: tuple[NoteEntry, ...] = ()
    sessions: tuple[SessionEntry, ...] = ()
    sessions_error: str | None = None
    issues: tuple[str, ...] = ()

    @property
    def notes(self) -> tuple[NoteEntry, ...]:
        """Every memory file."""
        return self.root + self.daily + self.session_notes + self.topics + self.extras


@dataclass
class _Flags:
    engine_error: str | None = None
    opened: threading.Event = field(default_factory=threading.Event)


def unified_diff(rel: str, disk_text: str, mine: str) -> str:
    """The diff from the disk version to the editor's text (what the conflict dialog shows)."""
    import difflib  # deferred: only a conflict needs it

    def split(text: str) -> list[str]:  # at "\n" only, as the editor and citations count lines (not U+2028)
        parts = text.split("\n")
        return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])

    lines = difflib.unified_diff(
        split(disk_text),
        split(mine),
        fromfile=f"{rel} (on disk)",
        tofile=f"{rel} (editor)",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def build_tree_model(rels: list[str], workspace: Path, sessions: tuple[SessionEntry, ...] = (),
                     sessions_error: str | None = None, issues: tuple[str, ...] = ()) -> TreeModel:
    """Group memory files for the tree: root files, daily notes newest first, session notes, topics, extras.

    Which files are dated is the engine's rule (:func:`engine.api.dated_note`); the grouping is the tree's.
    Labels are file names shown through the engine's display rule: a control character in a name is shown as a
    visible escape, never sent to the terminal.
    """
    from engine.api import dated_note, safe_name

    root: list[NoteEntry] = []
    daily: list[NoteEntry] = []
    notes: list[NoteEntry] = []
    topics: list[NoteEntry] = []
    extras: list[NoteEntry] = []
    for rel in rels:
        if "/" not in rel:
            root.append(NoteEntry(rel, safe_name(rel), "root"))
        elif (dated := dated_note(rel)) is not None:
            if dated.slug is None:
                daily.append(NoteEntry(rel, f"{dated.day:%Y-%m-%d} {dated.day:%a}", "daily", dated.day))
            else:
                notes.append(NoteEntry(rel, f"{dated.day:%Y-%m-%d} {safe_name(dated.slug)}", "session-note",
                                       dated.day))
        elif rel.startswith("memory/"):
            topics.append(NoteEntry(rel, safe_name(rel.removeprefix("memory/")), "topic"))
        else:
            extras.append(NoteEntry(rel, safe_name(_extra_label(rel, workspace)), "extra"))
    daily.sort(key=lambda e: (e.day or date.min, e.rel), reverse=True)
    notes.sort(key=lambda e: (e.day or date.min, e.rel), reverse=True)
    topics.sort(key=lambda e: e.rel)
    extras.sort(key=lambda e: e.rel)
    root.sort(key=lambda e: e.rel)
    return TreeModel(tuple(root), tuple(daily), tuple(notes), tuple(topics), tuple(extras), sessions,
                     None if sessions_error is None else safe_name(sessions_error),
                     tuple(safe_name(issue) for issue in issues))


def _extra_label(rel: str, workspace: Path) -> str:
    path = Path(rel)
    with contextlib.suppress(ValueError):
        return path.relative_to(workspace).as_posix()
    home = Path.home()
    with contextlib.suppress(ValueError):
        return "~/" + path.relative_to(home).as_posix()
    return rel


def _session_entry(info: SessionInfo, zone: tzinfo | None = None) -> SessionEntry:
    """A session for the tree: its names come from the agent's files, so they are shown through the display rule;
    its time is shown in ``zone`` (the user's: ``[memory] timezone``)."""
    from engine.api import plural, safe_name

    when = info.last_activity.astimezone(zone)
    name = info.title or info.display_name or info.session_key or info.session_id[:8]
    bits = [info.session_id[:8]]
    if info.channel:
        bits.append(info.channel)
    bits.append(plural(info.message_count, "msg"))
    if (tokens := token_text(info.total_tokens, info.tokens_source)) is not None:
        bits.append(tokens)
    if info.archived:
        bits.append("archived")
    if info.skipped_lines:
        bits.append(plural(info.skipped_lines, "bad line"))
    return SessionEntry(info.path, info.session_id, safe_name(f"{when:%Y-%m-%d} {name}"), safe_name(" · ".join(bits)),
                        info.archived, None if info.error is None else safe_name(info.error), safe_name(name),
                        info.source == "agent-db")


class Bridge:
    """Everything the TUI asks of the engine.

    Methods block: call them from ``asyncio.to_thread`` or a thread worker, never from the event loop
    (except the few marked as instant). The engine itself is created by :meth:`open`, off the event loop,
    so the first screen never waits for SQLite, sqlite-vec or the embedder modules. Until it is open, the
    file operations run on the engine's index-free :class:`~engine.api.MemoryFiles`.
    """

    def __init__(self, config: Config) -> None:
        self.config = config
        self._engine: MemoryEngine | None = None
        self._files: MemoryFiles | None = None
        self._flags = _Flags()
        self._open_lock = threading.Lock()
        self._files_lock = threading.Lock()
        self.lock_wait = 10.0
        """Seconds a sync waits for another process's writer lock before it reports the index busy."""

    # -- the engine ---------------------------------------------------------------------------
    def open(self) -> None:
        """Open the index (imports the engine; ~0.2 s). Safe to call more than once.

        Raises:
            MemdeckError: the index cannot be opened.
            OSError: the index folder cannot be created.
        """
        with self._open_lock:
            if self._engine is not None:
                return
            from engine.api import MemoryEngine

            try:
                self._engine = MemoryEngine(self.config)
            except (MemdeckError, OSError) as exc:
                self._flags.engine_error = str(exc)
                raise
            finally:
                self._flags.opened.set()

    @property
    def is_open(self) -> bool:
        """Whether :meth:`open` succeeded (instant)."""
        return self._engine is not None

    @property
    def engine(self) -> MemoryEngine:
        """The engine; raises when it is not open yet."""
        if self._engine is None:
            raise MemdeckError(self._flags.engine_error or "the index is still opening")
        return self._engine

    @property
    def memory(self) -> MemoryFiles:
        """The engine's memory operations: the engine once open, else the same operations without the index."""
        if self._engine is not None:
            return self._engine
        with self._files_lock:
            if self._files is None:
                from engine.api import MemoryFiles

                self._files = MemoryFiles(self.config)
            return self._files

    def close(self) -> None:
        """Close the index."""
        if self._engine is not None:
            with contextlib.suppress(Exception):
                self._engine.close()

    @property
    def vector_state(self) -> str:
        """``ready``, ``loading``, ``not-loaded`` or ``unavailable: <why>`` (instant)."""
        if self._engine is None:
            return "not-loaded"
        return self._engine.vector_state

    @property
    def model_loaded(self) -> bool:
        """Whether vectors can be computed now without loading anything (instant)."""
        engine = self._engine
        return engine is not None and engine.embedder is not None and engine.embedder.loaded

    @property
    def needs_model(self) -> bool:
        """Whether there is a model that still has to be loaded (instant)."""
        engine = self._engine
        if engine is None or engine.embedder is None or not engine.can_embed:
            return False
        return not engine.embedder.loaded

    def load_model(self) -> str:
        """Load the embedding model (seconds: torch is imported here); returns the vector state."""
        self.engine.load_model()
        return self.engine.vector_state

    # -- search -------------------------------------------------------------------------------
    def search(self, query: str, mode: str = "hybrid") -> SearchResponse:
        """Search as the user types: never syncs, never loads the model (keyword results meanwhile)."""
        from engine.api import SearchResponse

        if not query.strip():
            return SearchResponse((), "none", None, mode)
        if self._engine is None:
            return SearchResponse((), "none", None, mode, ("opening the index…",))
        return self._engine.search(query, mode=mode, ensure_fresh=False, allow_model_load=False)

    # -- indexing ------------------------------------------------------------------------------
    def sync(
        self,
        progress: Callable[[SyncProgress], None] | None = None,
        cancel: threading.Event | None = None,
        force: bool = False,
        embed: bool | None = None,
    ) -> SyncReport:
        """Bring the index up to date; ``embed`` defaults to "only when the model is loaded"."""
        engine = self.engine
        if embed is None:
            embed = self.model_loaded
        return engine.sync(force=force, progress=progress, cancel=cancel, embed=embed, wait=self.lock_wait)

    def pending_embeddings(self) -> int:
        """Chunks that have no vector yet (0 when vectors are unavailable)."""
        return self.engine.pending_embeddings()

    def status(self) -> Status:
        """The index status (scans the workspace)."""
        return self.engine.status()

    def file_states(self) -> dict[str, str]:
        """Per file: ``indexed``, ``changed``, ``new`` or ``not-embedded``."""
        return self.engine.file_states()

    def reindex(self) -> tuple[str, ...]:
        """Make saved text searchable now; returns warnings instead of raising."""
        try:
            self.engine.sync(embed=self.model_loaded, wait=10.0)
        except (MemdeckError, OSError) as exc:
            return (f"saved, but not yet searchable: {exc}",)
        return ()

    # -- the tree -----------------------------------------------------------------------------
    def scan_tree(self) -> TreeModel:
        """List memory files and sessions for the tree (reads each transcript's summary)."""
        report = self.memory.list_notes()
        sessions, error = self._list_sessions()
        return build_tree_model([f.rel for f in report.files], self.config.workspace, sessions, error,
                                report.issues)

    def scan_notes(self) -> TreeModel:
        """Memory files only (fast; no transcripts read): the tree's first paint."""
        report = self.memory.list_notes()
        return build_tree_model([f.rel for f in report.files], self.config.workspace, issues=report.issues)

    def _list_sessions(self) -> tuple[tuple[SessionEntry, ...], str | None]:
        from engine.api import SessionReadError

        memory = self.memory
        where = memory.describe_sessions()
        if not where.available:
            return (), where.detail
        try:
            infos = memory.list_sessions()
        except SessionReadError as exc:
            return (), str(exc)
        zone = memory.timezone
        return tuple(_session_entry(info, zone) for info in infos), None

    @property
    def sessions_dir(self) -> Path:
        """The agent's sessions folder (instant)."""
        return self.config.resolved_sessions_dir

    @property
    def flush_state_path(self) -> Path:
        """memdeck's record of which sessions were flushed."""
        return self.memory.flush_state_path

    # -- notes --------------------------------------------------------------------------------
    def resolve(self, rel: str) -> tuple[str, Path]:
        """A memory path the user or a result named → (rel, absolute); refuses anything else."""
        return self.memory.resolve(rel)

    def daily_rel(self, day: date) -> str:
        """The daily note of ``day`` (``memory/YYYY-MM-DD.md``), as the engine names it."""
        from engine.api import daily_rel

        return daily_rel(day)

    def read_note(self, rel: str) -> Note:
        """Read a memory file for the editor (any bytes; a missing file reads as empty).

        Raises:
            PathRefused: not a memory file.
            OSError: the file exists but cannot be read.
        """
        return self.memory.read_note(rel)

    def note_size(self, rel: str) -> tuple[str, Path, int | None]:
        """A memory file's (rel, path, size in bytes); size None when it does not exist.

        Raises:
            PathRefused: not a memory file.
        """
        rel, path = self.memory.resolve(rel)
        try:
            return rel, path, path.stat().st_size
        except FileNotFoundError:
            return rel, path, None

    def disk_stamp(self, rel: str) -> DiskStamp | None:
        """The file's stamp now."""
        return self.memory.disk_stamp(rel)

    def save_note(self, rel: str, text: str, expected: DiskStamp | None, reindex: bool = False) -> SaveResult:
        """Write the editor's text atomically, unless the file changed on disk since ``expected``.

        The TUI re-indexes after the save itself (it first pauses any long background embedding);
        ``reindex`` does it here instead.

        Raises:
            SaveConflict: the file on disk is not what the editor read (nothing written).
            PathRefused: not a memory file.
            OSError: the write failed (the old file is intact).
        """
        result = self.memory.save_note(rel, text, expected)
        if not reindex:
            return result
        from dataclasses import replace

        return replace(result, warnings=(*result.warnings, *self.reindex()))

    def write_copy(self, rel: str, text: str, now: datetime | None = None) -> Path:
        """Keep the editor's text aside in memdeck's data dir (where nothing indexes it); returns its path."""
        return self.memory.write_copy(rel, text, now)

    def create_daily(self, day: date) -> tuple[str, bool]:
        """The daily note of ``day``: created with the engine's daily heading when missing. Returns (rel, created)."""
        return self.memory.create_daily(day)

    def create_topic(self, name: str) -> str:
        """A new topic file ``memory/<name>.md`` with a heading; refuses to overwrite."""
        return self.memory.create_topic(name)

    def plan_rename(self, rel: str, new_name: str) -> RenamePlan:
        """Where a rename would put the file, and the rules applied (the confirmation shows both)."""
        return self.memory.plan_rename(rel, new_name)

    def rename_note(self, rel: str, new_name: str) -> str:
        """Rename a memory file (never over an existing one); returns the new rel."""
        return self.memory.rename_note(rel, new_name)

    def delete_note(self, rel: str) -> Deleted:
        """Delete a memory file into memdeck's trash (the next sync drops it from the index)."""
        return self.memory.delete_note(rel)

    def restore_deleted(self) -> Deleted:
        """Undo the latest delete: the file goes back where it was (never over a file)."""
        return self.memory.restore_deleted()

    # -- sessions -----------------------------------------------------------------------------
    def find_session(self, session: str) -> Path:
        """What the engine reads a session by, from a search hit's path, an id or an id prefix.

        Raises:
            SessionReadError: nothing, or more than one session, matches.
        """
        return self.memory.find_session(session)

    @property
    def timezone(self) -> tzinfo:
        """The zone every time is shown and every note dated in (``[memory] timezone``, else the system's)."""
        return self.memory.timezone

    def now(self) -> datetime:
        """The time now from the engine's one clock: in the zone notes are dated in (``[memory] timezone``, else the
        system's), on ``MEMDECK_TODAY``'s day when it is set (see :mod:`engine.clock`)."""
        return self.memory.now()

    def session_database(self) -> Path | None:
        """OpenClaw's agent database the sessions are read from; None when they come from a folder."""
        source = self.memory.sessions
        return source.location if source.kind == "agent-db" else None

    def read_transcript(self, path: Path) -> Transcript:
        """Parse a session transcript (bad lines are skipped and counted, never fatal).

        Raises:
            SessionReadError: the file cannot be read at all.
        """
        return self.memory.read_session(path)

    def read_transcript_head(self, path: Path, limit: int = 256 * 1024) -> Transcript | None:
        """The transcript's first ``limit`` bytes (whole lines) parsed, for a first screen of a big file.

        None when the file is small enough to read whole at once, or cannot be read (the whole read then says why).
        """
        from engine.api import SessionReadError

        try:
            return self.memory.read_session_head(path, limit)
        except SessionReadError:
            return None

    def session_key(self, path: Path) -> tuple[str, str]:
        """The transcript's ``sessions.json`` key and channel (``unknown`` when absent)."""
        entry = self.memory.session_entry(path)
        if entry is None:
            return "unknown", "unknown"
        return entry.session_key, entry.channel or "unknown"

    def draft_flush(self, transcript: Transcript) -> Draft:
        """Draft memories from a session, as ``memdeck flush`` does: the configured LLM, else (or when it fails)
        the extractive drafter; what memory already holds is skipped once the index is open."""
        return self.memory.draft_flush(transcript)

    def known(self, statement: str) -> bool:
        """Whether memory already holds ``statement`` (the engine's rule; False while the index is not open)."""
        engine = self._engine
        return engine is not None and engine.knows(statement)

    is_known = known  # the name the TUI has always called

    def plan_flush(self, transcript: Transcript, draft: Draft, now: datetime) -> FlushPlan:
        """Where a flush goes, as ``memdeck flush`` files it: each item under the day it was said, one block per
        daily note (its :attr:`~engine.api.FlushPlan.preview` has a ``<!-- flush → memory/… -->`` separator
        before each day's block when there are several)."""
        return self.memory.plan_flush(transcript, draft, now)

    @staticmethod
    def flush_targets(plan: FlushPlan) -> str:
        """The daily notes a flush goes to, for the preview's title: ``memory/2026-11-12.md`` or
        ``memory/2026-11-12.md, memory/2026-11-13.md``."""
        return ", ".join(plan.paths)

    def flush_heading(self, plan: FlushPlan) -> str:
        """The heading the first note of a flush gets when it is new (the recovery copy of an edited draft)."""
        from engine.api import daily_heading

        return daily_heading(plan.blocks[0].day if plan.blocks else plan.fallback)

    def write_flush(self, plan: FlushPlan, text: str, now: datetime) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Append a reviewed (edited) flush preview to the daily notes its separators name, and record the flush;
        returns (the notes written, warnings)."""
        written = self.memory.write_flush(plan, now, text)
        return written.rels, written.warnings

    def write_session_note(self, transcript: Transcript, path: Path | None = None) -> str:
        """Write OpenClaw's session note (``memory/YYYY-MM-DD-HHMM.md``, or an LLM's slug) for a transcript; returns
        its rel.

        ``path`` is accepted for older callers; the engine looks the session up by the transcript's own path.
        """
        return self.memory.write_session_note(transcript).rel

    # -- memory review ------------------------------------------------------------------------
    # The writes leave reindexing to the caller (reindex=False): the TUI posts the changed files to its sync queue,
    # which stops a long background embedding first, as after an editor save; waiting for it here could take minutes.
    def review(self, show_all: bool = False) -> ReviewReport:
        """Review the memory files (incremental: what changed since the last review is compared again);
        ``show_all``: the less sure findings too (else counted in ``hidden``)."""
        return self.engine.review(show_all=show_all)

    def review_context(self, item: ReviewItem, around: int = 2) -> tuple[list[tuple[int, str]], bool]:
        """The item's lines with ``around`` lines either side, ``[(line number, text)]``, and whether the cited lines
        still say what the review saw (False: the file changed since)."""
        text = self.memory.read_note(item.path).text
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        start = max(1, item.start_line - around)
        end = min(len(lines), item.end_line + around)
        cited = "\n".join(lines[item.start_line - 1:item.end_line])
        return [(n, lines[n - 1]) for n in range(start, end + 1)], " ".join(cited.split()) == " ".join(item.text.split())

    def review_sections(self, target: str = "MEMORY.md") -> list[str]:
        """The ``## `` sections of MEMORY.md or USER.md."""
        return self.engine.review_sections(target)

    def review_promote(self, item: ReviewItem, section: str | None, target: str, text: str | None,
                       finding_id: str = "") -> ReviewAction:
        """Promote a statement into MEMORY.md / USER.md (the engine's one operation)."""
        return self.engine.review_promote(item, section, target, text, finding_id, reindex=False)

    def review_supersede(self, finding: Finding, old: int | None = None) -> ReviewAction:
        """Mark a statement superseded by the finding's current one."""
        return self.engine.review_supersede(finding, old, reindex=False)

    def review_delete(self, finding: Finding, index: int) -> ReviewAction:
        """Delete one copy of a duplicate."""
        return self.engine.review_delete(finding, index, reindex=False)

    def review_merge(self, finding: Finding, text: str) -> ReviewAction:
        """Merge a finding's statements into one line."""
        return self.engine.review_merge(finding, text, reindex=False)

    def review_move(self, finding: Finding) -> ReviewAction:
        """Move a budget finding's section out of MEMORY.md/USER.md into its memory/*.md note."""
        return self.engine.review_move(finding, reindex=False)

    def review_dismiss(self, finding: Finding) -> ReviewAction:
        """Dismiss a finding (remembered in memdeck's data dir)."""
        return self.engine.review_dismiss(finding)

    def review_undo(self) -> ReviewAction:
        """Undo the last review action."""
        return self.engine.review_undo(reindex=False)

    # -- session audit --------------------------------------------------------------------------
    def audit(self) -> AuditReport:
        """What people said in sessions that memory does not hold yet, per session (newest first)."""
        return self.engine.audit()  # type: ignore[no-any-return]

    def audit_recover(self, statements: Sequence[Lost], target: str = "daily", section: str | None = None,
                      text: str | None = None) -> ReviewAction:
        """Append audit statements to memory (the engine's one operation; undone by :meth:`review_undo`):
        ``daily`` to the notes of the days they were said, or one to MEMORY.md/USER.md (``text``: its wording)."""
        from dataclasses import replace

        picked = [replace(statements[0], text=text)] if text and len(statements) == 1 else list(statements)
        return self.engine.recover_statements(picked, target, section, reindex=False)

    # -- settings -----------------------------------------------------------------------------
    def save_settings(self, **settings: str) -> None:
        """Remember UI choices (``theme=``, ``search_mode=``) in memdeck's state file, never in the config file.

        Raises:
            StateError: the state file cannot be written, or a value is refused.
        """
        from engine.api import save_state

        save_state(self.config, **settings)

    def user_themes_dir(self) -> Path:
        """Where user theme TOML files live: ``themes/`` next to the config file."""
        return self.config.config_path.parent / "themes"
