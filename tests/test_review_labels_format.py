"""The planted review sets and their tools: every labels.json is well-formed and cites real lines, the generator
is deterministic per seed, and the planted eval runs and answers in its documented JSON shape.

Nothing here asserts how well the review scores: the sets are held out to measure it (bench/review_planted_eval.py).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
LABELS = REPO / "tests" / "data" / "review_labels"
SETS = ("english", "sr_zh", "eng_logs", "dev_english", "dev_sr_zh", "dev_logs")
KINDS = ("duplicate", "conflict", "promote")


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


def _lines(root: Path, rel: str) -> list[str]:
    return (root / rel).read_text(encoding="utf-8").splitlines()


def _is_memory_path(rel: str) -> bool:
    return rel in ("MEMORY.md", "USER.md") or (rel.startswith("memory/") and rel.endswith(".md"))


def _sections(root: Path) -> set[str]:
    return {line[3:].strip() for line in _lines(root, "MEMORY.md") if line.startswith("## ")}


def validate(root: Path, labels: dict[str, Any], minimum: dict[str, int]) -> None:
    """Fail on anything malformed in ``labels`` for the workspace ``root`` (SPEC.md's format)."""
    assert set(labels) == {*KINDS, "traps"}, sorted(labels)

    def check_ref(ref: Any, what: str) -> tuple[str, int]:
        assert isinstance(ref, list) and len(ref) == 2, f"{what}: {ref!r} is not [path, line]"
        rel, line = ref
        assert isinstance(rel, str) and isinstance(line, int) and not isinstance(line, bool), f"{what}: {ref!r}"
        assert _is_memory_path(rel), f"{what}: {rel} is no memory file"
        assert (root / rel).is_file(), f"{what}: {rel} does not exist"
        lines = _lines(root, rel)
        assert 1 <= line <= len(lines), f"{what}: {rel}:{line} out of range (1..{len(lines)})"
        text = lines[line - 1].strip()
        assert text, f"{what}: {rel}:{line} is an empty line"
        assert not text.startswith(("#", "```")), f"{what}: {rel}:{line} is a heading or a fence: {text!r}"
        return rel, line

    ids: list[str] = []
    planted: set[tuple[str, int]] = set()
    for d in labels["duplicate"]:
        assert set(d) == {"id", "items", "delete_ok", "keep"}, d
        ids.append(d["id"])
        items = [check_ref(r, d["id"]) for r in d["items"]]
        assert len(items) >= 2 and len(set(items)) == len(items), f"{d['id']}: needs two or more distinct lines"
        assert isinstance(d["delete_ok"], bool), d
        if d["keep"] is None:
            assert d["delete_ok"] is False, f"{d['id']}: a deletable duplicate names the copy to keep"
        else:
            assert check_ref(d["keep"], d["id"]) in items, f"{d['id']}: keep is not one of the items"
        planted.update(items)
    for c in labels["conflict"]:
        assert set(c) == {"id", "old", "new"}, c
        ids.append(c["id"])
        old, new = check_ref(c["old"], c["id"]), check_ref(c["new"], c["id"])
        assert old != new, f"{c['id']}: old and new are the same line"
        assert new[0] not in ("MEMORY.md", "USER.md") or old[0] in ("MEMORY.md", "USER.md"), (
            f"{c['id']}: an undated MEMORY.md/USER.md line cannot be newer than a daily note")
        if old[0].startswith("memory/") and new[0].startswith("memory/"):
            assert Path(old[0]).name[:10] <= Path(new[0]).name[:10], f"{c['id']}: new is older than old"
        planted.update((old, new))
    sections = _sections(root)
    for p in labels["promote"]:
        assert set(p) == {"id", "items", "section"}, p
        ids.append(p["id"])
        assert len(p["items"]) == 1, p
        ref = check_ref(p["items"][0], p["id"])
        assert ref[0].startswith("memory/"), f"{p['id']}: promotions come from daily or session notes"
        assert p["section"] in sections, f"{p['id']}: no '## {p['section']}' in MEMORY.md ({sorted(sections)})"
        planted.add(ref)
    assert all(isinstance(i, str) and i for i in ids), ids
    assert len(ids) == len(set(ids)), f"duplicate ids: {sorted(i for i in ids if ids.count(i) > 1)}"
    traps = []
    for t in labels["traps"]:
        assert isinstance(t, list) and len(t) == 3 and isinstance(t[2], str) and t[2].strip(), t
        ref = check_ref(t[:2], f"trap {t[:2]}")
        assert ref not in planted, f"trap {ref} is also a planted line"
        traps.append(ref)
    assert len(traps) == len(set(traps)), "a trap line is listed twice"
    for kind, least in minimum.items():
        got = len(labels[kind])
        assert got >= least, f"{root.name}: {got} {kind} labels, want at least {least}"


@pytest.mark.parametrize("name", SETS)
def test_planted_set_labels_are_well_formed(name: str) -> None:
    root = LABELS / name
    labels = json.loads((root / "labels.json").read_text(encoding="utf-8"))
    validate(root, labels, {"duplicate": 5, "conflict": 5, "promote": 5, "traps": 10})
    dailies = list((root / "memory").glob("2026-*.md"))
    assert len(dailies) >= 10
    assert sum(len(_lines(root, f"memory/{p.name}")) for p in dailies) >= 100, "notes too short to be realistic"


def test_labels_json_is_what_build_labels_writes() -> None:
    build = _load("review_labels_build", LABELS / "build_labels.py")
    assert build.main(["--check"]) == 0, "run tests/data/review_labels/build_labels.py and commit labels.json"
    assert set(build.SETS) == set(SETS)


def test_anchor_matching_no_line_or_two_lines_is_refused(tmp_path: Path) -> None:
    build = _load("review_labels_build", LABELS / "build_labels.py")
    (tmp_path / "MEMORY.md").write_text("- alpha one\n- alpha two\n", encoding="utf-8")
    assert build._line(tmp_path, ("MEMORY.md", "one")) == ["MEMORY.md", 1]
    with pytest.raises(SystemExit):
        build._line(tmp_path, ("MEMORY.md", "alpha"))
    with pytest.raises(SystemExit):
        build._line(tmp_path, ("MEMORY.md", "gamma"))


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(p.relative_to(root).as_posix().encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def test_generator_same_seed_same_bytes_other_seed_other_workspace(tmp_path: Path) -> None:
    gen = _load("gen_review_workspace", REPO / "bench" / "gen_review_workspace.py")
    gen.generate(tmp_path / "a", seed=3)
    gen.generate(tmp_path / "b", seed=3)
    gen.generate(tmp_path / "c", seed=4)
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b")
    assert _digest(tmp_path / "a") != _digest(tmp_path / "c")
    for name in ("a", "c"):
        root = tmp_path / name
        labels = json.loads((root / "labels.json").read_text(encoding="utf-8"))
        validate(root, labels, {"duplicate": 5, "conflict": 5, "promote": 5, "traps": 10})
        dailies = [p for p in (root / "memory").glob("*.md") if len(p.stem) == 10]
        assert len(dailies) == 60
        assert (root / "MEMORY.md").read_text(encoding="utf-8").count("\n## ") >= 5


def test_eval_scores_a_report_by_the_spec_rules() -> None:
    ev = _load("review_planted_eval", REPO / "bench" / "review_planted_eval.py")
    root = LABELS / "english"
    labels = json.loads((root / "labels.json").read_text(encoding="utf-8"))
    dup, con = labels["duplicate"][0], labels["conflict"][0]
    trap = labels["traps"][0]

    def item(ref: list[Any]) -> dict[str, Any]:
        return {"path": ref[0], "startLine": ref[1], "endLine": ref[1], "text": ""}

    report = {"stats": {"statements": 200}, "findings": [
        {"id": "d-1", "kind": "duplicate", "items": [item(r) for r in dup["items"]], "score": 0.9,
         "suggestion": f"keep {dup['keep'][0]}#L{dup['keep'][1]}; delete {dup['items'][1][0]}#L{dup['items'][1][1]}"},
        {"id": "c-1", "kind": "conflict", "items": [item(con["old"]), item(con["new"])], "score": 0.8,
         "suggestion": "", "current": 0},
        # the same lines as a duplicate's, but reported as a conflict: another kind never matches
        {"id": "c-2", "kind": "conflict", "items": [item(r) for r in dup["items"]], "score": 0.7, "suggestion": "",
         "current": 1},
        {"id": "p-1", "kind": "promote", "items": [item(trap[:2])], "score": 0.6, "suggestion": "promote … § Rules"},
    ]}
    result = ev.score(root, labels, report)
    d, c, p = (result["kinds"][k] for k in KINDS)
    assert (d["found"], d["findings"], d["matched_findings"], d["precision"]) == (1, 1, 1, 1.0)
    assert d["checks"] == {"delete": {"agree": 1, "checked": 1}, "keep": {"agree": 1, "checked": 1}}
    assert (c["found"], c["findings"], c["matched_findings"]) == (1, 2, 1)
    assert [u["id"] for u in c["unmatched"]] == ["c-2"]
    assert c["checks"]["direction"] == {"agree": 0, "checked": 1}  # current 0 is the old line
    assert (p["found"], p["trap_findings"], p["precision"]) == (0, 1, 0.0)
    assert result["traps"]["lines"] == [{"line": f"{trap[0]}#L{trap[1]}", "findings": ["p-1"]}]
    assert result["per_1k_of"] == "statements" and result["per_1k"] == 20.0


def test_eval_runs_the_review_and_answers_in_its_json_shape() -> None:
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "review_planted_eval.py"), str(LABELS / "english"),
                           "--json"], capture_output=True, text=True, cwd=str(REPO), check=False, timeout=600)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert set(result) == {"sets", "total", "now", "index"}
    assert result["index"] is False  # lexical unless --index: no index built, no model loaded
    (s,) = result["sets"]
    assert s["set"] == "english" and s["count"] > 0 and s["per_1k_of"] in ("statements", "lines")
    assert set(s["traps"]) == {"total", "touched", "lines"} and s["traps"]["total"] == 18
    for kind in KINDS:
        k = s["kinds"][kind]
        assert {"planted", "found", "recall", "missed", "findings", "matched_findings", "precision", "unmatched",
                "trap_findings", "per_1k", "checks"} <= set(k)
        assert 0 <= k["found"] <= k["planted"] and 0 <= k["matched_findings"] <= k["findings"]
        assert len(k["unmatched"]) == k["findings"] - k["matched_findings"]
        assert set(result["total"][kind]) >= {"planted", "found", "findings", "precision", "recall", "trap_findings"}
