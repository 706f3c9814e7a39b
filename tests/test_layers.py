"""The import contracts (pyproject.toml ``[tool.importlinter]``, checked by ``lint-imports`` in .ci/run) stay complete.

import-linter checks the layers themselves; what it cannot see is a new engine module missing from a list of
forbidden modules (the engine-layers contract is ``exhaustive``, the forbidden ones are not). These tests see it.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def _contracts() -> dict[str, dict[str, Any]]:
    options = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    assert set(options["root_packages"]) == {"engine", "tui", "memdeck"}
    return {contract["id"]: contract for contract in options["contracts"]}


def _engine_modules() -> set[str]:
    """Every top-level engine module and package (``engine.api``, ``engine.index``, ...)."""
    found = {f"engine.{p.stem}" for p in (REPO / "engine").glob("*.py") if p.stem != "__init__"}
    found |= {f"engine.{p.parent.name}" for p in (REPO / "engine").glob("*/__init__.py")}
    assert {"engine.api", "engine.config", "engine.index", "engine.secrets"} <= found
    return found


def test_the_tui_is_forbidden_every_engine_module_but_api_config_and_errors() -> None:
    contract = _contracts()["tui-reaches-the-api"]
    assert contract["source_modules"] == ["tui"] and contract["allow_indirect_imports"] is True
    allowed = {"engine.api", "engine.config", "engine.errors"}
    assert set(contract["forbidden_modules"]) == _engine_modules() - allowed


def test_the_doors_are_forbidden_every_engine_module_but_the_api_and_the_base_helpers() -> None:
    contract = _contracts()["doors-reach-the-api"]
    assert contract["source_modules"] == ["memdeck"] and contract["allow_indirect_imports"] is True
    allowed = {"engine.api", "engine.config", "engine.errors",
               "engine.citation", "engine.demo", "engine.display", "engine.textio", "engine.workspace"}
    assert set(contract["forbidden_modules"]) == _engine_modules() - allowed


def test_every_engine_module_has_a_layer() -> None:
    contract = _contracts()["engine-layers"]
    assert contract["containers"] == ["engine"] and contract["exhaustive"] is True
    placed = {f"engine.{name.strip().strip('()')}" for layer in contract["layers"]
              for name in layer.replace("|", ":").split(":")}
    assert placed == _engine_modules()


def test_ci_runs_the_contracts_after_mypy() -> None:
    steps = [line.split()[0] for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
             if line.split() and line.split()[0] in ("ruff", "mypy", "lint-imports", "python")]
    assert steps[-3:] == ["mypy", "lint-imports", "python"]
