"""What OpenClaw injects at a session's start: the same cut as OpenClaw 2026.9.6's own code, its limits read from
its config, and the report in ``status`` and ``doctor``."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engine.bootstrap import BOOTSTRAP_FILES, bootstrap_budget, injected_texts, limits, read_openclaw_config
from engine.config import load_config
from engine.health.checks import diagnose
from memdeck.cli import cli

DATA = Path(__file__).parent / "data" / "bootstrap"


def _cases() -> list[dict[str, Any]]:
    spec = importlib.util.spec_from_file_location("gen_cases", DATA / "gen_cases.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.cases()  # type: ignore[no-any-return]


def _utf16_digest(text: str) -> tuple[int, str]:
    raw = text.encode("utf-16-le", "surrogatepass")
    return len(raw) // 2, hashlib.sha256(raw).hexdigest()[:16]


def test_the_cut_is_openclaws_own() -> None:
    # expected.json was written by OpenClaw 2026.9.6's buildBootstrapContextFiles on these very inputs: emoji
    # (two UTF-16 units), AGENTS.md's policy digest, the per-file limit, USER.md's 4,000 cap and the total limit.
    expected = json.loads((DATA / "expected.json").read_text())["cases"]
    cases = _cases()
    assert len(cases) == len(expected) == 10
    for case, want in zip(cases, expected, strict=True):
        got = {}
        for file, text in injected_texts(case["files"], case["max"], case["total"], Path("/ws")):
            if text:
                plain = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
                got[file.name] = dict(zip(("length", "sha256"), _utf16_digest(plain), strict=True))
        assert got == want


def _workspace(tmp_path: Path, memory: str, user: str | None = None) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(memory, encoding="utf-8")
    if user is not None:
        (ws / "USER.md").write_text(user, encoding="utf-8")
    return ws


def _big_memory(sections: int = 40, lines: int = 12) -> str:
    out = ["# Memory"]
    for s in range(sections):
        out += ["", f"## Topic {s}"] + [f"- fact {s}.{i}: the backup of host {s} runs at 0{i % 10}:30" for i in
                                          range(lines)]
    return "\n".join(out) + "\n"


def test_a_memory_over_its_limit_names_the_lines_and_sections_the_agent_never_sees(tmp_path: Path) -> None:
    text = _big_memory()
    ws = _workspace(tmp_path, text, user="Name: Ana\nTime zone: Europe/Belgrade\n")
    budget = bootstrap_budget(ws, config_path=tmp_path / "none.json")
    memory = budget.file("MEMORY.md")
    assert memory is not None and memory.truncated and memory.causes == ("per-file-limit",)
    assert memory.chars == len(text.rstrip()) and memory.injected <= 20_000 < memory.chars
    user = budget.file("USER.md")
    assert user is not None and not user.truncated and user.injected == user.chars
    first, last = memory.cut_lines or (0, 0)
    lines = text.split("\n")
    # OpenClaw keeps the first 75% and the last 25% of the room: the cut lies between, the ends are kept.
    assert 1 < first < last < len(lines) - 1
    whole = [s.heading for s in memory.cut_sections if s.whole]
    assert whole and all(f"## {h}" in lines[first - 1:last] for h in whole)
    assert "Topic 0" not in whole and "Topic 39" not in whole
    assert "lines" in memory.describe() and "20,000-character limit" in memory.describe()


def test_user_md_is_capped_at_4000_whatever_the_limit(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "# Memory\n- one fact\n", user="- " + "x" * 5000 + "\n")
    cfg = tmp_path / "openclaw.json"
    cfg.write_text('{ agents: { defaults: { bootstrapMaxChars: 50000 } } }')
    budget = bootstrap_budget(ws, config_path=cfg)
    user = budget.file("USER.md")
    assert budget.max_chars == 50_000 and user is not None and user.limit == 4_000 and user.truncated
    assert user.injected <= 4_000


def test_limits_come_from_openclaws_config_per_agent_first(tmp_path: Path) -> None:
    cfg = tmp_path / "openclaw.json"
    cfg.write_text("""// OpenClaw's config is JSON5
    { agents: { defaults: { bootstrapMaxChars: 8000, bootstrapTotalMaxChars: 30000, },
                list: [ { id: "Work", bootstrapMaxChars: 3000 }, ], }, }""")
    data, problem = read_openclaw_config(cfg)
    assert problem is None and data is not None
    assert limits(data, "work") == (3000, 30000)
    assert limits(data, "main") == (8000, 30000)
    assert limits({"agents": {"entries": {"main": {"bootstrapTotalMaxChars": 9000}}}}, "main") == (20000, 9000)


@pytest.mark.parametrize("value", ["-5", "0", "\"big\"", "true", "1e400"])
def test_an_out_of_range_limit_falls_back_to_openclaws_default(tmp_path: Path, value: str) -> None:
    cfg = tmp_path / "openclaw.json"
    cfg.write_text(f'{{"agents": {{"defaults": {{"bootstrapMaxChars": {value}}}}}}}')
    data, problem = read_openclaw_config(cfg)
    assert problem is None
    assert limits(data, "main") == (20_000, 60_000)


def test_a_broken_config_is_named_and_the_defaults_apply(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "# Memory\n- one fact\n")
    cfg = tmp_path / "openclaw.json"
    cfg.write_bytes(b"{ agents: \xff\xfe oops")
    before = cfg.read_bytes()
    budget = bootstrap_budget(ws, config_path=cfg)
    assert budget.config_problem and "not valid JSON5" in budget.config_problem
    assert (budget.max_chars, budget.total_max_chars) == (20_000, 60_000)
    assert cfg.read_bytes() == before  # read-only


def test_files_keep_openclaws_prompt_order() -> None:
    assert BOOTSTRAP_FILES == ("AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md", "BOOTSTRAP.md", "MEMORY.md")


def test_status_and_doctor_report_the_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _workspace(tmp_path, _big_memory())
    cfg = tmp_path / "openclaw.json"
    cfg.write_text('{"agents": {"defaults": {"bootstrapTotalMaxChars": 12000}}}')
    monkeypatch.setenv("OPENCLAW_CONFIG_PATH", str(cfg))
    runner = CliRunner()
    out = runner.invoke(cli, ["-w", str(ws), "status", "--json"])
    assert out.exit_code == 0, out.output
    boot = json.loads(out.output)["bootstrap"]
    assert boot["total_max_chars"] == 12_000 and boot["truncated"] == ["MEMORY.md"]
    memory = next(f for f in boot["files"] if f["name"] == "MEMORY.md")
    assert memory["causes"] == ["per-file-limit", "total-limit"] and memory["injected"] < 12_000
    text = runner.invoke(cli, ["-w", str(ws), "status"]).output
    assert "OpenClaw injects at session start (20,000 a file, 12,000 in all;" in text and "MEMORY.md:" in text
    finding = next(f for f in diagnose(load_config(workspace=ws)).findings if f.check == "bootstrap")
    assert finding.severity == "warn" and "MEMORY.md" in finding.message and finding.details


def test_the_demo_is_injected_whole(demo_workspace: Path) -> None:
    budget = bootstrap_budget(demo_workspace, config_path=demo_workspace / "absent.json")
    memory = budget.file("MEMORY.md")
    assert memory is not None and not budget.cut and memory.injected == memory.chars > 0
    finding = next(f for f in diagnose(load_config(workspace=demo_workspace)).findings if f.check == "bootstrap")
    assert finding.severity == "ok"
