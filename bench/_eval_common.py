"""Shared parts of the retrieval evals: rank metrics, engine setup, stable workspaces, progress and reports."""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

MODES = ("keyword", "vector", "hybrid")
VECTOR_MODES = frozenset({"vector", "hybrid"})


# -- metrics (pure) ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Ranged:
    """One returned result reduced to what scoring needs: a file and an inclusive 1-based line range."""

    path: str
    start: int
    end: int


def holds(result: Ranged, gold: Iterable[tuple[str, int]]) -> bool:
    """Whether a result's line range holds any gold ``(path, line)``."""
    return any(path == result.path and result.start <= line <= result.end for path, line in gold)


def first_hit_rank(ranked: Sequence[Ranged], gold: Sequence[tuple[str, int]], k: int) -> int | None:
    """The 1-based rank of the first of the top ``k`` results that holds a gold line, or None."""
    for i, result in enumerate(ranked[:k], start=1):
        if holds(result, gold):
            return i
    return None


def hit_at(ranked: Sequence[Ranged], gold: Sequence[tuple[str, int]], k: int) -> float:
    """1.0 when one of the top ``k`` results holds a gold line, else 0.0."""
    return 1.0 if first_hit_rank(ranked, gold, k) is not None else 0.0


def reciprocal_rank(ranked: Sequence[Ranged], gold: Sequence[tuple[str, int]], k: int = 10) -> float:
    """``1/rank`` of the first hit within the top ``k`` (0.0 when none)."""
    rank = first_hit_rank(ranked, gold, k)
    return 0.0 if rank is None else 1.0 / rank


def coverage(ranked: Sequence[Ranged], gold: Sequence[tuple[str, int]], k: int) -> float:
    """The share of distinct gold lines that lie inside the union of the top ``k`` ranges."""
    lines = set(gold)
    if not lines:
        return 0.0
    top = ranked[:k]
    inside = sum(1 for g in lines if any(holds(r, [g]) for r in top))
    return inside / len(lines)


def mean(values: Sequence[float]) -> float:
    """Arithmetic mean (0.0 for no values)."""
    return sum(values) / len(values) if values else 0.0


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0–100) by linear interpolation between closest ranks; 0.0 for no values."""
    if not values:
        return 0.0
    data = sorted(values)
    if len(data) == 1:
        return data[0]
    pos = (len(data) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = math.ceil(pos)
    return data[lo] + (data[hi] - data[lo]) * (pos - lo)


def aggregate(rows: Sequence[Mapping[str, float]], keys: Sequence[str]) -> dict[str, float]:
    """``{"n": count, key: mean ...}`` over per-question metric rows, rounded to 4 places."""
    out: dict[str, float] = {"n": len(rows)}
    for key in keys:
        out[key] = round(mean([row[key] for row in rows]), 4)
    return out


def latency_summary(seconds: Sequence[float]) -> dict[str, float]:
    """p50/p95/mean of latencies, in milliseconds."""
    return {
        "n": len(seconds),
        "p50_ms": round(percentile(seconds, 50) * 1000, 3),
        "p95_ms": round(percentile(seconds, 95) * 1000, 3),
        "mean_ms": round(mean(seconds) * 1000, 3),
    }


# -- configuration and engines ----------------------------------------------------------------------
def variant_heuristics(heuristics: Any, label: str) -> Any:
    """``heuristics`` (a ``SearchHeuristics``) under a hybrid label's variant: ``pool-<value>`` sets ``pool``
    (``pool-raw-slot``: ``raw-slot``), anything else is a ``keyword_evidence`` setting, optionally with its
    ``evidence_full`` after a colon (``best:0.5``); ``key=value`` pairs joined by ``+`` set those heuristics."""
    from dataclasses import replace

    if "=" in label:  # any heuristics: "slot_by_score=1+keyword_evidence=best"
        values: dict[str, Any] = {}
        for part in label.split("+"):
            key, _, raw = part.partition("=")
            current = getattr(heuristics, key)
            values[key] = raw in ("1", "true") if isinstance(current, bool) else type(current)(raw)
        return replace(heuristics, **values)
    if label.startswith("pool-"):
        return replace(heuristics, pool=label.removeprefix("pool-"))
    mode, _, full = label.partition(":")
    if full:
        return replace(heuristics, keyword_evidence=mode, evidence_full=float(full))
    return replace(heuristics, keyword_evidence=mode)


def parse_modes(text: str) -> list[str]:
    """``"keyword,hybrid"`` → ``["keyword", "hybrid"]`` (checked, order kept, duplicates dropped).

    Raises:
        ValueError: an unknown mode.
    """
    modes = [m.strip() for m in text.split(",") if m.strip()]
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        raise ValueError(f"unknown mode(s) {bad or text!r}; choose from {', '.join(MODES)}")
    return list(dict.fromkeys(modes))


def load_overrides(path: Path | None) -> dict[str, Any]:
    """The ``--config`` TOML as a nested dict of overrides (empty without a file)."""
    if path is None:
        return {}
    return tomllib.loads(path.read_text(encoding="utf-8"))


def eval_home(explicit: Path | None = None) -> tuple[Path, bool]:
    """Where the evals keep workspaces and indexes: ``explicit``, ``MEMDECK_HOME``, else a new temp dir.

    Returns:
        ``(home, is_temporary)``.
    """
    if explicit is not None:
        return explicit, False
    env = os.environ.get("MEMDECK_HOME")
    if env:
        return Path(env).expanduser(), False
    return Path(tempfile.mkdtemp(prefix="memdeck-eval-")), True


def write_if_changed(path: Path, text: str) -> bool:
    """Write ``text`` unless the file already holds exactly it (keeps mtimes, so the index stays fresh)."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except (FileNotFoundError, UnicodeDecodeError):
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return True


def sync_workspace_files(workspace: Path, files: Mapping[str, str]) -> dict[str, int]:
    """Make ``workspace/memory`` hold exactly ``files`` (rel path → text); unchanged files are left alone."""
    written = 0
    for rel, text in files.items():
        written += write_if_changed(workspace / rel, text)
    removed = 0
    mem = workspace / "memory"
    if mem.is_dir():
        wanted = {(workspace / rel).resolve() for rel in files}
        for path in sorted(mem.rglob("*.md")):
            if path.resolve() not in wanted:
                path.unlink()
                removed += 1
    return {"written": written, "removed": removed, "files": len(files)}


def config_summary(config: Any) -> dict[str, Any]:
    """The settings that shape retrieval, as plain JSON."""
    from dataclasses import asdict

    return {
        "embedding": {k: v for k, v in asdict(config.embedding).items() if k != "headers"},  # may hold secrets
        "chunking": asdict(config.chunking),
        "search": asdict(config.search),
        "sources": list(config.sources),
    }


def torch_loaded() -> bool:
    """Whether torch has been imported in this process."""
    return "torch" in sys.modules


def torch_threads() -> int | None:
    """torch's intra-op thread count, or None when torch is not loaded."""
    torch = sys.modules.get("torch")
    return int(torch.get_num_threads()) if torch is not None else None


def limit_torch_threads(n: int) -> None:
    """``torch.set_num_threads(n)`` when ``n`` > 0 and torch is loaded.

    On a shared 2-core machine two intra-op threads spin against other processes: one query embedding
    measured p95 185–245 ms with 2 threads against 25–48 ms with 1 (load average ~4).
    """
    torch = sys.modules.get("torch")
    if n > 0 and torch is not None:
        torch.set_num_threads(n)


def load_average() -> list[float] | None:
    """The 1/5/15-minute load averages (None where the OS has none): timings depend on them."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


# -- run metadata ----------------------------------------------------------------------------------
def git_revision(repo: Path) -> str | None:
    """The repo's HEAD commit (with ``+dirty``), or None when unknown."""
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=5, check=False)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, text=True,
                               timeout=5, check=False)
        return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def engine_location() -> str | None:
    """Where the imported engine package lives (a snapshot on PYTHONPATH or the checkout)."""
    engine = sys.modules.get("engine")
    return str(Path(engine.__file__).parent) if engine is not None and engine.__file__ else None


def machine_info() -> dict[str, Any]:
    """Enough about the machine to compare timings."""
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
    }


def now_iso() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


class Stopwatch:
    """``with Stopwatch() as sw: ...`` then ``sw.seconds``."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._start = 0.0

    def __enter__(self) -> Stopwatch:
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self._start


# -- output ----------------------------------------------------------------------------------------
def fmt(value: Any) -> str:
    """A table cell: floats to 3 places (``.653``-style for [0, 1]), others as text."""
    if isinstance(value, float):
        if 0.0 <= value <= 1.0:
            return f"{value:.3f}".lstrip("0") if value < 1.0 else "1.000"
        return f"{value:.1f}" if abs(value) >= 100 else f"{value:.3f}"
    return str(value)


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A GitHub Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(fmt(v) for v in row) + " |")
    return "\n".join(lines)


def write_outputs(out: Path, payload: Mapping[str, Any], markdown: str) -> Path:
    """Write the JSON to ``out`` and the Markdown next to it (same name, ``.md``); returns the .md path."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    md_path = out.with_suffix(".md")
    md_path.write_text(markdown.rstrip() + "\n", encoding="utf-8")
    return md_path


def make_progress() -> Any:
    """A rich progress bar on stderr (imported lazily so the pure parts stay light)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=Console(stderr=True), transient=False)


def median_or_zero(values: Sequence[float]) -> float:
    """The median (0.0 for no values)."""
    return statistics.median(values) if values else 0.0


def run_main(
    parser: argparse.ArgumentParser,
    run: Callable[[argparse.Namespace], dict[str, Any]],
    render_markdown: Callable[[Mapping[str, Any], list[str]], str],
    argv: Sequence[str] | None = None,
) -> int:
    """The eval scripts' entry point: parse, run, write ``OUT`` and ``OUT.md``, print the table."""
    args = parser.parse_args(argv)
    try:
        modes = parse_modes(args.modes)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    payload = run(args)
    markdown = render_markdown(payload, modes)
    md_path = write_outputs(Path(args.out), payload, markdown)
    print(markdown)
    print(f"\nwrote {args.out} and {md_path}", file=sys.stderr)
    return 0
