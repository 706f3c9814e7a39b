"""The inputs of tests/data/bootstrap/expected.json: deterministic bootstrap files, cut by OpenClaw 2026.9.6's own
``buildBootstrapContextFiles`` (dist/bootstrap-*.mjs) to write that file (see its ``_about``)."""

from __future__ import annotations

import random
from typing import Any

WORDS = ("memory backup runs nightly at 02:00 the default model is sonnet time zone Europe/Belgrade 🙂 日本語のメモ "
         "😀 must never commit secrets always run tests").split()
SHAPES = (  # sections, bullets per section, bootstrapMaxChars, bootstrapTotalMaxChars, AGENTS.md chars (0: missing)
    (3, 5, 20000, 60000, 0), (30, 20, 20000, 60000, 0), (30, 20, 5000, 60000, 3000), (40, 12, 20000, 30000, 25000),
    (10, 10, 200, 60000, 0), (30, 20, 20000, 60000, 21000), (5, 5, 50, 120, 0), (40, 20, 20000, 22000, 5000),
    (12, 8, 3000, 9000, 2500), (2, 3, 20000, 60000, 100),
)


def note(sections: int, per: int, seed: int) -> str:
    r = random.Random(seed)
    out = ["# MEMORY"]
    for s in range(sections):
        out += ["", f"## Section {s} {r.choice(WORDS)}"]
        out += ["- " + " ".join(r.choice(WORDS) for _ in range(r.randint(3, 25))) for _ in range(per)]
    return "\n".join(out) + "\n\n"


def agents(chars: int) -> str | None:
    if not chars:
        return None
    return ("- must run tests before commit\nSome prose line here.\n- never push to main\n" * (chars // 60 + 1))[:chars]


def cases() -> list[dict[str, Any]]:
    return [{"files": {"AGENTS.md": agents(a), "SOUL.md": "Be kind.\n", "IDENTITY.md": None,
                       "USER.md": note(8, 10, i + 100), "MEMORY.md": note(ns, per, i)},
             "max": mx, "total": tot}
            for i, (ns, per, mx, tot, a) in enumerate(SHAPES)]
