"""The system clipboard through pyperclip, when this machine has one (OSC 52 via Textual covers the rest)."""

from __future__ import annotations

import os


def system_copy(text: str) -> str | None:
    """Copy with pyperclip; returns None on success, else why it could not (blocking: run in a thread).

    ``MEMDECK_CLIPBOARD=osc52`` skips pyperclip (headless machines, tests).
    """
    if os.environ.get("MEMDECK_CLIPBOARD", "").lower() == "osc52":
        return "system clipboard disabled (MEMDECK_CLIPBOARD=osc52)"
    try:
        import pyperclip  # deferred: probes for xclip/xsel/wl-copy on first use
    except ImportError:
        return "pyperclip is not installed"
    try:
        pyperclip.copy(text)
    except Exception as exc:  # pyperclip raises its own exception type, or OSError from the helper tool
        return f"{type(exc).__name__}: {exc}".split("\n")[0][:120]
    return None
