"""The audit's per-session cache in memdeck's data dir (never in OpenClaw's files).

Two parts, each valid while what it depends on is unchanged:

- per session, the statements the person said (the drafter's user statements, before the "memory holds it"
  check) and its compactions, keyed by what makes them valid: the session's id, its rows/lines, bytes, last
  activity and modification time, its flush records, title and path, and the rules' version;
- per statement text, whether memory holds it, valid for one fingerprint of the memory files the check reads
  (their paths, sizes and modification times as indexed) and of the search settings.

The rules' version is :data:`AUDIT_RULES_VERSION` plus a digest of the source of the modules whose rules make
the result (the drafter, the speech and transcript readers, the known-check, the audit): changing any of them
invalidates the whole cache without anyone having to remember a bump. Written atomically; a file that cannot be
read, or was written by other rules or another Python, is ignored (and replaced by the next audit).
"""

from __future__ import annotations

import hashlib
import logging
import marshal
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from engine.review.cache import UNREADABLE, read_marshal, source_digest
from engine.sessions.model import SessionInfo
from engine.textio import atomic_write_bytes, make_private_dir

CACHE_VERSION = 1
AUDIT_RULES_VERSION = "2026-12-03.1"  # bump for a change the module digest below cannot see (data files)
RULE_MODULES = (
    "engine/review/audit.py",
    "engine/memory/drafting.py",
    "engine/memory/cues.py",
    "engine/memory/draft.py",
    "engine/sessions/speech.py",
    "engine/sessions/reader.py",
    "engine/sessions/agentdb.py",
    "engine/sessions/dbsource.py",
    "engine/search/snippets.py",
    "engine/search/query.py",
)
log = logging.getLogger(__name__)


@lru_cache(maxsize=1)
def rules_version() -> str:
    """:data:`AUDIT_RULES_VERSION` and a digest of the rule modules' source (read once a process)."""
    return source_digest(f"{AUDIT_RULES_VERSION}/{CACHE_VERSION}", Path(__file__).resolve().parents[2], RULE_MODULES)


def cache_path(home: Path, index_name: str) -> Path:
    """``<data dir>/audit/<index name>.sessions``: one per workspace and agent."""
    return home / "audit" / f"{index_name}.sessions"


def session_key(info: SessionInfo) -> str:
    """What a session's cached statements are valid for: it grew, was rewritten or re-flushed → another key."""
    def iso(value: Any) -> str | None:
        return value.isoformat() if value is not None else None

    parts = (info.session_id, info.rel, info.size, info.line_count, info.message_count, iso(info.mtime),
             iso(info.last_message), info.compactions, iso(info.memory_flush_at),
             info.memory_flush_compaction_count, info.memory_flush_recorded, iso(info.flushed_at), info.title,
             info.source, info.skipped_lines)
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:24]


@dataclass
class AuditCache:
    """The cached sessions (id → ``(key, raw SessionAudit)``) and the known verdicts for ``memory``."""

    path: Path
    rules: str = ""
    sessions: dict[str, tuple[str, Any]] = field(default_factory=dict)
    memory: str = ""
    known: dict[str, bool] = field(default_factory=dict)
    dirty: bool = False
    hits: int = 0
    misses: int = 0

    @classmethod
    def load(cls, path: Path, memory: str) -> AuditCache:
        """The cache at ``path`` (empty when missing, unreadable, or of other rules); the known verdicts only
        when they were decided against the same ``memory`` fingerprint."""
        rules = rules_version()
        fresh = cls(path, rules, memory=memory)
        data = read_marshal(path, "audit")
        if data is UNREADABLE:
            return fresh
        try:
            header, sessions, old_memory, known = data
            if header != _header(rules):
                return fresh
            sessions = {str(k): (str(v[0]), v[1]) for k, v in dict(sessions).items()}
            known = {str(k): bool(v) for k, v in dict(known).items()} if old_memory == memory else {}
        except (EOFError, ValueError, TypeError, IndexError, KeyError) as exc:
            log.warning("ignoring the audit cache %s: %s", path, exc)
            return fresh
        return cls(path, rules, sessions, memory, known, dirty=old_memory != memory)

    def get(self, info: SessionInfo) -> Any | None:
        """The raw cached audit of ``info`` when its key still matches, else None."""
        found = self.sessions.get(info.session_id)
        if found is not None and found[0] == session_key(info):
            self.hits += 1
            return found[1]
        self.misses += 1
        return None

    def put(self, info: SessionInfo, raw: Any) -> None:
        self.sessions[info.session_id] = (session_key(info), raw)
        self.dirty = True

    def knows(self, text: str) -> bool | None:
        return self.known.get(text)

    def learn(self, text: str, held: bool) -> None:
        self.known[text] = held
        self.dirty = True

    def prune(self, session_ids: set[str], texts: set[str]) -> None:
        """Forget sessions that are gone and verdicts no statement asks for (after a whole audit)."""
        for sid in set(self.sessions) - session_ids:
            del self.sessions[sid]
            self.dirty = True
        for text in set(self.known) - texts:
            del self.known[text]
            self.dirty = True

    def save(self) -> None:
        """Write the cache atomically when it changed (a failure is logged: the next audit is then slower)."""
        if not self.dirty:
            return
        try:
            make_private_dir(self.path.parent)
            atomic_write_bytes(self.path, marshal.dumps((_header(self.rules), self.sessions, self.memory,
                                                         self.known)))
            self.dirty = False
        except (OSError, ValueError) as exc:
            log.warning("could not write the audit cache %s: %s", self.path, exc)


def _header(rules: str) -> str:
    return f"memdeck-audit/{CACHE_VERSION}/{rules}/{sys.version_info[0]}.{sys.version_info[1]}"
