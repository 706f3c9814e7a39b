"""Review recall without losing precision: each rule from tests/data/review_labels/SPEC.md, on small workspaces
written for the rule (not from a labelled set's lines), with the trap beside it that must stay clean."""

from __future__ import annotations

from pathlib import Path

from engine.review.model import Finding
from engine.review.run import run_review
from engine.review.statements import OPTION, OWN, parse_statements
from engine.review.text import features, value_units
from tests.helpers import review_config

MEMORY = """# MEMORY.md

## About
- Kai's phone is a Pixel 8 running Android 15.
- Kai's landlord is Ruth (Lisbon office of Casa Azul).
- Swimming: Monday and Thursday evenings at 19:00.
- The weekly 1:1 with Bo is on Wednesdays at 11:00.
- The nightly backup job writes to bucket cold-archive.

## Work
- The build cache is pinned to 4.1.2 in ci/cache.yaml (a91c3e7).
- Retro is at 15:00.
- Release train: every second Thursday.
"""

NOTES = {
    "memory/2026-03-02.md": "# 2026-03-02\n\n"
                            "- Kai's phone: Pixel 8, Android 15, now with a 256 GB storage card.\n"
                            "- Ruth is Kai's landlord.\n"
                            "- `b7e21f4` fix(cache): evict stale entries on restart\n"
                            "- Inês's birthday is 3 May.\n",
    "memory/2026-03-09.md": "# 2026-03-09\n\n"
                            "- The build cache is pinned to 4.1.2 in ci/cache.yaml (see 5d0c9e2).\n"
                            "- `e40a9d1` fix(cache): evict stale entries on restart\n"
                            "- Kai moved swimming to Tuesday and Friday mornings at 07:30.\n"
                            "- 1:1 with Bo moved to Fridays at 14:00.\n"
                            "- Retro moved to 16:00 for the new quarter.\n"
                            "- Replica is db-replica-3.internal, Postgres 15.\n"
                            "- Goran is now the payments team's tech lead.\n",
    "memory/2026-03-16.md": "# 2026-03-16\n\n"
                            "- Replica moved to db-replica-7.internal, Postgres 16.\n"
                            "- The build cache moved to 4.2.0 (merged in 0c1d2e3).\n"
                            "Options:\n"
                            "- Take the night train\n"
                            "- Fly on Friday\n"
                            "\n"
                            "- Kai's landlord is Ruth, who lives upstairs.\n",
}


def _review(tmp_path: Path, notes: dict[str, str] = NOTES, memory: str = MEMORY) -> list[Finding]:
    return list(run_review(review_config(tmp_path, memory, notes), show_all=True).findings)


def _with(findings: list[Finding], kind: str, *cites: str) -> list[Finding]:
    return [f for f in findings if f.kind == kind and set(cites) <= {i.citation for i in f.items}]


def test_a_value_is_of_the_word_right_after_it() -> None:
    units = value_units("Pixel 8, Android 15, now with a 256 GB card")
    assert units[("number", "256")] == frozenset({"gb"})
    assert units[("number", "8")] == frozenset()  # not the name past the comma
    assert value_units("moved to 4.2.0 (merged today)")[("version", "4.2.0")] == frozenset()


def test_parts_of_the_day_and_one_on_ones_are_what_they_are() -> None:
    assert features("Swimming: Monday and Thursday evenings").values["daypart"] == frozenset({"evening"})
    one = features("1:1 with Bo moved to Fridays at 14:00")
    assert "1:1" in one.content and one.values["time"] == frozenset({"14:00"})


def test_two_lines_citing_another_commit_for_one_fact_are_one_fact(tmp_path: Path) -> None:
    found = _review(tmp_path)
    dup = _with(found, "duplicate", "MEMORY.md#L11", "memory/2026-03-09.md#L3")
    assert len(dup) == 1 and dup[0].items[dup[0].deletable[0]].citation == "memory/2026-03-09.md#L3"
    # Two commits with one message are two commits (events), not one fact.
    assert not _with(found, "duplicate", "memory/2026-03-02.md#L5", "memory/2026-03-09.md#L4")


def test_a_copy_that_adds_a_measure_is_a_duplicate_to_merge(tmp_path: Path) -> None:
    dup = _with(_review(tmp_path), "duplicate", "MEMORY.md#L4", "memory/2026-03-02.md#L3")
    assert len(dup) == 1 and not dup[0].deletable and "merge" in dup[0].suggestion


def test_a_line_that_says_less_of_the_same_fact_is_its_duplicate(tmp_path: Path) -> None:
    found = _review(tmp_path)
    dup = _with(found, "duplicate", "MEMORY.md#L5", "memory/2026-03-02.md#L4")
    assert len(dup) == 1 and dup[0].evidence == "duplicate:curated:contained"
    # One that says more (where Ruth lives) is merged, never deleted: the kept line lacks its words.
    assert all(i.citation != "memory/2026-03-16.md#L9" for f in found for i in (f.items[j] for j in f.deletable))


def test_a_habit_moved_to_other_days_and_another_part_of_the_day_conflicts(tmp_path: Path) -> None:
    found = _review(tmp_path)
    assert _with(found, "conflict", "MEMORY.md#L6", "memory/2026-03-09.md#L5")
    assert _with(found, "conflict", "MEMORY.md#L7", "memory/2026-03-09.md#L6")  # the 1:1 with Bo
    assert _with(found, "conflict", "MEMORY.md#L12", "memory/2026-03-09.md#L7")  # "Retro is at 15:00"


def test_a_host_name_is_no_ticket_and_an_aside_no_event(tmp_path: Path) -> None:
    found = _review(tmp_path)
    assert _with(found, "conflict", "memory/2026-03-09.md#L8", "memory/2026-03-16.md#L3")
    moved = _with(found, "conflict", "MEMORY.md#L11", "memory/2026-03-16.md#L4")
    assert len(moved) == 1 and moved[0].items[moved[0].current or 0].citation == "memory/2026-03-16.md#L4"


def test_a_persons_birthday_and_role_are_promoted_whoever_it_is(tmp_path: Path) -> None:
    promoted = {f.items[0].citation for f in _review(tmp_path) if f.kind == "promote"}
    assert {"memory/2026-03-02.md#L6", "memory/2026-03-09.md#L9"} <= promoted
    assert "memory/2026-03-02.md#L5" not in promoted  # a commit


def test_a_blank_line_ends_the_options_under_a_label() -> None:
    got = {s.clean: s.origin for s in parse_statements("memory/2026-03-16.md", NOTES["memory/2026-03-16.md"])}
    assert got["Take the night train"] == OPTION == got["Fly on Friday"]
    assert got["Kai's landlord is Ruth, who lives upstairs."] == OWN


def test_serbian_in_either_script_and_chinese_dates_read_alike() -> None:
    latin, cyrillic = features("Nina svake srede igra šah u Novom Sadu."), features("Нина сваке среде игра шах у Новом Саду.")
    assert latin.content == cyrillic.content and latin.values == cyrillic.values
    assert features("Pasoš ističe 17. oktobra 2028.").values["date"] == frozenset({"2028-10-17"})
    assert features("Vozim na posao petkom.").values["weekday"] == frozenset({"fri"})
    zh = features("3月8日去杭州，星期一回来。")
    assert zh.values["date"] == frozenset({"03-08"}) and zh.values["weekday"] == frozenset({"mon"})
    assert "杭州" in zh.content and "ref" not in zh.values  # "3月8日去杭州" is no mixed id
    assert features("王芳不喝咖啡。").negated and not features("王芳喝咖啡。").negated


def test_a_dotted_year_version_and_inflections_are_read_as_such() -> None:
    assert features("The router runs firmware 2024.10.2").values["version"] == frozenset({"2024.10.2"})
    assert "year" not in features("The router runs firmware 2024.10.2").values
    assert features("Swimming on Mondays").content == features("the Monday swim").content | {"swim"}
    assert features("Ide na pijacu").content == features("pijaca").content | {"ide"}


def test_a_label_or_options_line_in_chinese_or_serbian_takes_part_in_nothing() -> None:
    text = "# 2026-04-02\n\n王芳更喜欢：\n\n选项：\n- 坐高铁\n- 坐飞机\n\nOpcije:\n- Voz u 7:00\n- Autobus u 9:00\n"
    got = {s.clean: s.origin for s in parse_statements("memory/2026-04-02.md", text)}
    assert got["王芳更喜欢："] == "label" and got["选项："] == "label"
    assert got["坐高铁"] == OPTION == got["坐飞机"] == got["Voz u 7:00"] == got["Autobus u 9:00"]


LANGS_MEMORY = """# MEMORY.md

## About
- Nina je vegetarijanka.
- Swimming at Parkside Baths: Fridays 18:00.

## Work
- Lars wants build alerts on his phone, not only by email.
"""

LANGS_NOTES = {
    "memory/2026-04-01.md": "# 2026-04-01\n\n"
                            "- Нина сваке среде игра шах у клубу „Лавиринт“.\n"
                            "- 王芳对花生过敏。\n"
                            "- Petar Ilić joined as engineering manager for the mobile team.\n"
                            "- Lunch with my boss at the noodle bar.\n",
    "memory/2026-04-08.md": "# 2026-04-08\n\n"
                            "- Nina svake srede igra šah u klubu „Lavirint“.\n"
                            "- Nina's birthday is 9 March.\n"
                            "- From now on the Friday swim is at 19:30: the baths changed their hours.\n"
                            "- Lars doesn't want build alerts on his phone any more, email only.\n"
                            "- Nina is no longer vegetarian.\n",
}


def test_serbian_chinese_and_english_facts_pair_and_promote(tmp_path: Path) -> None:
    found = _review(tmp_path, LANGS_NOTES, LANGS_MEMORY)
    assert _with(found, "duplicate", "memory/2026-04-01.md#L3", "memory/2026-04-08.md#L3")  # Cyrillic = Latin
    promoted = {f.items[0].citation for f in found if f.kind == "promote"}
    assert {"memory/2026-04-01.md#L4", "memory/2026-04-01.md#L5", "memory/2026-04-08.md#L4"} <= promoted
    assert "memory/2026-04-01.md#L6" not in promoted  # a lunch with the boss is an event
    # A common noun in a name ("Parkside Baths" / "the baths") is a subject word: the swim moved.
    assert _with(found, "conflict", "MEMORY.md#L5", "memory/2026-04-08.md#L5")
    # "doesn't want … any more" reverses the wish: a conflict, never a copy to delete.
    assert _with(found, "conflict", "MEMORY.md#L8", "memory/2026-04-08.md#L6")
    assert not _with(found, "duplicate", "MEMORY.md#L8", "memory/2026-04-08.md#L6")


def test_a_file_list_entry_is_no_copy_of_the_rule_it_names(tmp_path: Path) -> None:
    memory = "# MEMORY\n\n## Rules\n- Every job gets a retry budget in its README; page at 3 failed retries.\n"
    notes = {"memory/2026-05-04.md": "# 2026-05-04\n\n- docs/ops/retries.md — retry budget per job.\n"
                                     "- Every job gets a retry budget in its README.\n"}
    found = _review(tmp_path, notes, memory)
    assert not _with(found, "duplicate", "memory/2026-05-04.md#L3")
    assert _with(found, "duplicate", "MEMORY.md#L4", "memory/2026-05-04.md#L4")  # says less of the same rule


def test_a_time_with_seconds_or_am_pm_is_one_time_of_day() -> None:
    from engine.review.text import features

    assert features("Backup ran at 22:14:47 UTC").values == {"time": frozenset({"22:14"})}  # not 22 and 14:47
    assert features("Dinner at 7pm").values == {"time": frozenset({"19:00"})}  # not a ref "7pm"
    assert features("Standup at 9:30am").values == {"time": frozenset({"09:30"})}
    assert features("Build 7am3f failed").values.get("time") is None  # a build id stays an id


def test_a_block_pasted_twice_into_one_note_is_found_and_its_later_copy_offered_for_deletion(tmp_path: Path) -> None:
    from tests.helpers import review_config

    block = ("## Jeff's business\n- Legal entity: JF Contracting and Consulting LLC, Kansas City\n"
             "- Jeff handles sales, client relations and project management\n- Done\n")
    notes = {"memory/2026-05-11.md": "# 2026-05-11\n\n" + block + "\n" + block
             + "\n## 09:00 heartbeat\n- Curator still busy with the import, not disturbing\n"
             + "\n## 10:00 heartbeat\n- Curator still busy with the import, not disturbing\n"}
    found = [f for f in run_review(review_config(tmp_path, "# MEMORY\n", notes), show_all=True, full=True).findings
             if f.kind == "duplicate"]
    assert sorted((f.evidence, tuple(i.start_line for i in f.items)) for f in found) == [
        ("duplicate:same-file", (4, 9)), ("duplicate:same-file", (5, 10))]  # not "- Done", not two heartbeats
    assert all(f.deletable == (1,) and not f.confident for f in found)  # the later copy; --all until measured
