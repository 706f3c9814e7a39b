"""Review speed: a first full review and an incremental one after a day's notes, on a generated workspace.

Usage::

    python bench/review_speed.py [--files 2000] [--seed 7] [--out bench/results/speed-review.json]

The workspace comes from ``bench/gen_workspace.py`` (≈4 chunks per file) plus, for the incremental run, one new
daily note and an edited one. Lexical rules only (no index): what ``memdeck review`` does without vectors.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.gen_workspace import CHUNKS_PER_FILE, generate_workspace  # noqa: E402

DAY_NOTE = """# 2030-01-02

## Notes
- Lunch with Priya at the canteen.
- Sam prefers tea over coffee in the afternoon.
- Deployed atlas v2.1.0 to staging.
- [ ] Review Jonas's migration PR.
- The weekly backup review is every Monday at 10:00.
"""


_ONE = """
import json, sys, time
from pathlib import Path
from engine.config import load_config
from engine.review.run import run_review
ws, home, full = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "1"
cfg = load_config(workspace=ws, home=home, config_path=home / "none.toml",
                  overrides={"embedding": {"provider": "none"}})
started, cpu = time.perf_counter(), time.process_time()
r = run_review(cfg, full=full)
print(json.dumps({"seconds": round(time.perf_counter() - started, 2), "statements": r.statements,
                  "cpu_seconds": round(time.process_time() - cpu, 2),
                  "findings": len(r.findings), "compared": r.compared, "incremental": r.incremental}))
"""


def _review(ws: Path, home: Path, full: bool = False) -> dict[str, Any]:
    """One review in a fresh process, as ``memdeck review`` runs (nothing warm from the previous one)."""
    out = subprocess.run([sys.executable, "-c", _ONE, str(ws), str(home), "1" if full else "0"], cwd=REPO,
                         capture_output=True, text=True, check=True)
    data: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return data


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        generate_workspace(ws, args.files * CHUNKS_PER_FILE, seed=args.seed)
        files = sum(1 for _ in ws.rglob("*.md"))
        home = Path(tmp) / "home"
        full = _review(ws, home, full=True)
        again = _review(ws, home)
        (ws / "memory" / "2030-01-02.md").write_text(DAY_NOTE, encoding="utf-8")
        edited = sorted((ws / "memory").glob("20*.md"))[-2]
        with edited.open("a", encoding="utf-8") as fh:
            fh.write("\n- Sam's accountant is Priya Shah at Shah & Co.\n")
        inc = _review(ws, home)
    result = {
        "files": files, "statements": full["statements"], "findings_full": full["findings"],
        "full_seconds": full["seconds"], "unchanged_seconds": again["seconds"],
        "incremental_seconds": inc["seconds"], "incremental_compared": inc["compared"],
        "cpu_seconds": {"full": full["cpu_seconds"], "unchanged": again["cpu_seconds"],
                        "incremental": inc["cpu_seconds"]},
        "load_average": round(os.getloadavg()[0], 2),
        "incremental_flag": bool(inc["incremental"] and again["incremental"]), "cpus": os.cpu_count(),
    }
    print(json.dumps(result, indent=1))
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
