"""A seeded generator of a workspace shaped like a real agent's memory: ~340 long technical daily notes, ~3 MB.

Usage::

    python bench/gen_realshape.py --out /tmp/ws-real [--notes 340] [--kb 9] [--seed 11]

Measured on a real 346-note workspace (3.3 MB, 2,706 chunks): notes are long (≈9.5 KB), written by an agent
over a year: dated headings, short status bullets ("- done: …"), long explanatory bullets, numbered steps, fenced
code and shell logs, key: value lines, a few tables and links. Lines vary from 3 to 400 characters, so the line
vectors and the windows that the indexer plans have the mix of lengths a real index sees. Same seed, same bytes.
"""

from __future__ import annotations

import argparse
import random
from datetime import date, timedelta
from pathlib import Path

FIRST_DAY = date(2025, 11, 1)
TOPICS = ("ingest pipeline", "auth service", "search latency", "backup rotation", "release 4.2", "GPU nodes",
          "billing export", "TUI redraw", "OpenClaw sync", "vector index", "cron jobs", "disk pressure",
          "flaky tests", "schema migration", "rate limiter", "DNS failover", "log retention", "Postgres upgrade")
PEOPLE = ("Alice", "Marko", "Priya", "Jonas", "Wei", "Fatima", "Diego", "Sanna", "Kenji", "Olga")
VERBS = ("investigated", "fixed", "rolled back", "profiled", "measured", "documented", "refactored", "deployed",
         "reviewed", "benchmarked", "reproduced", "bisected", "patched", "migrated", "tuned")
NOUNS = ("the retry loop", "connection pool", "p95 latency", "the WAL checkpoint", "memory leak", "cache eviction",
         "the cron schedule", "index rebuild", "TLS handshake", "the worker queue", "OOM kill", "the HNSW graph",
         "token budget", "batch size", "thread pool", "the config loader", "S3 lifecycle rule", "the flaky assert")
REASONS = ("because the old value starved the writer", "so the nightly job stops timing out",
           "since the upstream changed its response format", "after the incident on the staging cluster",
           "which halves the cold-start time", "to keep the TUI responsive while syncing",
           "because two cores are shared with other jobs", "as the vendor recommended in their changelog")
SHORT = ("- done", "- blocked on review", "- TODO: follow up", "- ok", "- shipped", "- see above", "- n/a",
         "- wontfix", "- needs a test", "- ask Priya", "- merged", "- reverted")
CODE = {
    "bash": ("set -euo pipefail", "journalctl -u ingest --since '1 hour ago' | grep -c ERROR",
             "rsync -a --delete ./data/ backup:/srv/data/", "systemctl restart ingest-worker@{2..4}",
             "curl -s localhost:9090/metrics | grep http_request_duration", "du -sh /var/lib/postgresql/*"),
    "python": ("def backoff(attempt: int, base: float = 0.5) -> float:", "    return min(30.0, base * 2 ** attempt)",
               "for row in cursor.execute(SQL, params):", "    totals[row.user_id] += row.amount",
               "with pool.connection() as conn:", "    conn.execute('VACUUM (ANALYZE) events')",
               "assert result.status == 200, result.text"),
    "sql": ("SELECT user_id, count(*) AS n FROM events", "WHERE created_at > now() - interval '1 day'",
            "GROUP BY user_id HAVING count(*) > 1000", "ORDER BY n DESC LIMIT 20;"),
    "text": ("2026-03-14T02:11:09Z ERROR worker-3 timeout after 30000ms (attempt 5/5)",
             "2026-03-14T02:11:10Z WARN  pool exhausted: 64/64 in use, 212 waiting",
             "2026-03-14T02:11:12Z INFO  circuit open for upstream payments-api",
             "Traceback (most recent call last):", '  File "worker.py", line 88, in run',
             "TimeoutError: read timed out"),
}


def _sentence(rng: random.Random, clauses: int) -> str:
    parts = [f"{rng.choice(PEOPLE)} {rng.choice(VERBS)} {rng.choice(NOUNS)}" for _ in range(clauses)]
    text = "; then ".join(parts)
    if rng.random() < 0.7:
        text += f", {rng.choice(REASONS)}"
    if rng.random() < 0.4:
        text += f" (p95 {rng.randint(8, 900)} ms → {rng.randint(5, 400)} ms, {rng.randint(2, 64)} workers)"
    return text[0].upper() + text[1:] + "."


def _section(rng: random.Random, topic: str) -> list[str]:
    out = [f"## {topic.capitalize()}", ""]
    for _ in range(rng.randint(2, 5)):
        kind = rng.random()
        if kind < 0.30:  # short status bullets
            out += [f"{rng.choice(SHORT)}: {rng.choice(NOUNS)}" if rng.random() < 0.6 else rng.choice(SHORT)
                    for _ in range(rng.randint(2, 6))]
        elif kind < 0.55:  # long explanatory bullets
            out += [f"- {_sentence(rng, rng.randint(1, 4))}" for _ in range(rng.randint(2, 5))]
        elif kind < 0.68:  # numbered steps
            out += [f"{i}. {_sentence(rng, 1)}" for i in range(1, rng.randint(3, 7))]
        elif kind < 0.82:  # code or a log
            lang = rng.choice(tuple(CODE))
            lines = list(CODE[lang])
            rng.shuffle(lines)
            out += [f"```{lang}", *lines[: rng.randint(3, len(lines))], "```"]
        elif kind < 0.90:  # key: value facts
            out += [f"- {k}: {v}" for k, v in (("owner", rng.choice(PEOPLE)), ("ticket", f"OPS-{rng.randint(100, 9999)}"),
                                                ("status", rng.choice(("open", "fixed", "monitoring"))))]
        elif kind < 0.95:  # a small table
            out += ["| host | cpu | mem |", "| --- | --- | --- |"]
            out += [f"| node-{rng.randint(1, 40)} | {rng.randint(5, 99)}% | {rng.randint(1, 64)} GB |"
                    for _ in range(rng.randint(2, 5))]
        else:  # a paragraph
            out.append(" ".join(_sentence(rng, rng.randint(1, 3)) for _ in range(rng.randint(2, 5))))
        out.append("")
    return out


def note_text(rng: random.Random, day: date, target_chars: int) -> str:
    """One daily note of about ``target_chars`` characters."""
    lines = [f"# {day.isoformat()}", ""]
    size = 0
    while size < target_chars:
        section = _section(rng, rng.choice(TOPICS))
        lines += section
        size += sum(len(line) + 1 for line in section)
    return "\n".join(lines).rstrip() + "\n"


def generate(root: Path, notes: int = 340, kb: float = 9.0, seed: int = 11) -> int:
    """Write ``notes`` daily notes (and a MEMORY.md) under ``root``; returns the bytes written."""
    rng = random.Random(seed)
    (root / "memory").mkdir(parents=True, exist_ok=True)
    total = 0
    memory = "# Memory\n\n" + "\n".join(f"- {_sentence(rng, 1)}" for _ in range(40)) + "\n"
    (root / "MEMORY.md").write_text(memory, encoding="utf-8")
    total += len(memory.encode())
    for i in range(notes):
        day = FIRST_DAY + timedelta(days=i)
        text = note_text(rng, day, int(rng.uniform(0.4, 1.6) * kb * 1024))
        (root / "memory" / f"{day.isoformat()}.md").write_text(text, encoding="utf-8")
        total += len(text.encode())
    return total


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--notes", type=int, default=340)
    p.add_argument("--kb", type=float, default=9.0, help="mean note size in KB")
    p.add_argument("--seed", type=int, default=11)
    args = p.parse_args(argv)
    size = generate(Path(args.out), args.notes, args.kb, args.seed)
    print(f"{args.notes} notes, {size / 1e6:.2f} MB in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
