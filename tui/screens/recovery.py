"""Recovery copies: the unsaved text a signal (or an error) stopped the last run with, offered back at start."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from textual import work

from tui.bridge import MemdeckError

if TYPE_CHECKING:
    from engine.api import RecoveryCopy
    from tui.screens.workbench import Workbench

RECOVERY_STATES = {
    "unchanged": "The note has not changed on disk since.",
    "changed": "The note CHANGED on disk since you edited it: recovering puts your text in place of the new "
               "version (see the diff first).",
    "missing": "The note is gone from disk since (deleted or moved): saving would create it again.",
    "new": "The note did not exist yet when you edited it, and does not now: saving creates it.",
}
"""What the recovery dialog says about the note on disk now (``engine.api.recovery_disk_state``)."""

RECOVERY_SHORT = {"unchanged": "note unchanged", "changed": "note CHANGED since", "missing": "note gone",
                  "new": "new note"}
"""The same, in the list of several copies."""


class Recovery:
    """The workbench's offer of recovery copies (the app starts it with the first screen)."""

    recovery_settled = False
    """The offer is over (every copy decided, kept for later, or none to offer); a dialog may still be up before."""

    @work(group="recovery", exclusive=True)
    async def offer_recovery(self: Workbench) -> None:
        """Offer back the unsaved text a signal (or an error) stopped the last run with.

        Each copy: recover it into the editor as unsaved changes, see its diff against the note on disk first,
        discard it, or decide later (it stays for the next start). The dialog says when the note changed on disk
        since the text was edited from it (the copy keeps the note's hash as the editor had read it). Several
        copies are listed in one dialog, never one dialog after another; a copy whose text the note on disk holds
        already (the stop came during its save) is removed without asking; damaged copies are named in a warning
        and left where they are.
        """
        try:
            await _offer(self)
        finally:
            self.recovery_settled = True


async def _offer(screen: Workbench) -> None:
    """:meth:`Recovery.offer_recovery`'s work."""
    from engine.api import discard_recovery, plural, recovery_dir, recovery_listing
    from tui.screens.dialogs import PickScreen

    listing = await asyncio.to_thread(recovery_listing, screen.config)
    if listing.unreadable:
        n = len(listing.unreadable)
        names = ", ".join(path.name for path, _ in listing.unreadable[:3]) + (", …" if n > 3 else "")
        screen.notify(f"{plural(n, 'recovery copy', 'recovery copies')} could not be read and "
                      f"{'was' if n == 1 else 'were'} left in {recovery_dir(screen.config)} ({names}); "
                      "memdeck.log says why", title="Recovery", severity="warning", timeout=15)
    pending: list[tuple[RecoveryCopy, str]] = []
    for copy in listing.copies:
        state = await asyncio.to_thread(_recovery_state, screen, copy)
        if state is not None:
            pending.append((copy, state))
            continue
        with contextlib.suppress(MemdeckError, OSError):  # nothing to recover: the note holds this text
            await asyncio.to_thread(discard_recovery, screen.config, copy.id)
    while pending:
        chosen = pending[0]
        if len(pending) > 1:
            picked = await screen.app.push_screen_wait(PickScreen(
                "Recover unsaved changes?",
                f"memdeck was stopped with unsaved changes, {plural(len(pending), 'copy', 'copies')} of them "
                "kept. Pick one to recover, diff or discard it; Later keeps them all for the next start.",
                [f"{copy.rel}  ·  {copy.reason}, {copy.saved_at.replace('T', ' ')}  ·  {RECOVERY_SHORT[state]}"
                 for copy, state in pending],
                [("discard-all", "Discard all", "error"), ("later", "Later", "default")]))
            if picked == "discard-all":
                for copy, _ in pending:
                    await _discard_copy(screen, copy)
                return
            if not picked.isdigit() or int(picked) >= len(pending):
                return  # later (or escape): every copy stays
            chosen = pending[int(picked)]
        pending.remove(chosen)
        outcome = await _offer_one(screen, *chosen)
        if outcome == "recovered" and pending:  # the user is editing now: the rest waits for the next start
            screen.notify(f"{plural(len(pending), 'more recovery copy', 'more recovery copies')} kept for the "
                          "next start", title="Recovery")
        if outcome != "decided" or len(pending) <= 0:
            return


def _recovery_state(screen: Workbench, copy: RecoveryCopy) -> str | None:
    """The note on disk against the copy (a key of :data:`RECOVERY_STATES`); None when the note holds the
    copy's text already. Runs in a thread."""
    from engine.api import recovery_disk_state

    state = recovery_disk_state(screen.config, copy)
    try:
        disk = screen.bridge.read_note(copy.rel).text
    except (MemdeckError, OSError):
        return state
    return None if disk == copy.text else state


async def _discard_copy(screen: Workbench, copy: RecoveryCopy) -> None:
    from engine.api import discard_recovery

    try:
        await asyncio.to_thread(discard_recovery, screen.config, copy.id)
    except (MemdeckError, OSError) as exc:
        screen.notify(f"Cannot remove the recovery copy {copy.path}: {exc}", severity="warning")


async def _offer_one(screen: Workbench, copy: RecoveryCopy, state: str) -> str:
    """Ask about one copy: ``recovered`` (its text is in the editor), ``decided`` (discarded, or kept for
    later: the other copies can be asked about), or ``stop`` (it could not be recovered)."""
    from tui.bridge import unified_diff
    from tui.screens.dialogs import ChoiceScreen, DiffScreen

    choices = [("recover", "Recover", "primary"), ("diff", "Show diff", "default"),
               ("discard", "Discard", "error"), ("later", "Later", "default")]
    message = (f"memdeck was stopped ({copy.reason}, {copy.saved_at.replace('T', ' ')}) with unsaved changes "
               f"to {copy.rel}; they were kept.\n\n{RECOVERY_STATES[state]}\n\n"
               "Recover puts them in the editor as unsaved changes (nothing is written until you save); "
               "Later keeps them for the next start.")
    while True:
        choice = await screen.app.push_screen_wait(ChoiceScreen("Recover unsaved changes?", message, choices,
                                                                focus="recover"))
        if choice != "diff":
            break
        try:
            disk = await asyncio.to_thread(screen.bridge.read_note, copy.rel)
            disk_text = disk.text
        except (MemdeckError, OSError):
            disk_text = ""
        await screen.app.push_screen_wait(DiffScreen(copy.rel, unified_diff(copy.rel, disk_text, copy.text)))
    if choice == "recover":
        if not await recover_into_editor(screen, copy.rel, copy.text):
            return "stop"
    elif choice != "discard":
        return "decided"  # later (or escape): the copy stays
    await _discard_copy(screen, copy)
    return "recovered" if choice == "recover" else "decided"


async def recover_into_editor(screen: Workbench, rel: str, text: str) -> bool:
    """Open ``rel`` with ``text`` in place of its content, as unsaved changes (ctrl+z brings the disk's back).

    False when it could not (the open file's changes were kept, or the note cannot be read).
    """
    editor = await screen.ensure_editor()
    if not await screen.confirm_discard():
        return False
    try:
        note = await asyncio.to_thread(screen.bridge.read_note, rel)
    except (MemdeckError, OSError) as exc:
        screen.notify(f"Cannot open {rel}: {exc}", severity="error")
        return False
    big = screen.loaded_big_file
    if big is not None:
        big.close()
    screen.centre.current = "editor"
    editor.load(note)
    area = editor.area
    area.replace(text, (0, 0), area.document.end)
    area.move_cursor((0, 0))
    screen.memory_tree.select_note(note.rel)
    screen.call_after_refresh(area.focus)
    screen.notify(f"Recovered your unsaved changes to {note.rel}: ctrl+s saves them")
    return True
