"""A seeded generator of realistic OpenClaw-style memory workspaces (daily notes, topic files) of a given chunk count.

Usage::

    python bench/gen_workspace.py --chunks 10000 --out /tmp/ws-10k [--seed 7]

The text mixes headings, bullets, numbered lists, code fences, dates, people's names, common and rare words and
some Chinese, so the chunker, FTS5 and the snippets see what a real agent's memory holds. The same seed gives the
same bytes. The chunk count is approximate (±10%): files are sized from the chunker's budget (400 tokens of ≈4
characters, 80 of overlap), and :func:`count_chunks` gives the exact figure.
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

# Characters of generated text per chunk, measured: the chunker cuts at block boundaries, CJK weighs 4 per char.
CHARS_PER_CHUNK = 860
CHUNKS_PER_FILE = 4
FIRST_DAY = date(2019, 1, 1)
DAILY_FILES_MAX = 2500  # beyond ~7 years of daily notes, the rest are topic files (memory/topics/...)

NAMES = ("Alice", "Marko", "Priya", "Jonas", "Wei", "Fatima", "Diego", "Sanna", "Kenji", "Olga", "Tomás", "Amara")
PROJECTS = ("atlas", "borealis", "cobalt", "delta-sync", "ember", "fjord", "granite", "helix", "ion", "juniper")
COMMON = (
    "the", "we", "decided", "to", "move", "release", "meeting", "deploy", "notes", "user", "prefers", "team",
    "review", "server", "database", "backup", "config", "weekly", "plan", "call", "bug", "fix", "test", "docs",
    "budget", "deadline", "client", "email", "draft", "update", "migration", "latency", "cache", "index", "search",
    "memory", "agent", "model", "token", "query", "report", "issue", "ticket", "branch", "merge", "build", "and",
    "for", "with", "after", "before", "because", "next", "week", "today", "tomorrow", "should", "will", "not",
)
RARE = (
    "zeugma", "quokka", "sphygmomanometer", "borborygmus", "defenestration", "kerfuffle", "lollygag", "snollygoster",
    "flibbertigibbet", "bumfuzzle", "cattywampus", "gardyloo", "taradiddle", "widdershins", "xertz", "yarborough",
    "ragamuffin", "skedaddle", "gobbledygook", "brouhaha", "hullabaloo", "nincompoop", "shenanigans", "whippersnapper",
)
CJK = (
    "用户喜欢深色主题。", "数据中心搬迁定在下个月。", "会议改到周五下午三点。", "备份脚本每天凌晨运行。",
    "客户要求提供中文文档。", "不要在周末部署生产环境。", "王伟负责数据库迁移。", "搜索延迟需要低于一百毫秒。",
)
LANGS = ("python", "bash", "sql", "json", "toml")
CODE = {
    "python": ("def retry(fn, attempts=3):", "    for i in range(attempts):", "        try:", "            return fn()",
               "        except TimeoutError:", "            time.sleep(2 ** i)"),
    "bash": ("set -euo pipefail", "rsync -a --delete ./data/ backup:/srv/data/", "systemctl restart memdeck-sync",
             "journalctl -u memdeck-sync --since today | tail -n 50"),
    "sql": ("SELECT path, count(*) FROM chunks", "GROUP BY path", "HAVING count(*) > 10", "ORDER BY 2 DESC;"),
    "json": ('{', '  "model": "all-MiniLM-L6-v2",', '  "batch_size": 32,', '  "timeout": 60', '}'),
    "toml": ("[search]", "max_results = 6", "min_score = 0.35", "vector_weight = 0.7"),
}


@dataclass(frozen=True)
class GeneratedWorkspace:
    """What was written: the folder, its files (relative paths) and the bytes written."""

    root: Path
    files: tuple[str, ...]
    bytes_written: int


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(COMMON) for _ in range(rng.randint(6, 16))]
    if rng.random() < 0.35:
        words.insert(rng.randrange(len(words)), rng.choice(RARE))
    if rng.random() < 0.4:
        words.insert(rng.randrange(len(words)), rng.choice(NAMES))
    if rng.random() < 0.3:
        words.insert(rng.randrange(len(words)), rng.choice(PROJECTS))
    if rng.random() < 0.15:
        day = FIRST_DAY + timedelta(days=rng.randrange(3000))
        words.append(f"on {day.isoformat()}")
    if rng.random() < 0.1:
        words.append(f"(#{rng.randrange(100, 9999)})")
    text = " ".join(words)
    return text[0].upper() + text[1:] + "."


def _block(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.35:
        return "\n".join(f"- {_sentence(rng)}" for _ in range(rng.randint(2, 6)))
    if kind < 0.5:
        return "\n".join(f"{i}. {_sentence(rng)}" for i in range(1, rng.randint(3, 6)))
    if kind < 0.62:
        lang = rng.choice(LANGS)
        return "\n".join([f"```{lang}", *CODE[lang], "```"])
    if kind < 0.7:
        return " ".join(rng.choice(CJK) for _ in range(rng.randint(2, 5)))
    if kind < 0.76:
        who = rng.choice(NAMES)
        return f"> {who}: {_sentence(rng)}"
    return " ".join(_sentence(rng) for _ in range(rng.randint(2, 5)))


def _file_text(rng: random.Random, title: str, target_chars: int) -> str:
    parts = [f"# {title}", ""]
    size = 0
    while size < target_chars:
        if rng.random() < 0.3:
            heading = f"## {rng.choice(PROJECTS).title()} — {rng.choice(COMMON)} {rng.choice(COMMON)}"
            parts.extend([heading, ""])
            size += len(heading) + 2
        block = _block(rng)
        parts.extend([block, ""])
        size += len(block) + 2
    return "\n".join(parts)


def generate_workspace(root: Path, chunks: int, seed: int = 7) -> GeneratedWorkspace:
    """Write a workspace of about ``chunks`` chunks under ``root`` (created; existing files are overwritten).

    Args:
        root: the workspace folder.
        chunks: the approximate chunk count wanted (default chunking: 400 tokens, 80 overlap).
        seed: the random seed; the same seed and count give the same files.
    """
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    (root / "memory").mkdir(exist_ok=True)
    written: list[str] = []
    total = 0
    n_files = max(1, round(chunks / CHUNKS_PER_FILE))
    per_file = chunks / n_files
    for i in range(n_files):
        # Files vary in size (1–7 chunks) around the mean, as real daily notes do.
        want = max(1.0, per_file * rng.uniform(0.25, 1.75))
        target = int(want * CHARS_PER_CHUNK)
        if i == 0:
            rel, title = "MEMORY.md", "Long-term memory"
        elif i <= DAILY_FILES_MAX:
            day = FIRST_DAY + timedelta(days=i - 1)
            rel, title = f"memory/{day.isoformat()}.md", f"{day.isoformat()} — daily notes"
        else:
            project = PROJECTS[i % len(PROJECTS)]
            rel, title = f"memory/topics/{project}/note-{i:06d}.md", f"{project} notes {i}"
        text = _file_text(rng, title, target)
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)
        written.append(rel)
        total += len(data)
    return GeneratedWorkspace(root, tuple(written), total)


# -- a curated-fact workspace (bench/data/curated, bench/eval_curated.py) -----------------------------------------
CURATED_DIR = Path(__file__).resolve().parent / "data" / "curated"
CURATED_FIRST_DAY = date(2026, 7, 1)
# Lines of daily notes that talk about what the curated facts are about, in the facts' and the questions' words,
# without stating the fact: the archived notes that bury a one-line fact under a long chunk of shared words.
TOPIC_LINES = (
    "Backup run on tern took longer than usual; restic said the run finished, checked the backup log twice.",
    "Talked about when to run backups of the photos: maybe run a second backup to the external disk as well.",
    "Ingrid asked which model the team should use by default for the summaries; the default right now is unclear.",
    "Tried a different model for the weekly report, default settings, the results were fine but slow.",
    "Call with Ravi at 07:30 his time; the time zone math is always confusing when he is in Pune.",
    "Luka wants to learn a second instrument; the kid is learning fast, the music school sent a note.",
    "Ana's Kita sent the schedule; the kid is learning songs for the summer party.",
    "Boss wants the Harbor numbers by Thursday; Jonas wrote the summary for the boss in the evening.",
    "On call this week: two pages at night, both Airflow workers running out of memory. Call handover notes updated.",
    "Team food order for the offsite: must avoid anything with nuts for some people, food list sent to Claire.",
    "Looked at a new text editor plugin for dbt; Jonas uses the editor mostly for SQL these days.",
    "Pieter's dog barked at the neighbours' dog again; the dog's name tag needs replacing.",
    "Quarterly planning: the change freeze discussion came up again, nobody remembered when the freeze starts.",
    "The heartbeat fired during dinner, which was annoying; looked at how often the agent wakes up.",
    "Mirela's shift plan for next month is out; her partner schedule app does the living room calendar.",
    "Trash and recycling piled up in the garage; the collected glass has to go to the container.",
    "Billing reconciliation failed once, Tally had to be rerun; the reconciliation has to be done again Monday.",
    "Memory search felt slow; tried a different embedding model in the search config for a day.",
    "The car made a noise on the motorway; booked the car at the garage, inspection of the brakes next week.",
    "The agent sent a message on its own on Signal by mistake; channel settings checked, reach him on Telegram.",
    "Friday afternoon meeting with the carriers was ok in the end; meetings on Friday are tiring though.",
    "Norwegian podcast on the train; he speaks more languages than he uses at work.",
    "Airflow cluster upgrade planned; who looks after the cluster during the upgrade is still open.",
    "Home server tern rebooted after the kernel update; the server monitored fine afterwards, checked the dashboard.",
    "Morning run along the Dreisam, 9 km; the running goal for the autumn needs a training plan.",
)
FILLER_LINES = (
    "Standup: Harbor ingestion is behind by two days, carrier API pagination is the blocker.",
    "Reviewed Ravi's PR for the finance models; asked for a test on the currency join.",
    "Snowflake credits this week were higher than planned, mostly the Tally backfill.",
    "Lunch with Claire; she is moving the Airflow scheduler to the new node pool next sprint.",
    "Wrote the design note for the carrier event schema, v3, shared in the Pipelines channel.",
    "dbt run failed on the staging models: a renamed column upstream, fixed in PIPE-{n}.",
    "Picked up Ana from the Kita at 15:00, playground until dinner.",
    "Grocery list: oat milk, tomatoes, rice, lentils, bread, coffee beans.",
    "Terraform plan for the warehouse roles reviewed, apply scheduled after the freeze.",
    "Read two chapters of the data contracts book on the tram.",
    "Fixed the flaky Airflow sensor by raising the poke interval to five minutes.",
    "Pairing with Ravi on the incremental model for shipments, merged before lunch.",
    "Mirela on night shift; dinner with the kids, Luka practised for half an hour.",
    "Allotment garden with Pieter: tomatoes done, the beans need support.",
    "Checked the carrier API quotas; two carriers throttle at 100 requests a minute.",
    "Retro: too many ad-hoc requests from finance; agreed to route them through Jira.",
    "Cleaned up old branches in the pipelines repo, 14 deleted after asking.",
    "Updated the on-boarding doc for the new analyst starting in January.",
)


def curated_workspace(root: Path, days: int = 30, seed: int = 11) -> GeneratedWorkspace:
    """Write the curated-fact workspace under ``root``: ``bench/data/curated``'s ``MEMORY.md`` and ``USER.md``
    as they are, and ``days`` long daily notes (``memory/YYYY-MM-DD.md`` from 2026-07-01, 35–75 lines each:
    a work log, notes, a home section, bullets) whose lines talk about the curated facts' topics in the questions'
    words without stating them (:data:`TOPIC_LINES`), around ordinary work and family notes.

    The same seed gives the same bytes; existing files with other text are overwritten.
    """
    rng = random.Random(seed)
    files: dict[str, str] = {}
    for name in ("MEMORY.md", "USER.md"):
        files[name] = (CURATED_DIR / name).read_text(encoding="utf-8")
    for i in range(days):
        day = CURATED_FIRST_DAY + timedelta(days=i)
        parts = [f"# {day.isoformat()} — {day.strftime('%A')}", ""]
        for section in ("## Work log", "## Notes", "## Home"):
            parts += [section, ""]
            # Lines repeat across days (never within one), so the embedding cache serves most line vectors.
            topic = rng.sample(TOPIC_LINES, rng.randint(3, 8))
            filler = rng.sample(FILLER_LINES, rng.randint(8, 16))
            body = topic + [line.replace("{n}", str(100 + (i * 37 + len(parts)) % 900)) for line in filler]
            rng.shuffle(body)
            parts += [f"- {line}" for line in body]
            parts.append("")
        files[f"memory/{day.isoformat()}.md"] = "\n".join(parts)
    root.mkdir(parents=True, exist_ok=True)
    total = 0
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)
        total += len(data)
    return GeneratedWorkspace(root, tuple(files), total)


def count_chunks(root: Path, tokens: int = 400, overlap: int = 80) -> int:
    """The exact chunk count the engine's chunker makes of the workspace's Markdown."""
    from engine.index.chunking import chunk_markdown

    return sum(len(chunk_markdown(p.read_text(encoding="utf-8"), tokens, overlap)) for p in sorted(root.rglob("*.md")))


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=0, help="the chunk count (required unless --curated)")
    ap.add_argument("--curated", action="store_true",
                    help="write the curated-fact workspace (bench/data/curated + long daily notes) instead")
    ap.add_argument("--days", type=int, default=30, help="with --curated: daily notes written")
    ap.add_argument("--out", type=Path, required=True, help="workspace folder to write")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--count", action="store_true", help="also chunk it and print the exact chunk count")
    args = ap.parse_args(argv)
    if args.curated:
        ws = curated_workspace(args.out, args.days, args.seed if args.seed != 7 else 11)
    elif args.chunks <= 0:
        ap.error("--chunks is required (or --curated)")
    else:
        ws = generate_workspace(args.out, args.chunks, args.seed)
    line = f"{len(ws.files)} files, {ws.bytes_written / 1e6:.1f} MB in {ws.root}"
    if args.count:
        line += f", {count_chunks(ws.root)} chunks"
    print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
