"""``memdeck doctor``: diagnose (or, with ``--fix``, repair) and the human-readable report."""

from __future__ import annotations

from collections.abc import Callable

from engine.config import Config
from engine.health.checks import DoctorReport, diagnose
from engine.health.repairs import OpenEngine, repair


def run_doctor(config: Config, fix: bool = False, progress: Callable[[str], None] | None = None,
               open_engine: OpenEngine | None = None) -> DoctorReport:
    """``memdeck doctor``: :func:`~engine.health.checks.diagnose`, or with ``fix``
    :func:`~engine.health.repairs.repair`, which re-indexes through ``open_engine`` (``MemoryEngine``).

    Raises:
        TypeError: ``fix`` without ``open_engine``.
    """
    if not fix:
        return diagnose(config)
    if open_engine is None:
        raise TypeError("run_doctor(fix=True) needs open_engine (e.g. MemoryEngine)")
    return repair(config, open_engine, progress)


_MARKS = {"ok": "ok   ", "info": "info ", "warn": "WARN ", "error": "ERROR"}


def format_report(report: DoctorReport, verbose: bool = False) -> str:
    """The human-readable report: one line per check, details under problems (every value display-safe:
    :func:`engine.display.safe_name`, so a file name with a newline or an escape sequence stays one inert line)."""
    from engine.display import plural, safe_name

    lines = [f"Workspace: {safe_name(report.workspace)}", f"Index: {safe_name(report.index_path)}", ""]
    for f in report.findings:
        lines.append(f"{_MARKS.get(f.severity, f.severity)} {f.check}: {safe_name(f.message)}")
        if f.details and (verbose or f.severity in ("warn", "error", "info")):
            lines.extend(f"        {safe_name(d)}" for d in f.details[:20])
            if len(f.details) > 20:
                lines.append(f"        … and {len(f.details) - 20} more")
        if f.fix and f.severity in ("warn", "error") and not report.fixed:
            lines.append(f"        --fix: {f.fix}")
    if report.actions:
        lines.append("")
        lines.append("Repairs:")
        lines.extend(f"  {safe_name(a)}" for a in report.actions)
    lines.append("")
    if report.ok:
        lines.append("No problems found." if not report.fixed else "No problems left.")
    else:
        n = len(report.problems)
        fixable = sum(1 for f in report.problems if f.fix)
        if report.fixed:
            hint = " (what is left needs you: see above)" if fixable < n else ""
        elif fixable == n:
            hint = ": run `memdeck doctor --fix` to repair " + ("it" if n == 1 else "them")
        elif fixable:
            hint = f": `memdeck doctor --fix` repairs {fixable} of them; the rest needs you (see above)"
        else:
            hint = ": `--fix` cannot repair " + ("it" if n == 1 else "them") + "; see above for what to do"
        lines.append(f"{plural(n, 'problem')} found{hint}.")
    return "\n".join(lines)
