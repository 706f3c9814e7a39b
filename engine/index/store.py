"""The SQLite index file: driver choice, sqlite-vec loading, one connection per thread, transactions, damage."""

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
from datetime import datetime
from pathlib import Path
from typing import Any

from engine.display import plural
from engine.errors import MemdeckError
from engine.index import queries, schema
from engine.textio import make_private_dir

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


class IndexAccessError(MemdeckError):
    """The index cannot be opened or written (disk full, read-only, permissions, locked); it is left as it is."""


_CORRUPT_WORDS = ("malformed", "not a database", "corrupt", "blob read error", "vtable constructor failed")
_ACCESS_MESSAGES = {
    "SQLITE_FULL": "the disk is full",
    "SQLITE_READONLY": "the index is read-only",
    "SQLITE_CANTOPEN": "the index file cannot be opened",
    "SQLITE_PERM": "permission denied",
    "SQLITE_IOERR": "an I/O error occurred",
    "SQLITE_BUSY": "another process kept the index locked",
    "SQLITE_LOCKED": "another process kept the index locked",
}


def is_corruption(exc: BaseException) -> bool:
    """Whether a database error means the index file is damaged (as opposed to full, locked or unwritable)."""
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    if name.startswith("SQLITE_CORRUPT") or name == "SQLITE_NOTADB":
        return True
    if name and _access_kind(name) is not None:
        return False
    text = str(exc).lower()
    return any(word in text for word in _CORRUPT_WORDS)


def _access_kind(name: str) -> str | None:
    for prefix, message in _ACCESS_MESSAGES.items():
        if name == prefix or name.startswith(prefix + "_"):
            return message
    return None


def describe_db_error(exc: BaseException, path: Path) -> str:
    """One line a person can act on for a database error that is not corruption."""
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    kind = _access_kind(name)
    if kind is None:
        text = str(exc).lower()
        if "disk is full" in text or "disk full" in text:
            kind = "the disk is full"
        elif "readonly" in text or "read-only" in text:
            kind = "the index is read-only"
        elif "locked" in text or "busy" in text:
            kind = "another process kept the index locked"
    hint = {
        "the disk is full": "free some space and run `memdeck index` again; nothing written so far is lost",
        "the index is read-only": f"check the permissions of {path.parent}",
        "permission denied": f"check the permissions of {path.parent}",
        "another process kept the index locked": "try again in a moment",
    }.get(kind or "", "run `memdeck doctor`")
    return f"{path}: {kind or 'database error'} ({exc}); {hint}"


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
    """Load sqlite-vec into ``conn``; ``(vec_version, None)`` or ``(None, why not)``.

    The extension is loaded from the package's folder without importing the package: ``import sqlite_vec``
    imports numpy (~150 ms), which `memdeck status` and keyword search never need. The path is what
    ``sqlite_vec.loadable_path()`` returns (``<package dir>/vec0``; SQLite adds the platform's suffix).
    """
    import importlib.util

    if os.environ.get("MEMDECK_DISABLE_VEC") == "1":
        return None, "sqlite-vec disabled (MEMDECK_DISABLE_VEC=1)"
    try:
        spec = importlib.util.find_spec("sqlite_vec")
    except (ImportError, ValueError):
        spec = None
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    if not folders and spec is not None and spec.origin:
        folders = [os.path.dirname(spec.origin)]
    if not folders:
        return None, "the sqlite-vec package is not installed"
    if not hasattr(conn, "enable_load_extension"):
        return None, "this Python's sqlite3 cannot load extensions (install sqlean-py)"
    failures: tuple[type[BaseException], ...] = (*DB_ERRORS, AttributeError, OSError)
    try:
        conn.enable_load_extension(True)
        conn.load_extension(os.path.normpath(os.path.join(folders[0], "vec0")))
        conn.enable_load_extension(False)
        row = conn.execute("select vec_version()").fetchone()
        return str(row[0]), None
    except failures as exc:
        return None, f"sqlite-vec failed to load: {exc}"


def serialize_vector(vec: list[float]) -> bytes:
    """float32 little-endian bytes, as sqlite-vec stores them."""
    return struct.pack(f"<{len(vec)}f", *vec)


def deserialize_vector(blob: bytes) -> list[float]:
    """The inverse of :func:`serialize_vector`."""
    return list(struct.unpack(f"<{len(blob) // 4}f", blob))


class Store:
    """One index file. Each thread gets its own connection; writes go through :meth:`transaction`."""

    def __init__(self, path: Path, dims: int | None = None) -> None:
        self.path = Path(path)
        self.dims = dims
        self._local = threading.local()
        self._all: list[tuple[threading.Thread, Any]] = []  # every open connection, with the thread it belongs to
        self._lock = threading.Lock()
        self._closed = False
        self.driver: DriverInfo | None = None
        try:
            make_private_dir(self.path.parent)
        except OSError as exc:
            raise IndexAccessError(
                f"cannot create the index folder {self.path.parent}: {exc.strerror or exc}") from exc
        check_header(self.path)
        self._init_schema()
        self.inode = _inode(self.path)

    # -- connections -------------------------------------------------------------------------
    def _connect(self) -> Any:
        mod = _driver_module()
        _create_private_file(self.path)
        try:
            conn = mod.connect(str(self.path), timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False,
                               isolation_level=None)
        except DB_ERRORS as exc:
            raise _open_error(exc, self.path) from exc
        vec_version, vec_error = _load_vec(conn)
        try:
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            mode = _enable_wal(conn)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=OFF")
        except DB_ERRORS as exc:
            conn.close()
            raise _open_error(exc, self.path) from exc
        if mode is None:
            conn.close()
            raise CorruptIndex(f"{self.path}: cannot set WAL mode")
        if self.driver is None:
            version = conn.execute("select sqlite_version()").fetchone()[0]
            self.driver = DriverInfo(mod.__name__, str(version), vec_version, vec_error)
        with self._lock:
            self._all.append((threading.current_thread(), conn))
        return conn

    @property
    def conn(self) -> Any:
        """This thread's connection.

        Raises:
            IndexAccessError: the store was closed (a thread still at work when it was: its connection is
                closed here, by that thread).
        """
        conn = getattr(self._local, "conn", None)
        if self._closed:
            if conn is not None:
                self._local.conn = None
                with contextlib.suppress(*DB_ERRORS):
                    conn.close()
            raise IndexAccessError(f"{self.path}: the index was closed")
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
        """Close the store: this thread's connection and those of threads that have ended.

        The connection of another thread that is still running is left to that thread, which closes it at its
        next use of :attr:`conn` (that raises :class:`IndexAccessError`) — or the process's exit does. Closing
        it from here could free it in the middle of that thread's query: Python's sqlite3 module does not guard
        against that, and the process died of a segfault (the TUI closing the index on exit while a sync was
        still counting rows).
        """
        me = threading.current_thread()
        with self._lock:
            self._closed = True
            idle = [conn for owner, conn in self._all if owner is me or not owner.is_alive()]
            self._all = [(owner, conn) for owner, conn in self._all if owner is not me and owner.is_alive()]
        for conn in idle:
            with contextlib.suppress(*DB_ERRORS):
                conn.close()
        if getattr(self._local, "conn", None) is not None:
            self._local.conn = None

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Any]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` (rolled back on any error)."""
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            # SQLite may already have rolled back (disk full, I/O error): never hide the real error.
            if conn.in_transaction:
                with contextlib.suppress(*DB_ERRORS):
                    conn.execute("ROLLBACK")
            raise
        try:
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                with contextlib.suppress(*DB_ERRORS):
                    conn.execute("ROLLBACK")
            raise

    # -- schema ------------------------------------------------------------------------------
    def _init_schema(self) -> None:
        try:
            schema.prepare(self.conn, self.transaction)
            self.ensure_vec_table()
        except schema.SchemaProblem as exc:
            self.close()
            raise CorruptIndex(f"{self.path}: {exc}") from None
        except CorruptIndex:
            self.close()
            raise
        except DB_ERRORS as exc:
            self.close()
            if is_corruption(exc):
                raise CorruptIndex(f"{self.path}: {exc}") from exc
            raise IndexAccessError(describe_db_error(exc, self.path)) from exc

    def ensure_vec_table(self) -> bool:
        """Create ``chunks_vec`` for the configured dims when sqlite-vec is loaded; True when it exists."""
        if not self.vec_available or not self.dims:
            return False
        if schema.vec_table_dims_match(self.conn, self.dims):
            return True
        # One transaction: a crash never leaves chunks marked embedded without their vectors. The check is
        # repeated inside it: another process may have created the table since we looked.
        with self.transaction() as tx:
            match = schema.vec_table_dims_match(tx, self.dims)
            if not match:
                schema.replace_vec_table(tx, self.dims, exists=match is not None)
        return True

    # -- meta --------------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        """A value from ``meta``."""
        return queries.get_meta(self.conn, key)

    def set_meta(self, key: str, value: str, conn: Any = None) -> None:
        """Store a value in ``meta``."""
        queries.set_meta(conn or self.conn, key, value)

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

    def has_pending(self) -> bool:
        """Whether any chunk still waits for its vectors (cheap: stops at the first)."""
        return queries.has_pending(self.conn)

    def pending_count(self) -> int:
        """How many chunks wait for their vectors."""
        return queries.pending_count(self.conn)

    def counts(self) -> dict[str, int]:
        """Row counts for status."""
        return queries.counts(self.conn)

    def size_bytes(self) -> int:
        """The index file's size plus its WAL."""
        total = 0
        for suffix in ("", "-wal"):
            with contextlib.suppress(OSError):
                total += os.path.getsize(str(self.path) + suffix)
        return total


def _inode(path: Path) -> int | None:
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


def _is_busy(exc: BaseException) -> bool:
    """Whether a database error is another connection's lock (``SQLITE_BUSY``/``SQLITE_LOCKED``)."""
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    if name:
        return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED"))
    text = str(exc).lower()
    return "database is locked" in text or "database table is locked" in text


def _enable_wal(conn: Any) -> Any:
    """Put the index in WAL mode; the pragma's row (``None``: the file cannot use WAL).

    SQLite runs no busy handler for a journal-mode change: two processes opening a new index at the same
    moment (two ``memdeck index`` started together) race on the conversion, and the loser got "database is
    locked" at once, whatever the busy timeout. WAL is a property of the file, so the mode is read first
    (after the first open there is nothing to change and no lock to take); a conversion that meets another
    connection's lock is retried within the busy timeout, and another process finishing it meanwhile is
    success.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.005
    while True:
        try:
            row = conn.execute("PRAGMA journal_mode").fetchone()
            if row is not None and str(row[0]).lower() == "wal":
                return row
            return conn.execute("PRAGMA journal_mode=WAL").fetchone()
        except DB_ERRORS as exc:
            if not _is_busy(exc) or time.monotonic() + delay > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


def _create_private_file(path: Path) -> None:
    """Create the index file 0600 before SQLite does (SQLite would use the umask; its -wal/-shm copy the mode)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    except OSError as exc:
        raise IndexAccessError(f"cannot create the index {path}: {exc.strerror or exc}") from exc
    os.close(fd)


def _open_error(exc: BaseException, path: Path) -> Exception:
    if is_corruption(exc):
        return CorruptIndex(f"{path}: {exc}")
    return IndexAccessError(describe_db_error(exc, path))


def check_header(path: Path) -> None:
    """Refuse a file that is not SQLite or is shorter than its own header says (a truncated copy).

    Cheap (reads 100 bytes); deeper damage is found by ``PRAGMA quick_check`` in ``memdeck doctor``.

    Raises:
        CorruptIndex: the file is not an SQLite database or was truncated.
    """
    try:
        with open(path, "rb") as fh:
            header = fh.read(100)
            size = os.fstat(fh.fileno()).st_size
    except FileNotFoundError:
        return
    except OSError as exc:
        raise IndexAccessError(f"cannot read the index {path}: {exc.strerror or exc}") from exc
    if size == 0:
        return  # an empty file is an empty database
    if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
        raise CorruptIndex(f"{path}: not an SQLite database")
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    valid = header[24:28] == header[92:96] and pages > 0
    try:
        wal = os.path.getsize(str(path) + "-wal")
    except OSError:
        wal = 0
    # With a non-empty WAL the file may legitimately lag behind its header until the next checkpoint.
    if valid and wal == 0 and pages * page_size > size:
        raise CorruptIndex(f"{path}: truncated ({plural(size, 'byte')}, its header says {pages * page_size})")


def connect_raw(path: Path, query_only: bool = True) -> tuple[Any, DriverInfo]:
    """A plain connection to an index file (sqlite-vec loaded when possible), for inspection and repair.

    Raises:
        CorruptIndex: the file is damaged.
        IndexAccessError: the file cannot be opened.
    """
    mod = _driver_module()
    try:
        conn = mod.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False,
                           isolation_level=None)
    except DB_ERRORS as exc:
        raise _open_error(exc, path) from exc
    vec_version, vec_error = _load_vec(conn)
    try:
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        if query_only:
            conn.execute("PRAGMA query_only=1")
        version = str(conn.execute("select sqlite_version()").fetchone()[0])
    except DB_ERRORS as exc:
        conn.close()
        raise _open_error(exc, path) from exc
    return conn, DriverInfo(mod.__name__, version, vec_version, vec_error)


def salvage_cache(source: Path, store: Store) -> int:
    """Copy what can still be read of a damaged index's embedding cache into ``store``; rows copied.

    A corrupt index should not cost every embedding it paid for (minutes with a local model).
    """
    copied = 0
    try:
        conn, _ = connect_raw(source)
    except (CorruptIndex, IndexAccessError):
        return 0
    try:
        cur = queries.cache_rows(conn)
        while True:
            try:
                rows = cur.fetchmany(500)
            except DB_ERRORS:
                break
            if not rows:
                break
            with store.transaction() as tx:
                queries.cache_add(tx, rows)
            copied += len(rows)
    except DB_ERRORS:
        pass
    finally:
        with contextlib.suppress(*DB_ERRORS):
            conn.close()
    return copied


def move_aside(path: Path, now: datetime) -> Path:
    """Rename a corrupt index (and its WAL/SHM) to ``<name>.corrupt-<time>``; returns the new path.

    ``now`` is the one clock's time (:class:`engine.clock.Clock`), so the copy's name reads in the user's zone.
    """
    stamp = now.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while target.exists():  # never overwrite an earlier copy moved aside in the same second
        n += 1
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
    os.replace(path, target)
    for suffix in ("-wal", "-shm"):
        side = Path(str(path) + suffix)
        if side.exists():
            with contextlib.suppress(OSError):
                os.replace(side, Path(str(target) + suffix))
    return target
