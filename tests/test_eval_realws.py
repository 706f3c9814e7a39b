"""Tests of bench/eval_realws.py: anchors, the copy of a workspace, and a keyword run end to end."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import eval_realws  # noqa: E402

QUESTIONS = """
[[question]]
text = "when do the backups run"
file = "MEMORY.md"
anchor = "nightly at 02:00"
kind = "curated"
lang = "en"

[[question]]
text = "bike shop"
file = "memory/2026-01-01.md"
anchor = "new bike"
kind = "daily"
lang = "en"
"""


def _workspace(root: Path, questions: str = QUESTIONS) -> Path:
    ws = root / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n- Backups run nightly at 02:00 with restic.\n- Default model: small.\n",
                                  encoding="utf-8")
    (ws / "memory" / "2026-01-01.md").write_text("# 2026-01-01\n- Talked about backups.\n- Bought a new bike at "
                                                 "the bike shop.\n", encoding="utf-8")
    (ws / "questions.toml").write_text(questions, encoding="utf-8")
    return ws


def test_load_questions_finds_each_answer_line(tmp_path: Path) -> None:
    qs = eval_realws.load_questions(_workspace(tmp_path))
    assert [(q.path, q.line, q.kind) for q in qs] == [("MEMORY.md", 2, "curated"),
                                                        ("memory/2026-01-01.md", 3, "daily")]


@pytest.mark.parametrize("anchor", ["- ", "no such words"])  # on two lines of MEMORY.md; on none
def test_load_questions_refuses_an_anchor_on_other_than_one_line(tmp_path: Path, anchor: str) -> None:
    ws = _workspace(tmp_path, f'[[question]]\ntext = "q"\nfile = "MEMORY.md"\nanchor = "{anchor}"\n')
    with pytest.raises(ValueError, match="anchor"):
        eval_realws.load_questions(ws)


def test_copy_workspace_leaves_questions_out_and_drops_stale_notes(tmp_path: Path) -> None:
    src = _workspace(tmp_path)
    dest = tmp_path / "copy"
    (dest / "memory").mkdir(parents=True)
    (dest / "memory" / "old.md").write_text("stale\n", encoding="utf-8")
    assert eval_realws.copy_workspace(src, dest) == 2
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()) == [
        "MEMORY.md", "memory/2026-01-01.md"]


def test_keyword_run_end_to_end(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    out = tmp_path / "out.json"
    assert eval_realws.main(["--modes", "keyword", "--home", str(tmp_path / "home"), "--out", str(out),
                             str(ws)]) == 0
    payload = json.loads(out.read_text(encoding="utf-8"))
    ranks = [q["ranks"]["keyword"] for q in payload["questions"]]
    assert ranks[0] == 1  # "backups run" holds both of the curated line's words
    assert ranks[1] is not None  # "bike shop": the daily line
    assert payload["meta"]["workspaces"][0]["curated_chunks"] >= 1
    assert (ws / "questions.toml").exists() and not (tmp_path / "home" / "realws" / "ws" / "questions.toml").exists()


def test_a_variant_sets_search_fields_and_heuristics(tmp_path: Path) -> None:
    from engine.config import Config

    base = Config(tmp_path, tmp_path, tmp_path / "config.toml")
    out = eval_realws.variant_config(base, "search.decay=1+search.half_life_days=90+curated_prior=0.3")
    assert out.search.decay is True and out.search.half_life_days == 90.0
    assert out.search.heuristics.curated_prior == 0.3
    assert base.search.decay is False and base.search.heuristics.curated_prior == 0.0


def test_the_benchmarks_today_is_the_newest_dated_note(tmp_path: Path) -> None:
    (tmp_path / "memory" / "archive").mkdir(parents=True)
    for rel in ("MEMORY.md", "memory/2026-01-03.md", "memory/archive/2026-02-01-trip.md", "memory/notes.md"):
        (tmp_path / rel).write_text("x\n", encoding="utf-8")
    assert eval_realws.newest_note_day(tmp_path) == "2026-02-01"
    (tmp_path / "memory" / "archive" / "2026-02-01-trip.md").unlink()
    (tmp_path / "memory" / "2026-01-03.md").unlink()
    assert eval_realws.newest_note_day(tmp_path) is None
