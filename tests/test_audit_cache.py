"""The audit's per-session cache: the same result as the uncached audit, no session re-read when nothing
changed, a grown session and an edited note invalidate what they must, a corrupt cache file is survived."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from engine.api import MemoryEngine
from engine.config import load_config
from engine.review.audit_cache import AuditCache, cache_path

DB = Path(__file__).parent / "data" / "openclaw-agent.sqlite"
GROWN = "9b2d4e71-5c3a-4f88-b6e0-7a1c2d3e4f51"
NEW_TEXT = "Remember that my dentist appointment with Dr Okafor is on 2026-11-19 at 08:30."


def _engine(tmp_path: Path, memory: str = "# Memory\n") -> MemoryEngine:
    db = tmp_path / "openclaw-agent.sqlite"
    shutil.copy(DB, db)
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(memory, encoding="utf-8")
    eng = MemoryEngine(load_config(workspace=ws, sessions_dir=db, home=tmp_path / "home",
                                   overrides={"embedding": {"provider": "none"}}))
    eng.sync()
    return eng


def _sessions(report: Any) -> list[dict[str, Any]]:
    return [s.to_json() for s in report.sessions]


def _counting_reads(eng: MemoryEngine) -> list[str]:
    reads: list[str] = []
    original = eng.read_session

    def read(path: Any, *args: Any, **kw: Any) -> Any:
        reads.append(str(path))
        return original(path, *args, **kw)

    eng.read_session = read  # type: ignore[method-assign]
    return reads


def _grow(db: Path, text: str) -> None:
    """What OpenClaw does when the person says one more thing: a row, its identity, the branch index moved on."""
    conn = sqlite3.connect(db)
    # OpenClaw's CHECK constraints call octet_length (SQLite >= 3.43); an older SQLite gets it here
    conn.create_function("octet_length", 1, lambda v: None if v is None else len(
        v.encode() if isinstance(v, str) else bytes(v)), deterministic=True)
    try:
        seq, leaf, created = conn.execute(
            "SELECT e.seq, i.event_id, e.created_at FROM transcript_events e JOIN transcript_event_identities i"
            " ON i.session_id = e.session_id AND i.seq = e.seq WHERE e.session_id = ? ORDER BY e.seq DESC LIMIT 1",
            (GROWN,)).fetchone()
        new_seq, new_id, when = seq + 1, "c0ffee01", created + 60_000
        event = {"type": "message", "id": new_id, "parentId": leaf, "timestamp": "2026-11-12T09:30:00.000Z",
                 "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": when}}
        conn.execute("INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?, ?, ?, ?)",
                     (GROWN, new_seq, json.dumps(event), when))
        conn.execute("INSERT INTO transcript_event_identities (session_id, event_id, seq, event_type, parent_id,"
                     " created_at) VALUES (?, ?, ?, 'message', ?, ?)", (GROWN, new_id, new_seq, leaf, when))
        pos, msg = conn.execute("SELECT max(active_position), max(message_position) FROM"
                                " session_transcript_active_events WHERE session_id = ?", (GROWN,)).fetchone()
        conn.execute("INSERT INTO session_transcript_active_events (session_id, active_position, event_seq,"
                     " message_position, context_eligible) VALUES (?, ?, ?, ?, 1)", (GROWN, pos + 1, new_seq, msg + 1))
        conn.execute("UPDATE session_transcript_index_state SET indexed_seq = ?, leaf_event_id = ?,"
                     " active_event_count = active_event_count + 1, updated_at = ? WHERE session_id = ?",
                     (new_seq, new_id, when, GROWN))
        conn.commit()
    finally:
        conn.close()


def test_the_cached_audit_equals_the_uncached_one_and_reads_no_session_when_nothing_changed(tmp_path: Path) -> None:
    eng = _engine(tmp_path)
    try:
        reads = _counting_reads(eng)
        uncached = eng.audit(cache=False)
        assert len(reads) == uncached.scanned == 4
        path = cache_path(eng.config.home, eng.config.index_path.stem)
        assert not path.exists()  # the uncached path leaves no cache
        cold = eng.audit()
        assert path.is_file() and path.is_relative_to(eng.config.home)
        assert _sessions(cold) == _sessions(uncached) and cold.statements > 0
        reads.clear()
        warm = eng.audit()
        assert reads == []  # every session came from the cache
        assert _sessions(warm) == _sessions(uncached)
        assert eng.audit(session="9b2d").to_json()["sessions"] == eng.audit(session="9b2d", cache=False).to_json()[
            "sessions"]
        assert reads == [reads[0]] * len(reads) and len(reads) == 1  # only the uncached --session read
    finally:
        eng.close()


def test_a_grown_session_is_read_again_and_only_it(tmp_path: Path) -> None:
    eng = _engine(tmp_path)
    try:
        before = eng.audit()
        assert not any("Okafor" in st.text for s in before.sessions for st in s.statements)
        _grow(tmp_path / "openclaw-agent.sqlite", NEW_TEXT)
        reads = _counting_reads(eng)
        grown = eng.audit()
        assert [Path(r).stem for r in reads] == [GROWN]
        texts = [st.text for s in grown.sessions for st in s.statements]
        assert any("Okafor" in t for t in texts)
        assert _sessions(grown) == _sessions(eng.audit(cache=False))
    finally:
        eng.close()


def test_an_edited_note_decides_again_what_memory_holds(tmp_path: Path) -> None:
    eng = _engine(tmp_path)
    try:
        first = eng.audit()
        uv = next(st for s in first.sessions for st in s.statements if "uv for Python" in st.text)
        (eng.config.workspace / "MEMORY.md").write_text(f"# Memory\n\n- {uv.text}\n", encoding="utf-8")
        reads = _counting_reads(eng)
        after = eng.audit()
        assert reads == []  # the sessions' statements are still valid: only the verdicts are decided again
        assert not any("uv for Python" in st.text for s in after.sessions for st in s.statements)
        assert _sessions(after) == _sessions(eng.audit(cache=False))
    finally:
        eng.close()


def test_a_corrupt_cache_file_is_ignored_and_rebuilt(tmp_path: Path) -> None:
    eng = _engine(tmp_path)
    try:
        expected = _sessions(eng.audit(cache=False))
        path = cache_path(eng.config.home, eng.config.index_path.stem)
        path.parent.mkdir(parents=True, exist_ok=True)
        for garbage in (b"\x00not marshal at all", b"", b"\xe9" * 4096):
            path.write_bytes(garbage)
            assert _sessions(eng.audit()) == expected
            rebuilt = AuditCache.load(path, "any")
            assert len(rebuilt.sessions) == 4  # rewritten, readable
        # a well-formed file of the right header but the wrong shape inside is ignored too
        import marshal

        from engine.review.audit_cache import _header, rules_version, session_key

        bad = {i.session_id: (session_key(i), (1, 2)) for i in eng.list_sessions()}
        path.write_bytes(marshal.dumps((_header(rules_version()), bad, "m", {})))
        reads = _counting_reads(eng)
        assert _sessions(eng.audit()) == expected
        assert len(reads) == 4
    finally:
        eng.close()
