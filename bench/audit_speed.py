"""Audit speed: ``memdeck audit`` over 40 sessions / ~32k events, cold, warm and after one session grew.

Usage::

    python bench/audit_speed.py [--sessions 40] [--events 32000] [--runs 5] [--seed 3]
        [--source tests/data/openclaw-agent.sqlite] [--out bench/results/2026-12-03-audit-speed.json]

The agent database is built in a temp dir: OpenClaw's own database (``--source``, the repo's copy of the real
one, read through the sqlite backup API, never written) with each new session a copy of one of the four real
sessions' events replicated to ~800 rows: new event ids (parent links rewired so the branch walks through every
copy), timestamps shifted a day per session and a block per copy, the person's messages perturbed (a number
changed, a case tag added) so no two sessions say exactly the same, the real zstd row kept compressed and one
large tool result in four stored as zstd like it, the compaction rows (with ``tokensBefore``) and each
session's ``memoryFlush`` record kept. The workspace: 60 generated daily notes plus a MEMORY.md.

Timed in one process (``MemoryEngine.audit``): the uncached path (``cache=False``: every session read, drafted
and checked), a cold cached audit (empty cache), a warm one with nothing changed, and one after a session gained
20 events. Percentiles over ``--runs``; the cold path is also profiled (cProfile, top functions written out).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import random
import re
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

DEFAULT_SOURCE = REPO / "tests" / "data" / "openclaw-agent.sqlite"
GOAL_COLD_S = 30.0
GOAL_INCREMENTAL_S = 2.0
DAY_MS = 86_400_000
COMPACT_EVERY = 8  # a copy of a session keeps its compaction rows once in this many copies (~3 a session)
_NUMBER = re.compile(r"(?<![\d\-:.])\b(\d{1,3})\b(?![\d\-:])")


def _rows(conn: sqlite3.Connection, session_id: str) -> list[tuple[int, str, int, str | None, bool]]:
    import zstandard

    out = []
    for seq, text, blob, size, nav, created in conn.execute(
            "SELECT seq, event_json, event_zstd, event_utf8_bytes, navigation_json, created_at FROM transcript_events"
            " WHERE session_id = ? ORDER BY seq", (session_id,)):
        if text is None:
            text = zstandard.ZstdDecompressor().decompress(blob, max_output_size=size).decode("utf-8")
        out.append((seq, text, created, nav, blob is not None))
    return out


def _perturb(obj: dict[str, Any], tag: int) -> None:
    """The person's words changed a little: a standalone number moved, a case tag added."""
    msg = obj.get("message")
    if not isinstance(msg, dict) or msg.get("role") != "user":
        return

    def change(text: str) -> str:
        text = _NUMBER.sub(lambda m: str(int(m.group(1)) + tag % 7 + 1), text, count=1)
        return text.rstrip() + f" (case {tag})"

    content = msg.get("content")
    if isinstance(content, str):
        msg["content"] = change(content)
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
                part["text"] = change(part["text"])
                break


def _iso(ms: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _navigation(obj: dict[str, Any], size: int) -> str:
    entry = {k: obj.get(k) for k in ("id", "parentId", "timestamp", "type")}
    msg = obj.get("message") if isinstance(obj.get("message"), dict) else {}
    nav = {**entry, "message": {"role": msg.get("role")}}
    return json.dumps({"version": 1, "report": {"kind": "canonical", "hasParentId": True, "entry": entry},
                       "navigation": nav, "reset": nav, "model": nav, "modelBytes": size,
                       "modelWithoutCheckpointBytes": size, "withoutCustomDataBytes": size},
                      separators=(",", ":"))


def _octet_length(value: Any) -> int | None:
    if value is None:
        return None
    return len(value.encode("utf-8")) if isinstance(value, str) else len(bytes(value))


def _sqlite_functions(conn: sqlite3.Connection) -> None:
    """OpenClaw's CHECK constraints call ``octet_length`` (SQLite ≥ 3.43); an older SQLite gets it from here."""
    if sqlite3.sqlite_version_info < (3, 43):
        conn.create_function("octet_length", 1, _octet_length, deterministic=True)


class Builder:
    """Writes replicated sessions into a copy of OpenClaw's database."""

    def __init__(self, db: Path, source: Path, seed: int) -> None:
        src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
        self.conn = sqlite3.connect(db)
        _sqlite_functions(self.conn)
        src.backup(self.conn)
        src.close()
        self.rng = random.Random(seed)
        self.sources = [r[0] for r in self.conn.execute("SELECT session_id FROM session_windows ORDER BY session_id")]
        self.rows = {s: _rows(self.conn, s) for s in self.sources}
        self.windows = {r[0]: r for r in self.conn.execute("SELECT * FROM session_windows")}
        self.window_cols = [d[1] for d in self.conn.execute("PRAGMA table_info(session_windows)")]
        self.nodes = {r[1]: r for r in self.conn.execute("SELECT * FROM session_nodes")}
        self.node_cols = [d[1] for d in self.conn.execute("PRAGMA table_info(session_nodes)")]
        self.tails: dict[str, tuple[int, str, int, str, int]] = {}  # sid → (next seq, last id, last ms, source, tag)

    def _id(self) -> str:
        return f"{self.rng.getrandbits(32):08x}"

    def add_session(self, n: int, events: int) -> str:
        source = self.sources[n % len(self.sources)]
        rows = self.rows[source]
        sid = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        shift = (n + 1) * DAY_MS
        header = json.loads(rows[0][1])
        header["id"] = sid
        header["timestamp"] = _iso(rows[0][2] + shift)
        self._insert(sid, 0, header, rows[0][2] + shift, zstd=False)
        body = rows[1:]
        self.tails[sid] = (1, "", rows[0][2] + shift, source, n * 100)
        copies = max(1, round((events - 1) / len(body)))
        for copy in range(copies):
            self._append(sid, body, copy)
        self._meta(sid, source, n)
        return sid

    def _append(self, sid: str, body: list[tuple[int, str, int, str | None, bool]], copy: int) -> None:
        seq, last_id, last_ms, source, tag0 = self.tails[sid]
        first_ms = body[0][2]
        base = last_ms + 60_000
        ids: dict[str, str] = {}
        for _old_seq, text, created, _nav, was_zstd in body:
            obj = json.loads(text)
            old = obj.get("id")
            if obj.get("type") == "compaction" and copy % COMPACT_EVERY != COMPACT_EVERY - 1:
                if isinstance(old, str):  # this copy did not compact: its children hang on the entry before
                    ids[old] = ids.get(obj.get("parentId"), last_id) if obj.get("parentId") else last_id
                continue
            new = self._id()
            if isinstance(old, str):
                ids[old] = new
            obj["id"] = new
            parent = obj.get("parentId")
            obj["parentId"] = ids.get(parent, last_id or None) if parent is not None or last_id else None
            when = base + (created - first_ms)
            obj["timestamp"] = _iso(when)
            msg = obj.get("message")
            if isinstance(msg, dict) and isinstance(msg.get("timestamp"), int):
                msg["timestamp"] = when
            for key in ("firstKeptEntryId",):
                if isinstance(obj.get(key), str):
                    obj[key] = ids.get(obj[key], obj[key])
            _perturb(obj, tag0 + copy)
            big = len(text) > 2000 and isinstance(msg, dict) and msg.get("role") == "toolResult"
            self._insert(sid, seq, obj, when, zstd=was_zstd or (big and self.rng.random() < 0.25))
            seq += 1
            last_id = new
            last_ms = when
        self.tails[sid] = (seq, last_id, last_ms, source, tag0)

    def grow(self, sid: str, events: int) -> None:
        """Append ``events`` of the session's source events (a session that went on)."""
        source = self.tails[sid][3]
        body = self.rows[source][1:]
        while events > 0:
            part = body[:events]
            self._append(sid, part, 90 + events)
            events -= len(part)
        _, _, last_ms, _, _ = self.tails[sid]
        self.conn.execute("UPDATE session_windows SET updated_at = ?, transcript_updated_at = ? WHERE session_id = ?",
                          (last_ms, last_ms, sid))
        self.conn.commit()

    def _insert(self, sid: str, seq: int, obj: dict[str, Any], when: int, zstd: bool) -> None:
        import zstandard

        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
        if zstd:
            raw = text.encode("utf-8")
            self.conn.execute(
                "INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd, event_utf8_bytes,"
                " navigation_json) VALUES (?, ?, NULL, ?, ?, ?, ?)",
                (sid, seq, when, zstandard.ZstdCompressor().compress(raw), len(raw), _navigation(obj, len(raw))))
        else:
            self.conn.execute("INSERT INTO transcript_events (session_id, seq, event_json, created_at)"
                              " VALUES (?, ?, ?, ?)", (sid, seq, text, when))
        kind = obj.get("type")
        self.conn.execute(
            "INSERT INTO transcript_event_identities (session_id, event_id, seq, event_type, parent_id, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)", (sid, obj["id"], seq, kind, obj.get("parentId"), when))

    def _meta(self, sid: str, source: str, n: int) -> None:
        _, _, last_ms, _, _ = self.tails[sid]
        window = dict(zip(self.window_cols, self.windows[source], strict=True))
        key = f"agent:main:recovered:{sid}"
        node_src = next(r for r in self.nodes.values() if r[1] == source)
        node = dict(zip(self.node_cols, node_src, strict=True))
        entry = json.loads(node["entry_json"])
        entry.update(sessionId=sid, updatedAt=last_ms)
        entry.pop("archivedAt", None)
        node.update(session_key=key, current_session_id=sid, entry_json=json.dumps(entry), updated_at=last_ms)
        self.conn.execute(f"INSERT INTO session_nodes ({', '.join(node)}) VALUES ({', '.join('?' * len(node))})",
                          tuple(node.values()))
        window.update(session_id=sid, session_key=key, created_at=last_ms, updated_at=last_ms,
                      transcript_updated_at=last_ms, transcript_observed_at=last_ms)
        self.conn.execute(f"INSERT INTO session_windows ({', '.join(window)}) VALUES ({', '.join('?' * len(window))})",
                          tuple(window.values()))
        del n

    def finish(self) -> None:
        self.conn.commit()


def build(root: Path, source: Path, sessions: int, events: int, seed: int) -> tuple[Builder, Path, list[str]]:
    """The agent database (its builder, kept open to grow a session later) and the workspace under ``root``;
    the new sessions' ids."""
    from bench.gen_realshape import generate

    db = root / "openclaw-agent.sqlite"
    builder = Builder(db, source, seed)
    per = max(2, (events - sum(len(r) for r in builder.rows.values())) // max(1, sessions - len(builder.sources)))
    ids = [builder.add_session(n, per) for n in range(sessions - len(builder.sources))]
    builder.finish()
    ws = root / "ws"
    generate(ws, notes=60, kb=3.0, seed=seed)  # 60 daily notes and a MEMORY.md of 40 lines
    with (ws / "MEMORY.md").open("a", encoding="utf-8") as f:  # two things the sessions say, held already
        f.write("\n## Preferences\n- Mara prefers squash merges for feature PRs.\n- Use uv for Python projects.\n")
    return builder, ws, ids


def _pcts(values: list[float]) -> dict[str, float]:
    vs = sorted(values)
    def q(p: float) -> float:
        return vs[min(len(vs) - 1, round(p * (len(vs) - 1)))]
    return {"p50": round(statistics.median(vs), 3), "p95": round(q(0.95), 3), "min": round(vs[0], 3),
            "max": round(vs[-1], 3), "n": len(vs)}


def run(args: argparse.Namespace) -> dict[str, Any]:
    from engine.api import MemoryEngine
    from engine.config import load_config

    root = Path(tempfile.mkdtemp(prefix="memdeck-audit-bench-"))
    try:
        builder, ws, ids = build(root, Path(args.source), args.sessions, args.events, args.seed)
        db = root / "openclaw-agent.sqlite"
        check = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        counts = check.execute("SELECT count(DISTINCT session_id), count(*), sum(event_zstd IS NOT NULL)"
                               " FROM transcript_events").fetchone()
        compactions = check.execute("SELECT count(*) FROM transcript_event_identities"
                                    " WHERE event_type = 'compaction'").fetchone()[0]
        check.close()
        home = root / "home"
        config = load_config(workspace=ws, sessions_dir=db, home=home,
                             overrides={"embedding": {"provider": "none"}})
        engine = MemoryEngine(config)
        engine.sync()
        result: dict[str, Any] = {"bench": "audit_speed", "sessions": counts[0], "events": counts[1],
                                  "zstd_rows": counts[2], "compaction_rows": compactions,
                                  "notes": len(list((ws / "memory").glob("*.md")))}
        timings: dict[str, list[float]] = {"uncached": [], "cold": [], "warm": [], "grown": []}
        cpu: dict[str, list[float]] = {k: [] for k in timings}
        reports: dict[str, Any] = {}
        loads = [os.getloadavg()[0]]

        def timed(name: str, **kw: Any) -> Any:
            started, cpu0 = time.perf_counter(), time.process_time()
            report = engine.audit(**kw)
            timings[name].append(time.perf_counter() - started)
            cpu[name].append(time.process_time() - cpu0)
            reports[name] = report
            return report

        cache_dir = home / "audit"
        for i in range(args.runs):
            timed("uncached", cache=False)
            shutil.rmtree(cache_dir, ignore_errors=True)
            timed("cold")
            timed("warm")
            builder.grow(ids[i % len(ids)], 20)
            timed("grown")
        assert reports["grown"].to_json()["sessions"] == engine.audit(cache=False).to_json()["sessions"], \
            "the cached audit differs from the uncached one"
        result["statements"] = reports["cold"].statements
        result["audited"] = reports["cold"].scanned
        loads.append(os.getloadavg()[0])
        result["load_avg_1m"] = [round(x, 2) for x in loads]
        result["timings_s"] = {k: _pcts(v) for k, v in timings.items()}
        result["cpu_s"] = {k: _pcts(v) for k, v in cpu.items()}
        unc = result["timings_s"]["uncached"]["p50"]
        result["ratio_vs_uncached"] = {k: round(result["timings_s"][k]["p50"] / unc, 4) for k in ("cold", "warm",
                                                                                                  "grown")}
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
            engine.audit(cache=False)
            prof.disable()
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(25)
            result["profile_uncached_top"] = out.getvalue().splitlines()[:60]
        engine.close()
        builder.conn.close()
        result["goals"] = {"cold_s": GOAL_COLD_S, "incremental_s": GOAL_INCREMENTAL_S,
                           "cold_ok": result["timings_s"]["uncached"]["p95"] <= GOAL_COLD_S,
                           "incremental_ok": max(result["timings_s"]["warm"]["p95"],
                                                 result["timings_s"]["grown"]["p95"]) <= GOAL_INCREMENTAL_S}
        return result
    finally:
        shutil.rmtree(root, ignore_errors=True)


def write_markdown(result: dict[str, Any], path: Path) -> None:
    t = result["timings_s"]
    lines = [f"# Audit speed ({result['sessions']} sessions, {result['events']:,} events)", "",
             f"{result['zstd_rows']} zstd rows, {result['compaction_rows']} compaction rows, {result['notes']} daily"
             f" notes; {result['statements']} statements not in memory in {result['audited']} audited sessions.", "",
             "uncached: `audit(cache=False)`, every session read, drafted and checked; cold: the cached path with an"
             " empty cache; warm: nothing changed; grown: one session gained 20 events.", "",
             "| path | p50 s | p95 s | min | max | runs | × uncached p50 |", "|---|---|---|---|---|---|---|"]
    for name in ("uncached", "cold", "warm", "grown"):
        row = t[name]
        ratio = result["ratio_vs_uncached"].get(name, 1.0)
        lines.append(f"| {name} | {row['p50']} | {row['p95']} | {row['min']} | {row['max']} | {row['n']} | {ratio} |")
    c = result["cpu_s"]
    lines += ["", "CPU seconds (the machine is shared: 1-minute load " + " → ".join(map(str, result["load_avg_1m"]))
              + "): " + ", ".join(f"{k} p50 {c[k]['p50']} / p95 {c[k]['p95']}" for k in c) + "."]
    g = result["goals"]
    lines += ["", f"Goals: whole audit ≤ {g['cold_s']} s: {'met' if g['cold_ok'] else 'NOT met'}; incremental ≤ "
              f"{g['incremental_s']} s: {'met' if g['incremental_ok'] else 'NOT met'}."]
    if result.get("profile_uncached_top"):
        lines += ["", "Profile of the uncached path (cumulative):", "", "```", *result["profile_uncached_top"], "```"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=40)
    ap.add_argument("--events", type=int, default=32000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--source", default=str(DEFAULT_SOURCE))
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    result = run(args)
    text = json.dumps(result, indent=2)
    if args.out:
        out = Path(args.out)
        out.write_text(text + "\n", encoding="utf-8")
        write_markdown(result, out.with_suffix(".md"))
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
