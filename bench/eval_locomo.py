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
import statistics
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
    fmt,
    git_revision,
    hit_at,
    holds,
    latency_summary,
    limit_torch_threads,
    load_average,
    load_overrides,
    machine_info,
    make_progress,
    markdown_table,
    mean,
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
        f"max_results={MAX_RESULTS}, min_score={meta.get('min_score', 0)} · chunking {meta['config']['chunking']['tokens']}/"
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
                            resp = engine.search(q.text, mode=mode, max_results=MAX_RESULTS, min_score=args.min_score,
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
        "min_score": args.min_score,
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


# -- cross-validation ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Variant:
    """One setting of the CV grid: ``SearchConfig`` overrides and/or ``SearchHeuristics`` overrides."""

    name: str
    search: Mapping[str, Any] = field(default_factory=dict)
    heuristics: Mapping[str, Any] = field(default_factory=dict)  # e.g. {"date_boosts": False}: a heuristic off
    modes: tuple[str, ...] = ("keyword", "vector", "hybrid")
    about: str = ""
    # Its hybrid rows use fold calibrations fitted on candidates collected under its own settings (a pool
    # variant changes which candidates a search sees, and so the data each fold's calibration is fitted on).
    own_calibration: bool = False


# Each heuristic switched off on its own (the default is the first row). Vector-leg settings skip keyword mode.
GRID: tuple[Variant, ...] = (
    Variant("default", about="the shipped defaults"),
    Variant("no-line-vectors", {"line_weight": 0.0}, modes=("vector", "hybrid"),
            about="[search] line_weight 0.7 → 0"),
    Variant("line-vectors-0.5", {"line_weight": 0.5}, modes=("vector", "hybrid"), about="line_weight 0.5"),
    Variant("no-best-line-bm25", {"line_text_weight": 0.0}, modes=("keyword", "hybrid"),
            about="[search] line_text_weight 0.3 → 0"),
    Variant("no-date-boosts", heuristics={"date_boosts": False}, modes=("keyword", "hybrid"), about="pipeline dated_chunks off"),
    Variant("no-spread", heuristics={"spread_limit": 2.0}, modes=("keyword", "vector", "hybrid"),
            about="spread_overlaps off (SPREAD_LIMIT 0.7 → never)"),
    Variant("no-common-drop", heuristics={"drop_common_terms": False}, modes=("keyword", "hybrid"), about="common_terms drop off"),
    Variant("no-calibrated-date-lift", heuristics={"calibrated_date_lift": False}, modes=("hybrid",),
            about="calibrated keyword leg without the dated-note floor (heuristics.calibrated_date_lift off)"),
    Variant("weights-50-50", {"vector_weight": 0.5, "text_weight": 0.5}, modes=("hybrid",),
            about="vector_weight/text_weight .5/.5"),
    Variant("weights-30-70", {"vector_weight": 0.3, "text_weight": 0.7}, modes=("hybrid",),
            about="vector_weight/text_weight .3/.7"),
    Variant("minmax", {"vector_norm": "minmax"}, modes=("vector", "hybrid"), about="vector_norm minmax"),
    Variant("raw-fusion", {"vector_norm": "raw"}, modes=("hybrid",), about="vector_norm raw (OpenClaw's)"),
    Variant("line-vectors-0.7", {"line_weight": 0.7}, modes=("vector", "hybrid"), about="line_weight 0.7"),
    # the candidate pool of a calibrated hybrid search (heuristics.pool): by the shown score or the raw fused one
    Variant("pool-shown", heuristics={"pool": "shown"}, modes=("hybrid",), own_calibration=True,
            about="the pool of `want` candidates taken by the calibrated (shown) score"),
    Variant("pool-raw", heuristics={"pool": "raw"}, modes=("hybrid",), own_calibration=True,
            about="the pool taken by OpenClaw's fused score of the uncalibrated legs, ordered by the shown one"),
    Variant("pool-union", heuristics={"pool": "union"}, modes=("hybrid",), own_calibration=True,
            about="the pool: each leg's own top `want` (OpenClaw's union of the two lists), ordered by the shown score"),
    Variant("pool-slot", heuristics={"pool": "slot"}, modes=("hybrid",), own_calibration=True,
            about="the shown pool, the vector leg's best candidate held at the 3rd place at least"),
    Variant("pool-raw-slot", heuristics={"pool": "raw-slot"}, modes=("hybrid",), own_calibration=True,
            about="the raw pool, the vector leg's best candidate held at the 3rd place at least"),
    Variant("pool-slot-2", heuristics={"pool": "slot", "vector_slot": 2}, modes=("hybrid",), own_calibration=True,
            about="the shown pool, the vector leg's best candidate held at the 2nd place at least"),
    Variant("pool-raw-slot-2", heuristics={"pool": "raw-slot", "vector_slot": 2}, modes=("hybrid",),
            own_calibration=True, about="the raw pool, the vector leg's best candidate held at the 2nd place at least"),
    # the keyword leg weighed by what it can see of the query (heuristics.keyword_evidence, issue 26)
    Variant("evidence-script", heuristics={"keyword_evidence": "script"}, modes=("hybrid",),
            about="keyword weight × the chunk's share of letters in the query's scripts; no match: it abstains"),
    Variant("evidence-terms", heuristics={"keyword_evidence": "terms"}, modes=("hybrid",),
            about="evidence-script × the share of the query's terms found in any keyword candidate"),
    Variant("evidence-best", heuristics={"keyword_evidence": "best"}, modes=("hybrid",),
            about="evidence-script × the best keyword candidate's IDF-weighted share of the query's terms"),
    *(Variant(f"evidence-{m}-{round(f * 100)}", heuristics={"keyword_evidence": m, "evidence_full": f},
              modes=("hybrid",), about=f"evidence-{m}, the share counting in full from {f:g} up")
      for m in ("terms", "best") for f in (0.5, 0.3)),
    # the vector leg's favourite placed by its own score when that is above its slot (heuristics.slot_by_score)
    Variant("slot-by-score", heuristics={"slot_by_score": True}, modes=("hybrid",),
            about="a favourite the raw pool left out goes where its shown score puts it, the slot at worst"),
    *(Variant(f"evidence-{m}+slot-by-score", heuristics={"keyword_evidence": m, "slot_by_score": True},
              modes=("hybrid",), about=f"evidence-{m} and slot-by-score") for m in ("script", "best")),
    # the vector leg's favourite at the 1st place when it leads the vector leg's second by a margin (on the
    # calibrated scale; heuristics.vector_lead), else at vector_slot as today
    *(Variant(f"lead-{round(m * 100):02d}", heuristics={"vector_lead": m}, modes=("hybrid",),
              about=f"the vector leg's favourite holds the 1st place when it leads the next by ≥ {m:g}")
      for m in (0.05, 0.1, 0.15, 0.2)),
    Variant("lead-10+slot-by-score", heuristics={"vector_lead": 0.1, "slot_by_score": True}, modes=("hybrid",),
            about="lead-10 and slot-by-score"),
    # each chunk's keyword weight by its own IDF-weighted share of the query's terms
    Variant("evidence-chunk", heuristics={"keyword_evidence": "chunk"}, modes=("hybrid",),
            about="keyword weight × the chunk's own IDF-weighted share of the query's terms (× script overlap)"),
    Variant("evidence-chunk-no-cjk", heuristics={"keyword_evidence": "chunk-no-cjk"}, modes=("hybrid",),
            about="evidence-chunk for queries without CJK, evidence-script for the others (exploratory, 2026-12-06)"),
    Variant("evidence-chunk-50", heuristics={"keyword_evidence": "chunk", "evidence_full": 0.5}, modes=("hybrid",),
            about="evidence-chunk, the share counting in full from .5 up"),
    # 2026-12-06 candidates (bench/results/2026-12-06-retrieval-plan.md): modal / hedge words as stop words, and
    # vector pseudo-relevance feedback (its cosines live on another scale: calibrations fitted on its own candidates)
    Variant("modal-stop", heuristics={"modal_stop_words": True}, modes=("keyword", "hybrid"),
            about="the query also drops must might may shall likely probably maybe perhaps (heuristics.modal_stop_words)"),
    *(Variant(f"prf-{round(b * 100)}", heuristics={"vector_prf": b, "prf_k": 3}, modes=("vector", "hybrid"),
              own_calibration=True,
              about=f"vector leg searched again with normalize(q + {b:g}·mean of the top-3 chunks' window vectors)")
      for b in (0.3, 0.6)),
    # the snippet of a window ending in a question takes the answer line (heuristics.snippet_answer): the same
    # ranking, other snippets (exploratory, not a candidate of the 2026-12-06 rule)
    Variant("snippet-answer", heuristics={"snippet_answer": True}, modes=("keyword", "vector", "hybrid"),
            about="a snippet whose last line asks takes the next line in place of its first ones"),
    # the query's relative date words as the runner before 2026-12-02 parsed them: always dropped
    Variant("date-words-dropped", heuristics={"date_words_without_notes": False}, modes=("keyword", "hybrid"),
            about="a relative phrase whose days hold no note drops its words all the same"),
    Variant("pool-raw+date-words-dropped", heuristics={"pool": "raw", "date_words_without_notes": False},
            modes=("hybrid",), own_calibration=True, about="both: the code before the one score scale, as its CV runner ran it"),
    # a curated chunk's fused score × 1 + b, and the best curated candidate near the 3rd score at the 3rd place
    # (heuristics.curated_prior / curated_slot, 2026-12-06-curated-prior.md): LoCoMo has no MEMORY.md / USER.md,
    # so these rank as the default by construction; the rows check it. Decay (OpenClaw's, [search] decay) beside.
    *(Variant(f"curated-prior-{round(b * 100)}", heuristics={"curated_prior": b}, modes=("keyword", "hybrid"),
              about=f"a curated chunk's fused score × {1 + b:g}") for b in (0.05, 0.1, 0.2, 0.3)),
    *(Variant(f"curated-slot-{round(m * 100)}", heuristics={"curated_slot": m}, modes=("keyword", "hybrid"),
              about=f"the best curated candidate scoring ≥ {1 - m:g} × the 3rd's takes the 3rd place")
      for m in (0.05, 0.1, 0.2, 0.3)),
    Variant("curated-prior-30+slot-30", heuristics={"curated_prior": 0.3, "curated_slot": 0.3},
            modes=("keyword", "hybrid"), about="curated-prior-30 and curated-slot-30"),
    *(Variant(f"decay-{h}", {"decay": True, "half_life_days": float(h)}, modes=("keyword", "hybrid"),
              about=f"[search] decay on, half-life {h} days (today: the clock's)") for h in (30, 90, 180, 365)),
    # the threshold on the score a hit shows (the fixed rows run at --min-score, 0 unless given)
    *(Variant(f"min-score-{t:g}", {"min_score": t}, modes=("keyword", "hybrid"), about=f"min_score {t:g}")
      for t in (0.02, 0.03, 0.05, 0.08, 0.1, 0.15)),
)
# Fitted per fold on the other four conversations (pass 2): calibration and the re-ranker.
FITTED = ("calibrated", "rerank")
CV_METRICS = ("hit@1", "hit@3", "hit@5", "mrr@10", "snip@1", "snip@5", "chars@5")


def variant_settings(base: Any, variant: Variant, min_score: float, **more: Any) -> Any:
    """``base`` (a ``SearchConfig``) with the variant's settings and heuristics, at ``min_score`` unless the
    variant sets its own."""
    from dataclasses import replace

    heuristics = replace(base.heuristics, **dict(variant.heuristics))
    return replace(base, **{"min_score": min_score, **more, **dict(variant.search)}, heuristics=heuristics)


def labels_for(rec: Mapping[str, Any], gold: Sequence[tuple[str, int]]) -> dict[int, int]:
    """1 for each collected candidate whose chunk holds a gold line, else 0."""
    out = {}
    for key in rec["keys"]:
        path, start, end = rec["rows"][key]
        out[key] = int(holds(Ranged(path, start, end), gold))
    return out


class ConvRunner:
    """One conversation's engine, synced once, with its query vectors cached: runs ``run_search`` directly."""

    def __init__(self, conv: Conversation, home: Path, overrides: Mapping[str, Any], need_vec: bool,
                 embedder: Any) -> None:
        from engine.api import MemoryEngine
        from engine.config import load_config

        self.conv = conv
        workspace = home / "locomo" / conv.sample_id
        sync_workspace_files(workspace, conv.files)
        self.config = load_config(workspace=workspace, home=home, overrides=dict(overrides))
        self.engine = MemoryEngine(self.config, embedder=embedder)
        if need_vec and self.engine.embedder is not None:
            self.engine.load_model()
        report = self.engine.sync(embed=need_vec)
        self.chunks = report.chunks_total
        self.model = self.engine.choice.model if self.engine.choice.provider == "local" else None
        self.qvecs: dict[int, list[float] | None] = {}
        if need_vec and self.engine.embedder is not None:
            for q in conv.questions:
                vec = self.engine.embedder.embed_query(q.text)
                self.qvecs[q.index] = vec if any(vec) else None

    def search(self, q: Question, mode: str, settings: Any, **hooks: Any) -> list[Any]:
        """``run_search`` for one question (``MAX_RESULTS`` results, ``settings.min_score``) with these settings,
        its query parsed as ``MemoryEngine.search`` parses it (dates counted from the engine's clock's today)."""
        from engine.search.pipeline import SearchHooks, SearchRequest, parse, run_search

        qvec = self.qvecs.get(q.index) if mode != "keyword" else None
        effective = mode if (mode == "keyword" or qvec is not None) else "keyword"
        sources = tuple(self.config.sources)
        parsed = parse(self.engine.store, q.text, self.engine.clock.today(), sources, settings.heuristics)
        request = SearchRequest(parsed, effective, qvec, MAX_RESULTS, settings.min_score, sources, model=self.model,
                                english_only_vectors=self.model == "all-MiniLM-L6-v2")
        return run_search(self.engine.store, settings, request, self.engine._vindex, SearchHooks(**hooks))

    def close(self) -> None:
        """Close the engine."""
        self.engine.close()


def open_runners(args: argparse.Namespace, need_vec: bool, progress: Any = None) -> list[ConvRunner]:
    """A synced :class:`ConvRunner` per dev conversation (one model load shared by all)."""
    samples = json.loads(Path(args.data).read_bytes())
    if args.conversations:
        samples = samples[: args.conversations]
    home, _temporary = eval_home(Path(args.home) if args.home else None)
    overrides = load_overrides(Path(args.config) if args.config else None)
    runners: list[ConvRunner] = []
    embedder = None
    for sample in samples:
        conv = build_conversation(sample)
        if args.limit_questions:
            conv = Conversation(conv.sample_id, conv.files, conv.locations, conv.questions[: args.limit_questions],
                                conv.evidence, conv.sessions)
        if progress is not None:
            print(f"[cv] indexing {conv.sample_id}", file=sys.stderr)
        runner = ConvRunner(conv, home, overrides, need_vec, embedder)
        if embedder is None and need_vec:
            embedder = runner.engine.embedder
            limit_torch_threads(getattr(args, "torch_threads", 0))
        runners.append(runner)
    return runners


def collect_records(runner: ConvRunner, mode: str, settings: Any) -> list[dict[str, Any]]:
    """Each question's top candidates with re-ranker features, raw leg values and labels (one pass)."""
    out = []
    for q in runner.conv.questions:
        bucket: list[dict[str, Any]] = []
        runner.search(q, mode, settings, collect=bucket)
        if not bucket:
            continue
        rec = bucket[0]
        rec.update(conv=runner.conv.sample_id, qa=q.index, category=q.category, labels=labels_for(rec, q.gold))
        out.append(rec)
    return out


def collect_all(args: argparse.Namespace) -> dict[str, Any]:
    """Candidates of every dev question at the configured settings, for ``train_rerank.py``."""
    runners = open_runners(args, need_vec=True, progress=True)
    try:
        records: dict[str, list[dict[str, Any]]] = {"hybrid": [], "keyword": []}
        for r in runners:
            settings = r.config.search
            if r.qvecs:
                records["hybrid"] += collect_records(r, "hybrid", settings)
            records["keyword"] += collect_records(r, "keyword", settings)
        return {"model": runners[0].model if runners else None, "date": now_iso(), "records": records,
                "vector_norm": runners[0].config.search.vector_norm if runners else None,
                "conversations": [r.conv.sample_id for r in runners]}
    finally:
        for r in runners:
            r.close()


def fold_stats(per_fold: Sequence[Mapping[str, float]], metrics: Sequence[str]) -> dict[str, Any]:
    """mean, std (sample), min and max over folds of each metric (empty without folds)."""
    out: dict[str, Any] = {}
    if not per_fold:
        return out
    for m in metrics:
        vals = [f[m] for f in per_fold]
        out[m] = {"mean": round(mean(vals), 4), "std": round(statistics.stdev(vals), 4) if len(vals) > 1 else 0.0,
                  "min": round(min(vals), 4), "max": round(max(vals), 4)}
    return out


def summarize_cv(rows: Sequence[Mapping[str, Any]], convs: Sequence[str]) -> dict[str, Any]:
    """Per-fold (held-out conversation) metrics, their spread, and per-category spread, for one variant/mode."""
    folds = {}
    for c in convs:
        sub = [r for r in rows if r["conv"] == c]
        folds[c] = summarize(sub)
    per_fold = [folds[c]["overall"] for c in convs]
    cats = {cat: fold_stats([folds[c]["by_category"][cat] for c in convs if folds[c]["by_category"][cat]["n"]],
                            CV_METRICS) for cat in CATEGORIES}
    return {"folds": {c: folds[c]["overall"] for c in convs}, "spread": fold_stats(per_fold, CV_METRICS),
            "pooled": summarize(rows)["overall"], "by_category": cats}


def verdict(default: Mapping[str, Any], other: Mapping[str, Any], convs: Sequence[str]) -> dict[str, Any]:
    """The house rule: ``other`` replaces the default only if its CV mean hit@1 improves and no fold loses
    more than .01 hit@1."""
    deltas = {c: round(other["folds"][c]["hit@1"] - default["folds"][c]["hit@1"], 4) for c in convs}
    mean_delta = round(mean(list(deltas.values())), 4)
    better = mean_delta > 0 and min(deltas.values()) >= -0.01
    return {"deltas": deltas, "mean_delta": mean_delta, "worst": min(deltas.values()), "adopt": better,
            "mrr_delta": round(other["spread"]["mrr@10"]["mean"] - default["spread"]["mrr@10"]["mean"], 4)}


def threshold_stats(recs: Sequence[Mapping[str, Any]], cal: Any, model: Mapping[str, Any] | None,
                    min_score: float = 0.35) -> dict[str, Any]:
    """What ``min_score`` means on each scale (raw fusion, calibrated fusion, re-ranker probability): the
    share of questions with a passing candidate, and the precision and recall of passing candidates."""
    from engine.search.calibration import sigmoid

    def stats(score: Any) -> dict[str, float]:
        passing = hits = positives = questions = 0
        for rec in recs:
            any_pass = False
            for key in rec["keys"]:
                lab = rec["labels"][key]
                positives += lab
                if score(rec, key) >= min_score:
                    passing += 1
                    hits += lab
                    any_pass = True
            questions += any_pass
        return {"questions_passing": round(questions / max(1, len(recs)), 4),
                "precision": round(hits / max(1, passing), 4), "recall": round(hits / max(1, positives), 4)}

    def raw(rec: Mapping[str, Any], key: Any) -> float:
        return float(rec["features"][key]["base"])

    def calibrated(rec: Mapping[str, Any], key: Any) -> float:
        r = rec["raw"][key]
        v = cal.vector_leg(r["vleg"]) if r.get("vleg") is not None and cal.vector_leg is not None else 0.0
        k = cal.keyword_leg(r["kleg"]) if r.get("kleg") is not None and cal.keyword_leg is not None else 0.0
        return 0.7 * v + 0.3 * k

    out = {"fused score as configured": stats(raw), "calibrated fusion": stats(calibrated)}
    if model is not None:
        def prob(rec: Mapping[str, Any], key: Any) -> float:
            feats = rec["features"][key]
            return sigmoid(model["bias"] + sum(w * feats.get(n, 0.0) for n, w in model["weights"].items()))
        out["re-ranker p"] = stats(prob)
    return out


def inner_rows(runners: Sequence[ConvRunner], records: Mapping[str, Mapping[str, Sequence[Mapping[str, Any]]]],
               variants: Sequence[Variant], min_score: float) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """The nested CV's inner scores of hybrid variants: for each outer (held-out) conversation, every other
    conversation's questions searched with a calibration fitted on the remaining three, so the choice made on
    the inner folds never saw the outer fold (the per-fold rows' calibrations saw it: they hold out only their
    own conversation). ``records``: each variant's collected hybrid candidates per conversation, the data its
    calibrations are fitted on. Returns ``{outer: {variant: rows}}``; empty without hybrid records."""
    from _rerank_fit import calibration_object, fit_calibration

    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for outer in (r.conv.sample_id for r in runners):
        for r in runners:
            conv = r.conv.sample_id
            if conv == outer:
                continue
            for variant in variants:
                train = [rec for c, recs in records.get(variant.name, {}).items() if c not in (outer, conv)
                         for rec in recs]
                if not train:
                    continue
                cal = calibration_object(fit_calibration(train), r.model or "unknown")
                settings = variant_settings(r.config.search, variant, min_score, rerank=False)
                bucket = out.setdefault(outer, {}).setdefault(variant.name, [])
                for q in r.conv.questions:
                    hits = r.search(q, "hybrid", settings, calibration=cal)
                    bucket.append({"conv": conv, "category": q.category, **score_results(hits, q.gold)})
    return out


def run_cv(args: argparse.Namespace) -> dict[str, Any]:
    """Leave-one-conversation-out: fixed settings per fold, each heuristic off, choose-on-four over the grid,
    and the per-fold fitted calibration and re-ranker (trained on the other four conversations)."""
    from dataclasses import replace

    from _rerank_fit import (
        FEATURES_FOR,
        calibration_object,
        fit_calibration,
        quick_hit1,
        recalibrate,
        train_model,
        weights_payload,
    )

    from engine.search.rerank import Reranker, reranker_from

    modes = parse_modes(args.modes)
    need_vec = any(m in VECTOR_MODES for m in modes)
    grid = [v for v in GRID if args.grid == "all" or v.name in args.grid.split(",") or v.name == "default"]
    choose = [v for v in grid if not args.choose or v.name in args.choose.split(",")]
    with Stopwatch() as total:
        runners = open_runners(args, need_vec, progress=True)
        convs = [r.conv.sample_id for r in runners]
        rows: dict[str, dict[str, list[dict[str, Any]]]] = {}
        records: dict[str, dict[str, list[dict[str, Any]]]] = {m: {} for m in ("hybrid", "keyword")}
        timings: dict[str, float] = {}
        try:
            fitted_modes = [m for m in ("hybrid", "keyword") if m in modes]
            with Stopwatch() as sw:
                for r in runners:
                    for mode in fitted_modes:
                        if mode == "hybrid" and not r.qvecs:
                            continue
                        records[mode][r.conv.sample_id] = collect_records(r, mode, replace(r.config.search, rerank=False))
            timings["collect"] = round(sw.seconds, 1)
            # Each held-out conversation's calibration, fitted on the other four (used by every row below).
            # A variant with its own calibration: its hybrid candidates collected under its settings.
            own: dict[str, dict[str, list[dict[str, Any]]]] = {"default": records["hybrid"]}
            with Stopwatch() as sw:
                for variant in grid:
                    if variant.own_calibration and "hybrid" in modes and "hybrid" in variant.modes:
                        own[variant.name] = {r.conv.sample_id: collect_records(
                            r, "hybrid", variant_settings(r.config.search, variant, args.min_score, rerank=False))
                            for r in runners if r.qvecs}
            timings["collect_own"] = round(sw.seconds, 1)
            # Each held-out conversation's calibration, fitted on the other four (used by every row below).
            fold_cals: dict[str, dict[str, Any]] = {}
            for name, recs_by_conv in own.items():
                for r in runners:
                    train_h = [rec for c, recs in recs_by_conv.items() if c != r.conv.sample_id for rec in recs]
                    if train_h:
                        fold_cals.setdefault(name, {})[r.conv.sample_id] = calibration_object(
                            fit_calibration(train_h), r.model or "unknown")
            for variant in grid:
                with Stopwatch() as sw:
                    for mode in [m for m in modes if m in variant.modes]:
                        out = rows.setdefault(variant.name, {}).setdefault(mode, [])
                        for r in runners:
                            # never the shipped re-ranker or calibration here: both saw every conversation
                            settings = variant_settings(r.config.search, variant, args.min_score, rerank=False)
                            for q in r.conv.questions:
                                cal_of = fold_cals.get(variant.name if variant.name in own else "default", {})
                                hits = r.search(q, mode, settings, calibration=cal_of.get(r.conv.sample_id))
                                out.append({"conv": r.conv.sample_id, "category": q.category,
                                            **score_results(hits, q.gold)})
                timings[variant.name] = round(sw.seconds, 1)
                print(f"[cv] {variant.name}: {sw.seconds:.1f} s", file=sys.stderr)
            fused = runners[0].config.search.vector_norm == "calibrated" if runners else False
            fold_models: dict[str, Any] = {}
            threshold: dict[str, Any] = {}
            quick: dict[str, Any] = {}
            with Stopwatch() as sw:
                for r in runners:
                    held = r.conv.sample_id
                    train = {m: [rec for c, recs in records[m].items() if c != held for rec in recs]
                             for m in fitted_modes}
                    model = r.model or "unknown"
                    cal = calibration_object(fit_calibration(train["hybrid"]), model) if train.get("hybrid") \
                        else None
                    if cal is not None and train.get("hybrid"):
                        # the vector features under this fold's calibration, as the held-out search computes them
                        train["hybrid"] = recalibrate(train["hybrid"], cal, fused)
                    drop = set(args.drop_features.split(",")) if args.drop_features else set()
                    names = {m: [f for f in FEATURES_FOR[m] if f not in drop] for m in fitted_modes}
                    models = {m: train_model(train[m], names[m], args.l2, args.loss)
                              for m in fitted_modes if train[m]}
                    fold_models[held] = models
                    for m in fitted_modes if not args.no_l2_table else ():
                        test = records[m].get(held, [])
                        if m == "hybrid" and cal is not None:
                            test = recalibrate(test, cal, fused)
                        quick.setdefault(m, {})[held] = {
                            "fused": round(quick_hit1(test, None), 4),
                            **{f"{loss} l2={l2}": round(quick_hit1(
                                test, train_model(train[m], names[m], l2, loss)), 4)
                               for loss in ("pointwise", "listwise") for l2 in (0.1, 1.0, 10.0)}}
                    rr: Reranker = reranker_from(weights_payload(models, {}, 30))
                    if cal is not None and "hybrid" in records:
                        threshold.setdefault(held, threshold_stats(recalibrate(records["hybrid"].get(held, []), cal, fused), cal,
                                                                   models.get("hybrid")))
                    for m in fitted_modes:
                        out = rows.setdefault("rerank", {}).setdefault(m, [])
                        settings = replace(r.config.search, rerank=True, min_score=args.min_score)
                        for q in r.conv.questions:
                            hits = r.search(q, m, settings, reranker=rr, calibration=cal)
                            out.append({"conv": held, "category": q.category, **score_results(hits, q.gold)})
                    if "hybrid" in fitted_modes and cal is not None:
                        out = rows.setdefault("calibrated", {}).setdefault("hybrid", [])
                        settings = replace(r.config.search, vector_norm="calibrated", rerank=False,
                                           min_score=args.min_score)
                        for q in r.conv.questions:
                            hits = r.search(q, "hybrid", settings, calibration=cal)
                            out.append({"conv": held, "category": q.category, **score_results(hits, q.gold)})
            timings["fitted"] = round(sw.seconds, 1)
            with Stopwatch() as sw:
                inner = inner_rows(runners, {v.name: own.get(v.name, own["default"]) for v in choose},
                                   [v for v in choose if "hybrid" in v.modes], args.min_score) \
                    if "hybrid" in modes else {}
            timings["nested"] = round(sw.seconds, 1)
        finally:
            for r in runners:
                r.close()
    summary: dict[str, Any] = {}
    for name, by_mode in rows.items():
        for mode, mode_rows in by_mode.items():
            summary.setdefault(name, {})[mode] = summarize_cv(mode_rows, convs)
    verdicts: dict[str, Any] = {}
    for name, by_mode in summary.items():
        if name == "default":
            continue
        for mode, res in by_mode.items():
            if mode in summary["default"]:
                verdicts.setdefault(name, {})[mode] = verdict(summary["default"][mode], res, convs)
    chosen: dict[str, Any] = {}
    order = args.choose.split(",") if args.choose else [v.name for v in choose]
    for mode in modes:
        candidates = sorted((v.name for v in choose if mode in summary.get(v.name, {})),
                            key=lambda n: order.index(n) if n in order else len(order))
        if not candidates:
            continue
        picks = {}
        held_rows = []
        inner_scores: dict[str, dict[str, list[float]]] = {}
        for held in convs:
            def train_hit1(name: str, held: str = held, mode: str = mode) -> tuple[float, float]:
                # hybrid: the inner folds' rows under calibrations that saw neither them nor the outer fold
                sub = inner[held][name] if mode == "hybrid" and held in inner else \
                    [x for x in rows[name][mode] if x["conv"] != held]
                return mean([x["hit@1"] for x in sub]), mean([x["mrr@10"] for x in sub])
            scores = {name: train_hit1(name) for name in candidates}
            inner_scores[held] = {name: [round(h, 4), round(m, 4)] for name, (h, m) in scores.items()}
            best = max(candidates, key=lambda n: scores[n])
            if args.tie > 0:  # the first in --choose order within `tie` of the best inner hit@1
                best = next(n for n in candidates if scores[n][0] >= scores[best][0] - args.tie - 1e-12)
            picks[held] = best
            held_rows += [x for x in rows[best][mode] if x["conv"] == held]
        chosen[mode] = {"picks": picks, "among": candidates, "nested": mode == "hybrid" and bool(inner),
                        "tie": args.tie, "inner": inner_scores, **summarize_cv(held_rows, convs)}
    return {
        "summary": summary, "verdicts": verdicts, "choose_on_four": chosen, "rerank_quick_hit1": quick,
        "min_score_0.35": threshold,
        "fold_models": fold_models,
        "meta": {"data": str(args.data), "date": now_iso(), "modes": modes, "conversations": convs,
                 "questions": {r.conv.sample_id: len(r.conv.questions) for r in runners},
                 "chunks": {r.conv.sample_id: r.chunks for r in runners},
                 "model": runners[0].model if runners else None, "config_file": args.config,
                 "overrides": load_overrides(Path(args.config) if args.config else None),
                 "min_score": args.min_score,
                 "grid": [{"name": v.name, "about": v.about, "search": dict(v.search), "heuristics": dict(v.heuristics),
                           "modes": list(v.modes)} for v in grid],
                 "fitted": list(FITTED), "l2": args.l2, "loss": args.loss, "dropped_features": args.drop_features, "timings": {**timings, "total": round(total.seconds, 1)},
                 "machine": machine_info(), "git": git_revision(REPO), "argv": sys.argv[1:]},
    }


def render_cv_markdown(payload: Mapping[str, Any], modes: Sequence[str]) -> str:
    """The CV report: per-fold table per variant and mode, category spread, verdicts, choose-on-four."""
    meta = payload["meta"]
    convs = meta["conversations"]
    parts = [f"# LoCoMo leave-one-conversation-out CV — {Path(meta['data']).name}", "",
             f"{meta['date']} · model {meta['model']} · {sum(meta['questions'].values())} questions in "
             f"{len(convs)} folds · max_results={MAX_RESULTS}, min_score={meta.get('min_score', 0)}"
             + (f" · overrides `{json.dumps(meta['overrides'])}`" if meta["overrides"] else ""), "",
             "Each fold holds one conversation out; fixed settings are scored per fold as they are, "
             "`calibrated` and `rerank` are fitted on the other four conversations and scored on the fifth.", ""]
    summary = payload["summary"]
    header = ["variant", "mode", *[f"h@1 {c}" for c in convs], "hit@1 mean ± std [min–max]", "hit@3", "hit@5",
              "MRR@10", "snip@1", "snip@5", "chars@5"]
    table = []
    for name, by_mode in summary.items():
        for mode in modes:
            if mode not in by_mode:
                continue
            res = by_mode[mode]
            sp = res["spread"]
            h1 = sp["hit@1"]
            table.append([name, mode, *[res["folds"][c]["hit@1"] for c in convs],
                          f"{fmt(h1['mean'])} ± {fmt(h1['std'])} [{fmt(h1['min'])}–{fmt(h1['max'])}]",
                          *[f"{fmt(sp[m]['mean'])} ± {fmt(sp[m]['std'])}"
                            for m in ("hit@3", "hit@5", "mrr@10", "snip@1", "snip@5")],
                          f"{sp['chars@5']['mean']:.0f}"])
    parts += ["## Per fold (hit@1 of each held-out conversation) and mean ± std over folds", "",
              markdown_table(header, table), ""]
    parts += ["## Per category (mean ± std over folds)", ""]
    cat_rows = []
    by_name = [(name, summary[name]) for name in summary] + [
        (f"chosen ({mode})", {mode: res}) for mode, res in payload["choose_on_four"].items()]
    for name, by_mode in by_name:
        for mode in modes:
            res = by_mode.get(mode)
            if res is None:
                continue
            for cat in CATEGORIES:
                c = res["by_category"][cat]
                if not c:
                    continue
                cat_rows.append([name, mode, f"{cat} {CATEGORY_NAMES[cat]}",
                                 *[f"{fmt(c[m]['mean'])} ± {fmt(c[m]['std'])}"
                                   for m in ("hit@1", "hit@3", "hit@5", "mrr@10", "snip@1", "snip@5")]])
    parts += [markdown_table(["variant", "mode", "category", "hit@1", "hit@3", "hit@5", "MRR@10", "snip@1",
                              "snip@5"], cat_rows), ""]
    parts += ["## Verdicts (house rule: adopt only if mean hit@1 improves and no fold loses > .01)", ""]
    vrows = []
    for name, by_mode in payload["verdicts"].items():
        for mode, v in by_mode.items():
            vrows.append([name, mode, *[f"{v['deltas'][c]:+.3f}" for c in convs], f"{v['mean_delta']:+.4f}",
                          f"{v['mrr_delta']:+.4f}", "adopt" if v["adopt"] else "keep default"])
    parts += [markdown_table(["variant", "mode", *[f"Δh@1 {c}" for c in convs], "mean Δhit@1", "Δ MRR", "verdict"],
                             vrows), ""]
    parts += ["## Choose-on-four over the fixed grid (pick by train hit@1, score the held-out fold)", "",
              "Nested for hybrid: each outer fold's choice reads the inner folds' scores under calibrations fitted "
              "without the outer fold.", ""]
    crow = []
    for mode, res in payload["choose_on_four"].items():
        h1 = res["spread"]["hit@1"]
        sp = res["spread"]
        crow.append([mode, ", ".join(res.get("among", [])), "yes" if res.get("nested") else "no",
                     ", ".join(f"{c}: {p}" for c, p in res["picks"].items()),
                     f"{fmt(h1['mean'])} ± {fmt(h1['std'])}", fmt(sp["hit@3"]["mean"]), fmt(sp["hit@5"]["mean"]),
                     fmt(sp["mrr@10"]["mean"])])
    parts += [markdown_table(["mode", "among", "nested", "picks", "held-out hit@1", "hit@3", "hit@5", "MRR@10"],
                             crow), ""]
    quick = payload.get("rerank_quick_hit1") or {}
    if quick:
        parts += ["## Re-ranker regularisation (in-memory hit@1 on the held-out fold's candidates)", ""]
        qrows = [[m, c, *v.values()] for m, by in quick.items() for c, v in by.items()]
        first = next(iter(next(iter(quick.values())).values()))
        parts += [markdown_table(["mode", "held out", *first.keys()], qrows), ""]
    thr = payload.get("min_score_0.35") or {}
    if thr:
        parts += ["## What `min_score` 0.35 means on each scale (held-out folds, top candidates)", ""]
        trow = [[c, scale, v["questions_passing"], v["precision"], v["recall"]]
                for c, by in thr.items() for scale, v in by.items()]
        parts += [markdown_table(["held out", "scale", "questions with a pass", "precision", "recall"], trow), ""]
    parts.append(f"Timings (s): {json.dumps(meta['timings'])}. Machine: {meta['machine']['cpus']} CPUs.")
    return "\n".join(parts)


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
    p.add_argument("--cv", action="store_true",
                   help="leave-one-conversation-out: per-fold tables, heuristics off one by one, fitted calibration "
                        "and re-ranker per fold")
    p.add_argument("--min-score", type=float, default=0.0,
                   help="the threshold of every search (on the score a hit shows; default 0: every candidate)")
    p.add_argument("--grid", default="all", help="with --cv: comma-separated variant names (default: all)")
    p.add_argument("--choose", default="",
                   help="with --cv: the variants the nested choice picks among (default: every grid variant)")
    p.add_argument("--tie", type=float, default=0.0,
                   help="with --cv: variants within this inner hit@1 of the best are tied; the first of them in "
                        "--choose order is picked (0: the best inner hit@1, MRR breaking ties)")
    p.add_argument("--l2", type=float, default=1.0, help="with --cv: the re-ranker's ridge penalty")
    p.add_argument("--drop-features", default="", help="with --cv: comma-separated re-ranker features left out")
    p.add_argument("--no-l2-table", action="store_true",
                   help="with --cv: skip the in-memory table of losses and penalties (6 extra fits per fold)")
    p.add_argument("--loss", choices=("pointwise", "listwise"), default="listwise",
                   help="with --cv: the re-ranker's training loss")
    p.add_argument("--torch-threads", type=int, default=0,
                   help="torch.set_num_threads(N) after the model loads (0: leave torch's default)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: run, write ``OUT`` and ``OUT.md``, print the table."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if "--cv" in args_list:
        return run_main(build_parser(), run_cv, render_cv_markdown, args_list)
    return run_main(build_parser(), run, render_markdown, args_list)


if __name__ == "__main__":
    raise SystemExit(main())
