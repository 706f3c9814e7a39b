"""The SQLite index file: driver choice, schema and migrations, sqlite-vec loading, one connection per thread."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import struct
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 5000

try:  # sqlean-py: a sqlite3 drop-in that can load extensions on every platform
    import sqlean as _sqlean

    _SQLEAN_ERRORS: tuple[type[BaseException], ...] = (_sqlean.Error,)
except ImportError:  # pragma: no cover - sqlean is a dependency
    _sqlean = None
    _SQLEAN_ERRORS = ()

DB_ERRORS: tuple[type[BaseException], ...] = (sqlite3.Error, *_SQLEAN_ERRORS)


class CorruptIndex(Exception):
    """The index file is not a usable memdeck database."""


@dataclass(frozen=True)
class DriverInfo:
    """Which SQLite module is in use and whether sqlite-vec loaded (and why not)."""

    name: str
    sqlite_version: str
    vec_version: str | None
    vec_error: str | None


def _driver_module() -> Any:
    forced = os.environ.get("MEMDECK_SQLITE_DRIVER")
    if forced == "sqlite3" or _sqlean is None:
        return sqlite3
    return _sqlean


def _load_vec(conn: Any) -> tuple[str | None, str | None]:
    if os.environ.get("MEMDECK_DISABLE_VEC") == "1":
        return None, "sqlite-vec disabled (MEMDECK_DISABLE_VEC=1)"
    try:
        import sqlite_vec  # deferred: only when an index is opened
    except ImportError:
        return None, "the sqlite-vec package is not installed"
    if not hasattr(conn, "enable_load_extension"):
        return None, "this Python's sqlite3 cannot load extensions (install sqlean-py)"
    try:
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
        row = conn.execute("select vec_version()").fetchone()
        return str(row[0]), None
    except (*DB_ERRORS, AttributeError, OSError) as exc:
        return None, f"sqlite-vec failed to load: {exc}"


def serialize_vector(vec: list[float]) -> bytes:
    """float32 little-endian bytes, as sqlite-vec stores them."""
    return struct.pack(f"<{len(vec)}f", *vec)


def deserialize_vector(blob: bytes) -> list[float]:
    """The inverse of :func:`serialize_vector`."""
    return list(struct.unpack(f"<{len(blob) // 4}f", blob))


SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    path TEXT PRIMARY KEY, source TEXT NOT NULL, hash TEXT NOT NULL, mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL, chunks INTEGER NOT NULL DEFAULT 0, decode_errors INTEGER NOT NULL DEFAULT 0,
    indexed_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS chunks(
    id INTEGER PRIMARY KEY, path TEXT NOT NULL, source TEXT NOT NULL, start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL, hash TEXT NOT NULL, text TEXT NOT NULL, line_map TEXT,
    embedded INTEGER NOT NULL DEFAULT 0, updated_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE INDEX IF NOT EXISTS chunks_pending ON chunks(embedded) WHERE embedded = 0;
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(text, tokenize='porter unicode61 remove_diacritics 2');
CREATE TABLE IF NOT EXISTS windows(
    id INTEGER PRIMARY KEY, chunk_id INTEGER NOT NULL, first_line INTEGER NOT NULL, last_line INTEGER NOT NULL,
    hash TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS windows_chunk ON windows(chunk_id);
CREATE TABLE IF NOT EXISTS embedding_cache(
    provider TEXT NOT NULL, model TEXT NOT NULL, fingerprint TEXT NOT NULL, hash TEXT NOT NULL,
    dims INTEGER NOT NULL, embedding BLOB NOT NULL, created_at REAL NOT NULL,
    PRIMARY KEY(provider, model, fingerprint, hash));
"""

# Migrations from version N to N+1, applied in order inside one transaction each.
MIGRATIONS: dict[int, str] = {}


class Store:
    """One index file. Each thread gets its own connection; writes go through :meth:`transaction`."""

    def __init__(self, path: Path, dims: int | None = None) -> None:
        self.path = Path(path)
        self.dims = dims
        self._local = threading.local()
        self._all: list[Any] = []
        self._lock = threading.Lock()
        self.driver: DriverInfo | None = None
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._init_schema()

    # -- connections -------------------------------------------------------------------------
    def _connect(self) -> Any:
        mod = _driver_module()
        fresh = not self.path.exists()
        conn = mod.connect(str(self.path), timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False,
                           isolation_level=None)
        if fresh:
            with contextlib.suppress(OSError):
                os.chmod(self.path, 0o600)
        vec_version, vec_error = _load_vec(conn)
        try:
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=OFF")
        except DB_ERRORS as exc:
            conn.close()
            raise CorruptIndex(f"{self.path}: {exc}") from exc
        if mode is None:
            conn.close()
            raise CorruptIndex(f"{self.path}: cannot set WAL mode")
        if self.driver is None:
            version = conn.execute("select sqlite_version()").fetchone()[0]
            self.driver = DriverInfo(mod.__name__, str(version), vec_version, vec_error)
        with self._lock:
            self._all.append(conn)
        return conn

    @property
    def conn(self) -> Any:
        """This thread's connection."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
        return conn

    @property
    def vec_available(self) -> bool:
        """Whether sqlite-vec loaded into this index's connections."""
        _ = self.conn
        return self.driver is not None and self.driver.vec_version is not None

    def close(self) -> None:
        """Close every thread's connection."""
        with self._lock:
            conns, self._all = self._all, []
        for conn in conns:
            with contextlib.suppress(*DB_ERRORS):
                conn.close()
        self._local = threading.local()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Any]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` (rolled back on any error)."""
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    # -- schema ------------------------------------------------------------------------------
    def _init_schema(self) -> None:
        try:
            conn = self.conn
            header = conn.execute("PRAGMA schema_version").fetchone()
            _ = header
            has_meta = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone() is not None
            if has_meta:
                row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
                version = int(row[0]) if row else 0
                if version > SCHEMA_VERSION:
                    raise CorruptIndex(
                        f"{self.path}: made by a newer memdeck (schema {version}, this one knows {SCHEMA_VERSION})")
                while version < SCHEMA_VERSION and version in MIGRATIONS:
                    with self.transaction() as tx:
                        tx.executescript(MIGRATIONS[version])
                        version += 1
                        tx.execute("INSERT OR REPLACE INTO meta VALUES('schema_version', ?)", (str(version),))
            with self.transaction() as tx:
                for statement in SCHEMA.split(";"):
                    if statement.strip():
                        tx.execute(statement)
                tx.execute("INSERT OR IGNORE INTO meta VALUES('schema_version', ?)", (str(SCHEMA_VERSION),))
            self.ensure_vec_table()
        except DB_ERRORS as exc:
            self.close()
            raise CorruptIndex(f"{self.path}: {exc}") from exc

    def ensure_vec_table(self) -> bool:
        """Create ``chunks_vec`` for the configured dims when sqlite-vec is loaded; True when it exists."""
        if not self.vec_available or not self.dims:
            return False
        conn = self.conn
        row = conn.execute("SELECT sql FROM sqlite_master WHERE name='chunks_vec'").fetchone()
        if row is not None:
            if f"float[{self.dims}]" in str(row[0]):
                return True
            conn.execute("DROP TABLE chunks_vec")
            conn.execute("UPDATE chunks SET embedded = 0")
            conn.execute("DELETE FROM windows")
        conn.execute(
            f"CREATE VIRTUAL TABLE chunks_vec USING vec0(embedding float[{int(self.dims)}] distance_metric=cosine)")
        return True

    # -- meta --------------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        """A value from ``meta``."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str, conn: Any = None) -> None:
        """Store a value in ``meta``."""
        (conn or self.conn).execute("INSERT OR REPLACE INTO meta VALUES(?, ?)", (key, value))

    def get_identity(self) -> dict[str, Any] | None:
        """The index identity recorded at the last full build."""
        raw = self.get_meta("identity")
        if raw is None:
            return None
        try:
            value = json.loads(raw)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def counts(self) -> dict[str, int]:
        """Row counts for status."""
        conn = self.conn
        out = {
            "files": conn.execute("SELECT count(*) FROM files").fetchone()[0],
            "chunks": conn.execute("SELECT count(*) FROM chunks").fetchone()[0],
            "pending": conn.execute("SELECT count(*) FROM chunks WHERE embedded = 0").fetchone()[0],
            "windows": conn.execute("SELECT count(*) FROM windows").fetchone()[0],
            "cache": conn.execute("SELECT count(*) FROM embedding_cache").fetchone()[0],
        }
        return {k: int(v) for k, v in out.items()}

    def size_bytes(self) -> int:
        """The index file's size plus its WAL."""
        total = 0
        for suffix in ("", "-wal"):
            with contextlib.suppress(OSError):
                total += os.path.getsize(str(self.path) + suffix)
        return total


def move_aside(path: Path) -> Path:
    """Rename a corrupt index (and its WAL/SHM) to ``<name>.corrupt-<time>``; returns the new path."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    os.replace(path, target)
    for suffix in ("-wal", "-shm"):
        side = Path(str(path) + suffix)
        if side.exists():
            with contextlib.suppress(OSError):
                os.replace(side, Path(str(target) + suffix))
    return target
