"""A real-shaped planted review workspace: a generated planted set inside ~120 long technical daily notes.

Usage::

    python bench/review_realshape.py --out /tmp/rs-review [--review-seed 1] [--shape-seed 11] [--notes 120]

``bench/gen_review_workspace.py --seed R`` writes the planted findings and traps (with ``labels.json``);
``bench/gen_realshape.py --seed S`` writes long engineering notes with no planted finding (status bullets,
numbered steps, code, logs, key: value lines, tables: the shape of a real agent's year of notes). This puts the
first inside the second: the planted files keep every line where it was (a note of the same day gets the
real-shaped note's body after its own; ``MEMORY.md`` gets the real-shaped long-term lines as a last section), so
``labels.json`` still holds, and every finding outside the labels is one the noise of real notes made. Score it
with ``bench/review_planted_eval.py DIR``. The same seeds give the same bytes.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import gen_realshape  # noqa: E402
import gen_review_workspace  # noqa: E402


def build(out: Path, review_seed: int, shape_seed: int, notes: int) -> tuple[int, int]:
    """Write the merged workspace to ``out``; returns (planted files, real-shaped notes merged into one)."""
    if out.exists():
        shutil.rmtree(out)
    gen_review_workspace.main(["--out", str(out), "--seed", str(review_seed)])
    merged = 0
    with tempfile.TemporaryDirectory() as tmp:
        shape = Path(tmp)
        gen_realshape.generate(shape, notes=notes, seed=shape_seed)
        for src in sorted((shape / "memory").glob("*.md")):
            dst = out / "memory" / src.name
            body = src.read_text(encoding="utf-8")
            if dst.exists():
                merged += 1
                rest = body.split("\n", 1)[1].lstrip("\n")  # (the note's "# YYYY-MM-DD" title once)
                dst.write_text(dst.read_text(encoding="utf-8").rstrip("\n") + "\n\n" + rest, encoding="utf-8")
            else:
                dst.write_text(body, encoding="utf-8")
        lines = shape.joinpath("MEMORY.md").read_text(encoding="utf-8").split("\n", 1)[1].strip("\n")
        memory = out / "MEMORY.md"
        memory.write_text(memory.read_text(encoding="utf-8").rstrip("\n") + "\n\n## Engineering log\n\n" + lines
                          + "\n", encoding="utf-8")
    planted = sum(1 for _ in out.rglob("*.md"))
    return planted, merged


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--review-seed", type=int, default=1, help="bench/gen_review_workspace.py's seed")
    p.add_argument("--shape-seed", type=int, default=11, help="bench/gen_realshape.py's seed")
    p.add_argument("--notes", type=int, default=120)
    args = p.parse_args(argv)
    files, merged = build(args.out, args.review_seed, args.shape_seed, args.notes)
    print(f"{files} files in {args.out} ({merged} planted notes hold a real-shaped note's body too)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
