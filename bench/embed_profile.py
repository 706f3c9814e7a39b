"""Where embedding time goes when a workspace is indexed: windows vs line vectors, repeats, batches, threads.

Usage::

    python bench/embed_profile.py --workspace demo|realshape|PATH --out bench/results/x.json
        [--sample-tokens 6000] [--threads 1,2] [--line-min-tokens 0] [--full]
        [--plans windows+lines,windows,lines] [--runs 3] [--only-plans]

The workspace is chunked (no embedding) into a temporary index; every text the indexer would embed is then
planned exactly as ``engine.index.indexer.embed_pending`` plans it (windows by the model's tokenizer, line
vectors by ``engine.index.chunking.plan_lines``), and counted: texts and tokens per kind, repeated texts (same
content hash: embedded once), how today's batches mix lengths (a padded engine's waste), and what the length
buckets of ``engine.embed.batching`` make of them. Then a sample of each kind (``--sample-tokens`` tokens, drawn
evenly) is embedded with multilingual-e5-small at each thread count, giving tokens/s per kind and the
extrapolated seconds per phase; ``--full`` also times the real sync of the whole workspace (the demo: a few
seconds; a 3 MB workspace: many minutes on 2 shared cores). The load average is recorded with every timing.

``--plans`` counts, for each ``[index] vectors`` plan, exactly what ``engine.index.indexer.plan_group`` sends
to the model (texts and tokens, windows from text vs derived from lines); with ``--full`` each plan's real sync
of the whole workspace is timed ``--runs`` times from an empty home (no cache): wall and CPU seconds, p50.
``--only-plans`` skips the per-kind samples.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
for p in (str(REPO), str(REPO / "bench")):
    if p not in sys.path:
        sys.path.insert(0, p)

from _bench_common import header, load_avg, open_engine, table, write_json  # noqa: E402

from engine.embed.batching import length_batches, padding_ratio  # noqa: E402
from engine.index import queries  # noqa: E402
from engine.index.chunking import plan_lines, plan_windows  # noqa: E402
from engine.index.embed_plan import LinePolicy, pick_lines  # noqa: E402
from engine.index.indexer import EMBED_SLICE, content_hash, plan_group  # noqa: E402


def workspace_path(name: str, root: Path) -> Path:
    if name == "demo":
        return REPO / "engine" / "demo_workspace"
    if name == "realshape":
        from gen_realshape import generate

        ws = root / "ws-realshape"
        if not (ws / ".generated").exists():
            generate(ws)
            (ws / ".generated").write_text("ok\n")
        return ws
    return Path(name)


def plan(pending: list[tuple[int, str]], count: Any, max_tokens: int, policy: LinePolicy | None) -> dict[str, Any]:
    """Every text the indexer would embed, by kind, with its hash and token count (policy None: today's)."""
    windows: list[tuple[str, str]] = []
    lines: list[tuple[str, str]] = []
    for _cid, text in pending:
        for w in plan_windows(text, count, max_tokens):
            windows.append((content_hash(w.text), w.text))
        picked = plan_lines(text) if policy is None else pick_lines(text, count, policy)
        lines.extend((content_hash(t), t) for _i, t in picked)
    return {"windows": windows, "lines": lines}


def summarize(kind_texts: dict[str, list[tuple[str, str]]], count: Any) -> dict[str, Any]:
    seen: set[str] = set()
    out: dict[str, Any] = {}
    for kind, items in kind_texts.items():
        hashes = Counter(h for h, _ in items)
        unique = {h: t for h, t in items}
        new = {h: t for h, t in unique.items() if h not in seen}
        seen.update(unique)
        toks = count(list(new.values())) if new else []
        out[kind] = {
            "texts": len(items), "unique": len(unique), "repeats": len(items) - len(unique),
            "unique_new": len(new), "tokens": int(sum(toks)),
            "tokens_mean": round(statistics.mean(toks), 1) if toks else 0,
            "tokens_median": statistics.median(toks) if toks else 0,
            "under_8_tokens": sum(1 for t in toks if t < 8),
            "top_repeats": [[n, t[:60]] for h, n in hashes.most_common(3) for t in [unique[h]] if n > 1],
        }
    return out


def today_batches(pending: list[tuple[int, str]], texts: dict[str, list[tuple[str, str]]], count: Any,
                  batch_size: int) -> dict[str, Any]:
    """Today's batches: per group of ``batch_size*4`` chunks, texts sorted by characters, slices, then 32s."""
    merged = {h: t for items in texts.values() for h, t in items}
    order = sorted(merged.items(), key=lambda kv: len(kv[1]))
    tokens = dict(zip([h for h, _ in order], count([t for _, t in order]), strict=True))
    # Approximation: one group over everything (today's groups are 128 chunks; within one, the same sort).
    batches = [[h for h, _ in order[a : a + batch_size]]
               for s in range(0, len(order), EMBED_SLICE) for a in range(s, min(s + EMBED_SLICE, len(order)),
                                                                         batch_size)]
    idx = {h: i for i, h in enumerate(tokens)}
    toks = list(tokens.values())
    today = [[idx[h] for h in b] for b in batches]
    buckets = length_batches(toks)
    return {
        "today_batches": len(today), "today_tokens_per_batch": round(sum(toks) / max(1, len(today))),
        "today_padding_ratio": round(padding_ratio(toks, today), 3),
        "bucket_batches": len(buckets), "bucket_tokens_per_batch": round(sum(toks) / max(1, len(buckets))),
        "bucket_padding_ratio": round(padding_ratio(toks, buckets), 3),
    }


def time_sample(embedder: Any, texts: list[str], threads: int, bucketed: bool) -> dict[str, Any]:
    tokens = embedder.count_tokens(texts)
    embedder.load()
    c0, t0, load0 = time.process_time(), time.perf_counter(), load_avg()
    embedder._threads(threads)
    if bucketed:
        for b in length_batches([t + 4 for t in tokens]):
            embedder._model.passage([texts[i] for i in b])
    else:
        for a in range(0, len(texts), 32):
            embedder._model.passage(texts[a : a + 32])
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    total = sum(tokens) + 4 * len(texts)
    return {"threads": threads, "bucketed": bucketed, "texts": len(texts), "tokens": total,
            "seconds": round(wall, 2), "cpu_s": round(cpu, 2), "tok_per_s": round(total / wall),
            "tok_per_cpu_s": round(total / cpu) if cpu else 0, "load": round(load0, 2)}


def evenly(items: list[str], count: Any, budget: int) -> list[str]:
    if not items:
        return []
    toks = count(items)
    mean = max(1.0, sum(toks) / len(toks))
    k = max(1, min(len(items), int(budget / mean)))
    step = len(items) / k
    return [items[int(i * step)] for i in range(k)]


def plan_costs(pending: list[tuple[int, str]], count: Any, max_tokens: int, plans: list[str],
               min_tokens: int) -> dict[str, Any]:
    """Per ``[index] vectors`` plan: the unique texts the indexer embeds for ``pending`` and their tokens."""
    out: dict[str, Any] = {}
    for name in plans:
        t = time.perf_counter()
        gp = plan_group(pending, count, max_tokens, name, LinePolicy(min_tokens=min_tokens))
        toks = count(list(gp.texts.values())) if gp.texts else []
        out[name] = {"texts": len(gp.texts), "tokens": int(sum(toks)),
                     "tokens_with_specials": int(sum(toks)) + 4 * len(toks),
                     "windows": len(gp.windows), "windows_from_text": sum(1 for w in gp.windows if not w[4]),
                     "windows_derived": sum(1 for w in gp.windows if w[4]), "line_vectors": len(gp.lines),
                     "plan_seconds": round(time.perf_counter() - t, 2)}
    return out


def full_runs(ws: Path, root: Path, embedder: Any, plans: list[str], runs: int, min_tokens: int,
              power: float) -> dict[str, Any]:
    """Each plan's whole sync from an empty home (nothing cached), ``runs`` times, the plans interleaved (a, b,
    a, b, ...: the machine's load drifts alike over all of them): wall/CPU seconds, p50."""
    os.environ.pop("MEMDECK_LINE_MIN_TOKENS", None)
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in plans}
    for _ in range(runs):
        for name in plans:
            home = Path(tempfile.mkdtemp(prefix=f"embed-profile-{name}-", dir=root))
            overrides = {"index": {"vectors": name, "line_min_tokens": min_tokens, "lines_power": power}}
            engine = open_engine(ws, home, embedder, overrides)
            load0 = load_avg()
            t, c = time.perf_counter(), time.process_time()
            report = engine.sync(wait=600.0)
            wall, cpu = time.perf_counter() - t, time.process_time() - c
            engine.close()
            rows[name].append({"seconds": round(wall, 2), "cpu_s": round(cpu, 2), "chunks": report.chunks_total,
                               "embedded": report.embedded, "load": round(load0, 2)})
            print(json.dumps({"plan": name, **rows[name][-1]}), flush=True)
    out: dict[str, Any] = {}
    for name, got in rows.items():
        p50 = statistics.median(r["seconds"] for r in got)
        out[name] = {"runs": got, "p50_seconds": round(p50, 2),
                     "p50_cpu_s": round(statistics.median(r["cpu_s"] for r in got), 2),
                     "chunks_per_s": round(got[0]["chunks"] / p50, 2) if p50 else 0.0}
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    from engine.embed.local import E5Embedder

    root = Path(args.root)
    ws = workspace_path(args.workspace, root)
    home = Path(tempfile.mkdtemp(prefix="embed-profile-", dir=root))
    embedder = E5Embedder()
    embedder.load()
    engine = open_engine(ws, home, embedder)
    t0 = time.perf_counter()
    engine.sync(embed=False, wait=600.0)
    chunk_s = time.perf_counter() - t0
    pending = queries.pending_chunks(engine.store.conn)
    size = sum(f.stat().st_size for f in ws.rglob("*.md"))
    count = embedder.count_tokens
    max_tokens = embedder.max_tokens
    result: dict[str, Any] = header("embed_profile", args)
    result.update({"workspace": str(ws), "bytes": size, "chunks": len(pending), "chunk_seconds": round(chunk_s, 2)})
    plans = [x.strip() for x in args.plans.split(",") if x.strip()]
    if plans:
        result["plans"] = plan_costs(pending, count, max_tokens, plans, args.line_min_tokens)
        print(json.dumps(result["plans"]), flush=True)
    if args.only_plans:
        embedder._threads(int(args.threads.split(",")[-1]))
        if args.full:
            result["plan_full"] = full_runs(ws, root, embedder, plans, args.runs, args.line_min_tokens,
                                            args.lines_power)
        result["load_avg_end"] = load_avg()
        return result
    policies: dict[str, LinePolicy | None] = {"today": None,
                                               "new": LinePolicy(min_tokens=args.line_min_tokens)}
    for name, policy in policies.items():
        t = time.perf_counter()
        texts = plan(pending, count, max_tokens, policy)
        plan_s = time.perf_counter() - t
        summary = summarize(texts, count)
        summary["plan_seconds"] = round(plan_s, 2)
        summary["batches"] = today_batches(pending, texts, count, 32)
        result[f"plan_{name}"] = summary
    texts = plan(pending, count, max_tokens, None)
    samples: list[dict[str, Any]] = []
    for kind in ("windows", "lines"):
        uniq = list({h: t for h, t in texts[kind]}.values())
        sample = evenly(uniq, count, args.sample_tokens)
        for threads in [int(x) for x in args.threads.split(",") if x.strip()]:
            for bucketed in (False, True):
                r = time_sample(embedder, sample, threads, bucketed)
                r["kind"] = kind
                samples.append(r)
                print(json.dumps(r), flush=True)
    result["samples"] = samples
    # Extrapolate: seconds per phase at the best measured rate of each kind (bucketed, any thread count).
    for name in policies:
        est = {}
        for kind in ("windows", "lines"):
            rates = [s["tok_per_s"] for s in samples if s["kind"] == kind and s["bucketed"]]
            info = result[f"plan_{name}"][kind]
            est[kind] = round((info["tokens"] + 4 * info["unique_new"]) / max(rates), 1) if rates else None
        result[f"plan_{name}"]["estimated_embed_seconds"] = est
    if args.full:
        os.environ.pop("MEMDECK_LINE_MIN_TOKENS", None)
        home2 = Path(tempfile.mkdtemp(prefix="embed-profile-full-", dir=root))
        full_engine = open_engine(ws, home2, embedder)
        load0 = load_avg()
        t = time.perf_counter()
        c = time.process_time()
        report = full_engine.sync(wait=600.0)
        wall = time.perf_counter() - t
        result["full_sync"] = {"seconds": round(wall, 2), "cpu_s": round(time.process_time() - c, 2),
                               "chunks": report.chunks_total, "embedded": report.embedded,
                               "chunks_per_s": round(report.chunks_total / wall, 2), "load": round(load0, 2)}
    result["load_avg_end"] = load_avg()
    return result


def render_plans(result: dict[str, Any]) -> str:
    rows = []
    for name, p in result.get("plans", {}).items():
        full = result.get("plan_full", {}).get(name, {})
        rows.append([name, p["texts"], p["tokens"], p["windows_from_text"], p["windows_derived"], p["line_vectors"],
                     full.get("p50_seconds", ""), full.get("p50_cpu_s", ""), full.get("chunks_per_s", ""),
                     ",".join(str(r["load"]) for r in full.get("runs", []))])
    return table(["plan", "texts", "tokens", "windows (text)", "windows (derived)", "line vectors", "p50 s",
                  "p50 CPU s", "chunks/s", "load"], rows)


def render(result: dict[str, Any]) -> str:
    if "samples" not in result:
        return (f"workspace {result['workspace']}: {result['bytes'] / 1e6:.2f} MB, {result['chunks']} chunks\n\n"
                + render_plans(result))
    rows = []
    for name in ("today", "new"):
        p = result[f"plan_{name}"]
        for kind in ("windows", "lines"):
            k = p[kind]
            rows.append([name, kind, k["texts"], k["unique_new"], k["repeats"], k["tokens"], k["tokens_mean"],
                         p["estimated_embed_seconds"][kind]])
    out = [f"workspace {result['workspace']}: {result['bytes'] / 1e6:.2f} MB, {result['chunks']} chunks", "",
           table(["plan", "kind", "texts", "unique new", "repeats", "tokens", "mean tok", "est. s"], rows), ""]
    out.append(table(["kind", "threads", "bucketed", "texts", "tokens", "s", "tok/s", "tok/cpu-s", "load"],
                     [[s["kind"], s["threads"], s["bucketed"], s["texts"], s["tokens"], s["seconds"],
                       s["tok_per_s"], s["tok_per_cpu_s"], s["load"]] for s in result["samples"]]))
    if "plans" in result:
        out += ["", render_plans(result)]
    if "full_sync" in result:
        out += ["", f"full sync: {json.dumps(result['full_sync'])}"]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--workspace", default="demo")
    p.add_argument("--out", default=None)
    p.add_argument("--root", default="/tmp/memdeck-bench")
    p.add_argument("--sample-tokens", type=int, default=6000)
    p.add_argument("--threads", default="1,2")
    p.add_argument("--line-min-tokens", type=int, default=0)
    p.add_argument("--full", action="store_true")
    p.add_argument("--plans", default="", help="comma-separated [index] vectors plans to count (and time with --full)")
    p.add_argument("--runs", type=int, default=3, help="with --plans and --full: full syncs per plan")
    p.add_argument("--lines-power", type=float, default=0.5, help="[index] lines_power of the lines plan")
    p.add_argument("--only-plans", action="store_true", help="count/time the plans only (no per-kind samples)")
    args = p.parse_args(argv)
    Path(args.root).mkdir(parents=True, exist_ok=True)
    result = run(args)
    text = render(result)
    print(text)
    if args.out:
        write_json(Path(args.out), result)
        Path(args.out).with_suffix(".md").write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
