"""Time-aware queries eval: two months of daily notes, a fixed today, questions that name days in three languages.

Usage::

    python bench/eval_dates.py --out bench/results/2026-12-01-dates-after.json [--modes keyword,hybrid]
        [--date-words keep|drop] [--show-misses]

The workspace is generated (seeded, written under a temp dir or ``$MEMDECK_HOME/dates``): daily notes
``memory/2026-08-24.md`` … ``memory/2026-10-22.md`` plus a few session notes ``memory/YYYY-MM-DD-HHMM.md``, in
English with Serbian and Chinese lines, filled with ordinary activities and with distractors: the same topics on
other days, and lines that say "yesterday", "last week", "Friday", "juče", "上周" in their text. Today is pinned
to Thu 22 Oct 2026 (``MEMDECK_TODAY``). Each question has the day(s) whose note holds its answer; a question is
right at top k when one of the first k results is a chunk of such a day's note (daily or session note).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from _eval_common import (
    engine_location,
    git_revision,
    markdown_table,
    now_iso,
    variant_heuristics,
    write_outputs,
)

TODAY = date(2026, 10, 22)  # a Thursday
FIRST = date(2026, 8, 24)
SEED = 20261022


def d(text: str) -> date:
    """``10-21`` → 2026-10-21 (the eval's dates are all in 2026)."""
    month, day = text.split("-")
    return date(2026, int(month), int(day))


def span(a: str, b: str) -> tuple[date, ...]:
    """Every day from ``a`` to ``b``."""
    start, end = d(a), d(b)
    return tuple(start + timedelta(days=i) for i in range((end - start).days + 1))


@dataclass(frozen=True)
class Question:
    """One query, the form it exercises, its language and the days whose note answers it."""

    form: str
    lang: str
    query: str
    gold: tuple[date, ...]


# Filler: what a day holds besides the facts the questions ask about (no question's topic words).
FILLER = [
    "Answered email for an hour.", "Reviewed pull request #{n}.", "Walked the dog around the block.",
    "Worked on the quarterly slides.", "Standup at 9:30, nothing blocking.", "Cleaned up the downloads folder.",
    "Watered the plants on the balcony.", "Paid the electricity bill online.", "Tidied the desk.",
    "Wrote notes for the design review.", "Listened to a podcast about databases.", "Sorted the inbox.",
    "Updated the team wiki page on onboarding.", "Took a long lunch break in the park.",
    "Odgovorio na mejlove.", "Prošetao psa.", "整理了邮件。", "下午写了周报。", "在公园散步。",
]
# Distractors that say a date word in their text (they match the phrase's words, not the day).
DATE_WORD_LINES = [
    "Yesterday's standup ran long, so today I kept mine short.", "Last week felt busy; this week is calmer.",
    "Reminder: the office is closed on Friday.", "On Monday the team switches to the new board.",
    "Two weeks ago seems like ages.", "Planning for the weekend: nothing yet.", "Tuesday is usually quiet.",
    "Last month's report is still open.", "Juče je bilo naporno.", "Prošle nedelje sam bio umoran.",
    "U petak nema sastanka.", "昨天睡得不好。", "上周很忙。", "星期一开周会。", "上个月的报告还没写完。",
    "The day before yesterday I forgot my keys.", "Three days ago I started a new notebook.",
]

# Topic lines the questions ask about: (topic, English template variants). Each is placed on the gold day and,
# as distractors, on several other days with other values.
TOPICS: dict[str, list[str]] = {
    "cook": ["Cooked {v} for dinner."],
    "run": ["Ran 8 km along the {v}."],
    "meet": ["Met {v} for coffee to talk about the roadmap."],
    "read": ["Read forty pages of {v}."],
    "bug": ["Fixed the {v} bug in the sync service."],
    "buy": ["Bought {v} at the hardware store."],
    "call": ["Called {v} about the insurance claim."],
    "hike": ["Hiked up {v} with friends."],
    "restaurant": ["Dinner at {v}, the restaurant downtown."],
    "dentist": ["Dentist appointment: {v}."],
    "rent": ["Paid the rent for the flat ({v})."],
    "trip": ["Planned the trip: {v}."],
    "meeting": ["Meeting with the vendor: {v}."],
    "sr_cook": ["Kuvao sam {v} za večeru."],
    "sr_meet": ["Sreo sam {v} u gradu."],
    "sr_run": ["Trčao sam pored {v}."],
    "sr_buy": ["Kupio sam {v} u prodavnici."],
    "sr_movie": ["Gledao sam film {v}."],
    "sr_work": ["Radio sam na projektu {v}."],
    "zh_cook": ["晚饭做了{v}。"],
    "zh_meet": ["和{v}见面聊了项目。"],
    "zh_buy": ["在超市买了{v}。"],
    "zh_movie": ["看了电影{v}。"],
    "zh_work": ["写完了{v}的方案。"],
    "zh_run": ["在{v}跑步。"],
}
VALUES: dict[str, list[str]] = {
    "cook": ["mushroom risotto", "lentil soup", "chicken curry", "pad thai", "ratatouille", "shakshuka"],
    "run": ["river path", "old railway line", "lake shore", "city park loop", "canal towpath"],
    "meet": ["Ana", "Marko", "Priya", "Tom", "Lena", "Jovan"],
    "read": ["The Left Hand of Darkness", "Dune", "Middlemarch", "The Overstory", "Piranesi"],
    "bug": ["timezone", "duplicate upload", "memory leak", "stale cache", "off-by-one"],
    "buy": ["a cordless drill", "wood glue", "a ladder", "paint rollers", "a toolbox"],
    "call": ["Grandma", "the landlord", "Aunt Vesna", "the bank", "Dr. Ilić"],
    "hike": ["Mount Avala", "the ridge trail", "Kosmaj", "the waterfall trail"],
    "restaurant": ["Little Lamb", "Casa Verde", "Golden Dragon", "Trattoria Sole"],
    "dentist": ["a filling on the left molar", "cleaning and x-rays", "check-up, all fine"],
    "rent": ["transfer 0412", "transfer 0913", "transfer 1008"],
    "trip": ["train to Vienna in December", "ferry to Split in spring", "flights to Lisbon"],
    "meeting": ["pricing for next year", "the delayed shipment", "a new support contract"],
    "sr_cook": ["sarmu", "pasulj", "musaku", "punjene paprike", "gulaš"],
    "sr_meet": ["Milicu", "Nikolu", "Stefana", "Jelenu"],
    "sr_run": ["Save", "Dunava", "Ade", "Topčiderske reke"],
    "sr_buy": ["patike", "kišobran", "ranac", "novu lampu"],
    "sr_movie": ["Ko to tamo peva", "Maratonci trče počasni krug", "Balkanski špijun"],
    "sr_work": ["Orion", "Vega", "Atlas", "Kosava"],
    "zh_cook": ["红烧肉", "麻婆豆腐", "饺子", "西红柿炒鸡蛋", "宫保鸡丁"],
    "zh_meet": ["小王", "李老师", "张经理", "陈静"],
    "zh_buy": ["牛奶和面包", "一把雨伞", "新的耳机", "水果"],
    "zh_movie": ["流浪地球", "让子弹飞", "霸王别姬", "你好，李焕英"],
    "zh_work": ["数据迁移", "性能优化", "权限系统", "监控告警"],
    "zh_run": ["河边", "公园", "操场", "湖边"],
}

# Questions: (form, lang, query, topic, gold days). The topic's line goes on the gold day (on the first gold day
# for a range: the other days of the range hold filler only); None: the day itself is the answer.
SPEC: list[tuple[str, str, str, str | None, tuple[date, ...]]] = [
    ("yesterday", "en", "What did I cook yesterday?", "cook", (d("10-21"),)),
    ("day before yesterday", "en", "Who did I meet for coffee the day before yesterday?", "meet", (d("10-20"),)),
    ("today", "en", "What bug did I fix today?", "bug", (d("10-22"),)),
    ("N days ago", "en", "Where did I run 3 days ago?", "run", (d("10-19"),)),
    ("N days ago (word)", "en", "What book was I reading five days ago?", "read", (d("10-17"),)),
    ("N weeks ago", "en", "What did I buy at the hardware store two weeks ago?", "buy", (d("10-08"),)),
    ("last <weekday>", "en", "Who did I call last Saturday?", "call", (d("10-17"),)),
    ("this <weekday>", "en", "What did I cook this Monday?", "cook", (d("10-19"),)),
    ("bare <weekday>", "en", "Where did I run on Tuesday?", "run", (d("10-20"),)),
    ("<weekday> before last", "en", "Which bug did I fix the Friday before last?", "bug", (d("10-09"),)),
    ("last weekend", "en", "Where did we hike last weekend?", "hike", (d("10-18"),)),
    ("last week", "en", "Which restaurant did we go to last week?", "restaurant", (d("10-14"),)),
    ("this week", "en", "What did I read this week?", "read", (d("10-20"),)),
    ("last month", "en", "What did the dentist do last month?", "dentist", (d("09-16"),)),
    ("this month", "en", "Did I pay the rent this month?", "rent", (d("10-02"),)),
    ("on the 3rd", "en", "What came up in the vendor meeting on the 3rd?", "meeting", (d("10-03"),)),
    ("in <month>", "en", "What trip did I plan in September?", "trip", (d("09-10"),)),
    ("Oct 5", "en", "What did I cook on Oct 5?", "cook", (d("10-05"),)),
    ("5 October", "en", "Who did I call on 29 September?", "call", (d("09-29"),)),
    ("ISO date", "en", "Where did I run on 2026-09-14?", "run", (d("09-14"),)),
    ("5.10.", "sr", "Šta sam kupio 12.10.?", "sr_buy", (d("10-12"),)),
    ("juče", "sr", "Šta sam kuvao juče?", "sr_cook", (d("10-21"),)),
    ("jučer", "sr", "Koga sam sreo jučer?", "sr_meet", (d("10-21"),)),
    ("prekjuče", "sr", "Gde sam trčao prekjuče?", "sr_run", (d("10-20"),)),
    ("јуче (Cyrillic)", "sr", "Шта сам купио јуче?", "sr_buy", (d("10-21"),)),
    ("danas", "sr", "Na kom projektu sam radio danas?", "sr_work", (d("10-22"),)),
    ("sr weekday", "sr", "Koji film sam gledao u petak?", "sr_movie", (d("10-16"),)),
    ("sr weekday (ijekavian)", "sr", "Šta sam kuvao u srijedu?", "sr_cook", (d("10-21"),)),
    ("prošle nedelje", "sr", "Koji film sam gledao prošle nedelje?", "sr_movie", (d("10-13"), d("10-16"))),
    ("prošle sedmice", "sr", "Koga sam sreo prošle sedmice?", "sr_meet", (d("10-15"),)),
    ("pre N dana", "sr", "Šta sam kupio pre četiri dana?", "sr_buy", (d("10-18"),)),
    ("прије N дана (Cyrillic)", "sr", "Гдје сам трчао прије 2 дана?", "sr_run", (d("10-20"),)),
    ("昨天", "zh", "昨天晚饭做了什么？", "zh_cook", (d("10-21"),)),
    ("前天", "zh", "前天和谁见面了？", "zh_meet", (d("10-20"),)),
    ("今天", "zh", "今天写完了什么方案？", "zh_work", (d("10-22"),)),
    ("星期X", "zh", "星期一买了什么？", "zh_buy", (d("10-19"),)),
    ("周X", "zh", "周三看了什么电影？", "zh_movie", (d("10-21"),)),
    ("上周X", "zh", "上周五晚饭做了什么？", "zh_cook", (d("10-16"),)),
    ("上星期X", "zh", "上星期二在哪里跑步？", "zh_run", (d("10-13"),)),
    ("上周", "zh", "上周看了什么电影？", "zh_movie", (d("10-15"),)),
    ("上周末", "zh", "上周末买了什么？", "zh_buy", (d("10-17"),)),
    ("这周", "zh", "这周和谁见面了？", "zh_meet", (d("10-19"), d("10-20"))),
    ("上个月", "zh", "上个月写完了什么方案？", "zh_work", (d("09-22"),)),
    ("N天前", "zh", "三天前在哪里跑步？", "zh_run", (d("10-19"),)),
    ("X月Y日", "zh", "10月6日晚饭做了什么？", "zh_cook", (d("10-06"),)),
]
QUESTIONS = [Question(form, lang, query, gold) for form, lang, query, _, gold in SPEC]


def build_notes() -> dict[str, str]:
    """The workspace's files (relative path → text), the same on every run."""
    rng = random.Random(SEED)
    days = [FIRST + timedelta(days=i) for i in range((TODAY - FIRST).days + 1)]
    lines: dict[date, list[str]] = defaultdict(list)
    for day in days:
        lines[day] = [rng.choice(FILLER).format(n=rng.randint(100, 999)) for _ in range(rng.randint(2, 4))]
        if rng.random() < 0.45:
            lines[day].insert(rng.randint(0, len(lines[day])), rng.choice(DATE_WORD_LINES))
    # Every topic shows up on ~8 other days (distractors with other values), never inside a question's gold
    # range, so only the named day holds the asked-about fact within the range the question names.
    guarded: dict[str, set[date]] = defaultdict(set)
    for _form, _lang, _query, topic, gold in SPEC:
        if topic is not None:
            guarded[topic].update(gold)
    asked: dict[str, list[tuple[date, ...]]] = defaultdict(list)
    for _form, _lang, _query, topic, gold in SPEC:
        if topic is not None:
            asked[topic].append(gold)
    for topic, template in TOPICS.items():
        blocked = set(guarded[topic])
        for gold in asked[topic]:
            blocked.update(_question_window(gold))
        free = [day for day in days if day not in blocked]
        for day in rng.sample(free, min(8, len(free))):
            value = rng.choice(VALUES[topic])
            lines[day].insert(rng.randint(0, len(lines[day])), rng.choice(template).format(v=value))
    for i, (_form, _lang, _query, topic, gold) in enumerate(SPEC):
        if topic is None:
            continue
        value = VALUES[topic][i % len(VALUES[topic])]
        lines[gold[0]].insert(rng.randint(0, len(lines[gold[0]])), TOPICS[topic][0].format(v=value))
    files: dict[str, str] = {}
    session_days = {d("10-20"), d("10-14"), d("09-29")}
    for day in days:
        body = lines[day]
        if day in session_days and len(body) > 2:
            # Part of the day lives in a session note (memory/YYYY-MM-DD-HHMM.md), as OpenClaw writes them.
            files[f"memory/{day.isoformat()}-1430.md"] = (f"# Session {day.isoformat()} 14:30\n\n"
                                                         + "".join(f"- {x}\n" for x in body[-2:]))
            body = body[:-2]
        files[f"memory/{day.isoformat()}.md"] = f"# {day.isoformat()}\n\n" + "".join(f"- {x}\n" for x in body)
    files["MEMORY.md"] = ("# Memory\n\n- I cook most evenings and run three times a week.\n"
                          "- Dentist: Dr. Ilić, every six months.\n- Rent is due on the first of the month.\n"
                          "- Volim da kuvam i da trčim pored reke.\n- 每周跑步三次。\n")
    return files


def _question_window(gold: tuple[date, ...]) -> set[date]:
    """Days near a question's gold day(s) that no distractor of its topic may take (its week, or its month)."""
    out: set[date] = set()
    for day in gold:
        monday = day - timedelta(days=day.weekday())
        out.update(monday + timedelta(days=i) for i in range(-3, 10))
        if day.month == 9 or (day.month == 10 and day.day <= 3):
            # month questions (last month = September, this month = October): keep the month clean
            start = date(day.year, day.month, 1)
            out.update(start + timedelta(days=i) for i in range(31) if (start + timedelta(days=i)).month == day.month)
    return out


def file_day(path: str) -> date | None:
    """The day of a dated note path."""
    m = re.search(r"memory/(\d{4})-(\d{2})-(\d{2})", path)
    return date(int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def write_workspace(root: Path) -> Path:
    """Write the notes under ``root/ws`` (rewriting only what changed) and return the workspace."""
    ws = root / "ws"
    files = build_notes()
    for rel, text in files.items():
        path = ws / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    for old in (ws / "memory").glob("*.md"):
        if f"memory/{old.name}" not in files:
            old.unlink()
    return ws


def run(modes: Sequence[str], home: Path, date_words: str | None, show_misses: bool,
        boosts: Sequence[float] = (), model: str | None = None, more: str = "") -> dict[str, Any]:
    """Every question in every mode; per-question ranks and per-form/language top-1/top-3."""
    os.environ["MEMDECK_TODAY"] = TODAY.isoformat()
    from dataclasses import replace

    from engine.api import MemoryEngine
    from engine.config import SearchHeuristics, load_config

    heur: dict[str, Any] = {}
    if date_words is not None:
        heur["date_words_in_terms"] = date_words == "keep"
    heur.update(zip(("day_boost", "range_boost", "near_boost", "month_boost"), boosts, strict=False))
    heuristics = replace(SearchHeuristics(), **heur)
    if more:  # --heuristics key=value+key=value
        heuristics = variant_heuristics(heuristics, more)
    ws = write_workspace(home)
    out: dict[str, Any] = {"modes": {}}
    for mode in modes:
        overrides: dict[str, Any] = {"embedding": {"provider": "hash"}} if mode == "keyword" else (
            {"embedding": {"model": model}} if model else {})
        config = load_config(workspace=ws, home=home / mode, overrides=overrides)
        config = replace(config, search=replace(config.search, heuristics=heuristics))
        rows = []
        used: set[str] = set()
        with MemoryEngine(config) as engine:
            engine.sync(embed=mode != "keyword")
            for q in QUESTIONS:
                resp = engine.search(q.query, mode=mode, max_results=6)
                used.add(str(resp.model))
                ranked = [file_day(h.path) for h in resp.results]
                rank = next((i for i, day in enumerate(ranked, 1) if day in q.gold), None)
                rows.append({"form": q.form, "lang": q.lang, "query": q.query,
                             "gold": [g.isoformat() for g in q.gold], "rank": rank,
                             "top": [h.path for h in resp.results[:3]],
                             "dates": [s.to_json() for s in getattr(resp, "dates", ())]})
                if show_misses and rank != 1:
                    print(f"[{mode}] miss rank={rank} {q.query!r} gold={q.gold[0]} top={rows[-1]['top']}",
                          file=sys.stderr)
        top1 = sum(1 for r in rows if r["rank"] == 1)
        top3 = sum(1 for r in rows if r["rank"] is not None and r["rank"] <= 3)
        by_lang = {lang: (sum(1 for r in rows if r["lang"] == lang and r["rank"] == 1),
                          sum(1 for r in rows if r["lang"] == lang and r["rank"] is not None and r["rank"] <= 3),
                          sum(1 for r in rows if r["lang"] == lang)) for lang in ("en", "sr", "zh")}
        out["modes"][mode] = {"top1": top1, "top3": top3, "n": len(rows), "by_lang": by_lang, "questions": rows,
                              "model": ", ".join(sorted(used))}
    return out


# -- LoCoMo with relative dates: notes and questions we did not write ------------------------------------------
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_ZH_WD = "一二三四五六日"


def locomo_phrase(i: int, gold: date) -> tuple[str, date, str]:
    """The ``i``-th question's relative form: ``(form, today, phrase)`` with ``phrase`` naming ``gold`` from today."""
    k = 1 + i % 6
    wd = _WEEKDAYS[gold.weekday()]
    next_monday = gold - timedelta(days=gold.weekday()) + timedelta(days=7)
    forms: list[tuple[str, date, str]] = [
        ("yesterday", gold + timedelta(days=1), "yesterday"),
        ("N days ago", gold + timedelta(days=1 + k), f"{1 + k} days ago"),
        ("last <weekday>", gold + timedelta(days=k), f"last {wd}"),
        ("bare <weekday>", gold + timedelta(days=k), f"on {wd}"),
        ("last week", next_monday + timedelta(days=i % 5), "last week"),
        ("N weeks ago", gold + timedelta(days=14), "two weeks ago"),
        ("<weekday> before last", gold + timedelta(days=7 + k), f"the {wd} before last"),
        ("juče", gold + timedelta(days=1), "juče"),
        ("pre N dana", gold + timedelta(days=3), "pre tri dana"),
        ("昨天", gold + timedelta(days=1), "昨天"),
        ("上周X", next_monday + timedelta(days=i % 5), "上周" + _ZH_WD[gold.weekday()]),
        ("N天前", gold + timedelta(days=4), "四天前"),
    ]
    return forms[i % len(forms)]


def run_locomo(data: Path, home: Path, limit: int) -> dict[str, Any]:
    """LoCoMo single-hop questions whose evidence is in one dated session, each asked plain and with a relative
    date phrase that names that session's day from a ``today`` pinned for it (keyword mode)."""
    import json

    from eval_locomo import build_conversation

    from engine.api import MemoryEngine
    from engine.config import load_config

    samples = json.loads(data.read_text(encoding="utf-8"))
    rows: list[dict[str, Any]] = []
    for sample in samples:
        conv = build_conversation(sample)
        ws = home / "locomo" / conv.sample_id / "ws"
        for rel, text in conv.files.items():
            path = ws / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                path.write_text(text, encoding="utf-8")
        config = load_config(workspace=ws, home=home / "locomo" / conv.sample_id / "home",
                             overrides={"embedding": {"provider": "hash"}})
        with MemoryEngine(config) as engine:
            engine.sync(embed=False)
            picked = 0
            for q in conv.questions:
                files = {path for path, _line in q.gold}
                days = {file_day(path) for path in files}
                if q.category != "4" or len(days) != 1 or None in days or picked >= limit:
                    continue
                (gold,) = days
                assert gold is not None
                form, today, phrase = locomo_phrase(len(rows), gold)
                asked = q.text.rstrip(" ?") + " " + phrase + "?"
                os.environ["MEMDECK_TODAY"] = today.isoformat()
                ranks = {}
                for name, text in (("plain", q.text), ("dated", asked)):
                    hits = engine.search(text, mode="keyword", max_results=6).results
                    ranks[name] = next((i for i, h in enumerate(hits, 1) if file_day(h.path) == gold), None)
                rows.append({"conv": conv.sample_id, "form": form, "query": asked, "gold": gold.isoformat(),
                             "today": today.isoformat(), **ranks})
                picked += 1
    os.environ["MEMDECK_TODAY"] = TODAY.isoformat()

    def at(name: str, k: int, subset: Sequence[dict[str, Any]]) -> int:
        return sum(1 for r in subset if r[name] is not None and r[name] <= k)

    forms = list(dict.fromkeys(r["form"] for r in rows))
    return {"n": len(rows), "rows": rows,
            "summary": {name: {"top1": at(name, 1, rows), "top3": at(name, 3, rows)} for name in ("plain", "dated")},
            "by_form": {f: {name: at(name, 1, [r for r in rows if r["form"] == f]) for name in ("plain", "dated")}
                        | {"n": sum(1 for r in rows if r["form"] == f)} for f in forms}}


def report(result: dict[str, Any], label: str) -> str:
    """The Markdown summary of one run."""
    parts = [f"# Dates eval — {label}", "", f"today = {TODAY.isoformat()} (Thu), {len(QUESTIONS)} questions, "
             f"engine {engine_location()}, {now_iso()}", ""]
    for mode, res in result["modes"].items():
        parts += [f"## {mode} (model {res.get('model')}): top-1 {res['top1']}/{res['n']}, top-3 {res['top3']}/{res['n']}",
                  ""]
        parts.append(markdown_table(["lang", "top-1", "top-3", "n"],
                                    [[lang, *vals] for lang, vals in res["by_lang"].items()]))
        parts.append("")
        parts.append(markdown_table(["form", "lang", "query", "rank"],
                                    [[r["form"], r["lang"], r["query"], r["rank"] or "—"] for r in res["questions"]]))
        parts.append("")
    loc = result.get("locomo")
    if loc:
        parts += [f"## LoCoMo single-hop questions with a relative date (keyword, {loc['n']} questions)", "",
                  "plain = the question alone; dated = the question plus a phrase naming its evidence's session day "
                  "from a today pinned for it; right = a result from that day's note.", ""]
        parts.append(markdown_table(["asked", "top-1", "top-3"],
                                    [[k, v["top1"], v["top3"]] for k, v in loc["summary"].items()]))
        parts.append("")
        parts.append(markdown_table(["form", "n", "plain top-1", "dated top-1"],
                                    [[f, v["n"], v["plain"], v["dated"]] for f, v in loc["by_form"].items()]))
        parts.append("")
    return "\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the eval and write the JSON and Markdown."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--modes", default="keyword")
    parser.add_argument("--date-words", choices=("keep", "drop"), default=None,
                        help="keep or drop a relative date phrase's words in the keyword query (default: the engine's)")
    parser.add_argument("--boosts", default="",
                        help="try other lifts: DAY,RANGE,NEAR,MONTH (engine.search.pipeline's constants)")
    parser.add_argument("--locomo", type=Path, default=None,
                        help="also ask LoCoMo single-hop questions with relative dates (locomo-dev.json)")
    parser.add_argument("--locomo-per-conv", type=int, default=40)
    parser.add_argument("--model", default=None, help="the embedding model for hybrid (default: the config's)")
    parser.add_argument("--heuristics", default="",
                        help="key=value heuristics joined by + (curated_prior=0.3+curated_slot=0.3)")
    parser.add_argument("--label", default="")
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args(argv)
    env_home = os.environ.get("MEMDECK_HOME")
    home = Path(env_home) / "dates" if env_home else Path(tempfile.mkdtemp(prefix="memdeck-dates-"))
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    boosts = [float(x) for x in args.boosts.split(",") if x.strip()]
    result = run(modes, home, args.date_words, args.show_misses, boosts, args.model, args.heuristics)
    if args.locomo is not None:
        result["locomo"] = run_locomo(args.locomo, home, args.locomo_per_conv)
    result.update({"today": TODAY.isoformat(), "revision": git_revision(Path(__file__).resolve().parent.parent),
                   "engine": engine_location(), "date_words": args.date_words, "boosts": boosts,
                   "when": now_iso()})
    md = write_outputs(args.out, result, report(result, args.label or args.out.stem))
    for mode, res in result["modes"].items():
        print(f"{mode}: top-1 {res['top1']}/{res['n']}  top-3 {res['top3']}/{res['n']}  by lang {res['by_lang']}")
    if "locomo" in result:
        print(f"locomo ({result['locomo']['n']}): {result['locomo']['summary']}")
        print(f"  by form: {result['locomo']['by_form']}")
    print(f"wrote {args.out} and {md}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
