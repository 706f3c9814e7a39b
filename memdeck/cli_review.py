"""The ``memdeck review`` command: duplicates, conflicts and facts to promote, as text or JSON (read-only)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import date
from typing import Any

import click

from engine.display import plural
from engine.errors import MemdeckError
from memdeck.output import EXIT_OK, echo_json, fail, say_lines

TITLES = {"duplicate": "Duplicates", "conflict": "Conflicts", "promote": "Worth promoting to MEMORY.md",
          "budget": "Cut at a session's start: move out of MEMORY.md/USER.md"}


class _Day(click.ParamType[date]):
    """A ``YYYY-MM-DD`` day."""

    name = "YYYY-MM-DD"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> date:
        """``value`` as a date, or a usage error that says the format."""
        if isinstance(value, date):
            return value
        try:
            return date.fromisoformat(str(value).strip())
        except ValueError:
            self.fail(f"{str(value)[:40]!r} is not a date (expected YYYY-MM-DD)", param, ctx)


def format_report(report: Any) -> list[str]:
    """The text output: findings grouped by kind, each statement cited as ``path#L4``."""
    lines: list[str] = []
    by_kind: dict[str, list[Any]] = {}
    for f in report.findings:
        by_kind.setdefault(f.kind, []).append(f)
    for kind in TITLES:
        found = by_kind.get(kind, [])
        if not found:
            continue
        lines.append(f"{TITLES[kind]} ({len(found)})")
        for f in found:
            sure = "" if f.confident else "  (less sure)"
            lines.append(f"  [{f.id}] {f.score:.2f}{sure}  {f.reason}")
            for n, it in enumerate(f.items):
                held = str(getattr(f, "evidence", "")).endswith(":later")  # announced for a day still to come
                mark = (" (newer)" if held else " (current)") if f.current is not None and n == f.current else ""
                first = it.text.split("\n", 1)[0].strip()
                lines.append(f"    {it.citation}{mark}: {first[:160]}")
            lines.append(f"    → {f.suggestion}")
        lines.append("")
    hidden = len(getattr(report, "hidden", ()))
    stats = (f"{plural(report.files, 'file')}, {plural(report.statements, 'statement')}"
             f" ({report.compared} compared{', incremental' if report.incremental else ''})"
             f" in {report.seconds:.2f} s")
    if report.dismissed:
        stats += f"; {report.dismissed} dismissed (hidden)"
    if hidden:
        stats += f"; {hidden} less sure (measured precision under .80) not shown: --all shows them"
    lines.append(("No findings: " if not report.findings else f"{plural(len(report.findings), 'finding')}: ")
                 + stats)
    lines.extend(f"warning: {w}" for w in report.warnings)
    return lines


def format_action(done: Any) -> list[str]:
    """The text output of ``review apply``/``review undo``: what was done, the line written, any warning."""
    lines = [done.summary]
    if done.line:
        lines.append(f"  {done.line}")
    lines.extend(f"warning: {w}" for w in done.warnings)
    return lines


def action_json(done: Any) -> dict[str, Any]:
    """``{"ok": true, "action", "summary", "files", "line", "findingId", "warnings"}``."""
    return {"ok": True, "action": done.action, "summary": done.summary, "files": list(done.files),
            "line": done.line, "findingId": done.finding_id, "warnings": list(done.warnings)}


def build_review_command(make_engine: Callable[[bool], Any]) -> click.Command:
    """The ``review`` command (with ``apply`` and ``undo``); ``make_engine(as_json)`` opens the engine (or exits
    with the error)."""

    @click.group("review", invoke_without_command=True)
    @click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
    @click.option("--kind", type=click.Choice(["duplicate", "conflict", "promote", "budget"]), default=None,
                  help="Only this kind of finding.")
    @click.option("--since", type=_Day(), default=None,
                  help="Only findings with a statement from a note dated on/after this day.")
    @click.option("--full", is_flag=True, help="Compare everything again (ignore the incremental cache).")
    @click.option("--all", "show_all", is_flag=True,
                  help="Every finding, also the less sure ones (a score, the measured precision of the finding's "
                       "evidence, under .80); by default only confident findings are shown.")
    @click.pass_context
    def review(ctx: click.Context, as_json: bool, kind: str | None, since: date | None, full: bool,
               show_all: bool) -> None:
        """Find duplicates, conflicting facts (the newer marked current) and durable facts in daily notes that
        MEMORY.md does not hold yet. Read-only: no memory file changes. A finding's score is the measured
        precision of its kind of evidence; only confident ones (.80 or more) are shown unless --all.

        Exits 0 with findings or without. `review apply ID --action …` acts on a finding; `review undo`
        undoes the last action.
        """
        if ctx.invoked_subcommand is not None:
            return
        engine = make_engine(as_json)
        try:
            report = engine.review(kind=kind, since=since, full=full, show_all=show_all)
        except (MemdeckError, OSError, ValueError) as exc:
            fail(f"review failed: {exc}", as_json)
        finally:
            engine.close()
        if as_json:
            echo_json(report.to_json())
        else:
            say_lines(format_report(report))
        sys.exit(EXIT_OK)

    @review.command("apply")
    @click.argument("finding_id", metavar="ID")
    @click.option("--action", "action", required=True,
                  type=click.Choice(["promote", "supersede", "delete", "merge", "move", "dismiss"]),
                  help="What to do: a duplicate takes delete|merge|dismiss, a conflict supersede|merge|dismiss, "
                       "a promotion promote|dismiss, an over-budget section move|dismiss.")
    @click.option("--item", type=click.IntRange(min=1), default=None,
                  help="The statement to act on, counted from 1 as listed (default: promote's statement, a "
                       "duplicate's last copy, every older statement of a conflict).")
    @click.option("--section", default=None,
                  help="promote: the ## section (made when missing; default the suggested one, else the first).")
    @click.option("--target", type=click.Choice(["MEMORY.md", "USER.md"]), default=None,
                  help="promote: the file (default the suggested one).")
    @click.option("--text", default=None, help="promote: the wording; merge: the merged line (default: the longest statement, "
                       "only when it holds every word and value of the others).")
    @click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
    def apply(finding_id: str, action: str, item: int | None, section: str | None, target: str | None,
              text: str | None, as_json: bool) -> None:
        """Act on finding ID (from `memdeck review`): the Review screen's actions, written atomically and
        undoable with `memdeck review undo`. Exits 1, writing nothing, for an unknown or stale id, an action its
        kind does not take, or a statement that changed since.
        """
        _act(make_engine, as_json, "review apply", lambda engine: engine.review_apply(
            finding_id.strip(), action, None if item is None else item - 1, section, target, text))

    @review.command("undo")
    @click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
    def undo(as_json: bool) -> None:
        """Undo the last review action (CLI or Review screen): its files back byte for byte, or the dismissal
        forgotten. Exits 1 when nothing is recorded or a file changed since.
        """
        _act(make_engine, as_json, "review undo", lambda engine: engine.review_undo())

    return review


def _act(make_engine: Callable[[bool], Any], as_json: bool, what: str, call: Callable[[Any], Any]) -> None:
    """Run one review action (or its undo) on a fresh engine and report it; exit 1, writing nothing, on failure."""
    engine = make_engine(as_json)
    try:
        done = call(engine)
    except (MemdeckError, OSError, ValueError) as exc:
        fail(f"{what} failed: {exc}", as_json)
    finally:
        engine.close()
    if as_json:
        echo_json(action_json(done))
    else:
        say_lines(format_action(done))
    sys.exit(EXIT_OK)


def register(group: click.Group, make_engine: Callable[[bool], Any]) -> None:
    """Add ``review`` (and ``review apply``/``review undo``) to a click group."""
    group.add_command(build_review_command(make_engine))
