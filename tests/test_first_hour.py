"""The first hour on a workspace (issue 25, parts 2 and 3): chunks are embedded in the order an agent reads them,
a search never waits for the whole index to be embedded (it says what is left), an interrupted run resumes, and
status counts the vectors instead of saying "ready"."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine import api
from engine.api import MemoryEngine
from engine.config import Config, load_config
from engine.embed.choice import HashingEmbedder
from engine.index import queries
from engine.index.indexer import EMBED_GROUP, SyncProgress, embed_rate, rate_key
from memdeck.cli import cli, duration, not_embedded_note
from memdeck.mcp import MemoryService
from tests.helpers import hash_config

WAIT_CAP = 60.0  # seconds a blocked thread may take before the test fails instead of hanging


class GatedEmbedder(HashingEmbedder):
    """The hashing embedder behind a gate: it records every text, and once ``free`` calls are spent each call
    blocks until :attr:`gate` opens (never opened: the test fails after WAIT_CAP seconds instead of hanging)."""

    def __init__(self, free: int = 10**9) -> None:
        super().__init__()
        self.free = free
        self.gate = threading.Event()
        self.blocked = threading.Event()
        self.texts: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if self.free <= 0 and not self.gate.is_set():
            self.blocked.set()
            if not self.gate.wait(WAIT_CAP):
                raise AssertionError("the embedder was kept waiting: a search waited for embedding")
        self.free -= 1
        self.texts.extend(texts)
        return super().embed_documents(texts)


def _config(ws: Path) -> Config:
    return hash_config(ws)


def _first_hour_workspace(demo_workspace: Path) -> Config:
    """The demo with USER.md, a dated note with a slug, a note in a folder, and its sessions as a source."""
    (demo_workspace / "USER.md").write_text("# User\n\nPrefers short answers. Lives in Lisbon.\n", encoding="utf-8")
    return load_config(workspace=demo_workspace, sessions_dir=demo_workspace / "sessions",
                       overrides={"embedding": {"provider": "hash"}, "sources": ["memory", "sessions"]})


def _category(path: str) -> tuple[int, str]:
    if path in ("MEMORY.md", "USER.md"):
        return 0, ""
    name = path.removeprefix("memory/")
    if path.startswith("memory/") and "/" not in name and name[:4].isdigit():
        return 1, name[:10]
    return (2, "") if path.startswith("memory/") or path.endswith(".md") else (3, "")


def test_pending_chunks_come_memory_and_user_first_then_dated_notes_newest_first_then_the_rest_then_sessions(
        demo_workspace: Path) -> None:
    cfg = _first_hour_workspace(demo_workspace)
    with MemoryEngine(cfg) as eng:
        eng.sync(embed=False)
        order = queries.pending_chunks(eng.store.conn)
        sources = dict(eng.store.conn.execute("SELECT id, source FROM chunks").fetchall())
        path_of = dict(eng.store.conn.execute("SELECT id, path FROM chunks").fetchall())
        assert queries.pending_chunks(eng.store.conn, limit=3) == order[:3]
    seq = [path_of[cid] for cid, _ in order]
    assert len(seq) == len(set(cid for cid, _ in order)) > 0
    kinds = [3 if sources[cid] != "memory" else _category(path_of[cid])[0] for cid, _ in order]
    assert kinds == sorted(kinds) and set(kinds) == {0, 1, 2, 3}  # every kind present, in this order
    dated = [_category(p)[1] for p, k in zip(seq, kinds, strict=True) if k == 1]
    assert dated == sorted(dated, reverse=True)  # newest first (a slugged note sorts by its date)
    head = seq.count("MEMORY.md") + seq.count("USER.md")
    assert set(seq[:head]) == {"MEMORY.md", "USER.md"}
    assert "memory/2026-11-27.md" in seq and seq.index("memory/2026-11-27.md") < seq.index("memory/2026-09-28.md")


def test_a_first_search_embeds_one_probe_chunk_and_says_what_is_left(demo_workspace: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api, "SEARCH_EMBED_BUDGET", 1e-9)  # the probe alone spends the budget
    embedder = GatedEmbedder()
    with MemoryEngine(_config(demo_workspace), embedder=embedder) as eng:
        resp = eng.search("heron migration")
        total = eng.store.counts()["chunks"]
        assert resp.results and resp.mode == "hybrid"
        # No speed known yet: one chunk is embedded (and timed), the rest is left for `memdeck index`.
        assert resp.not_embedded == total - 1 == eng.store.pending_count() > 0
        assert embed_rate(eng.store, embedder) is not None and resp.embed_seconds is not None
        embedded = {row[0] for row in eng.store.conn.execute("SELECT path FROM chunks WHERE embedded = 1")}
        assert embedded == {"MEMORY.md"}  # what the agent reads first has its vectors first
        payload = resp.to_json()
        assert payload["notEmbedded"] == total - 1 and "embedSeconds" in payload


def test_after_the_probe_a_first_search_embeds_what_fits_the_rest_of_its_budget(
        demo_workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api, "SEARCH_EMBED_BUDGET", 1e6)  # a fast embedder on a small workspace: all of it fits
    embedder = GatedEmbedder()
    with MemoryEngine(_config(demo_workspace), embedder=embedder) as eng:
        first = eng.search("heron migration")
        assert first.not_embedded == 0 and eng.store.pending_count() == 0
        again = eng.search("heron migration")
        assert [(h.path, h.start_line, round(h.score, 9)) for h in again.results] == [
            (h.path, h.start_line, round(h.score, 9)) for h in first.results]  # the same answer the next time


def test_a_search_embeds_everything_that_fits_its_budget(demo_workspace: Path, monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    monkeypatch.setattr(api, "SEARCH_EMBED_BUDGET", 1e6)  # no deadline: only the measured speed bounds it
    embedder = GatedEmbedder()
    with MemoryEngine(_config(demo_workspace), embedder=embedder) as eng:
        eng.sync(embed=False)
        with eng.store.transaction() as tx:
            queries.set_meta(tx, rate_key(embedder), "1e12")  # a fast machine: all of it fits
        resp = eng.search("heron migration")
        assert resp.not_embedded == 0 and eng.store.pending_count() == 0 and "notEmbedded" not in resp.to_json()


def test_a_slow_embedder_leaves_the_search_keyword_results_without_waiting(demo_workspace: Path) -> None:
    embedder = GatedEmbedder()
    with MemoryEngine(_config(demo_workspace), embedder=embedder) as eng:
        eng.sync(embed=False)
        with eng.store.transaction() as tx:
            queries.set_meta(tx, rate_key(embedder), "1")  # 1 char/s: not one chunk fits in the budget
        embedder.free = 0  # any call would block the search
        resp = eng.search("heron migration")
        chunks = eng.store.counts()["chunks"]
        assert resp.results and resp.not_embedded == chunks == eng.store.pending_count()
        assert resp.embed_seconds == queries.pending_chars(eng.store.conn)  # at 1 char/s
        assert not embedder.blocked.is_set()


def test_a_search_does_not_queue_behind_an_embedding_run_in_another_thread(demo_workspace: Path) -> None:
    embedder = GatedEmbedder(free=2)
    with MemoryEngine(_config(demo_workspace), embedder=embedder) as eng:
        eng.sync(embed=False)
        runner = threading.Thread(target=eng.sync)
        runner.start()
        try:
            assert embedder.blocked.wait(WAIT_CAP), "the embedding run never reached its third call"
            (demo_workspace / "memory" / "2026-11-27.md").write_text("# Fri 27 Nov\n\nheron kiln\n", encoding="utf-8")
            found: list[api.SearchResponse] = []
            searcher = threading.Thread(target=lambda: found.append(eng.search("heron")))
            searcher.start()
            searcher.join(WAIT_CAP)
            assert not searcher.is_alive(), "the search waited for the embedding run"
            (resp,) = found
            assert resp.results and resp.not_embedded > 0
            assert "the index is being embedded; results may be a moment old" in resp.warnings
        finally:
            embedder.gate.set()
            runner.join(WAIT_CAP)
        assert eng.store.pending_count() == 0  # the run went on to the end once let through


def test_an_interrupted_index_keeps_finished_groups_and_the_next_run_resumes(demo_workspace: Path) -> None:
    cfg = _config(demo_workspace)
    cancel = threading.Event()

    def stop_after_two_groups(p: SyncProgress) -> None:
        if p.phase == "embed" and p.done >= 2 * EMBED_GROUP:
            cancel.set()

    first = GatedEmbedder()
    with MemoryEngine(cfg, embedder=first) as eng:
        report = eng.sync(progress=stop_after_two_groups, cancel=cancel)
        total = eng.store.counts()["chunks"]
        assert report.cancelled and eng.store.pending_count() == total - 2 * EMBED_GROUP
        st = eng.status()
        assert st.vector_state == f"vectors {2 * EMBED_GROUP}/{total}"
        assert st.embedded_chunks == 2 * EMBED_GROUP and st.embed_seconds is not None
        assert st.to_dict()["embedded_chunks"] == 2 * EMBED_GROUP
    second = GatedEmbedder()
    with MemoryEngine(cfg, embedder=second) as eng:
        report = eng.sync()
        assert not report.cancelled and eng.store.pending_count() == 0
        assert not set(first.texts) & set(second.texts)  # nothing embedded twice: it went on where it stopped
        st = eng.status()
        assert st.vector_state == "ready" and st.embedded_chunks == total and st.embed_seconds is None


def test_cli_search_prints_the_note_on_stderr_and_json_says_not_embedded(demo_workspace: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMDECK_EMBEDDING_PROVIDER", "hash")
    monkeypatch.setattr(api, "SEARCH_EMBED_BUDGET", 0.0)  # the first search probes one chunk, the next embed none
    runner = CliRunner()
    result = runner.invoke(cli, ["--workspace", str(demo_workspace), "search", "heron"])
    assert result.exit_code == 0, result.output
    notes = [line for line in result.stderr.splitlines() if "not embedded yet" in line]
    assert len(notes) == 1 and notes[0].startswith("note: ") and "— `memdeck index` embeds them, ≈ " in notes[0]
    assert "not embedded" not in result.stdout
    result = runner.invoke(cli, ["--workspace", str(demo_workspace), "search", "--json", "heron"])
    payload = json.loads(result.stdout)
    assert payload["notEmbedded"] > 0 and payload["embedSeconds"] >= 0
    result = runner.invoke(cli, ["--workspace", str(demo_workspace), "status", "--json"])
    st = json.loads(result.stdout)
    assert st["vector_state"] == f"vectors {st['embedded_chunks']:,}/{st['chunks']:,}"
    assert st["embedded_chunks"] + st["pending_embeddings"] == st["chunks"] and st["embed_seconds"] is not None
    runner.invoke(cli, ["--workspace", str(demo_workspace), "index"])
    result = runner.invoke(cli, ["--workspace", str(demo_workspace), "search", "heron"])
    assert "not embedded yet" not in result.stderr


def test_the_note_reads_as_the_issue_asks() -> None:
    assert not_embedded_note(56, 39.2) == "56 chunks not embedded yet — `memdeck index` embeds them, ≈ 39 s"
    assert not_embedded_note(1554, 240.0) == "1,554 chunks not embedded yet — `memdeck index` embeds them, ≈ 4 min"
    assert not_embedded_note(1, None) == "1 chunk not embedded yet — `memdeck index` embeds them"
    assert (not_embedded_note(888, 1140.0, 4242)  # a `memdeck index` in another terminal is at it already
            == "888 chunks not embedded yet — another memdeck process (pid 4242) is embedding them, ≈ 19 min")
    assert (duration(0.2), duration(89), duration(3900)) == ("1 s", "89 s", "1 h 5 min")


def test_mcp_memory_search_says_not_embedded(demo_workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api, "SEARCH_EMBED_BUDGET", 1e-9)  # the probe alone spends the budget
    service = MemoryService(_config(demo_workspace))
    try:
        payload = service.search({"query": "heron"}).payload
        assert payload["results"] and payload["notEmbedded"] > 0
    finally:
        service.stop()


def test_while_embedding_a_keyword_match_without_vectors_keeps_its_keyword_score(demo_workspace: Path) -> None:
    # MEMORY.md is embedded first; a dated note that matches the words exactly has no vector yet. The vector leg
    # cannot see it, so it abstains: the note scores as in a keyword search, not 0.3 of that under vector noise.
    cancel = threading.Event()

    def stop(p: SyncProgress) -> None:
        if p.phase == "embed" and p.done >= EMBED_GROUP:
            cancel.set()

    with MemoryEngine(_config(demo_workspace)) as eng:
        eng.sync(progress=stop, cancel=cancel)
        assert eng.store.has_pending()
        keyword = {h.citation: h.score for h in eng.search("ERR_PG_53300", mode="keyword", ensure_fresh=False,
                                                           max_results=20, min_score=0).results}
        hybrid = eng.search("ERR_PG_53300", mode="hybrid", ensure_fresh=False, max_results=20, min_score=0).results
        waiting = {h.citation for h in hybrid if h.vector_score is None}
        pending = queries.unembedded_among(eng.store.conn, [int(r[0]) for r in eng.store.conn.execute(
            "SELECT id FROM chunks WHERE path = 'memory/2026-10-14.md'")])
        assert pending and waiting, "the incident note is not embedded yet and is found by its words"
        for h in hybrid:
            if h.citation in waiting:
                assert h.score == pytest.approx(keyword[h.citation]) and h.text_score == h.score
        assert hybrid[0].citation in waiting  # the exact code leads, as in a keyword search


def test_index_progress_counts_the_index_chunks_and_the_work_moves_through_the_line_phase(
        demo_workspace: Path) -> None:
    # One total for the whole run (the bar read 0/98, then 8/92 in the head, then 98), and a work count that goes on
    # while the head's line vectors are embedded and no chunk is counted (the CLI's ETA read 0:00:02 for ~20 s).
    events: list[SyncProgress] = []
    with MemoryEngine(_config(demo_workspace)) as eng:
        eng.sync(progress=events.append)
        chunks = eng.store.counts()["chunks"]
    embed = [p for p in events if p.phase == "embed"]
    assert embed and {p.total for p in embed} == {chunks}
    assert len({p.work_total for p in embed}) == 1 and embed[0].work_total > 0
    assert all(a.work_done <= b.work_done and a.done <= b.done for a, b in pairwise(embed))
    assert embed[-1].done == chunks and embed[-1].work_done == embed[-1].work_total
    held = [(a, b) for a, b in pairwise(embed) if a.done == b.done and b.work_done > a.work_done]
    assert held  # the line phase: the work moved while the chunk count held


def test_the_work_moves_inside_a_group_in_slices_of_about_a_second(demo_workspace: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # The bar moved once per group of 8 chunks (every ~8 s at 1.2k chars/s on 2 loaded cores: rate and ETA froze);
    # paced slices report the group's share as it goes. TARGET 0 makes every slice one text: no clock involved.
    from engine.index.indexer import _Pace

    monkeypatch.setattr(_Pace, "TARGET", 0.0)
    events: list[SyncProgress] = []
    with MemoryEngine(_config(demo_workspace)) as eng:
        eng.sync(progress=events.append)
    embed = [p for p in events if p.phase == "embed"]
    assert all(a.work_done <= b.work_done and a.done <= b.done for a, b in pairwise(embed))
    assert embed[-1].work_done == embed[-1].work_total
    inside = [b for a, b in pairwise(embed) if a.done == b.done and b.work_done > a.work_done]
    groups = len({p.done for p in embed})
    assert len(inside) > 3 * groups  # many moves per group, in the window phases as in the line phase


def test_a_paced_slice_holds_about_a_second_of_text() -> None:
    from engine.index.indexer import EMBED_SLICE, _Pace

    items = [(str(i), "x" * 100) for i in range(400)]
    pace = _Pace(True)
    assert pace.end(items, 0) == _Pace.FIRST // 100  # before any speed is known
    pace.took(items[:20], 4.0)  # 2,000 characters in 4 s: 500 a second
    assert pace.end(items, 20) == 25
    assert _Pace(True).end([("a", "y" * 50_000)], 0) == 1  # a text longer than the budget still goes
    assert _Pace(False).end(items, 0) == EMBED_SLICE  # no progress reader: the old slices


def test_the_bar_shows_no_rate_for_a_phase_that_took_no_time() -> None:
    from memdeck.cli import progress_rate

    assert progress_rate(SyncProgress("files", 121, 121, None), 1e-6) == ""  # was "121000000.0/s"
    assert progress_rate(SyncProgress("files", 121, 121, None), 2.0) == "60.5/s"
    assert progress_rate(SyncProgress("embed", 8, 912, None, 3_000, 900_000), 2.0) == "1.5k chars/s"
