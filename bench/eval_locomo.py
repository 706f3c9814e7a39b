"""LoCoMo retrieval eval: each conversation becomes an OpenClaw-style workspace; score hit@k/MRR/snippets per mode.

Usage::

    MEMDECK_HOME=/tmp/locomo-home python bench/eval_locomo.py --data locomo-dev.json --out bench/results/x.json \\
        [--modes keyword,vector,hybrid] [--config overrides.toml] [--conversations N] [--limit-questions N]

Every session ``session_N`` becomes ``memory/YYYY-MM-DD.md`` (its date from ``session_N_date_time``; a second
session on the same day gets ``-2``), one line per turn ``Speaker: text [image: caption]``. Workspaces live
under ``$MEMDECK_HOME/locomo/<sample_id>/`` and files are rewritten only when their text changes, so reruns
reuse the index and the embedding cache.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from _eval_common import (
    VECTOR_MODES,
    Ranged,
    Stopwatch,
    aggregate,
    config_summary,
    coverage,
    engine_location,
    eval_home,
    git_revision,
    hit_at,
    latency_summary,
    limit_torch_threads,
    load_average,
    load_overrides,
    machine_info,
    make_progress,
    markdown_table,
    now_iso,
    parse_modes,
    reciprocal_rank,
    run_main,
    sync_workspace_files,
    torch_loaded,
    torch_threads,
)

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # the engine: installed (editable) or from this checkout
    sys.path.append(str(REPO))

CATEGORIES = ("1", "2", "3", "4")
CATEGORY_NAMES = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop"}
METRICS = ("hit@1", "hit@3", "hit@5", "snip@1", "snip@5", "mrr@10", "cover@5", "chars@5")
MAX_RESULTS = 10

_MONTHS = {name: i for i, name in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1)}
_DATE_RE = re.compile(r"(\d{1,2})\s+([A-Za-z]{3,})\.?,?\s+(\d{4})")
_SESSION_RE = re.compile(r"session_(\d+)")
_EVIDENCE_RE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)", re.IGNORECASE)
_EVIDENCE_SPLIT_RE = re.compile(r"[;,\s]+")


# -- conversion (pure) -----------------------------------------------------------------------------
def parse_session_date(text: str) -> date:
    """The date of a LoCoMo ``session_N_date_time`` like ``"1:56 pm on 8 May, 2023"``.

    Raises:
        ValueError: no ``day month year`` in the text.
    """
    m = _DATE_RE.search(text)
    if m is None:
        raise ValueError(f"no date in {text!r}")
    month = _MONTHS.get(m.group(2)[:3].lower())
    if month is None:
        raise ValueError(f"unknown month {m.group(2)!r} in {text!r}")
    return date(int(m.group(3)), month, int(m.group(1)))


@dataclass(frozen=True)
class EvidenceParse:
    """A question's evidence ids after normalisation.

    ``ids``: usable ``D<session>:<turn>`` ids (deduplicated, in order); ``normalised``: raw entries that had
    to be rewritten (``"D8:6; D9:17"``, ``"D:11:26"``); ``unparseable``: pieces that name no turn (``"D"``).
    """

    ids: tuple[str, ...]
    normalised: tuple[str, ...] = ()
    unparseable: tuple[str, ...] = ()


def normalize_evidence(raw: Sequence[Any]) -> EvidenceParse:
    """Normalise a question's evidence list: split on ``;``/``,``/whitespace, fix ``D:11:26``, drop ``D``."""
    ids: list[str] = []
    normalised: list[str] = []
    bad: list[str] = []
    for item in raw:
        text = str(item)
        pieces = [p for p in _EVIDENCE_SPLIT_RE.split(text.strip()) if p]
        if not pieces:
            bad.append(text)
            continue
        changed = False
        for piece in pieces:
            m = _EVIDENCE_RE.fullmatch(piece)
            if m is None:
                bad.append(piece)
                continue
            dia_id = f"D{int(m.group(1))}:{int(m.group(2))}"
            changed |= dia_id != text
            if dia_id not in ids:
                ids.append(dia_id)
        if changed:
            normalised.append(text)
    return EvidenceParse(tuple(ids), tuple(normalised), tuple(bad))


def turn_line(turn: Mapping[str, Any]) -> str:
    """One turn as one line: ``Speaker: text [image: caption]`` (inner newlines and runs of spaces folded)."""
    speaker = " ".join(str(turn.get("speaker", "")).split())
    text = " ".join(str(turn.get("text", "")).split())
    caption = " ".join(str(turn.get("blip_caption") or "").split())
    line = f"{speaker}: {text}".rstrip()
    if caption:
        line += f" [image: {caption}]"
    return line


@dataclass(frozen=True)
class Question:
    """A scored question: its category, text and the (file, line) of each evidence turn."""

    index: int
    category: str
    text: str
    evidence: tuple[str, ...]
    gold: tuple[tuple[str, int], ...]


@dataclass
class EvidenceStats:
    """Counts of evidence problems, for the report."""

    raw_ids: int = 0
    normalised: list[str] = field(default_factory=list)
    unparseable: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    questions_without_evidence: int = 0
    questions_skipped: list[str] = field(default_factory=list)

    def merge(self, other: EvidenceStats) -> None:
        """Add another conversation's counts."""
        self.raw_ids += other.raw_ids
        self.normalised += other.normalised
        self.unparseable += other.unparseable
        self.unknown += other.unknown
        self.questions_without_evidence += other.questions_without_evidence
        self.questions_skipped += other.questions_skipped

    def to_json(self) -> dict[str, Any]:
        """Counts plus the offending ids."""
        return {
            "raw_ids": self.raw_ids,
            "normalised": len(self.normalised),
            "normalised_ids": self.normalised,
            "unparseable": len(self.unparseable),
            "unparseable_ids": self.unparseable,
            "unknown": len(self.unknown),
            "unknown_ids": self.unknown,
            "questions_without_evidence": self.questions_without_evidence,
            "questions_skipped": len(self.questions_skipped),
            "questions_skipped_list": self.questions_skipped,
        }


@dataclass(frozen=True)
class Conversation:
    """A LoCoMo conversation converted: the workspace files, where each turn landed, and its questions."""

    sample_id: str
    files: dict[str, str]
    locations: dict[str, tuple[str, int]]
    questions: tuple[Question, ...]
    evidence: EvidenceStats
    sessions: tuple[tuple[int, str, str], ...]  # (session number, date_time text, file)


def session_files(conv: Mapping[str, Any]) -> list[tuple[int, str, str]]:
    """``(session number, date_time text, rel path)`` for every session with turns, in session order.

    Sessions sharing a date get ``-2``, ``-3``... after the first (in session order), so names are stable.
    """
    numbers = sorted(int(m.group(1)) for key, value in conv.items()
                     if (m := _SESSION_RE.fullmatch(key)) and isinstance(value, list) and value)
    seen: Counter[str] = Counter()
    out: list[tuple[int, str, str]] = []
    for n in numbers:
        when = str(conv.get(f"session_{n}_date_time", ""))
        try:
            stem = parse_session_date(when).isoformat()
        except ValueError:
            stem = f"session-{n}"
        seen[stem] += 1
        name = stem if seen[stem] == 1 else f"{stem}-{seen[stem]}"
        out.append((n, when, f"memory/{name}.md"))
    return out


def build_conversation(sample: Mapping[str, Any]) -> Conversation:
    """Convert one LoCoMo sample into workspace files, a dia_id → (file, line) map and scorable questions."""
    conv = sample["conversation"]
    sample_id = str(sample.get("sample_id", "conv"))
    files: dict[str, str] = {}
    locations: dict[str, tuple[str, int]] = {}
    sessions = session_files(conv)
    for n, _when, rel in sessions:
        lines: list[str] = []
        for turn in conv[f"session_{n}"]:
            lines.append(turn_line(turn))
            dia_id = str(turn.get("dia_id", ""))
            if dia_id:
                locations.setdefault(dia_id, (rel, len(lines)))
        files[rel] = "\n".join(lines) + "\n"
    stats = EvidenceStats()
    questions: list[Question] = []
    for i, qa in enumerate(sample.get("qa", [])):
        category = str(qa.get("category", ""))
        if category not in CATEGORIES:
            continue
        raw = list(qa.get("evidence") or [])
        stats.raw_ids += len(raw)
        if not raw:
            stats.questions_without_evidence += 1
            stats.questions_skipped.append(f"{sample_id}#{i}: no evidence")
            continue
        parsed = normalize_evidence(raw)
        stats.normalised += [f"{sample_id}:{r}" for r in parsed.normalised]
        stats.unparseable += [f"{sample_id}:{r}" for r in parsed.unparseable]
        known = [e for e in parsed.ids if e in locations]
        stats.unknown += [f"{sample_id}:{e}" for e in parsed.ids if e not in locations]
        if not known:
            stats.questions_skipped.append(f"{sample_id}#{i}: no usable evidence in {raw}")
            continue
        gold = tuple(dict.fromkeys(locations[e] for e in known))
        questions.append(Question(i, category, str(qa.get("question", "")), tuple(known), gold))
    return Conversation(sample_id, files, locations, tuple(questions), stats, tuple(sessions))


# -- scoring (pure) --------------------------------------------------------------------------------
def score_results(hits: Sequence[Any], gold: Sequence[tuple[str, int]]) -> dict[str, float]:
    """Per-question metrics from ranked hits (anything with ``path``, ``start_line``, ``end_line``,
    ``snippet``, ``snippet_start_line``, ``snippet_end_line``)."""
    chunks = [Ranged(h.path, h.start_line, h.end_line) for h in hits]
    snips = [Ranged(h.path, h.snippet_start_line, h.snippet_end_line) for h in hits]
    return {
        "hit@1": hit_at(chunks, gold, 1),
        "hit@3": hit_at(chunks, gold, 3),
        "hit@5": hit_at(chunks, gold, 5),
        "snip@1": hit_at(snips, gold, 1),
        "snip@5": hit_at(snips, gold, 5),
        "mrr@10": reciprocal_rank(chunks, gold, 10),
        "cover@5": coverage(chunks, gold, 5),
        "chars@5": float(sum(len(h.snippet) for h in hits[:5])),
    }


def summarize(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``{"overall": {...}, "by_category": {"1": {...}, ...}}`` over per-question rows of one mode."""
    by_cat: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        by_cat[str(row["category"])].append(row)
    overall = aggregate(rows, METRICS)
    overall["chars@5"] = round(overall["chars@5"], 1)
    cats: dict[str, Any] = {}
    for cat in CATEGORIES:
        agg = aggregate(by_cat.get(cat, []), METRICS)
        agg["chars@5"] = round(agg["chars@5"], 1)
        cats[cat] = agg
    return {"overall": overall, "by_category": cats}


def render_markdown(payload: Mapping[str, Any], modes: Sequence[str]) -> str:
    """The results as Markdown: a metrics table per mode and category, then timings and evidence notes."""
    meta = payload["meta"]
    parts = [
        f"# LoCoMo retrieval — {Path(meta['data']).name}, categories 1–4",
        "",
        f"{meta['date']} · {meta['questions']} questions in {len(meta['conversations'])} conversations · "
        f"max_results={MAX_RESULTS}, min_score=0 · chunking {meta['config']['chunking']['tokens']}/"
        f"{meta['config']['chunking']['overlap']} tokens · weights vector {meta['config']['search']['vector_weight']}"
        f" / text {meta['config']['search']['text_weight']}"
        + (f" · overrides `{json.dumps(meta['overrides'])}`" if meta["overrides"] else ""),
        "",
    ]
    header = ["mode", "category", "n", *METRICS]
    rows: list[list[Any]] = []
    for mode in modes:
        res = payload[mode]
        rows.append([f"**{mode}**", "all", res["overall"]["n"], *[res["overall"][m] for m in METRICS]])
        for cat in CATEGORIES:
            c = res["by_category"][cat]
            rows.append([mode, f"{cat} {CATEGORY_NAMES[cat]}", c["n"], *[c[m] for m in METRICS]])
    parts += [markdown_table(header, rows), ""]
    timing = meta["timings"]
    parts += ["## Timings", "", markdown_table(
        ["mode", "queries", "p50 ms", "p95 ms", "mean ms"],
        [[m, timing["query"][m]["n"], f"{timing['query'][m]['p50_ms']:.2f}", f"{timing['query'][m]['p95_ms']:.2f}",
          f"{timing['query'][m]['mean_ms']:.2f}"] for m in modes]), ""]
    parts += [markdown_table(
        ["conversation", "files", "chunks", "index s", "embedded", "from cache"],
        [[c["sample_id"], c["files"], c["chunks"], f"{c['index_seconds']:.2f}", c["embedded"], c["from_cache"]]
         for c in meta["conversations"]]), ""]
    if timing.get("model_load_seconds") is not None:
        parts.append(f"Model load: {timing['model_load_seconds']:.2f} s. ")
    parts.append(f"Total: {timing['total_seconds']:.1f} s. Machine: {meta['machine']['cpus']} CPUs, "
                 f"{meta['machine']['platform']}.")
    ev = meta["evidence"]
    parts += ["", f"Evidence: {ev['raw_ids']} raw ids; {ev['normalised']} normalised "
              f"({', '.join(ev['normalised_ids']) or '-'}); {ev['unparseable']} unparseable "
              f"({', '.join(ev['unparseable_ids']) or '-'}); {ev['unknown']} unknown "
              f"({', '.join(ev['unknown_ids']) or '-'}); {ev['questions_skipped']} questions skipped "
              f"({ev['questions_without_evidence']} without evidence)."]
    if meta.get("fallbacks"):
        parts += ["", f"**Mode fallbacks**: {json.dumps(meta['fallbacks'])} — warnings: {meta['warnings']}"]
    return "\n".join(parts)


# -- running ---------------------------------------------------------------------------------------
def _hit_brief(hit: Any) -> list[Any]:
    return [hit.path, hit.start_line, hit.end_line, hit.snippet_start_line, hit.snippet_end_line,
            round(hit.score, 4)]


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Run the eval and return the JSON payload (also used by tests)."""
    from engine.api import MemoryEngine
    from engine.config import load_config

    modes = parse_modes(args.modes)
    data_path = Path(args.data)
    raw = data_path.read_bytes()
    samples = json.loads(raw)
    if args.conversations:
        samples = samples[: args.conversations]
    home, _temporary = eval_home(Path(args.home) if args.home else None)
    overrides = load_overrides(Path(args.config) if args.config else None)
    need_vec = any(m in VECTOR_MODES for m in modes)
    convs = [build_conversation(s) for s in samples]
    if args.limit_questions:
        convs = [Conversation(c.sample_id, c.files, c.locations, c.questions[: args.limit_questions], c.evidence,
                              c.sessions) for c in convs]
    total_q = sum(len(c.questions) for c in convs)
    rows: dict[str, list[dict[str, Any]]] = {m: [] for m in modes}
    latencies: dict[str, list[float]] = {m: [] for m in modes}
    fallbacks: Counter[str] = Counter()
    warnings: set[str] = set()
    conv_meta: list[dict[str, Any]] = []
    evidence = EvidenceStats()
    shared_embedder: Any = None
    model_load: float | None = None
    config_used: Any = None
    load_start = load_average()
    if args.details:
        Path(args.details).parent.mkdir(parents=True, exist_ok=True)
    details = open(args.details, "w", encoding="utf-8") if args.details else None  # noqa: SIM115
    with Stopwatch() as total, make_progress() as progress:
        task_c = progress.add_task("conversations", total=len(convs))
        task_q = progress.add_task("queries", total=total_q * len(modes))
        for conv in convs:
            evidence.merge(conv.evidence)
            workspace = home / "locomo" / conv.sample_id
            written = sync_workspace_files(workspace, conv.files)
            config = load_config(workspace=workspace, home=home, overrides=overrides)
            config_used = config
            engine = MemoryEngine(config, embedder=shared_embedder)
            try:
                if need_vec and shared_embedder is None and engine.embedder is not None:
                    progress.update(task_c, description=f"loading model ({engine.choice.provider})")
                    with Stopwatch() as sw:
                        engine.load_model()
                    model_load = sw.seconds
                    shared_embedder = engine.embedder
                    limit_torch_threads(args.torch_threads)
                progress.update(task_c, description=f"indexing {conv.sample_id}")
                with Stopwatch() as sw:
                    report = engine.sync(embed=need_vec)
                warnings.update(report.issues)
                conv_meta.append({
                    "sample_id": conv.sample_id, "files": len(conv.files), "chunks": report.chunks_total,
                    "index_seconds": round(sw.seconds, 3), "files_indexed": report.files_indexed,
                    "rebuilt": report.rebuilt, "embedded": report.embedded, "from_cache": report.from_cache,
                    "files_written": written["written"], "questions": len(conv.questions),
                })
                progress.update(task_c, description=f"querying {conv.sample_id}")
                for q in conv.questions:
                    for mode in modes:
                        with Stopwatch() as sw:
                            resp = engine.search(q.text, mode=mode, max_results=MAX_RESULTS, min_score=0.0,
                                                 ensure_fresh=False)
                        latencies[mode].append(sw.seconds)
                        if resp.mode != mode:
                            fallbacks[mode] += 1
                        warnings.update(resp.warnings)
                        metrics = score_results(resp.results, q.gold)
                        rows[mode].append({"category": q.category, **metrics})
                        if details is not None:
                            details.write(json.dumps({
                                "conv": conv.sample_id, "qa": q.index, "category": q.category, "mode": mode,
                                "question": q.text, "evidence": q.evidence, "gold": q.gold, **metrics,
                                "top": [_hit_brief(h) for h in resp.results],
                            }, ensure_ascii=False) + "\n")
                        progress.advance(task_q)
            finally:
                engine.close()
            progress.advance(task_c)
        progress.update(task_c, description="conversations")
    if details is not None:
        details.close()
    payload: dict[str, Any] = {mode: summarize(rows[mode]) for mode in modes}
    payload["meta"] = {
        "data": str(data_path),
        "data_sha256": hashlib.sha256(raw).hexdigest(),
        "date": now_iso(),
        "modes": modes,
        "questions": total_q,
        "max_results": MAX_RESULTS,
        "min_score": 0.0,
        "home": str(home),
        "overrides": overrides,
        "config_file": args.config,
        "config": config_summary(config_used) if config_used is not None else None,
        "provider": shared_embedder.provider if shared_embedder is not None else None,
        "torch_loaded": torch_loaded(),
        "torch_threads": torch_threads(),
        "load_average": {"start": load_start, "end": load_average()},
        "fallbacks": dict(fallbacks),
        "warnings": sorted(warnings)[:20],
        "evidence": evidence.to_json(),
        "conversations": conv_meta,
        "timings": {
            "total_seconds": round(total.seconds, 2),
            "model_load_seconds": round(model_load, 3) if model_load is not None else None,
            "index_seconds": {c["sample_id"]: c["index_seconds"] for c in conv_meta},
            "query": {m: latency_summary(latencies[m]) for m in modes},
            "query_note": "engine.search(..., ensure_fresh=False) after an explicit sync; wall clock per call",
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
    p.add_argument("--data", required=True, help="LoCoMo-format JSON file")
    p.add_argument("--out", required=True, help="where to write the JSON results (the .md goes next to it)")
    p.add_argument("--modes", default="keyword,vector,hybrid", help="comma-separated: keyword,vector,hybrid")
    p.add_argument("--config", default=None, help="TOML merged over the defaults ([search], [chunking], ...)")
    p.add_argument("--conversations", type=int, default=0, help="only the first N conversations")
    p.add_argument("--limit-questions", type=int, default=0, help="only the first N scored questions per conversation")
    p.add_argument("--home", default=None, help="data dir for workspaces and indexes (default: MEMDECK_HOME, else temp)")
    p.add_argument("--details", default=None, help="also write one JSON line per question and mode here")
    p.add_argument("--torch-threads", type=int, default=0,
                   help="torch.set_num_threads(N) after the model loads (0: leave torch's default)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: run, write ``OUT`` and ``OUT.md``, print the table."""
    return run_main(build_parser(), run, render_markdown, argv)


if __name__ == "__main__":
    raise SystemExit(main())
