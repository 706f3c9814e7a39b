"""Fact questions over real workspaces you bring: each answered by one line of a curated file or a daily note.

Usage::

    MEMDECK_HOME=/tmp/realws-home python bench/eval_realws.py --out bench/results/x.json \\
        [--modes keyword,vector,hybrid] [--evidence vector_lead=0.1,...] WORKSPACE [WORKSPACE ...]

Each ``WORKSPACE`` is a folder in OpenClaw's layout (``MEMORY.md``, ``USER.md``, ``memory/…``) holding a
``questions.toml`` written by someone who has not read the search's code::

    [[question]]
    text = "when do the backups run"
    file = "MEMORY.md"                  # the answer line's file (workspace-relative)
    anchor = "restic to the Hetzner"    # a piece of exactly one line of that file
    kind = "curated"                    # or "daily"
    lang = "en"                         # en, zh, cross (asked in another language than the notes), ...

The workspace is copied into the eval home (the original is never indexed in place), indexed with the defaults
(or ``--config``), and every question asked in every mode. A question is answered at k when one of the top k
results' line ranges holds its line. Results per workspace, per kind and per language; the real notes are not
part of the repository (their licences are their owners'), only these counts are.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from _eval_common import (
    VECTOR_MODES,
    Ranged,
    Stopwatch,
    aggregate,
    config_summary,
    engine_location,
    eval_home,
    first_hit_rank,
    git_revision,
    limit_torch_threads,
    load_average,
    load_overrides,
    machine_info,
    markdown_table,
    now_iso,
    parse_modes,
    run_main,
    variant_heuristics,
)

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # the engine: installed (editable) or from this checkout
    sys.path.append(str(REPO))

METRICS = ("top-1", "top-3", "mrr@10")
MAX_RESULTS = 10


@dataclass(frozen=True)
class FactQuestion:
    """A question, the one line that answers it, and how it is grouped."""

    workspace: str
    text: str
    path: str
    line: int
    kind: str
    lang: str


def load_questions(workspace: Path) -> list[FactQuestion]:
    """The workspace's questions with their answer's line number, found by the anchor.

    Raises:
        ValueError: a file is missing, or an anchor is on no line or on more than one.
    """
    data = tomllib.loads((workspace / "questions.toml").read_text(encoding="utf-8"))
    out = []
    for q in data.get("question", []):
        target = workspace / q["file"]
        if not target.is_file():
            raise ValueError(f"{workspace.name}: {q['file']} is not a file")
        lines = target.read_text(encoding="utf-8", errors="replace").split("\n")
        found = [i for i, line in enumerate(lines, start=1) if q["anchor"] in line]
        if len(found) != 1:
            raise ValueError(f"{workspace.name}: anchor {q['anchor']!r} is on {len(found)} lines of {q['file']}")
        out.append(FactQuestion(workspace.name, q["text"], q["file"], found[0], q.get("kind", "curated"),
                                q.get("lang", "en")))
    return out


def copy_workspace(src: Path, dest: Path) -> int:
    """Make ``dest`` a copy of ``src``'s Markdown (questions.toml left out); returns the files copied.

    Files whose bytes already match are left alone, so a second run finds its index fresh."""
    copied = 0
    wanted = set()
    for path in sorted(src.rglob("*.md")):
        rel = path.relative_to(src)
        wanted.add(rel)
        target = dest / rel
        if not target.is_file() or target.read_bytes() != path.read_bytes():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        copied += 1
    if dest.is_dir():
        for path in sorted(dest.rglob("*.md")):
            if path.relative_to(dest) not in wanted:
                path.unlink()
    return copied


def newest_note_day(workspace: Path) -> str | None:
    """The date (``YYYY-MM-DD``) of the workspace's newest dated note, or None when it has none: a benchmark's
    "today" for the notes' decay (``--today newest``), so the ages do not depend on the day the eval runs."""
    from engine.search.dates import file_date

    days = [d for p in workspace.rglob("*.md") if (d := file_date(p.relative_to(workspace).as_posix())) is not None]
    return max(days).isoformat() if days else None


def variant_config(base: Any, variant: str) -> Any:
    """``base`` (a ``Config``) under a hybrid label's variant: ``search.<field>=value`` parts (joined by ``+``)
    set ``[search]`` fields (``search.decay=1+search.half_life_days=90``), the rest are heuristics
    (:func:`_eval_common.variant_heuristics`)."""
    parts = variant.split("+")
    fields = [p for p in parts if p.startswith("search.")]
    rest = "+".join(p for p in parts if not p.startswith("search."))
    search = base.search
    if fields:
        values: dict[str, Any] = {}
        for part in fields:
            key, _, raw = part.removeprefix("search.").partition("=")
            current = getattr(search, key)
            values[key] = raw in ("1", "true") if isinstance(current, bool) else type(current)(raw)
        search = replace(search, **values)
    if rest:
        search = replace(search, heuristics=variant_heuristics(search.heuristics, rest))
    return replace(base, search=search)


def print_miss(q: FactQuestion, label: str, hits: Sequence[Any]) -> None:
    """What outranks a missed answer line (file, lines and score parts: no note text), to stderr."""
    rank = first_hit_rank([Ranged(h.path, h.start_line, h.end_line) for h in hits], [(q.path, q.line)], MAX_RESULTS)
    print(f"MISS {label} {q.workspace} {q.kind} {q.path}:{q.line} rank={rank or '-'} q={q.text!r}", file=sys.stderr)
    for i, h in enumerate(hits[:5], start=1):
        mark = "*" if h.path == q.path and h.start_line <= q.line <= h.end_line else " "
        print(f"  {mark}{i} {h.citation} score={h.score:.4f} v={h.vector_score if h.vector_score is None else round(h.vector_score, 4)}"
              f" k={h.text_score:.4f} lines={h.end_line - h.start_line + 1}{' placed=' + h.placed if h.placed else ''}",
              file=sys.stderr)


def score(hits: Sequence[Any], q: FactQuestion) -> dict[str, float]:
    """top-1, top-3 and MRR@10 of the first result whose line range holds the answer line."""
    rank = first_hit_rank([Ranged(h.path, h.start_line, h.end_line) for h in hits], [(q.path, q.line)],
                          MAX_RESULTS)
    return {"top-1": float(rank == 1), "top-3": float(rank is not None and rank <= 3),
            "mrr@10": 1.0 / rank if rank is not None else 0.0}


def _group_rows(rows: Sequence[Mapping[str, Any]], labels: Sequence[str], key: str) -> list[list[Any]]:
    out = []
    for group in sorted({r[key] for r in rows}):
        part = [r for r in rows if r[key] == group]
        for label in labels:
            agg = aggregate([r["scores"][label] for r in part], METRICS)
            hits3 = sum(int(r["scores"][label]["top-3"]) for r in part)
            out.append([group, label, len(part), f"{hits3}/{len(part)}", *[agg[k] for k in METRICS]])
    return out


def render_markdown(payload: Mapping[str, Any], modes: Sequence[str]) -> str:
    """Totals, then per workspace, kind and language, then every question's rank per mode."""
    meta = payload["meta"]
    labels = meta["labels"]
    rows = payload["questions"]
    head = ["group", "mode", "n", "in top 3", *METRICS]
    lines = [
        "# Fact questions over real workspaces",
        "",
        f"{meta['date']} · {len(rows)} questions over {len(meta['workspaces'])} workspaces · model {meta['model']}"
        f" · git {meta['git']}",
        "",
        "## Per kind (curated: a MEMORY.md / USER.md line; daily: a line of a note under memory/)",
        "",
        markdown_table(head, _group_rows(rows, labels, "kind")),
        "",
        "## Per workspace",
        "",
        markdown_table(["workspace", "files", "chunks", "curated chunks"],
                       [[w["name"], w["files"], w["chunks"], w["curated_chunks"]] for w in meta["workspaces"]]),
        "",
        markdown_table(head, _group_rows(rows, labels, "workspace")),
        "",
        "## Per language of the question (cross: asked in another language than the notes)",
        "",
        markdown_table(head, _group_rows(rows, labels, "lang")),
        "",
        "## Every question (rank of the answer line; — not in the top 10)",
        "",
        markdown_table(["workspace", "kind", "question", *labels],
                       [[r["workspace"], r["kind"], r["text"], *[r["ranks"][m] or "—" for m in labels]]
                        for r in rows]),
    ]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Copy, index and question every workspace; returns the JSON payload."""
    from engine.api import MemoryEngine
    from engine.config import load_config

    modes = parse_modes(args.modes)
    home, _temporary = eval_home(Path(args.home) if args.home else None)
    overrides = load_overrides(Path(args.config) if args.config else None)
    variants = [e for e in args.evidence.split(",") if e]
    labels = modes + [f"hybrid@{e}" for e in variants if "hybrid" in modes]
    need_vec = any(m in VECTOR_MODES for m in modes)
    rows: list[dict[str, Any]] = []
    spaces: list[dict[str, Any]] = []
    model = None
    summary: dict[str, Any] = {}
    load_start = load_average()
    todays: dict[str, str | None] = {}
    pinned = os.environ.get("MEMDECK_TODAY")
    with Stopwatch() as total:
        for src in [Path(d) for d in args.workspaces]:
            questions = load_questions(src)
            workspace = home / "realws" / src.name
            files = copy_workspace(src, workspace)
            if args.today == "newest":
                day = newest_note_day(workspace)
                if day is not None:
                    os.environ["MEMDECK_TODAY"] = day
                else:
                    os.environ.pop("MEMDECK_TODAY", None)
                todays[src.name] = day
            config = load_config(workspace=workspace, home=home / "homes" / src.name, overrides=overrides)
            summary = summary or config_summary(config)
            with MemoryEngine(config) as engine:
                if need_vec and engine.embedder is not None:
                    engine.load_model()
                    limit_torch_threads(args.torch_threads)
                report = engine.sync(embed=need_vec)
                model = engine.embedder.model_id if engine.embedder is not None else None
                curated = engine.store.conn.execute(
                    "SELECT count(*) FROM chunks WHERE path IN ('MEMORY.md', 'USER.md')").fetchone()[0]
                spaces.append({"name": src.name, "files": files, "chunks": report.chunks_total,
                               "curated_chunks": curated, "questions": len(questions)})
                base = engine.config
                for q in questions:
                    row: dict[str, Any] = {"workspace": q.workspace, "text": q.text, "path": q.path, "line": q.line,
                                           "kind": q.kind, "lang": q.lang, "scores": {}, "ranks": {}}
                    for label in labels:
                        mode, _, variant = label.partition("@")
                        if variant:
                            engine.config = variant_config(base, variant)
                        resp = engine.search(q.text, mode=mode, max_results=MAX_RESULTS, min_score=args.min_score,
                                             ensure_fresh=False)
                        engine.config = base
                        row["scores"][label] = score(resp.results, q)
                        if args.misses and mode == "hybrid" and not row["scores"][label]["top-3"]:
                            print_miss(q, label, resp.results)
                        row["ranks"][label] = first_hit_rank(
                            [Ranged(h.path, h.start_line, h.end_line) for h in resp.results], [(q.path, q.line)],
                            MAX_RESULTS)
                    rows.append(row)
    if args.today == "newest":  # the caller's own pin (if any) back
        if pinned is None:
            os.environ.pop("MEMDECK_TODAY", None)
        else:
            os.environ["MEMDECK_TODAY"] = pinned
    payload: dict[str, Any] = {label: aggregate([r["scores"][label] for r in rows], METRICS) for label in labels}
    payload["questions"] = rows
    payload["meta"] = {
        "date": now_iso(), "modes": modes, "labels": labels, "workspaces": spaces, "model": model,
        "min_score": args.min_score, "today": args.today, "todays": todays, "overrides": overrides, "config_file": args.config,
        "config": summary,
        "load_average": {"start": load_start, "end": load_average()},
        "timings": {"total_seconds": round(total.seconds, 2)}, "machine": machine_info(), "git": git_revision(REPO),
        "engine_path": engine_location(), "argv": sys.argv[1:],
    }
    return payload


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("workspaces", nargs="+", help="workspace folders, each with a questions.toml")
    p.add_argument("--out", required=True, help="where to write the JSON results (the .md goes next to it)")
    p.add_argument("--modes", default="keyword,vector,hybrid", help="comma-separated: keyword,vector,hybrid")
    p.add_argument("--config", default=None, help="TOML merged over the defaults")
    p.add_argument("--min-score", type=float, default=0.0, help="every search's threshold (default 0)")
    p.add_argument("--evidence", default="",
                   help="comma-separated hybrid variants (a keyword_evidence value or key=value+key=value "
                        "heuristics; search.<field>=value sets a [search] field): hybrid again under each")
    p.add_argument("--today", choices=("clock", "newest"), default="clock",
                   help="the searches' today: the clock's (MEMDECK_TODAY or the system's), or each workspace's "
                        "newest dated note (a benchmark's today for decay)")
    p.add_argument("--misses", action="store_true",
                   help="print what outranks each answer line a hybrid label misses at top 3 (stderr; no note text)")
    p.add_argument("--home", default=None, help="data dir for the copies and indexes (default: MEMDECK_HOME, else temp)")
    p.add_argument("--torch-threads", type=int, default=1,
                   help="torch.set_num_threads(N) after the model loads (0: leave torch's default)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: run, write ``OUT`` and ``OUT.md``, print the table."""
    return run_main(build_parser(), run, render_markdown, argv)


if __name__ == "__main__":
    raise SystemExit(main())
