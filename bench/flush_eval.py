"""Flush drafting on a held-out labelled set: recall, precision, relative-time accuracy and injected text drafted.

Usage::

    python bench/flush_eval.py [--labels FILE] [--ids en-001,ja-003] [--json] [--out FILE]

Each labelled turn of ``tests/data/flush_labels/turns.jsonl`` (see ``SPEC.md`` there) becomes its own session
transcript — its context turns, then the turn — which the engine's extractive drafter drafts through its public entry
point (``MemoryEngine.draft_flush(..., method="extractive")``). Drafted items are matched to the labels by key terms
(never by exact strings), so the same labels score any drafter. The clock is pinned after every turn
(``MEMDECK_NOW``, zone Europe/Berlin): a relative time resolved against the flush instead of the turn is wrong.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
import unicodedata
import uuid
from collections import defaultdict
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

LABELS = REPO / "tests" / "data" / "flush_labels" / "turns.jsonl"
ZONE = "Europe/Berlin"
FLUSH_NOW = "2026-11-30T09:00:00+01:00"
"""When the flush runs: after every labelled turn, so "tomorrow" counted from now is visibly wrong."""

WRAPPER_MARKERS = (
    "<composio>", "</composio>", "ignore any pretrained knowledge", "untrusted context", "untrusted metadata",
    "(untrusted", "⟦openclaw:ctx⟧", "active_memory_plugin", "- recalled:", "pre-compaction memory flush",
    "no_reply", "store durable memories", "startup context loaded", "begin_quoted_notes", "end_quoted_notes",
    "untrusted daily memory", "queued messages while agent was busy", "queued #", "an async command the user already",
    "exec finished", "do not run the command again", "[cron:", "conversation info", "\"chat_id\"", "message_id",
    "[media attached", "chat history since last reply", "reply target of current user message",
    "forwarded message context", " gmt+",
)
"""Text only OpenClaw or a plugin writes into a user turn (normalised as :func:`norm` does)."""

_CYR = dict(zip(
    "абвгдђежзијклљмнњопрстћуфхцчџш",
    ["a", "b", "v", "g", "d", "đ", "e", "ž", "z", "i", "j", "k", "l", "lj", "m", "n", "nj", "o", "p", "r", "s", "t",
     "ć", "u", "f", "h", "c", "č", "dž", "š"], strict=True))
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
TIME_RE = re.compile(r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (\d{1,2}) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
                     r"(?: ([01]\d|2[0-3]):([0-5]\d))?$")
DAY_ATTRS = ("day", "said_on", "said_at", "date")


def norm(text: str) -> str:
    """Text as matched: NFKC, case-folded, Serbian Cyrillic in Latin, no diacritics, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(_CYR.get(ch, ch) for ch in text)
    text = "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))
    text = text.replace("đ", "dj")
    return re.sub(r"\s+", " ", text).strip()


def term_in(term: str, text_norm: str) -> bool:
    """A ``must`` term (``a|b``: either) occurs in normalised text."""
    return any(norm(alt) in text_norm for alt in term.split("|") if alt.strip())


def parse_label_time(label: str, said: datetime) -> tuple[date, str | None]:
    """``Fri 13 Nov 08:30`` → (the date on or after the day said, ``08:30``)."""
    m = TIME_RE.match(label)
    if not m:
        raise ValueError(f"not a label time: {label!r}")
    day, month = int(m.group(2)), _MONTHS.index(m.group(3).lower()) + 1
    year = said.year + (1 if month < said.month else 0)
    when = date(year, month, day)
    if _WEEKDAYS[when.weekday()] != m.group(1):
        raise ValueError(f"{label!r}: {when} is not a {m.group(1)}")
    return when, (f"{m.group(4)}:{m.group(5)}" if m.group(4) else None)


def time_shown(item_norm: str, when: date, clock: str | None) -> bool:
    """The item shows the resolved date (and time of day, if labelled) in one of the accepted forms."""
    mon = _MONTHS[when.month - 1]
    d = str(when.day)
    forms = (rf"0?{d}\.? {mon}", rf"{mon}[a-z]*\.? 0?{d}", re.escape(when.isoformat()), rf"0?{d}\.0?{when.month}\.",
             rf"{when.month}月{d}日")
    date_ok = any(re.search(rf"(?<!\d){f}(?!\d)", item_norm) for f in forms)
    if not date_ok or clock is None:
        return date_ok
    hour, minute = clock.split(":")
    clocks = {clock, f"{int(hour)}:{minute}"}
    return any(re.search(rf"(?<!\d){re.escape(c)}(?!\d)", item_norm) for c in clocks)


def load_turns(path: Path, ids: set[str] | None = None) -> list[dict[str, Any]]:
    turns = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [t for t in turns if ids is None or t["id"] in ids]


def write_transcript(turn: dict[str, Any], folder: Path) -> tuple[Path, str, int]:
    """The turn as an OpenClaw legacy JSONL session: header, context turns a minute apart, then the turn.

    Returns the path, the session id and the labelled turn's line."""
    from datetime import UTC

    session_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"memdeck-flush-labels/{turn['id']}"))
    said = datetime.fromisoformat(turn["said_at"])
    turns = [*turn["context"], {"role": turn["role"], "text": turn["text"]}]
    start = said - timedelta(minutes=len(turns) - 1)

    def stamp(when: datetime) -> str:
        return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")

    rows = [{"type": "session", "version": 3, "id": session_id, "timestamp": stamp(start - timedelta(minutes=1)),
             "cwd": "/"}]
    parent = None
    for n, msg in enumerate(turns):
        when = start + timedelta(minutes=n)
        entry_id = f"m{n}"
        message: dict[str, Any] = {"role": msg["role"], "content": [{"type": "text", "text": msg["text"]}],
                                   "timestamp": int(when.timestamp() * 1000)}
        if msg["role"] == "assistant":
            message.update(model="gpt-5.2", provider="openai", stopReason="stop")
        rows.append({"type": "message", "id": entry_id, "parentId": parent, "timestamp": stamp(when),
                     "message": message})
        parent = entry_id
    path = folder / f"{session_id}.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path, session_id, len(rows)


def _filed_day(item: Any) -> date | None:
    for name in DAY_ATTRS:
        value = getattr(item, name, None)
        if isinstance(value, datetime):
            return value.date()
        if isinstance(value, date):
            return value
    return None


def score_turn(turn: dict[str, Any], items: list[Any], target_line: int) -> dict[str, Any]:
    """Match one turn's drafted items to its labels (see SPEC.md, "Matching rule")."""
    said = datetime.fromisoformat(turn["said_at"])
    fragments = [norm(f) for f in turn.get("injected", ())]
    drafted = []
    for item in items:
        text_norm = norm(item.text)
        injected = any(m in text_norm for m in WRAPPER_MARKERS) or any(f and f in text_norm for f in fragments)
        drafted.append({"text": item.text, "kind": item.kind, "line": item.line, "norm": text_norm,
                        "injected": injected, "own": item.line == target_line, "labels": [],
                        "filed_day": _filed_day(item)})
    labels = []
    for n, label in enumerate(turn["keep"]):
        hit = None
        for d in drafted:
            if d["own"] and not d["injected"] and all(term_in(t, d["norm"]) for t in label["must"]):
                d["labels"].append(n)
                hit = hit or d
        time_ok = None
        if label["time"]:
            when, clock = parse_label_time(label["time"], said)
            time_ok = hit is not None and time_shown(hit["norm"], when, clock)
        labels.append({"must": label["must"], "time": label["time"], "recalled": hit is not None,
                       "time_ok": time_ok, "by": hit["text"] if hit else None})
    own = [d for d in drafted if d["own"]]
    seen: set[int] = set()
    duplicates = 0
    for d in own:
        if d["labels"] and set(d["labels"]) <= seen:
            duplicates += 1
        seen.update(d["labels"])
    filed = [d["filed_day"] for d in own if d["filed_day"] is not None]
    return {
        "id": turn["id"], "lang": turn["lang"], "tags": turn["tags"], "labels": labels,
        "items": [{k: d[k] for k in ("text", "kind", "line", "injected")} | {"hit": bool(d["labels"])}
                  for d in drafted if d["own"]],
        "context_items": [d["text"] for d in drafted if not d["own"]],
        "hits": sum(1 for d in own if d["labels"]), "false_positives": sum(1 for d in own if not d["labels"]),
        "injected_items": sum(1 for d in drafted if d["injected"]), "duplicates": duplicates,
        "filed_right": sum(1 for f in filed if f == said.date()), "filed": len(filed),
    }


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def summarise(scored: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals over some scored turns."""
    labels = [lab for s in scored for lab in s["labels"]]
    timed = [lab for lab in labels if lab["time"]]
    hits = sum(s["hits"] for s in scored)
    fps = sum(s["false_positives"] for s in scored)
    negatives = [s for s in scored if not s["labels"]]
    recalled = sum(lab["recalled"] for lab in labels)
    precision, recall = _ratio(hits, hits + fps), _ratio(recalled, len(labels))
    f1 = round(2 * precision * recall / (precision + recall), 4) if precision and recall else None
    filed = sum(s["filed"] for s in scored)
    return {
        "turns": len(scored), "labels": len(labels), "recalled": recalled, "recall": recall,
        "items": hits + fps, "hits": hits, "false_positives": fps, "precision": precision, "f1": f1,
        "timed_labels": len(timed), "time_resolved": sum(bool(lab["time_ok"]) for lab in timed),
        "time_accuracy": _ratio(sum(bool(lab["time_ok"]) for lab in timed), len(timed)),
        "injected_items": sum(s["injected_items"] for s in scored),
        "turns_with_injected_items": sum(1 for s in scored if s["injected_items"]),
        "negative_turns": len(negatives), "negative_turns_clean": sum(1 for s in negatives if not s["items"]),
        "context_items": sum(len(s["context_items"]) for s in scored),
        "duplicates": sum(s["duplicates"] for s in scored),
        "day_filed_accuracy": _ratio(sum(s["filed_right"] for s in scored), filed) if filed else None,
    }


def run(turns: list[dict[str, Any]]) -> dict[str, Any]:
    """Draft every turn with the engine's extractive drafter and score it."""
    os.environ["TZ"] = ZONE
    if hasattr(time, "tzset"):
        time.tzset()
    os.environ["MEMDECK_NOW"] = FLUSH_NOW
    os.environ.pop("MEMDECK_TODAY", None)
    from engine.api import MemoryEngine
    from engine.config import load_config
    from engine.sessions.reader import read_transcript

    scored = []
    with tempfile.TemporaryDirectory(prefix="memdeck-flush-eval-") as tmp:
        root = Path(tmp)
        workspace, home, sessions = root / "workspace", root / "home", root / "sessions"
        for folder in (workspace / "memory", home, sessions):
            folder.mkdir(parents=True)
        os.environ["MEMDECK_HOME"] = str(home)
        config = load_config(workspace=workspace, home=home, config_path=home / "config.toml",
                             sessions_dir=sessions,
                             overrides={"embedding": {"provider": "none"}, "memory": {"timezone": ZONE}})
        started = time.perf_counter()
        with MemoryEngine(config) as engine:
            for turn in turns:
                path, _session, line = write_transcript(turn, sessions)
                draft = engine.draft_flush(read_transcript(path), method="extractive")
                scored.append(score_turn(turn, list(draft.items), line))
        seconds = time.perf_counter() - started
    by_lang: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_tag: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in scored:
        by_lang[s["lang"]].append(s)
        for tag in s["tags"]:
            by_tag[tag].append(s)
    return {
        "drafter": "extractive", "labels_file": str(LABELS), "flush_now": FLUSH_NOW, "zone": ZONE,
        "seconds": round(seconds, 2),
        "overall": summarise(scored),
        "per_language": {lang: summarise(group) for lang, group in sorted(by_lang.items())},
        "per_tag": {tag: summarise(group) for tag, group in sorted(by_tag.items())},
        "turns": scored,
    }


def _pct(value: float | None) -> str:
    return "  n/a" if value is None else f"{value * 100:5.1f}"


def render(report: dict[str, Any]) -> str:
    """A plain-text table of the report."""
    head = (f"{'':12} {'turns':>5} {'labels':>6} {'recall':>6} {'items':>5} {'prec':>5} {'F1':>5} "
            f"{'time':>9} {'inj':>4} {'neg clean':>9}")
    lines = [f"flush eval ({report['drafter']}; flush at {report['flush_now']} {report['zone']})", head]

    def row(name: str, s: dict[str, Any]) -> str:
        return (f"{name:12} {s['turns']:5} {s['labels']:6} {_pct(s['recall']):>6} {s['items']:5} "
                f"{_pct(s['precision']):>5} {_pct(s['f1']):>5} {s['time_resolved']:4}/{s['timed_labels']:<4} "
                f"{s['injected_items']:4} {s['negative_turns_clean']:4}/{s['negative_turns']:<4}")

    lines.append(row("overall", report["overall"]))
    lines.extend(row(lang, s) for lang, s in report["per_language"].items())
    lines.append("by tag:")
    lines.extend(row(tag, s) for tag, s in report["per_tag"].items())
    o = report["overall"]
    filed = o["day_filed_accuracy"]
    lines.append(f"context items: {o['context_items']}  duplicates: {o['duplicates']}  "
                 f"day filed: {'n/a (items carry no day)' if filed is None else _pct(filed)}  "
                 f"({report['seconds']} s)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=Path, default=LABELS, help="the labelled turns (JSONL)")
    parser.add_argument("--ids", help="only these turn ids, comma-separated")
    parser.add_argument("--json", action="store_true", help="print the full report as JSON")
    parser.add_argument("--out", type=Path, help="also write the full JSON report here")
    args = parser.parse_args(argv)
    ids = {i.strip() for i in args.ids.split(",") if i.strip()} if args.ids else None
    turns = load_turns(args.labels, ids)
    if not turns:
        parser.error("no labelled turns selected")
    report = run(turns)
    report["labels_file"] = str(args.labels)
    text = json.dumps(report, ensure_ascii=False, indent=2, default=str)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text if args.json else render(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
