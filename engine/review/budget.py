"""The review's over-budget findings: when OpenClaw cuts ``MEMORY.md`` (or ``USER.md``) at a session's start,
which sections to move out to a note that memory_search still indexes.

The rule: the file's top sections (``## `` headings; ``# `` when it has none), never the first one (what the
file opens with is what the agent reads first), the largest first (ties: the later one), one at a time until
what is left fits what OpenClaw injects of it (:mod:`engine.bootstrap`'s exact arithmetic, the pointer line that
stays behind counted). Each picked section is one finding, its action moves it to ``memory/<heading-slug>.md``
(appended when that note exists) and leaves ``- Moved to memory/<slug>.md on <day>`` under its heading; the
review's journal undoes both files. Read-only here: this module only proposes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from engine.bootstrap import BOOTSTRAP_FILES, bootstrap_budget, budget_for, read_bootstrap_file
from engine.config import Config
from engine.display import plural
from engine.markdown import HEADING, parse_blocks
from engine.review.model import Finding, ReviewItem

BUDGET_FILES = ("MEMORY.md", "USER.md")
EVIDENCE = "bootstrap-budget"  # OpenClaw's arithmetic, reproduced: not a guess, so a score of 1
_DAY_SHAPE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def js_len(text: str) -> int:
    """The length OpenClaw counts (UTF-16 code units)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def pointer_line(target: str, day: str) -> str:
    """What stays under a moved section's heading."""
    return f"- Moved to {target} on {day} (memory_search still finds it there)"


@dataclass(frozen=True)
class Section:
    """A top section of a file: its heading text and its lines ``[start, end)`` (0-based), heading included."""

    heading: str
    marker: str
    start: int
    end: int


def top_sections(text: str) -> list[Section]:
    """The file's top-level sections (``##``, else ``#`` headings; fenced code is not a heading)."""
    lines = text.split("\n")
    heads = [b for b in parse_blocks(text).leaves(HEADING) if not b.setext]
    if not heads:
        return []
    level = 2 if any(h.level == 2 for h in heads) else min(h.level for h in heads)
    out: list[Section] = []
    for i, h in enumerate(heads):
        if h.level != level:
            continue
        end = next((o.start for o in heads[i + 1:] if o.level <= level), len(lines))
        while end > h.start + 1 and not lines[end - 1].strip():
            end -= 1  # the blank lines before the next heading stay where they are
        out.append(Section(h.text.strip(), "#" * level, h.start, end))
    return out


def target_for(heading: str, taken: set[str], workspace: Path) -> str:
    """``memory/<slug>.md`` for a heading: not a daily note's name, not one picked already."""
    slug = re.sub(r"[^\w]+", "-", heading.casefold()).strip("-_")[:60] or "section"
    if _DAY_SHAPE.match(slug):
        slug = f"notes-{slug}"
    name, n = f"memory/{slug}.md", 2
    while name in taken or (workspace / name).is_dir():
        name, n = f"memory/{slug}-{n}.md", n + 1
    return name


def moved_text(text: str, section: Section, target: str, day: str = "YYYY-MM-DD") -> str:
    """``text`` with ``section``'s body replaced by its pointer line (the heading stays)."""
    lines = text.split("\n")
    lines[section.start:section.end] = [lines[section.start], pointer_line(target, day)]
    return "\n".join(lines)


def plan(contents: Mapping[str, str | None], name: str, max_chars: int, total_max: int,
         workspace: Path) -> list[tuple[Section, str, int]]:
    """The sections of ``name`` to move (with their targets and sizes) so what is left is injected whole."""
    text = contents.get(name)
    if text is None:
        return []
    sections = top_sections(text)[1:]  # never the first
    order = sorted(sections, key=lambda s: (-js_len("\n".join(text.split("\n")[s.start:s.end])), -s.start))
    picked: list[tuple[Section, str, int]] = []
    taken: set[str] = set()
    current = dict(contents)

    def cut(now: Mapping[str, str | None]) -> bool:
        f = next(f for f in budget_for(now, max_chars, total_max, workspace) if f.name == name)
        return f.truncated

    if not cut(current):
        return []
    for section in order:
        target = target_for(section.heading, taken, workspace)
        taken.add(target)
        size = js_len("\n".join(text.split("\n")[section.start:section.end]))
        picked.append((section, target, size))
        # apply the moves so far, last lines first so earlier line numbers hold
        after = text
        for s, t, _ in sorted(picked, key=lambda p: -p[0].start):
            after = moved_text(after, s, t)
        current[name] = after
        if not cut(current):
            break
    return picked


def budget_findings(config: Config) -> list[Finding]:
    """One finding per section to move out of each cut ``MEMORY.md``/``USER.md`` (none when nothing is cut)."""
    ws = config.workspace
    budget = bootstrap_budget(ws, config.agent)
    contents = {n: read_bootstrap_file(ws / n, unreadable=None) for n in BOOTSTRAP_FILES}
    findings: list[Finding] = []
    for name in BUDGET_FILES:
        f = budget.file(name)
        if f is None or not f.truncated:
            continue
        text = contents.get(name) or ""
        lines = text.split("\n")
        for section, target, size in plan(contents, name, budget.max_chars, budget.total_max_chars, ws):
            body = "\n".join(line.rstrip("\r") for line in lines[section.start:section.end])  # memdeck's lines
            heading = f"{section.marker} {section.heading}"
            item = ReviewItem(name, section.start + 1, section.end, body)
            why = "over its limit" if "per-file-limit" in f.causes else "the total limit ran out"
            reason = (f"{name} is {plural(f.chars, 'character', grouped=True)}; OpenClaw injects "
                      f"{f.injected:,} of it ({why}); move `{heading}` ({plural(size, 'character', grouped=True)}) to {target}")
            suggestion = (f"move `{heading}` (lines {section.start + 1}–{section.end}) to {target}, which "
                          f"memory_search still indexes; {name} keeps the heading and a one-line pointer")
            findings.append(Finding("budget", (item,), reason, 1.0, suggestion, evidence=EVIDENCE, target=target))
    return findings
