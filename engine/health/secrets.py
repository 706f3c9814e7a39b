"""Moved to :mod:`engine.secrets` (the base layer: sessions and memory redact with it, and they sit below health).

Kept only until ``engine.memory`` imports it from there (its modules are being split on another branch); the
``engine-layers`` contract reports every import of this module from memory, so it cannot stay unnoticed.
"""

from engine.secrets import redact_secrets

__all__ = ["redact_secrets"]
