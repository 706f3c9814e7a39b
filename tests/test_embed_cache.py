"""Embedding less, in the right shape: length buckets, the query cache, line policy."""

from __future__ import annotations

from pathlib import Path

from engine.api import MemoryEngine, SyncProgress
from engine.embed.batching import QueryCache, length_batches, normalize_query, padding_ratio
from engine.index.embed_plan import LinePolicy, pick_lines
from tests.helpers import CountingHash, hash_config


def _fake_vec(text: str) -> list[float]:
    return [float(len(text)), float(sum(map(ord, text)) % 97)]


class Recorder:
    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [_fake_vec(t) for t in texts]


def test_length_batches_group_neighbouring_lengths_under_budget() -> None:
    tokens = [500, 15, 480, 12, 20, 510, 14]
    batches = length_batches(tokens, max_items=4, max_tokens=1000)
    flat = [i for b in batches for i in b]
    assert sorted(flat) == list(range(len(tokens)))
    for b in batches:
        assert len(b) <= 4
        assert len(b) == 1 or sum(tokens[i] for i in b) <= 1000
    # the short ones never share a batch with a long one
    assert all(max(tokens[i] for i in b) < 100 or min(tokens[i] for i in b) > 100 for b in batches)
    assert padding_ratio(tokens, batches) < padding_ratio(tokens, [list(range(len(tokens)))])


def test_query_cache_hits_by_normalised_text_and_evicts_oldest() -> None:
    cache = QueryCache(size=2)
    seen: list[str] = []

    def embed(text: str) -> list[float]:
        seen.append(text)
        return _fake_vec(text)

    v1 = cache.get_or_embed("deploy  the\tserver ", embed)
    v2 = cache.get_or_embed("deploy the server", embed)
    assert v1 == v2 and seen == ["deploy the server"]
    assert (cache.hits, cache.misses) == (1, 1)
    v2.append(99.0)  # a caller's change does not reach the cache
    assert cache.get_or_embed("deploy the server", embed) == v1
    cache.get_or_embed("b", embed)
    cache.get_or_embed("c", embed)  # evicts "deploy the server"
    assert len(cache) == 2
    cache.get_or_embed("deploy the server", embed)
    assert seen.count("deploy the server") == 2
    assert normalize_query("Cafe\u0301  x") == "Café x"


def test_line_policy_drops_short_lines() -> None:
    text = "# Notes\n\n- done\n- the nightly backup job now rotates the logs on the storage box before it runs\n"
    every = pick_lines(text, lambda ts: [len(t.split()) for t in ts], LinePolicy())
    long_only = pick_lines(text, lambda ts: [len(t.split()) for t in ts], LinePolicy(min_tokens=5))
    assert {t for _, t in long_only} <= {t for _, t in every}
    assert all(len(t.split()) >= 5 for _, t in long_only)


def test_line_policy_identity_keeps_the_default_index(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    assert LinePolicy().identity() == {}
    monkeypatch.setenv("MEMDECK_LINE_MIN_TOKENS", "6")
    assert LinePolicy.from_env() == LinePolicy(min_tokens=6)
    assert LinePolicy.from_env().identity() == {"line_min_tokens": 6}
    monkeypatch.setenv("MEMDECK_LINE_MIN_TOKENS", "many")
    assert LinePolicy.from_env() == LinePolicy()


def test_e5_query_cache_skips_the_model_for_a_repeated_query() -> None:
    from engine.embed.local import E5Embedder

    emb = E5Embedder()
    first = emb.embed_query("when is the  release freeze?")
    again = emb.embed_query(" when is the release freeze? ")
    assert again == first
    assert (emb.query_cache.hits, emb.query_cache.misses) == (1, 1)
    other = emb.embed_query("who owns the backup job")
    assert other != first and emb.query_cache.misses == 2



def _repeating_workspace(root: Path) -> Path:
    ws = root / "ws"
    (ws / "memory").mkdir(parents=True)
    shared = "- the nightly backup job rotates the logs on the storage box first"
    for i in range(6):
        (ws / "memory" / f"2026-02-{i + 1:02d}.md").write_text(
            f"# Day {i}\n\n{shared}\n- worked on topic{i} with person{i % 3}\n- shipped build {i} to staging\n")
    return ws


def test_a_text_repeated_across_files_is_embedded_once(tmp_path: Path) -> None:
    ws = _repeating_workspace(tmp_path)
    emb = CountingHash()
    with MemoryEngine(hash_config(ws), embedder=emb) as eng:
        report = eng.sync()
        assert eng.pending_embeddings() == 0
    assert report.embedded == len(emb.seen) > 0
    assert len(emb.seen) == len(set(emb.seen))
    assert sum(1 for t in emb.seen if "nightly backup job" in t and t.startswith("- ")) == 1


def test_the_vector_cache_survives_a_rebuild(tmp_path: Path) -> None:
    ws = _repeating_workspace(tmp_path)
    with MemoryEngine(hash_config(ws), embedder=CountingHash()) as eng:
        eng.sync()
    emb = CountingHash()
    with MemoryEngine(hash_config(ws), embedder=emb) as eng:
        report = eng.sync(force=True)
        hits = eng.search("nightly backup", mode="vector").results
    assert emb.seen == [] and report.embedded == 0 and report.from_cache > 0
    assert hits


def _head_workspace(root: Path) -> Path:
    ws = root / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n\n- Sanna prefers metrics in milliseconds\n- the backup box is nas-2\n")
    (ws / "USER.md").write_text("# User\n\n- Name: Sanna\n- Timezone: Europe/Helsinki\n")
    for day in range(1, 18):  # 17 dated notes: the 14 newest are read first, the 3 oldest are not
        (ws / "memory" / f"2026-03-{day:02d}.md").write_text(
            f"# 2026-03-{day:02d}\n\n- deployed build {day} to staging\n- reviewed the retry loop of worker {day}\n")
    (ws / "memory" / "projects.md").write_text("# Projects\n\n- the ingest pipeline moves to Kafka\n- owner Priya\n")
    return ws


def test_memory_user_and_the_newest_notes_get_their_windows_before_any_line(tmp_path: Path) -> None:
    from engine.index.chunking import plan_lines

    ws = _head_workspace(tmp_path)
    emb = CountingHash()
    with MemoryEngine(hash_config(ws), embedder=emb) as eng:
        eng.sync()
        conn = eng.store.conn
        head_paths = {"MEMORY.md", "USER.md", *(f"memory/2026-03-{d:02d}.md" for d in range(4, 18))}
        rows = conn.execute("SELECT id, path, text FROM chunks").fetchall()
        lines = {t for _id, _p, text in rows for _o, t in plan_lines(text)}
        first_line = next(i for i, t in enumerate(emb.seen) if t in lines)
        # Every text before the first line vector is a window of a head chunk (its whole text: chunks are short).
        head_texts = {text for _id, path, text in rows if path in head_paths}
        assert first_line >= len(head_texts) > 0
        assert set(emb.seen[:first_line]) == head_texts
        # The rest came after the head's lines, and every chunk that plans lines has its line vectors.
        rest_texts = {text for _id, path, text in rows if path not in head_paths}
        assert min(emb.seen.index(t) for t in rest_texts) > max(
            emb.seen.index(t) for _id, path, text in rows if path in head_paths for _o, t in plan_lines(text))
        with_lines = {int(r[0]) for r in conn.execute("SELECT DISTINCT chunk_id FROM line_vectors")}
        assert with_lines == {int(i) for i, _p, text in rows if plan_lines(text)}
        assert eng.pending_embeddings() == 0 and len(emb.seen) == len(set(emb.seen))


def test_an_index_stopped_after_the_head_windows_adds_their_lines_next_time(tmp_path: Path) -> None:
    import threading

    from engine.index.chunking import plan_lines

    ws = _head_workspace(tmp_path)
    cfg = hash_config(ws)
    cancel = threading.Event()
    first = CountingHash()
    with MemoryEngine(cfg, embedder=first) as eng:
        eng.sync(embed=False)
        head = eng.store.conn.execute("SELECT count(*) FROM chunks WHERE path NOT IN ('memory/2026-03-01.md',"
                                      " 'memory/2026-03-02.md', 'memory/2026-03-03.md', 'memory/projects.md')"
                                      ).fetchone()[0]

        def stop_after_the_head(p: SyncProgress) -> None:
            if p.phase == "embed" and p.done >= head:
                cancel.set()

        report = eng.sync(progress=stop_after_the_head, cancel=cancel)
        assert report.cancelled and eng.store.pending_count() == eng.store.counts()["chunks"] - head
        # Searchable by meaning already: windows for the head, no line vectors yet.
        assert eng.store.conn.execute("SELECT count(*) FROM line_vectors").fetchone()[0] == 0
    second = CountingHash()
    with MemoryEngine(cfg, embedder=second) as eng:
        eng.sync()
        conn = eng.store.conn
        rows = conn.execute("SELECT id, text FROM chunks").fetchall()
        with_lines = {int(r[0]) for r in conn.execute("SELECT DISTINCT chunk_id FROM line_vectors")}
        assert with_lines == {int(i) for i, text in rows if plan_lines(text)} != set()
        assert not set(first.seen) & set(second.seen) and eng.pending_embeddings() == 0
