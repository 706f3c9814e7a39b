"""``memdeck audit``: the person's durable statements memory lacks, per session, against its compactions and
flushes — on the repo's copy of OpenClaw's database and on a hand-built legacy folder. Read-only."""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.api import MemoryEngine, NothingToUndo, ReviewActionError, ReviewWriteConflict
from engine.config import load_config
from engine.review.audit import Lost
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


# -- recovering statements: appended to the day they were said (or MEMORY.md), atomic, undone byte for byte ----------

def _engine(tmp_path: Path, memory: str = "# Memory\n") -> MemoryEngine:
    db = tmp_path / "openclaw-agent.sqlite"
    shutil.copy(DB, db)
    ws = _workspace(tmp_path, memory)
    eng = MemoryEngine(load_config(workspace=ws, sessions_dir=db, home=tmp_path / "home",
                                   overrides={"embedding": {"provider": "none"}}))
    eng.sync()
    return eng


def _statement(eng: MemoryEngine, session: str, words: str) -> Lost:
    report = eng.audit(session=session)
    found: Lost = next(st for s in report.sessions for st in s.statements if words in st.text)
    return found


def _texts(eng: MemoryEngine) -> list[str]:
    return [st.text for s in eng.audit().sessions for st in s.statements]


def test_recovered_statements_go_to_the_day_they_were_said_and_leave_the_audit(tmp_path: Path) -> None:
    eng = _engine(tmp_path)
    try:
        squash = _statement(eng, "3f6c2a9e", "squash merges")
        uv = _statement(eng, "9b2d4e71", "uv for Python")
        remind = _statement(eng, "9b2d4e71", "Sova backup")
        assert (squash.day, uv.day) == (date(2026, 11, 20), date(2026, 11, 12))
        action = eng.recover_statements([squash, uv, remind])
        mem = eng.config.workspace / "memory"
        assert set(action.files) == {"memory/2026-11-12.md", "memory/2026-11-20.md"}
        nov12 = (mem / "2026-11-12.md").read_text(encoding="utf-8")
        assert nov12.startswith("# 2026-11-12 — Thursday, 12 November 2026\n\n## Recovered from sessions (audit ")
        assert f"- {uv.text} (from session 9b2d4e71 line {uv.line})\n- {remind.text} (from session 9b2d4e71 " \
               f"line {remind.line})\n" in nov12
        assert nov12.count("## Recovered") == 1  # one block per day
        nov20 = (mem / "2026-11-20.md").read_text(encoding="utf-8")
        assert nov20.endswith(f"- {squash.text} (from session 3f6c2a9e line 11)\n")
        left = _texts(eng)
        assert left and not any(t in left for t in (squash.text, uv.text, remind.text))
        assert any("Telegram over email" in t for t in left)  # the others are still listed
        with pytest.raises(ReviewActionError, match="already says every picked statement"):
            eng.recover_statements([uv])
        again = eng.recover_statements([uv, _statement(eng, "5e1f0c3a", "Telegram")])
        assert again.summary == "recovered 1 statement to memory/2026-04-27.md (1 already there)"
        eng.review_undo()
        assert eng.review_last_action() == action.summary
        eng.review_undo()
        assert not (mem / "2026-11-12.md").exists() and not (mem / "2026-11-20.md").exists()
        assert {squash.text, uv.text, remind.text} <= set(_texts(eng))
    finally:
        eng.close()


def test_recovery_appends_to_an_existing_note_and_review_undo_restores_its_bytes(tmp_path: Path) -> None:
    eng = _engine(tmp_path)
    try:
        note = eng.config.workspace / "memory" / "2026-11-20.md"
        before = "\ufeff# 2026-11-20\r\n\r\n- Shipped v2.4.1.\r\n- Kettle is broken".encode("utf-8")
        note.write_bytes(before)
        squash = _statement(eng, "3f6c2a9e", "squash merges")
        eng.recover_statements([squash])
        after = note.read_bytes()
        assert after.startswith(before + b"\r\n\r\n## Recovered from sessions")
        assert after.endswith(b"(from session 3f6c2a9e line 11)\r\n")
        result = CliRunner().invoke(cli, ["--workspace", str(eng.config.workspace), "review", "undo"],
                                    env={"MEMDECK_HOME": str(eng.config.home), "MEMDECK_EMBEDDING_PROVIDER": "none"})
        assert result.exit_code == 0, result.output
        assert "undid: recovered 1 statement to memory/2026-11-20.md" in result.output
        assert note.read_bytes() == before
    finally:
        eng.close()


def test_one_statement_is_promoted_to_a_memory_section(tmp_path: Path) -> None:
    eng = _engine(tmp_path, "# Memory\n\n## Preferences\n- Tea over coffee.\n\n## People\n- Ana\n")
    try:
        squash = _statement(eng, "3f6c2a9e", "squash merges")
        uv = _statement(eng, "9b2d4e71", "uv for Python")
        with pytest.raises(ReviewActionError, match="one statement at a time"):
            eng.recover_statements([squash, uv], target="MEMORY.md", section="Preferences")
        eng.recover_statements([squash], target="MEMORY.md", section="Preferences")
        text = (eng.config.workspace / "MEMORY.md").read_text(encoding="utf-8")
        assert text == ("# Memory\n\n## Preferences\n- Tea over coffee.\n"
                        f"- {squash.text} (from session 3f6c2a9e line 11)\n\n## People\n- Ana\n")
        assert squash.text not in _texts(eng)
        with pytest.raises(ReviewActionError, match="already says that"):
            eng.recover_statements([squash], target="MEMORY.md")
        with pytest.raises(ReviewActionError, match=r"recovered to daily or MEMORY\.md or USER\.md"):
            eng.recover_statements([squash], target="notes.md")
        remind = _statement(eng, "9b2d4e71", "Sova backup")
        assert remind.text.startswith("Remind me tomorrow (Fri 13 Nov)")  # reworded by the drafter
        [said] = [line for line, it in remind.context(1) if it]
        assert said.startswith("remind me tomorrow at 08:30 to move the Sova backup job")
        context = squash.context(1)
        assert [line for line, it in context if it] and all(squash.text[:40] in line for line, it in context if it)
        assert len(context) <= 3
    finally:
        eng.close()


def test_recovery_is_all_or_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    eng = _engine(tmp_path)
    try:
        mem = eng.config.workspace / "memory"
        other = mem / "2026-11-20.md"
        other.write_text("# 2026-11-20\n", encoding="utf-8")
        squash = _statement(eng, "3f6c2a9e", "squash merges")
        uv = _statement(eng, "9b2d4e71", "uv for Python")
        real_save = MemoryEngine.save_note
        calls: list[str] = []

        def racing_save(self: MemoryEngine, rel: str, text: str, expected: object) -> object:
            if not calls:  # the agent appends to the second note just while the first one is written
                other.write_text("# 2026-11-20\n- Appended by the agent.\n", encoding="utf-8")
            calls.append(rel)
            return real_save(self, rel, text, expected)  # type: ignore[arg-type]

        monkeypatch.setattr(MemoryEngine, "save_note", racing_save)
        with pytest.raises(ReviewWriteConflict):
            eng.recover_statements([squash, uv])
        assert calls[0] == "memory/2026-11-12.md"
        assert not (mem / "2026-11-12.md").exists()  # the note it made is gone again
        assert other.read_text(encoding="utf-8") == "# 2026-11-20\n- Appended by the agent.\n"
        with pytest.raises(NothingToUndo):
            eng.review_undo()
    finally:
        eng.close()
