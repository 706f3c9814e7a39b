"""Why the review misses planted findings: for each missed label of a labelled workspace, what stopped it.

Usage::

    python bench/review_misses.py DIR [DIR…] [--quiet]

Per missed label it prints its statements (origin, one-off, inert, typed values) and the first gate that
rejects the pair (no statement at the line, inert, one-off, values, similarity…), then a count of causes per
kind. Read-only; lexical review (no index), ``MEMDECK_NOW`` as in ``review_planted_eval.py``. Never run it on
the held-out sets to tune (tests/data/review_labels/SPEC.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

os.environ.setdefault("MEMDECK_NOW", "2026-03-31T12:00:00")

from bench.review_planted_eval import matches  # noqa: E402
from engine.config import load_config  # noqa: E402
from engine.review import detect  # noqa: E402
from engine.review.detect import STRICT_KINDS, Comparer, _differing, promote_score  # noqa: E402
from engine.review.run import run_review  # noqa: E402
from engine.review.statements import CURATED, Statement, read_statements, review_files  # noqa: E402


def _at(statements: list[Statement], path: str, line: int) -> Statement | None:
    for s in statements:
        if s.path == path and s.start_line <= line <= s.end_line:
            return s
    return None


def why_pair(c: Comparer, a: Statement, b: Statement, kind: str) -> str:
    """The first gate of ``Comparer.compare`` that stops the pair (or what it found)."""
    if a.path == b.path:
        return "same file"
    if a.key in c.inert or b.key in c.inert:
        return f"inert ({a.origin}/{b.origin})"
    older, newer = (a, b) if (a.order, a.path) <= (b.order, b.path) else (b, a)
    res = c.compare(a, b)
    if res is not None:
        return f"found as {res.kind} ({res.evidence or res.reason}) — {res.reason}"
    owners = c.owner(older.key), c.owner(newer.key)
    if owners[0] != owners[1] and not c._same_person(older.key, newer.key, owners):
        return f"owners differ {owners}"
    diffs = _differing(c.values(older.key), c.values(newer.key))
    fo, fn = c.feats[older.key], c.feats[newer.key]
    sim = c.similarity(older, newer)
    shared = c.plain_words(older.key) & c.plain_words(newer.key)
    info = f"sim {sim:.2f}, shared {sorted(shared)}, diffs {[(k, sorted(x), sorted(y)) for k, x, y in diffs]}"
    if kind == "conflict":
        return why_conflict(c, older, newer, diffs) + "; " + info
    if any(k in STRICT_KINDS for k, _, _ in diffs):
        return f"strict value differs; {info}"
    if fo.negated != fn.negated:
        return f"negation differs; {info}"
    if c.one_off[older.key] != c.one_off[newer.key]:
        return f"one-off differs ({c.one_off[older.key]}/{c.one_off[newer.key]}); {info}"
    if not shared:
        return f"no shared plain word; {info}"
    if sim < c.config.duplicate_similarity:
        return f"similarity below {c.config.duplicate_similarity}; {info}"
    return f"other gate; {info}"


def why_conflict(c: Comparer, older: Statement, newer: Statement, diffs: list[Any]) -> str:
    """The first gate of ``Comparer._conflict`` that stops the pair."""
    fo, fn = c.feats[older.key], c.feats[newer.key]
    if c.one_off[older.key]:
        return "conflict: older one-off"
    if c.one_off[newer.key] and not (fn.change and not detect._EVENT_WORDS.search(detect._ASIDE.sub(" ", newer.clean))):
        return "conflict: newer one-off (event words or no change cue)"
    diffs = [d for d in diffs if d[0] != "ref"]
    if not diffs and fo.negated == fn.negated and not fn.change and not (
            detect._REVERSED.search(newer.clean) and not detect._REVERSED.search(older.clean)):
        return "conflict: no differing value"
    po, pn = c.plain_words(older.key), c.plain_words(newer.key)
    if c.idf.total(po & pn) < c.config.conflict_min_shared:
        return f"conflict: shared plain weight {c.idf.total(po & pn):.2f} < min"
    if older.kind == CURATED:
        label = detect._CURATED_LABEL.match(older.clean)
        if label is not None:
            lf = detect.features(label.group(1))
            wanted = lf.content - (lf.values.get("name", frozenset()) - c.common) - c.principal
            if wanted and not wanted <= fn.content:
                return f"conflict: curated label {sorted(wanted)} not in newer"
    so, sn = c._subject(older, newer, diffs)
    overlap, _ = detect.weighted_overlap(so, sn, c.idf)
    jac = detect.weighted_jaccard(so, sn, c.idf)
    sn_said = sn & detect._said(newer.clean, fn) if fn.change else sn
    so_named = so - (c.names[older.key] - c.common - c.names[newer.key])
    fewer = min(len(so_named - sn), len(sn_said - so))
    lone = fewer == 0 or (fewer == 1 and max(len(so), len(sn)) >= 6)
    nv = c._new_value(newer, fo, fn, diffs) if diffs else None
    return (f"conflict: value gate overlap {overlap:.2f} jac {jac:.2f} lone {lone} new_value {nv} "
            f"so-sn {sorted(so - sn)} sn-so {sorted(sn - so)}")


def diagnose(ws: Path, quiet: bool = False) -> Counter[str]:
    labels: dict[str, Any] = json.loads((ws / "labels.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as home:
        cfg = load_config(workspace=ws, home=Path(home), config_path=Path(home) / "none.toml")
        report = run_review(cfg, full=True, show_all=True)
        findings = [{"kind": f.kind, "items": [{"path": i.path, "startLine": i.start_line, "endLine": i.end_line}
                                               for i in f.items]} for f in report.findings]
        by_file, _ = read_statements(cfg, review_files(cfg))
    statements = [s for rel in by_file for s in by_file[rel]]
    c = Comparer(statements, cfg.review)
    causes: Counter[str] = Counter()
    for kind in ("duplicate", "conflict", "promote"):
        for label in labels.get(kind, []):
            if any(matches(f, kind, label) for f in findings):
                continue
            refs = [label["old"], label["new"]] if kind == "conflict" else label["items"]
            found = [_at(statements, p, n) for p, n in refs]
            print(f"\n[{ws.name}] MISSED {kind} {label['id']}")
            for (p, n), s in zip(refs, found, strict=True):
                if s is None:
                    print(f"   {p}#L{n}: NO STATEMENT")
                    continue
                print(f"   {p}#L{n} [{s.origin}{' one-off' if c.one_off[s.key] else ''}"
                      f"{' inert' if s.key in c.inert else ''}] {s.clean[:110]}")
                if not quiet:
                    print(f"      values {dict((k, sorted(v)) for k, v in c.values(s.key).items())}")
            if any(s is None for s in found):
                causes[f"{kind}: no statement"] += 1
                continue
            if kind == "promote":
                s = found[0]
                assert s is not None
                got = promote_score(s, c)
                cues = c.info(s).cues
                why = f"promote_score {got}; cues rule={cues.rule!r} blocked={cues.blocked}"
                print("   →", why)
                causes[f"promote: {'no cue' if not cues.rule else 'blocked' if cues.blocked else 'other'}"] += 1
                continue
            reasons = [why_pair(c, a, b, kind) for i, a in enumerate(found) for b in found[i + 1:]
                       if a is not None and b is not None]
            for r in reasons:
                print("   →", r)
            causes[f"{kind}: {reasons[0].split(';')[0].split('(')[0].strip()}"] += 1
    return causes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    total: Counter[str] = Counter()
    for d in args.dirs:
        total += diagnose(d, args.quiet)
    print("\n== causes")
    for cause, n in total.most_common():
        print(f"   {n:3d}  {cause}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
