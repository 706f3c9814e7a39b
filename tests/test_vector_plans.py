"""``[index] vectors``: which texts each plan embeds, a changed plan re-embeds only what it changes, the rule."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import pytest

from engine.api import MemoryEngine
from engine.config import load_config
from engine.embed.choice import HashingEmbedder
from engine.errors import ConfigError
from engine.index.embed_plan import LinePolicy, mean_vector
from engine.index.indexer import plan_group
from engine.index.store import deserialize_vector
from tests.helpers import CountingHash, hash_config

CHUNK = ("# Backups\n\n- the nightly backup job rotates the logs on nas-2 first\n"
         "- restores are tested every friday by priya\n- ok\n- offsite copies go to the cold storage bucket weekly")
LINES = ("- the nightly backup job rotates the logs on nas-2 first", "- restores are tested every friday by priya",
         "- offsite copies go to the cold storage bucket weekly")  # "- ok" and the heading are too short


def words(texts: Sequence[str]) -> list[int]:
    return [len(t.split()) for t in texts]


def test_each_plan_embeds_its_own_texts() -> None:
    chunks = [(1, CHUNK), (2, "- a single line chunk about the release freeze")]
    today = plan_group(chunks, words, 512, "windows+lines", LinePolicy())
    assert set(today.texts.values()) == {CHUNK, chunks[1][1], *LINES}
    assert [w[4] for w in today.windows] == [(), ()] and len(today.lines) == 3

    windows = plan_group(chunks, words, 512, "windows", LinePolicy())
    assert set(windows.texts.values()) == {CHUNK, chunks[1][1]} and windows.lines == []

    for name in ("lines",):
        derived = plan_group(chunks, words, 512, name, LinePolicy())
        # The chunk costs only its lines; the one-line chunk embeds its own text (it is its line).
        assert set(derived.texts.values()) == {*LINES, chunks[1][1]}, name
        (_, first, last, _h, members, weights), single = derived.windows
        assert (first, last) == (0, CHUNK.count("\n")) and len(members) == 3 and single[4] == ()
        assert weights == (11.0, 8.0, 10.0)  # token-weighted

    fewer = plan_group(chunks, words, 512, "windows+lines", LinePolicy(min_tokens=9))
    assert len(fewer.lines) == 2 and set(fewer.texts.values()) == {CHUNK, chunks[1][1], LINES[0], LINES[2]}


def test_a_derived_window_is_split_where_the_chunk_is_too_long_for_the_model() -> None:
    long = "\n".join(f"- line {i} of a long list about the storage migration plan" for i in range(12))
    gp = plan_group([(1, long)], words, 40, "lines", LinePolicy())
    assert len(gp.windows) > 1 and all(w[4] for w in gp.windows)
    assert set(gp.texts.values()) == {ln for ln in long.split("\n")}  # no window text at all


def test_mean_vector_is_the_unit_weighted_mean() -> None:
    v = mean_vector([[1.0, 0.0], [0.0, 1.0]], [3.0, 1.0])
    assert math.isclose(math.hypot(*v), 1.0) and math.isclose(v[0] / v[1], 3.0)


def test_a_padded_mean_scores_a_query_by_the_lines_mean_cosine() -> None:
    s = 0.5 ** 0.5
    lines = [[1.0, 0.0, 0.0], [s, s, 0.0]]  # unit vectors, both orthogonal to the null direction (0, 0, 1)
    w = mean_vector(lines, [1.0, 1.0], null=[0.0, 0.0, 1.0])
    assert math.isclose(sum(x * x for x in w), 1.0)
    for q in ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [s, -s, 0.0]):  # queries are orthogonal to it too
        mean_cos = sum(sum(a * b for a, b in zip(q, v, strict=True)) for v in lines) / 2
        assert math.isclose(sum(a * b for a, b in zip(q, w, strict=True)), mean_cos, abs_tol=1e-12)
    half = mean_vector(lines, [1.0, 1.0], null=[0.0, 0.0, 1.0], power=0.5)
    size = math.hypot(*(sum(v[i] for v in lines) / 2 for i in range(3)))
    assert math.isclose(sum(a * b for a, b in zip([1.0, 0.0, 0.0], half, strict=True)),
                        (1 + s) / 2 / size ** 0.5, rel_tol=1e-12)
    plain = mean_vector(lines, [1.0, 1.0])
    assert sum(a * b for a, b in zip([1.0, 0.0, 0.0], plain, strict=True)) > (1 + s) / 2  # inflated


def test_the_shipped_null_direction_of_the_default_model() -> None:
    from engine.embed.nulldir import known_null_direction

    u = known_null_direction("multilingual-e5-small", 384)
    assert u is not None and math.isclose(sum(x * x for x in u), 1.0, rel_tol=1e-5)
    assert known_null_direction("multilingual-e5-small", 768) is None
    assert known_null_direction("hashing-v1", 256) is None



def _workspace(root: Path) -> Path:
    ws = root / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "backups.md").write_text(CHUNK + "\n")
    (ws / "memory" / "2026-03-02.md").write_text("# 2026-03-02\n\n- moved the ingest pipeline to kafka today\n"
                                                  "- priya owns the rollout and the dashboards\n")
    return ws


def _window_vectors(eng: MemoryEngine) -> list[list[float]]:
    rows = eng.store.conn.execute("SELECT embedding FROM chunks_vec ORDER BY rowid").fetchall()
    return [deserialize_vector(r[0]) for r in rows]


def test_a_changed_plan_rebuilds_from_the_cache_and_embeds_only_new_texts(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    first = CountingHash()
    with MemoryEngine(hash_config(ws, index={"vectors": "lines"}), embedder=first) as eng:
        eng.sync()
        lines = eng.store.conn.execute("SELECT count(*) FROM line_vectors").fetchone()[0]
        derived = _window_vectors(eng)
    assert lines == 6 and CHUNK not in first.seen and LINES[0] in first.seen
    # The backups window is the token-weighted mean of its three lines' vectors.
    emb = HashingEmbedder()
    expect = mean_vector(emb.embed_documents(list(LINES)), [float(n) for n in emb.count_tokens(list(LINES))])
    assert any(max(abs(a - b) for a, b in zip(v, expect, strict=True)) < 1e-5 for v in derived)

    second = CountingHash()
    with MemoryEngine(hash_config(ws), embedder=second) as eng:  # back to windows+lines: only the windows are new
        assert eng.needs_rebuild()
        report = eng.sync()
        assert report.rebuilt and eng.pending_embeddings() == 0
        assert eng.store.conn.execute("SELECT count(*) FROM line_vectors").fetchone()[0] == 6
        chunk_texts = [r[0] for r in eng.store.conn.execute("SELECT text FROM chunks")]
    assert sorted(second.seen) == sorted(chunk_texts) and len(chunk_texts) == 2  # each chunk is one window

    fourth = CountingHash()
    for power, changed in ((1.0, True), (1.0, False), (0.25, True)):  # the power changes every derived window
        with MemoryEngine(hash_config(ws, index={"vectors": "lines", "lines_power": power}), embedder=fourth) as eng:
            assert eng.needs_rebuild() is changed
            eng.sync()
    assert fourth.seen == []  # every line came from the cache

    third = CountingHash()
    with MemoryEngine(hash_config(ws, index={"vectors": "windows"}), embedder=third) as eng:  # no line vectors
        assert eng.needs_rebuild()
        eng.sync()
        assert eng.store.conn.execute("SELECT count(*) FROM line_vectors").fetchone()[0] == 0
        assert eng.search("nightly backup", mode="vector").results
    assert third.seen == []  # every window came from the cache


def test_the_rule_refuses_an_unknown_plan_and_one_without_line_vectors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"index\.vectors: unknown vector plan 'everything'.*"
                                          r"\(known: windows\+lines, windows, lines\)"):
        load_config(workspace=tmp_path, overrides={"index": {"vectors": "everything"}})
    with pytest.raises(ConfigError, match=r"index\.vectors: 'lines' needs line vectors"):
        load_config(workspace=tmp_path, overrides={"index": {"vectors": "lines"}, "chunking": {"line_vectors": False}})
    with pytest.raises(ConfigError, match=r"index\.line_min_tokens"):
        load_config(workspace=tmp_path, overrides={"index": {"line_min_tokens": -1}})
    ok = load_config(workspace=tmp_path, overrides={"index": {"vectors": "windows"}, "chunking": {"line_vectors": False}})
    assert ok.index.vectors == "windows"
