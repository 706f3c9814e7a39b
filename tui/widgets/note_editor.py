"""NoteEditor: a memory file in a Markdown text area, saved atomically, never over someone else's change."""

from __future__ import annotations

import asyncio

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import TextArea
from textual.widgets.text_area import Selection

from engine.api import plural, safe_name, safe_text
from tui.bridge import Bridge, DiskStamp, MemdeckError, Note, SaveConflict, same_content, unified_diff
from tui.messages import NoteSaved
from tui.widgets.markdown_area import MarkdownArea
from tui.widgets.text_line import TextLine


def _indents_with_tabs(text: str) -> bool:
    """Whether more of the text's indented lines start with a tab than with spaces."""
    tabs = text.count("\n\t") + text.startswith("\t")
    return tabs > 0 and tabs > text.count("\n ") + text.startswith(" ")


class NoteEditor(Vertical):
    """The centre pane's editor: header, conflict banner and the text area."""

    def __init__(self, bridge: Bridge, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.bridge = bridge
        self.note: Note | None = None
        self.saved_text = ""
        self.stamp: DiskStamp | None = None
        self.conflict = False
        self.selected_range: tuple[int, int] | None = None
        self.control_chars = False
        """The file has control characters (ESC, BEL, C1…): shown as visible escapes, so opened read-only."""
        self.notice = ""
        """A one-off message for the banner (where a conflict copy went); cleared when another file loads."""

    def compose(self) -> ComposeResult:
        yield TextLine("", id="editor-header")
        yield TextLine("", id="editor-banner")
        yield MarkdownArea(id="editor-area")

    @property
    def area(self) -> MarkdownArea:
        """The text area."""
        return self.query_one(MarkdownArea)

    @property
    def rel(self) -> str | None:
        """The open file, if any."""
        return self.note.rel if self.note is not None else None

    @property
    def modified(self) -> bool:
        """Whether the text differs from what is on disk (as last read or saved)."""
        return self.note is not None and self.area.text != self.saved_text

    @property
    def read_only(self) -> bool:
        """Files with undecodable bytes, NUL bytes or control characters open read-only: an edited line would lose
        or change them (the text shows U+FFFD for the first, nothing for NUL, escapes for the others)."""
        note = self.note
        return note is not None and (note.binary or note.nul or note.decode_errors > 0 or self.control_chars)

    # -- loading ------------------------------------------------------------------------------
    def load(self, note: Note, select: tuple[int, int] | None = None) -> None:
        """Show a file; ``select`` is a 1-based inclusive line range to select and scroll to."""
        self.note = note
        # TextArea sends a document's ESC, C1 and other control characters to the terminal as they are, where
        # they would run as escape sequences: such a file is shown with them as visible escapes, read-only.
        text = note.text
        lines = text.replace("\r\n", "\n") if "\r" in text else text
        shown = safe_text(lines)
        self.control_chars = shown != lines
        if not self.control_chars:
            shown = text
        self.saved_text = shown
        self.stamp = note.stamp
        self.conflict = False
        self.notice = ""
        area = self.area
        area.load_text(shown)
        area.read_only = self.read_only
        # Tab indents as the note does: with a tab where its lines are indented with tabs, else with spaces.
        area.indent_type = "tabs" if _indents_with_tabs(shown) else "spaces"
        self.selected_range = None
        if select is not None:
            self.select_range(*select)
        else:
            area.move_cursor((0, 0))
            area.scroll_home(animate=False)
        self._update_chrome()

    def reload(self, note: Note) -> None:
        """Replace the text with the disk version, keeping the cursor where it was."""
        cursor = self.area.cursor_location
        scroll = self.area.scroll_offset
        self.load(note)
        last = max(0, self.area.document.line_count - 1)
        self.area.move_cursor((min(cursor[0], last), cursor[1]))
        self.area.scroll_to(scroll.x, scroll.y, animate=False)

    def select_range(self, start_line: int, end_line: int) -> None:
        """Select lines ``start_line``–``end_line`` (1-based) with the cursor at the start, scrolled into view."""
        doc = self.area.document
        last = max(0, doc.line_count - 1)
        start = min(max(start_line - 1, 0), last)
        end = min(max(end_line - 1, start), last)
        self.area.show_range(Selection((end, len(doc.get_line(end))), (start, 0)))
        self.selected_range = (start + 1, end + 1)
        self.call_after_refresh(self._scroll_to_row, start)
        self._update_chrome()

    def _scroll_to_row(self, row: int) -> None:
        offset = self.area.wrapped_document.location_to_offset((row, 0))
        self.area.scroll_to(y=max(0, offset.y - 2), animate=False)

    def clear(self) -> None:
        """Close the file."""
        self.note = None
        self.saved_text = ""
        self.stamp = None
        self.conflict = False
        self.control_chars = False
        self.notice = ""
        self.area.load_text("")
        self._update_chrome()

    # -- chrome -------------------------------------------------------------------------------
    @on(TextArea.Changed, "#editor-area")
    def _changed(self, event: TextArea.Changed) -> None:
        self._update_chrome()

    def _update_chrome(self) -> None:
        header = self.query_one("#editor-header", TextLine)
        banner = self.query_one("#editor-banner", TextLine)
        if self.note is None:
            header.update("")
            if banner.display:
                banner.display = False
            return
        parts: list[Content | str | tuple[str, str]] = [(safe_name(self.note.rel), "bold")]
        if self.modified:
            parts.append(("  ● modified", "$text-warning"))
        if self.selected_range is not None:
            start, end = self.selected_range
            parts.append((f"  L{start}–L{end}" if start != end else f"  L{start}", "$text-secondary"))
        if self.read_only:
            parts.append(("  read-only", "$text-error"))
        # How the file stores its text (a save keeps it): "UTF-8 · LF", "UTF-16 LE · BOM · CRLF".
        parts.append((f"  {self.note.format.label}", "$text-muted"))
        header.update(Content.assemble(*parts))
        message = ""
        if self.conflict:
            message = "Changed on disk while you were editing — ctrl+s to resolve (reload / keep mine as a copy / diff)"
        elif self.note.binary:
            message = "This looks like a binary file: opened read-only so nothing is lost"
        elif self.note.decode_errors:
            message = (f"{plural(self.note.decode_errors, 'byte is', 'bytes are')} not {self.note.format.codec_name}: "
                       "opened read-only so they are not replaced on save")
        elif self.note.nul:
            message = "NUL bytes (not shown): opened read-only so they are kept"
        elif self.control_chars:
            message = "Control characters (shown as \\x1b and the like): opened read-only so they are kept as they are"
        elif self.notice:
            message = self.notice
        banner.update(Content(message))
        if banner.display != bool(message):
            banner.display = bool(message)
        self.set_class(self.conflict, "-conflict")

    # -- disk changes -------------------------------------------------------------------------
    async def check_disk(self) -> None:
        """React to a change on disk: reload an unmodified editor, flag a conflict on a modified one."""
        if self.note is None:
            return
        rel = self.note.rel
        try:
            note = await asyncio.to_thread(self.bridge.read_note, rel)
        except OSError:
            return
        if self.note is None or self.note.rel != rel or same_content(note.stamp, self.stamp):
            return
        if self.modified:
            self.conflict = True
            self._update_chrome()
            self.notify(f"{rel} changed on disk; your edits are kept — save to resolve", severity="warning")
        else:
            self.reload(note)
            self.notify(f"Reloaded {rel} (changed on disk)")

    # -- saving -------------------------------------------------------------------------------
    async def save(self) -> bool:
        """Save atomically; on a disk conflict ask what to do. True when the text is safely on disk."""
        if self.note is None:
            return True
        if self.read_only:
            self.notify("This file is read-only here (see the banner)", severity="warning")
            return False
        rel, text = self.note.rel, self.area.text
        try:
            result = await asyncio.to_thread(self.bridge.save_note, rel, text, self.stamp)
        except SaveConflict as conflict:
            return await self._resolve(conflict, text)
        except OSError as exc:
            self.notify(f"Could not save {rel}: {exc.strerror or exc}", severity="error")
            return False
        self.saved_text = text
        self.stamp = result.stamp
        self.conflict = False
        self._update_chrome()
        self.post_message(NoteSaved(rel, result.warnings))
        return True

    async def _resolve(self, conflict: SaveConflict, mine: str) -> bool:
        from tui.screens.dialogs import ChoiceScreen, DiffScreen

        self.conflict = True
        self._update_chrome()
        disk = conflict.disk_text
        while True:
            choices = [("reload", "Reload from disk", "warning"), ("copy", "Keep mine as a copy", "primary")]
            if disk is not None:
                choices.append(("diff", "Show diff", "default"))
            choices.append(("cancel", "Cancel", "default"))
            what = "was deleted" if disk is None else "changed"
            choice = await self.app.push_screen_wait(ChoiceScreen(
                "File changed on disk",
                f"{conflict.rel} {what} since you opened it. Nothing has been overwritten.",
                choices,
            ))
            if choice == "diff" and disk is not None:
                await self.app.push_screen_wait(DiffScreen(conflict.rel, unified_diff(conflict.rel, disk, mine)))
                continue
            break
        if choice == "reload":
            note = await asyncio.to_thread(self.bridge.read_note, conflict.rel)
            self.load(note)
            self.notify(f"Reloaded {conflict.rel} from disk; your edits were discarded")
            return True
        if choice == "copy":
            # The copy goes to memdeck's data dir, not next to the note: there it would be memory too, indexed
            # by memdeck and OpenClaw alike and found as a duplicate. The editor then shows the disk's version.
            try:
                copy = await asyncio.to_thread(self.bridge.write_copy, conflict.rel, mine)
                note = await asyncio.to_thread(self.bridge.read_note, conflict.rel)
            except (MemdeckError, OSError) as exc:
                self.notify(f"Could not write the copy: {exc}", severity="error")
                return False
            self.load(note)
            self.notice = f"Your version is kept in {copy} (outside memory: not indexed); this is the disk's"
            self._update_chrome()
            self.notify(f"Your version is kept in {copy}; {conflict.rel} was left as it is on disk")
            return True
        return False

    @work(exclusive=True, group="editor-save")
    async def save_in_background(self) -> None:
        """ctrl+s: save without blocking the caller."""
        await self.save()
