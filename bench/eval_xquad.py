"""SQuAD-format paragraph retrieval eval (XQuAD zh/en/ru): each paragraph a note, each question a query, hit@k/MRR.

Usage::

    MEMDECK_HOME=/tmp/xquad-home python bench/eval_xquad.py --data xquad.zh.json --out bench/results/x.json \\
        [--questions-from xquad.en.json] [--modes keyword,vector,hybrid] [--config overrides.toml] \\
        [--limit-questions N]

Paragraph ``p`` of article ``a`` becomes ``memory/a<aaa>-p<ppp>.md`` holding the paragraph's text; the gold
note of a question is its paragraph's. Workspaces live under ``$MEMDECK_HOME/xquad/<data file stem>/``.
``--questions-from`` asks another language's questions of the same (parallel) data set against these
paragraphs — English questions over Chinese paragraphs measure cross-lingual retrieval; a question pairs
with its paragraph by position (XQuAD's files are parallel: same articles, paragraphs and question ids).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from _eval_common import (
    VECTOR_MODES,
    Stopwatch,
    aggregate,
    config_summary,
    engine_location,
    eval_home,
    git_revision,
    latency_summary,
    limit_torch_threads,
    load_average,
    load_overrides,
    machine_info,
    make_progress,
    markdown_table,
    now_iso,
    parse_modes,
    run_main,
    sync_workspace_files,
    torch_loaded,
    torch_threads,
    variant_heuristics,
)

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # the engine: installed (editable) or from this checkout
    sys.path.append(str(REPO))

METRICS = ("hit@1", "hit@5", "mrr@10")
MAX_RESULTS = 10


@dataclass(frozen=True)
class SquadQuestion:
    """A question and the note that holds its paragraph."""

    qid: str
    text: str
    gold: str


def note_path(article: int, paragraph: int) -> str:
    """The note for paragraph ``paragraph`` of article ``article`` (0-based): ``memory/a003-p012.md``."""
    return f"memory/a{article:03d}-p{paragraph:03d}.md"


def build_corpus(data: Mapping[str, Any]) -> tuple[dict[str, str], list[SquadQuestion]]:
    """Notes (rel path → paragraph text) and the questions with their gold note."""
    files: dict[str, str] = {}
    questions: list[SquadQuestion] = []
    for a, article in enumerate(data.get("data", [])):
        for p, para in enumerate(article.get("paragraphs", [])):
            rel = note_path(a, p)
            files[rel] = str(para.get("context", "")).strip() + "\n"
            for qa in para.get("qas", []):
                questions.append(SquadQuestion(str(qa.get("id", "")), str(qa.get("question", "")), rel))
    return files, questions


def cross_questions(native: Sequence[SquadQuestion], asked: Sequence[SquadQuestion]) -> list[SquadQuestion]:
    """``asked`` (another language's questions) with the gold notes of ``native``, paired by question id.

    Raises:
        ValueError: the two files are not parallel (a question id of one is missing from the other, or the
            same id sits in a different paragraph).
    """
    gold = {q.qid: q.gold for q in native}
    out = []
    for q in asked:
        if gold.get(q.qid) != q.gold:
            raise ValueError(f"question {q.qid}: not in the same paragraph of both files (not parallel data)")
        out.append(q)
    return out


def score_paths(paths: Sequence[str], gold: str) -> dict[str, float]:
    """hit@1, hit@5 and MRR@10 for a ranked list of result paths (chunks of one note may repeat)."""
    rank = next((i for i, path in enumerate(paths[:MAX_RESULTS], start=1) if path == gold), None)
    return {
        "hit@1": 1.0 if rank == 1 else 0.0,
        "hit@5": 1.0 if rank is not None and rank <= 5 else 0.0,
        "mrr@10": 1.0 / rank if rank is not None else 0.0,
    }


def render_markdown(payload: Mapping[str, Any], modes: Sequence[str]) -> str:
    """The results table plus timings."""
    meta = payload["meta"]
    lines = [
        f"# Paragraph retrieval — {Path(meta['data']).name}"
        + (f", questions from {Path(meta['questions_from']).name}" if meta.get("questions_from") else ""),
        "",
        f"{meta['date']} · {meta['questions']} questions over {meta['notes']} notes ({meta['chunks']} chunks) · "
        f"max_results={MAX_RESULTS}, min_score={meta.get('min_score', 0)}"
        + (f" · overrides `{json.dumps(meta['overrides'], ensure_ascii=False)}`" if meta["overrides"] else ""),
        "",
        markdown_table(["mode", "n", *METRICS, "p50 ms", "p95 ms"],
                       [[m, payload[m]["n"], *[payload[m][k] for k in METRICS],
                         f"{meta['timings']['query'][m]['p50_ms']:.2f}", f"{meta['timings']['query'][m]['p95_ms']:.2f}"]
                        for m in meta.get("labels", modes)]),
        "",
        f"Index: {meta['timings']['index_seconds']:.2f} s. Total: {meta['timings']['total_seconds']:.1f} s.",
    ]
    if meta.get("fallbacks"):
        lines += ["", f"**Mode fallbacks**: {json.dumps(meta['fallbacks'])} — warnings: {meta['warnings']}"]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Run the eval and return the JSON payload."""
    from engine.api import MemoryEngine
    from engine.config import load_config

    modes = parse_modes(args.modes)
    data_path = Path(args.data)
    raw = data_path.read_bytes()
    files, questions = build_corpus(json.loads(raw))
    if args.questions_from:
        _, asked = build_corpus(json.loads(Path(args.questions_from).read_text(encoding="utf-8")))
        questions = cross_questions(questions, asked)
    if args.limit_questions:
        questions = questions[: args.limit_questions]
    home, _temporary = eval_home(Path(args.home) if args.home else None)
    overrides = load_overrides(Path(args.config) if args.config else None)
    need_vec = any(m in VECTOR_MODES for m in modes)
    workspace = home / "xquad" / data_path.stem.replace(".", "-")
    sync_workspace_files(workspace, files)
    config = load_config(workspace=workspace, home=home, overrides=overrides)
    # --evidence: the hybrid mode again under each keyword-evidence setting, labelled "hybrid@script" etc.
    evidences = [e for e in (args.evidence.split(",") if args.evidence else []) if e]
    pools = [f"pool-{x}" for x in (args.pools.split(",") if args.pools else []) if x]
    labels = modes + [f"hybrid@{e}" for e in [*evidences, *pools] if "hybrid" in modes]
    rows: dict[str, list[dict[str, float]]] = {m: [] for m in labels}
    latencies: dict[str, list[float]] = {m: [] for m in labels}
    fallbacks: Counter[str] = Counter()
    warnings: set[str] = set()
    model_load: float | None = None
    load_start = load_average()
    details: list[dict[str, Any]] | None = [] if args.details else None
    with Stopwatch() as total, make_progress() as progress, MemoryEngine(config) as engine:
        task = progress.add_task("indexing", total=len(questions) * len(labels))
        if need_vec and engine.embedder is not None:
            with Stopwatch() as sw:
                engine.load_model()
            model_load = sw.seconds
            limit_torch_threads(args.torch_threads)
        with Stopwatch() as index_sw:
            report = engine.sync(embed=need_vec)
        warnings.update(report.issues)
        progress.update(task, description="queries")
        base = engine.config
        for q in questions:
            for label in labels:
                mode, evidence = label.split("@") if "@" in label else (label, None)
                if evidence is not None:
                    engine.config = replace(base, search=replace(base.search, heuristics=variant_heuristics(
                        base.search.heuristics, evidence)))
                with Stopwatch() as sw:
                    resp = engine.search(q.text, mode=mode, max_results=MAX_RESULTS, min_score=args.min_score,
                                         ensure_fresh=False)
                engine.config = base
                latencies[label].append(sw.seconds)
                if resp.mode != mode:
                    fallbacks[label] += 1
                warnings.update(resp.warnings)
                rows[label].append(score_paths([h.path for h in resp.results], q.gold))
                if details is not None:
                    details.append({"qid": q.qid, "gold": q.gold, "label": label, **rows[label][-1],
                                    "top": [h.path for h in resp.results[:3]]})
                progress.advance(task)
    payload: dict[str, Any] = {label: aggregate(rows[label], METRICS) for label in labels}
    if details is not None:
        Path(args.details).write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in details),
                                      encoding="utf-8")
    payload["meta"] = {
        "data": str(data_path),
        "data_sha256": hashlib.sha256(raw).hexdigest(),
        "questions_from": args.questions_from,
        "min_score": args.min_score,
        "date": now_iso(),
        "modes": modes,
        "labels": labels,
        "evidence": evidences,
        "pools": pools,
        "questions": len(questions),
        "notes": len(files),
        "chunks": report.chunks_total,
        "home": str(home),
        "overrides": overrides,
        "config_file": args.config,
        "config": config_summary(config),
        "torch_loaded": torch_loaded(),
        "torch_threads": torch_threads(),
        "load_average": {"start": load_start, "end": load_average()},
        "fallbacks": dict(fallbacks),
        "warnings": sorted(warnings)[:20],
        "timings": {
            "total_seconds": round(total.seconds, 2),
            "model_load_seconds": round(model_load, 3) if model_load is not None else None,
            "index_seconds": round(index_sw.seconds, 3),
            "embedded": report.embedded,
            "from_cache": report.from_cache,
            "query": {m: latency_summary(latencies[m]) for m in labels},
        },
        "machine": machine_info(),
        "git": git_revision(REPO),
        "engine_path": engine_location(),
        "argv": sys.argv[1:],
    }
    return payload


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--data", required=True, help="SQuAD-format JSON file")
    p.add_argument("--out", required=True, help="where to write the JSON results (the .md goes next to it)")
    p.add_argument("--questions-from", default=None,
                   help="ask this parallel SQuAD file's questions (another language) against --data's paragraphs")
    p.add_argument("--modes", default="keyword", help="comma-separated: keyword,vector,hybrid")
    p.add_argument("--config", default=None, help="TOML merged over the defaults")
    p.add_argument("--min-score", type=float, default=0.0, help="every search's threshold (default 0)")
    p.add_argument("--limit-questions", type=int, default=0, help="only the first N questions")
    p.add_argument("--evidence", default="",
                   help="comma-separated keyword_evidence settings (off,script,terms,best): hybrid again under each")
    p.add_argument("--pools", default="",
                   help="comma-separated [search.heuristics] pool values (shown,raw,union,slot,raw-slot): hybrid "
                        "again under each")
    p.add_argument("--details", default=None,
                   help="also write one JSON line per question and label here (qid, gold note, metrics, top 3)")
    p.add_argument("--home", default=None, help="data dir for the workspace and index (default: MEMDECK_HOME, else temp)")
    p.add_argument("--torch-threads", type=int, default=0,
                   help="torch.set_num_threads(N) after the model loads (0: leave torch's default)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: run, write ``OUT`` and ``OUT.md``, print the table."""
    return run_main(build_parser(), run, render_markdown, argv)


if __name__ == "__main__":
    raise SystemExit(main())
