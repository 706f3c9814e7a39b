"""Every offline embedding model memdeck can load, measured the same way: LoCoMo, XQuAD, multilingual notes, speed.

Usage::

    nice -n 5 python bench/eval_models.py [--models all-MiniLM-L6-v2,multilingual-e5-small,use-multilingual-v3] \\
        [--work /tmp/eval-models] [--out bench/results/2026-12-01-models.json] [--xquad-limit N] [--reuse] \\
        [--only locomo,xquad,multilingual,speed,rss] [--raw-fusion]

Per model, one step at a time (each a subprocess, so no model's imports flatter the next): dev LoCoMo
(``eval_locomo.py --modes keyword,vector,hybrid``), XQuAD monolingual (zh, ru, en) and cross-lingual (English
questions → Chinese or Russian paragraphs, ``eval_xquad.py --questions-from``), the Serbian/Chinese notes
(``eval_multilingual.py``), and speed (``embed_throughput.py``: load time, chunks/s, query p50/p95, RSS;
``rss_idle.py --query-model``: the engine idle on a 10k-chunk index). Each model gets its own ``--home`` under
``--work`` (separate indexes and embedding caches); each step's JSON stays there and ``--reuse`` keeps the ones
already written. The report puts speed as a ratio to all-MiniLM-L6-v2 measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from _eval_common import git_revision, machine_info, markdown_table, now_iso, write_outputs

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"
SHARED = REPO.parent / "shared" / "data"
MODELS = ("all-MiniLM-L6-v2", "multilingual-e5-small", "use-multilingual-v3")
BASELINE = "all-MiniLM-L6-v2"
STEPS = ("locomo", "xquad", "multilingual", "speed", "rss")
# (name, paragraphs file, questions file or None): cross-lingual runs ask English questions of other paragraphs.
XQUAD_RUNS = (("zh", "zh", None), ("ru", "ru", None), ("en", "en", None), ("en→zh", "zh", "en"), ("en→ru", "ru", "en"))
CATEGORY_NAMES = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop"}


def _config(work: Path, model: str, raw_fusion: bool) -> Path:
    """A TOML that selects ``model`` (the evals' ``--config``); ``raw_fusion`` pins raw cosines, no re-ranker."""
    path = work / f"{model}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = f'[embedding]\nprovider = "local"\nmodel = "{model}"\n'
    if raw_fusion:
        # The same fusion for every model: calibration and the re-ranker are fitted per model, after the choice.
        text += '[search]\nvector_norm = "raw"\nrerank = false\n'
    path.write_text(text, encoding="utf-8")
    return path


def _run(cmd: Sequence[str], out: Path, reuse: bool) -> dict[str, Any] | None:
    """Run one step (niced) unless ``reuse`` and its JSON exists; its JSON, or None when it failed."""
    if reuse and out.exists():
        return dict(json.loads(out.read_text(encoding="utf-8")))
    out.parent.mkdir(parents=True, exist_ok=True)
    print(f"$ {' '.join(cmd)}", file=sys.stderr, flush=True)
    started = time.monotonic()
    done = subprocess.run(["nice", "-n", "5", sys.executable, *cmd], cwd=REPO, capture_output=True, text=True,
                          check=False, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    print(f"  … {time.monotonic() - started:.0f} s, exit {done.returncode}", file=sys.stderr, flush=True)
    if done.returncode != 0 or not out.exists():
        print(done.stderr[-3000:], file=sys.stderr)
        return None
    return dict(json.loads(out.read_text(encoding="utf-8")))


def measure_model(model: str, args: argparse.Namespace) -> dict[str, Any]:
    """Run the chosen steps for one model; the per-step payloads by name."""
    work: Path = args.work / model
    home = work / "home"
    cfg = _config(args.work, model, args.raw_fusion)
    steps: list[str] = args.only
    res: dict[str, Any] = {}
    if "locomo" in steps:
        res["locomo"] = _run([str(BENCH / "eval_locomo.py"), "--data", str(args.locomo), "--out",
                              str(work / "locomo.json"), "--modes", "keyword,vector,hybrid", "--config", str(cfg),
                              "--home", str(home)], work / "locomo.json", args.reuse)
    if "xquad" in steps:
        res["xquad"] = {}
        for name, paras, asked in XQUAD_RUNS:
            out = work / f"xquad-{name.replace('→', '-to-')}.json"
            cmd = [str(BENCH / "eval_xquad.py"), "--data", str(args.xquad / f"xquad.{paras}.json"), "--out", str(out),
                   "--modes", "keyword,vector,hybrid", "--config", str(cfg), "--home", str(home)]
            if asked:
                cmd += ["--questions-from", str(args.xquad / f"xquad.{asked}.json")]
            if args.xquad_limit:
                cmd += ["--limit-questions", str(args.xquad_limit)]
            res["xquad"][name] = _run(cmd, out, args.reuse)
    if "multilingual" in steps:
        res["multilingual"] = _run([str(BENCH / "eval_multilingual.py"), "--out", str(work / "multilingual.json"),
                                    "--config", str(cfg), "--home", str(home)], work / "multilingual.json", args.reuse)
    if "speed" in steps:
        out = work / "speed.json"
        cmd = [str(BENCH / "embed_throughput.py"), "--models", model, "--out", str(out)]
        if (args.xquad / "xquad.zh.json").exists():
            cmd += ["--xquad", str(args.xquad / "xquad.zh.json")]
        payload = _run(cmd, out, args.reuse)
        res["speed"] = (payload or {}).get("results", [None])[0]
    if "rss" in steps:
        out = work / "rss.json"
        res["rss"] = _run([str(BENCH / "rss_idle.py"), "--no-tui", "--query-model", model, "--out", str(out),
                           "--root", str(args.work / "rss")], out, args.reuse)
    return res


# -- the report (pure) -------------------------------------------------------------------------------
def _metric(payload: Mapping[str, Any] | None, *keys: str) -> float | None:
    """``payload[k1][k2]…`` or None when any part is missing."""
    cur: Any = payload
    for key in keys:
        if not isinstance(cur, Mapping) or key not in cur:
            return None
        cur = cur[key]
    return float(cur) if isinstance(cur, int | float) else None


def _cell(value: float | None, digits: int = 3) -> str:
    if value is None:
        return "–"
    return f"{value:.{digits}f}".lstrip("0") if 0 <= value < 1 else f"{value:.{digits}f}"


def _ratio(value: float | None, base: float | None) -> str:
    if value is None or not base:
        return "–"
    return f"{value / base:.2f}×"


def summary_rows(results: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The headline numbers per model (what the README table and the decision quote)."""
    out: dict[str, dict[str, Any]] = {}
    for model, res in results.items():
        loc = res.get("locomo")
        xq = res.get("xquad") or {}
        ml = res.get("multilingual")
        sp = res.get("speed") or {}
        rss = res.get("rss") or {}
        row: dict[str, Any] = {}
        for mode in ("vector", "hybrid"):
            for m in ("hit@1", "hit@5", "mrr@10", "snip@1", "snip@5"):
                row[f"locomo {mode} {m}"] = _metric(loc, mode, "overall", m)
            for cat in CATEGORY_NAMES:
                row[f"locomo {mode} hit@1 cat{cat}"] = _metric(loc, mode, "by_category", cat, "hit@1")
            for name, _, _ in XQUAD_RUNS:
                row[f"xquad {name} {mode} hit@1"] = _metric(xq.get(name), mode, "hit@1")
                row[f"xquad {name} {mode} hit@5"] = _metric(xq.get(name), mode, "hit@5")
            row[f"multilingual {mode} hit@3"] = _metric(ml, mode, "all", "hit@3")
            row[f"multilingual {mode} n"] = _metric(ml, mode, "all", "n")
            for pair in ("sr->sr", "zh->zh", "en->zh", "en->sr", "sr->en"):
                row[f"multilingual {mode} {pair} hit@3"] = _metric(ml, mode, pair, "hit@3")
        row["keyword locomo hit@1"] = _metric(loc, "keyword", "overall", "hit@1")
        row["load s"] = _metric(sp, "load_seconds")
        row["chunks/s"] = _metric(sp, "corpora", "demo-en", "chunks_per_s")
        row["zh paragraphs/s"] = _metric(sp, "corpora", "xquad-zh", "chunks_per_s")
        row["query p50 ms"] = _metric(sp, "query_ms_median")
        row["query p95 ms"] = _metric(sp, "query_ms_p95")
        row["peak RSS MB"] = _metric(sp, "peak_rss_mb")
        row["engine idle RSS MB (10k chunks)"] = _metric(rss, "rss_mb", "idle 2 s later")
        row["locomo hybrid p95 ms"] = _metric(loc, "meta", "timings", "query", "hybrid", "p95_ms")
        out[model] = row
    return out


def render_markdown(payload: Mapping[str, Any]) -> str:
    """The comparison tables."""
    summary: Mapping[str, Mapping[str, Any]] = payload["summary"]
    models = list(summary)
    base = summary.get(BASELINE, {})
    lines = [
        "# Offline embedding models, measured the same way",
        "",
        f"{payload['date']} · git {payload['git']} · {payload['machine']['cpus']} CPUs · `bench/eval_models.py`"
        + (f" · XQuAD: first {payload['xquad_limit']} questions per file" if payload.get("xquad_limit") else "")
        + (" · hybrid: raw cosines, no re-ranker (`--raw-fusion`)" if payload.get("raw_fusion") else ""),
        "",
        "## Quality",
        "",
    ]
    rows = []
    for mode in ("vector", "hybrid"):
        for model in models:
            s = summary[model]
            ml_n = s.get(f"multilingual {mode} n")
            ml = s.get(f"multilingual {mode} hit@3")
            rows.append([
                model, mode,
                _cell(s[f"locomo {mode} hit@1"]), _cell(s[f"locomo {mode} hit@5"]), _cell(s[f"locomo {mode} mrr@10"]),
                _cell(s[f"xquad zh {mode} hit@1"]), _cell(s[f"xquad ru {mode} hit@1"]), _cell(s[f"xquad en {mode} hit@1"]),
                _cell(s[f"xquad en→zh {mode} hit@1"]), _cell(s[f"xquad en→ru {mode} hit@1"]),
                f"{round(ml * ml_n)}/{ml_n:.0f}" if ml is not None and ml_n else "–",
            ])
    lines += [markdown_table(["model", "mode", "LoCoMo hit@1", "hit@5", "MRR@10", "XQuAD zh hit@1", "ru", "en",
                              "en→zh", "en→ru", "sr/zh notes hit@3"], rows), ""]
    lines += ["### LoCoMo hit@1 per category", ""]
    rows = []
    for mode in ("vector", "hybrid"):
        for model in models:
            s = summary[model]
            rows.append([model, mode, *[_cell(s[f"locomo {mode} hit@1 cat{c}"]) for c in CATEGORY_NAMES]])
    lines += [markdown_table(["model", "mode", *[f"{c} {n}" for c, n in CATEGORY_NAMES.items()]], rows), ""]
    lines += ["### Serbian / Chinese notes: hit@3 per language pair (question → note)", ""]
    rows = []
    for mode in ("vector", "hybrid"):
        for model in models:
            s = summary[model]
            rows.append([model, mode, *[_cell(s[f"multilingual {mode} {p} hit@3"], 2)
                                        for p in ("sr->sr", "zh->zh", "en->zh", "en->sr", "sr->en")]])
    lines += [markdown_table(["model", "mode", "sr→sr", "zh→zh", "en→zh", "en→sr", "sr→en"], rows), ""]
    lines += ["## Speed and memory (ratios: to all-MiniLM-L6-v2 in this run)", ""]
    rows = []
    for model in models:
        s = summary[model]
        rows.append([model, _cell(s["load s"], 2), _cell(s["chunks/s"], 1), _ratio(s["chunks/s"], base.get("chunks/s")),
                     _cell(s["query p50 ms"], 1), _cell(s["query p95 ms"], 1),
                     _ratio(s["query p50 ms"], base.get("query p50 ms")), _cell(s["peak RSS MB"], 0),
                     _cell(s["engine idle RSS MB (10k chunks)"], 0), _cell(s["locomo hybrid p95 ms"], 1)])
    lines += [markdown_table(["model", "load s", "chunks/s (demo)", "× MiniLM", "query p50 ms", "p95 ms",
                              "× MiniLM", "peak RSS MB (embed)", "engine idle RSS MB (10k)",
                              "LoCoMo hybrid search p95 ms"], rows), ""]
    lines += [
        "LoCoMo: dev file (5 conversations, 760 questions), default settings but the model. XQuAD: each paragraph",
        "a note; en→zh / en→ru ask the English questions of the Chinese / Russian paragraphs. sr/zh notes:",
        "`bench/data/multilingual/` (hit@3 by file). Speed: `embed_throughput.py` (demo chunks windowed to each",
        "model's limit; queries one at a time) and `rss_idle.py --no-tui --query-model` (10k chunks). The machine",
        "is shared (2 cores): timings carry the load average in each step's JSON.",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: measure, then write ``--out`` and its ``.md``."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--work", type=Path, default=Path("/tmp/memdeck-eval-models"),
                   help="per-model homes and step results")
    p.add_argument("--out", type=Path, default=BENCH / "results" / "2026-12-01-models.json")
    p.add_argument("--locomo", type=Path, default=SHARED / "locomo" / "locomo-dev.json")
    p.add_argument("--xquad", type=Path, default=SHARED / "xquad", help="folder with xquad.{en,zh,ru}.json")
    p.add_argument("--xquad-limit", type=int, default=0, help="only the first N questions of each XQuAD file")
    p.add_argument("--only", default=",".join(STEPS), help=f"comma-separated steps of: {', '.join(STEPS)}")
    p.add_argument("--reuse", action="store_true", help="keep step results already in --work")
    p.add_argument("--raw-fusion", action="store_true",
                   help="hybrid with raw cosines and no re-ranker for every model (search.vector_norm, search.rerank)")
    args = p.parse_args(argv)
    args.only = [s.strip() for s in args.only.split(",") if s.strip()]
    bad = [s for s in args.only if s not in STEPS]
    if bad:
        p.error(f"unknown step(s) {bad}")
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    results = {model: measure_model(model, args) for model in models}
    payload: dict[str, Any] = {
        "date": now_iso(), "git": git_revision(REPO), "machine": machine_info(), "models": models,
        "xquad_limit": args.xquad_limit, "raw_fusion": args.raw_fusion, "work": str(args.work), "summary": summary_rows(results), "steps": results,
    }
    md = render_markdown(payload)
    md_path = write_outputs(args.out, payload, md)
    print(md)
    print(f"\nwrote {args.out} and {md_path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
