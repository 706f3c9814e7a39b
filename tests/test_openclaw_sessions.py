"""Today's OpenClaw: sessions from its agent database (or the legacy folder) through every door, read-only."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.api import AgentDbSource, FolderSource, MemoryEngine, MemoryFiles, open_session_source
from engine.config import load_config
from engine.sessions.agentdb import DB_FILE_NAME
from engine.sessions.locate import session_source_at
from memdeck.mcp import MemoryService

DATA = Path(__file__).parent / "data"
FIXTURE = DATA / "openclaw-agent.sqlite"
ROOT = Path(__file__).resolve().parents[1]

MAIN = "8555a0a4-0b79-459d-939c-e17cdbbf4fe2"
RELEASE = "3f6c2a9e-8b41-4d7a-9c05-1e2f7b8a6d10"
COUCH = "9b2d4e71-5c3a-4f88-b6e0-7a1c2d3e4f51"
BRANCHY = "5e1f0c3a-8b2d-4a6e-9f10-2c3d4e5f6a7b"
TITLES = {
    MAIN: "はくあ",  # OpenClaw titled it with the metadata block: the first words the user said instead
    RELEASE: "Morning! We cut v2.4.1 today. Can you draft the release…",
    COUCH: "Hey, quick one from the couch. starting the digest helper…",
    BRANCHY: "Remember that I prefer Telegram over email for interview…",
}
ZSTD_SEQ = 63
ZSTD_SHA256 = "ed3659a158559402ee350e7f86098003b1e2584da8562c2a478fd993b7ed2388"
INJECTED = ("Sender", "untrusted metadata", "⟦openclaw:ctx⟧", "An async command the user already approved")
CHECKPOINT_UUID = "0f8e1c2a-3b4d-4e5f-8a9b-0c1d2e3f4a5b"


# -- fixtures --------------------------------------------------------------------------------
class Home:
    """A temp HOME, OpenClaw state dir (with the fixture database in place), memdeck home and workspace."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.state = root / "state"
        self.memdeck = root / "memdeck"
        self.workspace = root / "ws"
        self.agent_dir = self.state / "agents" / "main" / "agent"
        self.db = self.agent_dir / DB_FILE_NAME
        for folder in (self.home, self.memdeck, self.workspace / "memory", self.agent_dir):
            folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(FIXTURE, self.db)
        (self.workspace / "MEMORY.md").write_text("# Memory\n\n- The office plant is a fern.\n", encoding="utf-8")
        (self.memdeck / "config.toml").write_text(
            f'workspace = "{self.workspace}"\nsources = ["memory", "sessions"]\n[embedding]\nprovider = "hash"\n',
            encoding="utf-8")

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("MEMDECK_", "OPENCLAW_")) and k not in ("HOME",)}
        env.update(HOME=str(self.home), OPENCLAW_STATE_DIR=str(self.state), MEMDECK_HOME=str(self.memdeck),
                   PYTHONPATH=str(ROOT), NO_COLOR="1", OPENBLAS_NUM_THREADS="1")
        env.update(extra)
        return env

    def run(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "memdeck", *args], capture_output=True, text=True,
                              env=self.env(**env), cwd=self.root, timeout=120)

    def db_state(self) -> tuple[str, list[str]]:
        """The database's sha256 and its folder's listing (reads must change neither)."""
        return hashlib.sha256(self.db.read_bytes()).hexdigest(), sorted(os.listdir(self.agent_dir))

    def config(self, **overrides: Any) -> Any:
        data: dict[str, Any] = {"embedding": {"provider": "hash"}, "sources": ["memory", "sessions"]}
        data.update(overrides)
        return load_config(workspace=self.workspace, home=self.memdeck, config_path=self.memdeck / "none.toml",
                           overrides=data)


@pytest.fixture
def oc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Home:
    home = Home(tmp_path)
    monkeypatch.setenv("HOME", str(home.home))
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(home.state))
    monkeypatch.delenv("MEMDECK_SESSIONS", raising=False)
    return home


def _json(result: subprocess.CompletedProcess[str]) -> Any:
    assert result.stdout, result.stderr
    return json.loads(result.stdout)


def _message(seq: int, text: str, *, role: str = "user", provenance: str | None = None) -> str:
    message: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1772980000000 + seq}
    if provenance:
        message["provenance"] = {"kind": provenance, "sourceTool": "sessions_send"}
    return json.dumps({"type": "message", "id": f"t{seq:07d}", "parentId": None,
                       "timestamp": "2026-03-08T15:00:00.000Z", "message": message}, ensure_ascii=False)


def _append_rows(db: Path, session: str, texts: list[dict[str, Any]]) -> None:
    """Test set-up only (never memdeck): add transcript rows to a private copy, as OpenClaw would."""
    conn = sqlite3.connect(db)
    # OpenClaw's CHECK constraints call octet_length(), which this SQLite may predate.
    conn.create_function("octet_length", 1, lambda v: None if v is None else len(v.encode() if isinstance(v, str)
                                                                                 else bytes(v)), deterministic=True)
    try:
        (last,) = conn.execute("SELECT max(seq) FROM transcript_events WHERE session_id = ?", (session,)).fetchone()
        for offset, row in enumerate(texts, 1):
            line = _message(last + offset, row["text"], role=row.get("role", "user"), provenance=row.get("provenance"))
            conn.execute("INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_utf8_bytes) "
                         "VALUES (?, ?, ?, ?, ?)", (session, last + offset, line, 1772980000000 + offset,
                                                    len(line.encode())))
        conn.commit()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


# -- sources ---------------------------------------------------------------------------------
def test_the_database_is_found_and_lists_the_four_sessions_with_titles(oc: Home) -> None:
    before = oc.db_state()
    source = open_session_source(oc.config())
    assert isinstance(source, AgentDbSource) and source.location == oc.db
    infos = source.list_sessions()
    assert {i.session_id: i.title for i in infos} == TITLES
    main = next(i for i in infos if i.session_id == MAIN)
    assert (main.source, main.rel, main.path) == ("agent-db", f"sessions/main/{MAIN}.jsonl",
                                                  Path(f"sessions/main/{MAIN}.jsonl"))
    assert (main.session_key, main.chat_type, main.model, main.total_tokens, main.tokens_source) == (
        "agent:main:main", "direct", "gpt-5.4", 24845, "store")
    assert not main.archived and main.line_count == 83 and main.message_count > 0
    assert all(i.archived for i in infos if i.session_id != MAIN)
    # No fresh store total for the recovered sessions: the last reply's usage, and it says so.
    assert all(i.tokens_source == "usage" for i in infos if i.session_id != MAIN and i.total_tokens)
    status = source.describe()
    assert (status.kind, status.available, status.sessions, status.schema_version, status.warnings) == (
        "agent-db", True, 4, 23, ())
    assert oc.db_state() == before


def test_a_zstd_row_reads_back_byte_identical_and_parses_at_its_jsonl_line(oc: Home) -> None:
    source = open_session_source(oc.config())
    lines = dict(source.jsonl_lines(MAIN[:8]))
    assert hashlib.sha256(lines[ZSTD_SEQ + 1]).hexdigest() == ZSTD_SHA256
    transcript = source.read(MAIN[:8])
    entry = next(e for e in transcript.entries if e.line == ZSTD_SEQ + 1)
    assert entry.message is not None and entry.message.role == "toolResult"
    assert entry.id == json.loads(lines[ZSTD_SEQ + 1])["id"]
    assert transcript.line_count == 83 and transcript.session_id == MAIN and not transcript.skipped
    assert transcript.size == sum(len(line) + 1 for line in lines.values())
    head = source.read(MAIN, max_bytes=4096)
    assert not head.complete and head.entries == transcript.entries[: len(head.entries)]


def test_a_stand_in_path_is_never_opened(oc: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    # A file at the stand-in path (relative to the working folder) must not be read instead of the database.
    monkeypatch.chdir(oc.root)
    decoy = oc.root / "sessions" / "main" / f"{MAIN}.jsonl"
    decoy.parent.mkdir(parents=True)
    decoy.write_text('{"type":"message","message":{"role":"user","content":"decoy"}}\n')
    memory = MemoryFiles(oc.config())
    found = memory.find_session(f"sessions/main/{MAIN}.jsonl")
    assert found == Path(f"sessions/main/{MAIN}.jsonl")
    transcript = memory.read_session(found)
    assert transcript.line_count == 83 and all("decoy" not in (e.message.text if e.message else "")
                                               for e in transcript.entries)


def test_sessions_path_names_a_folder_or_the_database_file(oc: Home, tmp_path: Path) -> None:
    assert isinstance(session_source_at(oc.db), AgentDbSource)
    assert isinstance(session_source_at(oc.agent_dir), AgentDbSource)
    legacy = oc.agent_dir.parent / "sessions"
    legacy.mkdir()
    migrated = session_source_at(legacy)  # a migrated agent's old folder: the database next to it is read
    assert isinstance(migrated, AgentDbSource) and migrated.legacy_folder == legacy
    plain = tmp_path / "plain"
    plain.mkdir()
    assert isinstance(session_source_at(plain), FolderSource)
    monkeypatch_free = open_session_source(oc.config(sessions_dir=str(oc.db)))
    assert isinstance(monkeypatch_free, AgentDbSource)


def test_archives_left_in_the_old_folder_are_listed_with_the_database(oc: Home) -> None:
    legacy = oc.agent_dir.parent / "sessions"
    legacy.mkdir()
    header = json.dumps({"type": "session", "version": 3, "id": "aaaa0000", "timestamp": "2026-01-01T00:00:00Z"})
    (legacy / "aaaa0000.jsonl.reset.2026-01-02T00-00-00.000Z").write_text(
        header + "\n" + _message(1, "an archived hello") + "\n")
    (legacy / "bbbb0000.trajectory.jsonl").write_text('{"type":"session.started"}\n')
    infos = open_session_source(oc.config()).list_sessions()
    assert {i.session_id for i in infos} == {*TITLES, "aaaa0000"}
    archived = next(i for i in infos if i.session_id == "aaaa0000")
    assert archived.archived and archived.source == "folder" and archived.title == "an archived hello"
    assert open_session_source(oc.config()).read("aaaa").session_id == "aaaa0000"


# -- the legacy folder -----------------------------------------------------------------------
def _legacy_folder(folder: Path) -> None:
    folder.mkdir(parents=True)
    for name, sid in (("x.jsonl", "x"), (f"x.checkpoint.{CHECKPOINT_UUID}.jsonl", "x"),
                      ("y.jsonl.reset.2026-01-10T08-00-00.000Z", "y"), ("z.jsonl.deleted.2026-01-11T08-00-00.000Z", "z")):
        header = json.dumps({"type": "session", "version": 3, "id": sid, "timestamp": "2026-01-01T00:00:00Z"})
        (folder / name).write_text(header + "\n" + _message(1, f"hello from {name}") + "\n")
    (folder / "x.trajectory.jsonl").write_text('{"type":"session.started","sessionId":"x"}\n')


def test_the_legacy_folder_lists_sessions_and_archives_not_trajectories_or_checkpoints(oc: Home) -> None:
    folder = oc.root / "legacy"
    _legacy_folder(folder)
    result = oc.run("sessions", "--sessions", str(folder), "--json")
    assert result.returncode == 0, result.stderr
    rows = {row["sessionId"]: row["archived"] for row in _json(result)["sessions"]}
    assert rows == {"x": False, "y": True, "z": True}
    source = FolderSource(folder)
    assert source.find("x").name == "x.jsonl"  # the checkpoint copy no longer makes "x" ambiguous
    assert source.read("z").session_id == "z"
    assert [f.rel for f in source.index_files()] == [
        "sessions/x.jsonl", "sessions/y.jsonl.reset.2026-01-10T08-00-00.000Z",
        "sessions/z.jsonl.deleted.2026-01-11T08-00-00.000Z"]


def test_legacy_flush_of_an_id_with_a_checkpoint_copy_is_not_ambiguous(oc: Home) -> None:
    folder = oc.root / "legacy"
    _legacy_folder(folder)
    result = oc.run("flush", "x", "--dry-run", "--json", "--sessions", str(folder))
    assert result.returncode == 0, result.stderr
    assert "matches 2 sessions" not in result.stderr and _json(result)["sessionId"] == "x"


# -- the CLI on the database -----------------------------------------------------------------
def test_cli_sessions_status_flush_get_and_search_on_the_database(oc: Home) -> None:
    before = oc.db_state()

    listed = oc.run("sessions")
    assert listed.returncode == 0, listed.stderr
    header, *rows = listed.stdout.splitlines()
    assert header.split()[-1] == "TITLE" and len(rows) == 4
    assert {row.split()[0] for row in rows} == {sid[:8] for sid in TITLES}  # unambiguous, no trailing dots
    assert "はくあ" in listed.stdout and "(store)" in listed.stdout and "(last reply)" in listed.stdout
    assert oc.db_state() == before

    payload = _json(oc.run("sessions", "--json"))
    assert payload["source"]["kind"] == "agent-db" and payload["source"]["schemaVersion"] == 23
    assert {row["sessionId"]: row["title"] for row in payload["sessions"]} == TITLES  # full ids in JSON
    assert oc.db_state() == before

    status = oc.run("status", "--json")
    assert status.returncode == 0, status.stderr
    where = _json(status)["session_source"]
    assert (where["kind"], where["location"], where["schema_version"], where["sessions"], where["newer_schema"]) == (
        "agent-db", str(oc.db), 23, 4, False)
    text = oc.run("status")
    assert text.returncode == 0 and f"Sessions: OpenClaw database {oc.db} · schema 23" in text.stdout
    assert oc.db_state() == before

    searched = oc.run("search", "Telegram over email", "--mode", "keyword", "--json")
    assert searched.returncode == 0, searched.stderr
    hit = next(h for h in _json(searched)["results"] if h["source"] == "sessions")
    assert hit["path"] == f"sessions/main/{BRANCHY}.jsonl"
    lines = dict(open_session_source(oc.config()).jsonl_lines(BRANCHY))
    cited = next(n for n, line in lines.items() if b"I prefer Telegram over email" in line and b'"user"' in line)
    assert hit["startLine"] <= cited <= hit["endLine"]  # JSONL line = seq + 1
    assert hit["citation"] == f"sessions/main/{BRANCHY}.jsonl#L{hit['startLine']}-L{hit['endLine']}"
    assert oc.db_state() == before

    got = oc.run("get", f"sessions/main/{BRANCHY}.jsonl#L{cited}-L{cited + 1}")
    assert got.returncode == 0, got.stderr
    assert got.stdout.startswith(f"L{cited} User: Remember that I prefer Telegram over email")
    assert "Assistant: Noted. I will send interview alerts on Telegram" in got.stdout
    as_json = _json(oc.run("get", f"sessions/main/{BRANCHY}.jsonl", "--from", str(cited), "--lines", "1", "--json"))
    assert as_json["path"] == f"sessions/main/{BRANCHY}.jsonl" and "Assistant" not in as_json["text"]
    missing = oc.run("get", "sessions/main/nope.jsonl")
    assert missing.returncode == 1 and "no such session" in missing.stderr
    assert oc.db_state() == before

    by_file = oc.run("sessions", "--sessions", str(oc.db), "--json")
    assert by_file.returncode == 0, by_file.stderr
    assert len(_json(by_file)["sessions"]) == 4
    assert oc.db_state() == before


def test_flush_and_note_of_a_database_session_hold_no_injected_text(oc: Home) -> None:
    _append_rows(oc.db, MAIN, [
        {"text": 'Sender (untrusted metadata):\n```json\n{"label": "openclaw-tui", "note": "I prefer untrusted"}\n'
                 '```\n\n[Sun 2026-03-08 22:03 GMT+9] I prefer dark mode in every editor.'},
        {"text": "Sender: ⟦openclaw:ctx⟧\n```json\n{\"label\": \"openclaw-control-ui\"}\n```\n\n"
                 "I always use uv for Python projects."},
        {"text": "[Fri 2026-04-03 19:39 GMT+2] An async command the user already approved has completed. "
                 "I prefer to always deploy on Fridays."},
        {"text": "I prefer tabs over spaces for everything.", "provenance": "inter_session"},
        {"text": "/remember I prefer vim keybindings"},
    ])
    before = oc.db_state()
    flushed = oc.run("flush", MAIN[:8], "--dry-run", "--json", "--extractive")
    assert flushed.returncode == 0, flushed.stderr
    draft = _json(flushed)
    texts = [item["text"] for item in draft["items"]]
    assert any("dark mode" in t for t in texts) and any("uv for Python" in t for t in texts)
    everything = json.dumps(draft, ensure_ascii=False)
    for injected in (*INJECTED, "deploy on Fridays", "tabs over spaces", "vim keybindings"):
        assert injected not in everything
    # cited by JSONL line (seq + 1); 47 and 76 are the session's own Japanese instructions
    assert {item["line"] for item in draft["items"]} <= {47, 76, 84, 85}
    assert any("ボブにゃん" in t for t in texts) and any("MEMORY.md以外の変更を禁ずる" in t for t in texts)
    assert oc.db_state() == before

    appended = oc.run("flush", MAIN[:8], "--extractive", "--json")
    assert appended.returncode == 0 and _json(appended)["appended"] is True, appended.stderr
    daily = (oc.workspace / _json(appended)["path"]).read_text(encoding="utf-8")
    assert "dark mode" in daily and not any(injected in daily for injected in INJECTED)
    row = next(r for r in _json(oc.run("sessions", "--json"))["sessions"] if r["sessionId"] == MAIN)
    assert row["flushed"] is True and row["flushedAt"]  # memdeck's own record, in its data dir
    assert (oc.memdeck / "flush-state.json").is_file()
    assert oc.db_state() == before

    note = oc.run("flush", MAIN[:8], "--note", "--extractive")
    assert note.returncode == 0, note.stderr
    (written,) = (p for p in (oc.workspace / "memory").glob("*.md") if p.name != Path(_json(appended)["path"]).name)
    body = written.read_text(encoding="utf-8")
    assert "- **Session Key**: agent:main:main" in body and "dark mode" in body and "はくあ" in body
    for injected in (*INJECTED, "deploy on Fridays", "tabs over spaces", "vim keybindings", '"label"'):
        assert injected not in body
    name = written.name.lower()
    assert not any(word in name for word in ("sender", "untrusted", "metadata", "openclaw", "json", "async"))
    assert oc.db_state() == before


def test_a_locked_database_fails_clearly_with_exit_1(oc: Home) -> None:
    writer = sqlite3.connect(oc.db, isolation_level=None)  # OpenClaw stand-in holding the database open
    try:
        writer.execute("SELECT count(*) FROM session_nodes").fetchall()
        writer.execute("PRAGMA locking_mode = EXCLUSIVE")
        writer.execute("BEGIN EXCLUSIVE")
        writer.execute("UPDATE session_nodes SET label = 'busy' WHERE session_key = 'agent:main:main'")
        for args in (("sessions",), ("flush", MAIN[:8], "--dry-run"), ("get", f"sessions/main/{MAIN}.jsonl#L1")):
            result = oc.run(*args, MEMDECK_AGENT_DB_TIMEOUT="0.05")
            assert result.returncode == 1, (args, result.stdout, result.stderr)
            assert "locked by another process" in result.stderr and "Traceback" not in result.stderr
        status = oc.run("status", MEMDECK_AGENT_DB_TIMEOUT="0.05")
        assert status.returncode == 0 and "unavailable" in status.stdout and "locked" in status.stdout
        doctor = oc.run("doctor", "--json", MEMDECK_AGENT_DB_TIMEOUT="0.05")
        finding = next(f for f in _json(doctor)["findings"] if f["check"] == "sessions")
        assert finding["severity"] == "warn" and "locked" in finding["message"]
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_a_damaged_database_is_a_clear_error_and_a_doctor_finding(oc: Home) -> None:
    oc.db.write_bytes(b"SQLite format 3\x00" + b"\xff" * 5000)
    result = oc.run("sessions")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert str(oc.db) in result.stderr
    finding = next(f for f in _json(oc.run("doctor", "--json"))["findings"] if f["check"] == "sessions")
    assert finding["severity"] in ("warn", "error") and "cannot be read" in finding["message"]


def test_a_newer_schema_is_read_and_said_in_status_and_doctor(oc: Home) -> None:
    conn = sqlite3.connect(oc.db)
    conn.execute("PRAGMA user_version = 99")
    conn.commit()
    conn.close()
    listed = oc.run("sessions", "--json")
    assert listed.returncode == 0 and len(_json(listed)["sessions"]) == 4
    where = _json(oc.run("status", "--json"))["session_source"]
    assert where["schema_version"] == 99 and where["newer_schema"] is True
    assert any("newer" in w for w in where["warnings"])
    text = oc.run("status").stdout
    assert "schema 99" in text and "warning: OpenClaw database schema 99 is newer" in text
    finding = next(f for f in _json(oc.run("doctor", "--json"))["findings"] if f["check"] == "sessions")
    assert finding["severity"] == "warn" and any("newer" in d for d in finding["details"])


# -- the engine and MCP ----------------------------------------------------------------------
@pytest.fixture
def service(oc: Home) -> Iterator[MemoryService]:
    svc = MemoryService(oc.config())
    try:
        yield svc
    finally:
        svc.stop(timeout=2.0)


def test_memory_search_and_get_take_a_corpus(service: MemoryService) -> None:
    service.engine().sync()
    sessions = service.search({"query": "Telegram over email", "corpus": "sessions"}).payload["results"]
    assert sessions and all(hit["source"] == "sessions" for hit in sessions)
    memory = service.search({"query": "office plant fern", "corpus": "memory"}).payload["results"]
    assert memory and all(hit["source"] == "memory" for hit in memory)
    both = service.search({"query": "Telegram over email fern", "corpus": "all", "minScore": 0}).payload["results"]
    assert {hit["source"] for hit in both} == {"memory", "sessions"}
    wiki = service.search({"query": "x", "corpus": "wiki"})
    assert wiki.is_error and "not supported" in wiki.payload["error"]
    bad = service.search({"query": "x", "corpus": "everything"})
    assert bad.is_error and "corpus" in bad.payload["error"]

    hit = sessions[0]
    got = service.get({"path": hit["citation"], "corpus": "sessions"})
    assert not got.is_error and ("User:" in got.payload["text"] or "Assistant:" in got.payload["text"])
    ranged = service.get({"path": hit["path"], "from": hit["startLine"], "lines": 1})
    assert ranged.payload["text"].startswith(f"L{hit['startLine']} ")
    refused = service.get({"path": hit["path"], "corpus": "memory"})
    assert refused.is_error and "session transcript" in refused.payload["error"]
    assert service.get({"path": "MEMORY.md", "corpus": "sessions"}).is_error
    assert "not supported" in service.get({"path": "MEMORY.md", "corpus": "wiki"}).payload["error"]
    assert "unknown argument" in service.get({"path": "MEMORY.md", "corpu": "memory"}).payload["error"]


def test_session_citations_are_refused_when_sessions_are_not_a_source(oc: Home) -> None:
    from engine.errors import PathRefused

    with MemoryEngine(oc.config(sources=["memory"])) as engine, pytest.raises(PathRefused, match="not a memory source"):
        engine.get(f"sessions/main/{MAIN}.jsonl#L1-L5")


def test_a_locked_database_keeps_its_sessions_in_the_index(oc: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    with MemoryEngine(oc.config()) as engine:
        engine.sync()
        before = {rel for rel in engine.file_states() if rel.startswith("sessions/")}
        assert len(before) == 4
        writer = sqlite3.connect(oc.db, isolation_level=None)
        try:
            writer.execute("SELECT count(*) FROM session_nodes").fetchall()
            writer.execute("PRAGMA locking_mode = EXCLUSIVE")
            writer.execute("BEGIN EXCLUSIVE")
            writer.execute("UPDATE session_nodes SET label = 'busy' WHERE session_key = 'agent:main:main'")
            engine._sessions = None
            monkeypatch.setenv("MEMDECK_AGENT_DB_TIMEOUT", "0.05")
            report = engine.sync()
            assert report.files_removed == 0
            assert any("sessions unavailable" in issue for issue in report.issues)
            assert engine.search("Telegram over email", mode="keyword").results
        finally:
            writer.execute("ROLLBACK")
            writer.close()


# -- flush state -------------------------------------------------------------------------------
def _set_entry(db: Path, key: str, **fields: Any) -> None:
    """Test set-up only: change a session entry in a private copy, as OpenClaw would."""
    conn = sqlite3.connect(db)
    conn.create_function("octet_length", 1, lambda v: None if v is None else len(str(v).encode()), deterministic=True)
    try:
        (text,) = conn.execute("SELECT entry_json FROM session_nodes WHERE session_key = ?", (key,)).fetchone()
        entry = {**json.loads(text), **fields}
        conn.execute("UPDATE session_nodes SET entry_json = ? WHERE session_key = ?", (json.dumps(entry), key))
        conn.commit()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


def test_openclaws_2026_9_flush_record_counts_for_its_compaction_cycle(oc: Home) -> None:
    _set_entry(oc.db, "agent:main:main", compactionCount=2, totalTokens=190_000,
               memoryFlush={"kind": "ran", "compactionCount": 2})
    from engine.api import needs_flush

    main = next(i for i in open_session_source(oc.config()).list_sessions() if i.session_id == MAIN)
    assert main.memory_flush_recorded and main.memory_flush_at is None  # 2026.9 records no time
    assert (main.memory_flush_kind, main.memory_flush_compaction_count, main.compactions) == ("ran", 2, 2)
    assert main.openclaw_flushed_this_cycle and main.flushed and not needs_flush(main)
    listed = oc.run("sessions")
    assert "openclaw this cycle" in listed.stdout
    row = next(r for r in _json(oc.run("sessions", "--json"))["sessions"] if r["sessionId"] == MAIN)
    assert row["memoryFlush"] == {"kind": "ran", "compactionCount": 2} and row["openclawFlushedThisCycle"] is True

    _set_entry(oc.db, "agent:main:main", compactionCount=3)  # compacted again since: a new cycle to flush
    main = next(i for i in open_session_source(oc.config()).list_sessions() if i.session_id == MAIN)
    assert not main.openclaw_flushed_this_cycle and needs_flush(main)


def test_a_legacy_session_citation_reads_back_through_get(demo_workspace: Path) -> None:
    config = load_config(workspace=demo_workspace, sessions_dir=demo_workspace / "sessions",
                         overrides={"embedding": {"provider": "hash"}, "sources": ["memory", "sessions"]})
    with MemoryEngine(config) as engine:
        engine.sync()
        hit = next(h for h in engine.search("Sova backup job SD card", mode="keyword").results
                   if h.source == "sessions")
        assert hit.path == f"sessions/{COUCH}.jsonl"
        text = engine.get(hit.citation).text
        first = text.split("\n", 1)[0]
        assert first.startswith(f"L{hit.start_line} ") and "Sova backup job" in text
        raw = (demo_workspace / "sessions" / f"{COUCH}.jsonl").read_text().split("\n")
        assert all(int(line.split(" ", 1)[0][1:]) <= hit.end_line for line in text.split("\n")
                   if line.startswith("L"))
        assert len(raw) >= hit.end_line
