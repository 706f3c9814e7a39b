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


def count_chunks(root: Path, tokens: int = 400, overlap: int = 80) -> int:
    """The exact chunk count the engine's chunker makes of the workspace's Markdown."""
    from engine.index.chunking import chunk_markdown

    return sum(len(chunk_markdown(p.read_text(encoding="utf-8"), tokens, overlap)) for p in sorted(root.rglob("*.md")))


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, required=True)
    ap.add_argument("--out", type=Path, required=True, help="workspace folder to write")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--count", action="store_true", help="also chunk it and print the exact chunk count")
    args = ap.parse_args(argv)
    ws = generate_workspace(args.out, args.chunks, args.seed)
    line = f"{len(ws.files)} files, {ws.bytes_written / 1e6:.1f} MB in {ws.root}"
    if args.count:
        line += f", {count_chunks(ws.root)} chunks"
    print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
