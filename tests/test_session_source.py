"""Sessions as a search source: user/assistant text only, secrets redacted, line ranges in JSONL lines."""

from __future__ import annotations

import json
import os
from pathlib import Path

from engine.api import MemoryEngine
from tests.helpers import hash_config

SESSION = "9b2d4e71-5c3a-4f88-b6e0-7a1c2d3e4f51"


def _engine(demo_workspace: Path) -> MemoryEngine:
    cfg = hash_config(demo_workspace, sources=["memory", "sessions"], sessions_dir=str(demo_workspace / "sessions"))
    return MemoryEngine(cfg)


def _jsonl_line(demo_workspace: Path, needle: str) -> int:
    lines = (demo_workspace / "sessions" / f"{SESSION}.jsonl").read_text().split("\n")
    return next(i for i, line in enumerate(lines, 1) if needle in line)


def test_session_hits_map_to_jsonl_lines(demo_workspace: Path) -> None:
    with _engine(demo_workspace) as eng:
        eng.sync()
        hits = eng.search("Sova backup job SD card", mode="keyword").results
        hit = next(h for h in hits if h.source == "sessions")
        assert hit.path == f"sessions/{SESSION}.jsonl"
        line = _jsonl_line(demo_workspace, "move the Sova backup job off the SD card")
        assert hit.start_line <= line <= hit.end_line
        assert hit.snippet_start_line <= line <= hit.snippet_end_line
        assert hit.citation == f"sessions/{SESSION}.jsonl#L{hit.start_line}-L{hit.end_line}"


def test_only_user_and_assistant_text_is_indexed(demo_workspace: Path) -> None:
    with _engine(demo_workspace) as eng:
        eng.sync()
        rows = eng.store.conn.execute("SELECT text FROM chunks WHERE source = 'sessions'").fetchall()
        text = "\n".join(r[0] for r in rows)
        assert "User: " in text and "Assistant: " in text
        assert "Edited MEMORY.md (1 replacement)" not in text  # a tool result
        assert "model-snapshot" not in text


def test_secrets_are_redacted_in_the_index(demo_workspace: Path) -> None:
    secret = "sk-demo0000000000000000000000000000"
    with _engine(demo_workspace) as eng:
        eng.sync()
        conn = eng.store.conn
        stored = "\n".join(r[0] for r in conn.execute("SELECT text FROM chunks").fetchall())
        assert secret not in stored
        assert not eng.search(secret, mode="keyword").results or all(
            secret not in h.snippet for h in eng.search(secret, mode="keyword").results)
    raw = eng.config.index_path.read_bytes()
    assert secret.encode() not in raw


def test_sessions_excluded_unless_configured(demo_workspace: Path) -> None:
    with MemoryEngine(hash_config(demo_workspace, sessions_dir=str(demo_workspace / "sessions"))) as eng:
        eng.sync()
        assert all(h.source == "memory" for h in eng.search("Sova backup job SD card", mode="keyword").results)


def test_grown_transcript_is_reindexed(demo_workspace: Path) -> None:
    path = demo_workspace / "sessions" / f"{SESSION}.jsonl"
    with _engine(demo_workspace) as eng:
        eng.sync()
        entry = {"type": "message", "id": "aa11bb22", "parentId": None, "timestamp": "2026-11-12T20:00:00Z",
                 "message": {"role": "user", "content": "also note: the quokka mascot ships in v3"}}
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry) + "\n")
        os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))
        hit = eng.search("quokka mascot", mode="keyword").results[0]
        last = len(path.read_text().strip().split("\n"))
        assert hit.path.startswith("sessions/") and hit.end_line == last


def test_speaker_labels_are_shown_but_never_matched(demo_workspace: Path) -> None:
    """Every transcript line starts ``User: ``/``Assistant: ``; a query with "user" in it (an agent's usual
    "what did the user …") matched every transcript chunk on that label alone, first at 1.00. The labels stay in
    the chunk (snippets show who spoke) and leave its FTS row, also when a repair re-adds that row."""
    from engine.health.repairs import repair_rows

    with _engine(demo_workspace) as eng:
        eng.sync()
        for query in ("user", "assistant", "what did the user approve"):
            assert not [h for h in eng.search(query, mode="keyword").results if h.source == "sessions"], query
        hit = next(h for h in eng.search("Sova backup job SD card", mode="keyword").results if h.source == "sessions")
        assert "User: " in hit.snippet
        conn = eng.store.conn
        with eng.store.transaction() as tx:
            tx.execute("DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE source = 'sessions')")
        assert any("FTS rows re-added" in action for action in repair_rows(eng.store))
        rows = conn.execute("SELECT f.text FROM chunks_fts f JOIN chunks c ON c.id = f.rowid"
                            " WHERE c.source = 'sessions'").fetchall()
        assert rows and not any(r[0].startswith(("User: ", "Assistant: ")) or "\nUser: " in r[0] for r in rows)
        assert not [h for h in eng.search("user", mode="keyword").results if h.source == "sessions"]
