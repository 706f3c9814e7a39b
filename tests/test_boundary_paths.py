"""Paths at the boundary (issue 22): session citations never leave the session source, and every citation
memdeck prints reads back through ``get`` (CLI and MCP)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.api import MemoryEngine, MemoryFiles
from engine.citation import parse_citation
from engine.errors import PathRefused
from engine.sessions.agentdb import DB_FILE_NAME
from engine.sessions.dbsource import AgentDbSource
from engine.sessions.model import SessionReadError
from engine.sessions.sources import FolderSource, find_transcript
from memdeck.cli import cli
from memdeck.mcp import MemoryService
from tests.helpers import hash_config

DATA = Path(__file__).parent / "data"
SESSION = "7c1e9a42-5b3d-4f0e-9a1b-2c3d4e5f6a7b"
DB_SESSION = "8555a0a4-0b79-459d-939c-e17cdbbf4fe2"  # in tests/data/openclaw-agent.sqlite
PRIVATE = "PRIVATE-other-agent"
HEADER = json.dumps({"type": "session", "version": 3, "id": "other", "timestamp": "2026-01-01T00:00:00Z"})
TURN = json.dumps({"type": "message", "id": "m1", "timestamp": "2026-01-01T00:00:01Z",
                   "message": {"role": "user", "content": f"{PRIVATE} transcript"}})
NOTE = "# 2026-10-23\n\nline three\nline four\nline five\nline six\n"


class Layout:
    """A workspace with sessions as a source, its sessions folder, and — beside them — another agent's
    transcripts and a working folder that has a ``sessions/`` subfolder of its own (the escape of issue 22)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.workspace = root / "ws"
        self.sessions = root / "agents" / "main" / "sessions"
        self.cwd = root / "cwd"
        (self.workspace / "memory").mkdir(parents=True)
        (self.workspace / "MEMORY.md").write_text("# Memory\n\n- tea\n", encoding="utf-8")
        (self.workspace / "memory" / "2026-10-23.md").write_text(NOTE, encoding="utf-8")
        self.sessions.mkdir(parents=True)
        shutil.copy(DATA / "transcripts" / "chat_preferences.jsonl", self.sessions / f"{SESSION}.jsonl")
        (self.cwd / "sessions").mkdir(parents=True)
        private = f"{HEADER}\n{TURN}\n"
        for where in (root / "other" / "private.jsonl", root / "other" / "private.txt",
                      self.cwd / "sessions" / "x.jsonl", self.cwd / "sessions" / "main" / "x.jsonl",
                      self.cwd / "x.jsonl", self.cwd / "7c1e", self.sessions.parent / "leak.jsonl"):
            where.parent.mkdir(parents=True, exist_ok=True)
            where.write_text(private, encoding="utf-8")
        (self.sessions / "link.jsonl").symlink_to(root / "other" / "private.jsonl")

    def config(self, workspace: Path | None = None, **overrides: Any) -> Any:
        return hash_config(workspace or self.workspace, sources=["memory", "sessions"],
                           sessions_dir=str(self.sessions), **overrides)


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Layout]:
    found = Layout(tmp_path)
    monkeypatch.chdir(found.cwd)  # the working folder has sessions/ and ../other/: nothing may reach them
    yield found


ESCAPES = [
    "sessions/../../other/private.jsonl",
    "sessions/../../other/private.jsonl#L1-L2",
    "sessions/../../other/private.txt",
    "sessions/../leak.jsonl",
    "sessions/main/../../../other/private.jsonl",
    "sessions/./x.jsonl",
    "sessions//x.jsonl",
    "sessions/x.jsonl",  # cwd/sessions/x.jsonl exists, the session source holds no x.jsonl
    "sessions/main/x.jsonl",
    "sessions/main/sub/x.jsonl",
    "sessions/a/b/c/x.jsonl",
    "sessions/link.jsonl",  # a symlink in the sessions folder, to another agent's transcript
    "sessions/x.jsonl\\..\\..\\other\\private.jsonl",
    "sessions/x.jsonl\x00",
    "sessions/../../other/private.jsonl:1",
    "sessions/%2e%2e/%2e%2e/other/private.jsonl",
    "sessions/..%2f..%2fother/private.jsonl",
    f"sessions/{SESSION}.jsonl/",
    f"sessions/main/{SESSION}.jsonl/",
    "sessions/main/7c1e.jsonl",  # a citation names its session exactly, never as an id prefix
    f"sessions/other/{SESSION}.jsonl",  # another agent's name: this folder is agents/main/sessions
    f"sessions/main/{SESSION}.JSONL",
    "sessions/~/x.jsonl",
    pytest.param("sessions/" + "a" * 5000 + ".jsonl", id="ENAMETOOLONG"),
    f"sessions/main/{SESSION}.jsonl#L2-",
    f"sessions/{SESSION}.jsonl:2:3",
]


@pytest.mark.parametrize("path", ESCAPES)
def test_session_citations_never_leave_the_session_source(layout: Layout, path: str) -> None:
    memory = MemoryFiles(layout.config())
    with pytest.raises(PathRefused) as refused:
        memory.get_session(path)
    assert str(refused.value).startswith("path refused:")
    engine = MemoryEngine(layout.config())
    try:
        with pytest.raises(PathRefused):
            engine.get(path)
    finally:
        engine.close()


@pytest.mark.parametrize("path", ["sessions/../../other/private.jsonl", "sessions/main/../../../other/private.jsonl",
                                  "sessions/x.jsonl", pytest.param("memory/" + "a" * 5000 + ".md", id="ENAMETOOLONG"),
                                  "memory/2026-10-23.md:3:5", "sessions/main/7c1e.jsonl",
                                  pytest.param("sessions/a" + "/a" * 3000 + ".jsonl", id="deep-session")])
def test_cli_and_mcp_get_refuse_escapes(layout: Layout, path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    (layout.root / "home").mkdir()
    (layout.root / "home" / "config.toml").write_text(
        f'sources = ["memory", "sessions"]\nsessions_dir = "{layout.sessions}"\n[embedding]\nprovider = "hash"\n')
    monkeypatch.setenv("MEMDECK_HOME", str(layout.root / "home"))
    for json_flag in ([], ["--json"]):
        out = CliRunner().invoke(cli, ["--workspace", str(layout.workspace), "get", *json_flag, path])
        assert out.exit_code == 1 and PRIVATE not in out.output and "refused" in out.output, out.output
        assert out.exception is None or isinstance(out.exception, SystemExit)  # a message, never a traceback
    service = MemoryService(layout.config())
    try:
        answer = service.get({"path": path})
    finally:
        service.stop()
    assert answer.is_error and answer.payload["text"] == "" and PRIVATE not in json.dumps(answer.payload)


@pytest.mark.parametrize("typed", ["x.jsonl", "7c1e0", "sessions/x.jsonl", "../other/private.jsonl",
                                   "./x.jsonl", "link.jsonl", "link"])
def test_session_lookups_by_id_or_citation_never_read_the_working_folder(layout: Layout, typed: str) -> None:
    for source in (FolderSource(layout.sessions), MemoryFiles(layout.config()).sessions):
        with pytest.raises(SessionReadError):
            source.find(typed)
    for blank in ("", "   "):  # a prefix of every id: refused, never "matches N sessions"
        with pytest.raises(SessionReadError, match="no session named"):
            source.find(blank)


def test_an_id_and_a_citation_find_the_session_and_a_typed_file_path_only_with_files(layout: Layout) -> None:
    expected = layout.sessions / f"{SESSION}.jsonl"
    for typed in (SESSION, SESSION[:4], f"sessions/{SESSION}.jsonl", f"sessions/main/{SESSION}.jsonl",
                  f"{SESSION}.jsonl", f"sessions/{SESSION}.jsonl#L2-L25", f"sessions/main/{SESSION}.jsonl:2-25",
                  f"sessions/{SESSION}.jsonl #L2"):  # a search hit's citation, pasted back (flush, open)
        assert find_transcript(layout.sessions, typed) == expected
    for bad in (f"sessions/{SESSION}.jsonl#L2-", f"sessions/{SESSION}.jsonl:2:3", f"sessions/{SESSION}.jsonl#x"):
        with pytest.raises(SessionReadError, match="line anchor"):
            find_transcript(layout.sessions, bad)
    # `memdeck flush ./x.jsonl`: a path the user typed at the shell is theirs to name (files=True) ...
    assert find_transcript(layout.sessions, "./x.jsonl", files=True) == layout.cwd / "x.jsonl"
    # ... but never a citation or an id that happens to be a file here.
    with pytest.raises(SessionReadError):
        find_transcript(layout.sessions, "sessions/x.jsonl", files=True)
    assert find_transcript(layout.sessions, "7c1e", files=True) == expected


def test_database_session_citations_are_strict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = tmp_path / "agents" / "main" / "agent"
    agent.mkdir(parents=True)
    shutil.copyfile(DATA / "openclaw-agent.sqlite", agent / DB_FILE_NAME)
    decoy = tmp_path / "sessions" / "other" / f"{DB_SESSION}.jsonl"
    decoy.parent.mkdir(parents=True)
    decoy.write_text(f"{HEADER}\n{TURN}\n")
    monkeypatch.chdir(tmp_path)
    source = AgentDbSource(agent / DB_FILE_NAME, agent="main")
    for cited in (f"sessions/main/{DB_SESSION}.jsonl", f"sessions/main/{DB_SESSION}.jsonl#L1-L2",
                  f"sessions/main/{DB_SESSION}.jsonl:3"):
        assert source.find(cited) == Path(f"sessions/main/{DB_SESSION}.jsonl")
    for typed in (f"sessions/other/{DB_SESSION}.jsonl", f"sessions/main/../other/{DB_SESSION}.jsonl",
                  f"sessions/main/{DB_SESSION}.jsonl#L1-", f"sessions/main/./{DB_SESSION}.jsonl",
                  f"sessions/main/{DB_SESSION[:8]}.jsonl",
                  f"sessions/main/x/{DB_SESSION}.jsonl", f"sessions/other/{DB_SESSION}.jsonl".replace("/", "\\"),
                  f"sessions/{tmp_path}/sessions/other/{DB_SESSION}.jsonl", f"{tmp_path}/sessions/other/x.jsonl"):
        with pytest.raises(SessionReadError):
            source.find(typed)


# -- property: get with sessions on ------------------------------------------------------------------------------------
_PIECES = st.sampled_from(["sessions", "sessions/", "..", ".", "", "/", "\\", "\x00", "main", "other",
                           "private.jsonl", "private.txt", "x.jsonl", f"{SESSION}.jsonl", "link.jsonl", "memory",
                           "2026-10-23.md", "MEMORY.md", "#L1", "#L2-L3", "#L0", ":1", ":2-3", "~", "é", "\u2028",
                           "%2e%2e", "leak.jsonl", "agents", "cwd", "ws", "#l2", " #L2", ":2:3", "#L2-", "%2f",
                           "a" * 300, "\n", "7c1e.jsonl", "ws-link"])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_PIECES, min_size=1, max_size=8), st.sampled_from(["", "sessions/", "/", "ROOT/", "WS/"]),
       st.sampled_from(["/", ""]), st.booleans())
def test_get_with_sessions_on_never_returns_anything_outside(layout: Layout, pieces: list[str], prefix: str,
                                                             joint: str, with_range: bool) -> None:
    memory = MemoryFiles(layout.config())
    head = {"ROOT/": f"{layout.root}/", "WS/": f"{layout.workspace}/"}.get(prefix, prefix)
    path = head + joint.join(pieces)
    try:
        if path.strip().startswith("sessions/"):
            result = memory.get_session(path, 1 if with_range else None, 3 if with_range else None)
        else:
            from engine.workspace import read_memory_slice

            result = read_memory_slice(memory.config, path, 1 if with_range else None, 3 if with_range else None)
    except (PathRefused, SessionReadError):  # the engine's refusals: nothing else may escape
        return
    assert PRIVATE not in result.text
    if result.path.startswith("sessions/"):
        assert result.path in (f"sessions/{SESSION}.jsonl", f"sessions/main/{SESSION}.jsonl") or \
            result.path.startswith("sessions/7c1e"), result.path
    else:
        resolved = Path(result.path) if Path(result.path).is_absolute() else layout.workspace / result.path
        resolved = resolved.resolve()
        assert resolved.suffix == ".md"
        assert resolved.parent == layout.workspace.resolve() or \
            (layout.workspace.resolve() / "memory") in resolved.parents


# -- citations pasted back (class 8) -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("citation", "start", "count"),
    [
        ("memory/2026-10-23.md#L3-L5", 3, 3),  # search's citation, ctrl+l, the MCP prompt
        ("memory/2026-10-23.md#L4", 4, 1),
        ("memory/2026-10-23.md#L3-5", 3, 3),
        ("memory/2026-10-23.md:4", 4, 1),  # `memdeck search` text output: path:start-end
        ("memory/2026-10-23.md:3-6", 3, 4),
        ("  memory/2026-10-23.md#L3-L3  ", 3, 1),
        ("MEMORY.md#L3", 3, 1),
        ("memory/2026-10-23.md#l4", 4, 1),  # typed by hand
        ("memory/2026-10-23.md#l3-l4", 3, 2),
        ("memory/2026-10-23.md #L4", 4, 1),  # pasted with a space
        ("memory/2026-10-23.md :3-4", 3, 2),
        ("./memory/2026-10-23.md#L4", 4, 1),
        ("memory//2026-10-23.md:4", 4, 1),
        ("WS/memory/2026-10-23.md#L3-L4", 3, 2),  # the absolute path of a note in the workspace
        ("WS/MEMORY.md:3", 3, 1),
        ("LINK/memory/2026-10-23.md#L4", 4, 1),  # ... as the workspace was named, through a symlink
    ],
)
def test_every_printed_citation_reads_its_lines(layout: Layout, citation: str, start: int, count: int) -> None:
    link = layout.root / "ws-link"
    link.symlink_to(layout.workspace)
    config = layout.config(link) if citation.startswith("LINK/") else layout.config()
    citation = citation.replace("WS/", f"{layout.workspace}/").replace("LINK/", f"{link}/")
    rel = citation.strip().split("#")[0].split(":")[0].strip().removeprefix("./").replace("//", "/")
    rel = rel.removeprefix(f"{layout.workspace}/").removeprefix(f"{link}/")
    lines = (layout.workspace / rel).read_text().split("\n")
    expected = "\n".join(lines[start - 1 : start - 1 + count])
    engine = MemoryEngine(config)
    try:
        got = engine.get(citation)
    finally:
        engine.close()
    assert (got.path, got.text, got.from_line, got.lines) == (rel, expected, start, count)
    service = MemoryService(config)
    try:
        answer = service.get({"path": citation})
    finally:
        service.stop()
    assert not answer.is_error and answer.payload["text"] == expected


def test_flush_takes_a_session_citation_as_search_prints_it(layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMDECK_HOME", str(layout.root / "home"))
    for cited in (f"sessions/{SESSION}.jsonl#L2-L25", f"sessions/main/{SESSION}.jsonl:2-25"):
        out = CliRunner().invoke(cli, ["--workspace", str(layout.workspace), "--sessions", str(layout.sessions),
                                       "flush", "--dry-run", "--extractive", cited])
        assert out.exit_code == 0, out.output
    refused = CliRunner().invoke(cli, ["--workspace", str(layout.workspace), "--sessions", str(layout.sessions),
                                       "flush", "--dry-run", "--extractive", f"sessions/{SESSION}.jsonl#L2-"])
    assert refused.exit_code == 1 and "line anchor" in refused.output


def test_a_relative_sessions_folder_finds_its_sessions(layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--sessions ws/sessions`` (relative, as typed at the shell): a session found by its id or citation is read,
    not taken back for a name to look up (it was "no session 'ws/sessions/<id>.jsonl'")."""
    monkeypatch.setenv("MEMDECK_HOME", str(layout.root / "home"))
    monkeypatch.chdir(layout.root)
    relative = str(layout.sessions.relative_to(layout.root))  # agents/main/sessions
    for named in (SESSION[:6], f"sessions/{SESSION}.jsonl#L2-L25"):
        out = CliRunner().invoke(cli, ["--workspace", str(layout.workspace), "--sessions", relative,
                                       "flush", "--dry-run", "--extractive", named])
        assert out.exit_code == 0, out.output


def test_cli_get_reads_a_citation_and_explicit_flags_win(layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMDECK_HOME", str(layout.root / "home"))
    run = CliRunner().invoke
    base = ["--workspace", str(layout.workspace), "get"]
    assert run(cli, [*base, "memory/2026-10-23.md#L3-L4"]).output == "line three\nline four\n"
    assert run(cli, [*base, "memory/2026-10-23.md:5"]).output == "line five\n"
    # --lines alone counts from the cited line; --from wins over the cited start (to the end, or --lines of it).
    assert run(cli, [*base, "memory/2026-10-23.md#L3-L4", "--lines", "3"]).output == \
        "line three\nline four\nline five\n"
    assert run(cli, [*base, "memory/2026-10-23.md#L3-L4", "--from", "6"]).output == "line six\n"
    out = run(cli, [*base, "--json", "memory/2026-10-23.md#L4"])
    assert json.loads(out.output) == {"path": "memory/2026-10-23.md", "text": "line four"}


@pytest.mark.parametrize(("citation", "reason"), [
    ("memory/2026-10-23.md#L0", "start at 1"),
    ("memory/2026-10-23.md#L5-L3", "ends before it starts"),
    ("memory/2026-10-23.md#Lx", "line anchor"),
    ("memory/2026-10-23.md#L3-L", "line anchor"),
    ("memory/../MEMORY.md#L1", "'..'"),
    ("NOTES.md#L1", "not a memory file"),
    ("memory/2026-10-23.md#L3-", "line anchor is #L<first>, #L<first>-L<last>, :<first> or :<first>-<last>"),
    ("memory/2026-10-23.md#L-3", "line anchor"),
    ("memory/2026-10-23.md:3:5", "line anchor"),  # an editor's path:line:column
    ("memory/2026-10-23.md:3-", "line anchor"),
    ("memory/2026-10-23.md#L2#L3", "line anchor"),
    ("memory/2026-10-23.md#", "line anchor"),
    ("memory/2026-10-23.md#heading", "line anchor"),
    ("memory/2026-10-23.md#L\u0663", "line anchor"),  # ARABIC-INDIC DIGIT THREE: line numbers are ASCII
    ("memory/2026-10-23.md#L99999999999999999999", "line numbers go up to 999,999,999"),
    ("memory/2026-10-23.md:1234567890", "line numbers go up to"),
    pytest.param("memory/" + "a" * 5000 + ".md#L1", "path refused: 'memory/aaa.*: File name too long",
                 id="ENAMETOOLONG-name"),
    pytest.param("memory/" + "/".join(["abcdefgh"] * 600) + ".md", "path refused: .*: File name too long",
                 id="ENAMETOOLONG-path"),
    ("memory/2026-10-23.md\n#L3", "control characters"),
    ("WS/../ws/MEMORY.md", "'..'"),
    ("ROOT/agents/main/sessions/" + SESSION + ".jsonl", "a session is read by its citation"),
])
def test_bad_citations_are_refused_clearly(layout: Layout, citation: str, reason: str) -> None:
    citation = citation.replace("WS/", f"{layout.workspace}/").replace("ROOT/", f"{layout.root}/")
    engine = MemoryEngine(layout.config())
    try:
        with pytest.raises(PathRefused, match=reason):
            engine.get(citation)
    finally:
        engine.close()
    service = MemoryService(layout.config())
    try:
        answer = service.get({"path": citation})
    finally:
        service.stop()
    assert answer.is_error and re.search(reason, answer.payload["error"])


def test_a_session_citation_keeps_its_range(layout: Layout) -> None:
    assert parse_citation(f"sessions/main/{SESSION}.jsonl#L2-L3") == \
        parse_citation(f"sessions/main/{SESSION}.jsonl:2-3")
    memory = MemoryFiles(layout.config())
    by_anchor = memory.get_session(f"sessions/{SESSION}.jsonl#L2-L3")
    by_colon = memory.get_session(f"sessions/{SESSION}.jsonl:2-3")
    assert by_anchor == by_colon and by_anchor.from_line == 2 and by_anchor.lines == 2 and by_anchor.text
    for pasted in (f"sessions/{SESSION}.jsonl #L2-L3", f"sessions/{SESSION}.jsonl#l2-l3", f" sessions/{SESSION}.jsonl :2-3"):
        assert memory.get_session(pasted) == by_anchor, pasted  # the path without the space before its anchor
