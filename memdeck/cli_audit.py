"""The ``memdeck audit`` command: what people said in sessions that memory does not hold yet (read-only)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import date
from typing import Any

import click

from engine.display import plural
from engine.errors import MemdeckError
from memdeck.cli_review import _Day
from memdeck.output import EXIT_OK, echo_json, fail, say_lines


def format_audit(report: Any) -> list[str]:
    """Sessions newest first, each with its verdict and its statements cited ``sessions/<agent>/<id>.jsonl#Lx``."""
    lines: list[str] = []
    for s in report.sessions:
        title = f" {s.title}" if s.title else ""
        lines.append(f"{s.session_id[:8]}{title} ({(s.last_activity or '')[:16]})")
        lines.append(f"  {s.verdict}")
        for c in s.compactions:
            tokens = f" {plural(c.tokens_before, 'token', grouped=True)} before;" if c.tokens_before else ""
            lines.append(f"    compaction {s.rel}#L{c.line} ({(c.at or '')[:16]}):{tokens}"
                         f" {'flushed' if c.flushed else 'no flush'}")
        for st in s.statements:
            lines.append(f"    - {st.text}  ({st.citation}, {st.kind})")
        lines.append("")
    lines.append(f"{plural(report.statements, 'statement')} not in memory in {plural(len(report.sessions), 'session')}"
                 f" ({report.scanned} audited, {plural(report.unflushed_compactions, 'compaction')} without a flush)"
                 f" in {report.seconds:.2f} s")
    lines.extend(f"warning: {w}" for w in report.warnings)
    return lines


def build_audit_command(make_engine: Callable[[bool], Any]) -> click.Command:
    @click.command("audit")
    @click.option("--since", type=_Day(), default=None, help="Only sessions active on/after this day.")
    @click.option("--session", "session", default=None, help="Only this session (its id or a prefix).")
    @click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
    def audit(since: date | None, session: str | None, as_json: bool) -> None:
        """List what people said in sessions that memory does not hold yet, per session against its compactions
        and flushes. Read-only."""
        engine = make_engine(as_json)
        try:
            report = engine.audit(since=since, session=session)
        except (MemdeckError, OSError, ValueError) as exc:
            fail(f"audit failed: {exc}", as_json)
        finally:
            engine.close()
        if as_json:
            echo_json(report.to_json())
        else:
            say_lines(format_audit(report))
        sys.exit(EXIT_OK)

    return audit


def register(group: click.Group, make_engine: Callable[[bool], Any]) -> None:
    group.add_command(build_audit_command(make_engine))
