"""The TUI's one door to the engine: plain synchronous calls (run them off the event loop) and plain data back."""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.errors import MemdeckError, PathRefused

if TYPE_CHECKING:  # deferred: the first screen needs none of these (engine.search alone pulls in SQLite)
    from engine.api import MemoryEngine, Status
    from engine.config import Config
    from engine.index.indexer import SyncProgress, SyncReport
    from engine.memory.flush import Draft
    from engine.search.pipeline import SearchResponse
    from engine.sessions.reader import Transcript

__all__ = [
    "Bridge",
    "DiskStamp",
    "MemdeckError",
    "Note",
    "NoteEntry",
    "SaveConflict",
    "SaveResult",
    "SessionEntry",
    "TreeModel",
]

DAILY = re.compile(r"^memory/(\d{4})-(\d{2})-(\d{2})\.md$")
SESSION_NOTE = re.compile(r"^memory/(\d{4})-(\d{2})-(\d{2})-(.+)\.md$")
FLUSH_STATE_FILE = "flush-state.json"
SEARCH_MODES = ("hybrid", "keyword", "vector")


class SaveConflict(MemdeckError):
    """The file changed on disk since the editor read it; nothing was written."""

    def __init__(self, rel: str, disk_text: str | None, stamp: DiskStamp | None) -> None:
        super().__init__(f"{rel} changed on disk since it was opened")
        self.rel = rel
        self.disk_text = disk_text
        self.stamp = stamp


@dataclass(frozen=True)
class DiskStamp:
    """What a file looked like on disk: enough to tell whether someone else changed it."""

    mtime_ns: int
    size: int
    digest: str


@dataclass(frozen=True)
class Note:
    """A memory file read for the editor."""

    rel: str
    path: Path
    text: str
    stamp: DiskStamp | None
    decode_errors: int = 0
    binary: bool = False


@dataclass(frozen=True)
class SaveResult:
    """A save that happened, and whether the new text is searchable yet."""

    rel: str
    stamp: DiskStamp
    warnings: tuple[str, ...] = ()


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
    """One agent session transcript in the tree."""

    path: Path
    session_id: str
    label: str
    detail: str
    archived: bool = False
    error: str | None = None


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


def stamp_bytes(data: bytes, st: os.stat_result) -> DiskStamp:
    """A stamp for file contents read with their stat."""
    import hashlib  # deferred, like difflib below: neither is needed for the first screen

    return DiskStamp(st.st_mtime_ns, st.st_size, hashlib.sha256(data).hexdigest())


def read_stamp(path: Path) -> DiskStamp | None:
    """The file's current stamp, or None when it does not exist."""
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            data = fh.read()
    except FileNotFoundError:
        return None
    return stamp_bytes(data, st)


def same_content(a: DiskStamp | None, b: DiskStamp | None) -> bool:
    """Whether two stamps describe the same bytes (a touched but unchanged file counts as the same)."""
    if a is None or b is None:
        return a is b
    return a.digest == b.digest


def unified_diff(rel: str, disk_text: str, mine: str) -> str:
    """The diff from the disk version to the editor's text."""
    import difflib

    lines = difflib.unified_diff(
        disk_text.splitlines(keepends=True),
        mine.splitlines(keepends=True),
        fromfile=f"{rel} (on disk)",
        tofile=f"{rel} (editor)",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def daily_heading(day: date) -> str:
    """The first line of a new daily note, as the demo's notes have it."""
    return f"# {day:%Y-%m-%d} — {day:%A}, {day.day} {day:%B %Y}\n\n"


def topic_rel(name: str) -> str:
    """Turn what the user typed into ``memory/<name>.md`` (sub-folders allowed, nothing else)."""
    text = name.strip().replace("\\", "/")
    if text.startswith("memory/"):
        text = text[len("memory/") :]
    if text.endswith(".md"):
        text = text[:-3]
    parts = []
    for part in text.split("/"):
        slug = re.sub(r"[^\w.-]+", "-", part.strip(), flags=re.UNICODE).strip("-.").lower()
        if slug:
            parts.append(slug)
    if not parts:
        raise PathRefused("a topic needs a name (letters, digits, - or _)")
    return "memory/" + "/".join(parts) + ".md"


def _weekday_label(rel: str, m: re.Match[str]) -> tuple[str, date | None]:
    try:
        day = date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return rel.removeprefix("memory/"), None
    return f"{day:%Y-%m-%d} {day:%a}", day


def build_tree_model(rels: list[str], workspace: Path, sessions: tuple[SessionEntry, ...] = (),
                     sessions_error: str | None = None, issues: tuple[str, ...] = ()) -> TreeModel:
    """Group memory files for the tree: root files, daily notes newest first, session notes, topics, extras."""
    root: list[NoteEntry] = []
    daily: list[NoteEntry] = []
    notes: list[NoteEntry] = []
    topics: list[NoteEntry] = []
    extras: list[NoteEntry] = []
    for rel in rels:
        if "/" not in rel:
            root.append(NoteEntry(rel, rel, "root"))
        elif (m := DAILY.match(rel)) is not None:
            label, day = _weekday_label(rel, m)
            (daily if day else topics).append(NoteEntry(rel, label, "daily" if day else "topic", day))
        elif (m := SESSION_NOTE.match(rel)) is not None:
            try:
                day = date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
            except ValueError:
                topics.append(NoteEntry(rel, rel.removeprefix("memory/"), "topic"))
                continue
            notes.append(NoteEntry(rel, f"{day:%Y-%m-%d} {m.group(4)}", "session-note", day))
        elif rel.startswith("memory/"):
            topics.append(NoteEntry(rel, rel.removeprefix("memory/"), "topic"))
        else:
            extras.append(NoteEntry(rel, _extra_label(rel, workspace), "extra"))
    daily.sort(key=lambda e: (e.day or date.min, e.rel), reverse=True)
    notes.sort(key=lambda e: (e.day or date.min, e.rel), reverse=True)
    topics.sort(key=lambda e: e.rel)
    extras.sort(key=lambda e: e.rel)
    root.sort(key=lambda e: e.rel)
    return TreeModel(tuple(root), tuple(daily), tuple(notes), tuple(topics), tuple(extras), sessions,
                     sessions_error, issues)


def _extra_label(rel: str, workspace: Path) -> str:
    path = Path(rel)
    with contextlib.suppress(ValueError):
        return path.relative_to(workspace).as_posix()
    home = Path.home()
    with contextlib.suppress(ValueError):
        return "~/" + path.relative_to(home).as_posix()
    return rel


def _session_label(info: Any) -> tuple[str, str]:
    when = info.last_activity.astimezone()
    name = info.display_name or info.session_key or info.session_id[:8]
    label = f"{when:%Y-%m-%d} {name}"
    bits = [info.session_id[:8]]
    if info.channel:
        bits.append(info.channel)
    bits.append(f"{info.message_count} msgs")
    if info.archived:
        bits.append("archived")
    if info.skipped_lines:
        bits.append(f"{info.skipped_lines} bad lines")
    return label, " · ".join(bits)


class Bridge:
    """Everything the TUI asks of the engine.

    Methods block: call them from ``asyncio.to_thread`` or a thread worker, never from the event loop
    (except the few marked as instant). The engine itself is created by :meth:`open`, off the event loop,
    so the first screen never waits for SQLite, sqlite-vec or the embedder modules.
    """

    def __init__(self, config: Config) -> None:
        self.config = config
        self._engine: MemoryEngine | None = None
        self._flags = _Flags()
        self._open_lock = threading.Lock()

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
        from engine.search.pipeline import SearchResponse
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
        return engine.sync(force=force, progress=progress, cancel=cancel, embed=embed, wait=10.0)

    def pending_embeddings(self) -> int:
        """Chunks that have no vector yet (0 when vectors are unavailable)."""
        engine = self.engine
        if not engine.can_embed:
            return 0
        return engine.store.counts()["pending"]

    def status(self) -> Status:
        """The index status (scans the workspace)."""
        return self.engine.status()

    def file_states(self) -> dict[str, str]:
        """Per file: ``indexed``, ``changed``, ``new`` or ``not-embedded``."""
        return self.engine.file_states()

    # -- the tree -----------------------------------------------------------------------------
    def scan_tree(self) -> TreeModel:
        """List memory files and sessions for the tree (reads each transcript's summary)."""
        from engine.workspace import scan_memory_files

        report = scan_memory_files(self.config)
        rels = [f.rel for f in report.files]
        sessions, error = self._list_sessions()
        return build_tree_model(rels, self.config.workspace, sessions, error, report.issues)

    def scan_notes(self) -> TreeModel:
        """Memory files only (fast; no transcripts read): the tree's first paint."""
        from engine.workspace import scan_memory_files

        report = scan_memory_files(self.config)
        return build_tree_model([f.rel for f in report.files], self.config.workspace, issues=report.issues)

    @property
    def sessions_dir(self) -> Path:
        """The agent's sessions folder (instant)."""
        return self.config.resolved_sessions_dir

    @property
    def flush_state_path(self) -> Path:
        """memdeck's record of which sessions were flushed."""
        return self.config.home / FLUSH_STATE_FILE

    def _list_sessions(self) -> tuple[tuple[SessionEntry, ...], str | None]:
        from engine.sessions.reader import SessionReadError, list_sessions

        folder = self.sessions_dir
        if not folder.exists():
            return (), f"no sessions folder ({folder})"
        try:
            infos = list_sessions(folder, self.flush_state_path)
        except SessionReadError as exc:
            return (), str(exc)
        entries = []
        for info in infos:
            label, detail = _session_label(info)
            entries.append(SessionEntry(info.path, info.session_id, label, detail, info.archived, info.error))
        return tuple(entries), None

    # -- notes --------------------------------------------------------------------------------
    def resolve(self, rel: str) -> tuple[str, Path]:
        """A memory path the user or a result named → (rel, absolute); refuses anything else."""
        from engine.workspace import resolve_memory_path

        return resolve_memory_path(self.config, rel)

    def read_note(self, rel: str) -> Note:
        """Read a memory file for the editor (any bytes; a missing file reads as empty).

        Raises:
            PathRefused: not a memory file.
            OSError: the file exists but cannot be read.
        """
        rel, path = self.resolve(rel)
        try:
            with open(path, "rb") as fh:
                st = os.fstat(fh.fileno())
                data = fh.read()
        except FileNotFoundError:
            return Note(rel, path, "", None)
        from engine.textio import decode_bytes

        decoded = decode_bytes(data)
        return Note(rel, path, decoded.text, stamp_bytes(data, st), decoded.errors, decoded.binary)

    def disk_stamp(self, rel: str) -> DiskStamp | None:
        """The file's stamp now."""
        return read_stamp(self.resolve(rel)[1])

    def save_note(self, rel: str, text: str, expected: DiskStamp | None, reindex: bool = False) -> SaveResult:
        """Write the editor's text atomically, unless the file changed on disk since ``expected``.

        The TUI re-indexes after the save itself (it first pauses any long background embedding);
        ``reindex`` does it here instead.

        Raises:
            SaveConflict: the file on disk is not what the editor read (nothing written).
            PathRefused: not a memory file.
            OSError: the write failed (the old file is intact).
        """
        from engine.textio import atomic_write_text, read_text_file

        rel, path = self.resolve(rel)
        current = read_stamp(path)
        if not same_content(current, expected):
            disk_text = read_text_file(path).text if current is not None else None
            raise SaveConflict(rel, disk_text, current)
        atomic_write_text(path, text)
        stamp = read_stamp(path)
        assert stamp is not None
        warnings = self.reindex() if reindex else ()
        return SaveResult(rel, stamp, warnings)

    def write_copy(self, rel: str, text: str, now: datetime | None = None) -> str:
        """Keep the editor's text as a sibling copy (``name.mine-YYYYmmdd-HHMMSS.md``); returns its rel."""
        from engine.textio import atomic_write_text

        rel, path = self.resolve(rel)
        when = now or datetime.now()
        stem = path.name[:-3] if path.name.endswith(".md") else path.name
        for n in range(1, 100):
            suffix = "" if n == 1 else f"-{n}"
            target = path.with_name(f"{stem}.mine-{when:%Y%m%d-%H%M%S}{suffix}.md")
            if not target.exists():
                break
        else:
            raise MemdeckError(f"no free name for a copy of {rel}")
        atomic_write_text(target, text)
        return self.resolve(str(target))[0]

    def reindex(self) -> tuple[str, ...]:
        """Make saved text searchable now; returns warnings instead of raising."""
        try:
            self.engine.sync(embed=self.model_loaded, wait=10.0)
        except (MemdeckError, OSError) as exc:
            return (f"saved, but not yet searchable: {exc}",)
        return ()

    def create_daily(self, day: date) -> tuple[str, bool]:
        """Today's daily note: created with a heading when missing. Returns (rel, created)."""
        rel, path = self.resolve(f"memory/{day:%Y-%m-%d}.md")
        if path.exists():
            return rel, False
        self._create(path, daily_heading(day))
        return rel, True

    def create_topic(self, name: str) -> str:
        """A new topic file ``memory/<name>.md`` with a heading; refuses to overwrite."""
        rel, path = self.resolve(topic_rel(name))
        if path.exists() or path.is_symlink():
            raise MemdeckError(f"{rel} already exists")
        title = Path(rel).stem.replace("-", " ").replace("_", " ").strip().capitalize() or "Topic"
        self._create(path, f"# {title}\n\n")
        return rel

    def _create(self, path: Path, text: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())

    def rename_note(self, rel: str, new_name: str) -> str:
        """Rename a memory file (never over an existing one); returns the new rel."""
        rel, path = self.resolve(rel)
        wanted = new_name.strip()
        new_rel, target = self.resolve(wanted if wanted in ("MEMORY.md", "memory.md") else topic_rel(wanted))
        if target.exists() or target.is_symlink():
            raise MemdeckError(f"{new_rel} already exists")
        target.parent.mkdir(parents=True, exist_ok=True)
        os.link(path, target)  # fails if target appeared meanwhile: never overwrite
        os.unlink(path)
        return new_rel

    def delete_note(self, rel: str) -> None:
        """Delete a memory file and drop it from the index."""
        _, path = self.resolve(rel)
        path.unlink()

    # -- sessions -----------------------------------------------------------------------------
    def read_transcript(self, path: Path) -> Transcript:
        """Parse a session transcript (bad lines are skipped and counted, never fatal).

        Raises:
            SessionReadError: the file cannot be read at all.
        """
        from engine.sessions.reader import read_transcript

        return read_transcript(path)

    def read_transcript_head(self, path: Path, limit: int = 256 * 1024) -> Transcript | None:
        """The transcript's first ``limit`` bytes (whole lines) parsed, for a first screen of a big file.

        None when the file is small enough to read whole at once. Local adaptation: engine.sessions has no
        way to stop early, so the head is copied to a temp file of the same name (line numbers match).
        """
        import shutil
        import tempfile
        from dataclasses import replace

        from engine.sessions.reader import read_transcript

        try:
            size = path.stat().st_size
            if size <= limit:
                return None
            with open(path, "rb") as fh:
                head = fh.read(limit)
        except OSError:
            return None
        head = head[: head.rfind(b"\n") + 1]
        folder = tempfile.mkdtemp(prefix="memdeck-head-")
        try:
            copy = Path(folder) / path.name
            copy.write_bytes(head)
            transcript = read_transcript(copy)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return replace(transcript, path=path, size=size)

    def session_key(self, path: Path) -> tuple[str, str]:
        """The transcript's ``sessions.json`` key and channel (``unknown`` when absent)."""
        from engine.sessions.reader import store_entry_for

        entry = store_entry_for(path)
        if entry is None:
            return "unknown", "unknown"
        return entry.session_key, entry.channel or "unknown"

    def draft_flush(self, transcript: Transcript) -> Draft:
        """Draft memories from a session: the configured LLM, else (or when it fails) the extractive drafter."""
        from engine.memory.flush import draft_extractive

        llm = self.config.llm
        if llm.base_url and llm.model:
            from engine.memory.llm import LLMError, LLMSettings, draft_with_llm, read_memory_hint

            settings = LLMSettings(llm.base_url, llm.model, llm.api_key_env, llm.timeout)
            try:
                return draft_with_llm(transcript, settings.client(), read_memory_hint(self.config.workspace),
                                      is_known=self.is_known)
            except LLMError as exc:
                draft = draft_extractive(transcript, is_known=self.is_known)
                from dataclasses import replace

                return replace(draft, warnings=(*draft.warnings, f"LLM draft failed ({exc}); extractive draft"))
        return draft_extractive(transcript, is_known=self.is_known)

    def is_known(self, statement: str) -> bool:
        """Whether memory already holds ``statement`` (its words, in order, in an indexed chunk)."""
        if self._engine is None:
            return False
        words = _words(statement)
        if not words:
            return False
        try:
            resp = self._engine.search(statement, mode="keyword", max_results=3, min_score=0.0,
                                       ensure_fresh=False, allow_model_load=False)
        except (MemdeckError, OSError):
            return False
        needle = " ".join(words)
        for hit in resp.results:
            try:
                chunk = self._engine.get(hit.path, hit.start_line, hit.end_line - hit.start_line + 1).text
            except (MemdeckError, OSError):
                continue
            if needle in " ".join(_words(chunk)):
                return True
        return False

    def render_flush(self, draft: Draft, now: datetime) -> str:
        """The Markdown block a flush appends."""
        from engine.memory.flush import render_flush_block

        return render_flush_block(draft, now)

    def append_flush(self, session_id: str, block: str, now: datetime) -> tuple[str, tuple[str, ...]]:
        """Append a reviewed flush block to today's daily note and record the flush; returns (rel, warnings)."""
        from engine.memory.flush import append_flush, record_flush

        target = append_flush(self.config.workspace, block, now.date())
        warnings: list[str] = []
        try:
            record_flush(self.flush_state_path, session_id, now)
        except OSError as exc:
            warnings.append(f"could not record the flush: {exc}")
        return self.resolve(str(target))[0], tuple(warnings)

    def write_session_note(self, transcript: Transcript, path: Path) -> str:
        """Write OpenClaw's session note (``memory/YYYY-MM-DD-<slug>.md``) for a transcript; returns its rel."""
        from engine.memory.flush import write_session_note

        key, channel = self.session_key(path)
        target = write_session_note(self.config.workspace, transcript, key, channel)
        return self.resolve(str(target))[0]

    # -- settings -----------------------------------------------------------------------------
    def save_settings(self, updates: dict[str, Any]) -> None:
        """Persist TUI settings (``{"tui": {...}}``) into the config file."""
        from engine.config import save_config_values

        save_config_values(self.config.config_path, updates)

    def user_themes_dir(self) -> Path:
        """Where user theme TOML files live: ``themes/`` next to the config file."""
        return self.config.config_path.parent / "themes"


_WORD = re.compile(r"\w+", re.UNICODE)


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]
