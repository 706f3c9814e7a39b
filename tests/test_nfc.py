"""Unicode normalisation: a word matches whether it is written composed (NFC) or decomposed (NFD).

What is indexed (chunk text: FTS, embeddings, snippets) and what is queried are both taken in NFC. Line
numbers stay the file's; highlight spans index the snippet that is shown."""

from __future__ import annotations

import json
import unicodedata
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.api import MemoryEngine
from engine.index.chunking import chunk_document, nfc
from engine.index.indexer import CHUNKER_VERSION
from engine.search.query import parse_query, query_terms
from tests.helpers import hash_config

WORDS = ["Vračar", "naïve", "Čukarica", "café", "Ångström", "São Paulo", "Đurđevdan", "한국어"]


def _nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


def _workspace(root: Path, note_form: str, words: list[str]) -> Path:
    (root / "memory").mkdir(parents=True)
    body = "\n".join(f"- Line {i}: we talked about {word} over lunch." for i, word in enumerate(words, 1))
    text = unicodedata.normalize(note_form, f"# 2026-03-04 — Wednesday\n\nIntro line.\n{body}\n")
    (root / "memory" / "2026-03-04.md").write_text(text, encoding="utf-8")
    (root / "memory" / "2026-03-05.md").write_text("# Other\n\n- nothing relevant here\n", encoding="utf-8")
    return root


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
@pytest.mark.parametrize(("note_form", "query_form"), [("NFC", "NFD"), ("NFD", "NFC"), ("NFD", "NFD"),
                                                       ("NFC", "NFC")])
def test_a_word_is_found_in_either_form(tmp_path: Path, note_form: str, query_form: str, mode: str) -> None:
    ws = _workspace(tmp_path / "ws", note_form, WORDS)
    original = (ws / "memory" / "2026-03-04.md").read_text(encoding="utf-8").split("\n")
    with MemoryEngine(hash_config(ws)) as eng:
        eng.sync()
        for number, word in enumerate(WORDS, 1):
            query = unicodedata.normalize(query_form, word)
            hits = eng.search(query, mode=mode).results
            assert hits and hits[0].path == "memory/2026-03-04.md", (word, note_form, query_form)
            hit = hits[0]
            line = 3 + number  # "- Line N" is file line N + 3
            assert hit.start_line <= line <= hit.end_line
            # The snippet's lines are the file's lines (NFC), at the line numbers it says.
            shown = hit.snippet.split("\n")
            for offset, text in enumerate(shown):
                assert nfc(original[hit.snippet_start_line - 1 + offset]) == text
            # Every highlight span lies on the word in the text shown.
            highlighted = {hit.snippet[a:b].lower() for a, b in hit.spans}
            first = nfc(word).split()[0].lower()
            assert any(h.startswith(first[:3]) for h in highlighted), (word, highlighted)


def test_session_text_is_normalised_too(demo_workspace: Path) -> None:
    sessions = demo_workspace / "sessions"
    line = {"type": "message", "id": "n1", "parentId": None, "timestamp": "2026-11-12T20:00:00Z",
            "message": {"role": "user", "content": _nfd("we moved to Vračar last spring")}}
    with open(sessions / "9b2d4e71-5c3a-4f88-b6e0-7a1c2d3e4f51.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(line, ensure_ascii=False) + "\n")
    config = hash_config(demo_workspace, sources=["memory", "sessions"], sessions_dir=str(sessions))
    with MemoryEngine(config) as eng:
        eng.sync()
        hits = [h for h in eng.search("Vračar", mode="keyword").results if h.source == "sessions"]
        assert hits and "Vračar" in hits[0].snippet


def test_query_parse_and_chunks_are_nfc() -> None:
    assert parse_query(_nfd("Vračar naïve"), date(2026, 12, 1)).terms == ("vračar", "naïve")
    assert parse_query(_nfd("Vračar"), date(2026, 12, 1)).text == "Vračar"
    assert query_terms(_nfd("Čukarica")) == ["čukarica"]
    chunks = chunk_document(_nfd("# t\n\nVračar\nnaïve\n"))
    assert all(unicodedata.is_normalized("NFC", c.text) for c in chunks)
    assert (chunks[0].start_line, chunks[-1].end_line) == (1, 4)


@pytest.mark.parametrize(("on_disk", "typed"), [
    ("memory/café.md", "memory/café.md"), ("memory/Vračar/plan.md", "memory/Vračar/plan.md"),
    ("memory/한국어.md", "memory/한국어.md"),
])
@pytest.mark.parametrize("typed_form", ["NFC", "NFD"])
def test_a_note_named_in_nfd_is_read_and_appended_by_its_nfc_name(tmp_path: Path, on_disk: str, typed: str,
                                                                  typed_form: str) -> None:
    """macOS writes names decomposed; an agent or a terminal types them composed: the one note on disk is meant."""
    from engine.api import MemoryFiles
    from engine.workspace import read_memory_slice

    note = tmp_path / _nfd(on_disk)
    note.parent.mkdir(parents=True)
    note.write_text("# Note\n\n- first\n", encoding="utf-8")
    config = hash_config(tmp_path)
    name = unicodedata.normalize(typed_form, typed)
    read = read_memory_slice(config, name)
    assert read.text == "# Note\n\n- first\n" and read.path == _nfd(on_disk)
    written = MemoryFiles(config).append_note(name, "- second")
    assert written.path == note and written.rel == _nfd(on_disk)
    assert note.read_text(encoding="utf-8").endswith("- first\n\n- second\n")
    assert sorted(p.name for p in note.parent.iterdir()) == [note.name]  # no twin that looks the same


def test_the_index_records_the_normalising_chunker() -> None:
    assert CHUNKER_VERSION >= 5  # old indexes hold NFD text: the identity change rebuilds them


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=80))
def test_nfc_keeps_every_line_break(text: str) -> None:
    assert nfc(text).split("\n") == [unicodedata.normalize("NFC", part) for part in text.split("\n")]
    assert nfc(nfc(text)) == nfc(text)
