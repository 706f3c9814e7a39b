"""Speech in OpenClaw user turns, scored against a labelled set written from a spec, not from the rules.

Usage::

    python bench/speech_eval.py [--json] [--function speech_text|strip_injected] [--turns FILE] [--show-misses]

Reads ``tests/data/speech_labels/turns.jsonl`` (what each turn is, what the person typed; the labelling spec is
``SPEC.md`` beside it), runs each turn's text through the engine's public speech filter and reports, per turn,
whether the speech is exactly right, and the line-level precision / recall of the kept lines: a kept line that is
not a line of the person's words is a false positive (injected text kept), a line of the person's words that is
not kept is a false negative (speech dropped). Totals are given overall and per injected kind, plus the injected
lines kept from turns that have no speech at all. Always exits 0; ``tests/test_speech_labels.py`` holds the floors.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

TURNS = REPO / "tests" / "data" / "speech_labels" / "turns.jsonl"

_BLANK_RUN = re.compile(r"\n{3,}")


def normalise(text: str) -> str:
    """Trailing spaces off every line, runs of blank lines to one, outer blank lines off (SPEC.md, Scoring)."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    return _BLANK_RUN.sub("\n\n", "\n".join(lines)).strip("\n")


def kept_lines(text: str) -> list[str]:
    """The non-blank lines of a normalised text."""
    return [line for line in normalise(text).split("\n") if line.strip()]


def load_turns(path: Path = TURNS) -> list[dict[str, Any]]:
    """The labelled turns, one JSON object a line."""
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def speech_function(name: str = "speech_text") -> Callable[[str], str]:
    """The engine's public speech filter for a user turn's text.

    ``speech_text`` needs the role besides the text; a labelled turn is always a ``user`` turn with no
    provenance, so it is called as ``speech_text("user", text)``. ``strip_injected`` takes the text alone.
    """
    from engine.sessions import speech

    if name == "speech_text":
        return lambda text: speech.speech_text("user", text)
    if name == "strip_injected":
        return speech.strip_injected
    raise ValueError(f"unknown function {name!r}")


def score_turn(turn: dict[str, Any], got: str) -> dict[str, Any]:
    """One turn's result: exact match and line counts (multiset match of kept lines against the label)."""
    want_lines = Counter(kept_lines(turn["speech"]))
    got_lines = Counter(kept_lines(got))
    tp = sum((want_lines & got_lines).values())
    fp = sum((got_lines - want_lines).values())
    fn = sum((want_lines - got_lines).values())
    return {
        "id": turn["id"],
        "kinds": list(turn["kinds"]),
        "exact": normalise(got) == normalise(turn["speech"]),
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "injected_only": normalise(turn["speech"]) == "",
        "got": got,
        "want": turn["speech"],
    }


def _totals(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    rows = list(rows)
    tp = sum(r["tp"] for r in rows)
    fp = sum(r["fp"] for r in rows)
    fn = sum(r["fn"] for r in rows)
    exact = sum(1 for r in rows if r["exact"])
    return {
        "turns": len(rows),
        "exact": exact,
        "exact_rate": exact / len(rows) if rows else 0.0,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        # No kept line at all is a precision of 1 (nothing injected was kept); no speech line is a recall of 1.
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": tp / (tp + fn) if tp + fn else 1.0,
    }


def evaluate(
    turns: list[dict[str, Any]] | None = None, fn: Callable[[str], str] | None = None
) -> dict[str, Any]:
    """Score every turn; totals overall, per kind (``none`` = typed words only), and for injected-only turns."""
    turns = load_turns() if turns is None else turns
    fn = speech_function() if fn is None else fn
    rows = [score_turn(t, fn(t["text"])) for t in turns]
    kinds = sorted({k for r in rows for k in r["kinds"]})
    per_kind = {k: _totals(r for r in rows if k in r["kinds"]) for k in kinds}
    per_kind["none"] = _totals(r for r in rows if not r["kinds"])
    injected_only = [r for r in rows if r["injected_only"]]
    return {
        "overall": _totals(rows),
        "per_kind": per_kind,
        "injected_only": {
            "turns": len(injected_only),
            "lines_kept": sum(r["fp"] for r in injected_only),
            "turns_with_lines_kept": sorted(r["id"] for r in injected_only if r["fp"]),
        },
        "exact_ids": sorted(r["id"] for r in rows if r["exact"]),
        "turns": rows,
    }


def _pct(x: float) -> str:
    return f"{100 * x:5.1f}%"


def _print_report(result: dict[str, Any], show_misses: bool) -> None:
    o = result["overall"]
    print(f"turns {o['turns']}  exact {o['exact']}/{o['turns']} ({_pct(o['exact_rate']).strip()})  "
          f"line precision {_pct(o['precision']).strip()}  recall {_pct(o['recall']).strip()}  "
          f"(tp {o['tp']} fp {o['fp']} fn {o['fn']})")
    io = result["injected_only"]
    print(f"injected-only turns {io['turns']}: {io['lines_kept']} injected lines kept "
          f"in {len(io['turns_with_lines_kept'])} turns")
    print()
    print(f"{'kind':20} {'turns':>5} {'exact':>6} {'prec':>7} {'recall':>7} {'fp':>4} {'fn':>4}")
    for kind, t in result["per_kind"].items():
        print(f"{kind:20} {t['turns']:5d} {t['exact']:6d} {_pct(t['precision']):>7} {_pct(t['recall']):>7} "
              f"{t['fp']:4d} {t['fn']:4d}")
    print()
    for r in result["turns"]:
        mark = "ok " if r["exact"] else "MISS"
        print(f"{mark} {r['id']:32} tp {r['tp']:2d} fp {r['fp']:2d} fn {r['fn']:2d}  {','.join(r['kinds'])}")
        if show_misses and not r["exact"]:
            print("     want: " + json.dumps(normalise(r["want"]), ensure_ascii=False))
            print("     got:  " + json.dumps(normalise(r["got"]), ensure_ascii=False))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--json", action="store_true", help="print the whole result as JSON")
    ap.add_argument("--function", default="speech_text", choices=["speech_text", "strip_injected"])
    ap.add_argument("--turns", type=Path, default=TURNS)
    ap.add_argument("--show-misses", action="store_true", help="print wanted and got speech of each miss")
    args = ap.parse_args(argv)
    result = evaluate(load_turns(args.turns), speech_function(args.function))
    if args.json:
        json.dump(result, sys.stdout, ensure_ascii=False, indent=2)
        print()
    else:
        _print_report(result, args.show_misses)
    return 0


if __name__ == "__main__":
    sys.exit(main())
