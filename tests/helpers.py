"""Helpers shared by the engine tests."""

from __future__ import annotations

import os
import selectors
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from engine.api import MemoryEngine
from engine.config import Config, load_config
from engine.embed.choice import HashingEmbedder


def hash_config(workspace: Path, **overrides: object) -> Config:
    """A config using the deterministic hashing embedder (no torch)."""
    data: dict[str, object] = {"embedding": {"provider": "hash"}}
    data.update(overrides)
    return load_config(workspace=workspace, overrides=data)


def synced_engine(tmp_path: Path, files: Mapping[str, str]) -> Iterator[MemoryEngine]:
    """A :class:`MemoryEngine` (hashing embedder, no config file) on a workspace of ``files`` (relative path →
    text) under ``tmp_path``, indexed; closed after the test (use as a fixture: ``yield from``)."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    for rel, text in files.items():
        (ws / rel).write_text(text, encoding="utf-8")
    config = load_config(workspace=ws, home=tmp_path / "home", overrides={"embedding": {"provider": "hash"}},
                         config_path=tmp_path / "none.toml")
    eng = MemoryEngine(config)
    eng.sync()
    yield eng
    eng.close()


class CountingHash(HashingEmbedder):
    """The hashing embedder, remembering every text it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.seen.extend(texts)
        return super().embed_documents(texts)


def review_config(tmp_path: Path, memory: str, notes: Mapping[str, str]) -> Config:
    """A workspace of ``MEMORY.md`` and ``notes`` (relative path → text) under ``tmp_path``, and its config with no
    config file (for the review's tests)."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(memory, encoding="utf-8")
    for rel, text in notes.items():
        (ws / rel).write_text(text, encoding="utf-8")
    return load_config(workspace=ws, home=tmp_path / "home", config_path=tmp_path / "none.toml")


PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 24, 1, 2  # <linux/prctl.h>, <linux/capability.h>


def obey_file_modes() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes a child meet file modes the way any user does, or None when that is so already.

    Root reads and writes whatever the modes say (CI runs as root), so as root the child drops the two
    capabilities behind that, CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, from its bounding set before it
    starts: it is still uid 0, it still runs this Python wherever it lives, but a file or folder it has no
    permission bits for is refused with EACCES, exactly as for an ordinary user.
    """
    if not (hasattr(os, "geteuid") and os.geteuid() == 0):
        return None
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up here: the forked child only calls it
    except AttributeError:
        pytest.fail("as root this test needs Linux's prctl(2) to give up root's permission override")

    def drop() -> None:
        for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
            if prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), f"cannot drop capability {cap} for the unprivileged child")

    return drop


def stream_lines(fd: int, wait_cap: float, what: str = "memdeck index") -> Iterator[str]:
    """A child's output on ``fd``, line by line, as it comes (ends when the child closes it).

    ``wait_cap`` only bounds a hang: a child silent that long fails the test instead of waiting on forever.
    """
    pending = b""
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while True:
            if not sel.select(timeout=wait_cap):
                raise AssertionError(f"{what} said nothing for {wait_cap:.0f} s: {pending!r}")
            data = os.read(fd, 65536)
            if not data:
                return
            pending += data
            *done, pending = pending.split(b"\n")
            yield from (line.decode() for line in done)
