"""Count a hand judge's verdicts on real workspaces per evidence group, for ``precision.json``'s ``real`` section.

Usage::

    python bench/review_real_verdicts.py VERDICTS.md=DIR[,DIR...][:no-step] ... [--write] [--json]

Each spec pairs a judge's verdict file (Markdown table rows holding a finding id such as ``d-0123456789ab`` and a
cell ``right``, ``wrong`` or ``harmful``) with the folders of the workspaces that judge read (every sub-folder is a
workspace: MEMORY.md, USER.md, memory/…). Each workspace is reviewed with today's rules (every finding, lexical, a
throwaway data dir: as the judge ran it), each finding whose id the judge gave a verdict counts once for its
evidence group (``right`` when the verdict was right). ``:no-step`` leaves that judge's ``duplicate:step`` verdicts
out (a judge who saw a step merged, which the review no longer offers). ``--write`` replaces the ``real`` section
of ``engine/review/precision.json``; without it the counts are only printed.

Real notes are never in the repository: the verdict files and workspaces stay where the judges left them; only
the counts are written.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

_ID = re.compile(r"[dcp]-[0-9a-f]{12}")
_VERDICT = re.compile(r"(right|wrong|harmful)\b", re.IGNORECASE)


def read_verdicts(path: Path) -> dict[str, str]:
    """``finding id → right|wrong|harmful`` from a judge's Markdown table (the first id and verdict cell of a
    row)."""
    out: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        ids = [c for c in cells if _ID.fullmatch(c)]
        verdicts = [m.group(1).lower() for c in cells if (m := _VERDICT.match(c))]
        if ids and verdicts:
            out.setdefault(ids[0], verdicts[0])
    return out


def review_all(workspace: Path) -> list[dict[str, object]]:
    """Every finding today's rules make on a workspace, as ``memdeck review --json --all`` gives them."""
    from engine.config import load_config
    from engine.review.run import run_review

    with tempfile.TemporaryDirectory(prefix="memdeck-verdicts-") as home:
        cfg = load_config(workspace=workspace, home=Path(home), config_path=Path(home) / "none.toml",
                          overrides={"embedding": {"provider": "none"}})
        findings: list[dict[str, object]] = run_review(cfg, full=True, show_all=True).to_json()["findings"]
        return findings


def count(specs: list[tuple[Path, list[Path], bool]]) -> tuple[dict[str, tuple[int, int]], list[str]]:
    """``group → (right, n)`` over every spec, and one summary line per judge."""
    groups: Counter[tuple[str, bool]] = Counter()
    lines = []
    for verdict_file, roots, steps in specs:
        verdicts = read_verdicts(verdict_file)
        seen: set[str] = set()
        tally: Counter[str] = Counter()
        for root in roots:
            for ws in sorted(p for p in root.iterdir() if p.is_dir()):
                for f in review_all(ws):
                    fid = str(f["id"])
                    if fid not in verdicts or fid in seen:
                        continue
                    seen.add(fid)
                    group = str(f.get("evidence", ""))
                    if group == "duplicate:step" and not steps:
                        continue
                    groups[(group, verdicts[fid] == "right")] += 1
                    tally[verdicts[fid]] += 1
        lines.append(f"{verdict_file.name}: {len(verdicts)} verdicts, {len(seen)} found today "
                     f"({', '.join(f'{v} {n}' for v, n in sorted(tally.items()))})")
    names = sorted({g for g, _ in groups})
    return {g: (groups[(g, True)], groups[(g, True)] + groups[(g, False)]) for g in names}, lines


def parse_spec(spec: str) -> tuple[Path, list[Path], bool]:
    """``VERDICTS.md=DIR[,DIR…][:no-step]``."""
    steps = not spec.endswith(":no-step")
    spec = spec.removesuffix(":no-step")
    file, sep, dirs = spec.partition("=")
    if not sep or not dirs:
        raise argparse.ArgumentTypeError(f"{spec!r}: expected VERDICTS.md=DIR[,DIR...]")
    return Path(file), [Path(d) for d in dirs.split(",")], steps


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("specs", nargs="+", type=parse_spec, metavar="VERDICTS.md=DIR[,DIR...][:no-step]")
    ap.add_argument("--write", action="store_true", help="replace precision.json's real section with the counts")
    ap.add_argument("--about", default="", help="the real section's description (with --write)")
    ap.add_argument("--json", action="store_true", help="print the counts as JSON")
    args = ap.parse_args(argv)
    groups, lines = count(args.specs)
    if args.json:
        print(json.dumps({g: {"right": r, "n": n} for g, (r, n) in groups.items()}, indent=1))
    else:
        for line in lines:
            print(line)
        for g, (r, n) in groups.items():
            print(f"{g:40s} {r:4d}/{n:<4d} {(r + 1) / (n + 2):.2f}")
    if args.write:
        from engine.review.precision import write_real

        write_real(groups, args.about or "Judged on real public OpenClaw workspaces by readers who had not read "
                   "the rules (bench/review_real_verdicts.py).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
