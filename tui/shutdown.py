"""Stopping on a signal: the exit codes, and a terminal driver that survives a terminal that is gone.

SIGINT, SIGTERM and SIGHUP stop the app through its normal shutdown (``App.exit``), so Textual's driver leaves
the alternate screen, turns mouse tracking off and shows the cursor; the editor's unsaved text is kept as a
recovery copy first (``MemdeckApp.stop_on_signal``). The exit code is the shell's convention for "killed by
signal N", 128 + N: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP, 131 for SIGQUIT — what a script or
supervisor expects.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.driver import Driver

STOP_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
"""The signals that stop the TUI with its unsaved text kept.

SIGQUIT too: its default (a core dump) left the terminal in the alternate screen and lost the text; what a
developer sends it for — where every thread is — goes to memdeck.log instead (``MemdeckApp.stop_on_signal``).
SIGPIPE needs nothing: Python ignores it (a write to a closed pipe is an ``OSError``). SIGTSTP/SIGCONT (suspend
and ``fg``) are Textual's driver's: it leaves the alternate screen before stopping and redraws on return."""

RESTORE_TERMINAL = "\x1b[?1000l\x1b[?1003l\x1b[?1015l\x1b[?1006l\x1b[?2004l\x1b[<u\x1b[?1049l\x1b[?25h\x1b[?1004l"
"""What Textual's driver writes on stop (mouse tracking off, bracketed paste off, leave the alternate screen,
show the cursor): written directly only when a second signal cuts the normal shutdown short."""


def exit_code(sig: int) -> int:
    """The conventional exit code of a process stopped by ``sig``: 128 + the signal's number."""
    return 128 + int(sig)


class TolerantTerminal:
    """The terminal's output stream, where a write to a terminal that is gone (hung up, closed) is dropped.

    Textual writes from a thread through a bounded queue: an ``OSError`` (EIO after SIGHUP) would end that thread,
    the queue would fill and the app would hang on its next write instead of exiting. Here the error only marks
    the terminal as gone.
    """

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self.gone = False

    def write(self, text: str) -> int:
        """Write ``text`` unless the terminal is gone; never raises ``OSError``."""
        if not self.gone:
            try:
                return self._stream.write(text)
            except (OSError, ValueError):
                self.gone = True
        return 0

    def flush(self) -> None:
        """Flush unless the terminal is gone; never raises ``OSError``."""
        if not self.gone:
            try:
                self._stream.flush()
            except (OSError, ValueError):
                self.gone = True

    def fileno(self) -> int:
        """The stream's file descriptor."""
        return self._stream.fileno()

    def isatty(self) -> bool:
        """Whether the stream is a terminal (False once it is gone)."""
        if self.gone:
            return False
        with contextlib.suppress(OSError, ValueError):
            return self._stream.isatty()
        return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def driver_class() -> type[Driver] | None:
    """Textual's Linux/macOS driver writing through :class:`TolerantTerminal`; None elsewhere (Textual's own)."""
    if sys.platform == "win32" or sys.__stderr__ is None:
        return None
    from textual.drivers.linux_driver import LinuxDriver

    class MemdeckDriver(LinuxDriver):
        """Textual's driver, whose writes to a terminal that is gone are dropped instead of ending its writer."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._file = TolerantTerminal(self._file)  # type: ignore[assignment, arg-type]

    return MemdeckDriver


def restore_terminal_now() -> None:
    """Write the terminal-restore sequences straight to the terminal (a second signal: no time to shut down)."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        os.write(sys.__stderr__.fileno(), RESTORE_TERMINAL.encode())  # type: ignore[union-attr]


def report_now(lines: list[str]) -> None:
    """Write ``lines`` straight to the terminal (a second signal: no time for Python's buffered output)."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        os.write(sys.__stderr__.fileno(), "".join(f"{line}\n" for line in lines).encode(errors="replace"))  # type: ignore[union-attr]


def silence_terminal() -> None:
    """Point stdout and stderr at /dev/null: after a hang-up, Python's own flush at exit would fail (exit 120)."""
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_WRONLY)
        for fd in (1, 2):
            with contextlib.suppress(OSError):
                os.dup2(null, fd)
        os.close(null)
