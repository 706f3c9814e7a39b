"""Acting on review findings by id from the doors: ``memdeck review apply ID --action …``, ``memdeck review undo``
(the engine's actions and journal, byte-exact undo) and the read-only MCP ``memory_review`` tool."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engine.api import promote_target
from engine.review.model import Finding, ReviewItem
from memdeck.cli import cli
from memdeck.mcp import MemoryService
from tests.helpers import hash_config

ENV = {"MEMDECK_EMBEDDING_PROVIDER": "none"}


def _run(ws: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["--workspace", str(ws), *args], env=ENV)
    return result.exit_code, result.stdout, result.stderr


def _files(ws: Path) -> dict[str, bytes]:
    return {p.relative_to(ws).as_posix(): p.read_bytes() for p in sorted(ws.rglob("*")) if p.is_file()}


def _findings(ws: Path, *args: str) -> list[dict[str, Any]]:
    code, out, err = _run(ws, "review", "--json", "--all", *args)
    assert code == 0, err
    findings: list[dict[str, Any]] = json.loads(out)["findings"]
    return findings


COPY = "- Never force-push to main or any shared branch. `--force-with-lease` is fine on her own feature branches.\n"


def _finding(ws: Path, kind: str) -> dict[str, Any]:
    if kind == "duplicate":  # a word-for-word copy of a MEMORY.md line: the one kind of copy that may be deleted
        note = ws / "memory" / "2026-11-20.md"
        if COPY not in note.read_text(encoding="utf-8"):
            note.write_text(note.read_text(encoding="utf-8") + COPY, encoding="utf-8")
    found = [f for f in _findings(ws) if f["kind"] == kind]
    assert found, f"the demo workspace has no {kind} finding"
    if kind == "duplicate":  # a copy the review itself offers to delete
        found.sort(key=lambda f: not f["deletable"])
        assert found[0]["deletable"] and "delete" in found[0]["suggestion"]
    return found[0]


def _line(ws: Path, item: dict[str, Any]) -> str:
    return (ws / item["path"]).read_text(encoding="utf-8").split("\n")[item["startLine"] - 1]


def _as_finding(data: dict[str, Any]) -> Finding:
    items = tuple(ReviewItem(i["path"], i["startLine"], i["endLine"], i["text"], i.get("date"))
                  for i in data["items"])
    return Finding(data["kind"], items, data["reason"], data["score"], data["suggestion"], data.get("current"),
                   data["id"], data.get("evidence", ""), tuple(data.get("deletable", ())))


def _check_promote(ws: Path, f: dict[str, Any], done: dict[str, Any]) -> None:
    target, section = promote_target(_as_finding(f))
    text = (ws / target).read_text(encoding="utf-8")
    assert done["files"] == [target] and done["line"] in text.split("\n")
    assert f["items"][0]["path"] in done["line"]  # "(from <citation>)"
    if section is not None:  # under the section the review suggested (the Review screen's first choice)
        lines = text.split("\n")
        at = lines.index(done["line"])
        heading = next(line for line in reversed(lines[:at]) if line.startswith("## "))
        assert heading == f"## {section}"


def _check_supersede(ws: Path, f: dict[str, Any], done: dict[str, Any]) -> None:
    current = f["items"][f["current"]]
    for n, item in enumerate(f["items"]):
        line = _line(ws, item)
        if n == f["current"]:
            assert "(superseded" not in line
        else:
            assert "(superseded " in line and f"{current['path']}#L{current['startLine']}" in line


def _check_delete(ws: Path, f: dict[str, Any], done: dict[str, Any]) -> None:
    last = f["items"][f["deletable"][-1]]  # the last copy the kept statement holds every word and value of
    assert done["files"] == [last["path"]]
    assert last["text"].strip() not in (ws / last["path"]).read_text(encoding="utf-8")
    assert f["items"][0]["text"].strip() in (ws / f["items"][0]["path"]).read_text(encoding="utf-8")


def _check_merge(ws: Path, f: dict[str, Any], done: dict[str, Any]) -> None:
    first = f["items"][0]
    assert done["line"] and done["line"] in (ws / first["path"]).read_text(encoding="utf-8").split("\n")
    for item in f["items"][1:]:
        assert item["text"].strip() not in (ws / item["path"]).read_text(encoding="utf-8")


CASES = [("promote", "promote", _check_promote), ("conflict", "supersede", _check_supersede),
         ("duplicate", "delete", _check_delete), ("duplicate", "merge", _check_merge)]


@pytest.mark.parametrize(("kind", "action", "check"), CASES, ids=[c[1] for c in CASES])
def test_apply_by_id_writes_what_the_review_screen_would_and_undo_restores_the_bytes(
        demo_workspace: Path, kind: str, action: str, check: Any) -> None:
    ws = demo_workspace
    f = _finding(ws, kind)
    before = _files(ws)
    more: tuple[str, ...] = ()
    if action == "merge":
        # A merge into the longest copy would lose a word of another ("Mara repeated: …"): it is refused, writing
        # nothing, until the merged line is given.
        code, _, err = _run(ws, "review", "apply", f["id"], "--action", "merge")
        assert code == 1 and "would lose a detail" in err and _files(ws) == before
        more = ("--text", "Never force-push to main or any shared branch (Mara repeated it); "
                          "`--force-with-lease` is fine on her own feature branches.")
    code, out, err = _run(ws, "review", "apply", f["id"], "--action", action, "--json", *more)
    assert code == 0, err
    done = json.loads(out)
    assert done["ok"] is True and done["action"] == action and done["findingId"] == f["id"]
    changed = {rel for rel, data in _files(ws).items() if before.get(rel) != data}
    assert changed == set(done["files"]) and changed
    check(ws, f, done)
    assert f["id"] not in {g["id"] for g in _findings(ws)}  # acted on: the review no longer finds it

    code, out, err = _run(ws, "review", "undo")
    assert code == 0, err
    assert out.startswith("undid: ")
    assert _files(ws) == before  # byte for byte
    assert f["id"] in {g["id"] for g in _findings(ws)}


def test_dismiss_by_id_hides_the_finding_and_undo_brings_it_back(demo_workspace: Path) -> None:
    ws = demo_workspace
    f = _finding(ws, "conflict")
    before = _files(ws)
    code, out, err = _run(ws, "review", "apply", f["id"], "--action", "dismiss")
    assert code == 0, err
    assert f["id"] in out
    assert _files(ws) == before
    assert f["id"] not in {g["id"] for g in _findings(ws)}
    code, _, err = _run(ws, "review", "undo", "--json")
    assert code == 0, err
    assert f["id"] in {g["id"] for g in _findings(ws)}


def test_a_stale_or_unknown_id_exits_1_and_writes_nothing(demo_workspace: Path) -> None:
    ws = demo_workspace
    f = _finding(ws, "duplicate")
    code, _, err = _run(ws, "review", "apply", f["id"], "--action", "delete")
    assert code == 0, err
    after_first = _files(ws)
    # The same id again: the copy is gone, so a fresh review no longer has that finding.
    code, out, err = _run(ws, "review", "apply", f["id"], "--action", "delete", "--json")
    assert code == 1
    assert json.loads(out)["ok"] is False and f["id"] in json.loads(out)["error"]
    assert "no finding" in err
    code, _, err = _run(ws, "review", "apply", "d-000000000000", "--action", "merge")
    assert code == 1 and "no finding 'd-000000000000'" in err
    assert _files(ws) == after_first


def test_an_edited_statement_makes_its_finding_stale(demo_workspace: Path) -> None:
    ws = demo_workspace
    f = _finding(ws, "conflict")
    old = f["items"][0]
    path = ws / old["path"]
    path.write_text(path.read_text(encoding="utf-8").replace(old["text"].strip(), "- Something else entirely."),
                    encoding="utf-8")
    before = _files(ws)
    code, _, err = _run(ws, "review", "apply", f["id"], "--action", "supersede")
    assert code == 1 and "no finding" in err
    assert _files(ws) == before


def test_an_action_the_kind_does_not_take_exits_1(demo_workspace: Path) -> None:
    ws = demo_workspace
    before = _files(ws)
    conflict = _finding(ws, "conflict")
    code, _, err = _run(ws, "review", "apply", conflict["id"], "--action", "delete")
    assert code == 1 and "a conflict finding takes supersede, merge, dismiss, not 'delete'" in err
    promote = _finding(ws, "promote")
    code, _, err = _run(ws, "review", "apply", promote["id"], "--action", "supersede")
    assert code == 1 and "a promote finding takes promote, dismiss" in err
    # The likely current statement cannot be the one marked superseded.
    code, _, err = _run(ws, "review", "apply", conflict["id"], "--action", "supersede",
                        "--item", str(conflict["current"] + 1))
    assert code == 1 and "likely current" in err
    code, _, err = _run(ws, "review", "apply", conflict["id"], "--action", "supersede", "--item", "9")
    assert code == 1 and "no #9" in err
    assert _files(ws) == before


def test_promote_takes_a_section_target_and_wording(demo_workspace: Path) -> None:
    ws = demo_workspace
    f = _finding(ws, "promote")
    code, out, err = _run(ws, "review", "apply", f["id"], "--action", "promote", "--target", "USER.md",
                          "--section", "Health", "--text", "Allergic to penicillin.", "--json")
    assert code == 0, err
    done = json.loads(out)
    lines = (ws / "USER.md").read_text(encoding="utf-8").split("\n")
    at = lines.index(done["line"])
    assert done["line"].startswith("- Allergic to penicillin. (from ")
    assert next(line for line in reversed(lines[:at]) if line.startswith("## ")) == "## Health"


def test_undo_with_nothing_recorded_exits_1(demo_workspace: Path) -> None:
    code, out, err = _run(demo_workspace, "review", "undo", "--json")
    assert code == 1
    assert json.loads(out)["ok"] is False and "nothing to undo" in err


def test_review_without_a_subcommand_still_lists_findings(demo_workspace: Path) -> None:
    code, out, _ = _run(demo_workspace, "review")
    assert code == 0 and "finding" in out and "[" in out


# -- MCP: memory_review (read-only) ---------------------------------------------------------------
def test_mcp_memory_review_returns_what_review_json_returns(demo_workspace: Path) -> None:
    ws = demo_workspace
    expected = _findings(ws)
    before = _files(ws)
    service = MemoryService(hash_config(ws), allow_write=False)
    try:
        out = service.review({"all": True})
        assert not out.is_error, out.payload
        assert out.payload["findings"] == expected and expected
        assert set(out.payload["stats"]) >= {"files", "statements", "compared", "dismissed", "hidden"}
        confident = service.review({})
        assert confident.payload["findings"] == [f for f in expected if f["confident"]]
        assert confident.payload["stats"]["hidden"] == len(expected) - len(confident.payload["findings"])
        only = service.review({"kind": "conflict", "all": True})
        assert only.payload["findings"] == [f for f in expected if f["kind"] == "conflict"]
        assert service.review({"since": "2099-01-01"}).payload["findings"] == []
        for bad in ({"since": "yesterday"}, {"kind": "typo"}, {"limit": 3}):
            refused = service.review(bad)
            assert refused.is_error and refused.payload["findings"] == [] and refused.payload["error"]
    finally:
        service.stop()
    assert _files(ws) == before
