"""Reading OpenClaw 2026.9's agent database read-only: sessions, transcript lines, branches, errors."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.errors import MemdeckError
from engine.sessions import agentdb
from engine.sessions.agentdb import (
    KNOWN_SCHEMA_VERSION,
    READ_LIVE,
    READ_SNAPSHOT,
    AgentDb,
    AgentDbError,
    agent_db_path,
    citation_line,
    find_agent_db,
    open_agent_db,
    seq_for_line,
)
from tests.helpers import obey_file_modes

DATA = Path(__file__).parent / "data"
FIXTURE = DATA / "openclaw-agent.sqlite"
FIXTURE_SHA256 = "7a1d2b13a297dd550359bcf7d8b437685ca87b44e7dd111c9ed7cc3e7acffc67"
DEMO_SESSIONS = Path(__file__).resolve().parents[1] / "engine" / "demo_workspace" / "sessions"

MAIN = "8555a0a4-0b79-459d-939c-e17cdbbf4fe2"
RELEASE = "3f6c2a9e-8b41-4d7a-9c05-1e2f7b8a6d10"
COUCH = "9b2d4e71-5c3a-4f88-b6e0-7a1c2d3e4f51"
BRANCHY = "5e1f0c3a-8b2d-4a6e-9f10-2c3d4e5f6a7b"

EXPECTED = {
    MAIN: ("agent:main:main", 'Sender (untrusted metadata): ```json { "label":…', 83),
    RELEASE: (
        f"agent:main:recovered:{RELEASE}",
        "Morning! We cut v2.4.1 today. Can you draft the release…",
        35,
    ),
    COUCH: (
        f"agent:main:recovered:{COUCH}",
        "Hey, quick one from the couch. starting the digest helper…",
        26,
    ),
    BRANCHY: (
        f"agent:main:recovered:{BRANCHY}",
        "Remember that I prefer Telegram over email for interview…",
        17,
    ),
}

# The one row OpenClaw stored zstd-compressed: a 8,374-byte toolResult (SOUL.md read back), spot-checked
# against the same line of the public source transcript (openclaw/openclaw, .openclaw-desktop/...).
ZSTD_SEQ = 63
ZSTD_BYTES = 8374
ZSTD_SHA256 = "ed3659a158559402ee350e7f86098003b1e2584da8562c2a478fd993b7ed2388"

# Lines OpenClaw's importer re-serialised (JSON.stringify writes 0.0 as 0 and 9e-05 as 0.00009): the
# same JSON, other bytes. Every other demo line is stored byte for byte.
RESERIALISED = {RELEASE: {23, 30}, COUCH: {24}}


def _state(folder: Path) -> dict[str, tuple[str, int]]:
    """Every file in ``folder``: its sha256 and inode (a replaced sidecar changes inode)."""
    return {
        entry.name: (hashlib.sha256(Path(entry.path).read_bytes()).hexdigest(), entry.inode())
        for entry in os.scandir(folder)
    }


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """A private copy of the fixture in its own folder (reads must leave both untouched)."""
    folder = tmp_path / "agent"
    folder.mkdir()
    target = folder / agentdb.DB_FILE_NAME
    shutil.copyfile(FIXTURE, target)
    return target


def _read_everything(db: AgentDb) -> int:
    total = 0
    for session in db.list_sessions():
        total += sum(1 for _ in db.event_lines(session.session_id))
        db.active_branch(session.session_id)
    return total


@pytest.fixture
def writer(db_path: Path) -> Iterator[sqlite3.Connection]:
    """OpenClaw stand-in: a writer connection holding the database open (so -wal/-shm exist)."""
    conn = sqlite3.connect(db_path, isolation_level=None)
    conn.execute("SELECT count(*) FROM session_nodes").fetchall()
    try:
        yield conn
    finally:
        conn.close()


def test_fixture_is_the_unmodified_openclaw_database() -> None:
    assert hashlib.sha256(FIXTURE.read_bytes()).hexdigest() == FIXTURE_SHA256


def test_lists_the_four_sessions_with_titles_keys_and_counts(db_path: Path) -> None:
    db = open_agent_db(db_path)
    assert db.schema_version == KNOWN_SCHEMA_VERSION == 23
    assert db.app_version == "2026.9.6"
    assert db.warning is None and db.warnings == ()
    sessions = db.list_sessions()
    assert {s.session_id: (s.session_key, s.title, s.event_count) for s in sessions} == EXPECTED
    assert sum(s.event_count for s in sessions) == 161
    assert all(s.last_seq == s.event_count - 1 for s in sessions)
    # Most recent activity first.
    assert [s.session_id for s in sessions] == [RELEASE, COUCH, BRANCHY, MAIN]


def test_session_fields_come_from_the_entry_and_the_window(db_path: Path) -> None:
    by_id = {s.session_id: s for s in open_agent_db(db_path).list_sessions()}
    main = by_id[MAIN]
    assert (main.input_tokens, main.output_tokens, main.total_tokens, main.context_tokens) == (
        22285, 109, 24845, 200000,
    )
    assert main.total_tokens_fresh is True
    assert (main.model_provider, main.model, main.chat_type, main.channel) == ("openai", "gpt-5.4", "direct", None)
    assert main.compaction_count == 0 and main.memory_flush is None
    assert not main.archived and main.current and main.label is None
    assert main.started is not None and main.started.isoformat() == "2026-03-08T12:15:35.580000+00:00"
    assert main.last_event is not None and main.last_event.isoformat() == "2026-03-08T14:07:02.163000+00:00"
    for sid in (RELEASE, COUCH, BRANCHY):
        recovered = by_id[sid]
        assert recovered.archived and recovered.archived_at is not None
        assert recovered.total_tokens is None and recovered.model is None
    # No compactionCount in a recovered entry: the transcript's compaction entries are counted.
    assert by_id[BRANCHY].compaction_count == 2
    assert by_id[RELEASE].compaction_count == 1
    branchy_start = by_id[BRANCHY].started
    assert branchy_start is not None and branchy_start.isoformat() == "2026-04-27T09:00:00+00:00"


def test_event_lines_are_the_jsonl_lines_in_seq_order(db_path: Path) -> None:
    db = open_agent_db(db_path)
    for sid, (_key, _title, count) in EXPECTED.items():
        lines = list(db.event_lines(sid))
        assert [seq for seq, _ in lines] == list(range(count))
        header = json.loads(lines[0][1])
        assert header["type"] == "session" and header["id"] == sid
        for _seq, line in lines:
            assert isinstance(line, bytes) and b"\n" not in line
            assert isinstance(json.loads(line), dict)
    assert [seq for seq, _ in db.event_lines(MAIN, from_seq=80)] == [80, 81, 82]
    assert list(db.event_lines("no-such-session")) == []


def test_event_lines_span_several_batches(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agentdb, "BATCH_ROWS", 7)
    db = open_agent_db(db_path)
    assert [seq for seq, _ in db.event_lines(MAIN)] == list(range(83))


def test_zstd_row_decodes_byte_identical(db_path: Path) -> None:
    with sqlite3.connect(f"{db_path.as_uri()}?mode=ro&immutable=1", uri=True) as conn:
        seq, expected, navigation, plain = conn.execute(
            "SELECT seq, event_utf8_bytes, navigation_json, event_json FROM transcript_events "
            "WHERE event_zstd IS NOT NULL"
        ).fetchone()
    conn.close()
    assert (seq, expected, plain) == (ZSTD_SEQ, ZSTD_BYTES, None)
    line = dict(open_agent_db(db_path).event_lines(MAIN))[ZSTD_SEQ]
    assert len(line) == expected
    assert hashlib.sha256(line).hexdigest() == ZSTD_SHA256
    entry = json.loads(line)
    nav = json.loads(navigation)["navigation"]
    assert (entry["id"], entry["parentId"], entry["timestamp"]) == (nav["id"], nav["parentId"], nav["timestamp"])
    assert entry["message"]["role"] == nav["message"]["role"] == "toolResult"
    assert line.startswith(b'{"type":"message","id":"bdddaf9e","parentId":"0ce292b1"')
    assert line.endswith(b'ASI_ACCEL.\\n"}],"isError":false,"timestamp":1772978344848}}')
    assert citation_line(ZSTD_SEQ) == 64 and seq_for_line(64) == ZSTD_SEQ


@pytest.mark.parametrize("sid", [RELEASE, COUCH])
def test_demo_sessions_match_memdecks_demo_transcripts(db_path: Path, sid: str) -> None:
    source = (DEMO_SESSIONS / f"{sid}.jsonl").read_bytes().split(b"\n")
    assert source[-1] == b""
    source = source[:-1]
    lines = dict(open_agent_db(db_path).event_lines(sid))
    assert len(lines) == len(source)
    differing = {seq for seq, line in lines.items() if line != source[seq]}
    assert differing == RESERIALISED[sid]
    for seq, line in lines.items():
        # Citation line seq + 1 names the same entry as line seq + 1 of the legacy file.
        assert json.loads(line) == json.loads(source[citation_line(seq) - 1])


def test_active_branch_follows_the_current_branch(db_path: Path) -> None:
    db = open_agent_db(db_path)
    # 5e1f branches at entry 4: 5-10 are the abandoned branch, 11 its branch_summary.
    assert db.active_branch(BRANCHY) == [1, 2, 3, 4, 11, 12, 13, 14, 15, 16]
    assert db.active_branch(MAIN) == list(range(1, 83))
    assert db.active_branch(RELEASE) == list(range(1, 35))
    assert db.active_branch("no-such-session") == []


def test_active_branch_without_openclaws_index_walks_parent_links(db_path: Path) -> None:
    # Our own private copy: drop the branch index, then the entry identities too.
    with sqlite3.connect(db_path) as conn:
        conn.execute("DELETE FROM session_transcript_active_events")
    conn.close()
    db = open_agent_db(db_path)
    assert db.active_branch(BRANCHY) == [1, 2, 3, 4, 11, 12, 13, 14, 15, 16]
    with sqlite3.connect(db_path) as conn:
        conn.execute("DELETE FROM transcript_event_identities")
    conn.close()
    assert open_agent_db(db_path).active_branch(BRANCHY) == [1, 2, 3, 4, 11, 12, 13, 14, 15, 16]
    assert open_agent_db(db_path).active_branch(MAIN) == list(range(1, 83))


def test_reads_change_no_byte_and_create_no_sidecar(db_path: Path) -> None:
    before = _state(db_path.parent)
    assert set(before) == {agentdb.DB_FILE_NAME}
    db = open_agent_db(db_path)
    assert _state(db_path.parent) == before
    assert _read_everything(db) == 161
    assert db.read_mode == READ_SNAPSHOT
    assert _state(db_path.parent) == before


def test_read_only_folder_is_read_without_writing(db_path: Path) -> None:
    folder = db_path.parent
    before = _state(folder)
    db_path.chmod(stat.S_IRUSR | stat.S_IRGRP)
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        db = open_agent_db(db_path)
        assert _read_everything(db) == 161
        assert db.read_mode == READ_SNAPSHOT and db.warning is None
    finally:
        folder.chmod(stat.S_IRWXU)
        db_path.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert _state(folder) == before


def test_live_database_is_read_through_its_wal(db_path: Path, writer: sqlite3.Connection) -> None:
    writer.execute("UPDATE session_nodes SET label = 'Hakua' WHERE session_key = 'agent:main:main'")
    before = _state(db_path.parent)
    assert set(before) == {agentdb.DB_FILE_NAME, f"{agentdb.DB_FILE_NAME}-wal", f"{agentdb.DB_FILE_NAME}-shm"}
    db = open_agent_db(db_path)
    titles = {s.session_id: s.title for s in db.list_sessions()}
    assert db.read_mode == READ_LIVE and db.warning is None
    assert titles[MAIN] == "Hakua"  # only in the WAL: the main file still has no label
    assert _read_everything(db) == 161
    after = _state(db_path.parent)
    # Same files, same inodes; the main file is untouched (only the writer changes the sidecars).
    assert set(after) == set(before)
    assert {name: inode for name, (_, inode) in after.items()} == {n: i for n, (_, i) in before.items()}
    assert after[agentdb.DB_FILE_NAME] == before[agentdb.DB_FILE_NAME]


def test_refused_live_open_falls_back_to_a_snapshot_and_says_so(
    db_path: Path, writer: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer.execute("UPDATE session_nodes SET label = 'Hakua' WHERE session_key = 'agent:main:main'")
    real_connect = agentdb._connect

    def refuse_live(uri: str, timeout: float) -> sqlite3.Connection:
        if "immutable=1" not in uri:  # what a folder without write access does to mode=ro
            exc = sqlite3.OperationalError("attempt to write a readonly database")
            exc.sqlite_errorcode = 8  # SQLITE_READONLY
            raise exc
        return real_connect(uri, timeout)

    monkeypatch.setattr(agentdb, "_connect", refuse_live)
    before = _state(db_path.parent)
    db = open_agent_db(db_path)
    assert db.read_mode == READ_SNAPSHOT
    assert db.warning is not None and "snapshot" in db.warning and "checkpointed" in db.warning
    assert {s.session_id: s.title for s in db.list_sessions()}[MAIN] != "Hakua"  # the stale view warned about
    assert _read_everything(db) == 161
    assert _state(db_path.parent) == before


_READ_ALL = """
import sys
from pathlib import Path
from engine.sessions.agentdb import open_agent_db
db = open_agent_db(Path(sys.argv[1]))
print(sum(1 for s in db.list_sessions() for _ in db.event_lines(s.session_id)))
"""


def test_unwritable_folder_with_sidecars_is_still_read(db_path: Path) -> None:
    """Real modes, also as root: the read runs in a child that file modes bind (see ``obey_file_modes``)."""
    # Sidecars left behind by an earlier reader, then the folder and files made read-only.
    conn = sqlite3.connect(f"{db_path.as_uri()}?mode=ro", uri=True)
    conn.execute("SELECT 1 FROM sqlite_master").fetchall()
    conn.close()
    folder = db_path.parent
    for entry in folder.iterdir():
        entry.chmod(stat.S_IRUSR)
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    before = _state(folder)
    try:
        out = subprocess.run([sys.executable, "-c", _READ_ALL, str(db_path)], capture_output=True, text=True,
                             cwd=str(Path(__file__).resolve().parents[1]), preexec_fn=obey_file_modes())
        assert out.returncode == 0, out.stderr
        assert int(out.stdout) == 161
        assert _state(folder) == before
    finally:
        folder.chmod(stat.S_IRWXU)
        for entry in folder.iterdir():
            entry.chmod(stat.S_IRUSR | stat.S_IWUSR)


def _lock_exclusively(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA locking_mode = EXCLUSIVE")
    conn.execute("BEGIN EXCLUSIVE")
    conn.execute("UPDATE session_nodes SET label = 'busy' WHERE session_key = 'agent:main:main'")


def test_locked_database_fails_clearly_within_the_busy_timeout(db_path: Path, writer: sqlite3.Connection) -> None:
    db = open_agent_db(db_path, busy_timeout=0.05)  # opened while unlocked
    _lock_exclusively(writer)
    started = time.monotonic()
    with pytest.raises(AgentDbError, match=r"locked by another process for more than 0\.05 s") as caught:
        db.list_sessions()
    assert time.monotonic() - started < 2.0
    assert str(db_path) in str(caught.value)
    with pytest.raises(AgentDbError, match="locked"):
        list(db.event_lines(MAIN))
    with pytest.raises(AgentDbError, match="locked"):
        open_agent_db(db_path, busy_timeout=0.05)
    writer.execute("ROLLBACK")


def test_garbage_and_non_databases_raise_agent_db_error(tmp_path: Path) -> None:
    cases = {
        "garbage.sqlite": b"this is not a database\n" * 100,
        "empty.sqlite": b"",
        "bad-header.sqlite": b"SQLite format 3\x00" + b"\xff" * 5000,
        "truncated.sqlite": FIXTURE.read_bytes()[:200_000],
    }
    messages = {}
    for name, data in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(AgentDbError) as caught:
            db = open_agent_db(path)
            _read_everything(db)
        assert isinstance(caught.value, MemdeckError)
        assert str(path) in str(caught.value)
        messages[name] = str(caught.value)
    assert "not an SQLite database" in messages["garbage.sqlite"]
    assert "empty" in messages["empty.sqlite"]
    assert "not an SQLite database" in messages["bad-header.sqlite"]
    assert "damaged" in messages["truncated.sqlite"]


def test_other_sqlite_databases_and_missing_files_raise_agent_db_error(tmp_path: Path) -> None:
    other = tmp_path / "notes.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE notes (body TEXT)")
    conn.close()
    with pytest.raises(AgentDbError, match="not an OpenClaw agent database"):
        open_agent_db(other)
    with pytest.raises(AgentDbError, match="not found"):
        open_agent_db(tmp_path / "missing.sqlite")
    with pytest.raises(AgentDbError, match="not a file"):
        open_agent_db(tmp_path)


def test_newer_schema_is_read_with_a_warning(db_path: Path) -> None:
    with sqlite3.connect(db_path) as conn:
        conn.execute(f"PRAGMA user_version = {KNOWN_SCHEMA_VERSION + 1}")
    conn.close()
    db = open_agent_db(db_path)
    assert db.schema_version == 24
    assert db.warning is not None and "24" in db.warning and "newer" in db.warning
    assert {s.session_id for s in db.list_sessions()} == set(EXPECTED)
    assert _read_everything(db) == 161


def test_a_much_changed_schema_is_read_as_far_as_it_goes(tmp_path: Path) -> None:
    path = tmp_path / agentdb.DB_FILE_NAME
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE transcript_events (session_id TEXT, seq INTEGER, event_json TEXT, extra BLOB)")
        conn.executemany(
            "INSERT INTO transcript_events (session_id, seq, event_json) VALUES (?, ?, ?)",
            [
                ("s1", 0, '{"type":"session","version":3,"id":"s1"}'),
                ("s1", 1, '{"type":"message","id":"a1","parentId":null,"message":{"role":"user","content":"hi"}}'),
            ],
        )
        conn.execute("PRAGMA user_version = 40")
    conn.close()
    db = open_agent_db(path)
    assert db.warning is not None and "40" in db.warning and "session_windows" in db.warning
    (session,) = db.list_sessions()
    assert (session.session_id, session.event_count, session.title, session.session_key) == ("s1", 2, None, None)
    assert [seq for seq, _ in db.event_lines("s1")] == [0, 1]
    assert db.active_branch("s1") == [1]


def test_undecodable_compressed_row(db_path: Path) -> None:
    with sqlite3.connect(db_path) as conn:
        conn.execute("UPDATE transcript_events SET event_zstd = x'28b52ffd00000000' WHERE seq = ? AND session_id = ?",
                     (ZSTD_SEQ, MAIN))
    conn.close()
    db = open_agent_db(db_path)
    with pytest.raises(AgentDbError, match=f"session {MAIN} line 64"):
        list(db.event_lines(MAIN))
    skipped: list[tuple[int, str]] = []
    seqs = [seq for seq, _ in db.event_lines(MAIN, skipped=skipped)]
    assert seqs == [seq for seq in range(83) if seq != ZSTD_SEQ]
    assert [seq for seq, _ in skipped] == [ZSTD_SEQ]


def test_a_decoded_size_that_disagrees_is_refused(db_path: Path) -> None:
    with sqlite3.connect(db_path) as conn:
        conn.execute("UPDATE transcript_events SET event_utf8_bytes = 9000 WHERE event_zstd IS NOT NULL")
    conn.close()
    skipped: list[tuple[int, str]] = []
    list(open_agent_db(db_path).event_lines(MAIN, skipped=skipped))
    assert skipped == [(ZSTD_SEQ, "compressed transcript entry decodes to 8,374 bytes, not the 9,000 recorded")]


def test_find_agent_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = tmp_path / "state"
    expected = state / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    assert agent_db_path(state) == expected
    assert find_agent_db(state) is None
    expected.parent.mkdir(parents=True)
    shutil.copyfile(FIXTURE, expected)
    assert find_agent_db(state) == expected
    assert find_agent_db(state, "work") is None
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(state))
    assert find_agent_db(None) == expected
    monkeypatch.delenv("OPENCLAW_STATE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert agent_db_path(None, "work") == tmp_path / "home" / ".openclaw" / "agents" / "work" / "agent" / (
        "openclaw-agent.sqlite"
    )
    for bad in ("", "..", "a/b", "a\\b"):
        with pytest.raises(AgentDbError, match="invalid OpenClaw agent id"):
            find_agent_db(state, bad)
