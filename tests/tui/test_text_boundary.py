"""The TUI's doors for outside text: a transcript with lone surrogates, a secret in its first words and a file name
that is not UTF-8 syncs, lists and opens; a snippet's U+2028 shows as the editor's ↵."""

from __future__ import annotations

import json
import os
from pathlib import Path

from engine.config import load_config
from tests.tui.conftest import make_app, settle

SID = "5a5a5a5a-1111-4222-8333-444455556666"


def _transcript(folder: Path, name: bytes) -> None:
    events = [
        {"type": "session", "version": 3, "id": SID, "timestamp": "2026-11-27T17:00:00Z", "cwd": "/home/\ud800"},
        {"type": "message", "id": "m1", "message": {"role": "user", "content": [
            {"type": "text", "text": "the quokka mascot \ud83d ships, password=hunter2secret"}]}},
        {"type": "message", "id": "m2", "message": {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "hm \udc00"},
            {"type": "toolCall", "id": "c\ud800", "name": "ex\ud800ec", "arguments": {"k\ud800": "v"}},
            {"type": "text", "text": "Noted: the quokka \udfff."}]}},
    ]
    with open(os.path.join(os.fsencode(folder), name), "w", encoding="utf-8") as fh:
        fh.write("\n".join(json.dumps(event) for event in events) + "\n")  # \\udXXX escapes: valid JSON


async def test_surrogates_secrets_and_odd_names_in_the_tui(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "memory").mkdir(parents=True)
    (workspace / "memory" / "sep.md").write_text("# Sep\n\n- one\u2028still quokka line\n", encoding="utf-8")
    folder = tmp_path / "sessions"
    folder.mkdir()
    _transcript(folder, f"{SID}.jsonl".encode())
    _transcript(folder, b"bad\xff\xfename.jsonl")
    config = load_config(workspace=workspace, sessions_dir=folder,
                         overrides={"embedding": {"provider": "hash"}, "sources": ["memory", "sessions"]})
    app = make_app(config)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        status = str(app.query_one("#status").render())
        assert "synced never" not in status
        sessions = app.main.memory_tree.model.sessions
        assert len(sessions) == 2
        for session in sessions:
            session.label.encode("utf-8")
            assert "hunter2" not in session.label
        app.main.open_session(next(s.path for s in sessions if SID in s.path.name))
        await settle(pilot)
        view = app.main.loaded_transcript
        assert view is not None and view.transcript is not None
        shown = "\n".join(block.body for block in view.lines.blocks)
        shown.encode("utf-8")
        assert "\ufffd" in shown
        app.main.search.query_input.value = "quokka"
        await settle(pilot)
        options = app.main.search.results.options
        assert options and any("one↵still quokka line" in str(option.prompt) for option in options)
