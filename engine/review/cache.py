"""The review's incremental state in memdeck's data dir: which statements were compared, and what they found."""

from __future__ import annotations

import hashlib
import json
import logging
import marshal
import sys
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from engine.config import Config, ReviewConfig
from engine.review.detect import PairResult, TextInfo
from engine.review.statements import Statement
from engine.textio import atomic_write_bytes, make_private_dir

CACHE_VERSION = 2
RULES_VERSION = "2026-12-06.6"  # bump for a change the source digest below cannot see (a data file)
RULE_MODULES = ("detect.py", "statements.py", "text.py", "run.py", "vectors.py", "precision.py")
"""The modules whose source decides a pair's finding: a cache written by other rules is recomputed."""
log = logging.getLogger(__name__)


def source_digest(version: str, root: Path, modules: tuple[str, ...]) -> str:
    """``version`` and the source of ``modules`` (paths under ``root``) as one short digest: a cache written by
    other rules is recomputed, whether or not someone bumped the version."""
    h = hashlib.sha256(version.encode())
    for rel in modules:
        try:
            h.update(rel.encode() + b"\0" + (root / rel).read_bytes())
        except OSError:
            h.update(rel.encode() + b"\0missing")
    return h.hexdigest()[:16]


@lru_cache(maxsize=1)
def rules_digest() -> str:
    """:data:`RULES_VERSION` and a digest of the rule modules' source (read once a process)."""
    return source_digest(RULES_VERSION, Path(__file__).resolve().parent, RULE_MODULES)


def settings_fingerprint(review: ReviewConfig, vectors: str) -> str:
    """What the cached pairs depend on: the rules (their version and source), the thresholds and which vectors
    were used."""
    raw = json.dumps({"rules": rules_digest(), "review": asdict(review), "vectors": vectors}, sort_keys=True)
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def cache_path(config: Config) -> Path:
    """``<data dir>/review/<index name>.pairs``: one per workspace and agent, never inside the workspace."""
    return config.home / "review" / (config.index_path.stem + ".pairs")


@dataclass
class ReviewCache:
    """The statement keys the last review compared, the pairs it found among them, and which promote
    candidates a curated line already held."""

    settings: str = ""
    keys: set[str] = field(default_factory=set)
    pairs: list[PairResult] = field(default_factory=list)
    curated: str = ""  # which MEMORY.md/USER.md statements ``held`` was decided against
    held: dict[str, bool] = field(default_factory=dict)  # promote candidate → a curated line already says it

    @classmethod
    def load(cls, path: Path) -> ReviewCache | None:
        """The cache at ``path``, or None when there is none or it cannot be read (then the review is full)."""
        data = _read(path, "pairs")
        try:
            settings, keys, pairs, curated, held = data
            return cls(str(settings), set(keys), [PairResult(*p) for p in pairs], str(curated), dict(held))
        except (TypeError, ValueError) as exc:
            if data is not None:
                log.warning("ignoring the review cache %s: %s", path, exc)
            return None

    def save(self, path: Path) -> None:
        """Write the cache atomically (a failure is logged: the next review is then full, nothing is lost)."""
        _write(path, "pairs", (self.settings, frozenset(self.keys),
                               [(p.kind, p.older, p.newer, p.score, p.reason, p.evidence) for p in self.pairs],
                               self.curated, self.held))


class _Unreadable:
    """What :func:`read_marshal` gives for a cache file that is missing, unreadable or not marshal data."""


UNREADABLE = _Unreadable()


def read_marshal(path: Path, what: str) -> Any:
    """A marshal cache file's data, or :data:`UNREADABLE` when it is missing (silently), cannot be read or is not
    marshal data (logged as ``ignoring the <what> cache``): the review's and the audit's caches, one reader.

    marshal, not JSON: the statement and text caches hold tens of thousands of small tuples and sets, and
    marshal reads them back as they were (several times faster, no conversion); it runs no code.
    """
    try:
        blob = path.read_bytes()
    except FileNotFoundError:
        return UNREADABLE
    except OSError as exc:
        log.warning("ignoring the %s cache %s: %s", what, path, exc)
        return UNREADABLE
    try:
        return marshal.loads(blob)
    except (EOFError, ValueError, TypeError) as exc:
        log.warning("ignoring the %s cache %s: %s", what, path, exc)
        return UNREADABLE


def _read(path: Path, kind: str) -> Any:
    """A cache file's payload, or None when missing, unreadable or written by other rules or another Python."""
    data = read_marshal(path, "review")
    if not isinstance(data, tuple) or len(data) != 2 or data[0] != _header(kind):
        return None
    return data[1]


def _write(path: Path, kind: str, payload: Any) -> None:
    try:
        make_private_dir(path.parent)
        atomic_write_bytes(path, marshal.dumps((_header(kind), payload)))
    except (OSError, ValueError) as exc:
        log.warning("could not write the review cache %s: %s", path, exc)


def _header(kind: str) -> str:
    return f"memdeck-review-{kind}/{CACHE_VERSION}/{RULES_VERSION}/{sys.version_info[0]}.{sys.version_info[1]}"


def texts_path(config: Config) -> Path:
    """``<data dir>/review/<index name>.texts``: what the rules read in each statement's text."""
    return config.home / "review" / (config.index_path.stem + ".texts")


def load_texts(path: Path) -> dict[str, TextInfo]:
    """The cached :class:`TextInfo` by clean text (empty when missing, unreadable or from other rules)."""
    data = _read(path, "texts")
    if not isinstance(data, dict):
        return {}
    out: dict[str, TextInfo] = {}
    try:
        for text, raw in data.items():
            out[text] = TextInfo.from_raw(raw)
    except (TypeError, ValueError, IndexError) as exc:
        log.warning("ignoring the review cache %s: %s", path, exc)
        return {}
    return out


def save_texts(path: Path, texts: dict[str, TextInfo]) -> None:
    """Write the text cache atomically (a failure is logged: the next review reads the texts again)."""
    _write(path, "texts", {text: info.to_raw() for text, info in texts.items()})


def files_path(config: Config) -> Path:
    """``<data dir>/review/<index name>.files``: each file's statements and the stamp they were read at."""
    return config.home / "review" / (config.index_path.stem + ".files")


def load_files(path: Path) -> dict[str, tuple[int, int, list[Statement]]]:
    """The cached statements by file (empty when missing, unreadable or from another version)."""
    data = _read(path, "files")
    if not isinstance(data, dict):
        return {}
    out: dict[str, tuple[int, int, list[Statement]]] = {}
    try:
        for rel, (mtime_ns, size, rows) in data.items():
            out[rel] = (int(mtime_ns), int(size), [Statement.from_raw(rel, r) for r in rows])
    except (TypeError, ValueError, IndexError) as exc:
        log.warning("ignoring the review cache %s: %s", path, exc)
        return {}
    return out


def save_files(path: Path, stamps: dict[str, tuple[int, int]], by_file: dict[str, list[Statement]]) -> None:
    """Write the statements cache atomically (a failure is logged: the next review parses every file)."""
    _write(path, "files", {rel: (*stamps[rel], [s.to_raw() for s in rows]) for rel, rows in by_file.items()
                           if rel in stamps})
