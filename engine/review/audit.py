"""The audit: what a person said in a session that memory does not hold yet, placed against the session's
compactions and flushes (OpenClaw's compaction entries and its ``memoryFlush`` record, memdeck's flush record).

Read-only. The durable statements are exactly what the flush drafter keeps (the engine's extractive draft, as a
black box); "memory holds it" is the flush's own :func:`engine.memory.drafting.is_known` rule.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any

from engine.display import plural
from engine.errors import MemdeckError
from engine.memory.draft import Draft
from engine.review.audit_cache import AuditCache
from engine.sessions.model import SessionInfo, Transcript


@dataclass(frozen=True)
class Compaction:
    """A compaction entry of a session: its line, time and the tokens before it; ``flushed``: a flush was
    recorded for this compaction cycle (OpenClaw's ``memoryFlush`` count reached it, or a flush time before it)."""

    line: int
    at: str | None
    tokens_before: int | None
    flushed: bool

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "at": self.at, "tokensBefore": self.tokens_before, "flushed": self.flushed}


@dataclass(frozen=True)
class Lost:
    """A durable statement memory does not hold: its text, kind, citation and the day it was said."""

    text: str
    kind: str
    line: int
    citation: str
    day: date | None
    said: str = ""  # the whole message it was said in (its turn's context)
    session_id: str = ""  # the session it was said in

    def context(self, around: int = 1) -> tuple[tuple[str, bool], ...]:
        """The statement in its turn: the message's lines around the one that says it, ``(line, is_it)``: the
        line sharing most words with it (the drafter may have reworded it: a date added to "tomorrow"); the
        message's first lines, none marked, when no line shares a word."""
        lines = [" ".join(line.split()) for line in self.said.split("\n")]
        lines = [line for line in lines if line]
        want = " ".join(self.text.split()).casefold()
        words = set(re.findall(r"\w+", want))

        def score(line: str) -> tuple[bool, int]:
            low = line.casefold()
            return (want[:40] in low or low in want, len(words & set(re.findall(r"\w+", low))))

        scored = [(score(line), i) for i, line in enumerate(lines)]
        best = max(scored, key=lambda x: (x[0], -x[1]), default=None)
        at = best[1] if best is not None and (best[0][0] or best[0][1]) else None
        if at is None:
            return tuple((line, False) for line in lines[: 2 * around + 1])
        start = max(0, at - around)
        return tuple((line, i == at) for i, line in enumerate(lines[start:at + around + 1], start))

    @property
    def back_reference(self) -> str:
        """What a recovered line ends with: ``(from session <id8> line <n>)``."""
        return f"(from session {self.session_id[:8]} line {self.line})"

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "kind": self.kind, "line": self.line, "citation": self.citation,
                "day": self.day.isoformat() if self.day else None}


@dataclass(frozen=True)
class SessionAudit:
    """One session's unrecovered statements, against its compactions and flushes."""

    session_id: str
    rel: str
    title: str | None
    last_activity: str | None
    compactions: tuple[Compaction, ...]
    flushed: bool
    statements: tuple[Lost, ...]
    known: int = 0

    @property
    def verdict(self) -> str:
        """One line: "compacted at 176K tokens with no flush before it — 7 statements not in memory"."""
        n = len(self.statements)
        lost = f"{plural(n, 'statement')} not in memory"
        unflushed = [c for c in self.compactions if not c.flushed]
        if unflushed:
            c = unflushed[-1]
            at = f" at {round(c.tokens_before / 1000)}K tokens" if c.tokens_before else ""
            more = f" ({len(unflushed)} of {len(self.compactions)} compactions unflushed)" \
                if len(self.compactions) > 1 else ""
            return f"compacted{at} with no flush before it{more} — {lost}"
        if self.compactions:
            return f"compacted {len(self.compactions)}× with a flush each time — {lost}"
        return f"{'flushed' if self.flushed else 'never flushed'}, never compacted — {lost}"

    def to_json(self) -> dict[str, Any]:
        return {"sessionId": self.session_id, "path": self.rel, "title": self.title,
                "lastActivity": self.last_activity, "flushed": self.flushed, "verdict": self.verdict,
                "compactions": [c.to_json() for c in self.compactions], "known": self.known,
                "statements": [s.to_json() for s in self.statements]}


@dataclass
class AuditReport:
    sessions: list[SessionAudit] = field(default_factory=list)
    scanned: int = 0
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)

    @property
    def statements(self) -> int:
        return sum(len(s.statements) for s in self.sessions)

    @property
    def unflushed_compactions(self) -> int:
        return sum(1 for s in self.sessions for c in s.compactions if not c.flushed)

    def to_json(self) -> dict[str, Any]:
        return {"sessions": [s.to_json() for s in self.sessions], "scanned": self.scanned,
                "statements": self.statements, "unflushedCompactions": self.unflushed_compactions,
                "seconds": round(self.seconds, 3), "warnings": list(self.warnings)}


def compactions_of(transcript: Transcript, info: SessionInfo) -> tuple[Compaction, ...]:
    """The session's compaction entries, each marked flushed when a flush is recorded for its cycle: OpenClaw's
    flush record names the compaction count it flushed at (a flush before compaction ``n+1`` records ``n``),
    or an older record's time (and memdeck's own flush time) falls before the compaction."""
    entries = [e for e in transcript.entries if e.kind == "compaction"]
    flushed_count = info.memory_flush_compaction_count
    times = [t for t in (info.memory_flush_at, info.flushed_at) if t is not None]
    out: list[Compaction] = []
    for n, entry in enumerate(entries):
        flushed = flushed_count is not None and flushed_count == n
        when = entry.time
        if not flushed and when is not None:
            previous = entries[n - 1].time if n else None
            flushed = any(t <= when and (previous is None or t > previous) for t in times)
        out.append(Compaction(entry.line, entry.timestamp, entry.tokens_before, flushed))
    return tuple(out)


def session_statements(info: SessionInfo, transcript: Transcript, draft: Draft) -> SessionAudit:
    """Every statement of ``draft`` the person said (not the assistant's confirmations), before the "memory
    holds it" check: what the audit cache keeps per session."""
    by_line = {e.line: e for e in transcript.entries}
    rel = info.rel or f"sessions/{info.path.name}"
    said: list[Lost] = []
    for item in draft.items:
        entry = by_line.get(item.line) if item.line is not None else None
        if entry is None or entry.message is None or entry.message.role != "user":
            continue
        said_at = getattr(item, "said_at", None) or entry.time
        day = said_at.date() if said_at is not None else None
        said.append(Lost(item.text, item.kind, item.line or 0, f"{rel}#L{item.line}", day, entry.message.text,
                         info.session_id))
    activity = info.last_activity
    return SessionAudit(info.session_id, rel, info.title, activity.isoformat() if activity else None,
                        compactions_of(transcript, info), info.flushed, tuple(said), 0)


def not_known(audited: SessionAudit, known: Callable[[str], bool]) -> SessionAudit:
    """``audited`` with only the statements memory does not hold (the others counted in ``known``)."""
    lost = tuple(s for s in audited.statements if not known(s.text))
    return replace(audited, statements=lost, known=len(audited.statements) - len(lost))


def audit_session(info: SessionInfo, transcript: Transcript, draft: Draft,
                  known: Callable[[str], bool]) -> SessionAudit:
    """The statements of ``draft`` the person said (not the assistant's confirmations) that memory lacks."""
    return not_known(session_statements(info, transcript, draft), known)


def to_raw(audited: SessionAudit) -> tuple[Any, ...]:
    """A session's audit as plain tuples (what the cache stores, marshal-able)."""
    return (audited.session_id, audited.rel, audited.title, audited.last_activity,
            tuple((c.line, c.at, c.tokens_before, c.flushed) for c in audited.compactions), audited.flushed,
            tuple((s.text, s.kind, s.line, s.citation, s.day.isoformat() if s.day else None, s.said, s.session_id)
                  for s in audited.statements), audited.known)


def from_raw(raw: Any) -> SessionAudit:
    """The inverse of :func:`to_raw` (raises TypeError/ValueError on a malformed value)."""
    sid, rel, title, activity, compactions, flushed, statements, known = raw
    return SessionAudit(str(sid), str(rel), title, activity,
                        tuple(Compaction(int(a), b, c, bool(d)) for a, b, c, d in compactions), bool(flushed),
                        tuple(Lost(str(t), str(k), int(ln), str(cit), date.fromisoformat(d) if d else None,
                                   str(said), str(s)) for t, k, ln, cit, d, said, s in statements), int(known))


def run_audit(sessions: Iterable[SessionInfo], read: Callable[[SessionInfo], Transcript],
              draft: Callable[[Transcript], Draft], known: Callable[[str], bool], *,
              since: date | None = None, session: str | None = None,
              cache: AuditCache | None = None) -> AuditReport:
    """Audit every session (newest activity first); only sessions with a lost statement or an unflushed
    compaction are listed.

    Args:
        sessions: the source's sessions. read: reads one. draft: the flush drafter, keeping everything (no
        known-check). known: "memory already holds this". since: only sessions active on/after this day.
        session: only sessions whose id starts with this. cache: per-session statements and known verdicts
        from earlier audits (see :mod:`engine.review.audit_cache`): a session whose key is unchanged is not
        read again, a statement already judged against the same memory is not searched again; the cache is
        updated and saved.
    """
    started = time.perf_counter()
    report = AuditReport()
    seen: set[str] = set()
    texts: set[str] = set()
    whole = since is None and not session

    def held(text: str) -> bool:
        if cache is None:
            return known(text)
        verdict = cache.knows(text)
        if verdict is None:
            verdict = known(text)
            cache.learn(text, verdict)
        return verdict

    for info in sessions:
        seen.add(info.session_id)
        if session and not info.session_id.startswith(session):
            continue
        if since is not None and info.last_activity.date() < since:
            continue
        if info.error:
            report.warnings.append(f"{info.session_id[:8]}: {info.error}")
            continue
        report.scanned += 1
        said: SessionAudit | None = None
        raw = cache.get(info) if cache is not None else None
        if raw is not None:
            try:
                said = from_raw(raw)
            except (TypeError, ValueError):
                said = None
        if said is None:
            try:
                transcript = read(info)
            except (MemdeckError, OSError) as exc:
                report.warnings.append(f"{info.session_id[:8]}: could not be read ({exc})")
                continue
            said = session_statements(info, transcript, draft(transcript))
            if cache is not None:
                cache.put(info, to_raw(said))
        texts.update(s.text for s in said.statements)
        audited = not_known(said, held)
        if audited.statements or any(not c.flushed for c in audited.compactions):
            report.sessions.append(audited)
    report.sessions.sort(key=lambda s: s.last_activity or "", reverse=True)
    if cache is not None:
        if whole:
            cache.prune(seen, texts)
        cache.save()
    report.seconds = time.perf_counter() - started
    return report
