"""Review precision on real-shaped notes: each rule from tests/data/review_labels/SPEC.md and issue 24 ("a single
cue word is no preference", "boilerplate takes part in nothing", "events neither conflict nor duplicate", "a
promotion goes to the section its topic names"), on small workspaces written for the rule, with its trap."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.review.detect import said_of_someone, split_sentences
from engine.review.model import Finding
from engine.review.run import run_review
from tests.helpers import review_config

USER = "# USER.md\n\n- Name: Kai\n"


def _review(tmp_path: Path, memory: str, notes: dict[str, str], user: str = USER) -> list[Finding]:
    config = review_config(tmp_path, memory, notes)
    (config.workspace / "USER.md").write_text(user, encoding="utf-8")
    return list(run_review(config, show_all=True).findings)


def _cited(findings: list[Finding], kind: str) -> set[str]:
    return {i.text for f in findings if f.kind == kind for i in f.items}


@pytest.mark.parametrize(("text", "said"), [
    ("Kai prefers async review over calls.", True),
    ("My partner really likes the window seat.", True),
    ("Ines said she prefers tea after lunch.", True),
    ("Nia Castell wants every invite to carry a video link.", True),
    ("Deploy notes prefers the old runner.", False),  # no one's taste: a noun before the verb
    ("Prefers to and from the server.", False),  # a cue word opening filler
    ("Before the migration prefers plan the index.", False),  # a function word is no subject
    ("The retry loop in the config loader prefers IPv4 over IPv6.", False),  # software, not a person
    ("Latency budget was the thing everyone prefers.", False),  # nothing preferred after the verb
    ("User prefers dark mode in every tool.", True),
    ("Team prefers deadline for user will model.", False),  # a bare role is no one in particular
    ("We for database email and user prefers move backup.", False),
])
def test_a_preference_verb_needs_someone_as_its_subject(text: str, said: bool) -> None:
    names = {"Kai", "Ines", "Nia", "Castell"}  # the names the notes use
    assert said_of_someone(text, names.__contains__) is said


def test_a_capitalised_word_before_the_verb_must_be_a_name_the_notes_use(tmp_path: Path) -> None:
    notes = {
        "memory/2026-03-02.md": "# 2026-03-02\n\n- Kai prefers dark mode in every editor.\n"
                                "- Model prefers quantised weights on the small GPU nodes.\n"
                                "- Draft prefers the short summary in the report.\n",
    }
    promoted = _cited(_review(tmp_path, "# MEMORY.md\n\n## Preferences\n- Coffee: flat white.\n", notes), "promote")
    assert promoted == {"- Kai prefers dark mode in every editor."}


def test_a_sentence_copied_into_many_files_is_boilerplate_not_a_fact(tmp_path: Path) -> None:
    template = "- Kai likes the dark theme. Kai wants every report in Markdown."
    notes = {f"memory/2026-03-{day:02d}.md": f"# 2026-03-{day:02d}\n\n{template}\n- Worked on ticket OPS-{day}.\n"
             for day in range(2, 8)}  # six notes, the same generated line in each
    notes["memory/2026-03-20.md"] = "# 2026-03-20\n\n- Kai prefers tabs over spaces in Go code.\n"
    notes["memory/2026-03-24.md"] = "# 2026-03-24\n\n- Kai still prefers tabs over spaces in Go code.\n"
    findings = _review(tmp_path, "# MEMORY.md\n\n## Preferences\n- Editor: Neovim.\n", notes)
    assert template not in _cited(findings, "promote") | _cited(findings, "duplicate")
    # the trap beside it: a fact said again in two notes is still a duplicate (and durable)
    assert "- Kai prefers tabs over spaces in Go code." in _cited(findings, "duplicate")


def test_split_sentences_reads_latin_and_cjk_stops() -> None:
    assert split_sentences("A fact. Another one!  用户喜欢深色主题。备份每天运行。") == [
        "a fact.", "another one!", "用户喜欢深色主题。", "备份每天运行。"]


MEMORY_BY_TOPIC = """# MEMORY.md

## Projects
- The office windows project: spring refit of the office windows, Kai leads it.
- Office windows vendor: Glazewell, spring schedule.

## Health

## Lessons
- Lesson: tag releases before the announcement.

## Preferences
- Editor: Neovim.
"""


def test_a_promotion_goes_to_the_section_its_topic_or_label_names(tmp_path: Path) -> None:
    notes = {
        "memory/2026-03-02.md": "# 2026-03-02\n\n"
                                "- Kai has asthma; keep the office windows closed in spring.\n"
                                "- Lesson learned: never restart every worker at once during a backlog.\n",
    }
    findings = [f for f in _review(tmp_path, MEMORY_BY_TOPIC, notes) if f.kind == "promote"]
    where = {f.items[0].text: f.suggestion.rsplit("§ ", 1)[1] for f in findings}
    # Health is empty and "Projects" shares the most words: the topic decides, not the words
    assert where["- Kai has asthma; keep the office windows closed in spring."] == "Health"
    assert where["- Lesson learned: never restart every worker at once during a backlog."] == "Lessons"


def test_serbian_headings_name_their_topics(tmp_path: Path) -> None:
    memory = "# MEMORY.md\n\n## Ljudi\n- Goran: komšija.\n\n## Zdravlje\n\n## Pravila\n- Bez poziva posle 21h.\n"
    notes = {"memory/2026-03-02.md": "# 2026-03-02\n\n- Kai is allergic to penicillin.\n"
                                     "- Ruth's birthday is 9 April.\n"}
    findings = [f for f in _review(tmp_path, memory, notes) if f.kind == "promote"]
    where = {f.items[0].text: f.suggestion.rsplit("§ ", 1)[1] for f in findings}
    assert where == {"- Kai is allergic to penicillin.": "Zdravlje", "- Ruth's birthday is 9 April.": "Ljudi"}


def test_in_a_team_log_no_colleague_is_taken_for_the_user(tmp_path: Path) -> None:
    people = ("Jonas", "Priya", "Diego", "Sanna", "Wei")
    lines = [f"- {p} reviewed the retry loop for ticket {i}." for i in range(4) for p in people]
    notes = {"memory/2026-03-02.md": "# 2026-03-02\n\n" + "\n".join(lines[:10]) + "\n",
             "memory/2026-03-03.md": "# 2026-03-03\n\n" + "\n".join(lines[10:]) + "\n"
                                     "- Jonas prefers tabs over spaces in every repo.\n"}
    findings = _review(tmp_path, "# MEMORY.md\n\n## Preferences\n- Editor: Neovim.\n", notes, user="# USER.md\n")
    assert "- Jonas prefers tabs over spaces in every repo." not in _cited(findings, "promote")


def test_two_measured_runs_are_events_not_a_conflict(tmp_path: Path) -> None:
    notes = {
        "memory/2026-03-02.md": "# 2026-03-02\n\n- Load test run on staging: p99 210 ms at 500 rps.\n",
        "memory/2026-03-09.md": "# 2026-03-09\n\n- Load test run on staging: p99 174 ms at 500 rps.\n",
        "memory/2026-03-10.md": "# 2026-03-10\n\n- Benchmark of the ingest path: 1200 rps at 12 workers.\n",
        "memory/2026-03-12.md": "# 2026-03-12\n\n- Benchmark of the ingest path: 1450 rps at 16 workers.\n",
    }
    findings = _review(tmp_path, "# MEMORY.md\n\n## Infra\n- Pool size: 64.\n", notes)
    assert [f for f in findings if f.kind in ("conflict", "duplicate")] == []


def test_a_standing_value_still_conflicts(tmp_path: Path) -> None:  # the trap beside it: not every number is a run
    notes = {"memory/2026-03-02.md": "# 2026-03-02\n\n- The ingest pool size is 64 connections.\n",
             "memory/2026-03-09.md": "# 2026-03-09\n\n- The ingest pool size is now 96 connections.\n"}
    findings = _review(tmp_path, "# MEMORY.md\n\n## Infra\n- Editor: Neovim.\n", notes)
    assert [f.kind for f in findings if f.kind in ("conflict", "duplicate")] == ["conflict"]


def test_a_change_with_its_reason_is_a_change_not_an_event(tmp_path: Path) -> None:
    # SPEC: a newer statement of the same attribute with another value is a conflict; the reason it gives
    # ("because the client asked") does not make the change an event
    memory = "# MEMORY.md\n\n## Work\n- Retro is at 15:00.\n- Payroll export runs on Mondays.\n"
    notes = {"memory/2026-03-09.md": "# 2026-03-09\n\n- Retro moved to 16:30 because the client asked.\n"
                                     "- Payroll export moved to Tuesdays; the bank changed its cut-off.\n",
             "memory/2026-03-10.md": "# 2026-03-10\n\n- Lunch with the client at 16:30, they asked about retro.\n"}
    findings = _review(tmp_path, memory, notes)
    conflicts = {tuple(i.text for i in f.items) for f in findings if f.kind == "conflict"}
    assert ("- Retro is at 15:00.", "- Retro moved to 16:30 because the client asked.") in conflicts
    assert ("- Payroll export runs on Mondays.",
            "- Payroll export moved to Tuesdays; the bank changed its cut-off.") in conflicts
    assert "- Lunch with the client at 16:30, they asked about retro." not in _cited(findings, "conflict")


def test_a_role_handed_over_by_name_supersedes_its_holder(tmp_path: Path) -> None:
    memory = "# MEMORY.md\n\n## Team\n- Release captain for the spring train: Bruno Salas.\n"
    notes = {"memory/2026-03-09.md": "# 2026-03-09\n\n- Lea takes over from Bruno as release captain for the "
                                     "spring train.\n"
                                     "- Bruno reviewed the release notes with Lea.\n"}
    findings = [f for f in _review(tmp_path, memory, notes) if f.kind == "conflict"]
    assert [[i.text for i in f.items] for f in findings] == [[
        "- Release captain for the spring train: Bruno Salas.",
        "- Lea takes over from Bruno as release captain for the spring train."]]
    assert "handed over: Bruno → Lea" in findings[0].reason


def test_an_incident_role_is_no_event(tmp_path: Path) -> None:
    memory = "# MEMORY.md\n\n## Team\n- Incident commander this quarter: Bruno Salas.\n"
    notes = {"memory/2026-03-09.md": "# 2026-03-09\n\n- Lea takes over from Bruno as incident commander.\n",
             "memory/2026-03-10.md": "# 2026-03-10\n\n- Incident on the payments API: 40 minutes of 502s.\n"}
    findings = _review(tmp_path, memory, notes)
    assert _cited(findings, "conflict") == {"- Incident commander this quarter: Bruno Salas.",
                                            "- Lea takes over from Bruno as incident commander."}


def test_a_chinese_reversal_reads_the_same_subject(tmp_path: Path) -> None:
    # SPEC: a reversal ("drinks oat milk" → "no longer takes oat milk") is a conflict, in Chinese too: the
    # negation and "now" are no words of the subject, as "not" and "now" are none in English
    memory = "# MEMORY.md\n\n## 习惯\n- 王芳每天晚上喝咖啡。\n"
    notes = {"memory/2026-03-09.md": "# 2026-03-09\n\n- 王芳现在晚上不喝咖啡了。\n",
             "memory/2026-03-10.md": "# 2026-03-10\n\n- 王芳晚上在咖啡馆见了客户。\n"}
    findings = [f for f in _review(tmp_path, memory, notes) if f.kind == "conflict"]
    assert [[i.text for i in f.items] for f in findings] == [["- 王芳每天晚上喝咖啡。", "- 王芳现在晚上不喝咖啡了。"]]
