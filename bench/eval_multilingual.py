"""Serbian/Chinese/English paraphrase and cross-lingual retrieval over notes we wrote: hit@1/hit@3 per language pair.

Usage::

    python bench/eval_multilingual.py --out bench/results/x.json [--modes keyword,vector,hybrid] \\
        [--config overrides.toml] [--home DIR] [--data bench/data/multilingual]

``bench/data/multilingual/`` holds two OpenClaw-style workspaces (``sr/``: a Serbian user's notes in Latin script
with some English work notes; ``zh/``: a Chinese user's, likewise) and ``questions.json``: questions whose
``pair`` is *question language -> note language* (sr->sr and zh->zh paraphrases, en->zh, en->sr, sr->en) and whose
``gold`` is the note that answers them. A question scores by file: is the gold note among the top 1 / top 3.
Workspaces are copied under ``$HOME/multilingual/<name>/`` so reruns reuse the index and the embedding cache.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _eval_common import (
    VECTOR_MODES,
    Stopwatch,
    aggregate,
    config_summary,
    eval_home,
    git_revision,
    latency_summary,
    load_overrides,
    machine_info,
    markdown_table,
    now_iso,
    parse_modes,
    run_main,
    sync_workspace_files,
)

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # the engine: installed (editable) or from this checkout
    sys.path.append(str(REPO))

DATA = REPO / "bench" / "data" / "multilingual"
METRICS = ("hit@1", "hit@3", "mrr@10")
MAX_RESULTS = 10
PAIRS = ("sr->sr", "zh->zh", "en->zh", "en->sr", "sr->en")


@dataclass(frozen=True)
class Question:
    """One question, the workspace it is asked in and the note that answers it."""

    qid: str
    pair: str
    workspace: str
    text: str
    gold: str


def load_data(root: Path) -> tuple[dict[str, dict[str, str]], list[Question]]:
    """The workspaces (name → rel path → text) and the questions under ``root``.

    Raises:
        ValueError: a question names a workspace or a gold note that is not there.
    """
    workspaces: dict[str, dict[str, str]] = {}
    for ws in sorted(p for p in root.iterdir() if p.is_dir()):
        workspaces[ws.name] = {p.relative_to(ws).as_posix(): p.read_text(encoding="utf-8")
                               for p in sorted(ws.rglob("*.md"))}
    raw = json.loads((root / "questions.json").read_text(encoding="utf-8"))
    questions = [Question(str(q["id"]), str(q["pair"]), str(q["workspace"]), str(q["question"]), str(q["gold"]))
                 for q in raw["questions"]]
    for q in questions:
        if q.gold not in workspaces.get(q.workspace, {}):
            raise ValueError(f"{q.qid}: gold {q.gold} is not in workspace {q.workspace!r}")
    return workspaces, questions


def score_paths(paths: Sequence[str], gold: str) -> dict[str, float]:
    """hit@1, hit@3 and MRR@10 by file for a ranked list of result paths (chunks of one note may repeat)."""
    files = list(dict.fromkeys(paths))
    rank = next((i for i, path in enumerate(files[:MAX_RESULTS], start=1) if path == gold), None)
    return {
        "hit@1": 1.0 if rank == 1 else 0.0,
        "hit@3": 1.0 if rank is not None and rank <= 3 else 0.0,
        "mrr@10": 1.0 / rank if rank is not None else 0.0,
    }


def by_pair(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """Per language pair (and ``all``): n and the mean of each metric."""
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[str(row["pair"])].append(row)
    out = {pair: aggregate(groups[pair], METRICS) for pair in PAIRS if pair in groups}
    out["all"] = aggregate(rows, METRICS)
    return out


def render_markdown(payload: Mapping[str, Any], modes: Sequence[str]) -> str:
    """hit@3 counts per mode and language pair, then the misses."""
    meta = payload["meta"]
    pairs = [p for p in (*PAIRS, "all") if p in payload[modes[0]]]
    rows = []
    for mode in modes:
        cells = []
        for pair in pairs:
            agg = payload[mode][pair]
            cells.append(f"{round(agg['hit@3'] * agg['n'])}/{agg['n']:.0f}")
        rows.append([mode, *cells, payload[mode]["all"]["hit@1"], payload[mode]["all"]["mrr@10"]])
    lines = [
        "# Multilingual notes — paraphrase and cross-lingual retrieval",
        "",
        f"{meta['date']} · model {meta['model']} · {meta['questions']} questions over "
        f"{meta['notes']} notes in {len(meta['workspaces'])} workspaces · hit@3 by file",
        "",
        markdown_table(["mode", *[f"{p} @3" for p in pairs], "hit@1", "mrr@10"], rows),
        "",
    ]
    for mode in modes:
        missed = [d for d in payload["details"] if d["mode"] == mode and not d["hit@3"]]
        if missed:
            lines.append(f"Missed at 3 ({mode}): " + "; ".join(
                f"{d['id']} “{d['question']}” → {', '.join(d['top'][:3])}" for d in missed))
            lines.append("")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Run the eval and return the JSON payload."""
    from engine.api import MemoryEngine
    from engine.config import load_config

    modes = parse_modes(args.modes)
    root = Path(args.data)
    workspaces, questions = load_data(root)
    home, _temporary = eval_home(Path(args.home) if args.home else None)
    overrides = load_overrides(Path(args.config) if args.config else None)
    need_vec = any(m in VECTOR_MODES for m in modes)
    details: list[dict[str, Any]] = []
    latencies: dict[str, list[float]] = {m: [] for m in modes}
    model: str | None = None
    index_seconds = 0.0
    warnings: set[str] = set()
    with Stopwatch() as total:
        for name, files in workspaces.items():
            workspace = home / "multilingual" / name
            sync_workspace_files(workspace, files)
            config = load_config(workspace=workspace, home=home, overrides=overrides,
                                 config_path=home / "no-config.toml")
            with MemoryEngine(config) as engine:
                model = engine.choice.model
                with Stopwatch() as sw:
                    report = engine.sync(embed=need_vec)
                index_seconds += sw.seconds
                warnings.update(report.issues)
                for q in (q for q in questions if q.workspace == name):
                    for mode in modes:
                        with Stopwatch() as qsw:
                            resp = engine.search(q.text, mode=mode, max_results=MAX_RESULTS, min_score=0.0,
                                                 ensure_fresh=False)
                        latencies[mode].append(qsw.seconds)
                        warnings.update(resp.warnings)
                        paths = [h.path for h in resp.results]
                        details.append({"id": q.qid, "pair": q.pair, "mode": mode, "used_mode": resp.mode,
                                        "question": q.text, "gold": q.gold,
                                        "top": list(dict.fromkeys(paths))[:5], **score_paths(paths, q.gold)})
    payload: dict[str, Any] = {mode: by_pair([d for d in details if d["mode"] == mode]) for mode in modes}
    payload["details"] = details
    payload["meta"] = {
        "data": str(root),
        "data_sha256": hashlib.sha256((root / "questions.json").read_bytes()).hexdigest(),
        "date": now_iso(),
        "model": model,
        "modes": modes,
        "questions": len(questions),
        "notes": sum(len(f) for f in workspaces.values()),
        "workspaces": sorted(workspaces),
        "home": str(home),
        "overrides": overrides,
        "config": config_summary(config) if workspaces else {},
        "warnings": sorted(warnings)[:20],
        "timings": {"total_seconds": round(total.seconds, 2), "index_seconds": round(index_seconds, 3),
                    "query": {m: latency_summary(latencies[m]) for m in modes}},
        "machine": machine_info(),
        "git": git_revision(REPO),
    }
    return payload


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--data", default=str(DATA), help="folder with the workspaces and questions.json")
    p.add_argument("--out", required=True, help="where to write the JSON results (the .md goes next to it)")
    p.add_argument("--modes", default="keyword,vector,hybrid", help="comma-separated: keyword,vector,hybrid")
    p.add_argument("--config", default=None, help="TOML merged over the defaults")
    p.add_argument("--home", default=None, help="data dir for workspaces and indexes (default: MEMDECK_HOME, else temp)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: run, write ``OUT`` and ``OUT.md``, print the table."""
    return run_main(build_parser(), run, render_markdown, argv)


if __name__ == "__main__":
    raise SystemExit(main())
