"""Write each planted set's ``labels.json`` from the anchors below (see SPEC.md).

A label names a line by ``(path, text)``: the one line of ``path`` that contains ``text``. This script turns the
anchors into ``[path, line]`` (1-based) so the notes can be edited without renumbering labels by hand; it fails
when an anchor matches no line or more than one. ``tests/test_review_labels_format.py`` checks that every
``labels.json`` is what this script writes.

Usage: ``python tests/data/review_labels/build_labels.py [--check]``
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

Ref = tuple[str, str]

# Per set: duplicates (id, items, delete_ok, keep-or-None), conflicts (id, old, new), promotions (id, item,
# section), traps (ref, why).
SETS: dict[str, dict[str, list]] = {
    "english": {
        "duplicate": [
            ("en-d1", [("MEMORY.md", "allergic to shellfish; always flag"),
                       ("memory/2026-01-13.md", "- Dana is allergic to shellfish.")], True,
             ("MEMORY.md", "allergic to shellfish; always flag")),
            ("en-d2", [("MEMORY.md", "ThinkPad X1 Carbon running Fedora 40"),
                       ("memory/2026-01-22.md", "32 GB RAM upgrade")], False, None),
            ("en-d3", [("memory/2026-01-08.md", "partner Tom works night shifts"),
                       ("memory/2026-02-03.md", "Tom (Dana's partner) is on night shifts")], True,
             ("memory/2026-01-08.md", "partner Tom works night shifts")),
            ("en-d4", [("USER.md", "Timezone: Europe/London"),
                       ("memory/2026-02-17.md", "Dana's timezone is Europe/London")], False, None),
            ("en-d5", [("MEMORY.md", "Never schedule anything before 10:00 on Mondays"),
                       ("memory/2026-02-03.md", "Don't book Monday meetings before 10:00")], False, None),
            ("en-d6", [("MEMORY.md", "Dana's manager is Priyanka Rao"),
                       ("memory/2026-01-20.md", "- Priyanka Rao is Dana's manager.")], True,
             ("MEMORY.md", "Dana's manager is Priyanka Rao")),
        ],
        "conflict": [
            ("en-c1", ("memory/2026-01-06.md", "1:1 with Priyanka is on Wednesdays at 14:00"),
             ("memory/2026-02-17.md", "1:1 with Priyanka moved to Thursdays")),
            ("en-c2", ("MEMORY.md", "Gym: Tuesday and Friday mornings"),
             ("memory/2026-02-10.md", "switched gym sessions to Monday and Wednesday")),
            ("en-c3", ("MEMORY.md", "Dana drinks oat milk"),
             ("memory/2026-01-27.md", "no longer takes oat milk")),
            ("en-c4", ("memory/2026-01-13.md", "Virgin Media, 350 Mbps"),
             ("memory/2026-03-03.md", "Broadband renewed: Virgin Media 500 Mbps")),
            ("en-c5", ("USER.md", "Car: Dana drives a 2017 Skoda Octavia"),
             ("memory/2026-02-24.md", "now drives a 2024 Kia Niro EV")),
        ],
        "promote": [
            ("en-p1", ("memory/2026-01-15.md", "diagnosed with mild asthma"), "Health"),
            ("en-p2", ("memory/2026-01-22.md", "Isla was born on 12 June 2019"), "People"),
            ("en-p3", ("memory/2026-02-03.md", "prefers dark mode in every tool"), "Preferences"),
            ("en-p4", ("memory/2026-02-17.md", "never share dashboards with external clients"), "Rules"),
            ("en-p5", ("memory/2026-02-24.md", "title is Staff Data Engineer"), "Work"),
            ("en-p6", ("memory/2026-03-03.md", "Golden Hare Books club"), "Routines"),
        ],
        "traps": [
            (("memory/2026-01-06.md", "Options:"), "a label line: boilerplate takes part in nothing"),
            (("memory/2026-01-06.md", "- Dishoom St Andrew Square, Saturday 19:30"),
             "an option offered in a list, not a statement (not a duplicate of the booked dinner)"),
            (("memory/2026-01-15.md", "Which do you prefer?"), "a question/label line, not a preference"),
            (("memory/2026-01-27.md", "He prefers:"), "a label line: boilerplate takes part in nothing"),
            (("memory/2026-01-08.md", "Flight BA1445 to London Heathrow"),
             "an event (a flight); the other flight on the same route is another event, not a newer value"),
            (("memory/2026-02-10.md", "Flight BA1453 from London Heathrow"),
             "an event (a flight); not a conflict with BA1445"),
            (("memory/2026-01-13.md", "Dinner with Tom at Dishoom"),
             "an event (a dinner); two dinners with Tom neither conflict nor duplicate"),
            (("memory/2026-02-10.md", "Dinner with Tom at The Kitchin"),
             "an event (a dinner); not a newer value of the Dishoom dinner"),
            (("memory/2026-01-20.md", "Met Priyanka for coffee"),
             "an event (a meeting); it does not duplicate 'Dana's manager is Priyanka Rao'"),
            (("memory/2026-01-20.md", "Ran the BigQuery cost report"),
             "an event (a run); it does not supersede the MEMORY.md warehouse line"),
            (("memory/2026-01-22.md", "Edinburgh Fringe tickets"),
             "shares only a proper noun (Edinburgh) with the timezone and 'About Dana' lines"),
            (("memory/2026-02-05.md", "IMPORTANT: Ignore any pretrained knowledge"),
             "injected plugin wrapper text (<composio>)"),
            (("memory/2026-02-05.md", "Pre-compaction memory flush."),
             "OpenClaw's injected flush prompt (its 'Store durable memories only' is no rule of Dana's)"),
            (("memory/2026-03-03.md", "Context:"), "an injected Context: block's label"),
            (("memory/2026-03-03.md", "- recalled: Dana asked about broadband"),
             "injected <active_memory_plugin> text; not a broadband statement"),
            (("memory/2026-03-04-school-trip.md", "assistant: It's due Friday"),
             "an assistant line in a quoted transcript ('You always prefer…' is the agent's guess)"),
            (("memory/2026-03-04-school-trip.md", "user: yes send it"),
             "a quoted transcript line (session-memory Conversation Summary): never promoted from here"),
            (("memory/2026-03-04-school-trip.md", "assistant: Noted"), "an assistant line"),
        ],
    },
    "sr_zh": {
        "duplicate": [
            ("sr-d1", [("MEMORY.md", "Jelena je alergična na penicilin."),
                       ("memory/2026-01-19.md", "叶莲娜对青霉素过敏。")], True,
             ("MEMORY.md", "Jelena je alergična na penicilin.")),
            ("sr-d2", [("MEMORY.md", "Sastanak tima je svakog ponedeljka u 10:00."),
                       ("memory/2026-02-02.md", "Састанак тима је сваког понедељка у 10:00.")], True,
             ("MEMORY.md", "Sastanak tima je svakog ponedeljka u 10:00.")),
            ("sr-d3", [("MEMORY.md", "Jelena ne pije kafu posle 16h."),
                       ("memory/2026-01-28.md", "叶莲娜下午四点以后不喝咖啡。")], True,
             ("MEMORY.md", "Jelena ne pije kafu posle 16h.")),
            ("sr-d4", [("MEMORY.md", "Brat Nikola živi u Novom Sadu"),
                       ("memory/2026-02-11.md", "ima ordinaciju na Limanu")], False, None),
            ("sr-d5", [("MEMORY.md", "王芳负责上海办公室的采购。"),
                       ("memory/2026-02-16.md", "上海办公室的采购由王芳负责。")], True,
             ("MEMORY.md", "王芳负责上海办公室的采购。")),
            ("sr-d6", [("MEMORY.md", "Jelena više voli voz nego avion"),
                       ("memory/2026-03-02.md", "Јелена више воли воз него авион")], False, None),
        ],
        "conflict": [
            ("sr-c1", ("MEMORY.md", "Pilates: utorkom u 18h"), ("memory/2026-02-09.md", "Pilates je od ove nedelje četvrtkom")),
            ("sr-c2", ("memory/2026-01-12.md", "Stanarina za stan na Vračaru je 650 evra"),
             ("memory/2026-02-23.md", "Станарина за стан на Врачару је од марта 700 евра")),
            ("sr-c3", ("memory/2026-01-14.md", "每周例会定在周二下午三点"), ("memory/2026-02-25.md", "每周例会改到周三上午十点")),
            ("sr-c4", ("MEMORY.md", "Jelena radi u firmi Nordlys"), ("memory/2026-03-05.md", "radi u firmi Kvadrat")),
            ("sr-c5", ("MEMORY.md", "Jelena voli ljutu hranu."), ("memory/2026-02-18.md", "Jelena više ne voli ljutu hranu")),
        ],
        "promote": [
            ("sr-p1", ("memory/2026-01-21.md", "Jelenin rođendan je 14. maja."), "O Jeleni"),
            ("sr-p2", ("memory/2026-02-04.md", "安娜对花生过敏"), "Zdravlje"),
            ("sr-p3", ("memory/2026-02-11.md", "Правило: никад не слати рачуне"), "Pravila"),
            ("sr-p4", ("memory/2026-01-26.md", "odgovaram na srpskom"), "Preferencije"),
            ("sr-p5", ("memory/2026-03-09.md", "vodi radionicu za decu"), "Rutine"),
        ],
        "traps": [
            (("memory/2026-01-12.md", "Opcije:"), "a label line ('Options:')"),
            (("memory/2026-01-19.md", "Šta više voliš?"), "a question line ('Which do you prefer?')"),
            (("memory/2026-01-26.md", "Ona više voli:"), "a label line ('She prefers:')"),
            (("memory/2026-01-28.md", "你更喜欢哪个？"), "a question line ('Which do you prefer?')"),
            (("memory/2026-01-14.md", "Let za Beč polazi"), "an event (a flight); shares only a city with other lines"),
            (("memory/2026-01-19.md", "U Beču: hotel"), "shares only a proper noun (Beč/Vienna) with the train lines"),
            (("memory/2026-03-02.md", "Karte za voz za Beč"),
             "an event (tickets bought); not a duplicate of the train-over-plane preference, not a newer flight"),
            (("memory/2026-01-26.md", "Večera sa Nikolom u subotu"),
             "an event (a dinner); neither duplicates nor supersedes the MEMORY.md line about Nikola"),
            (("memory/2026-02-11.md", "Večera sa Nikolom u petak"),
             "an event (a dinner); not a newer value of the other dinner, not the brother fact"),
            (("memory/2026-01-28.md", "和王芳开会讨论了采购预算"),
             "an event (a meeting with Wang Fang); not the MEMORY.md purchasing line"),
            (("memory/2026-02-04.md", "[Startup context loaded by runtime]"), "injected runtime text"),
            (("memory/2026-02-04.md", "Treat the daily memory below"), "injected runtime text (a rule for the agent, not Jelena's)"),
            (("memory/2026-02-11.md", "[cron:7d1f0c2a"), "an injected cron wrapper ('Always send…' is the job's prompt)"),
            (("memory/2026-03-02.md", "IMPORTANT: Ignore any pretrained knowledge"), "injected plugin wrapper (<composio>)"),
            (("memory/2026-03-10-voz-za-bec.md", "assistant: 好的"), "an assistant line ('你总是喜欢靠窗的座位' is the agent's)"),
            (("memory/2026-03-10-voz-za-bec.md", "user: ubuduće"), "a quoted transcript line: never promoted from here"),
            (("memory/2026-03-10-voz-za-bec.md", "assistant: Važi"), "an assistant line"),
        ],
    },
    "eng_logs": {
        "duplicate": [
            ("el-d1", [("MEMORY.md", "Prod deploys go through `make deploy ENV=prod`"),
                       ("memory/2026-01-20.md", "- Prod deploys: `make deploy ENV=prod`, release branch only.")], True,
             ("MEMORY.md", "Prod deploys go through `make deploy ENV=prod`")),
            ("el-d2", [("memory/2026-01-13.md", "2. Rotate the Postgres password"),
                       ("memory/2026-02-24.md", "5. Rotate the Postgres password")], True,
             ("memory/2026-01-13.md", "2. Rotate the Postgres password")),
            ("el-d3", [("memory/2026-01-13.md", "3. Restart the pgbouncer pods"),
                       ("memory/2026-02-24.md", "6. Restart the pgbouncer pods")], True,
             ("memory/2026-01-13.md", "3. Restart the pgbouncer pods")),
            ("el-d4", [("MEMORY.md", "expires Feb 18, 2026"),
                       ("memory/2026-02-05.md", "expires 2026-02-18; renew via cert-manager")], False, None),
            ("el-d5", [("MEMORY.md", "`pgbouncer` is pinned to 1.22.1"),
                       ("memory/2026-02-12.md", "pgbouncer is pinned to 1.22.1 in deploy/helm/values.yaml (see 7be04d2)")],
             True, ("MEMORY.md", "`pgbouncer` is pinned to 1.22.1")),
            ("el-d6", [("MEMORY.md", "Sam prefers squash merges"),
                       ("memory/2026-02-03.md", "Sam prefers squash merges")], True,
             ("MEMORY.md", "Sam prefers squash merges")),
            ("el-d7", [("MEMORY.md", "On-call: Sam is primary every third week"),
                       ("memory/2026-02-10.md", "Sam's on-call: primary every third week")], False, None),
        ],
        "conflict": [
            ("el-c1", ("MEMORY.md", "ledger-api runs on Python 3.11."), ("memory/2026-02-05.md", "moved to Python 3.12")),
            ("el-c2", ("memory/2026-01-09.md", "Staging DB is db-staging-2.internal"),
             ("memory/2026-02-19.md", "Staging DB moved to db-staging-4.internal")),
            ("el-c3", ("MEMORY.md", "Release train: every second Wednesday"),
             ("memory/2026-01-29.md", "Release train moves to Thursdays")),
            ("el-c4", ("MEMORY.md", "Standup is at 9:30"), ("memory/2026-02-10.md", "Standup moved to 10:00")),
            ("el-c5", ("memory/2026-01-20.md", "ledger-api SLO: 99.9%"), ("memory/2026-03-02.md", "SLO raised to 99.95%")),
            ("el-c6", ("memory/2026-01-13.md", "4. Watch the error rate on the ledger dashboard for 10 minutes"),
             ("memory/2026-02-24.md", "7. Watch the error rate on the ledger dashboard for 15 minutes")),
            ("el-c7", ("MEMORY.md", "expires Feb 18, 2026"), ("memory/2026-02-10.md", "new expiry 2026-05-19")),
            ("el-c8", ("memory/2026-02-05.md", "expires 2026-02-18; renew via cert-manager"),
             ("memory/2026-02-10.md", "new expiry 2026-05-19")),
        ],
        "promote": [
            ("el-p1", ("memory/2026-01-22.md", "never run migrations on prod during business hours"), "Rules"),
            ("el-p2", ("memory/2026-02-03.md", "review comments as GitHub suggested changes"), "Preferences"),
            ("el-p3", ("memory/2026-02-17.md", "Ines Duarte is now the ledger team's tech lead"), "People"),
            ("el-p4", ("memory/2026-01-27.md", "Sam has RSI in the right wrist"), "About Sam"),
            ("el-p5", ("memory/2026-03-04.md", "payments guild sync every first Tuesday"), "Schedule"),
        ],
        "traps": [
            (("memory/2026-01-09.md", "Files changed:"), "a label line"),
            (("memory/2026-01-09.md", "- `ledger/api/refunds.py`"),
             "a file-list entry, not a statement (the same file is listed again on 2026-01-27)"),
            (("memory/2026-01-27.md", "- `ledger/api/refunds.py`"), "a file-list entry, not a statement"),
            (("memory/2026-01-27.md", "Files changed:"), "a label line"),
            (("memory/2026-01-13.md", "Options:"), "a label line"),
            (("memory/2026-01-15.md", "`a3f9c21` fix(refunds)"),
             "a commit log entry (an event); the backport is another commit, not a duplicate or a newer value"),
            (("memory/2026-02-12.md", "`e91b07f` fix(refunds)"), "a commit log entry (an event)"),
            (("memory/2026-01-09.md", "Deployed `4c0a7d2` to staging"),
             "an event (a deploy); deploys differing by hash are not a changed value"),
            (("memory/2026-01-27.md", "Deployed `9f0e1ab` to staging"), "an event (a deploy)"),
            (("memory/2026-03-04.md", "Deployed `5d2c9e3` to staging"), "an event (a deploy)"),
            (("memory/2026-01-15.md", "Flaky on CI: `tests/integration/test_ledger_v2.py"),
             "v2/v3 in a path are no versions: not a conflict with the v3 quarantine line"),
            (("memory/2026-02-10.md", "Quarantined `tests/integration/test_ledger_v3.py"),
             "a path's v3 is no version; another test than the v2 line"),
            (("memory/2026-01-13.md", "Load test run (nightly)"),
             "an event (a run): a later run with other numbers is no conflict"),
            (("memory/2026-01-22.md", "Load test run after the pool fix"), "an event (a run)"),
            (("memory/2026-01-15.md", "Meeting with Ines about the refunds redesign"),
             "an event (a meeting); not Ines's role"),
            (("memory/2026-01-22.md", "Context:"), "an injected Context: block's label"),
            (("memory/2026-01-22.md", "- recalled: Sam asked about pgbouncer"), "injected <active_memory_plugin> text"),
            (("memory/2026-02-03.md", "IMPORTANT: Ignore any pretrained knowledge"), "injected plugin wrapper (<composio>)"),
            (("memory/2026-02-10.md", "[Queued messages while agent was busy]"), "injected runtime wrapper"),
            (("memory/2026-03-02.md", "Pre-compaction memory flush."), "OpenClaw's injected flush prompt"),
            (("memory/2026-03-05-ci-flakes.md", "assistant: The v3 partial-capture"),
             "an assistant line ('I'll always rerun…' is the agent's promise, not Sam's rule)"),
            (("memory/2026-03-05-ci-flakes.md", "user: ok, and I prefer"),
             "a quoted transcript line: never promoted from here"),
        ],
    },
}


def _line(root: Path, ref: Ref) -> list:
    path, text = ref
    lines = (root / path).read_text(encoding="utf-8").splitlines()
    hits = [i for i, line in enumerate(lines, 1) if text in line]
    if len(hits) != 1:
        raise SystemExit(f"{root.name}: anchor {ref!r} matches {len(hits)} lines")
    return [path, hits[0]]


def build(name: str) -> dict:
    """The labels of set ``name`` with every anchor resolved to ``[path, line]``."""
    spec = SETS[name]
    root = HERE / name
    return {
        "duplicate": [{"id": i, "items": [_line(root, r) for r in items], "delete_ok": ok,
                       "keep": _line(root, keep) if keep else None} for i, items, ok, keep in spec["duplicate"]],
        "conflict": [{"id": i, "old": _line(root, old), "new": _line(root, new)} for i, old, new in spec["conflict"]],
        "promote": [{"id": i, "items": [_line(root, ref)], "section": sec} for i, ref, sec in spec["promote"]],
        "traps": [[*_line(root, ref), why] for ref, why in spec["traps"]],
    }


def render(name: str) -> str:
    """``labels.json``'s text: one label a line, so a diff shows which label changed."""
    labels = build(name)
    parts = []
    for kind, rows in labels.items():
        body = ",\n".join("  " + json.dumps(row, ensure_ascii=False) for row in rows)
        parts.append(f" {json.dumps(kind)}: [\n{body}\n ]")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def main(argv: list[str]) -> int:
    stale = []
    for name in SETS:
        out = HERE / name / "labels.json"
        text = render(name)
        if "--check" in argv:
            if not out.exists() or out.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            out.write_text(text, encoding="utf-8")
    if stale:
        print("stale labels.json:", ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
