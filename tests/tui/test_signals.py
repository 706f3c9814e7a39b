"""The real TUI in a pseudo-terminal, stopped by a signal: unsaved text kept, terminal restored, 128 + N.

Each test starts ``memdeck`` as a user would (a child process on a pty), waits on what it draws — never on a
clock —, makes an unsaved edit, signals it, then reads everything it wrote until the pty closes.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import pty
import select
import signal
import stat
import struct
import sys
import termios
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest

from engine.api import daily_heading

REPO = Path(__file__).resolve().parents[2]
WAIT_CAP = 60.0  # seconds: only a bound on a failure (a child that never draws fails the test, clearly)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and pseudo-terminals")


class Terminal:
    """A child process on a pty, with everything it wrote kept."""

    def __init__(self, argv: list[str], env: dict[str, str], size: tuple[int, int] = (120, 36)) -> None:
        pid, fd = pty.fork()
        if pid == 0:  # the child: the pty is its controlling terminal (stdin, stdout, stderr)
            try:
                os.execve(argv[0], argv, env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
        self.output = bytearray()
        self.closed = False
        self.status: int | None = None

    def _read(self, timeout: float) -> None:
        if self.closed:
            return
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return
        try:
            data = os.read(self.fd, 65536)
        except OSError as exc:  # EIO: the child closed its side
            if exc.errno != errno.EIO:
                raise
            data = b""
        if data:
            self.output += data
        else:
            self.closed = True

    def wait_for(self, condition: Callable[[bytes], bool], what: str) -> None:
        """Read until ``condition(output)`` holds."""
        deadline = time.monotonic() + WAIT_CAP
        while not condition(bytes(self.output)):
            if self.closed or time.monotonic() > deadline:
                tail = bytes(self.output[-2000:])
                raise AssertionError(f"waited for {what}; the child wrote (last 2000 bytes) {tail!r}")
            self._read(0.2)

    def send(self, data: bytes) -> None:
        os.write(self.fd, data)

    def finish(self) -> int:
        """Read until the child closes the pty, then reap it; its exit code (-N when killed by signal N)."""
        deadline = time.monotonic() + WAIT_CAP
        while not self.closed and time.monotonic() < deadline:
            self._read(0.2)
        self.wait_exit(max(0.0, deadline - time.monotonic()))
        if self.status is None:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            raise AssertionError(f"the child did not exit; it wrote {bytes(self.output[-2000:])!r}")
        os.close(self.fd)
        return os.waitstatus_to_exitcode(self.status)

    def wait_exit(self, cap: float) -> None:
        """Wait for the child's exit (a pidfd becomes readable when it exits), at most ``cap`` seconds."""
        if self.status is not None:
            return
        pidfd = os.pidfd_open(self.pid)
        try:
            select.select([pidfd], [], [], cap)
        finally:
            os.close(pidfd)
        pid, status = os.waitpid(self.pid, os.WNOHANG)
        if pid:
            self.status = status

    def kill(self) -> None:
        if self.status is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        if not self.closed:
            os.close(self.fd)


def _child_log(home: Path) -> str:
    """The child's log (where memdeck writes what went wrong: its stderr is the terminal), for a failure message."""
    log = home / "memdeck.log"
    return log.read_text(encoding="utf-8", errors="replace")[-4000:] if log.exists() else "(no memdeck.log)"


def _start(workspace: Path, home: Path) -> Terminal:
    (home / "config.toml").write_text('[embedding]\nprovider = "hash"\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "TEXTUAL"))}
    env.update({"PYTHONPATH": str(REPO), "MEMDECK_HOME": str(home), "TERM": "xterm-256color",
                "COLORTERM": "truecolor", "MEMDECK_CLIPBOARD": "osc52", "OPENCLAW_STATE_DIR": str(home / "no-oc")})
    argv = [sys.executable, "-c", "from memdeck.cli import main; main()", "--workspace", str(workspace),
            "--sessions", str(workspace / "sessions")]
    return Terminal(argv, env)


def _edit_unsaved(term: Terminal) -> None:
    """Open today's note (ctrl+n) and type into it without saving."""
    term.wait_for(lambda out: b"MEMORY.md" in out, "the first frame (the tree lists MEMORY.md)")
    mark = len(term.output)
    term.send(b"\x0e")  # ctrl+n: today's note in the editor
    # Its heading drawn in the editor (not only the "Created" toast, which comes before the note is loaded).
    heading = daily_heading(datetime.now().date()).lstrip("# ").encode()
    term.wait_for(lambda out: heading in out[mark:], "today's note in the editor")
    # A click in the editor (mouse tracking is on, SGR reports): focus is there before typing, whenever the
    # app's own focus move after loading the note runs.
    term.send(b"\x1b[<0;80;20M\x1b[<0;80;20m")
    mark = len(term.output)
    term.send(b"QZXJ")
    term.wait_for(lambda out: b"QZXJ" in out[mark:] and "● modified".encode() in out[mark:],
                  "the typed text in the editor, marked modified")


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129),
                                           (signal.SIGQUIT, 131)], ids=["TERM", "INT", "HUP", "QUIT"])
def test_a_signal_keeps_unsaved_text_and_restores_the_terminal(demo_workspace: Path, tmp_path: Path,
                                                               sig: signal.Signals, code: int) -> None:
    home = tmp_path / "home"
    home.mkdir()
    term = _start(demo_workspace, home)
    try:
        _edit_unsaved(term)
        os.kill(term.pid, sig)
        assert term.finish() == code, f"{_child_log(home)}\n{bytes(term.output[-1500:])!r}"
    finally:
        term.kill()
    copies = list((home / "recovery").glob("*.json"))
    assert len(copies) == 1, f"one recovery copy, got {copies}"
    assert stat.S_IMODE(copies[0].stat().st_mode) == 0o600
    record = json.loads(copies[0].read_text(encoding="ascii"))
    assert record["rel"].startswith("memory/20") and "QZXJ" in record["text"]
    assert record["reason"] == sig.name and record["original"]["sha256"]
    _assert_terminal_restored(term, told=sig != signal.SIGHUP)  # after a hang-up there is no one to tell


def _assert_terminal_restored(term: Terminal, told: bool) -> None:
    """After the last time the app entered the alternate screen it left it again, turned mouse tracking off and
    showed the cursor; with ``told``, the shell then says where the unsaved text is."""
    out = bytes(term.output)
    tail = out[out.rindex(b"\x1b[?1049h"):]
    for sequence in (b"\x1b[?1049l", b"\x1b[?1000l", b"\x1b[?1003l", b"\x1b[?1006l", b"\x1b[?25h"):
        assert sequence in tail, f"{sequence!r} missing from what the app wrote last"
    assert tail.index(b"\x1b[?1000l") < tail.rindex(b"\x1b[?1049l") < tail.rindex(b"\x1b[?25h")
    assert tail.rfind(b"\x1b[?1000h") < tail.rindex(b"\x1b[?1000l"), "mouse tracking is off at the end"
    if told:
        assert b"kept in" in tail[tail.rindex(b"\x1b[?1049l"):], "the user is told where the text is, on the shell"
    assert b"Traceback" not in out


def _twice(term: Terminal) -> None:
    os.kill(term.pid, signal.SIGTERM)
    os.kill(term.pid, signal.SIGTERM)  # impatient: the second one cuts the shutdown short


def _pipe_then_term(term: Terminal) -> None:
    mark = len(term.output)
    os.kill(term.pid, signal.SIGPIPE)  # ignored (Python's default): the app goes on
    term.send(b"KQPV")  # typed words never in a test's path (the title bar shows the workspace's)
    term.wait_for(lambda out: b"QZXJKQPV" in out[mark:], "the app still typing after SIGPIPE")
    os.kill(term.pid, signal.SIGTERM)


def _winch_storm(term: Terminal) -> None:
    for i in range(60):
        cols, rows = (60 + i % 70, 12 + i % 30)
        fcntl.ioctl(term.fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        os.kill(term.pid, signal.SIGWINCH)
    fcntl.ioctl(term.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 36, 120, 0, 0))
    os.kill(term.pid, signal.SIGWINCH)
    mark = len(term.output)
    term.send(b"WZQY")
    term.wait_for(lambda out: b"QZXJWZQY" in out[mark:], "the app still typing after 60 resizes")
    os.kill(term.pid, signal.SIGTERM)


def _suspend_and_resume(term: Terminal) -> None:
    mark = len(term.output)
    os.kill(term.pid, signal.SIGTSTP)  # `kill -TSTP` (job control): Textual's driver restores the terminal first
    deadline = time.monotonic() + WAIT_CAP
    while time.monotonic() < deadline:
        pid, status = os.waitpid(term.pid, os.WUNTRACED | os.WNOHANG)
        if pid and os.WIFSTOPPED(status):
            break
        term._read(0.1)
    else:
        raise AssertionError("the app did not stop on SIGTSTP")
    term._read(0.2)
    assert b"\x1b[?1049l" in term.output[mark:], "suspended, the shell gets its normal screen back"
    mark = len(term.output)
    os.kill(term.pid, signal.SIGCONT)  # `fg`
    term.wait_for(lambda out: b"\x1b[?1049h" in out[mark:] and b"QZXJ" in out[mark:], "the app redrawn after fg")
    term.send(b"BQKZ")
    term.wait_for(lambda out: b"QZXJBQKZ" in out[mark:], "typing again after fg")
    os.kill(term.pid, signal.SIGTERM)


@pytest.mark.parametrize(("edit", "act", "code", "kept"), [
    (True, _twice, 143, ("QZXJ",)),
    (False, lambda term: os.kill(term.pid, signal.SIGTERM), 143, ()),
    (True, _pipe_then_term, 143, ("QZXJKQPV",)),
    (True, _winch_storm, 143, ("QZXJWZQY",)),
    (True, _suspend_and_resume, 143, ("QZXJBQKZ",)),
], ids=["TERM-TERM", "nothing-unsaved", "PIPE-then-TERM", "WINCH-storm", "TSTP-CONT-TERM"])
def test_more_signals(demo_workspace: Path, tmp_path: Path, edit: bool, act: Callable[[Terminal], None], code: int,
                      kept: tuple[str, ...]) -> None:
    home = tmp_path / "home"
    home.mkdir()
    term = _start(demo_workspace, home)
    try:
        if edit:
            _edit_unsaved(term)
        else:
            term.wait_for(lambda out: b"MEMORY.md" in out, "the first frame (the tree lists MEMORY.md)")
        act(term)
        assert term.finish() == code, f"{_child_log(home)}\n{bytes(term.output[-1500:])!r}"
    finally:
        term.kill()
    copies = list((home / "recovery").glob("*.json"))
    assert len(copies) == (1 if kept else 0), copies
    if kept:
        text = json.loads(copies[0].read_text(encoding="ascii"))["text"]
        assert all(word in text for word in kept), text
    _assert_terminal_restored(term, told=bool(kept))


def test_a_closed_terminal_keeps_unsaved_text(demo_workspace: Path, tmp_path: Path) -> None:
    """The terminal window closes: the kernel hangs up (SIGHUP) and every write to it fails; nothing is lost."""
    home = tmp_path / "home"
    home.mkdir()
    term = _start(demo_workspace, home)
    try:
        _edit_unsaved(term)
        os.close(term.fd)  # the terminal goes away: SIGHUP to the app, its writes now fail with EIO
        term.closed = True
        term.wait_exit(WAIT_CAP)
        assert term.status is not None, "the app did not exit after its terminal closed"
        assert os.waitstatus_to_exitcode(term.status) == 129
    finally:
        term.kill()
    copies = list((home / "recovery").glob("*.json"))
    assert len(copies) == 1 and "QZXJ" in json.loads(copies[0].read_text(encoding="ascii"))["text"]


def test_closing_the_index_leaves_a_running_threads_connection_to_it(tmp_path: Path) -> None:
    """The TUI closes the index on exit while a sync may still run in its thread: closing that thread's
    connection under it freed it mid-query (the child died of SIGSEGV, 1 run in ~25 under load)."""
    import threading

    from engine.index.store import IndexAccessError, Store

    store = Store(tmp_path / "index.sqlite")
    store.conn.execute("select 1")  # the closing thread's own connection
    in_query, closed, outcome = threading.Event(), threading.Event(), {}

    def sync_thread() -> None:
        conn = store.conn  # as a sync holds it through a transaction
        conn.execute("select count(*) from sqlite_master").fetchone()
        in_query.set()
        closed.wait(WAIT_CAP)
        outcome["same connection"] = conn.execute("select 1").fetchone()[0]  # still usable: never freed under it
        try:
            _ = store.conn
        except IndexAccessError as exc:
            outcome["next use"] = str(exc)

    worker = threading.Thread(target=sync_thread)
    worker.start()
    assert in_query.wait(WAIT_CAP)
    store.close()
    closed.set()
    worker.join(WAIT_CAP)
    assert outcome["same connection"] == 1
    assert "the index was closed" in outcome["next use"], "a closed index is never reopened behind the caller"
    with pytest.raises(IndexAccessError):
        _ = store.conn
