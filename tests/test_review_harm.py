"""Review findings that do no harm: a restatement that adds a detail is no conflict, a metadata line and a
numbered instance take part in nothing, a procedure's step is never offered for deletion."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from engine.config import load_config
from engine.review.model import Finding
from engine.review.precision import precision
from engine.review.run import run_review
from engine.review.statements import FRAGMENT, LABEL, OWN, STEP, metadata_line, parse_statements
from engine.review.text import takes_effect, value_units
from tests.helpers import review_config


def _review(tmp_path: Path, memory: str, notes: dict[str, str]) -> list[Finding]:
    return run_review(review_config(tmp_path, memory, notes), show_all=True, full=True).findings


def _groups(findings: list[Finding], kind: str) -> list[set[str]]:
    """The citations of each finding of a kind, one set per finding."""
    return [{i.citation for i in f.items} for f in findings if f.kind == kind]


def _cited(findings: list[Finding], kind: str | None = None) -> set[str]:
    return {i.citation for f in findings if kind in (None, f.kind) for i in f.items}


def test_a_restatement_that_adds_a_detail_does_not_supersede_the_memory_line(tmp_path: Path) -> None:
    memory = "# MEMORY\n\n## Setup\n- Dana's work laptop is a Framework 13 running Fedora 40.\n"
    notes = {"memory/2026-03-02.md": "# 2026-03-02\n\n- Dana's laptop: Framework 13 running Fedora 40, now with 32 GB RAM.\n"
                                     "- Work laptop: Framework 13, Fedora 40, upgraded to 32 GB RAM.\n",
             "memory/2026-03-09.md": "# 2026-03-09\n\n- Dana's work laptop, a Framework 13, now runs Fedora 41.\n"}
    found = _review(tmp_path, memory, notes)
    conflicts = [f for f in found if f.kind == "conflict"]
    # The RAM upgrade is a new detail (32 counts GB, which the MEMORY.md line does not state): it supersedes
    # nothing (the 2026-03-02 line is never the current one of a conflict).
    assert all(f.items[f.current or 0].citation != "memory/2026-03-02.md#L3" for f in conflicts)
    # A newer value of the same attribute (Fedora 40 → 41) still is one, of every line that says Fedora 40.
    assert len(conflicts) == 1 and conflicts[0].items[conflicts[0].current or 0].citation == "memory/2026-03-09.md#L3"
    assert "MEMORY.md#L4" in _cited(conflicts)
    assert "different number: 13, 40 → 13, 41" in conflicts[0].reason


def test_a_restatement_that_says_less_is_no_conflict_but_a_stated_change_of_name_is(tmp_path: Path) -> None:
    memory = "# MEMORY\n\n## People\n- Lucas's manager is Sanna (Head of Engineering).\n"
    notes = {"memory/2026-04-04.md": "# 2026-04-04\n\n- Sanna is Lucas's manager.\n",
             "memory/2026-04-20.md": "# 2026-04-20\n\n- The team offsite will be in Berlin.\n",
             "memory/2026-05-02.md": "# 2026-05-02\n\n- The team offsite moved to Prague instead of Berlin.\n"}
    found = _review(tmp_path, memory, notes)
    conflicts = [[i.citation for i in f.items] for f in found if f.kind == "conflict"]
    assert ["MEMORY.md#L4", "memory/2026-04-04.md#L3"] not in conflicts
    assert ["memory/2026-04-20.md#L3", "memory/2026-05-02.md#L3"] in conflicts  # Berlin → Prague, said so


def test_the_user_s_name_opening_a_restatement_is_who_said_it_not_a_new_name(demo_workspace: Path,
                                                                             tmp_path: Path) -> None:
    # the demo's "Mara: squash merges for feature PRs from now on; …" restates MEMORY.md's decision of that day:
    # the user's name (the one most dated lines start with) says who decided, it is no name that changed
    config = load_config(workspace=demo_workspace, home=tmp_path / "home", config_path=tmp_path / "none.toml")
    found = run_review(config, show_all=True, full=True).findings
    pairs = _groups(found, "conflict")
    assert {"MEMORY.md#L67", "memory/2026-11-20.md#L14"} not in pairs
    assert {"memory/2026-10-23.md#L14", "memory/2026-11-27.md#L35"} in pairs  # Lena's lessons still move


def test_a_fact_in_both_user_md_and_memory_md_is_kept_in_user_md(tmp_path: Path) -> None:
    memory = "# MEMORY\n\n## Context\n- Works from home on Mondays and Fridays; the office is in Novi Sad.\n"
    notes = {"USER.md": "# USER\n\n## Work\n- Works from home on Mondays and Fridays, office in Novi Sad.\n",
             "memory/2026-04-01.md": "# 2026-04-01\n\n- Booked the dentist for Tuesday.\n"}
    found = [f for f in _review(tmp_path, memory, notes) if f.kind == "duplicate"]
    assert len(found) == 1
    assert found[0].items[0].citation == "USER.md#L4"  # the file for facts about the person keeps the fact
    assert found[0].suggestion.startswith("keep USER.md#L4")


def test_an_event_under_a_dated_heading_is_no_copy_of_an_event_on_another_day(tmp_path: Path) -> None:
    notes = {"memory/2026-02-18.md": "# 2026-02-18\n\n- All committed and pushed to GitHub.\n"}
    def dups(heading: str) -> list[Finding]:
        memory = f"# MEMORY\n\n## {heading}\n- About 25 commits pushed to GitHub.\n"
        return [f for f in _review(tmp_path / heading[:6].strip(), memory, notes) if f.kind == "duplicate"]
    assert not dups("Feb 13 Sprint Summary")  # the push of 13 Feb is not the push of 18 Feb
    assert dups("Feb 18 Sprint Summary")  # the same day's push, said twice


def test_value_units_name_what_each_value_counts() -> None:
    units = value_units("Work laptop: Fedora 40 + 32 GB RAM, upgraded last week.")
    assert units[("number", "32")] == {"gb"} and units[("number", "40")] == frozenset()
    assert value_units("Standup moved from 9:30 to 10:00.")[("time", "10:00")] == frozenset()


def test_metadata_lines_of_a_session_note_take_part_in_nothing(tmp_path: Path) -> None:
    header = ("# Session: {day} 08:15:23 UTC\n\n- **Session Key**: agent:main:main\n- **Session ID**: {sid}\n"
              "- **Source**: telegram\n\n## Conversation Summary\n\n- Talked about {topic}.\n")
    notes = {f"memory/2026-0{m}-1{m}-{topic}.md": header.format(day=f"2026-0{m}-1{m}", sid=f"{m}a7c9e2b41f",
                                                                  topic=topic)
             for m, topic in ((1, "trip"), (2, "cv"), (3, "ci"))}
    found = _review(tmp_path, "# MEMORY\n\n## Notes\n- Nothing yet.\n", notes)
    assert not any(c.endswith(("#L3", "#L4", "#L5")) for c in _cited(found))
    got = {s.clean: s.origin for s in parse_statements("memory/2026-01-11-trip.md", notes[
        "memory/2026-01-11-trip.md"])}
    assert got["Session Key: agent:main:main"] == LABEL and got["Source: telegram"] == LABEL
    # In MEMORY.md/USER.md a bold label and its value are the fact itself.
    user = parse_statements("USER.md", "# USER\n\n- **Timezone:** Europe/Belgrade\n")
    assert user[0].origin == OWN
    assert metadata_line("- **Source**: telegram") and metadata_line("**Status:** done")
    assert not metadata_line("- **Decision**: we move billing to Postgres in May.")
    assert not metadata_line("- Source: telegram")


RUNBOOK = ("# {day}\n\n## Runbook: rotate DB credentials ({v})\n\n1. {first}\n"
           "2. Rotate the database password with `scripts/rotate_db.sh ledger-prod`.\n"
           "3. Restart the workers: `kubectl -n ledger rollout restart deploy/worker`.\n"
           "4. Watch the error rate on the dashboard for {minutes} minutes.\n\n- Lunch with Theo.\n")


def test_a_procedure_s_step_is_never_offered_for_deletion(tmp_path: Path) -> None:
    notes = {"memory/2026-01-17.md": RUNBOOK.format(day="2026-01-17", v="draft", minutes=10,
                                                    first="Announce the rotation in the on-call channel."),
             "memory/2026-03-26.md": RUNBOOK.format(day="2026-03-26", v="v2", minutes=15,
                                                    first="Check that no migration is running.")}
    statements = parse_statements("memory/2026-01-17.md", notes["memory/2026-01-17.md"])
    assert [s.origin for s in statements] == [STEP, STEP, STEP, STEP, OWN]
    found = _review(tmp_path, "# MEMORY\n\n## Notes\n- Nothing yet.\n", notes)
    dups = [f for f in found if f.kind == "duplicate"]
    assert dups and all(f.deletable == () and f.evidence == "duplicate:step" for f in dups)
    assert all("leave" in f.suggestion and "merge" not in f.suggestion and "delete" not in f.suggestion for f in dups)
    assert all(f.score == precision("duplicate:step") for f in dups)  # its group's measured precision
    # A revised step is still a change of the procedure (10 → 15 minutes).
    assert any(f.kind == "conflict" and "10 → 15" in f.reason for f in found)
    assert not [f for f in found if f.kind == "promote"]


def test_one_numbered_item_or_a_list_broken_by_a_bullet_is_no_procedure() -> None:
    text = "# 2026-01-02\n\n1. Dana prefers tea.\n- Lunch with Theo.\n2. Something else.\n"
    assert {s.origin for s in parse_statements("memory/2026-01-02.md", text)} == {OWN}


def test_numbered_entries_of_a_series_neither_conflict_nor_duplicate(tmp_path: Path) -> None:
    notes = {f"memory/2026-0{i}-0{i}.md": f"# 2026-0{i}-0{i}\n\n- Sprint {40 + i} planning: {20 + 3 * i} points, "
                                          "the settlement epic first.\n" for i in range(1, 6)}
    found = _review(tmp_path, "# MEMORY\n\n## Notes\n- Nothing yet.\n", notes)
    assert not _cited(found)


def test_an_item_that_goes_on_its_label_s_sentence_is_a_fragment_and_never_promoted(tmp_path: Path) -> None:
    note = ("# 2026-02-13\n\n## Travel\n\nHe prefers:\n- window seats rather than the aisle on short flights\n"
            "- an early train this time\n\nDecisions:\n- Billing moves to Postgres in May.\n\nFiles changed:\n"
            "- `api/refunds.py`\n")
    got = {s.clean: s.origin for s in parse_statements("memory/2026-02-13.md", note)}
    assert got["window seats rather than the aisle on short flights"] == FRAGMENT
    assert got["an early train this time"] == FRAGMENT and got["api/refunds.py"] == FRAGMENT
    assert got["Billing moves to Postgres in May."] == OWN  # a whole sentence under its label
    zh = parse_statements("memory/2026-02-14.md", "# 2026-02-14\n\nNotes:\n- 玛拉从九月起吃素，不吃肉也不吃鱼。\n")
    assert zh[-1].origin == OWN  # a script without case starts no fragment
    found = _review(tmp_path, "# MEMORY\n\n## Preferences\n- Tea, not coffee.\n", {"memory/2026-02-13.md": note})
    assert "memory/2026-02-13.md#L6" not in _cited(found, "promote")


def test_a_numbered_entry_is_a_label_that_numbers_an_instance_not_a_year() -> None:
    from engine.review.detect import numbered_entry

    assert numbered_entry("Sprint 40 planning: 39 points, the settlement epic first.")
    assert numbered_entry("Week 12 review: on track.")
    assert not numbered_entry("Since 2019: vegetarian, no fish either.")
    assert not numbered_entry("Standup at 9:30: Dana was late.")
    assert not numbered_entry("Release 2.4: shipped to staging.")


def test_a_change_announced_for_later_is_read_against_the_day_it_was_said() -> None:
    said = date(2026, 4, 21)  # a Tuesday
    assert takes_effect("Priya accepted the offer: from next month Priya works at Tillwise.", said) == \
        date(2026, 5, 1)
    assert takes_effect("Starting next week standup is at 10:00.", said) == date(2026, 4, 27)
    assert takes_effect("Rent goes up to 900 EUR from July.", said) == date(2026, 7, 1)
    assert takes_effect("As of 1 June 2026 the SLO is 99.95%.", said) == date(2026, 6, 1)
    assert takes_effect("Rent goes up to 900 EUR a month from April.", said) is None  # already in effect
    assert takes_effect("Vegetarian from March on.", said) is None  # since March
    assert takes_effect("The offsite moved from Berlin to Prague.", said) is None


def test_a_supersede_that_takes_effect_later_is_held_back_until_then(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    memory = "# MEMORY\n\n## Work\n- Priya works at Bluefin Labs as Data Engineer.\n"
    notes = {"memory/2026-04-21.md": "# 2026-04-21\n\n- Priya accepted the offer: from next month Priya works at "
                                     "Tillwise as Senior Backend Engineer.\n"}
    monkeypatch.setenv("MEMDECK_TODAY", "2026-04-22")
    early = [f for f in _review(tmp_path / "a", memory, notes) if f.kind == "conflict"]
    assert len(early) == 1 and early[0].evidence.endswith(":later") and not early[0].confident
    assert "takes effect on 2026-05-01" in early[0].reason and "on 2026-05-01 or later" in early[0].suggestion
    monkeypatch.setenv("MEMDECK_TODAY", "2026-05-02")
    late = [f for f in _review(tmp_path / "b", memory, notes) if f.kind == "conflict"]
    assert len(late) == 1 and not late[0].evidence.endswith(":later")
    assert late[0].score == pytest.approx(precision(late[0].evidence), abs=1e-3)  # its group's own measure


def test_a_year_after_a_version_word_or_a_product_name_is_a_version() -> None:
    from engine.review.text import features

    assert features("Na laptopu je Trados Studio 2022.").values["version"] == frozenset({"2022"})
    assert features("Trados ažuriran na verziju 2024.").values["version"] == frozenset({"2024"})
    # a year alone, after a month or at a sentence's start is a year (no value a conflict compares)
    assert "version" not in features("In 2022 we moved to Novi Sad.").values
    assert "version" not in features("Since March 2022 he runs every day.").values


def test_a_product_year_updated_is_a_conflict(tmp_path: Path) -> None:
    notes = {"memory/2026-01-07.md": "# 2026-01-07\n\n- Na laptopu je Trados Studio 2022.\n",
             "memory/2026-03-03.md": "# 2026-03-03\n\n- Trados na laptopu ažuriran na verziju 2024, licenca prebačena.\n"}
    conflicts = [f for f in _review(tmp_path, "# MEMORY\n", notes) if f.kind == "conflict"]
    assert len(conflicts) == 1 and conflicts[0].items[conflicts[0].current or 0].citation == "memory/2026-03-03.md#L3"


def test_a_thing_named_first_is_no_owner_and_an_aside_is_no_subject(tmp_path: Path) -> None:
    # "Kitchen" starts the line but the notes write "kitchen" too: a thing, not a person whose quote it is;
    # "(worktops went up)" says why the quote changed, not what it is about.
    notes = {"memory/2026-01-07.md": "# 2026-01-07\n\n- Kitchen refit quote from Oakbeam: £14,200 including fitting.\n",
             "memory/2026-02-18.md": "# 2026-02-18\n\n- Oakbeam revised the kitchen refit quote to £15,650 (worktops went up).\n"}
    conflicts = [f for f in _review(tmp_path, "# MEMORY\n", notes) if f.kind == "conflict"]
    assert len(conflicts) == 1 and "14200 → 15650" in conflicts[0].reason
    # a dash that carries the statement itself is no aside: the reversal is still found
    notes = {"memory/2026-02-18.md": "# 2026-02-18\n\n- Owen's eating meat again — he's no longer vegetarian as of this month.\n"}
    found = _review(tmp_path / "b", "# MEMORY\n\n## People\n- Owen is vegetarian.\n", notes)
    assert any(f.kind == "conflict" and "MEMORY.md#L4" in _cited([f]) for f in found)


def test_quoted_titles_and_word_ids_are_no_names_counts_or_changes() -> None:
    from engine.review.text import features

    f = features('Click "Create New Workspace"')
    assert "name" not in f.values and not f.change and "workspac" in f.words
    assert "number" not in features('All songs from the "Video 2 Spring Farm Porch" workspace').values
    slug = features("Slug: forge-staff-engineer-release-captain-b9bf88f1")
    assert slug.values["ref"] == frozenset({"forge-staff-engineer-release-captain-b9bf88f1"}) and slug.words == ("slug",)
    # a short model name and an ISO date keep what they were
    assert features("Standup on 2026-03-04").values["date"] == frozenset({"2026-03-04"})
    assert "ref" not in features("gpt-4o-mini is the default").values


def test_a_ui_walkthrough_and_a_reading_at_a_moment_conflict_with_nothing(tmp_path: Path) -> None:
    notes = {"memory/2026-03-06.md": "# 2026-03-06\n\n- Workspace: `/home/b/.openclaw/workspace`\n"
                                     "- **2,710 credits** as of ~7pm MDT\n",
             "memory/2026-03-20.md": "# 2026-03-20\n\n## Flow\n- Click \"Create New Workspace\"\n"
                                     "- Credits starting: 2670 → now 2600 (80 credits used)\n"
                                     "Instead of managing individual songs and playlists, the new workspace view allows:\n"}
    found = _review(tmp_path, "# MEMORY\n", notes)
    assert not [f for f in found if f.kind == "conflict"]
    assert "memory/2026-03-20.md#L6" not in _cited(found, "promote")  # a line ending in a colon introduces a list


def test_a_promotion_goes_to_no_section_that_only_shares_its_verbs(tmp_path: Path) -> None:
    memory = ("# MEMORY\n\n## GitHub Account Created\n- **Next:** generate a token and run the login to enable pushes\n")
    notes = {"memory/2026-03-18.md": "# 2026-03-18\n\n- Always enable the Instrumental toggle in Suno before generating\n"}
    promos = [f for f in _review(tmp_path, memory, notes) if f.kind == "promote"]
    assert promos and all("GitHub" not in f.suggestion for f in promos)


def test_a_change_log_entry_or_a_part_label_is_not_promoted(tmp_path: Path) -> None:
    notes = {"memory/2026-02-09.md": "# 2026-02-09\n\n"
             "- **Backup System Hardened:** the backup job must always verify the archive now\n"
             "- **Added spawn rules section:** always stagger spawns by 30s\n"
             "- **Workaround:** Always pass the target parameter\n"
             "- ⏰ **时间**：每天早上 8:00\n"
             "- 把月报改成日报，每天早8点自动运行\n"
             "- Always keep the fixes small; see 3f6c2a9e for the pattern\n"
             "- Always answer in English unless Mara writes in Serbian.\n"}
    promoted = _cited(_review(tmp_path, "# MEMORY\n", notes), "promote")
    assert promoted == {"memory/2026-02-09.md#L9"}


def test_a_bold_label_line_is_a_heading_and_a_bold_rule_is_a_rule() -> None:
    text = "# 2026-02-10\n\n**规则2: 阶段性汇总**\n- 每次改动后汇总\n- **ALWAYS use `message.send(channel=\"slack\")`**\n"
    origins = {s.clean: s.origin for s in parse_statements("memory/2026-02-10.md", text)}
    assert origins["规则2: 阶段性汇总"] == LABEL
    assert [o for c, o in origins.items() if c.startswith("ALWAYS")] == [OWN]


def test_a_label_word_the_newer_line_says_in_lower_case_is_no_other_name(tmp_path: Path) -> None:
    memory = "# MEMORY\n\n## Status\n- **Voice**: Working correctly with proper timing\n"
    notes = {"memory/2026-02-12.md": "# 2026-02-12\n\n- Leeloo voice now working correctly\n"}
    assert not [f for f in _review(tmp_path, memory, notes) if f.kind == "conflict"]


def test_a_list_item_records_what_it_is_an_item_of() -> None:
    text = ("# 2026-04-02\n\nRevenue streams ready:\n- Consulting\n- Job search\n  - LinkedIn refresh\n\n"
            "## Next\n- Ship the beta\n")
    parents = {s.clean: s.parent for s in parse_statements("memory/2026-04-02.md", text)}
    assert parents["Consulting"] == parents["Job search"] == "Revenue streams ready:"
    assert parents["LinkedIn refresh"] == "Job search"  # nested: the item above it
    assert parents["Ship the beta"] == ""  # a list right under a heading: the heading is its context
    assert parents["Revenue streams ready:"] == ""


def test_a_short_item_of_another_list_is_no_copy(tmp_path: Path) -> None:
    memory = ("# MEMORY\n\n## Reading list\nOn the nightstand:\n- Field guide to mushrooms\n\n"
              "## Contents of the orchard skill\nThe orchard skill covers:\n- Pruning schedule\n- Frost alerts\n")
    notes = {"memory/2026-05-03.md": "# 2026-05-03\n\nThe greenhouse skill covers:\n- Watering plan\n- Frost alerts\n"
                                     "- Pest log\n\nBooks to return to the library:\n- Field guide to mushrooms\n",
             "memory/2026-05-04.md": "# 2026-05-04\n\nWhat the orchard skill covers:\n- Pruning schedule\n"}
    found = _review(tmp_path, memory, notes)
    dups = _groups(found, "duplicate")
    # "Frost alerts" of the greenhouse skill and of the orchard skill are two facts; so are the mushroom book on
    # the nightstand and the one to return
    assert not any("memory/2026-05-03.md#L5" in d for d in dups)
    assert not any("memory/2026-05-03.md#L9" in d for d in dups)
    # the same item of the same thing's list is one (the lead lines share "orchard skill")
    assert {"MEMORY.md#L9", "memory/2026-05-04.md#L4"} in dups


def test_what_must_still_be_done_is_no_copy_of_its_doing(tmp_path: Path) -> None:
    memory = "# MEMORY\n\n## Security\n- Must install: clamav + rkhunter + aide\n"
    notes = {"memory/2026-06-01.md": "# 2026-06-01\n\n- clamav + rkhunter + aide installed\n",
             "memory/2026-06-02.md": "# 2026-06-02\n\n- Must install: clamav + rkhunter + aide\n"}
    found = _review(tmp_path, memory, notes)
    dups = _groups(found, "duplicate")
    assert not any("memory/2026-06-01.md#L3" in d for d in dups)  # deleting it would lose that it was done
    assert {"MEMORY.md#L4", "memory/2026-06-02.md#L3"} in dups  # the rule said twice is one rule


def test_status_readings_taken_at_two_times_are_no_copies(tmp_path: Path) -> None:
    notes = {"memory/2026-07-10.md": "# 2026-07-10\n\n### 09:15 heartbeat\n- Backup disk: mounted\n"
                                     "- Queue depth: 3\n\n### 17:40 heartbeat\n- Backup disk: mounted\n",
             "memory/2026-07-11.md": "# 2026-07-11\n\n### 09:20 heartbeat\n- Backup disk: mounted\n"
                                     "- Queue depth: 7\n\n## Notes\n- Mail relay ✅ live\n",
             "memory/2026-07-12.md": "# 2026-07-12\n\n## Notes\n- Mail relay ✅ live\n"
                                     "- The mail relay runs on the small VPS in Falkenstein\n",
             "memory/2026-07-13.md": "# 2026-07-13\n\n## Notes\n- The mail relay runs on the small VPS in Falkenstein\n"}
    found = _review(tmp_path, "# MEMORY\n", notes)
    dups = _groups(found, "duplicate")
    cited = set().union(*dups) if dups else set()
    assert not cited & {"memory/2026-07-10.md#L4", "memory/2026-07-10.md#L8", "memory/2026-07-11.md#L4",
                        "memory/2026-07-11.md#L8", "memory/2026-07-12.md#L4"}
    # a standing fact said again on another day still is one
    assert {"memory/2026-07-12.md#L5", "memory/2026-07-13.md#L4"} in dups
    # and a reading that changed still is a newer value
    assert any(f.kind == "conflict" and {i.citation for i in f.items} ==
               {"memory/2026-07-10.md#L5", "memory/2026-07-11.md#L5"} for f in found)


def test_a_terse_item_is_of_what_its_list_is_about(tmp_path: Path) -> None:
    memory = "# MEMORY\n\n## Providers\n**OpenRouter:**\n- 300+ models\n- Pay per token\n"
    notes = {"memory/2026-03-02.md": "# 2026-03-02\n\n**Home server:**\n- 4 models\n- Runs Ollama\n",
             "memory/2026-03-09.md": "# 2026-03-09\n\nOpenRouter now:\n- 350+ models\n"}
    found = _review(tmp_path, memory, notes)
    conflicts = _groups(found, "conflict")
    # the home server's 4 models do not supersede OpenRouter's 300+; OpenRouter's newer count does
    assert conflicts == [{"MEMORY.md#L5", "memory/2026-03-09.md#L4"}]


def test_a_line_that_says_the_opposite_word_is_no_copy(tmp_path: Path) -> None:
    memory = "# MEMORY\n\n## Container\n- To copy files in: `docker cp <file> relay-gateway:/home/node/workspace/`\n"
    notes = {"memory/2026-04-11.md": "# 2026-04-11\n\n- To copy files out: "
                                     "`docker cp relay-gateway:/home/node/workspace/<file> <dest>`\n",
             "memory/2026-04-12.md": "# 2026-04-12\n\n- Correct way to copy files in: "
                                     "`docker cp <file> relay-gateway:/home/node/workspace/`\n"}
    found = _review(tmp_path, memory, notes)
    dups = _groups(found, "duplicate")
    assert dups == [{"MEMORY.md#L4", "memory/2026-04-12.md#L3"}]  # copying files out is not copying them in


def test_two_lines_with_different_status_marks_are_two_readings(tmp_path: Path) -> None:
    memory = ("# MEMORY\n\n## Agents\n- ✅ intel_reviewer_cn (reviewer 02 · Chinese papers)\n"
              "- ✅ intel_digest (daily digest · English papers)\n")
    notes = {"memory/2026-03-29.md": "# 2026-03-29\n\n- intel_reviewer_cn: Chinese papers reviewer (in progress)\n"
                                     "- intel_digest: daily digest of English papers ✅\n"}
    dups = _groups(_review(tmp_path, memory, notes), "duplicate")
    # done in MEMORY.md and still running in the note: no copy to merge away; both done: the same fact
    assert {"MEMORY.md#L4", "memory/2026-03-29.md#L3"} not in dups
    assert {"MEMORY.md#L5", "memory/2026-03-29.md#L4"} in dups


def test_a_rule_said_as_an_instruction_is_measured_apart_from_a_line_with_always_inside(tmp_path: Path) -> None:
    memory = "# MEMORY\n\n## About\n- Works on the render pipeline.\n"
    notes = {"memory/2026-03-19.md": "# 2026-03-19\n\n- **NEVER use `-c:v copy` for the final mux** of a video\n"
                                     "- Lesson: always kill stale ffmpeg processes before starting new ones\n"
                                     "- Resume-friendly importer (always queries for unhashed files)\n"}
    found = {f.items[0].citation: f.evidence for f in _review(tmp_path, memory, notes) if f.kind == "promote"}
    assert found["memory/2026-03-19.md#L3"] == "promote:rule:imperative"
    assert found["memory/2026-03-19.md#L4"] == "promote:rule:imperative"
    assert found.get("memory/2026-03-19.md#L5", "promote:rule") == "promote:rule"  # a feature, not an instruction


def test_a_rule_goes_to_a_rules_section_not_to_one_rule_s_incident(tmp_path: Path) -> None:
    memory = ("# MEMORY\n\n## Spending Rule (CRITICAL — Feb 11 incident)\n- Ask before any purchase over $20.\n\n"
              "## Projects\n- The media server runs on the Pi.\n")
    notes = {"memory/2026-02-17.md": "# 2026-02-17\n\n- NEVER output secrets to chat\n"}
    promotes = [f for f in _review(tmp_path, memory, notes) if f.kind == "promote"]
    assert [f.suggestion for f in promotes] == ["promote memory/2026-02-17.md#L3 to MEMORY.md § Rules for the agent"]
    memory += "\n## Rules\n- Reply in English.\n"
    promotes = [f for f in _review(tmp_path / "again", memory, notes) if f.kind == "promote"]
    assert [f.suggestion for f in promotes] == ["promote memory/2026-02-17.md#L3 to MEMORY.md § Rules"]


def test_a_rule_one_curated_line_already_says_is_not_promoted(tmp_path: Path) -> None:
    memory = ("# MEMORY\n\n## Pi Hardening\n- **LESSON (Feb 14):** UFW DOCKER-USER rules block container→host "
              "loopback. The homepage dashboard used the host IP to reach qBit and SABnzbd and broke after the "
              "firewall hardening. Fix: use Docker DNS (`gluetun:8081`) instead. Always prefer container-to-container "
              "networking over published port loopback.\n")
    notes = {"memory/2026-02-14.md": "# 2026-02-14\n\n- **Lesson:** Always use Docker internal DNS for "
                                     "container-to-container communication, not host IP + published ports\n"
                                     "- Always pin the gateway image to a digest\n"}
    promoted = {f.items[0].citation for f in _review(tmp_path, memory, notes) if f.kind == "promote"}
    assert promoted == {"memory/2026-02-14.md#L4"}  # the first is in MEMORY.md already, in other words


def test_a_no_in_an_aside_does_not_negate_the_fact_it_follows(tmp_path: Path) -> None:
    memory = "# MEMORY\n\n## Contacts\n- Email: dana.k@example.com (Gmail) + iCloud\n"
    notes = {"memory/2026-02-12.md": "# 2026-02-12\n\n- **Personal emails:** dana.k@example.com (Gmail), "
                                     "dana.k@icloud.com (iCloud) — never for client work\n"
                                     "- Email: dana.k@example.com is not hers any more\n"}
    dups = [({i.citation for i in f.items}, f.suggestion) for f in _review(tmp_path, memory, notes)
            if f.kind == "duplicate"]
    assert [c for c, _ in dups] == [{"MEMORY.md#L4", "memory/2026-02-12.md#L3"}]  # not the line that denies it
    assert "merge memory/2026-02-12.md#L3" in dups[0][1]  # it says more: merged, not deleted


def test_a_line_that_names_one_more_person_changes_no_name(tmp_path: Path) -> None:
    memory = ("# MEMORY\n\n## Health\n- EBV VCA IgM **NEGATIVE** Jun 25, 2026 (was Reactive Jun 2025). Dr. Medley "
              "skeptical of valacyclovir; Hannah sending supporting paper.\n\n## Setup\n"
              "- Local dev runs on Docker Desktop.\n")
    notes = {"memory/2026-07-30.md": "# 2026-07-30\n\n- **Hannah antiviral letters** — EBV VCA IgM now negative. "
                                     "Dr. Medley skeptical. Hannah sending supporting paper. Follow up with David "
                                     "when next opportunity arises.\n"
                                     "- Switched local dev from Docker Desktop to OrbStack.\n"}
    conflicts = _groups(_review(tmp_path, memory, notes), "conflict")
    assert {"MEMORY.md#L4", "memory/2026-07-30.md#L3"} not in conflicts  # the same result, and David to follow up
    assert {"MEMORY.md#L7", "memory/2026-07-30.md#L4"} in conflicts  # the old name stays as what was replaced


def test_a_negation_in_an_aside_is_no_reversal(tmp_path: Path) -> None:
    memory = "# MEMORY\n\n## Todo\n- Test the Stripe real payment flow ($19.99, no promo code)\n"
    notes = {"memory/2026-02-18.md": "# 2026-02-18\n\n- Test the Stripe payment flow (without promo code)\n"}
    assert not [f for f in _review(tmp_path, memory, notes) if f.kind == "conflict"]
