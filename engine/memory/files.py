"""MemoryFiles: every memory operation on the files themselves (notes, sessions, flush drafts, appends,
session notes); :class:`engine.api.MemoryEngine` adds the index."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import date, datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING

from engine.clock import Clock
from engine.config import Config
from engine.errors import MemdeckError, PathRefused
from engine.sessions.model import (
    SessionInfo,
    SessionLookupError,
    StoreEntry,
    Transcript,
)
from engine.textio import DiskStamp
from engine.workspace import (
    GetResult,
    ScanReport,
    check_line_range,
    check_memory_folder,
    resolve_memory_path,
    scan_memory_files,
)

if TYPE_CHECKING:
    from engine.memory.append import FlushPlan
    from engine.memory.draft import Draft
    from engine.memory.rename import RenamePlan
    from engine.memory.saving import Appended, Note, SaveResult
    from engine.memory.trash import Deleted
    from engine.sessions.sources import (
        SessionSource,
        SourceStatus,
    )


HEAD_BYTES = 256 * 1024
"""How much of a transcript a first screen reads (:meth:`MemoryFiles.read_session_head`)."""


@dataclass(frozen=True)
class FlushWritten:
    """A reviewed flush appended to a daily note (and recorded, unless ``warnings`` says otherwise)."""

    rel: str
    path: Path
    warnings: tuple[str, ...] = ()
    rels: tuple[str, ...] = ()
    paths: tuple[Path, ...] = ()


@dataclass(frozen=True)
class SessionNote:
    """A session note: its text and where it was (or, for a dry run, would be) written."""

    rel: str
    path: Path
    text: str
    written: bool
    warnings: tuple[str, ...] = ()


class MemoryFiles:
    """Every memory operation on the files themselves: notes, daily notes and topics, sessions, flush drafts,
    appends and session notes. Each write is atomic and none overwrites another writer's change.

    No index is needed: :class:`MemoryEngine` is a ``MemoryFiles`` with the index (and then drafts skip what
    memory already holds); the TUI uses a plain one until its index is open. Methods block (file I/O).

    Args:
        config: the workspace, the sessions folder and memdeck's data dir.
        sessions: where sessions come from; defaults to the configured sessions folder.
        clock: what time it is (tests inject one); defaults to the clock of ``[memory] timezone``
            (:class:`engine.clock.Clock`: ``MEMDECK_TODAY`` and ``MEMDECK_NOW`` are heard).
    """

    def __init__(self, config: Config, sessions: SessionSource | None = None, *, clock: Clock | None = None) -> None:
        self.config = config
        self._sessions = sessions
        self._clock = clock

    # -- notes -------------------------------------------------------------------------------
    def resolve(self, rel: str) -> tuple[str, Path]:
        """A path a user, a result or an agent named → ``(rel, absolute)``, if it is a memory file.

        Raises:
            PathRefused: not a memory file, or it escapes the workspace.
        """
        return resolve_memory_path(self.config, rel)

    def _rel(self, path: Path) -> str:
        """A written file's workspace-relative name (the workspace may be reached through a symlink)."""
        for root in (self.config.workspace, self.config.workspace.resolve()):
            with contextlib.suppress(ValueError):
                return path.relative_to(root).as_posix()
        return path.as_posix()

    def _writable_memory_folder(self) -> None:
        """Refuse a write under ``memory/`` that the scan would not read back (a symlink it does not follow).

        Raises:
            FlushError: with the rule (see :func:`engine.workspace.check_memory_folder`).
        """
        from engine.memory.saving import FlushError

        try:
            check_memory_folder(self.config)
        except PathRefused as exc:
            raise FlushError(str(exc)) from exc

    def list_notes(self) -> ScanReport:
        """The memory files (``MEMORY.md``, ``memory/**.md``, extra paths) and the problems met listing them."""
        return scan_memory_files(self.config)

    def read_note(self, rel: str) -> Note:
        """A memory file read for editing, with its disk stamp (a missing file reads as empty)."""
        from engine.memory.saving import read_note

        return read_note(self.config, rel)

    def disk_stamp(self, rel: str) -> DiskStamp | None:
        """The memory file's stamp now (None: it does not exist)."""
        from engine.memory.saving import disk_stamp

        return disk_stamp(self.config, rel)

    def save_note(self, rel: str, text: str | bytes, expected: DiskStamp | None) -> SaveResult:
        """Write a note atomically unless it changed on disk since ``expected`` was read.

        Only the lines ``text`` changed are written anew: the file keeps its encoding, byte-order mark and line
        endings (mixed ones too), and every other line its exact bytes, so saving :attr:`Note.text` unchanged
        writes the same bytes (:func:`engine.textio.encode_edit`; the review's writes go through here too).
        ``bytes`` are written as they are (the review's undo puts a file's exact bytes back).

        Raises:
            SaveConflict: it changed (nothing written); the error carries the disk's text and stamp.
            PathRefused: not a memory file.
            OSError: the write failed (the old file is intact).
        """
        from engine.memory.saving import save_note

        return save_note(self.config, rel, text, expected)

    def write_copy(self, rel: str, text: str, now: datetime | None = None) -> Path:
        """Keep text aside in memdeck's data dir (``conflict-copies/<rel>.mine-YYYYmmdd-HHMMSS.md``), where
        nothing indexes it as a duplicate; returns the copy's path."""
        from engine.memory.saving import write_copy

        return write_copy(self.config, rel, text, now if now is not None else self.now())

    def create_daily(self, day: date) -> tuple[str, bool]:
        """The daily note for ``day``, created with the daily heading when missing; ``(rel, created)``."""
        from engine.memory.saving import create_daily

        return create_daily(self.config, day)

    def create_topic(self, name: str) -> str:
        """A new topic file ``memory/<name>.md`` with a heading (never over an existing file); returns its rel."""
        from engine.memory.saving import create_topic

        return create_topic(self.config, name)

    def append_note(self, rel: str | None, text: str, day: date | None = None) -> Appended:
        """Append text to a memory file atomically; ``rel`` None means the daily note of ``day`` (default today).

        A missing daily note is created with the daily heading first.
        """
        from engine.memory.names import daily_rel
        from engine.memory.saving import append_note

        return append_note(self.config, rel if rel is not None else daily_rel(day or self.today()), text)

    def plan_rename(self, rel: str, new_name: str) -> RenamePlan:
        """Where a rename of ``rel`` to ``new_name`` goes and the rules applied, for a confirmation to show.

        Raises:
            PathRefused: the result would not be a memory file (a root file renames within the root).
            MemdeckError: the new name is taken.
        """
        from engine.memory.rename import plan_rename

        return plan_rename(self.config, rel, new_name)

    def rename_note(self, rel: str, new_name: str) -> str:
        """Rename a memory file as :meth:`plan_rename` says (never over an existing one); returns the new rel."""
        from engine.memory.rename import rename_note

        return rename_note(self.config, rel, new_name)

    def delete_note(self, rel: str) -> Deleted:
        """Delete a memory file into memdeck's trash (``<data dir>/trash/<time>/<rel>``); the next sync drops
        it from the index and :meth:`restore_deleted` brings it back."""
        from engine.memory.trash import delete_note

        return delete_note(self.config, rel, self.now())

    def list_deleted(self) -> list[Deleted]:
        """This workspace's memory files in the trash, the most recently deleted first."""
        from engine.memory.trash import list_deleted

        return list_deleted(self.config)

    def restore_deleted(self, entry: str | None = None) -> Deleted:
        """Undo a delete: put the file back where it was (the latest deletion by default), never over a file.

        Raises:
            MemdeckError: nothing to restore, or the name is taken again (the trashed file stays).
        """
        from engine.memory.trash import restore_deleted

        return restore_deleted(self.config, entry)

    # -- sessions ----------------------------------------------------------------------------
    @property
    def sessions(self) -> SessionSource:
        """Where sessions come from: :func:`engine.sessions.locate.open_session_source` (OpenClaw's agent
        database when it exists, else the legacy folder; ``--sessions``/``MEMDECK_SESSIONS``/``sessions_dir``
        may name either) unless another source was given."""
        if self._sessions is None:
            from engine.sessions.locate import open_session_source

            self._sessions = open_session_source(self.config, flush_state=self.flush_state_path)
        return self._sessions

    @property
    def flush_state_path(self) -> Path:
        """memdeck's record of which sessions it flushed (in its data dir, never in the agent's folders)."""
        from engine.sessions.sources import FLUSH_STATE_FILE

        return self.config.home / FLUSH_STATE_FILE

    def list_sessions(self) -> list[SessionInfo]:
        """Every session, newest activity first, with memdeck's flush record.

        Raises:
            SessionReadError: the sessions cannot be listed at all.
        """
        return self.sessions.list_sessions()

    def describe_sessions(self) -> SourceStatus:
        """Where sessions are read from, and whether they can be."""
        return self.sessions.describe()

    def find_session(self, session: str, *, files: bool = False) -> Path:
        """A citation path (a search hit's ``path``), a session id or a unique id prefix → the session; with
        ``files`` also a path to a transcript file the user named (``memdeck flush ./export.jsonl``).

        A citation or an id is looked up only in the session source, never relative to the working directory.

        The result is what :meth:`read_session` takes: the transcript file, or for a session in OpenClaw's
        database the stand-in ``sessions/<agent>/<id>.jsonl`` (not a file: never open it).

        Raises:
            SessionReadError: nothing or more than one session matches.
        """
        return self.sessions.find(session, files=files)

    def read_session(self, session: str | Path) -> Transcript:
        """Parse a session (bad lines are skipped and counted, never fatal).

        Raises:
            SessionReadError: it cannot be read at all.
        """
        return self.sessions.read(session)

    def read_session_head(self, session: str | Path, limit: int = HEAD_BYTES) -> Transcript | None:
        """The session's first ``limit`` bytes (whole lines) parsed, for a first screen of a big transcript;
        None when it is no bigger than that (read it whole instead).

        Raises:
            SessionReadError: it cannot be read at all.
        """
        transcript = self.sessions.read(session, max_bytes=limit)
        return None if transcript.complete else transcript

    def session_lines(self, session: str | Path) -> Iterator[tuple[int, bytes]]:
        """A session's JSONL lines exactly as stored, ``(line number, bytes)`` (a database row ``seq`` is line
        ``seq + 1``), for a raw view or an export.

        Raises:
            SessionReadError: it cannot be read.
        """
        return self.sessions.jsonl_lines(session)

    def session_entry(self, session: str | Path) -> StoreEntry | None:
        """The session's entry in the agent's session store (its key and channel), if any."""
        return self.sessions.store_entry(session)

    def get_session(self, path: str, from_line: int | None = None, lines: int | None = None) -> GetResult:
        """memory_get of a session citation (``sessions/main/<id>.jsonl#L12-L20``, or the path with from/lines):
        those JSONL lines' entries as readable text (speech without injected metadata, tool calls and results
        shortened, secrets masked). Allowed only when sessions are a memory source.

        Raises:
            PathRefused: sessions are not a source here, or the path names no session.
            SessionReadError: the session cannot be read (a locked or damaged database, ...).
            LineRangeRefused: ``from_line`` or ``lines`` is below 1 (:func:`check_line_range`).
        """
        from engine.sessions.excerpt import is_session_path, parse_citation, render_excerpt
        from engine.sessions.sources import CitationRefused

        check_line_range(from_line, lines)
        if "sessions" not in self.config.sources:
            raise PathRefused(f"path refused: session transcripts are not a memory source here ({path.strip()!r}); "
                              "add \"sessions\" to sources in the config to read them")
        cited = parse_citation(path, from_line, lines)
        if not is_session_path(cited.path):
            raise PathRefused(f"path refused: {path.strip()!r} is not a session citation (sessions/<file> or "
                              "sessions/<agent>/<id>.jsonl)")
        try:
            found = self.sessions.find(cited.path)  # looked up in the session source only, never on the disk
        except CitationRefused as exc:
            raise PathRefused(f"path refused: {exc}") from exc
        except SessionLookupError as exc:
            raise PathRefused(f"path refused: no such session ({cited.path!r}): {exc}") from exc
        transcript = self.sessions.read(found)
        rel = cited.path if cited.path.startswith("sessions/") else f"sessions/{found.name}"
        last = max((e.line for e in transcript.entries), default=0)  # the session's extent, for an empty read's note
        return GetResult(rel, render_excerpt(transcript, cited.from_line, cited.lines), cited.from_line, cited.lines,
                         last)

    # -- flushing ----------------------------------------------------------------------------
    def _known(self) -> Callable[[str], bool] | None:
        """The "memory already holds it" check drafts use by default: none without an index."""
        return None

    def draft_flush(self, transcript: Transcript, method: str = "auto", *,
                    is_known: Callable[[str], bool] | None = None) -> Draft:
        """Draft memories from a session, dropping what memory already holds.

        Args:
            transcript: the session.
            method: ``auto`` (the configured LLM, else — or when it fails, with a warning — extractive),
                ``llm`` or ``extractive``.
            is_known: the check to use instead of the index's (:attr:`MemoryEngine.is_known`).

        Raises:
            LLMError: ``method`` is ``llm`` and no LLM is configured, or it failed.
        """
        from engine.memory.drafting import draft_flush

        rule = is_known if is_known is not None else self._known()
        problems: list[str] = []

        def checked(statement: str) -> bool:
            if rule is None or problems:
                return False
            try:
                return rule(statement)
            except (MemdeckError, OSError) as exc:  # a broken index must not cost the draft; say so instead
                problems.append(f"could not check what memory already holds ({exc}); the draft may repeat it")
                return False

        draft = draft_flush(transcript, method=method, llm=self.config.llm, workspace=self.config.workspace,
                            is_known=checked if rule is not None else None, zone=self.timezone)
        return replace(draft, warnings=(*draft.warnings, *problems)) if problems else draft

    @property
    def clock(self) -> Clock:
        """The one clock every write and "today" reads: ``[memory] timezone`` (else the system's zone), with
        ``MEMDECK_TODAY`` and ``MEMDECK_NOW`` (see :mod:`engine.clock`)."""
        return self._clock if self._clock is not None else Clock.for_config(self.config)

    @property
    def timezone(self) -> tzinfo:
        """The zone notes are dated in: ``[memory] timezone``, else the system's local zone."""
        return self.clock.zone

    def now(self) -> datetime:
        """The time now in :attr:`timezone` (session-note names, flush headings, review stamps, copies' names).

        Raises:
            ClockError: ``MEMDECK_TODAY`` or ``MEMDECK_NOW`` is set to something else than a date or a time.
        """
        return self.clock.now()

    def today(self) -> date:
        """Today in :attr:`timezone` (``MEMDECK_TODAY`` when set): the day of a new daily note or an append.

        Raises:
            ClockError: as :meth:`now`.
        """
        return self.clock.today()

    def render_flush(self, draft: Draft, now: datetime) -> str:
        """The Markdown block a flush appends: ``## HH:MM — Memory flush from session <id8>`` and its bullets
        (``HH:MM`` in :attr:`timezone`)."""
        from engine.memory.append import render_flush_block

        return render_flush_block(draft, now, self.timezone)

    def append_flush(self, session_id: str, block: str, now: datetime, day: date | None = None) -> FlushWritten:
        """Append a reviewed flush block to the daily note of ``day`` (default: ``now``'s day in :attr:`timezone`)
        atomically, creating the note with its heading when missing, then record the flush.

        Raises:
            FlushError: the block is empty, the daily note is a symlink or not a regular file, or ``memory/`` is a
                symlink memdeck does not follow (nothing written).
            OSError: the memory folder cannot be written.
        """
        from engine.memory.append import append_flush

        self._writable_memory_folder()
        target = append_flush(self.config.workspace, block, day or self.clock.in_zone(now).date())
        return FlushWritten(self._rel(target), target, self.record_flush(session_id, now))

    def plan_flush(self, transcript: Transcript, draft: Draft, now: datetime, day: str = "said") -> FlushPlan:
        """Where a draft's items go (:func:`engine.memory.append.plan_flush`): by default each under the day it
        was said, one block per daily note, its heading's time the session's last turn of that day; ``today`` or
        ``last`` (the day of the session's last message) put every item in one note, headed ``now``. Days and
        times are read in :attr:`timezone`.

        Raises:
            ValueError: an unknown ``day``.
        """
        from engine.memory.append import plan_flush

        times = [entry.time for entry in transcript.messages() if entry.time is not None]
        return plan_flush(draft, now, self.timezone, day=day, turn_times=[t for t in times if t is not None],
                          last_message=transcript.last_message_time)

    def write_flush(self, plan: FlushPlan, now: datetime, text: str | None = None) -> FlushWritten:
        """Append a reviewed flush to its daily notes, each atomically, then record the flush once.

        Args:
            plan: the plan (:meth:`plan_flush`).
            now: the flush time recorded.
            text: the reviewed preview as edited (:attr:`FlushPlan.preview`, its ``<!-- flush → memory/… -->``
                separators saying which note each part goes to); None: the plan's blocks as drafted.

        Returns:
            The first note written as ``rel``/``path``, every note in ``rels``/``paths``.

        Raises:
            FlushError: nothing to append, a daily note is a symlink or not a regular file, or ``memory/`` is a
                symlink memdeck does not follow (the notes before it are written).
            OSError: the memory folder cannot be written.
        """
        from engine.memory.append import append_flush
        from engine.memory.saving import FlushError

        parts = plan.split(text) if text is not None else [(block.day, block.text) for block in plan.blocks]
        if not parts:
            raise FlushError("nothing to append: the flush block is empty")
        self._writable_memory_folder()
        paths = tuple(append_flush(self.config.workspace, block, day) for day, block in parts)
        rels = tuple(self._rel(path) for path in paths)
        return FlushWritten(rels[0], paths[0], self.record_flush(plan.session_id, now), rels, paths)

    def record_flush(self, session_id: str, now: datetime) -> tuple[str, ...]:
        """Record that a session was flushed (also when there was nothing to store); returns warnings, never raises
        for an unwritable record."""
        from engine.memory.append import record_flush

        try:
            record_flush(self.flush_state_path, session_id, now)
        except OSError as exc:
            return (f"could not record the flush in {self.flush_state_path}: {exc}",)
        return ()

    def write_session_note(self, transcript: Transcript, *, messages: int = 15, now: datetime | None = None,
                           method: str = "auto", dry_run: bool = False) -> SessionNote:
        """Write OpenClaw 2026.9's session note for a session (never overwriting): ``memory/YYYY-MM-DD-HHMM.md``
        in :attr:`timezone`, or ``memory/YYYY-MM-DD-<slug>.md`` with the configured LLM's slug (``auto``/``llm``;
        the time when it fails, with a warning); ``-2``, ``-3``… when the name is taken; headed
        ``# Session: <date> <time> <zone>``. ``dry_run`` only says where it would go.

        Raises:
            LLMError: ``method`` is ``llm`` and no LLM is configured, or its client cannot be made.
            FlushError: no free file name.
            OSError: the memory folder cannot be written.
        """
        from engine.memory.drafting import llm_configured
        from engine.memory.session_notes import (
            build_session_note,
            note_slug,
            session_note_path,
            write_session_note,
        )
        from engine.sessions.reader import spoken_transcript

        self._writable_memory_folder()
        clock = self.clock
        tz = clock.zone
        when = clock.in_zone(now) if now is not None else clock.now()
        entry = self.session_entry(transcript.path)
        transcript = spoken_transcript(transcript)  # the note and its name hold only what was said
        key = entry.session_key if entry is not None else "unknown"
        source = (entry.channel if entry is not None else None) or "memdeck"
        warnings: list[str] = []
        slugger: Callable[[str], str] | None = None
        if method == "llm" or (method == "auto" and llm_configured(self.config.llm)):
            from engine.memory.llm import ChatClient, LLMError, slug_with_llm

            if not llm_configured(self.config.llm):
                raise LLMError("no LLM configured (set [llm] base_url and model)")
            client = ChatClient.from_config(self.config.llm)

            def llm_slug(text: str) -> str:
                try:
                    return slug_with_llm(text, client)
                except LLMError as exc:
                    warnings.append(f"LLM slug failed ({exc}); named by the time")
                    raise

            slugger = llm_slug
        text = build_session_note(transcript, key, source, messages, when, tz=tz)
        if dry_run:
            slug = note_slug(transcript, messages, when, slugger=slugger, keywords=False, tz=tz)
            target = session_note_path(self.config.workspace, slug, when, tz)
        else:
            target = write_session_note(self.config.workspace, transcript, key, source, messages, when,
                                        slugger=slugger, keywords=False, tz=tz)
        return SessionNote(self._rel(target), target, text, not dry_run, tuple(warnings))
