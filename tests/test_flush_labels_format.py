"""The held-out flush labels (tests/data/flush_labels) are well formed, and bench/flush_eval.py runs and scores.

No drafter score is asserted here: these tests check the labels and the scorer, not the drafter."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"
sys.path.insert(0, str(BENCH))

import flush_eval  # noqa: E402

from engine.memory.draft import DraftItem  # noqa: E402

DATA = REPO / "tests" / "data" / "flush_labels"
FIELDS = {"id", "lang", "said_at", "role", "context", "text", "keep", "injected", "tags", "why"}
NEG_KINDS = {"question", "assistant", "injected", "hypothetical", "quoted", "past", "chitchat", "transient"}
OTHER = {"de", "fr", "es", "pt", "ru"}


@pytest.fixture(scope="module")
def turns() -> list[dict[str, Any]]:
    return flush_eval.load_turns(DATA / "turns.jsonl")


def test_every_turn_has_the_schema(turns: list[dict[str, Any]]) -> None:
    for t in turns:
        assert set(t) == FIELDS, t["id"]
        assert re.fullmatch(r"[a-z]{2}-\d{3}", t["id"]) and t["id"].startswith(t["lang"] + "-"), t["id"]
        assert t["role"] in {"user", "assistant"}, t["id"]
        assert isinstance(t["text"], str) and t["text"].strip(), t["id"]
        assert isinstance(t["why"], str) and len(t["why"].strip()) >= 4, t["id"]
        said = datetime.fromisoformat(t["said_at"])
        assert said.utcoffset() is not None, t["id"]
        assert said < datetime.fromisoformat(flush_eval.FLUSH_NOW), t["id"]
        for c in t["context"]:
            assert set(c) == {"role", "text"} and c["role"] in {"user", "assistant"} and c["text"].strip(), t["id"]
        for frag in t["injected"]:
            assert frag and frag in t["text"], (t["id"], frag)
        for label in t["keep"]:
            assert set(label) == {"must", "time"}, t["id"]
            assert label["must"] and all(isinstance(m, str) and m.strip() for m in label["must"]), t["id"]
        assert t["role"] == "user" or not t["keep"], f"{t['id']}: nothing only the assistant said is kept"


def test_ids_are_unique(turns: list[dict[str, Any]]) -> None:
    dupes = [i for i, n in Counter(t["id"] for t in turns).items() if n > 1]
    assert not dupes


def test_languages_and_counts_match_the_spec(turns: list[dict[str, Any]]) -> None:
    langs = Counter(t["lang"] for t in turns)
    assert set(langs) == {"en", "ja", "zh", "sr"} | OTHER
    assert 160 <= len(turns) <= 185
    assert 50 <= langs["en"] <= 60
    for lang in ("ja", "zh", "sr"):
        assert langs[lang] >= 26, lang
    assert sum(langs[lang] for lang in OTHER) >= 23 and all(langs[lang] >= 4 for lang in OTHER)
    serbian = [t for t in turns if t["lang"] == "sr"]
    assert all(("latn" in t["tags"]) != ("cyrl" in t["tags"]) for t in serbian)
    assert sum("cyrl" in t["tags"] for t in serbian) >= 12 and sum("latn" in t["tags"] for t in serbian) >= 12
    cyrillic = re.compile(r"[\u0400-\u04FF]")
    for t in serbian:
        speech = t["text"] if not t["injected"] else t["text"].rsplit("\n\n", 1)[-1]
        assert bool(cyrillic.search(speech)) == ("cyrl" in t["tags"]), t["id"]
    assert 24 <= sum("relative" in t["tags"] for t in turns) <= 32
    lookalikes = [t for t in turns if not t["keep"] and not {"neg:chitchat", "neg:transient"} & set(t["tags"])]
    assert len(lookalikes) >= 45
    wrapped = [t for t in turns if t["keep"] and "injected" in t["tags"]]
    assert len(wrapped) >= 10


def test_negatives_say_why_and_what_kind(turns: list[dict[str, Any]]) -> None:
    for t in turns:
        kinds = {tag.split(":", 1)[1] for tag in t["tags"] if tag.startswith("neg:")}
        if t["keep"]:
            assert not kinds, t["id"]
        else:
            assert len(kinds) == 1 and kinds <= NEG_KINDS, t["id"]
            assert t["why"].strip(), t["id"]
        assert ("injected" in t["tags"]) == bool(t["injected"]), t["id"]
        if "neg:injected" in t["tags"]:
            assert t["injected"], t["id"]


def test_times_are_well_formed_and_after_the_turn(turns: list[dict[str, Any]]) -> None:
    for t in turns:
        said = datetime.fromisoformat(t["said_at"])
        timed = [label for label in t["keep"] if label["time"] is not None]
        assert bool(timed) == ("relative" in t["tags"]), t["id"]
        for label in timed:
            assert flush_eval.TIME_RE.match(label["time"]), (t["id"], label["time"])
            when, _clock = flush_eval.parse_label_time(label["time"], said)  # checks the weekday too
            assert 0 <= (when - said.date()).days <= 31, t["id"]


def test_label_times_refuse_a_wrong_weekday() -> None:
    said = datetime.fromisoformat("2026-11-12T19:54:00+01:00")
    assert flush_eval.parse_label_time("Fri 13 Nov 08:30", said) == (said.date().replace(day=13), "08:30")
    with pytest.raises(ValueError):
        flush_eval.parse_label_time("Sat 13 Nov", said)
    with pytest.raises(ValueError):
        flush_eval.parse_label_time("tomorrow", said)


@pytest.mark.parametrize("shown", ["Fri 13 Nov 08:30", "13 November, 8:30", "Friday, November 13 at 08:30",
                                   "2026-11-13 08:30", "13.11. um 8:30", "11月13日 8:30", "petak 13. novembar u 08:30"])
def test_resolved_times_are_recognised_in_several_forms(shown: str) -> None:
    when = datetime.fromisoformat("2026-11-13T00:00:00").date()
    assert flush_eval.time_shown(flush_eval.norm(shown), when, "08:30")


@pytest.mark.parametrize("shown", ["tomorrow at 08:30", "Fri 13 Nov", "113 Nov 08:30", "Sat 14 Nov 08:30",
                                   "Fri 13 Nov 18:30", "2026-11-30 08:30"])
def test_unresolved_or_wrong_times_are_not(shown: str) -> None:
    when = datetime.fromisoformat("2026-11-13T00:00:00").date()
    assert not flush_eval.time_shown(flush_eval.norm(shown), when, "08:30")


def _item(text: str, line: int = 2) -> DraftItem:
    return DraftItem(text=text, kind="plan", session_id="s", line=line)


def test_scorer_matches_terms_scripts_and_times() -> None:
    turn = {"id": "x-001", "lang": "sr", "said_at": "2026-11-12T19:54:00+01:00", "tags": ["relative"],
            "keep": [{"must": ["advokat"], "time": "Fri 13 Nov 08:30"}], "injected": ["GMT+1]"]}
    right = flush_eval.score_turn(turn, [_item("Петак 13 Nov 08:30: састанак са адвокатом")], 2)
    assert right["labels"][0]["recalled"] and right["labels"][0]["time_ok"] and right["hits"] == 1
    unresolved = flush_eval.score_turn(turn, [_item("Sutra u 8:30 sastanak sa advokatom")], 2)
    assert unresolved["labels"][0]["recalled"] and unresolved["labels"][0]["time_ok"] is False
    other_line = flush_eval.score_turn(turn, [_item("sastanak sa advokatom", line=1)], 2)
    assert not other_line["labels"][0]["recalled"] and other_line["context_items"]
    wrapped = flush_eval.score_turn(turn, [_item("[Thu 2026-11-12 19:54 GMT+1] sastanak sa advokatom")], 2)
    assert not wrapped["labels"][0]["recalled"] and wrapped["false_positives"] == 1 and wrapped["injected_items"] == 1


def test_scorer_counts_false_positives_on_negatives() -> None:
    turn = {"id": "x-002", "lang": "ja", "said_at": "2026-11-12T19:54:00+01:00", "tags": ["neg:question"],
            "keep": [], "injected": []}
    scored = flush_eval.score_turn(turn, [_item("毎日リマインダーを送ってもらうことはできますか")], 2)
    summary = flush_eval.summarise([scored])
    assert summary["false_positives"] == 1 and summary["precision"] == 0.0 and summary["negative_turns_clean"] == 0


def test_eval_runs_on_a_few_turns(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    env = {**os.environ, "PYTHONPATH": str(REPO), "MEMDECK_HOME": str(tmp_path / "home")}
    ids = "en-001,en-021,en-036,ja-003,sr-014"
    proc = subprocess.run([sys.executable, str(BENCH / "flush_eval.py"), "--ids", ids, "--json", "--out", str(out)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, check=False)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert json.loads(out.read_text(encoding="utf-8")) == report
    assert {"overall", "per_language", "per_tag", "turns", "drafter", "flush_now", "zone"} <= set(report)
    overall = report["overall"]
    for key in ("recall", "precision", "f1", "time_accuracy", "injected_items", "labels", "items",
                "negative_turns", "negative_turns_clean", "timed_labels", "time_resolved"):
        assert key in overall, key
    assert overall["turns"] == 5 and overall["labels"] == 4 and overall["timed_labels"] == 2
    assert overall["negative_turns"] == 1
    assert set(report["per_language"]) == {"en", "ja", "sr"}
    assert [t["id"] for t in report["turns"]] == ids.split(",")
    for t in report["turns"]:
        assert {"labels", "items", "hits", "false_positives", "injected_items", "context_items"} <= set(t)
    text = subprocess.run([sys.executable, str(BENCH / "flush_eval.py"), "--ids", "en-001"], capture_output=True,
                          text=True, env=env, cwd=tmp_path, check=True).stdout
    assert text.startswith("flush eval (extractive") and "overall" in text
