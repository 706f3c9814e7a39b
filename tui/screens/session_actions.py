"""Session actions of the workbench: pick a session to open, flush it into the daily notes of the days it was said,
write its session note."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import work

from tui.bridge import MemdeckError

if TYPE_CHECKING:
    from tui.screens.workbench import Workbench


class SessionActions:
    """What the workbench does with an agent's session (the transcript viewer shows it)."""

    def action_open_session(self: Workbench) -> None:
        from tui.commands import SessionChoice, open_session_picker

        sessions = self.memory_tree.model.sessions
        if not sessions:
            self.notify("No sessions found", severity="warning")
            return
        open_session_picker(self.app, [SessionChoice(s.label, s.session_id, s.detail, _bind(self.open_session, s.path))
                                       for s in sessions])

    @work(group="flush", exclusive=True)
    async def action_flush(self: Workbench) -> None:
        from tui.screens.flush import FlushScreen

        view = self.loaded_transcript
        transcript = view.transcript if view is not None else None
        if self.centre.current != "transcript" or transcript is None:
            self.notify("Open a session first (ctrl+p → Open session)", severity="warning")
            return
        self.notify("Drafting memories from the session…")
        now = self.bridge.now()  # the zone notes are dated in: the heading's time and the daily note's day
        draft = await asyncio.to_thread(self.bridge.draft_flush, transcript)
        if draft.is_empty:
            known = f" ({draft.skipped_known} already in memory)" if draft.skipped_known else ""
            self.notify(f"Nothing new to store from session {transcript.session_id[:8]}{known}")
            return
        plan = await asyncio.to_thread(self.bridge.plan_flush, transcript, draft, now)
        target = self.bridge.flush_targets(plan)
        n = len(draft.items)
        from engine.api import plural  # loaded by now: there is a draft

        info = (f"{plural(n, 'candidate memory', 'candidate memories')} ({draft.method})"
                + (f", {draft.skipped_known} already in memory" if draft.skipped_known else "")
                + f". Edit freely; Append adds this to {target}"
                + (" (each part to the note its <!-- flush → … --> line names)." if len(plan.blocks) > 1 else "."))
        text = await self.app.push_screen_wait(FlushScreen(f"Flush session {transcript.session_id[:8]} → {target}",
                                                           info, plan.preview, draft.warnings,
                                                           target=plan.paths[0], heading=self.bridge.flush_heading(plan)))
        if not text:
            return
        try:
            rels, warnings = await asyncio.to_thread(self.bridge.write_flush, plan, text, now)
        except (MemdeckError, OSError) as exc:
            self.notify(f"Flush failed, nothing written: {exc}", severity="error")
            return
        self.notify(f"Appended to {', '.join(rels)}")
        for warning in warnings:
            self.notify(warning, severity="warning")
        self.sync.request()
        self.scan_tree(with_sessions=True)

    @work(group="flush", exclusive=True)
    async def action_session_note(self: Workbench) -> None:
        view = self.loaded_transcript
        if self.centre.current != "transcript" or view is None or view.transcript is None or view.path is None:
            self.notify("Open a session first (ctrl+p → Open session)", severity="warning")
            return
        try:
            rel = await asyncio.to_thread(self.bridge.write_session_note, view.transcript, view.path)
        except (MemdeckError, OSError) as exc:
            self.notify(f"Session note failed: {exc}", severity="error")
            return
        self.notify(f"Wrote {rel}")
        self.sync.request()
        self.scan_tree(with_sessions=False)


def _bind(func: Callable[..., object], *args: object) -> Callable[[], None]:
    def call() -> None:
        func(*args)

    return call
