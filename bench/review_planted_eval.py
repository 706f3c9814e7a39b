"""Score ``memdeck review`` on planted workspaces: each DIR holds memory files and a ``labels.json``.

Usage::

    python bench/review_planted_eval.py tests/data/review_labels/english tests/data/review_labels/sr_zh [--json]
    python bench/review_planted_eval.py DIR... --index     # as a user who has indexed: with line vectors
    python bench/review_planted_eval.py DIR... --compare   # lexical and --index side by side

The review runs through the CLI's ``--json`` (``memdeck -w DIR review --json --full``, plus ``--all`` when the
review's ``--help`` offers one) in a throwaway ``MEMDECK_HOME``, read-only. With ``--index`` each set is first
indexed in that same home with the default model (``memdeck -w DIR index``), so the review also compares the
index's line vectors (``[review] use_vectors``), as it does for a user who has indexed. Matching and scoring rules:
``tests/data/review_labels/SPEC.md``. Per set and kind it reports planted found / planted, findings, precision,
the unmatched findings, findings touching trap lines and findings per 1,000 statements.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
KINDS = ("duplicate", "conflict", "promote")
NOW = "2026-03-31T12:00:00"

Line = tuple[str, int]


def _cli(args: list[str], home: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, MEMDECK_HOME=home, MEMDECK_NOW=NOW, PYTHONPATH=str(REPO), NO_COLOR="1")
    env.pop("MEMDECK_WORKSPACE", None)
    return subprocess.run([sys.executable, "-m", "memdeck", *args], capture_output=True, text=True, env=env,
                          cwd=str(REPO), check=False)


def review_flags(home: str, shown: bool = False) -> list[str]:
    """``--json --full``, and ``--all`` when ``memdeck review --help`` lists it (findings it would hide) unless
    ``shown`` (score only what the default view shows)."""
    help_text = _cli(["review", "--help"], home).stdout
    flags = ["--json", "--full"]
    if not shown and re.search(r"(?m)^\s*--all\b", help_text):
        flags.append("--all")
    return flags


def index_workspace(workspace: Path, home: str) -> None:
    """Index ``workspace`` in ``home`` with the default model (the index lives in the home, not the set)."""
    proc = _cli(["-w", str(workspace), "index"], home)
    if proc.returncode != 0:
        raise RuntimeError(f"memdeck index failed on {workspace} ({proc.returncode}): {proc.stderr.strip()}")


def run_review(workspace: Path, shown: bool = False, index: bool = False) -> dict[str, Any]:
    """The review's JSON on ``workspace`` (a fresh data dir each time, so no cache or dismissal carries over;
    ``index``: indexed there first, so the review has line vectors)."""
    with tempfile.TemporaryDirectory(prefix="memdeck-eval-") as home:
        if index:
            index_workspace(workspace, home)
        proc = _cli(["-w", str(workspace), "review", *review_flags(home, shown)], home)
        if proc.returncode != 0:
            raise RuntimeError(f"memdeck review failed on {workspace} ({proc.returncode}): {proc.stderr.strip()}")
        report: dict[str, Any] = json.loads(proc.stdout)
        return report


def _covers(finding: dict[str, Any], line: Line) -> bool:
    path, n = line
    return any(it["path"] == path and it["startLine"] <= n <= it.get("endLine", it["startLine"])
               for it in finding["items"])


def _as_line(ref: list[Any]) -> Line:
    return (str(ref[0]), int(ref[1]))


def planted_lines(kind: str, label: dict[str, Any]) -> list[Line]:
    """The lines a finding must cover to match ``label``."""
    if kind == "conflict":
        return [_as_line(label["old"]), _as_line(label["new"])]
    return [_as_line(ref) for ref in label["items"]]


def matches(finding: dict[str, Any], kind: str, label: dict[str, Any]) -> bool:
    return finding["kind"] == kind and all(_covers(finding, line) for line in planted_lines(kind, label))


def _cite(item: dict[str, Any]) -> str:
    start, end = item["startLine"], item.get("endLine", item["startLine"])
    return f"{item['path']}#L{start}" + (f"-L{end}" if end != start else "")


def _cited_line(text: str, marker: str) -> Line | None:
    m = re.search(re.escape(marker) + r"\s+(\S+?)#L(\d+)", text)
    return (m.group(1), int(m.group(2))) if m else None


def _offers_delete(finding: dict[str, Any]) -> bool:
    return bool(re.search(r"\bdelete\b", str(finding.get("suggestion", "")), re.I))


def _section(finding: dict[str, Any]) -> str | None:
    m = re.search(r"§\s*(.+?)\s*$", str(finding.get("suggestion", "")))
    return m.group(1) if m else None


def _secondary(kind: str, finding: dict[str, Any], label: dict[str, Any], checks: dict[str, list[int]]) -> None:
    """Add [agree, checked] counts for the checks of SPEC.md's last paragraph."""
    def tick(name: str, ok: bool) -> None:
        pair = checks.setdefault(name, [0, 0])
        pair[0] += int(ok)
        pair[1] += 1

    if kind == "conflict":
        current = finding.get("current")
        items = finding["items"]
        ok = isinstance(current, int) and 0 <= current < len(items) and _covers(
            {"items": [items[current]]}, _as_line(label["new"]))
        tick("direction", ok)
    elif kind == "duplicate":
        offers = _offers_delete(finding)
        tick("delete", offers == bool(label["delete_ok"]))
        if offers and label.get("keep"):
            kept = _cited_line(str(finding.get("suggestion", "")), "keep")
            tick("keep", kept is not None and _covers({"items": [{"path": kept[0], "startLine": kept[1]}]},
                                                      _as_line(label["keep"])))
    elif kind == "promote":
        sec = _section(finding)
        tick("section", sec is not None and sec.strip().casefold() == str(label["section"]).strip().casefold())


def _line_count(workspace: Path) -> int:
    files = [workspace / "MEMORY.md", workspace / "USER.md", *sorted((workspace / "memory").rglob("*.md"))]
    return sum(1 for f in files if f.is_file() for line in f.read_text(encoding="utf-8").splitlines() if line.strip())


def score(workspace: Path, labels: dict[str, Any], report: dict[str, Any]) -> dict[str, Any]:
    """Score one review ``report`` against ``labels`` (SPEC.md's rules)."""
    findings: list[dict[str, Any]] = report.get("findings", [])
    stats = report.get("stats") or {}
    statements = stats.get("statements")
    denom_name, denom = ("statements", int(statements)) if statements else ("lines", _line_count(workspace))
    traps = [(_as_line(t[:2]), str(t[2])) for t in labels.get("traps", [])]
    touched: dict[str, list[str]] = {}
    kinds: dict[str, Any] = {}
    for kind in KINDS:
        planted = labels.get(kind, [])
        mine = [f for f in findings if f["kind"] == kind]
        found: list[str] = []
        checks: dict[str, list[int]] = {}
        for label in planted:
            hits = [f for f in mine if matches(f, kind, label)]
            if hits:
                found.append(label["id"])
                best = max(hits, key=lambda f: float(f.get("score", 0)))
                _secondary(kind, best, label, checks)
        matched = [f for f in mine if any(matches(f, kind, label) for label in planted)]
        unmatched = [f for f in mine if f not in matched]
        trap_findings = []
        for f in mine:
            hit = [f"{p}#L{n}" for (p, n), _why in traps if _covers(f, (p, n))]
            if hit:
                trap_findings.append(f["id"])
                for cite in hit:
                    touched.setdefault(cite, []).append(f["id"])
        kinds[kind] = {
            "planted": len(planted),
            "found": len(found),
            "recall": round(len(found) / len(planted), 3) if planted else None,
            "missed": [label["id"] for label in planted if label["id"] not in found],
            "findings": len(mine),
            "matched_findings": len(matched),
            "precision": round(len(matched) / len(mine), 3) if mine else None,
            "unmatched": [{"id": f["id"], "items": [_cite(it) for it in f["items"]],
                           "texts": [it.get("text", "")[:140] for it in f["items"]],
                           "suggestion": f.get("suggestion", "")} for f in unmatched],
            "trap_findings": len(trap_findings),
            "per_1k": round(1000 * len(mine) / denom, 2) if denom else None,
            "checks": {name: {"agree": a, "checked": c} for name, (a, c) in checks.items()},
        }
    return {
        "set": workspace.name,
        "path": str(workspace),
        "findings": len(findings),
        "per_1k_of": denom_name,
        "count": denom,
        "per_1k": round(1000 * len(findings) / denom, 2) if denom else None,
        "kinds": kinds,
        "traps": {"total": len(traps), "touched": len(touched),
                  "lines": [{"line": cite, "findings": ids} for cite, ids in sorted(touched.items())]},
    }


def evaluate(dirs: list[Path], shown: bool = False, index: bool = False) -> dict[str, Any]:
    """Run and score every set (``shown``: the default view only; ``index``: with line vectors); ``total`` sums
    the counts over the sets."""
    sets = []
    for d in dirs:
        labels = json.loads((d / "labels.json").read_text(encoding="utf-8"))
        sets.append(score(d, labels, run_review(d, shown, index)))
    total: dict[str, Any] = {}
    for kind in KINDS:
        planted = sum(s["kinds"][kind]["planted"] for s in sets)
        found = sum(s["kinds"][kind]["found"] for s in sets)
        nf = sum(s["kinds"][kind]["findings"] for s in sets)
        nm = sum(s["kinds"][kind]["matched_findings"] for s in sets)
        total[kind] = {"planted": planted, "found": found, "findings": nf, "matched_findings": nm,
                       "recall": round(found / planted, 3) if planted else None,
                       "precision": round(nm / nf, 3) if nf else None,
                       "trap_findings": sum(s["kinds"][kind]["trap_findings"] for s in sets)}
    return {"sets": sets, "total": total, "now": NOW, "index": index}


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def render(result: dict[str, Any]) -> str:
    out = []
    for s in result["sets"]:
        out.append(f"== {s['set']}: {s['findings']} findings, {s['count']} {s['per_1k_of']} "
                   f"({_fmt(s['per_1k'])} per 1k); traps touched {s['traps']['touched']}/{s['traps']['total']}")
        out.append(f"   {'kind':<10} {'found':>7} {'findings':>8} {'prec':>5} {'traps':>5} {'per1k':>6}  checks")
        for kind in KINDS:
            k = s["kinds"][kind]
            checks = " ".join(f"{n} {c['agree']}/{c['checked']}" for n, c in k["checks"].items())
            out.append(f"   {kind:<10} {k['found']:>3}/{k['planted']:<3} {k['findings']:>8} {_fmt(k['precision']):>5} "
                       f"{k['trap_findings']:>5} {_fmt(k['per_1k']):>6}  {checks}")
            if k["missed"]:
                out.append(f"     missed: {', '.join(k['missed'])}")
            for u in k["unmatched"]:
                out.append(f"     unmatched {u['id']}: {' + '.join(u['items'])}")
        for t in s["traps"]["lines"]:
            out.append(f"     trap {t['line']} in {', '.join(t['findings'])}")
    out.append("== total")
    for kind in KINDS:
        t = result["total"][kind]
        out.append(f"   {kind:<10} found {t['found']}/{t['planted']}, {t['findings']} findings, precision "
                   f"{_fmt(t['precision'])}, {t['trap_findings']} touching traps")
    return "\n".join(out)


def _finding_keys(s: dict[str, Any], kind: str) -> dict[str, str]:
    """The unmatched findings of one set and kind by what they cite (their ids differ between runs)."""
    return {" + ".join(u["items"]): u["id"] for u in s["kinds"][kind]["unmatched"]}


def render_compare(lexical: dict[str, Any], indexed: dict[str, Any]) -> str:
    """Lexical vs ``--index``, per set and kind: found/planted, findings, precision, trap findings, unmatched; then
    the planted findings only one of them found and the unmatched findings only one of them made."""
    out = [f"{'set':<14} {'kind':<10} {'found lex → idx':>16} {'findings':>10} {'precision':>12} {'traps':>7} "
           f"{'unmatched':>10}"]

    def row(name: str, kind: str, a: dict[str, Any], b: dict[str, Any], unmatched: tuple[int, int]) -> str:
        return (f"{name:<14} {kind:<10} {a['found']:>3}/{a['planted']:<3} → {b['found']:>3}/{b['planted']:<3} "
                f"{a['findings']:>4} → {b['findings']:<3} {_fmt(a['precision']):>5} → {_fmt(b['precision']):<4} "
                f"{a['trap_findings']:>2} → {b['trap_findings']:<2} {unmatched[0]:>3} → {unmatched[1]:<3}")

    notes = []
    for a, b in zip(lexical["sets"], indexed["sets"], strict=True):
        for kind in KINDS:
            ka, kb = a["kinds"][kind], b["kinds"][kind]
            out.append(row(a["set"], kind, ka, kb, (len(ka["unmatched"]), len(kb["unmatched"]))))
            gained = sorted(set(ka["missed"]) - set(kb["missed"]))
            lost = sorted(set(kb["missed"]) - set(ka["missed"]))
            ua, ub = _finding_keys(a, kind), _finding_keys(b, kind)
            if gained:
                notes.append(f"  {a['set']} {kind}: found only with the index: {', '.join(gained)}")
            if lost:
                notes.append(f"  {a['set']} {kind}: found only lexically: {', '.join(lost)}")
            for cites in sorted(set(ub) - set(ua)):
                texts = next(u["texts"] for u in b["kinds"][kind]["unmatched"] if " + ".join(u["items"]) == cites)
                notes.append(f"  {a['set']} {kind}: unmatched only with the index: {cites}  {texts}")
            for cites in sorted(set(ua) - set(ub)):
                notes.append(f"  {a['set']} {kind}: unmatched only lexically: {cites}")
    for kind in KINDS:
        ta, tb = lexical["total"][kind], indexed["total"][kind]
        um = (ta["findings"] - ta["matched_findings"], tb["findings"] - tb["matched_findings"])
        out.append(row("total", kind, ta, tb, um))
    return "\n".join(out + (["differences:", *notes] if notes else ["no differences in what was found"]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", type=Path, help="planted workspaces, each with a labels.json")
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    ap.add_argument("--shown", action="store_true", help="score the default view only (no --all)")
    ap.add_argument("--index", action="store_true",
                    help="index each set first (default model), so the review compares line vectors too")
    ap.add_argument("--compare", action="store_true", help="run lexical and --index, and show them side by side")
    args = ap.parse_args(argv)
    missing = [str(d) for d in args.dirs if not (d / "labels.json").is_file()]
    if missing:
        ap.error(f"no labels.json in: {', '.join(missing)}")
    dirs = [d.resolve() for d in args.dirs]
    if args.compare:
        lexical, indexed = evaluate(dirs, args.shown), evaluate(dirs, args.shown, index=True)
        both = {"lexical": lexical, "index": indexed}
        print(json.dumps(both, indent=1, ensure_ascii=False) if args.json else render_compare(lexical, indexed))
        return 0
    result = evaluate(dirs, args.shown, args.index)
    print(json.dumps(result, indent=1, ensure_ascii=False) if args.json else render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
