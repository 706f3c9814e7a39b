"""``memdeck doctor``: each injected fault is found, ``--fix`` repairs it, and the doctor itself never crashes."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engine.api import MemoryEngine
from engine.config import Config
from engine.health.checks import DoctorReport, Finding, diagnose, scan_secrets
from engine.health.doctor import format_report, run_doctor
from engine.health.repairs import repair
from engine.index.store import connect_raw
from memdeck.cli import cli
from tests.helpers import hash_config
from tests.test_rel_crash import REPO, assert_consistent

AWS_KEY = "AKIA" + "Z7QF3XK2LM4NPQ8R"
OPENAI_KEY = "sk-proj-" + "Q9x7Lm2Vb8Nc4Kd1Rf6Tg3Hs"


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Preferences\n\n- Prefers tabs over spaces.\n- Violin lessons on Thursdays.\n")
    for i in range(12):
        body = "\n".join(f"- heron lantern copper {i} {j}" for j in range(30))
        (ws / "memory" / f"2026-03-{i + 1:02d}.md").write_text(f"# Day {i}\n\n{body}\n")
    return ws


@pytest.fixture
def cfg(tmp_path: Path) -> Config:
    config = hash_config(_workspace(tmp_path))
    with MemoryEngine(config) as eng:
        eng.sync()
    return config


def _finding(report: DoctorReport, check: str) -> Finding:
    found = [f for f in report.findings if f.check == check]
    assert found, f"no {check!r} finding in {[f.check for f in report.findings]}"
    return found[0]


def _sql(cfg: Config, *statements: str) -> None:
    conn, _ = connect_raw(cfg.index_path, query_only=False)
    try:
        for statement in statements:
            conn.execute(statement)
    finally:
        conn.close()


def _markdown(ws: Path) -> dict[str, str]:
    return {p.relative_to(ws).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(ws.rglob("*")) if p.is_file()}


def test_a_healthy_index_has_nothing_to_report(cfg: Config) -> None:
    report = diagnose(cfg)
    assert report.ok, format_report(report)
    checks = {f.check for f in report.findings}
    assert checks >= {"sqlite-vec", "model", "index", "fts", "orphans", "vectors", "files", "identity", "stale",
                      "temp-files", "lock", "permissions", "secrets"}
    assert json.loads(json.dumps(report.to_dict()))["ok"] is True


FIRST_CHUNKS = "(SELECT id FROM chunks ORDER BY id LIMIT 3)"


def _stale_file(cfg: Config) -> None:
    path = cfg.workspace / "memory" / "2026-03-01.md"
    path.write_text(path.read_text() + "- added while nobody was indexing\n")
    (cfg.workspace / "memory" / "2026-03-02.md").unlink()
    (cfg.workspace / "memory" / "new.md").write_text("- new file\n")


def _temp_leftover(cfg: Config) -> None:
    (cfg.index_path.with_name(cfg.index_path.name + ".rebuild-999999-1")).write_bytes(b"\0" * 8192)


def _workspace_temp(cfg: Config) -> None:
    temp = cfg.workspace / "memory" / ".2026-03-01.md.k2j4h5.tmp"
    temp.write_text("# Day 0\n\n- the text being saved when it crashed\n")
    old = time.time() - 3600
    os.utime(temp, (old, old))


def _garbage(cfg: Config) -> None:
    cfg.index_path.write_bytes(b"not a database at all " * 300)
    for side in ("-wal", "-shm"):
        Path(str(cfg.index_path) + side).unlink(missing_ok=True)


def _loose_permissions(cfg: Config) -> None:
    cfg.index_path.chmod(0o644)
    cfg.home.chmod(0o755)


FAULTS: dict[str, tuple[Callable[[Config], None], str, str]] = {
    "chunks without FTS rows": (lambda c: _sql(c, f"DELETE FROM chunks_fts WHERE rowid IN {FIRST_CHUNKS}"),
                                "fts", "error"),
    "FTS row without a chunk": (lambda c: _sql(c, "INSERT INTO chunks_fts(rowid, text) VALUES (999999, 'ghost')"),
                                "orphans", "error"),
    "vectors deleted": (lambda c: _sql(c, "DELETE FROM chunks_vec WHERE rowid IN"
                                          f" (SELECT id FROM windows WHERE chunk_id IN {FIRST_CHUNKS})"),
                        "vectors", "error"),
    "windows deleted": (lambda c: _sql(c, f"DELETE FROM windows WHERE chunk_id IN {FIRST_CHUNKS}"),
                        "vectors", "error"),
    "chunk deleted alone": (lambda c: _sql(c, "DELETE FROM chunks WHERE id = (SELECT min(id) FROM chunks)"),
                            "orphans", "error"),
    "file row deleted": (lambda c: _sql(c, "DELETE FROM files WHERE path = 'MEMORY.md'"), "orphans", "error"),
    "file row count wrong": (lambda c: _sql(c, "UPDATE files SET chunks = chunks + 5 WHERE path = 'MEMORY.md'"),
                             "files", "error"),
    "identity of another model": (
        lambda c: _sql(c, "UPDATE meta SET value = json_set(value, '$.model', 'other-model') WHERE key = 'identity'"),
        "identity", "warn"),
    "files changed on disk": (_stale_file, "stale", "info"),
    "temp file of a crashed rebuild": (_temp_leftover, "temp-files", "warn"),
    "unfinished save in the workspace": (_workspace_temp, "workspace-temp", "warn"),
    "garbage index": (_garbage, "index", "error"),
    "index from a newer memdeck": (lambda c: _sql(c, "UPDATE meta SET value = '42' WHERE key = 'schema_version'"),
                                   "index", "error"),
    "loose permissions": (_loose_permissions, "permissions", "warn"),
}


@pytest.mark.parametrize("fault", list(FAULTS), ids=list(FAULTS))
def test_fault_is_found_and_fixed(cfg: Config, fault: str) -> None:
    inject, check, severity = FAULTS[fault]
    inject(cfg)
    markdown = _markdown(cfg.workspace)
    found = _finding(diagnose(cfg), check)
    assert found.severity == severity, found
    assert found.fix is not None
    fixed = repair(cfg, MemoryEngine)
    assert fixed.fixed and fixed.actions
    assert fixed.ok, format_report(fixed)
    assert _finding(fixed, check).severity == "ok"
    assert_consistent(cfg.index_path)
    with MemoryEngine(cfg) as eng:
        st = eng.status()
        assert (st.dirty_files, st.pending_embeddings, st.identity_status) == (0, 0, "valid")
        assert eng.search("violin thursdays").results[0].path == "MEMORY.md"
    if check == "workspace-temp":
        assert not list(cfg.workspace.rglob("*.tmp")), "the unfinished save left the workspace"
        kept = list((cfg.home / "recovered").rglob("*.tmp"))
        assert len(kept) == 1 and "being saved" in kept[0].read_text(), "and nothing in it was lost"
    else:
        assert _markdown(cfg.workspace) == markdown, "the doctor never changes memory files"


def test_fixed_vectors_are_embedded_again_not_just_deleted(cfg: Config) -> None:
    _sql(cfg, f"DELETE FROM chunks_vec WHERE rowid IN (SELECT id FROM windows WHERE chunk_id IN {FIRST_CHUNKS})")
    report = repair(cfg, MemoryEngine)
    assert any("queued to embed again" in a for a in report.actions), report.actions
    counts = assert_consistent(cfg.index_path)
    assert counts["embedded"] == counts["chunks"]


def test_diagnose_changes_nothing(cfg: Config) -> None:
    _garbage(cfg)
    _temp_leftover(cfg)
    before = {p.name: p.read_bytes() for p in cfg.index_path.parent.iterdir()}
    report = diagnose(cfg)
    assert _finding(report, "index").severity == "error" and not report.ok
    assert {p.name: p.read_bytes() for p in cfg.index_path.parent.iterdir()} == before


@pytest.mark.parametrize("state", ["no index yet", "empty file", "index folder missing", "workspace missing"])
def test_doctor_never_crashes(tmp_path: Path, state: str) -> None:
    config = hash_config(_workspace(tmp_path))
    if state == "empty file":
        config.index_path.parent.mkdir(parents=True)
        config.index_path.write_bytes(b"")
    elif state == "workspace missing":
        config = hash_config(tmp_path / "nowhere")
    report = diagnose(config)
    assert report.findings
    format_report(report)
    fixed = repair(config, MemoryEngine)
    assert _finding(fixed, "index").severity == "ok", format_report(fixed)


def test_secrets_are_reported_masked_and_never_touched(cfg: Config) -> None:
    note = cfg.workspace / "memory" / "2026-03-05.md"
    note.write_text(note.read_text() + f"- aws key {AWS_KEY}\n- OPENAI_API_KEY={OPENAI_KEY}\n")
    original = note.read_bytes()
    report = repair(cfg, MemoryEngine)
    secrets = _finding(report, "secrets")
    assert secrets.severity == "warn" and secrets.count == 2 and not report.ok
    assert {(s.path, s.kind) for s in report.secrets} == {("memory/2026-03-05.md", "aws"),
                                                          ("memory/2026-03-05.md", "env")}
    text = json.dumps(report.to_dict()) + format_report(report)
    assert AWS_KEY not in text and OPENAI_KEY not in text
    assert "memory/2026-03-05.md:" in format_report(report)
    assert note.read_bytes() == original


def test_scan_secrets_for_the_tui(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("- nothing here\n")
    (ws / "memory" / "keys.md").write_text(
        "# Keys\n\n- github: ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8" + "\n"
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\n-----END OPENSSH PRIVATE KEY-----\n"
        "- db: postgres://app:Sup3rS3cretPw@db.internal:5432/app\n")
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    (sessions / "s.jsonl").write_text(json.dumps({"type": "message", "text": AWS_KEY}) + "\n")
    found = scan_secrets(hash_config(ws, sources=["memory", "sessions"], sessions_dir=str(sessions)))
    assert [(f.path, f.line, f.kind) for f in found] == [
        ("memory/keys.md", 3, "github"), ("memory/keys.md", 4, "pem"), ("memory/keys.md", 7, "url-password")]
    for f in found:
        assert "a1B2c3D4e5F6g7H8i9J0" not in f.preview and "Sup3rS3cretPw" not in f.preview
        assert "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU" not in f.preview


def test_lock_holder_is_reported(cfg: Config) -> None:
    # The holder says "locked" once it has the lock, then holds it until its stdin closes: no clock involved.
    code = ("import sys\nfrom pathlib import Path\nfrom engine.index.indexer import writer_lock\n"
            f"with writer_lock(Path({str(cfg.index_path)!r})):\n    print('locked', flush=True)\n    sys.stdin.read()\n")
    holder = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        lock = _finding(diagnose(cfg), "lock")
        assert lock.severity == "info" and f"pid {holder.pid}" in lock.message
    finally:
        holder.kill()
        holder.wait()
        for pipe in (holder.stdin, holder.stdout):
            if pipe:
                pipe.close()
    assert _finding(diagnose(cfg), "lock").severity == "ok"


def test_sqlite_vec_and_model_availability(cfg: Config, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sqlite_vec", None)
    report = diagnose(cfg)
    vec = _finding(report, "sqlite-vec")
    assert vec.severity == "warn" and "not installed" in vec.message and "keyword" in vec.message
    assert _finding(report, "vectors").severity == "info"
    from engine.config import load_config

    keyword_only = load_config(workspace=cfg.workspace, overrides={"embedding": {"provider": "none"}})
    assert _finding(diagnose(keyword_only), "model").severity == "ok"


def _run(cfg: Config, *args: str) -> Any:
    env = {"MEMDECK_EMBEDDING_PROVIDER": "hash"}
    return CliRunner(env=env).invoke(cli, ["--workspace", str(cfg.workspace), "doctor", *args])


def test_cli_doctor_exit_codes_and_json(cfg: Config) -> None:
    ok = _run(cfg)
    assert ok.exit_code == 0 and "No problems found." in ok.stdout
    _sql(cfg, f"DELETE FROM chunks_fts WHERE rowid IN {FIRST_CHUNKS}")
    _temp_leftover(cfg)
    bad = _run(cfg)
    assert bad.exit_code == 1
    assert "ERROR fts: 3 chunks without a keyword (FTS) row" in bad.stdout and "--fix" in bad.stdout
    payload = json.loads(_run(cfg, "--json").stdout)
    assert payload["ok"] is False and {f["check"] for f in payload["findings"] if f["severity"] != "ok"} >= {
        "fts", "temp-files"}
    fixed = _run(cfg, "--fix", "--json")
    assert fixed.exit_code == 0, fixed.stdout
    body = json.loads(fixed.stdout)
    assert body["ok"] is True and body["fixed"] is True and "FTS rows re-added: 3" in body["actions"]
    assert _run(cfg).exit_code == 0


def test_run_doctor_reports_progress(cfg: Config) -> None:
    _temp_leftover(cfg)
    lines: list[str] = []
    report = run_doctor(cfg, fix=True, progress=lines.append, open_engine=MemoryEngine)
    assert report.ok and lines and any("temp files" in line for line in lines)
