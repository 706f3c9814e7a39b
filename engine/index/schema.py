"""The index's tables: DDL, the schema version, migrations, and the sqlite-vec table sized to the model."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

SCHEMA_VERSION = 2

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    path TEXT PRIMARY KEY, source TEXT NOT NULL, hash TEXT NOT NULL, mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL, chunks INTEGER NOT NULL DEFAULT 0, decode_errors INTEGER NOT NULL DEFAULT 0,
    indexed_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS chunks(
    id INTEGER PRIMARY KEY, path TEXT NOT NULL, source TEXT NOT NULL, start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL, hash TEXT NOT NULL, text TEXT NOT NULL, line_map TEXT,
    embedded INTEGER NOT NULL DEFAULT 0, updated_at REAL NOT NULL, importance INTEGER);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE INDEX IF NOT EXISTS chunks_pending ON chunks(embedded) WHERE embedded = 0;
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(text, tokenize='porter unicode61 remove_diacritics 2');
CREATE TABLE IF NOT EXISTS windows(
    id INTEGER PRIMARY KEY, chunk_id INTEGER NOT NULL, first_line INTEGER NOT NULL, last_line INTEGER NOT NULL,
    hash TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS windows_chunk ON windows(chunk_id);
CREATE TABLE IF NOT EXISTS line_vectors(
    chunk_id INTEGER NOT NULL, line INTEGER NOT NULL, embedding BLOB NOT NULL,
    PRIMARY KEY(chunk_id, line)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS embedding_cache(
    provider TEXT NOT NULL, model TEXT NOT NULL, fingerprint TEXT NOT NULL, hash TEXT NOT NULL,
    dims INTEGER NOT NULL, embedding BLOB NOT NULL, created_at REAL NOT NULL,
    PRIMARY KEY(provider, model, fingerprint, hash));
"""

REQUIRED_TABLES = frozenset({"meta", "files", "chunks", "chunks_fts", "windows", "line_vectors", "embedding_cache"})
"""Tables every index has; one missing means the schema is (re)created."""
CORE_TABLES = ("meta", "files", "chunks", "chunks_fts", "windows", "embedding_cache")
"""Tables without which a file is not a memdeck index at all (``memdeck doctor`` checks them)."""
VEC_TABLE = "chunks_vec"
RECOVERED_META = "recovered"
"""``meta`` key recording the last time a damaged index was moved aside and rebuilt (the doctor clears it)."""

# Migrations from version N to N+1, applied in order inside one transaction each.
MIGRATIONS: dict[int, str] = {
    # 2: a curated chunk's OpenClaw importance (NULL: none). The chunker's version moved with it, so the next
    # sync rebuilds the index and fills it; until then NULL reads as "no importance".
    1: "ALTER TABLE chunks ADD COLUMN importance INTEGER",
}

Transaction = Callable[[], contextlib.AbstractContextManager[Any]]
"""``Store.transaction``: a context manager yielding a connection inside ``BEGIN IMMEDIATE``."""


class SchemaProblem(Exception):
    """The file's schema cannot be used: an unreadable version, or one made by a newer memdeck."""


def table_names(conn: Any, views: bool = False) -> set[str]:
    """The tables (and with ``views`` the views) in the file."""
    kinds = "('table', 'view')" if views else "('table')"
    return {str(r[0]) for r in conn.execute(f"SELECT name FROM sqlite_master WHERE type IN {kinds}")}


def stored_version(conn: Any) -> int:
    """The schema version in ``meta`` (0 when none is recorded).

    Raises:
        SchemaProblem: the recorded version is not a number.
    """
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is None:
        return 0
    try:
        return int(row[0])
    except (TypeError, ValueError):
        raise SchemaProblem(f"unreadable schema version {row[0]!r}") from None


def prepare(conn: Any, transaction: Transaction) -> None:
    """Migrate or create the schema (writing nothing when it is current), then read every table once.

    A current index needs no write at open, so readers never queue behind a writer here; reading each table
    finds a damaged file now, not in the middle of a search.

    Raises:
        SchemaProblem: the version is unreadable or newer than this memdeck knows.
        sqlite3.Error: the file is damaged or cannot be written (the caller classifies it).
    """
    tables = table_names(conn)
    version = 0
    if "meta" in tables:
        version = stored_version(conn)
        if version > SCHEMA_VERSION:
            raise SchemaProblem(f"made by a newer memdeck (schema {version}, this one knows {SCHEMA_VERSION})")
        while version < SCHEMA_VERSION and version in MIGRATIONS:
            with transaction() as tx:
                # Statement by statement: ``executescript`` would commit the open transaction first.
                for statement in MIGRATIONS[version].split(";"):
                    if statement.strip():
                        tx.execute(statement)
                version += 1
                tx.execute("INSERT OR REPLACE INTO meta VALUES('schema_version', ?)", (str(version),))
    if version != SCHEMA_VERSION or not tables >= REQUIRED_TABLES:
        with transaction() as tx:
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    tx.execute(statement)
            tx.execute("INSERT OR IGNORE INTO meta VALUES('schema_version', ?)", (str(SCHEMA_VERSION),))
    for table in sorted(REQUIRED_TABLES - {"chunks_fts"}):
        conn.execute(f"SELECT count(*) FROM (SELECT 1 FROM {table} LIMIT 1)").fetchone()
    conn.execute("SELECT count(*) FROM chunks_fts WHERE rowid = 0").fetchone()


def vec_table_dims_match(conn: Any, dims: int) -> bool | None:
    """Whether ``chunks_vec`` holds ``dims``-sized vectors; None when there is no such table."""
    row = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (VEC_TABLE,)).fetchone()
    if row is None:
        return None
    return f"float[{int(dims)}]" in str(row[0])


def replace_vec_table(tx: Any, dims: int, exists: bool) -> None:
    """(Re)create ``chunks_vec`` for ``dims``; an old table of another size goes with every vector's windows.

    Call inside one transaction: a crash never leaves chunks marked embedded without their vectors.
    """
    if exists:
        tx.execute(f"DROP TABLE {VEC_TABLE}")
        tx.execute("UPDATE chunks SET embedded = 0")
        tx.execute("DELETE FROM windows")
    tx.execute(f"CREATE VIRTUAL TABLE {VEC_TABLE} USING vec0(embedding float[{int(dims)}] distance_metric=cosine)")
