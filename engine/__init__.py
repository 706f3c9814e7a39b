"""memdeck's engine: index an agent's Markdown memory into SQLite and search it (keyword, vector, hybrid).

Importing this package is cheap: no torch, numpy, sqlite-vec, Textual or Rich is loaded until used.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
