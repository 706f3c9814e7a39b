"""``memdeck audit``: the person's durable statements memory lacks, per session, against its compactions and
flushes — on the repo's copy of OpenClaw's database and on a hand-built legacy folder. Read-only."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from memdeck.cli import cli

DB = Path(__file__).parent / "data" / "openclaw-agent.sqlite"


def _run(ws: Path, sessions: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--workspace", str(ws), "--sessions", str(sessions), *args],
                                env={"MEMDECK_EMBEDDING_PROVIDER": "none"})
    return result.exit_code, result.output


def _workspace(tmp_path: Path, memory: str = "# Memory\n") -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(memory, encoding="utf-8")
    return ws


def _digest(*paths: Path) -> str:
    h = hashlib.sha256()
    for root in paths:
        for p in sorted(root.rglob("*")) if root.is_dir() else [root]:
            if p.is_file():
                h.update(str(p).encode() + p.read_bytes())
    return h.hexdigest()


def test_audit_of_the_agent_database_cites_statements_and_shows_every_unflushed_compaction(tmp_path: Path) -> None:
    db = tmp_path / "openclaw-agent.sqlite"
    shutil.copy(DB, db)
    ws = _workspace(tmp_path)
    before = _digest(ws, db)
    code, out = _run(ws, db, "audit", "--json")
    assert code == 0, out
    payload = json.loads(out)
    assert _digest(ws, db) == before  # read-only
    statements = [s for sess in payload["sessions"] for s in sess["statements"]]
    assert statements
    for sess in payload["sessions"]:
        for st in sess["statements"]:
            assert st["citation"].startswith(f"sessions/main/{sess['sessionId']}.jsonl#L")
            assert "<" not in st["text"] and "untrusted" not in st["text"].lower()  # no injected wrapper text
    texts = " | ".join(s["text"] for s in statements)
    assert "Telegram over email" in texts
    by_id = {s["sessionId"][:8]: s for s in payload["sessions"]}
    five = by_id["5e1f0c3a"]
    assert [c["tokensBefore"] for c in five["compactions"]] == [184000, 176000]
    assert not any(c["flushed"] for c in five["compactions"])
    assert five["verdict"].startswith("compacted at 176K tokens with no flush before it")
    assert payload["unflushedCompactions"] >= 2


def test_a_statement_memory_holds_is_not_listed(tmp_path: Path) -> None:
    db = tmp_path / "openclaw-agent.sqlite"
    shutil.copy(DB, db)
    ws = _workspace(tmp_path, "# Memory\n\n- From now on always use uv for Python projects, no more pip or poetry"
                              " anywhere\n")
    code, out = _run(ws, db, "audit", "--json", "--session", "9b2d4e71")
    assert code == 0, out
    payload = json.loads(out)
    texts = [s["text"] for sess in payload["sessions"] for s in sess["statements"]]
    assert texts and not any("uv for Python" in t for t in texts)
    assert all(sess["sessionId"].startswith("9b2d4e71") for sess in payload["sessions"])
    assert payload["sessions"][0]["known"] >= 1


def _legacy(folder: Path, sid: str = "aa11bb22-0000-4000-8000-000000000001") -> Path:
    folder.mkdir(parents=True)
    lines = [
        {"type": "session", "version": 3, "id": sid, "timestamp": "2026-03-02T09:00:00Z", "cwd": "/home/x"},
        {"type": "message", "id": "m1", "timestamp": "2026-03-02T09:01:00Z",
         "message": {"role": "user", "content": "My name is Ilse and I live in Utrecht"}},
        {"type": "message", "id": "m2", "timestamp": "2026-03-02T09:02:00Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "Nice to meet you, Ilse."}]}},
        {"type": "message", "id": "m3", "timestamp": "2026-03-02T09:03:00Z",
         "message": {"role": "user", "content": "thanks"}},
        {"type": "compaction", "id": "c1", "timestamp": "2026-03-02T10:00:00Z", "summary": "Ilse, Utrecht",
         "tokensBefore": 131000},
        {"type": "message", "id": "m4", "timestamp": "2026-03-02T10:05:00Z",
         "message": {"role": "user", "content": "From now on always reply in Dutch please"}},
    ]
    path = folder / f"{sid}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_legacy_folder_with_a_compaction_and_no_flush(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    path = _legacy(folder)
    ws = _workspace(tmp_path)
    before = _digest(ws, folder)
    code, out = _run(ws, folder, "audit", "--json")
    assert code == 0, out
    payload = json.loads(out)
    assert _digest(ws, folder) == before
    [sess] = payload["sessions"]
    assert sess["compactions"] == [{"line": 5, "at": "2026-03-02T10:00:00Z", "tokensBefore": 131000,
                                    "flushed": False}]
    assert sess["verdict"] == "compacted at 131K tokens with no flush before it — 2 statements not in memory"
    cites = {s["citation"] for s in sess["statements"]}
    assert cites == {f"sessions/{path.name}#L2", f"sessions/{path.name}#L6"}
    assert {s["day"] for s in sess["statements"]} == {"2026-03-02"}
    code, text = _run(ws, folder, "audit")
    assert code == 0
    assert "compaction" in text and "no flush" in text and f"sessions/{path.name}#L2" in text
    assert "2 statements not in memory in 1 session" in text
