"""Curated-fact retrieval eval: questions answered by one line of MEMORY.md or USER.md, among long daily notes.

Usage::

    MEMDECK_HOME=/tmp/curated-home python bench/eval_curated.py --out bench/results/x.json \\
        [--modes keyword,vector,hybrid] [--config overrides.toml] [--days 30]

The workspace is ``bench/gen_workspace.py``'s :func:`curated_workspace` (``bench/data/curated``'s curated files
and ``--days`` generated daily notes that talk about the same topics); the questions are
``bench/data/curated/questions.toml``. A question is answered when a result's line range holds its fact's line
(top-1, top-3); ``lines@3`` is the mean size in lines of the top-3 results that hold it (what a reader reads).
"""

from __future__ import annotations

import argparse
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
BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.append(str(BENCH))

QUESTIONS = BENCH / "data" / "curated" / "questions.toml"
METRICS = ("top-1", "top-3", "mrr@10")
MAX_RESULTS = 10


@dataclass(frozen=True)
class CuratedQuestion:
    """A question and the one curated line that answers it."""

    text: str
    path: str
    line: int


def load_questions(files: Mapping[str, str], path: Path = QUESTIONS) -> list[CuratedQuestion]:
    """The questions with their fact's line number, found by its anchor in the curated file.

    Raises:
        ValueError: an anchor is missing from its file or found on more than one line.
    """
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out = []
    for q in data.get("question", []):
        lines = files[q["file"]].split("\n")
        found = [i for i, line in enumerate(lines, start=1) if q["anchor"] in line]
        if len(found) != 1:
            raise ValueError(f"anchor {q['anchor']!r} is on {len(found)} lines of {q['file']} (want exactly one)")
        out.append(CuratedQuestion(q["text"], q["file"], found[0]))
    return out


def score(hits: Sequence[Any], q: CuratedQuestion) -> dict[str, float]:
    """top-1, top-3, MRR@10 and the size of the top-3 hit that holds the line (0 when none)."""
    ranked = [Ranged(h.path, h.start_line, h.end_line) for h in hits]
    rank = first_hit_rank(ranked, [(q.path, q.line)], MAX_RESULTS)
    size = ranked[rank - 1].end - ranked[rank - 1].start + 1 if rank is not None and rank <= 3 else 0
    return {"top-1": float(rank == 1), "top-3": float(rank is not None and rank <= 3),
            "mrr@10": 1.0 / rank if rank is not None else 0.0, "lines@3": float(size)}


def render_markdown(payload: Mapping[str, Any], modes: Sequence[str]) -> str:
    """The per-mode table, then each question's rank per mode."""
    meta = payload["meta"]
    lines = [
        "# Curated facts — one line of MEMORY.md / USER.md among long daily notes",
        "",
        f"{meta['date']} · {meta['questions']} questions · {meta['files']} files ({meta['chunks']} chunks; "
        f"MEMORY.md {meta['curated_chunks'].get('MEMORY.md', 0)}, USER.md {meta['curated_chunks'].get('USER.md', 0)}) "
        f"· model {meta['model']}",
        "",
        markdown_table(["mode", "n", *METRICS, "lines@3"],
                       [[m, payload[m]["n"], *[payload[m][k] for k in METRICS], payload[m]["lines@3"]]
                        for m in meta.get("labels", modes)]),
        "",
        markdown_table(["question", *meta.get("labels", modes)],
                       [[q, *[payload["ranks"][m][i] or "—" for m in meta.get("labels", modes)]]
                        for i, q in enumerate(meta["question_texts"])]),
    ]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Write the workspace, index it, ask every question in every mode; returns the JSON payload."""
    from gen_workspace import curated_workspace

    from engine.api import MemoryEngine
    from engine.config import load_config

    modes = parse_modes(args.modes)
    home, _temporary = eval_home(Path(args.home) if args.home else None)
    workspace = home / "curated" / f"days-{args.days}"
    ws = curated_workspace(workspace, args.days)
    files = {rel: (workspace / rel).read_text(encoding="utf-8") for rel in ws.files}
    questions = load_questions(files)
    overrides = load_overrides(Path(args.config) if args.config else None)
    config = load_config(workspace=workspace, home=home, overrides=overrides)
    need_vec = any(m in VECTOR_MODES for m in modes)
    # --evidence: the hybrid mode again under each keyword-evidence setting, labelled "hybrid@script" etc.
    # --pools: the hybrid mode again under each [search.heuristics] pool, labelled "hybrid@pool-slot" etc.
    variants = [e for e in args.evidence.split(",") if e] + [f"pool-{x}" for x in args.pools.split(",") if x]
    labels = modes + [f"hybrid@{e}" for e in variants if "hybrid" in modes]
    rows: dict[str, list[dict[str, float]]] = {m: [] for m in labels}
    ranks: dict[str, list[int | None]] = {m: [] for m in labels}
    load_start = load_average()
    with Stopwatch() as total, MemoryEngine(config) as engine:
        if need_vec and engine.embedder is not None:
            engine.load_model()
            limit_torch_threads(args.torch_threads)
        report = engine.sync(embed=need_vec)
        curated_chunks = {name: len(engine.store.conn.execute(
            "SELECT 1 FROM chunks WHERE path = ?", (name,)).fetchall()) for name in ("MEMORY.md", "USER.md")}
        model = engine.embedder.model_id if engine.embedder is not None else None
        base = engine.config
        for q in questions:
            for label in labels:
                mode, _, evidence = label.partition("@")
                if evidence:
                    engine.config = replace(base, search=replace(base.search, heuristics=variant_heuristics(
                        base.search.heuristics, evidence)))
                resp = engine.search(q.text, mode=mode, max_results=MAX_RESULTS, min_score=args.min_score,
                                     ensure_fresh=False)
                engine.config = base
                rows[label].append(score(resp.results, q))
                ranks[label].append(first_hit_rank([Ranged(h.path, h.start_line, h.end_line) for h in resp.results],
                                                   [(q.path, q.line)], MAX_RESULTS))
    payload: dict[str, Any] = {}
    for label in labels:
        agg = aggregate(rows[label], METRICS)
        held = [r["lines@3"] for r in rows[label] if r["lines@3"] > 0]
        agg["lines@3"] = round(sum(held) / len(held), 1) if held else 0.0
        payload[label] = agg
    payload["ranks"] = ranks
    payload["meta"] = {
        "date": now_iso(), "modes": modes, "labels": labels, "questions": len(questions), "days": args.days,
        "question_texts": [q.text for q in questions], "gold": [[q.path, q.line] for q in questions],
        "files": len(files), "chunks": report.chunks_total, "curated_chunks": curated_chunks, "model": model,
        "min_score": args.min_score, "overrides": overrides, "config_file": args.config,
        "config": config_summary(config), "load_average": {"start": load_start, "end": load_average()},
        "timings": {"total_seconds": round(total.seconds, 2)}, "machine": machine_info(), "git": git_revision(REPO),
        "engine_path": engine_location(), "argv": sys.argv[1:],
    }
    return payload


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="where to write the JSON results (the .md goes next to it)")
    p.add_argument("--modes", default="keyword,vector,hybrid", help="comma-separated: keyword,vector,hybrid")
    p.add_argument("--config", default=None, help="TOML merged over the defaults")
    p.add_argument("--min-score", type=float, default=0.0, help="every search's threshold (default 0)")
    p.add_argument("--evidence", default="",
                   help="comma-separated keyword_evidence settings (off,script,terms,best): hybrid again under each")
    p.add_argument("--pools", default="",
                   help="comma-separated [search.heuristics] pool values (shown,raw,union,slot,raw-slot): hybrid "
                        "again under each")
    p.add_argument("--days", type=int, default=30, help="daily notes generated around the curated files")
    p.add_argument("--home", default=None, help="data dir for the workspace and index (default: MEMDECK_HOME, else temp)")
    p.add_argument("--torch-threads", type=int, default=1,
                   help="torch.set_num_threads(N) after the model loads (0: leave torch's default)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: run, write ``OUT`` and ``OUT.md``, print the table."""
    return run_main(build_parser(), run, render_markdown, argv)


if __name__ == "__main__":
    raise SystemExit(main())
