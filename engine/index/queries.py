"""Every SQL statement the engine runs on an index, as named functions on a connection.

Each function takes the connection (``store.conn``, or the one ``store.transaction()`` yields, or a raw one
from ``connect_raw``) as its first argument and neither commits nor begins: the caller decides what one
transaction holds. Lists of ids are sent in slices of :data:`SLICE` so no statement exceeds SQLite's
parameter limit. The tables themselves are in :mod:`engine.index.schema`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

SLICE = 500
"""Ids per ``IN (…)`` list (SQLite allows 999 parameters in older builds)."""

Conn = Any
"""A ``sqlite3`` or ``sqlean`` connection (both have the same API; neither is typed the same)."""


def _marks(n: int) -> str:
    return ",".join("?" * n)


def _slices(ids: Sequence[int]) -> Iterator[list[int]]:
    items = list(ids)
    for start in range(0, len(items), SLICE):
        yield items[start : start + SLICE]


def _ids(conn: Conn, sql: str, params: Sequence[Any] = ()) -> set[int]:
    return {int(r[0]) for r in conn.execute(sql, params)}


def _changed(cur: Any) -> int:
    return max(int(cur.rowcount or 0), 0)


# -- meta ---------------------------------------------------------------------------------------------
def get_meta(conn: Conn, key: str) -> str | None:
    """A value from ``meta``."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def set_meta(conn: Conn, key: str, value: str) -> None:
    """Store a value in ``meta``."""
    conn.execute("INSERT OR REPLACE INTO meta VALUES(?, ?)", (key, value))


def delete_meta(conn: Conn, key: str) -> None:
    """Forget a ``meta`` value."""
    conn.execute("DELETE FROM meta WHERE key = ?", (key,))


def bump_vec_generation(conn: Conn) -> None:
    """Mark that vectors were added or removed (in-memory copies reload).

    A random token rather than a counter, so an index rebuilt elsewhere can never repeat a value.
    """
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES('vec_generation', lower(hex(randomblob(8))))")


# -- files --------------------------------------------------------------------------------------------
def file_states(conn: Conn) -> dict[str, tuple[str, int, int]]:
    """Indexed path → (content hash, mtime_ns, size)."""
    return {str(r[0]): (str(r[1]), int(r[2]), int(r[3])) for r in
            conn.execute("SELECT path, hash, mtime_ns, size FROM files")}


def unembedded_among(conn: Conn, ids: Sequence[int]) -> set[int]:
    """The chunks among ``ids`` that have no vectors yet (an index still being embedded)."""
    out: set[int] = set()
    items = list(ids)
    for start in range(0, len(items), SLICE):
        part = items[start : start + SLICE]
        out.update(int(r[0]) for r in conn.execute(
            f"SELECT id FROM chunks WHERE embedded = 0 AND id IN ({_marks(len(part))})", part))
    return out


def file_hashes(conn: Conn, paths: Sequence[str]) -> dict[str, str]:
    """Indexed path → content hash, for these paths (those not indexed are left out)."""
    out: dict[str, str] = {}
    items = list(paths)
    for start in range(0, len(items), SLICE):
        part = items[start : start + SLICE]
        out.update((str(r[0]), str(r[1])) for r in
                   conn.execute(f"SELECT path, hash FROM files WHERE path IN ({_marks(len(part))})", part))
    return out


def file_stats(conn: Conn) -> dict[str, tuple[int, int]]:
    """Indexed path → (mtime_ns, size): what freshness checks compare with the disk."""
    return {str(r[0]): (int(r[1]), int(r[2])) for r in conn.execute("SELECT path, mtime_ns, size FROM files")}


def file_count(conn: Conn) -> int:
    """How many files the index holds."""
    return int(conn.execute("SELECT count(*) FROM files").fetchone()[0])


def put_file(conn: Conn, path: str, source: str, digest: str, mtime_ns: int, size: int, chunks: int,
             decode_errors: int, indexed_at: float) -> None:
    """Record a file as indexed (replacing its old row)."""
    conn.execute(
        "INSERT OR REPLACE INTO files(path, source, hash, mtime_ns, size, chunks, decode_errors, indexed_at)"
        " VALUES (?,?,?,?,?,?,?,?)", (path, source, digest, mtime_ns, size, chunks, decode_errors, indexed_at))


def touch_file(conn: Conn, path: str, mtime_ns: int, size: int) -> None:
    """A file whose content did not change got a new mtime or size."""
    conn.execute("UPDATE files SET mtime_ns = ?, size = ? WHERE path = ?", (mtime_ns, size, path))


def delete_file(conn: Conn, path: str) -> int:
    """Drop a file's row (not its chunks: see :func:`delete_chunks_of`); rows deleted."""
    return _changed(conn.execute("DELETE FROM files WHERE path = ?", (path,)))


def undecodable_files(conn: Conn) -> list[tuple[str, int]]:
    """(path, bytes that were not UTF-8) of the files that had any, by path."""
    return [(str(r[0]), int(r[1])) for r in
            conn.execute("SELECT path, decode_errors FROM files WHERE decode_errors > 0 ORDER BY path")]


def mismatched_files(conn: Conn) -> list[str]:
    """Files whose row says another number of chunks than the index holds for them."""
    return [str(r[0]) for r in conn.execute(
        "SELECT f.path FROM files f LEFT JOIN (SELECT path, count(*) AS n FROM chunks GROUP BY path) c"
        " ON c.path = f.path WHERE f.chunks != coalesce(c.n, 0)")]


def has_other_sources(conn: Conn, sources: Sequence[str]) -> bool:
    """Whether any indexed file is from a source not in ``sources``."""
    return conn.execute(f"SELECT 1 FROM files WHERE source NOT IN ({_marks(len(sources))}) LIMIT 1",
                        tuple(sources)).fetchone() is not None


def daily_paths_like(conn: Conn, patterns: Sequence[str], sources: Sequence[str]) -> list[str]:
    """Paths under ``memory/`` matching any ``LIKE`` pattern, from the given sources."""
    if not patterns:
        return []
    likes = " OR ".join("path LIKE ?" for _ in patterns)
    return [str(r[0]) for r in conn.execute(
        f"SELECT path FROM files WHERE path LIKE 'memory/%' AND ({likes}) AND source IN ({_marks(len(sources))})",
        (*patterns, *sources))]


# -- chunks -------------------------------------------------------------------------------------------
def chunks_for_path(conn: Conn, path: str) -> list[int]:
    """The ids of a file's chunks."""
    return [int(r[0]) for r in conn.execute("SELECT id FROM chunks WHERE path = ?", (path,))]


def chunk_ids_for_paths(conn: Conn, paths: Sequence[str]) -> list[tuple[int, str]]:
    """(chunk id, path) of every chunk of these files."""
    out: list[tuple[int, str]] = []
    items = list(paths)
    for start in range(0, len(items), SLICE):
        part = items[start : start + SLICE]
        out.extend((int(r[0]), str(r[1])) for r in
                   conn.execute(f"SELECT id, path FROM chunks WHERE path IN ({_marks(len(part))})", part))
    return out


def insert_chunk(conn: Conn, path: str, source: str, start_line: int, end_line: int, digest: str, text: str,
                 line_map: str | None, fts_text: str, updated_at: float, importance: int | None = None) -> int:
    """Add a chunk (not yet embedded) with its FTS row; returns its id."""
    cur = conn.execute(
        "INSERT INTO chunks(path, source, start_line, end_line, hash, text, line_map, embedded, updated_at,"
        " importance) VALUES (?,?,?,?,?,?,?,0,?,?)",
        (path, source, start_line, end_line, digest, text, line_map, updated_at, importance))
    chunk_id = int(cur.lastrowid)
    insert_fts(conn, chunk_id, fts_text)
    return chunk_id


def chunk_rows(conn: Conn, ids: Sequence[int]
               ) -> list[tuple[int, str, str, int, int, str, str | None, int | None]]:
    """(id, path, source, start_line, end_line, text, line_map JSON, importance) of these chunks."""
    out: list[tuple[int, str, str, int, int, str, str | None, int | None]] = []
    for part in _slices(ids):
        out.extend((int(r[0]), str(r[1]), str(r[2]), int(r[3]), int(r[4]), str(r[5]), r[6],
                    None if r[7] is None else int(r[7])) for r in conn.execute(
            "SELECT id, path, source, start_line, end_line, text, line_map, importance FROM chunks"
            f" WHERE id IN ({_marks(len(part))})", part))
    return out


def existing_chunks(conn: Conn, ids: Sequence[int]) -> set[int]:
    """Which of these chunk ids still exist."""
    out: set[int] = set()
    for part in _slices(ids):
        out |= _ids(conn, f"SELECT id FROM chunks WHERE id IN ({_marks(len(part))})", part)
    return out


def chunk_count(conn: Conn) -> int:
    """How many chunks the index holds."""
    return int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])


def chunk_ids(conn: Conn) -> set[int]:
    """Every chunk id."""
    return _ids(conn, "SELECT id FROM chunks")


def embedded_chunk_ids(conn: Conn) -> set[int]:
    """The chunks marked embedded."""
    return _ids(conn, "SELECT id FROM chunks WHERE embedded = 1")


def unlisted_chunk_ids(conn: Conn) -> set[int]:
    """Chunks of files the index does not list (orphans)."""
    return _ids(conn, "SELECT id FROM chunks WHERE path NOT IN (SELECT path FROM files)")


def embedded_without_windows(conn: Conn) -> set[int]:
    """Chunks marked embedded that have no window (so no vector)."""
    return _ids(conn, "SELECT id FROM chunks WHERE embedded = 1 AND id NOT IN (SELECT chunk_id FROM windows)")


def chunks_without_fts(conn: Conn) -> list[tuple[int, str, str]]:
    """(id, text, source) of chunks that lost their FTS row."""
    return [(int(r[0]), str(r[1]), str(r[2])) for r in
            conn.execute("SELECT id, text, source FROM chunks WHERE id NOT IN (SELECT rowid FROM chunks_fts)")]


_DATED = "memory/[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*"
_EMBED_ORDER = (
    "CASE WHEN source != 'memory' THEN 3"
    " WHEN lower(path) IN ('memory.md', 'user.md') THEN 0"
    f" WHEN path GLOB '{_DATED}' AND path NOT GLOB 'memory/*/*' THEN 1"
    " ELSE 2 END,"
    f" CASE WHEN path GLOB '{_DATED}' AND path NOT GLOB 'memory/*/*' THEN substr(path, 8, 10) END DESC,"
    " path, start_line, id")
"""The order chunks are embedded in, so the first minutes serve what an agent reads first: ``MEMORY.md`` and
``USER.md``, then the dated notes (``memory/YYYY-MM-DD[-slug].md``) newest first, then the other notes, then
sessions last."""


def pending_chunks(conn: Conn, limit: int | None = None) -> list[tuple[int, str]]:
    """(id, text) of the chunks waiting for their vectors, in :data:`_EMBED_ORDER` (the first ``limit``)."""
    sql = f"SELECT id, text FROM chunks WHERE embedded = 0 ORDER BY {_EMBED_ORDER}"
    if limit is not None:
        sql += f" LIMIT {max(0, int(limit))}"
    return [(int(r[0]), str(r[1])) for r in conn.execute(sql)]


HEAD_NOTES = 14
"""The dated notes embedded first with ``MEMORY.md`` and ``USER.md``: the newest 14 (two weeks of daily notes)."""


def _head_sql(notes: int) -> tuple[str, tuple[int]]:
    dated = f"source = 'memory' AND path GLOB '{_DATED}' AND path NOT GLOB 'memory/*/*'"
    return (f"path IN (SELECT path FROM files WHERE source = 'memory' AND lower(path) IN ('memory.md', 'user.md')"
            f" UNION ALL SELECT path FROM (SELECT path FROM files WHERE {dated}"
            " ORDER BY substr(path, 8, 10) DESC, path LIMIT ?))", (max(0, int(notes)),))


def pending_head_count(conn: Conn, notes: int = HEAD_NOTES) -> int:
    """How many chunks waiting for vectors are ``MEMORY.md``/``USER.md`` or one of the ``notes`` newest dated notes
    (what an agent reads first). They lead :data:`_EMBED_ORDER`, so they are the first ones :func:`pending_chunks`
    returns."""
    where, args = _head_sql(notes)
    return int(conn.execute(f"SELECT count(*) FROM chunks WHERE embedded = 0 AND {where}", args).fetchone()[0])


def head_without_lines(conn: Conn, notes: int = HEAD_NOTES) -> list[tuple[int, str]]:
    """(id, text) of the embedded chunks of ``MEMORY.md``, ``USER.md`` and the ``notes`` newest dated notes that have
    no line vectors (their windows were embedded first; a one-line chunk never gets any), in embedding order."""
    where, args = _head_sql(notes)
    return [(int(r[0]), str(r[1])) for r in conn.execute(
        f"SELECT id, text FROM chunks WHERE embedded = 1 AND {where}"
        f" AND NOT EXISTS (SELECT 1 FROM line_vectors WHERE chunk_id = chunks.id) ORDER BY {_EMBED_ORDER}", args)]


def pending_chars(conn: Conn) -> int:
    """How many characters of chunk text wait for their vectors (what an embedding run costs)."""
    return int(conn.execute("SELECT coalesce(sum(length(text)), 0) FROM chunks WHERE embedded = 0").fetchone()[0])


def has_pending(conn: Conn) -> bool:
    """Whether any chunk still waits for its vectors (cheap: stops at the first)."""
    return conn.execute("SELECT 1 FROM chunks WHERE embedded = 0 LIMIT 1").fetchone() is not None


def pending_count(conn: Conn) -> int:
    """How many chunks wait for their vectors."""
    return int(conn.execute("SELECT count(*) FROM chunks WHERE embedded = 0").fetchone()[0])


def pending_paths(conn: Conn) -> set[str]:
    """Files with at least one chunk waiting for its vectors."""
    return {str(r[0]) for r in conn.execute("SELECT DISTINCT path FROM chunks WHERE embedded = 0")}


def mark_embedded(conn: Conn, ids: Sequence[int]) -> None:
    """These chunks have their vectors."""
    for part in _slices(ids):
        conn.execute(f"UPDATE chunks SET embedded = 1 WHERE id IN ({_marks(len(part))})", part)


def mark_unembedded(conn: Conn, chunk_id: int) -> int:
    """Queue an embedded chunk to be embedded again; 1 when it was marked embedded."""
    return _changed(conn.execute("UPDATE chunks SET embedded = 0 WHERE id = ? AND embedded = 1", (chunk_id,)))


def delete_chunk_rows(conn: Conn, ids: Sequence[int]) -> int:
    """Delete chunk rows by id (nothing else); rows deleted."""
    return sum(_changed(conn.execute(f"DELETE FROM chunks WHERE id IN ({_marks(len(part))})", part))
               for part in _slices(ids))


def delete_chunks(conn: Conn, ids: Sequence[int], vec: bool) -> None:
    """Delete chunks with their FTS rows, windows, line vectors and (with ``vec``) vectors."""
    for part in _slices(ids):
        delete_fts(conn, part)
        if vec:
            delete_vectors(conn, part)
        delete_windows(conn, part)
        delete_line_vectors(conn, part)
    delete_chunk_rows(conn, ids)
    if vec and ids:
        bump_vec_generation(conn)


def delete_chunks_of(conn: Conn, path: str, vec: bool) -> None:
    """Remove a file's chunks with their FTS rows, windows and vectors (the file's row stays)."""
    delete_chunks(conn, chunks_for_path(conn, path), vec)


# -- full-text search -----------------------------------------------------------------------------------
def insert_fts(conn: Conn, rowid: int, text: str) -> None:
    """Add a chunk's FTS row (``text`` already as :func:`engine.index.fts.fts_text` stores it)."""
    conn.execute("INSERT INTO chunks_fts(rowid, text) VALUES (?, ?)", (rowid, text))


def delete_fts(conn: Conn, rowids: Sequence[int]) -> int:
    """Delete FTS rows by rowid; rows deleted."""
    return sum(_changed(conn.execute(f"DELETE FROM chunks_fts WHERE rowid IN ({_marks(len(part))})", part))
               for part in _slices(rowids))


def fts_rowids(conn: Conn) -> set[int]:
    """Every FTS rowid."""
    return _ids(conn, "SELECT rowid FROM chunks_fts")


def fts_match(conn: Conn, match: str, limit: int) -> list[tuple[int, float]]:
    """(chunk id, raw ``bm25()`` rank: negative, lower is better) of the top ``limit`` matches."""
    return [(int(r[0]), float(r[1])) for r in conn.execute(
        "SELECT rowid, bm25(chunks_fts) AS r FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY r LIMIT ?",
        (match, limit))]


def fts_match_in_sources(conn: Conn, match: str, sources: Sequence[str], limit: int) -> list[tuple[int, float]]:
    """:func:`fts_match` restricted to chunks of the given sources (a join that doubles FTS5's cost)."""
    return [(int(r[0]), float(r[1])) for r in conn.execute(
        "SELECT f.rowid, bm25(chunks_fts) AS r FROM chunks_fts f JOIN chunks c ON c.id = f.rowid"
        f" WHERE chunks_fts MATCH ? AND c.source IN ({_marks(len(sources))}) ORDER BY r LIMIT ?",
        (match, *sources, limit))]


def fts_match_count(conn: Conn, match: str, cap: int) -> int:
    """How many chunks match, counting no further than ``cap``."""
    return int(conn.execute("SELECT count(*) FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)",
                            (match, cap)).fetchone()[0])


def fts_probe(conn: Conn) -> None:
    """Run one cheap MATCH (raises when the FTS index is unusable)."""
    conn.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'x'").fetchone()


def fts_check_or_rebuild(conn: Conn) -> bool:
    """FTS5's own integrity check; on any failure the FTS index is rebuilt from its rows. True when rebuilt."""
    try:
        conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES('integrity-check')")
    except Exception:  # any failure means the FTS index is inconsistent
        conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES('rebuild')")
        return True
    return False


# -- windows and vectors -----------------------------------------------------------------------------------
def windows(conn: Conn) -> list[tuple[int, int]]:
    """(window id, chunk id) of every embedding window."""
    return [(int(r[0]), int(r[1])) for r in conn.execute("SELECT id, chunk_id FROM windows")]


def window_count(conn: Conn) -> int:
    """How many embedding windows (= vectors) the index holds."""
    return int(conn.execute("SELECT count(*) FROM windows").fetchone()[0])


def window_ids_for(conn: Conn, chunk_ids: Sequence[int]) -> list[int]:
    """The window ids (= vector rowids) of these chunks."""
    out: list[int] = []
    for part in _slices(chunk_ids):
        out.extend(int(r[0]) for r in conn.execute(f"SELECT id FROM windows WHERE chunk_id IN ({_marks(len(part))})",
                                                   part))
    return out


def window_sources(conn: Conn) -> dict[int, tuple[int, int, int, str]]:
    """Window id → (chunk id, first line, last line, source) for every window."""
    return {int(r[0]): (int(r[1]), int(r[2]), int(r[3]), str(r[4])) for r in conn.execute(
        "SELECT w.id, w.chunk_id, w.first_line, w.last_line, c.source FROM windows w JOIN chunks c ON c.id = w.chunk_id")}


def insert_window(conn: Conn, chunk_id: int, first_line: int, last_line: int, digest: str) -> int:
    """Add an embedding window; returns its id (its vector's rowid)."""
    cur = conn.execute("INSERT INTO windows(chunk_id, first_line, last_line, hash) VALUES (?,?,?,?)",
                       (chunk_id, first_line, last_line, digest))
    return int(cur.lastrowid)


def delete_windows(conn: Conn, chunk_ids: Sequence[int]) -> int:
    """Delete the windows of these chunks (not their vectors: see :func:`delete_vectors`); rows deleted."""
    return sum(_changed(conn.execute(f"DELETE FROM windows WHERE chunk_id IN ({_marks(len(part))})", part))
               for part in _slices(chunk_ids))


def delete_windows_by_id(conn: Conn, window_ids: Sequence[int]) -> int:
    """Delete windows by their own id; rows deleted."""
    return sum(_changed(conn.execute(f"DELETE FROM windows WHERE id IN ({_marks(len(part))})", part))
               for part in _slices(window_ids))


def insert_vector(conn: Conn, rowid: int, blob: bytes) -> None:
    """Store a window's vector (float32 bytes) under the window's id."""
    conn.execute("INSERT INTO chunks_vec(rowid, embedding) VALUES (?, ?)", (rowid, blob))


def vector_rowids(conn: Conn) -> set[int]:
    """Every vector rowid in ``chunks_vec``."""
    return _ids(conn, "SELECT rowid FROM chunks_vec")


def all_vectors(conn: Conn) -> Iterator[tuple[int, bytes]]:
    """(rowid, float32 bytes) of every vector, streamed."""
    for rowid, blob in conn.execute("SELECT rowid, embedding FROM chunks_vec"):
        yield int(rowid), blob


def delete_vectors_by_rowid(conn: Conn, rowids: Iterable[int]) -> int:
    """Delete vectors one explicit rowid at a time; rows deleted.

    ``DELETE FROM chunks_vec WHERE rowid IN (SELECT …)`` makes vec0 scan its whole table (63 ms per chunk at
    14k vectors, quadratic over a build); a delete per known rowid is cheap.
    """
    params = [(int(r),) for r in rowids]
    if not params:
        return 0
    return _changed(conn.executemany("DELETE FROM chunks_vec WHERE rowid = ?", params))


def delete_vectors(conn: Conn, chunk_ids: Sequence[int]) -> int:
    """Delete the vectors of these chunks' windows, by rowid (see :func:`delete_vectors_by_rowid`)."""
    return delete_vectors_by_rowid(conn, window_ids_for(conn, chunk_ids))


def vec_knn(conn: Conn, query_blob: bytes, k: int, sources: Sequence[str]) -> list[tuple[int, float | None, int, int]]:
    """sqlite-vec's ``k`` nearest windows: (chunk id, cosine distance, first line, last line), nearest first,
    keeping chunks of the given sources."""
    return [(int(r[0]), None if r[1] is None else float(r[1]), int(r[2]), int(r[3])) for r in conn.execute(
        "SELECT w.chunk_id, v.distance, w.first_line, w.last_line FROM"
        " (SELECT rowid, distance FROM chunks_vec WHERE embedding MATCH ? AND k = ?) v"
        " JOIN windows w ON w.id = v.rowid JOIN chunks c ON c.id = w.chunk_id"
        f" WHERE c.source IN ({_marks(len(sources))}) ORDER BY v.distance",
        (query_blob, k, *sources))]


def vec_distances_for(conn: Conn, query_blob: bytes, chunk_ids: Sequence[int]
                      ) -> list[tuple[int, float | None, int, int]]:
    """Exact cosine distance of every window of these chunks: (chunk id, distance, first line, last line)."""
    out: list[tuple[int, float | None, int, int]] = []
    for part in _slices(chunk_ids):
        out.extend((int(r[0]), None if r[1] is None else float(r[1]), int(r[2]), int(r[3])) for r in conn.execute(
            "SELECT w.chunk_id, vec_distance_cosine(v.embedding, ?), w.first_line, w.last_line"
            f" FROM windows w JOIN chunks_vec v ON v.rowid = w.id WHERE w.chunk_id IN ({_marks(len(part))})",
            (query_blob, *part)))
    return out


def line_vectors_for(conn: Conn, chunk_ids: Sequence[int]) -> list[tuple[int, int, bytes]]:
    """(chunk id, line offset, int8 vector) of these chunks' line vectors."""
    out: list[tuple[int, int, bytes]] = []
    for part in _slices(chunk_ids):
        out.extend((int(r[0]), int(r[1]), r[2]) for r in conn.execute(
            f"SELECT chunk_id, line, embedding FROM line_vectors WHERE chunk_id IN ({_marks(len(part))})", part))
    return out


def window_vectors_for(conn: Conn, chunk_ids: Sequence[int]) -> list[tuple[int, int, int, bytes]]:
    """(chunk id, first line, last line, float32 vector) of these chunks' embedding windows."""
    out: list[tuple[int, int, int, bytes]] = []
    for part in _slices(chunk_ids):
        out.extend((int(r[0]), int(r[1]), int(r[2]), r[3]) for r in conn.execute(
            "SELECT w.chunk_id, w.first_line, w.last_line, v.embedding FROM windows w "
            f"JOIN chunks_vec v ON v.rowid = w.id WHERE w.chunk_id IN ({_marks(len(part))})", part))
    return out


def put_line_vectors(conn: Conn, rows: Iterable[tuple[int, int, bytes]]) -> None:
    """Store (chunk id, line offset, int8 vector) rows."""
    conn.executemany("INSERT OR REPLACE INTO line_vectors(chunk_id, line, embedding) VALUES (?,?,?)", list(rows))


def delete_line_vectors(conn: Conn, chunk_ids: Sequence[int]) -> int:
    """Delete these chunks' line vectors; rows deleted."""
    return sum(_changed(conn.execute(f"DELETE FROM line_vectors WHERE chunk_id IN ({_marks(len(part))})", part))
               for part in _slices(chunk_ids))


# -- the embedding cache -------------------------------------------------------------------------------------
CacheRow = tuple[str, str, str, str, int, bytes, float]
"""(provider, model, fingerprint, content hash, dims, float32 bytes, created_at)."""


def cache_get(conn: Conn, provider: str, model: str, fingerprint: str, hashes: Sequence[str]) -> dict[str, bytes]:
    """Content hash → cached vector bytes for the hashes this embedder has embedded before."""
    found: dict[str, bytes] = {}
    items = list(hashes)
    for start in range(0, len(items), SLICE):
        part = items[start : start + SLICE]
        for h, blob in conn.execute(
                "SELECT hash, embedding FROM embedding_cache WHERE provider = ? AND model = ? AND fingerprint = ?"
                f" AND hash IN ({_marks(len(part))})", (provider, model, fingerprint, *part)):
            found[str(h)] = blob
    return found


def cache_put(conn: Conn, provider: str, model: str, fingerprint: str, dims: int, vectors: dict[str, bytes],
              now: float | None = None) -> None:
    """Cache vectors by content hash (replacing older ones)."""
    stamp = time.time() if now is None else now
    conn.executemany("INSERT OR REPLACE INTO embedding_cache VALUES (?,?,?,?,?,?,?)",
                     [(provider, model, fingerprint, h, dims, blob, stamp) for h, blob in vectors.items()])


def cache_rows(conn: Conn) -> Any:
    """A cursor over every cache row (:data:`CacheRow`); ``fetchmany`` it to copy a large cache."""
    return conn.execute("SELECT provider, model, fingerprint, hash, dims, embedding, created_at FROM embedding_cache")


def cache_add(conn: Conn, rows: Sequence[Sequence[Any]]) -> None:
    """Copy cache rows (:data:`CacheRow`) in, keeping rows already there."""
    conn.executemany("INSERT OR IGNORE INTO embedding_cache VALUES (?,?,?,?,?,?,?)", rows)


# -- the whole index ---------------------------------------------------------------------------------------
def counts(conn: Conn) -> dict[str, int]:
    """Row counts for status: files, chunks, pending, windows, cache."""
    out = {
        "files": conn.execute("SELECT count(*) FROM files").fetchone()[0],
        "chunks": conn.execute("SELECT count(*) FROM chunks").fetchone()[0],
        "pending": conn.execute("SELECT count(*) FROM chunks WHERE embedded = 0").fetchone()[0],
        "windows": conn.execute("SELECT count(*) FROM windows").fetchone()[0],
        "cache": conn.execute("SELECT count(*) FROM embedding_cache").fetchone()[0],
    }
    return {k: int(v) for k, v in out.items()}


def quick_check(conn: Conn, limit: int = 20) -> list[str]:
    """``PRAGMA quick_check``: ``["ok"]`` for a sound file, else up to ``limit`` problems."""
    return [str(r[0]) for r in conn.execute(f"PRAGMA quick_check({int(limit)})")]


def checkpoint(conn: Conn) -> None:
    """Fold the WAL into the main file and truncate it."""
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
