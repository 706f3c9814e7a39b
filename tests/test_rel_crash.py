"""Crash safety: ``memdeck index`` killed with SIGKILL at random moments never corrupts the index or the Markdown."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.config import load_config
from tests.helpers import stream_lines

REPO = Path(__file__).resolve().parents[1]
WORDS = ["postgres", "violin", "heron", "quokka", "deploy", "rollback", "pool", "cache", "kernel", "agent",
         "prefers", "tabs", "spaces", "budget", "invoice", "garden", "lantern", "harbor", "copper", "meadow"]
KILLS = 12  # kills that land mid-sync (each kind of run and phase comes up; the seed is fixed)


def _note(rng: random.Random, i: int, lines: int = 60) -> str:
    out = [f"# Note {i}", ""]
    for j in range(lines):
        out.append("- " + " ".join(rng.choice(WORDS) for _ in range(10)) + f" n{i}x{j}")
        if j % 12 == 11:
            out += ["", f"## Part {j}", ""]
    return "\n".join(out) + "\n"


def _fingerprint(ws: Path) -> dict[str, str]:
    return {p.relative_to(ws).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(ws.rglob("*")) if p.is_file()}


def _connect(index: Path) -> Any:
    import sqlean
    import sqlite_vec

    conn = sqlean.connect(str(index), isolation_level=None)
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    return conn


def assert_consistent(index: Path) -> dict[str, int]:
    """Independent SQL checks: FTS, windows, vectors and files all agree with chunks."""
    conn = _connect(index)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables:
            return {"chunks": 0, "embedded": 0, "files": 0}  # killed before the schema's transaction committed
        assert {"meta", "files", "chunks", "chunks_fts", "windows", "embedding_cache"} <= tables
        conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES('integrity-check')")

        def ids(sql: str) -> set[int]:
            return {int(r[0]) for r in conn.execute(sql)}

        chunks = ids("SELECT id FROM chunks")
        assert ids("SELECT rowid FROM chunks_fts") == chunks, "every chunk has exactly its FTS row"
        windows = [(int(a), int(b)) for a, b in conn.execute("SELECT id, chunk_id FROM windows")]
        with_windows = {c for _, c in windows}
        embedded = ids("SELECT id FROM chunks WHERE embedded = 1")
        assert with_windows <= chunks, "no window without its chunk"
        assert embedded <= with_windows, "every embedded chunk has its windows"
        assert with_windows <= embedded, "windows only for embedded chunks"
        has_vec = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'chunks_vec'").fetchone() is not None
        if has_vec:
            assert ids("SELECT rowid FROM chunks_vec") == {w for w, _ in windows}, "one vector per window"
        else:
            assert not windows
        files = {str(p): int(n) for p, n in conn.execute("SELECT path, chunks FROM files")}
        per_path: dict[str, int] = {}
        for (path,) in conn.execute("SELECT path FROM chunks"):
            per_path[path] = per_path.get(path, 0) + 1
        assert set(per_path) <= set(files), "no chunk of a file the index does not list"
        assert all(per_path.get(p, 0) == n for p, n in files.items()), "files.chunks matches the chunks"
        return {"chunks": len(chunks), "embedded": len(embedded), "files": len(files)}
    finally:
        conn.close()


def _mutate(rng: random.Random, ws: Path, round_no: int) -> None:
    notes = sorted((ws / "memory").glob("*.md"))
    for path in rng.sample(notes, k=min(len(notes), rng.randint(1, 6))):
        with path.open("a", encoding="utf-8") as fh:
            fh.write(f"- round {round_no} " + " ".join(rng.choice(WORDS) for _ in range(8)) + "\n")
    if rng.random() < 0.3:
        (ws / "memory" / f"new-{round_no}.md").write_text(_note(rng, 1000 + round_no, 20))
    if rng.random() < 0.2 and len(notes) > 10:
        rng.choice(notes).unlink()


# `memdeck index` as the CLI runs it, reporting its own progress on stdout: one line per file written and per
# embedding slice, then ``synced`` once the sync returned. The kill moments follow the work, not the clock.
CHILD = """
import sys

import engine.api
from memdeck.cli import main


def emit(line):
    sys.stdout.write(line + "\\n")
    sys.stdout.flush()


real_sync = engine.api.MemoryEngine.sync


def sync(self, *args, **kwargs):
    kwargs["progress"] = lambda p: emit(f"progress {p.phase} {p.done} {p.total}")
    report = real_sync(self, *args, **kwargs)
    emit("synced")
    return report


engine.api.MemoryEngine.sync = sync
sys.argv[0] = "memdeck"
main()
"""
WAIT_CAP = 120.0  # seconds without a line from the child: it hangs, and the test fails instead of waiting on


def _lines(proc: subprocess.Popen[bytes]) -> Iterator[str]:
    assert proc.stdout is not None
    return stream_lines(proc.stdout.fileno(), WAIT_CAP)


def _kill_point(rng: random.Random) -> tuple[str, float]:
    """Where to kill: after a random fraction of the files phase, of the embedding phase, or at its very end."""
    return rng.choice(["files", "files", "embed", "embed", "end"]), rng.random()


def _is_kill_point(line: str, target: tuple[str, float]) -> bool:
    words = line.split()
    if len(words) != 4 or words[0] != "progress":
        return False
    phase, done, total = words[1], int(words[2]), int(words[3])
    want, fraction = target
    if want == "end":
        return phase == "embed" and done == total
    return phase == want and done >= fraction * total


def test_sigkill_during_index_never_corrupts(tmp_path: Path) -> None:
    rng = random.Random(20261130)
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n\n- Prefers tabs over spaces.\n")
    for i in range(90):
        (ws / "memory" / f"2026-01-{i:03d}.md").write_text(_note(rng, i))
    home = tmp_path / "home"
    small = tmp_path / "small.toml"
    small.write_text("[chunking]\ntokens = 300\noverlap = 40\n")
    default = tmp_path / "default.toml"
    default.write_text("")
    env = {**os.environ, "MEMDECK_HOME": str(home), "MEMDECK_EMBEDDING_PROVIDER": "hash"}
    index = load_config(workspace=ws, home=home).index_path
    config = default
    outcomes: list[str] = []
    kills = 0  # SIGKILLs that met a live process whose sync had not returned yet
    round_no = 0
    while kills < KILLS and round_no < 5 * KILLS:
        round_no += 1
        _mutate(rng, ws, round_no)
        expected = _fingerprint(ws)
        kind = rng.choice(["index", "index", "force", "switch"])
        if kind == "switch":
            config = small if config == default else default
        args = [sys.executable, "-c", CHILD, "--config", str(config), "--workspace", str(ws), "index"]
        if kind == "force":
            args.append("--force")
        target = _kill_point(rng)
        with (tmp_path / "stderr.txt").open("w+b") as err:
            proc = subprocess.Popen(args, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=err)
            try:
                seen: list[str] = []  # all it said, up to the kill and until the kill landed
                at = "the end"
                for line in _lines(proc):
                    seen.append(line)
                    if at == "the end" and _is_kill_point(line, target):
                        proc.kill()  # the random moment of the kill: right after this much of the work
                        at = line.removeprefix("progress ")
                proc.wait()
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
                if proc.stdout:
                    proc.stdout.close()
            err.seek(0)
            stderr = err.read().decode(errors="replace")
        if proc.returncode == -signal.SIGKILL and "synced" not in seen:
            kills += 1
            temps = len(list(index.parent.glob("*.rebuild-*"))) if index.parent.exists() else 0
            outcomes.append(f"{kind}: killed mid-index at {at}" + (f", {temps} temp files left" if temps else ""))
        else:
            assert proc.returncode in (0, -signal.SIGKILL), f"{kind} exited {proc.returncode}: {stderr}"
            outcomes.append(f"{kind}: finished before the kill landed (kill point {target[0]} {target[1]:.2f})")
        assert _fingerprint(ws) == expected, "the Markdown is untouched"
        if index.exists():
            assert_consistent(index)
    assert kills >= KILLS, outcomes

    # The next index completes, cleans up what the crashes left, and the index matches the files.
    done = subprocess.run([sys.executable, "-m", "memdeck.cli", "--config", str(config), "--workspace", str(ws),
                           "index", "--json"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not list(index.parent.glob("*.rebuild-*")), "temp files of killed rebuilds are gone"
    assert not list(index.parent.glob("*.corrupt-*")), "a crash never made the index look corrupt"
    counts = assert_consistent(index)
    on_disk = sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*.md"))
    assert counts["files"] == len(on_disk) and counts["embedded"] == counts["chunks"]
    status = subprocess.run([sys.executable, "-m", "memdeck.cli", "--config", str(config), "--workspace", str(ws),
                             "status", "--json"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    st = json.loads(status.stdout)
    assert (st["dirty_files"], st["pending_embeddings"], st["recovered"]) == (0, 0, [])
    assert st["identity_status"] == "valid"
    print("\n".join(outcomes))


@pytest.mark.parametrize("leftover", ["{name}.rebuild-999999-1", "{name}.rebuild-999999-1-wal",
                                      "{name}.rebuild-999999-1-shm",
                                      "{name}.rebuild-{pid}-1"])  # a live pid reused by another program
def test_temp_files_of_a_dead_rebuild_are_cleaned_at_start(tmp_path: Path, leftover: str) -> None:
    from engine.api import MemoryEngine
    from tests.helpers import hash_config

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("- one\n")
    cfg = hash_config(ws)
    cfg.index_path.parent.mkdir(parents=True, exist_ok=True)
    junk = cfg.index_path.with_name(leftover.format(name=cfg.index_path.name, pid=os.getpid()))
    junk.write_bytes(b"\0" * 4096)
    other = cfg.index_path.with_name("other-workspace.sqlite")
    other.write_bytes(b"")
    with MemoryEngine(cfg):
        assert not junk.exists()
    assert other.exists(), "only this index's temp files are touched"


def test_temp_file_of_a_rebuild_in_progress_is_kept(tmp_path: Path) -> None:
    from engine.api import MemoryEngine
    from tests.helpers import hash_config

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    cfg = hash_config(ws)
    cfg.index_path.parent.mkdir(parents=True, exist_ok=True)
    # The holder says "locked" once it has the lock, then holds it until its stdin closes: no clock involved.
    code = ("import sys\nfrom pathlib import Path\nfrom engine.index.indexer import writer_lock\n"
            f"with writer_lock(Path({str(cfg.index_path)!r})):\n    print('locked', flush=True)\n"
            "    sys.stdin.read()\n")
    holder = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        busy = cfg.index_path.with_name(f"{cfg.index_path.name}.rebuild-{holder.pid}-1")
        busy.write_bytes(b"")
        with MemoryEngine(cfg):
            assert busy.exists(), "another process is rebuilding into it right now"
        assert holder.stdin is not None
        holder.stdin.close()  # the holder leaves its lock and exits
        assert holder.wait(timeout=60) == 0  # a cap only: a holder that never exits fails here
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
        for pipe in (holder.stdin, holder.stdout):
            if pipe:
                pipe.close()
    with MemoryEngine(cfg):
        assert not busy.exists()
