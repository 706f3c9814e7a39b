"""Rewrite the output of every console example in README.md from real runs against the bundled demo.

Run: ``python scripts/update_readme_examples.py [--check] [--no-model]``. Every ``$ memdeck …`` command of the
README's ```` ```console ```` blocks runs in order, in one fresh ``MEMDECK_HOME``, exactly as
``tests/test_readme_examples.py`` runs it (``scripts/readme_examples.py`` says how: pinned day, UTC, width 100),
and the lines after it are replaced by what it printed. A README line that still matches is kept as written, so
its ``…`` placeholders (timings, a flush's clock time) survive; a line that no longer matches is replaced by the
real output, and the script names it — put a ``…`` back in it by hand if that part is volatile.

``--no-model`` runs only the blocks that need no embedding model (seconds instead of an indexing of the demo);
``--check`` changes nothing and exits 1 when an example's output differs.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scripts.readme_examples import README, differences, merged, parse, runs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="report differences, write nothing")
    parser.add_argument("--no-model", action="store_true", help="only the examples that need no embedding model")
    args = parser.parse_args()
    text = README.read_text(encoding="utf-8")
    lines = text.split("\n")
    examples = parse(text)
    home = Path(tempfile.mkdtemp(prefix="memdeck-readme-"))
    replacements: list[tuple[int, int, list[str]]] = []
    changed = 0
    try:
        for command, actual in runs(examples, home, with_model=not args.no_model):
            problems = differences(command.expected, actual)
            if problems:
                changed += 1
                print(f"README.md:{command.line + 1}: $ {command.text}", *problems, sep="\n")
            replacements.append((command.first, command.count, merged(command.expected, actual)))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    if args.check:
        print(f"{changed} example command(s) differ" if changed else "every example matches")
        return 1 if changed else 0
    for first, count, new in sorted(replacements, reverse=True):  # from the bottom: earlier line numbers hold
        lines[first:first + count] = new
    README.write_text("\n".join(lines), encoding="utf-8")
    print(f"README.md: {len(replacements)} command outputs written, {changed} changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
