"""Shared helpers for the speed benchmarks: workspaces and indexes, embedders, percentiles, load, RSS, tables."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
BENCH_DIR = Path(__file__).resolve().parent
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

DEFAULT_ROOT = Path(os.environ.get("MEMDECK_BENCH_ROOT", "/tmp/memdeck-bench"))
EMBEDDERS = ("bench", "local", "minilm", "hash")


# -- the machine -------------------------------------------------------------------------------
def load_avg() -> float:
    """The 1-minute load average (the machine is shared: every timing records it)."""
    return round(os.getloadavg()[0], 2)


def wait_for_quiet(limit: float = 1.5, max_wait: float = 0.0) -> float:
    """Wait up to ``max_wait`` seconds for the 1-minute load to drop below ``limit``; returns the load then."""
    deadline = time.monotonic() + max_wait
    while load_avg() >= limit and time.monotonic() < deadline:
        time.sleep(5)
    return load_avg()


def machine_info() -> dict[str, Any]:
    """CPU, cores, memory, OS, Python and SQLite versions."""
    import sqlite3

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gb = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem_gb = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    commit = None
    try:
        commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, timeout=5).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "mem_gb": mem_gb, "os": platform.platform(),
            "python": platform.python_version(), "sqlite": sqlite3.sqlite_version, "commit": commit}


def now_iso() -> str:
    """UTC now, ISO 8601 to the second."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def rss_mb() -> float:
    """This process's current resident set size in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def peak_rss_mb() -> float:
    """This process's peak resident set size in MB."""
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


# -- numbers and output ------------------------------------------------------------------------
def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0–100), linear interpolation between closest ranks."""
    if not values:
        return float("nan")
    s = sorted(values)
    pos = (len(s) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def latency_ms(seconds: Sequence[float]) -> dict[str, float]:
    """n, mean, p50, p95, p99 and max of durations, in milliseconds."""
    ms = [s * 1000 for s in seconds]
    return {
        "n": len(ms),
        "mean_ms": round(sum(ms) / len(ms), 3) if ms else float("nan"),
        "p50_ms": round(percentile(ms, 50), 3),
        "p95_ms": round(percentile(ms, 95), 3),
        "p99_ms": round(percentile(ms, 99), 3),
        "max_ms": round(max(ms), 3) if ms else float("nan"),
    }


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table (stdout and the README use the same format)."""

    def cell(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:,.3f}" if abs(v) < 10 else f"{v:,.1f}"
        return str(v)

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def write_json(path: Path | None, payload: dict[str, Any]) -> None:
    """Write the result JSON (pretty, UTF-8) if a path was given."""
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {path}")


def header(name: str, args: Any) -> dict[str, Any]:
    """The common head of every result: benchmark, date, machine, command, load average at the start."""
    return {"benchmark": name, "date": now_iso(), "machine": machine_info(),
            "command": " ".join([Path(sys.executable).name, *sys.argv]), "args": {
                k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
            "load_avg_start": load_avg()}


# -- embedders ---------------------------------------------------------------------------------
class BenchEmbedder:
    """Fast deterministic document vectors with the real model's windows and (optionally) real query vectors.

    Embedding 100k chunks with a real model takes hours on 2 cores, so large indexes get pseudo-random unit
    vectors seeded by each window's text (exact KNN costs the same whatever the values). Windows are planned with
    the real model's tokenizer (``model``: the default multilingual-e5-small, 508 tokens, or all-MiniLM-L6-v2,
    254), so the index holds as many vectors as a real one. Queries are embedded by the real model when
    ``real_queries`` is set (timing includes it).
    """

    provider = "bench"
    dims = 384

    def __init__(self, real_queries: bool = True, real_documents: bool = False, model: str = "e5") -> None:
        from engine.embed.local import E5Embedder, LocalEmbedder, local_model_path

        self._local: E5Embedder | LocalEmbedder
        if model == "e5":
            self._local = E5Embedder()
            self.model_id = "bench-random-e5-windows"
        else:
            path = local_model_path()
            if path is None:
                raise SystemExit("the local model (all-MiniLM-L6-v2) is not installed")
            self._local = LocalEmbedder(path)
            self.model_id = "bench-random-minilm-windows"
        self.max_tokens = self._local.max_tokens
        self.real_queries = real_queries
        self.real_documents = real_documents  # the same fingerprint: new windows get real (timed) vectors

    @property
    def loaded(self) -> bool:
        return self._local.loaded or not (self.real_queries or self.real_documents)

    def load(self) -> None:
        """Load the real model (for query, and with ``real_documents`` document, embeddings)."""
        if self.real_queries or self.real_documents:
            self._local.load()

    def fingerprint(self) -> str:
        return f"bench:{self.model_id}:{self.dims}:{self.max_tokens}"

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return self._local.count_tokens(texts)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if self.real_documents:
            return self._local.embed_documents(texts)
        import numpy as np

        out: list[list[float]] = []
        for text in texts:
            seed = int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(),
                                  "little")
            v = np.random.default_rng(seed).standard_normal(self.dims).astype(np.float32)
            out.append((v / np.linalg.norm(v)).tolist())
        return out

    def embed_query(self, text: str) -> list[float]:
        if self.real_queries:
            return self._local.embed_query(text)
        return self.embed_documents([text])[0]


def make_embedder(kind: str, real_queries: bool = True, real_documents: bool = False) -> Any:
    """``bench`` (fast document vectors, real e5 queries), ``local`` (multilingual-e5-small, the default model),
    ``minilm`` (all-MiniLM-L6-v2) or ``hash`` (384-d)."""
    if kind == "bench":
        return BenchEmbedder(real_queries, real_documents)
    if kind == "hash":
        from engine.embed.choice import HashingEmbedder

        return HashingEmbedder(dims=384)
    from engine.embed.local import E5Embedder, LocalEmbedder, local_model_path

    if kind == "local":
        return E5Embedder()
    path = local_model_path()
    if path is None:
        raise SystemExit("the local model (all-MiniLM-L6-v2) is not installed")
    return LocalEmbedder(path)


# -- workspaces and indexes --------------------------------------------------------------------
def workspace_for(chunks: int, seed: int = 7, root: Path = DEFAULT_ROOT) -> Path:
    """A generated workspace of about ``chunks`` chunks (made once, reused; same seed, same bytes)."""
    from gen_workspace import generate_workspace

    ws = root / f"ws-{chunks}-s{seed}"
    stamp = ws / ".generated"
    if not stamp.exists():
        generate_workspace(ws, chunks, seed)
        stamp.write_text("ok\n")
    return ws


def open_engine(workspace: Path, home: Path, embedder: Any | None, overrides: dict[str, Any] | None = None) -> Any:
    """A MemoryEngine on ``workspace`` with its index under ``home`` (never the real home)."""
    from engine.api import MemoryEngine
    from engine.config import load_config

    home.mkdir(parents=True, exist_ok=True)
    os.environ["MEMDECK_HOME"] = str(home)
    base = {"embedding": {"provider": "none"}} if embedder is None else {}
    config = load_config(workspace=workspace, home=home, config_path=home / "config.toml",
                         overrides={**base, **(overrides or {})})
    return MemoryEngine(config, embedder=embedder)


FAST_FILL_ABOVE = 50_000


def fill_vectors_fast(engine: Any, seed: int = 7) -> int:
    """Give every not-yet-embedded chunk windows and pseudo-random vectors, in bulk (a benchmark fixture).

    Why: the engine's embed step plans each chunk's windows with the real tokenizer (~0.8 ms of CPU per chunk,
    ~90 s at 100k) and, before 9895758, deleted old vectors with a full ``chunks_vec`` scan per chunk (quadratic).
    This writes the same rows the engine would (windows of ≤ 254 approximate word-pieces, chars/4.2; one vec0 row
    each; ``embedded = 1``; a new vec_generation) in about a minute.
    """
    import numpy as np

    from engine.index.chunking import plan_windows
    from engine.index.indexer import bump_vec_generation, content_hash

    def approx(texts: Sequence[str]) -> list[int]:
        return [int(len(t) / 4.2) + 1 for t in texts]

    store = engine.store
    pending = store.conn.execute("SELECT id, text FROM chunks WHERE embedded = 0 ORDER BY id").fetchall()
    rng = np.random.default_rng(seed)
    written = 0
    for start in range(0, len(pending), 5000):
        group = pending[start : start + 5000]
        with store.transaction() as tx:
            for chunk_id, text in group:
                for w in plan_windows(text, approx, 254):
                    cur = tx.execute("INSERT INTO windows(chunk_id, first_line, last_line, hash) VALUES (?,?,?,?)",
                                     (chunk_id, w.first, w.last, content_hash(w.text)))
                    v = rng.standard_normal(384).astype(np.float32)
                    tx.execute("INSERT INTO chunks_vec(rowid, embedding) VALUES (?, ?)",
                               (cur.lastrowid, (v / np.linalg.norm(v)).tobytes()))
                    written += 1
            tx.executemany("UPDATE chunks SET embedded = 1 WHERE id = ?", [(c,) for c, _ in group])
            bump_vec_generation(tx)
    return written


def index_for(chunks: int, kind: str, seed: int = 7, root: Path = DEFAULT_ROOT,
              real_queries: bool = True, real_documents: bool = False) -> tuple[Any, Path, dict[str, Any]]:
    """An up-to-date index of the generated workspace (built once per embedder kind, then reused).

    Returns the engine, the workspace and what building cost (``build_s`` is 0 when the index was reused).
    """
    ws = workspace_for(chunks, seed, root)
    home = root / f"home-{chunks}-s{seed}-{kind}"
    engine = open_engine(ws, home, make_embedder(kind, real_queries, real_documents))
    started = time.perf_counter()
    fast = chunks >= FAST_FILL_ABOVE and kind == "bench"
    report = engine.sync(embed=not fast, wait=600.0)
    filled = fill_vectors_fast(engine, seed) if fast else 0
    built = time.perf_counter() - started
    counts = engine.store.counts()
    windows = engine.store.conn.execute("SELECT count(*) FROM windows").fetchone()[0]
    info = {"workspace": str(ws), "home": str(home), "embedder": kind, "chunks": counts["chunks"],
            "files": counts["files"], "windows": int(windows), "sync_s": round(built, 2),
            "embedded_now": report.embedded, "bulk_filled_vectors": filled, "index_mb": round(engine.store.size_bytes() / 1e6, 1)}
    return engine, ws, info
