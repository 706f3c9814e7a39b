"""Resident memory of ``memdeck mcp --http`` under clients that open sessions and never close them.

Usage::

    python bench/mcp_http_sessions.py [--requests 3000] [--out bench/results/mcp-http-sessions.json] \\
        [--code DIR]

Starts ``memdeck mcp --http 0`` (loopback only, the hashing embedder, a copy of the demo workspace, a fresh
MEMDECK_HOME), waits for its warm-up, then sends ``--requests`` MCP ``initialize`` POSTs over one keep-alive
connection to 127.0.0.1, reading each answer to the end and never sending the DELETE that ends a session
(what a crashed or careless client does). The server's VmRSS is read before, every 500 requests, right
after, and after 3 s of idling. ``--code`` runs another checkout of memdeck (e.g. an older commit exported
with ``git archive``) to compare; without a bearer token announced, none is sent.

Measured (2 shared cores, 3,000 requests): before (stateful sessions, 30-minute idle timeout, 10,000 cap)
VmRSS 90.3 → 197.9 MB, every session still held after idling; now (stateless) 89.9 → 90.1 MB, and a request
without the token gets 401 (it got 200 before). Result: bench/results/mcp-http-sessions.json.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _bench_common import REPO, header, table, write_json

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "bench-abandoned-sessions", "version": "1"}}}


def vm_rss_mb(pid: int) -> float:
    """A process's resident set size in MB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def start_server(code: Path, workspace: Path, home: Path) -> tuple[subprocess.Popen[str], int, str | None]:
    """``memdeck mcp --http 0`` from ``code``; returns the process, its port and its token (None if it has none)."""
    env = {**os.environ, "MEMDECK_HOME": str(home), "MEMDECK_EMBEDDING_PROVIDER": "hash", "PYTHONPATH": str(code)}
    proc = subprocess.Popen([sys.executable, "-m", "memdeck.cli", "--workspace", str(workspace), "mcp", "--http", "0"],
                            cwd=code, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    port = token = None
    deadline = time.monotonic() + 120
    for line in proc.stderr:
        if match := re.search(r"http://127\.0\.0\.1:(\d+)/mcp", line):
            port = int(match.group(1))
        if match := re.search(r"bearer token: (\S+)", line):
            token = match.group(1)
        if "ready in" in line or "warm-up failed" in line or time.monotonic() > deadline:
            break
    if port is None:
        proc.kill()
        raise SystemExit("the server did not start")
    return proc, port, token


def initialize(conn: http.client.HTTPConnection, token: str | None) -> tuple[int, bool]:
    """One initialize POST read to the end: ``(status, whether a session id came back)``."""
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    conn.request("POST", "/mcp", body=json.dumps(INITIALIZE), headers=headers)
    response = conn.getresponse()
    response.read()
    return response.status, response.getheader("mcp-session-id") is not None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--code", type=Path, default=REPO, help="the memdeck checkout to run (default: this one)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    from engine.demo import DEMO_SOURCE

    with tempfile.TemporaryDirectory(prefix="memdeck-mcp-bench-") as tmp:
        workspace, home = Path(tmp) / "ws", Path(tmp) / "home"
        shutil.copytree(DEMO_SOURCE, workspace)
        home.mkdir()
        proc, port, token = start_server(args.code.resolve(), workspace, home)
        try:
            steps: list[tuple[str, float]] = [("ready", vm_rss_mb(proc.pid))]
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            statuses: dict[int, int] = {}
            sessions = 0
            started = time.monotonic()
            for n in range(1, args.requests + 1):
                status, session = initialize(conn, token)
                statuses[status] = statuses.get(status, 0) + 1
                sessions += session
                if n % 500 == 0 and n != args.requests:
                    steps.append((f"after {n} initialize", vm_rss_mb(proc.pid)))
            elapsed = time.monotonic() - started
            conn.close()
            steps.append((f"after {args.requests} initialize", vm_rss_mb(proc.pid)))
            time.sleep(3)
            steps.append(("idle 3 s later", vm_rss_mb(proc.pid)))
            unauthorized = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            status_without_token, _ = initialize(unauthorized, None)
            unauthorized.close()
        finally:
            proc.terminate()
            proc.wait(timeout=30)

    growth = steps[-1][1] - steps[0][1]
    print(table(["step", "VmRSS MB"], steps))
    print(f"\n{args.requests} initialize requests in {elapsed:.1f} s; statuses {statuses}; "
          f"{sessions} answered with a session id; RSS growth {growth:+.1f} MB; "
          f"without the token: HTTP {status_without_token}")
    result: dict[str, Any] = {**header("mcp_http_sessions", args), "steps": dict(steps), "statuses": statuses,
                              "sessions_opened": sessions, "rss_growth_mb": round(growth, 1),
                              "seconds": round(elapsed, 2), "token_required": token is not None,
                              "status_without_token": status_without_token}
    write_json(args.out, result)


if __name__ == "__main__":
    main()
