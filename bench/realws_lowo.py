"""Leave-one-workspace-out choice of a hybrid setting over ``bench/eval_realws.py`` results.

Usage::

    python bench/realws_lowo.py RESULTS.json [--off hybrid] [--candidates hybrid,hybrid@x,...]

The objective of a workspace is its curated top-3 hits plus its daily top-3 hits (hybrid labels). For each
workspace held out, the setting with the best objective summed over the other workspaces is chosen (ties: the
first in ``--candidates`` order, which starts with the off setting, then the simpler ones), and scored on the
held-out one. Prints per-workspace, per-kind hits of every setting and the outer scores against off (counts only:
no question text).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def hits(payload: Mapping[str, Any], label: str) -> dict[str, dict[str, int]]:
    """workspace → kind → top-3 hits under ``label``."""
    out: dict[str, dict[str, int]] = {}
    for row in payload["questions"]:
        by_kind = out.setdefault(row["workspace"], {"curated": 0, "daily": 0})
        by_kind.setdefault(row["kind"], 0)
        by_kind[row["kind"]] += int(row["scores"][label]["top-3"])
    return out


def objective(table: Mapping[str, Mapping[str, int]], spaces: Sequence[str]) -> int:
    """Curated plus daily top-3 hits over ``spaces``."""
    return sum(table[w].get("curated", 0) + table[w].get("daily", 0) for w in spaces)


def lowo(payload: Mapping[str, Any], candidates: Sequence[str]) -> list[dict[str, Any]]:
    """For each held-out workspace: the pick on the others, its inner objective, and its held-out hits vs off."""
    tables = {c: hits(payload, c) for c in candidates}
    spaces = sorted(tables[candidates[0]])
    out = []
    for held in spaces:
        inner = [w for w in spaces if w != held]
        best = max(candidates, key=lambda c: (objective(tables[c], inner), -candidates.index(c)))
        out.append({"held_out": held, "pick": best, "inner": objective(tables[best], inner),
                    "inner_off": objective(tables[candidates[0]], inner),
                    "outer": dict(tables[best][held]), "outer_off": dict(tables[candidates[0]][held])})
    return out


def render(payload: Mapping[str, Any], candidates: Sequence[str]) -> str:
    """Markdown: every setting's hits per workspace and kind, then the leave-one-workspace-out table."""
    tables = {c: hits(payload, c) for c in candidates}
    spaces = sorted(tables[candidates[0]])
    short = {w: w.split("__")[0] for w in spaces}
    head = ["setting", *[f"{short[w]} c/d" for w in spaces], "curated", "daily", "objective"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in candidates:
        t = tables[c]
        cur = sum(t[w]["curated"] for w in spaces)
        day = sum(t[w]["daily"] for w in spaces)
        lines.append("| " + " | ".join([c, *[f"{t[w]['curated']}/{t[w]['daily']}" for w in spaces],
                                         str(cur), str(day), str(cur + day)]) + " |")
    lines += ["", "| held out | pick (on the other two) | inner obj (off) | outer c/d | off c/d | outer obj | off obj |",
              "|---|---|---|---|---|---|---|"]
    total = total_off = daily = daily_off = 0
    for r in lowo(payload, candidates):
        o, f = r["outer"], r["outer_off"]
        total += o["curated"] + o["daily"]
        total_off += f["curated"] + f["daily"]
        daily += o["daily"]
        daily_off += f["daily"]
        lines.append(f"| {short[r['held_out']]} | {r['pick']} | {r['inner']} ({r['inner_off']}) | "
                     f"{o['curated']}/{o['daily']} | {f['curated']}/{f['daily']} | {o['curated'] + o['daily']} | "
                     f"{f['curated'] + f['daily']} |")
    lines.append(f"| **sum** | | | | | **{total}** | **{total_off}** |")
    lines.append("")
    lines.append(f"Outer sum {total} vs off {total_off}; daily {daily} vs off {daily_off} "
                 f"(rule (1): {'holds' if total > total_off and daily_off - daily <= 1 else 'fails'}).")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: print the tables."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("results", help="an eval_realws.py JSON")
    p.add_argument("--candidates", default="",
                   help="comma-separated labels, off first (default: every hybrid label in the file's order)")
    args = p.parse_args(argv)
    payload = json.loads(Path(args.results).read_text(encoding="utf-8"))
    labels = [c for c in args.candidates.split(",") if c] or [
        label for label in payload["meta"]["labels"] if label.partition("@")[0] == "hybrid"]
    print(render(payload, labels))
    return 0


if __name__ == "__main__":
    sys.exit(main())
