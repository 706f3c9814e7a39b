"""Text that is not valid UTF-8 inside valid JSON (a lone surrogate, half an emoji) is made safe where it enters:
transcripts (JSONL files and OpenClaw's agent database, compressed rows too), the LLM's answer. Nothing later
— index, search, flush, session notes — ever meets a character it cannot encode."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.api import MemoryEngine, MemoryFiles
from engine.display import safe_text
from engine.http import Response
from engine.memory.append import render_flush_block
from engine.memory.llm import ChatClient, LLMError, draft_with_llm
from engine.sessions.reader import read_transcript, session_search_text
from engine.textio import decode_bytes, scrub_json, scrub_surrogates
from memdeck.cli import cli
from tests.helpers import hash_config

SID = "5a5a5a5a-1111-4222-8333-444455556666"
NOW = datetime(2026, 11, 27, 18, 0, tzinfo=UTC)
FIXTURE_DB = Path(__file__).parent / "data" / "openclaw-agent.sqlite"
DB_SESSION = "8555a0a4-0b79-459d-939c-e17cdbbf4fe2"  # holds the fixture's one zstd-compressed row
ZSTD_SEQ = 63


def _encodable(value: Any) -> None:
    """Every string in ``value`` (dataclasses, tuples, dicts walked) encodes as UTF-8."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    json.dumps(value, ensure_ascii=False, default=str).encode("utf-8")


def _line(text: str, role: str = "user", n: int = 1) -> str:
    # json.dumps writes a lone surrogate as its \\uXXXX escape: valid JSON, as a JS writer produces it.
    return json.dumps({"type": "message", "id": f"m{n}", "parentId": None, "timestamp": "2026-11-27T17:00:00Z",
                       "message": {"role": role, "content": [{"type": "text", "text": text}]}})


def _transcript_file(folder: Path, lines: list[str], newline: str = "\n") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{SID}.jsonl"
    header = json.dumps({"type": "session", "version": 3, "id": SID, "timestamp": "2026-11-27T17:00:00Z"})
    path.write_bytes((newline.join([header, *lines]) + newline).encode("utf-8"))
    return path


# -- the sanitizer ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "clean"), [
    ("plain", "plain"),
    ("\ud800", "\ufffd"),
    ("half \ud83d emoji", "half \ufffd emoji"),
    ("\udfff tail", "\ufffd tail"),
    ("\ud83d\ude00", "😀"),  # two halves side by side are the character they stand for
    ("\ude00\ud83d", "\ufffd\ufffd"),  # low then high: no pair
    ("😀 kept", "😀 kept"),
])
def test_scrub_surrogates(text: str, clean: str) -> None:
    assert scrub_surrogates(text) == clean
    clean.encode("utf-8")


def test_scrub_json_reaches_keys_lists_and_deep_nesting() -> None:
    deep: Any = "\ud800"
    for _ in range(5000):  # deeper than the recursion limit
        deep = [deep]
    value = scrub_json({"k\udc00": ["a", {"b": "\ud83d"}], "deep": deep, "n": 1})
    assert value["k\ufffd"] == ["a", {"b": "\ufffd"}] and value["n"] == 1
    inner = value["deep"]
    while isinstance(inner, list):
        inner = inner[0]
    assert inner == "\ufffd"


# -- transcripts --------------------------------------------------------------------------------------------

SURROGATE_LINES = [
    ("user text", _line("half an emoji \ud83d here")),
    ("assistant text", _line("reply \udfff", role="assistant")),
    ("string content", json.dumps({"type": "message", "id": "x", "message": {"role": "user", "content": "a\ud800"}})),
    ("thinking", json.dumps({"type": "message", "id": "x", "message": {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "hm \ud800"}, {"type": "text", "text": "ok"}]}})),
    ("tool arguments", json.dumps({"type": "message", "id": "x", "message": {"role": "assistant", "content": [
        {"type": "toolCall", "name": "w\ud800", "id": "c\udc00", "arguments": {"k\ud800": "v\udc01"}}]}})),
    ("compaction summary", json.dumps({"type": "compaction", "id": "c", "summary": "sum \ud800"})),
    ("custom type and label", json.dumps({"type": "label", "id": "l", "label": "\ud800", "customType": "\udc00"})),
    ("uppercase escape", '{"type":"message","id":"u","message":{"role":"user","content":"A \\uD83D B"}}'),
]


@pytest.mark.parametrize(("label", "line"), SURROGATE_LINES, ids=[case[0] for case in SURROGATE_LINES])
def test_a_lone_surrogate_in_a_transcript_line_becomes_a_replacement_character(
        tmp_path: Path, label: str, line: str) -> None:
    transcript = read_transcript(_transcript_file(tmp_path, [line]))
    assert len(transcript.entries) == 2 and not transcript.skipped
    _encodable(transcript)
    assert "\ufffd" in json.dumps(dataclasses.asdict(transcript), ensure_ascii=False, default=str)
    _encodable(session_search_text(transcript))


def _sessions_engine(workspace: Path) -> MemoryEngine:
    return MemoryEngine(hash_config(workspace, sources=["memory", "sessions"],
                                    sessions_dir=str(workspace / "sessions")))


def test_index_search_flush_and_session_note_survive_a_lone_surrogate(demo_workspace: Path) -> None:
    _transcript_file(demo_workspace / "sessions", [
        _line("I prefer the quokka mascot \ud83d for the v3 launch", n=1),
        _line("Noted: the quokka mascot \udc00 ships in v3.", role="assistant", n=2),
    ])
    with _sessions_engine(demo_workspace) as eng:
        report = eng.sync()
        assert not report.issues
        for mode in ("keyword", "hybrid"):
            hits = eng.search("quokka mascot", mode=mode).results
            assert any(hit.source == "sessions" for hit in hits)
            _encodable([hit.to_dict() if hasattr(hit, "to_dict") else dataclasses.asdict(hit) for hit in hits])
        assert eng.status().to_dict() is not None
        transcript = eng.sessions.read(SID)
        draft = eng.draft_flush(transcript, method="extractive")
        assert draft.items
        block = render_flush_block(draft, NOW)
        written = eng.append_flush(SID, block, NOW)
        assert decode_bytes(written.path.read_bytes()).errors == 0
        note = eng.write_session_note(transcript, now=NOW, method="extractive", dry_run=True)
        note.text.encode("utf-8")
        _encodable(eng.get(f"sessions/{SID}.jsonl"))


# -- OpenClaw's agent database ------------------------------------------------------------------------------

def _octet_length(value: Any) -> int | None:
    return None if value is None else len(value.encode() if isinstance(value, str) else bytes(value))


def test_agent_db_rows_plain_and_compressed_and_bad_text_columns(tmp_path: Path) -> None:
    zstandard = pytest.importorskip("zstandard")
    db = tmp_path / "openclaw-agent.sqlite"
    shutil.copyfile(FIXTURE_DB, db)
    compressed = _line("zstd row with half an emoji \ud83d quokka", n=ZSTD_SEQ).encode("utf-8")
    plain = _line("plain row \udfff wombat", n=ZSTD_SEQ + 1000)
    conn = sqlite3.connect(db)  # test set-up only: memdeck never writes OpenClaw's database
    conn.create_function("octet_length", 1, _octet_length, deterministic=True)
    with conn:
        conn.execute("UPDATE transcript_events SET event_zstd = ?, event_utf8_bytes = ? WHERE session_id = ? "
                     "AND seq = ?", (zstandard.ZstdCompressor().compress(compressed), len(compressed), DB_SESSION,
                                     ZSTD_SEQ))
        (last,) = conn.execute("SELECT max(seq) FROM transcript_events WHERE session_id = ?",
                               (DB_SESSION,)).fetchone()
        conn.execute("INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_utf8_bytes) "
                     "VALUES (?, ?, ?, ?, ?)", (DB_SESSION, last + 1, plain, 1772980000000, len(plain.encode())))
        # A name stored as bytes that are not UTF-8 (Python's sqlite3 would refuse the whole row).
        conn.execute("UPDATE session_nodes SET display_name = CAST(x'ff4e616d65ed' AS TEXT) "
                     "WHERE current_session_id = ?", (DB_SESSION,))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    workspace = tmp_path / "ws"
    (workspace / "memory").mkdir(parents=True)
    (workspace / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    with MemoryEngine(hash_config(workspace, sources=["memory", "sessions"], sessions_dir=str(db))) as eng:
        listed = eng.sessions.list_sessions()
        _encodable(listed)
        assert any(info.title and "\ufffd" in info.title for info in listed if DB_SESSION in str(info))
        transcript = eng.sessions.read(DB_SESSION)
        _encodable(transcript)
        assert not [item for item in transcript.skipped if item.line == ZSTD_SEQ + 1]
        eng.sync()
        for word in ("quokka", "wombat"):
            hits = [hit for hit in eng.search(word, mode="keyword").results if hit.source == "sessions"]
            assert hits and "\ufffd" in hits[0].snippet
            hits[0].snippet.encode("utf-8")


# -- the LLM ------------------------------------------------------------------------------------------------

def _llm_body(content: str, **extra: Any) -> bytes:
    # json.dumps writes a lone surrogate as its \\uXXXX escape, as a JSON writer of UTF-16 strings does.
    return json.dumps({"choices": [{"message": {"content": content}}], **extra}).encode("utf-8")


# (label, status, body, what the draft's items are: None for an LLMError)
LLM_ANSWERS: list[tuple[str, int, bytes, list[str] | None]] = [
    ("lone surrogate in the content", 200, _llm_body("- [preference] Prefers the quokka \ud83d mascot (line 2)"),
     ["Prefers the quokka \ufffd mascot"]),
    ("lone surrogate elsewhere in the answer", 200, _llm_body("- [fact] quokka (line 2)", id="c\udc00",
                                                               usage={"k\ud800": 1}), ["quokka"]),
    ("bytes that are not UTF-8", 200,
     b'{"choices": [{"message": {"content": "- [fact] quokka \xff\xfe \xed\xa0\x80 (line 2)"}}]}',
     ["quokka \ufffd\ufffd \ufffd\ufffd\ufffd"]),
    ("escape sequences and controls", 200,
     _llm_body("- [fact] quokka \x1b]52;c;aGk=\x07mascot \x1b[31mred\x1b[0m, NUL\x00 (line 2)"),
     ["quokka mascot red, NUL"]),
    ("bidi override", 200, _llm_body("- [fact] quokka \u202eevil\u202c (line 2)"), ["quokka evil"]),
    ("U+2028 and NEL are line breaks", 200,
     _llm_body("- [fact] quokka one\u2028- [fact] quokka two\x85- [fact] quokka three (line 2)"),
     ["quokka one", "quokka two", "quokka three"]),
    ("UTF-16 with a BOM", 200, b"\xff\xfe" + _llm_body("- [fact] quokka (line 2)").decode().encode("utf-16-le"),
     ["quokka"]),
    ("not JSON", 200, b'{"choices": [{"message": {"content": "- [fact] x', None),
    ("error with a lone surrogate", 400, b'{"error": {"message": "bad \\ud800 model"}}', None),
]


@pytest.mark.parametrize(("label", "status", "body", "items"), LLM_ANSWERS, ids=[case[0] for case in LLM_ANSWERS])
def test_an_llm_answer_is_made_safe_where_it_arrives(tmp_path: Path, label: str, status: int, body: bytes,
                                                     items: list[str] | None) -> None:
    def transport(url: str, sent: bytes, headers: Any, timeout: float) -> Response:
        return Response(status, "OK" if status == 200 else "Bad Request", {}, body)

    client = ChatClient("http://127.0.0.1:9/v1", "m", transport=transport, retries=0)
    path = _transcript_file(tmp_path / "sessions", [_line("I prefer the quokka mascot", n=1)])
    if items is None:
        with pytest.raises(LLMError) as caught:
            draft_with_llm(read_transcript(path), client)
        message = str(caught.value)
        message.encode("utf-8")  # shown by the CLI and the TUI: nothing that cannot be encoded
        assert "\ufffd" in message or "JSON" in message
        return
    draft = draft_with_llm(read_transcript(path), client)
    assert [item.text for item in draft.items] == items
    block = render_flush_block(draft, NOW)
    assert safe_text(block) == block  # what a dry run shows is what is written: plain text
    written = MemoryFiles(hash_config(tmp_path)).append_flush(SID, block, NOW)
    note = written.path.read_text(encoding="utf-8")
    assert all(item in note for item in items)


_ANSWER_TEXT = st.text(alphabet=st.one_of(st.characters(codec="utf-8"), st.characters(categories=["Cs"]),
                                           st.sampled_from("\x00\x1b\x07\x85\u2028\u2029\u202e\r\n-[]()")),
                      max_size=60)
_BODIES = st.one_of(
    _ANSWER_TEXT.map(lambda text: _llm_body("- [fact] quokka " + text + " (line 2)")),
    _ANSWER_TEXT.map(_llm_body),
    st.binary(max_size=80).map(lambda data: b'{"choices": [{"message": {"content": "- quokka ' + data + b'"}}]}'),
    st.binary(max_size=80),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=_BODIES, status=st.sampled_from([200, 200, 400, 500]))
def test_fuzz_llm_answers(tmp_path: Path, body: bytes, status: int) -> None:
    """Any answer: an LLMError that can be shown, or items that are plain, encodable note text."""
    def transport(url: str, sent: bytes, headers: Any, timeout: float) -> Response:
        return Response(status, "status", {}, body)

    client = ChatClient("http://127.0.0.1:9/v1", "m", transport=transport, retries=0)
    path = tmp_path / "sessions" / f"{SID}.jsonl"
    transcript = read_transcript(path if path.exists() else _transcript_file(tmp_path / "sessions", [
        _line("I prefer the quokka mascot", n=1)]))
    try:
        draft = draft_with_llm(transcript, client)
    except LLMError as exc:
        str(exc).encode("utf-8")
        return
    block = render_flush_block(draft, NOW)
    block.encode("utf-8")
    assert safe_text(block) == block
    assert len(block.splitlines()) == len(block.split("\n")) - 1  # no line break but "\n"


# -- the CLI's JSON: UTF-8 whatever a file name holds -------------------------------------------------------

def test_json_output_is_utf8_when_a_transcript_name_is_not(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    path = _transcript_file(folder, [_line("I prefer the quokka mascot", n=1)])
    os.rename(path, os.path.join(os.fsencode(folder), b"bad\xff\xfename.jsonl"))
    workspace = tmp_path / "ws"
    (workspace / "memory").mkdir(parents=True)
    runner = CliRunner()
    for args in (["sessions", "--json"], ["index", "--json"], ["status", "--json"]):
        result = runner.invoke(cli, ["--workspace", str(workspace), "--sessions", str(folder), *args])
        assert result.exit_code == 0, (args, result.output)
        payload = json.loads(result.stdout_bytes.decode("utf-8"))  # strict: bytes a JSON reader takes
        assert payload
    listed = json.loads(runner.invoke(cli, ["--workspace", str(workspace), "--sessions", str(folder), "sessions",
                                            "--json"]).stdout_bytes.decode("utf-8"))
    assert [item["sessionId"] for item in listed["sessions"]] == ["bad\udcff\udcfename"]


# -- U+2028/U+2029 in what the doors show: the editor's ↵/⁋, the data unchanged -----------------------------

def test_line_separators_show_as_the_editors_glyphs(tmp_path: Path) -> None:
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "sep.md").write_text("# Sep\n\n- one\u2028still line three\n- para\u2029graph\n",
                                                encoding="utf-8")
    runner = CliRunner()
    base = ["--workspace", str(tmp_path)]
    shown = runner.invoke(cli, [*base, "search", "still line", "--mode", "keyword"]).output
    assert "- one↵still line three" in shown and "- para⁋graph" in shown and "\u2028" not in shown
    assert "- one↵still line three" in runner.invoke(cli, [*base, "get", "memory/sep.md"]).output
    exact = json.loads(runner.invoke(cli, [*base, "search", "still line", "--mode", "keyword", "--json"]).output)
    assert "- one\u2028still line three" in exact["results"][0]["snippet"]  # data: as in the file
    assert "\u2028" in runner.invoke(cli, [*base, "get", "memory/sep.md", "--raw"]).output
    with MemoryEngine(hash_config(tmp_path)) as eng:
        eng.sync()
        hit = eng.search("still line", mode="keyword").results[0]
    from tui.widgets.search_pane import render_hit, snippet_lines

    lines = snippet_lines(hit, limit=10)
    assert [line.text for line in lines][-2:] == ["- one↵still line three", "- para⁋graph"]
    assert all(len(line.text) == len(raw) for line, raw in zip(lines, hit.snippet.split("\n"), strict=False))
    assert "↵" in render_hit(hit).plain


# -- fuzz: any transcript text, through the reader, drafting, indexing and search ---------------------------

_TEXT = st.text(alphabet=st.one_of(
    st.characters(codec="utf-8"),
    st.characters(categories=["Cs"]),  # lone surrogates (\\udXXX once dumped)
    st.sampled_from("\x00\x01\x1b\x07\r\n\t\u2028\u2029\ufeff\x85"),
), max_size=40)
_HALF = st.characters(categories=["Cs"])  # a surrogate on its own
_WITH_HALF = st.tuples(_TEXT, _HALF, _TEXT).map("".join)
_LINES = st.one_of(
    _TEXT.map(_line),
    _WITH_HALF.map(lambda text: _line("quokka " + text)),
    _WITH_HALF.map(lambda text: _line(text, role="assistant")),
    _TEXT,  # not JSON
    st.binary(max_size=30).map(lambda data: data.decode("latin-1")),
    st.just('{"type":"message","message":{"role":"user","content":"open'),  # truncated
    st.just("[1, 2]"),
    st.just('"\\ud800"'),
    st.integers(min_value=1, max_value=100_000).map(lambda n: _line("quokka " + "x" * n)),  # huge lines
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow, HealthCheck.data_too_large])
@given(lines=st.lists(_LINES, max_size=8), bom=st.booleans(), crlf=st.booleans())
def test_fuzz_transcript_text(tmp_path_factory: pytest.TempPathFactory, lines: list[str], bom: bool,
                              crlf: bool) -> None:
    workspace = tmp_path_factory.mktemp("ws")
    (workspace / "memory").mkdir()
    (workspace / "MEMORY.md").write_text("# Memory\n\n- The quokka is the mascot.\n", encoding="utf-8")
    folder = workspace / "sessions"
    path = _transcript_file(folder, [line.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
                                     for line in lines], "\r\n" if crlf else "\n")
    if bom:
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    transcript = read_transcript(path)
    _encodable(transcript)
    _encodable(session_search_text(transcript))
    memory = MemoryFiles(hash_config(workspace, sources=["memory", "sessions"], sessions_dir=str(folder)))
    draft = memory.draft_flush(transcript, method="extractive")
    _encodable(draft)
    render_flush_block(draft, NOW).encode("utf-8")
    with _sessions_engine(workspace) as eng:
        eng.sync()
        for query in ("quokka", "x"):
            _encodable([dataclasses.asdict(hit) for hit in eng.search(query, mode="keyword").results])


@pytest.mark.parametrize("data", [
    b"\xed\xa0\x80 CESU-8 half", b"\xed\xb0\x80", b"\xff\xfe" + "\ud800x".encode("utf-16-le", "surrogatepass"),
    b"\xfe\xff" + "x\udc00".encode("utf-16-be", "surrogatepass"), b"\xef\xbb\xbfok \xc0\x80",
])
def test_file_reads_never_yield_a_surrogate(data: bytes) -> None:
    """Files are decoded by codecs that replace what they cannot decode: no surrogate comes out of a file read."""
    text = decode_bytes(data).text
    assert scrub_surrogates(text) == text
    text.encode("utf-8")
