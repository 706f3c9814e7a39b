"""TUI speed on OpenClaw 2026.9's agent database: a 1,500-event session, from the Open-session pick to its turns.

Usage::

    python bench/session_db_open.py [--events 1500] [--runs 5] [--out bench/results/speed-session-db.json]

A temp copy of the test fixture ``tests/data/openclaw-agent.sqlite`` gets one session grown to ``--events``
events (alternating user/assistant turns of a few hundred characters, as OpenClaw writes them). The real app
(headless, 160×45, hashing embedder, no watcher) opens it through the tree's path; each run records the time to
the first screen of turns (the head read) and to the whole session, with the load average. The goal is under
1 s to the whole session. Nothing touches the real home: MEMDECK_HOME is a temp dir.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "data" / "openclaw-agent.sqlite"
GROWN_SESSION = "8555a0a4-0b79-459d-939c-e17cdbbf4fe2"
"""The fixture's live (not archived) session, the one grown."""

_WORDS = ("interview", "telegram", "calendar", "release", "postgres", "digest", "helper", "layout", "plan",
          "the", "and", "a", "of", "to", "we", "next", "week", "review", "notes", "draft")


def grow_session(db: Path, events: int, session_id: str = GROWN_SESSION, chars: int = 360) -> int:
    """Append user/assistant message events to a session until it holds ``events`` rows; returns how many were added.

    Rows are written as OpenClaw writes plain ones (``event_json`` with its UTF-8 size, an identity row each),
    in one transaction, then the WAL is checkpointed so the copy is one file again. OpenClaw's CHECKs call
    ``octet_length`` (SQLite 3.43): sqlean's SQLite is used when the system's is older.
    """
    driver: Any = sqlite3
    if sqlite3.sqlite_version_info < (3, 43, 0):
        import sqlean

        driver = sqlean
    conn = driver.connect(db)
    try:
        last_seq, last_created = conn.execute(
            "SELECT max(seq), max(created_at) FROM transcript_events WHERE session_id = ?", (session_id,)).fetchone()
        parent = conn.execute("SELECT event_id FROM transcript_event_identities WHERE session_id = ? AND seq = ?",
                              (session_id, last_seq)).fetchone()
        parent_id = parent[0] if parent else None
        start = datetime.fromtimestamp(last_created / 1000, tz=UTC)
        added = 0
        with conn:
            for seq in range(last_seq + 1, events):
                event_id = f"b{seq:07x}"
                when = start + timedelta(seconds=5 * (seq - last_seq))
                role = "user" if seq % 2 else "assistant"
                words = " ".join(_WORDS[(seq * 7 + i) % len(_WORDS)] for i in range(chars // 6))
                message: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": f"turn {seq}: {words}"}],
                                           "timestamp": int(when.timestamp() * 1000)}
                if role == "assistant":
                    message.update(model="gpt-5.5", provider="openai",
                                   usage={"input": 900 + seq, "output": 40, "cacheRead": 0, "cacheWrite": 0,
                                          "totalTokens": 940 + seq})
                line = json.dumps({"type": "message", "id": event_id, "parentId": parent_id,
                                   "timestamp": when.isoformat().replace("+00:00", "Z"), "message": message},
                                  separators=(",", ":"))
                created = int(when.timestamp() * 1000)
                conn.execute("INSERT INTO transcript_events(session_id, seq, event_json, created_at, event_utf8_bytes)"
                             " VALUES (?, ?, ?, ?, ?)", (session_id, seq, line, created, len(line.encode())))
                conn.execute("INSERT INTO transcript_event_identities(session_id, event_id, seq, event_type, parent_id,"
                             " created_at) VALUES (?, ?, ?, 'message', ?, ?)",
                             (session_id, event_id, seq, parent_id, created))
                parent_id = event_id
                added += 1
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return added


def grown_copy(folder: Path, events: int) -> Path:
    """A copy of the fixture in ``folder/agents/main/agent/`` with :data:`GROWN_SESSION` grown to ``events``."""
    db = folder / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    db.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURE, db)
    grow_session(db, events)
    return db


async def _open_once(db: Path, workspace: Path) -> dict[str, float]:
    from engine.config import load_config
    from tui.app import MemdeckApp
    from tui.widgets.transcript_view import TranscriptView

    config = load_config(workspace=workspace, sessions_dir=db, overrides={"embedding": {"provider": "hash"}})
    app = MemdeckApp(config, watch=False)
    marks: dict[str, float] = {}
    async with app.run_test(size=(160, 45)) as pilot:
        # Start-up over (index opened and synced, sessions listed): the user opens a session on a quiet app.
        for _ in range(3000):
            await pilot.pause(0.01)
            busy = any(w.is_running for w in app.workers) or app.main.sync.running
            if app.main.memory_tree.model.sessions and not busy:
                break
        entry = next(s for s in app.main.memory_tree.model.sessions if s.session_id == GROWN_SESSION)
        started = time.perf_counter()
        app.main.open_session(entry.path)
        view: TranscriptView | None = None
        # Polled every 5 ms: the first screen of turns (the head read), then the whole session.
        while time.perf_counter() - started < 30:
            await pilot.pause(0.005)
            view = app.main.loaded_transcript
            if view is None or not view.lines.blocks:
                continue
            if view.partial:
                marks.setdefault("head_s", time.perf_counter() - started)
            elif view.transcript is not None and view.transcript.session_id == GROWN_SESSION:
                marks["whole_s"] = time.perf_counter() - started
                break
        assert view is not None and view.transcript is not None
        marks["blocks"] = float(len(view.lines.blocks))
        marks["entries"] = float(len(view.transcript.entries))
    return marks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=1500)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="memdeck-bench-session-db-"))
    os.environ["MEMDECK_HOME"] = str(root / "home")
    sys.path.insert(0, str(REPO))
    from engine.demo import DEMO_SOURCE

    workspace = root / "ws"
    shutil.copytree(DEMO_SOURCE, workspace)
    db = grown_copy(root / "state", args.events)
    runs = []
    for _ in range(args.runs):
        marks = asyncio.run(_open_once(db, workspace))
        marks["load_avg"] = os.getloadavg()[0]
        runs.append(marks)
    whole = [r["whole_s"] for r in runs]
    head = [r["head_s"] for r in runs if "head_s" in r]
    result = {
        "command": " ".join(sys.argv), "date": datetime.now(UTC).isoformat(), "events": args.events,
        "db_bytes": db.stat().st_size, "runs": runs,
        "whole_p50_s": statistics.median(whole), "whole_max_s": max(whole),
        "head_p50_s": statistics.median(head) if head else None, "goal_s": 1.0,
        "goal_met": max(whole) < 1.0,
    }
    print(f"{'events':>8} {'head p50':>9} {'whole p50':>10} {'whole max':>10} {'load':>5}")
    print(f"{args.events:>8} {result['head_p50_s'] or 0:>8.3f}s {result['whole_p50_s']:>9.3f}s "
          f"{result['whole_max_s']:>9.3f}s {runs[-1]['load_avg']:>5.1f}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
