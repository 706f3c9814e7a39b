"""The MCP server: tools, resources and prompt in process, and over stdio and HTTP with the SDK's client."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any, TextIO

import anyio
import pytest

from engine.api import daily_heading
from memdeck.mcp import (
    TOOLS,
    MemoryService,
    SearchArguments,
    ToolSpec,
    resource_uri,
    tool_definitions,
    unavailable_payload,
)
from tests.helpers import hash_config

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 90
OPENCLAW_HIT_KEYS = {"path", "startLine", "endLine", "score", "snippet", "source", "citation"}
SCORE_PARTS = {"vectorScore", "textScore"}


def _service(ws: Path, allow_write: bool = False, warm_wait: float = 60.0) -> MemoryService:
    return MemoryService(hash_config(ws), allow_write=allow_write, warm_wait=warm_wait)


def _lines(path: Path, start: int, count: int) -> str:
    return "\n".join(path.read_text(encoding="utf-8").split("\n")[start - 1 : start - 1 + count])


# -- in process: the tools' payloads ----------------------------------------------------------
def test_search_returns_openclaw_shape_with_score_parts(demo_workspace: Path) -> None:
    service = _service(demo_workspace)
    out = service.search({"query": "database incident", "maxResults": 3})
    assert not out.is_error
    hits = out.payload["results"]
    assert 1 <= len(hits) <= 3
    for hit in hits:
        assert hit.keys() >= OPENCLAW_HIT_KEYS | SCORE_PARTS
        assert hit["source"] == "memory"
        assert 1 <= hit["startLine"] <= hit["endLine"]
        assert hit["citation"] == f"{hit['path']}#L{hit['startLine']}-L{hit['endLine']}" or (
            hit["startLine"] == hit["endLine"] and hit["citation"] == f"{hit['path']}#L{hit['startLine']}")
    assert out.payload["mode"] == "hybrid"
    service.stop()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "query required"),
        ({"query": "   "}, "query required"),
        ({"query": 42}, "query must be a string"),
        ({"query": "x", "maxResults": True}, "maxResults must be an integer"),
        ({"query": "x", "maxResults": "many"}, "maxResults must be an integer"),
        ({"query": "x", "minScore": "high"}, "minScore must be a number"),
        # round 2: NaN compares false with everything, so it was clamped to 0 (every result); Infinity to 1
        ({"query": "x", "minScore": float("nan")}, "minScore must be a finite number, not nan"),
        ({"query": "x", "minScore": "NaN"}, "minScore must be a finite number, not 'NaN'"),
        ({"query": "x", "minScore": float("inf")}, "minScore must be a finite number, not inf"),
        ({"query": "x", "minScore": "-inf"}, "minScore must be a finite number, not '-inf'"),
        ({"query": "x", "maxResults": 5.5}, "maxResults must be an integer, not 5.5"),
        ({"query": "x", "maxResults": "1e3"}, "maxResults must be an integer"),
        ({"query": "x", "corpus": "notes"}, "corpus must be 'memory', 'sessions', 'all' or 'wiki', not 'notes'"),
        ({"query": "x", "limit": 3}, "unknown argument 'limit'"),
    ],
)
def test_search_rejects_bad_arguments(demo_workspace: Path, arguments: dict[str, Any], message: str) -> None:
    out = _service(demo_workspace).search(arguments)
    assert out.is_error
    assert message in out.payload["error"]
    assert out.payload["results"] == []


@pytest.mark.parametrize(
    ("arguments", "most"),
    [({"query": "Heron", "maxResults": 2}, 2), ({"query": "Heron", "maxResults": "1"}, 1),
     ({"query": "Heron", "maxResults": 2.0}, 2), ({"query": "Heron", "maxResults": 0}, 1)],
)
def test_search_max_results_is_read_as_an_integer(demo_workspace: Path, arguments: dict[str, Any],
                                                   most: int) -> None:
    out = _service(demo_workspace).search({**arguments, "minScore": 0})
    assert 1 <= len(out.payload["results"]) <= most


@pytest.mark.parametrize(
    ("error", "quota"),
    [("OSError: disk I/O error", False), ("embedding provider said 429 Too Many Requests", True),
     ("insufficient_quota", True)],
)
def test_search_unavailable_payload(demo_workspace: Path, monkeypatch: pytest.MonkeyPatch, error: str,
                                    quota: bool) -> None:
    service = _service(demo_workspace)

    def broken() -> Any:
        raise RuntimeError(error)

    monkeypatch.setattr(service, "engine", broken)
    out = service.search({"query": "database incident"})
    assert not out.is_error  # OpenClaw returns this payload; the agent reports it to the user
    assert out.payload == unavailable_payload(f"RuntimeError: {error}")
    assert out.payload["results"] == [] and out.payload["disabled"] is True
    assert {"error", "warning", "action"} <= out.payload.keys()
    assert ("quota" in out.payload["warning"]) is quota


def test_search_during_warm_up_answers_from_keywords(demo_workspace: Path) -> None:
    service = _service(demo_workspace, warm_wait=0.0)
    service.engine().sync(embed=False)
    service.ready.clear()  # as if the model were still loading
    out = service.search({"query": "database incident"})
    assert out.payload["mode"] == "keyword"
    assert any("still being indexed" in w for w in out.payload["warnings"])
    assert out.payload["results"]
    service.stop()


@pytest.mark.parametrize(
    ("arguments", "start", "count"),
    [({"from": 3, "lines": 2}, 3, 2), ({"from": "3", "lines": "2"}, 3, 2), ({"from": 5.0, "lines": 1}, 5, 1),
     ({"from": 1, "lines": 4}, 1, 4)],
)
def test_get_reads_line_ranges(demo_workspace: Path, arguments: dict[str, Any], start: int, count: int) -> None:
    out = _service(demo_workspace).get({"path": "memory/2026-09-28.md", **arguments})
    assert not out.is_error
    assert out.payload == {"path": "memory/2026-09-28.md",
                           "text": _lines(demo_workspace / "memory/2026-09-28.md", start, count)}


def test_get_whole_file_and_missing_file(demo_workspace: Path) -> None:
    service = _service(demo_workspace)
    whole = service.get({"path": "MEMORY.md"})
    assert whole.payload["text"] == (demo_workspace / "MEMORY.md").read_text(encoding="utf-8")
    assert service.get({"path": "memory/1999-01-01.md"}).payload == {"path": "memory/1999-01-01.md", "text": ""}


@pytest.mark.parametrize(
    ("path", "reason"),
    [("../outside.md", "'..' is not allowed"), ("/etc/passwd", "only Markdown"), ("NOTES.md", "not a memory file"),
     ("memory/2026-09-28.txt", "only Markdown"), ("memory%2F2026-09-28.md", "URL-encoded"),
     ("memory/link.md", "symlink"), ("", "path required")],
)
def test_get_refuses_paths_outside_memory(demo_workspace: Path, path: str, reason: str) -> None:
    (demo_workspace / "NOTES.md").write_text("secret\n", encoding="utf-8")
    (demo_workspace / "memory" / "link.md").symlink_to(demo_workspace / "NOTES.md")
    out = _service(demo_workspace).get({"path": path})
    assert out.is_error
    assert out.payload["text"] == "" and out.payload["disabled"] is True and out.payload["path"] == path
    assert reason in out.payload["error"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [({}, "path required"), ({"path": 7}, "path must be a string"),
     ({"path": "MEMORY.md", "from": "two"}, "from must be an integer")],
)
def test_get_rejects_bad_arguments(demo_workspace: Path, arguments: dict[str, Any], message: str) -> None:
    out = _service(demo_workspace).get(arguments)
    assert out.is_error and message in out.payload["error"]


# -- in process: memory_append ----------------------------------------------------------------
def test_append_is_refused_without_allow_write(demo_workspace: Path) -> None:
    today = demo_workspace / "memory" / f"{date.today().isoformat()}.md"
    out = _service(demo_workspace).append({"text": "- remember this"})
    assert out.is_error and "--allow-write" in out.payload["error"]
    assert not today.exists()


def test_append_writes_todays_note_and_indexes_it_at_once(demo_workspace: Path) -> None:
    service = _service(demo_workspace, allow_write=True)
    service.engine().sync()
    today = date.today().isoformat()
    rel = f"memory/{today}.md"
    first = service.append({"text": "- The aquarium's zebrafish prefer teal gravel."})
    assert not first.is_error
    assert first.payload == {"path": rel, "startLine": 1, "endLine": 3, "citation": f"{rel}#L1-L3",
                             "created": True, "indexed": True}
    second = service.append({"text": "\n- Second line about quokkas.\n- And a third.\n"})
    assert second.payload["startLine"] == 5 and second.payload["endLine"] == 6 and not second.payload["created"]
    text = (demo_workspace / rel).read_text(encoding="utf-8")
    heading = daily_heading(date.today())  # the first line every door gives a new daily note
    assert text == (f"{heading}\n\n- The aquarium's zebrafish prefer teal gravel.\n\n"
                    "- Second line about quokkas.\n- And a third.\n")
    eng = service.engine()
    assert eng.dirty_files() == []  # indexed by the append itself, not by the next search
    hits = eng.search("quokkas", mode="keyword", ensure_fresh=False).results
    assert hits and hits[0].path == rel
    service.stop()


def test_append_during_warm_up_saves_without_waiting_for_the_index(demo_workspace: Path) -> None:
    service = _service(demo_workspace, allow_write=True)
    service.ready.clear()  # as if the start-up sync were still running
    out = service.append({"text": "- The wombat budget is approved."})
    assert not out.is_error and out.payload["indexed"] is False and "start-up" in out.payload["warning"]
    assert "wombat budget" in (demo_workspace / out.payload["path"]).read_text(encoding="utf-8")
    assert service.engine().search("wombat", mode="keyword").results  # the next search indexes it
    service.stop()


def test_append_to_a_named_memory_file(demo_workspace: Path) -> None:
    service = _service(demo_workspace, allow_write=True)
    out = service.append({"text": "- Kestrel moved to gRPC.", "file": "memory/projects/kestrel.md"})
    assert out.payload["path"] == "memory/projects/kestrel.md" and out.payload["created"]
    assert (demo_workspace / "memory/projects/kestrel.md").read_text(encoding="utf-8") == "- Kestrel moved to gRPC.\n"
    service.stop()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [({"text": "x", "file": "MEMORY.md"}, "writes only memory/*.md"),
     ({"text": "x", "file": "../escape.md"}, "'..' is not allowed"),
     ({"text": "x", "file": "notes/x.md"}, "not a memory file"),
     ({"text": "x", "file": "memory/x.txt"}, "only Markdown"),
     ({"text": "  \n"}, "text required"),
     ({}, "text required"),
     ({"text": "x" * 70_000}, "text too long")],
)
def test_append_refuses_bad_targets(demo_workspace: Path, arguments: dict[str, Any], message: str) -> None:
    before = sorted(p.name for p in demo_workspace.rglob("*"))
    out = _service(demo_workspace, allow_write=True).append(arguments)
    assert out.is_error and message in out.payload["error"]
    assert sorted(p.name for p in demo_workspace.rglob("*")) == before


# -- in process: watching, resources, prompt ---------------------------------------------------
def test_watcher_syncs_when_a_memory_file_changes(demo_workspace: Path) -> None:
    service = _service(demo_workspace)
    service.engine().sync()
    service.start(warm=False, watch=True)
    try:
        assert service.watching.wait(30)
        before = service.timings.syncs
        (demo_workspace / "memory" / "2030-01-01.md").write_text("# 2030-01-01\n- capybara census\n",
                                                                encoding="utf-8")
        assert service.wait_for_sync(before, 30)
        assert service.engine().dirty_files() == []
        hits = service.engine().search("capybara", mode="keyword", ensure_fresh=False).results
        assert [h.path for h in hits] == ["memory/2030-01-01.md"]
    finally:
        service.stop()


@pytest.mark.parametrize(
    ("rel", "watched"),
    [("MEMORY.md", True), ("memory/2026-01-01.md", True), ("memory/projects/x.md", True),
     ("AGENTS.md", False), ("memory/.2026-01-01.md.abc.tmp", False), ("memory/notes.txt", False),
     ("sessions/a.jsonl", False)],
)
def test_watch_filter(demo_workspace: Path, rel: str, watched: bool) -> None:
    assert _service(demo_workspace).is_watched(str(demo_workspace / rel)) is watched


def test_resources_list_memory_then_daily_notes_newest_first(demo_workspace: Path) -> None:
    service = _service(demo_workspace)
    rels = [r.rel for r in service.resources()]
    assert rels[0] == "MEMORY.md"
    daily = [r for r in rels if re.fullmatch(r"memory/\d{4}-\d{2}-\d{2}.*\.md", r)]
    assert daily == sorted(daily, reverse=True) and len(daily) >= 10
    assert rels.index(daily[-1]) < min(rels.index(r) for r in rels if r.startswith("memory/projects/"))
    rel, text = service.read_resource(resource_uri("MEMORY.md"))
    assert rel == "MEMORY.md" and text == (demo_workspace / "MEMORY.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("uri", ["memdeck://../secret.md", "file:///etc/passwd", "memdeck://AGENTS.md"])
def test_resources_refuse_other_files(demo_workspace: Path, uri: str) -> None:
    from engine.errors import PathRefused

    with pytest.raises(PathRefused):
        _service(demo_workspace).read_resource(uri)


@pytest.mark.parametrize(("allow_write", "hint"), [(False, "read-only"), (True, "memory_append")])
def test_recall_guide_matches_write_permission(demo_workspace: Path, allow_write: bool, hint: str) -> None:
    guide = _service(demo_workspace, allow_write=allow_write).recall_guide()
    assert "memory_search" in guide and hint in guide


def test_audit_tool_gives_the_cli_json_and_changes_nothing(tmp_path: Path) -> None:
    import shutil

    from engine.config import load_config

    db = tmp_path / "openclaw-agent.sqlite"
    shutil.copy(REPO / "tests" / "data" / "openclaw-agent.sqlite", db)
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    before = {p: p.read_bytes() for p in [db, ws / "MEMORY.md"]}
    service = MemoryService(load_config(workspace=ws, sessions_dir=db, overrides={"embedding": {"provider": "hash"}}))
    out = service.audit({"session": "5e1f0c3a"})
    assert not out.is_error, out.payload
    [sess] = out.payload["sessions"]
    assert sess["sessionId"].startswith("5e1f0c3a")
    assert sess["verdict"].startswith("compacted at 176K tokens with no flush before it")
    assert any("Telegram over email" in st["text"] and st["citation"].startswith(f"sessions/main/{sess['sessionId']}")
               for st in sess["statements"])
    assert set(out.payload) >= {"sessions", "scanned", "statements", "unflushedCompactions", "warnings"}
    later = service.audit({"since": "2026-11-01"})
    assert {s["sessionId"][:8] for s in later.payload["sessions"]} == {"3f6c2a9e", "9b2d4e71"}
    bad = service.audit({"since": "yesterday"})
    assert bad.is_error and "since must be a date YYYY-MM-DD" in bad.payload["error"]
    unknown = service.audit({"days": 3})
    assert unknown.is_error and "unknown argument 'days'" in unknown.payload["error"]
    assert {p: p.read_bytes() for p in before} == before
    service.stop()


@pytest.mark.parametrize(("allow_write", "names"),
                         [(False, ["memory_search", "memory_get", "memory_review", "memory_audit"]),
                          (True, ["memory_search", "memory_get", "memory_append", "memory_review",
                                   "memory_audit"])])
def test_tool_schemas_match_openclaw(allow_write: bool, names: list[str]) -> None:
    tools = {t["name"]: t for t in tool_definitions(allow_write)}
    assert list(tools) == names
    # OpenClaw 2026.9's tools take a corpus too (memory, wiki, all, sessions).
    assert set(tools["memory_search"]["input_schema"]["properties"]) == {"query", "maxResults", "minScore", "corpus"}
    assert set(tools["memory_get"]["input_schema"]["properties"]) == {"path", "from", "lines", "corpus"}


@pytest.mark.parametrize("spec", TOOLS, ids=[t.name for t in TOOLS])
def test_advertised_schema_is_the_argument_models_schema(spec: ToolSpec) -> None:
    advertised = {t["name"]: t["input_schema"] for t in tool_definitions(allow_write=True)}[spec.name]
    assert advertised == spec.arguments.input_schema()
    # pydantic's own rendering of the model names the same arguments, in the same order, with the same required.
    plain = spec.arguments.model_json_schema()
    assert list(advertised["properties"]) == list(plain["properties"]) == spec.arguments.argument_names()
    assert advertised.get("required") == plain.get("required")
    assert advertised["additionalProperties"] is False  # what the checking does: unknown arguments are refused


def test_advertised_types_stay_openclaw_compatible() -> None:
    schemas = {t["name"]: t["input_schema"] for t in tool_definitions(allow_write=True)}
    types = {name: {arg: prop["type"] for arg, prop in s["properties"].items()} for name, s in schemas.items()}
    assert types == {
        "memory_search": {"query": "string", "maxResults": "integer", "minScore": "number", "corpus": "string"},
        "memory_get": {"path": "string", "from": "integer", "lines": "integer", "corpus": "string"},
        "memory_append": {"text": "string", "file": "string"},
        "memory_review": {"kind": "string", "since": "string", "all": "boolean"},
        "memory_audit": {"since": "string", "session": "string"},
    }
    assert {name: s.get("required", []) for name, s in schemas.items()} == {
        "memory_search": ["query"], "memory_get": ["path"], "memory_append": ["text"], "memory_review": [],
        "memory_audit": []}
    search = schemas["memory_search"]["properties"]
    assert (search["maxResults"]["minimum"], search["maxResults"]["maximum"]) == (1, 50)
    assert (search["minScore"]["minimum"], search["minScore"]["maximum"]) == (0, 1)
    assert all("title" not in p and "anyOf" not in p for s in schemas.values() for p in s["properties"].values())


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [("search", {"query": "x", "limit": 3}, "unknown argument 'limit' (the arguments are query, maxResults, minScore, corpus)"),
     ("search", {"query": "x", "max_results": 3}, "unknown argument 'max_results'"),
     ("get", {"path": "MEMORY.md", "from_line": 2}, "unknown argument 'from_line' (the arguments are path, from, lines, corpus)"),
     ("append", {"text": "- x", "tags": ["a"]}, "unknown argument 'tags' (the arguments are text, file)"),
     ("review", {"show_all": True}, "unknown argument 'show_all' (the arguments are kind, since, all)")],
)
def test_unknown_arguments_are_refused(demo_workspace: Path, tool: str, arguments: dict[str, Any],
                                       message: str) -> None:
    before = sorted(p.name for p in demo_workspace.rglob("*"))
    out = getattr(_service(demo_workspace, allow_write=True), tool)(arguments)
    assert out.is_error and message in out.payload["error"]
    assert sorted(p.name for p in demo_workspace.rglob("*")) == before


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [("search", {"query": "x", "minScore": True}, "minScore must be a number, not True"),
     ("search", {"query": ["x"]}, "query must be a string, not list"),
     ("search", {"query": None}, "query required"),
     ("search", {"query": "x", "maxResults": 2.5}, "maxResults must be an integer, not 2.5"),
     ("get", {"path": "MEMORY.md", "lines": []}, "lines must be an integer, not []"),
     ("append", {"text": 5}, "text must be a string, not int"),
     ("append", {"text": "- x", "file": 7}, "file must be a string, not int"),
     ("review", {"all": "yes"}, "all must be true or false, not 'yes'")],
)
def test_wrong_types_get_a_clear_message(demo_workspace: Path, tool: str, arguments: dict[str, Any],
                                         message: str) -> None:
    out = getattr(_service(demo_workspace, allow_write=True), tool)(arguments)
    assert out.is_error and out.payload["error"] == message


def test_every_problem_of_a_call_is_reported_at_once() -> None:
    with pytest.raises(ValueError, match=r"^query must be a string, not int; maxResults must be an integer, "
                                         r"not 'x'; unknown argument 'k' "):
        SearchArguments.parse({"query": 5, "maxResults": "x", "k": 1})


def test_importing_the_server_module_does_not_import_the_sdk() -> None:
    code = "import sys, engine.api, memdeck.mcp\nprint('mcp' in sys.modules, 'uvicorn' in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "False False"


# -- over the wire: the SDK's client against a real server process ----------------------------
def _server_args(ws: Path, *extra: str) -> list[str]:
    return ["-m", "memdeck.cli", "--workspace", str(ws), "mcp", *extra]


def _server_env() -> dict[str, str]:
    return {"MEMDECK_HOME": os.environ["MEMDECK_HOME"], "MEMDECK_EMBEDDING_PROVIDER": "hash",
            "PYTHONPATH": str(REPO)}


@pytest.fixture
def server_log(tmp_path: Path) -> Iterator[TextIO]:
    with open(tmp_path / "server.log", "w+", encoding="utf-8") as log:
        yield log


@pytest.fixture
def http_server(demo_workspace: Path, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """A ``memdeck mcp --http 0`` process; yields its URL and bearer token (read from the lines it announces)."""
    proc = subprocess.Popen([sys.executable, *_server_args(demo_workspace, "--http", "0")], cwd=REPO,
                            env={**os.environ, **_server_env()}, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    seen: list[str] = []
    url = token = None
    for line in proc.stderr:  # ends if the server dies before announcing itself
        seen.append(line)
        if match := re.search(r"http://127\.0\.0\.1:\d+/mcp", line):
            url = match.group(0)
        if match := re.search(r"bearer token: (\S+)", line):
            token = match.group(1)
        if url and token:
            break
    try:
        assert url and token, "server did not start:\n" + "".join(seen)
        yield url, token
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0


def _payload(result: Any) -> dict[str, Any]:
    data = json.loads(result.content[0].text)
    assert data == result.structured_content
    return dict(data)


async def _exercise_read_tools(session: Any, ws: Path) -> None:
    tools = await session.list_tools()
    assert [t.name for t in tools.tools] == ["memory_search", "memory_get", "memory_review", "memory_audit"]
    search_tool = tools.tools[0]
    assert search_tool.annotations.read_only_hint is True
    assert search_tool.input_schema["required"] == ["query"]
    assert search_tool.input_schema == SearchArguments.input_schema()
    unknown = await session.call_tool("memory_search", {"query": "database incident", "limit": 3})
    assert unknown.is_error and "unknown argument 'limit'" in _payload(unknown)["error"]

    found = _payload(await session.call_tool("memory_search", {"query": "database incident", "maxResults": 3}))
    hits = found["results"]
    assert hits and len(hits) <= 3, found
    assert hits[0].keys() >= OPENCLAW_HIT_KEYS | SCORE_PARTS
    top = hits[0]
    count = top["endLine"] - top["startLine"] + 1
    got = await session.call_tool("memory_get", {"path": top["path"], "from": top["startLine"], "lines": count})
    assert not got.is_error
    assert _payload(got) == {"path": top["path"], "text": _lines(ws / top["path"], top["startLine"], count)}

    refused = await session.call_tool("memory_get", {"path": "../../etc/passwd.md"})
    assert refused.is_error
    assert _payload(refused)["error"] == "path refused: '..' is not allowed ('../../etc/passwd.md')"

    denied = await session.call_tool("memory_append", {"text": "- should not be written"})
    assert denied.is_error and "--allow-write" in _payload(denied)["error"]


async def test_stdio_server_lists_tools_searches_gets_and_refuses(demo_workspace: Path,
                                                                   server_log: TextIO) -> None:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=_server_args(demo_workspace), env=_server_env(),
                                   cwd=str(REPO))
    with anyio.fail_after(TIMEOUT):
        async with stdio_client(params, errlog=server_log) as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.server_info.name == "memdeck"
            assert "memory_search" in (init.instructions or "")
            await _exercise_read_tools(session, demo_workspace)

            resources = await session.list_resources()
            uris = [r.uri for r in resources.resources]
            assert uris[0] == "memdeck://MEMORY.md" and "memdeck://memory/2026-09-28.md" in uris
            read_back = await session.read_resource("memdeck://memory/2026-09-28.md")
            assert read_back.contents[0].text == (demo_workspace / "memory/2026-09-28.md").read_text(encoding="utf-8")

            prompts = await session.list_prompts()
            assert [p.name for p in prompts.prompts] == ["memory_recall"]
            prompt = await session.get_prompt("memory_recall", {"question": "When is the v2.4 release?"})
            text = prompt.messages[0].content.text
            assert "memory_search" in text and "When is the v2.4 release?" in text
    assert not (demo_workspace / "memory" / f"{date.today().isoformat()}.md").exists()


async def test_stdio_server_appends_with_allow_write(demo_workspace: Path, server_log: TextIO) -> None:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=_server_args(demo_workspace, "--allow-write"),
                                   env=_server_env(), cwd=str(REPO))
    with anyio.fail_after(TIMEOUT):
        async with stdio_client(params, errlog=server_log) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            names = [t.name for t in (await session.list_tools()).tools]
            assert names == ["memory_search", "memory_get", "memory_append", "memory_review",
                                   "memory_audit"]
            before = _payload(await session.call_tool("memory_search", {"query": "okapi dashboard"}))
            assert before["mode"] == "hybrid", before  # the search waited for the start-up warm-up
            written = _payload(await session.call_tool("memory_append",
                                                       {"text": "- Decided: the okapi dashboard ships Friday."}))
            rel = f"memory/{date.today().isoformat()}.md"
            assert written["path"] == rel and written["indexed"] is True, written.get("warning")
            found = _payload(await session.call_tool("memory_search", {"query": "okapi dashboard"}))
            assert [h["path"] for h in found["results"]][:1] == [rel], found
            hit = found["results"][0]
            assert hit["startLine"] <= written["startLine"] <= hit["endLine"]
            refused = await session.call_tool("memory_append", {"text": "x", "file": "MEMORY.md"})
            assert refused.is_error
    assert "okapi dashboard ships Friday" in (demo_workspace / rel).read_text(encoding="utf-8")


async def test_http_server_lists_tools_searches_gets_and_refuses(http_server: tuple[str, str],
                                                                  demo_workspace: Path) -> None:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    url, token = http_server
    client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    with anyio.fail_after(TIMEOUT):
        async with client, streamable_http_client(url, http_client=client) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            await _exercise_read_tools(session, demo_workspace)


async def test_http_server_requires_the_token_and_keeps_no_session(http_server: tuple[str, str]) -> None:
    import httpx2

    url, token = http_server
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "test", "version": "1"}}}
    accept = {"Accept": "application/json, text/event-stream"}
    with anyio.fail_after(TIMEOUT):
        async with httpx2.AsyncClient(timeout=TIMEOUT) as client:
            for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": token}):
                refused = await client.post(url, json=initialize, headers={**accept, **headers})
                assert refused.status_code == 401, headers
                assert refused.json()["error"]["message"].startswith("unauthorized")
            answered = await client.post(url, json=initialize, headers={**accept, "Authorization": f"Bearer {token}"})
            assert answered.status_code == 200 and '"serverInfo"' in answered.text
            # Stateless: nothing is kept for a client that never ends its session.
            assert "mcp-session-id" not in answered.headers
            big = await client.post(url, content=b"x" * (1024 * 1024 + 1),
                                    headers={**accept, "Authorization": f"Bearer {token}",
                                             "Content-Type": "application/json"})
            assert big.status_code == 413 and "request too large" in big.json()["error"]["message"]
