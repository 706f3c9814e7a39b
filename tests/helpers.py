"""Helpers shared by the engine tests."""

from __future__ import annotations

from pathlib import Path

from engine.config import Config, load_config


def hash_config(workspace: Path, **overrides: object) -> Config:
    """A config using the deterministic hashing embedder (no torch)."""
    data: dict[str, object] = {"embedding": {"provider": "hash"}}
    data.update(overrides)
    return load_config(workspace=workspace, overrides=data)
