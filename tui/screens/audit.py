"""AuditScreen: what people said in sessions that memory does not hold yet, per session against its compactions;
pick statements and append them to the daily notes of the days they were said, or promote one to MEMORY.md."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option

from engine.api import plural, safe_text
from tui.bridge import Bridge, MemdeckError
from tui.screens.review import ListedScreen, PromoteScreen, after_action, highlight_nearest, run_listed

if TYPE_CHECKING:
    from engine.api import AuditReport, Lost, ReviewAction, SessionAudit
    from tui.screens.workbench import Workbench

CONTEXT_AROUND = 1
"""Lines of the message shown above and below the statement (its turn's context)."""


def statement_key(statement: Lost) -> str:
    """A statement's list id: its session, line and text (two statements of one line stay apart)."""
    return f"{statement.session_id}:{statement.line}:{statement.text}"


def _short(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def session_label(session: SessionAudit, width: int = 80) -> Content:
    """A session's heading row: its short id, title and when it was last active."""
    title = _short(session.title, max(10, width - 28)) if session.title else ""
    when = (session.last_activity or "")[:16].replace("T", " ")
    return Content.assemble((session.session_id[:8], "bold $text-primary"), " ", Content(safe_text(title)),
                            (f"  {when}", "$text-muted"))


def statement_label(statement: Lost, picked: bool, width: int = 80) -> Content:
    """A statement's row: picked or not, its text (cut to fit) and its kind."""
    mark = "[x] " if picked else "[ ] "
    kind = f"  {statement.kind}"
    return Content.assemble((mark, "$text-accent" if picked else "$text-muted"),
                            Content(safe_text(_short(statement.text, max(20, width - len(mark) - len(kind))))),
                            (kind, "$text-muted"))


class AuditScreen(ListedScreen):
    """The audit's sessions (newest first) and their unrecovered statements; below, the selected statement in its
    turn and the session's compaction verdict.

    Args:
        bridge: the engine, as the TUI calls it.
        main: the workbench, told about every file an append writes (tree, index, an open editor).
    """

    AUTO_FOCUS = "#audit-list"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", show=False),
        Binding("space", "pick", "Pick", id="audit.pick"),
        Binding("a", "append", "Append picked", id="audit.append"),
        Binding("p", "promote", "Promote to MEMORY.md", id="audit.promote"),
        Binding("u", "undo", "Undo", id="audit.undo"),
        Binding("r", "refresh", "Refresh", id="audit.refresh"),
    ]
    DEFAULT_CSS = """
    AuditScreen #audit-summary { height: auto; padding: 0 1; background: $boost; }
    AuditScreen #audit-list { height: auto; max-height: 55%; border: none; }
    AuditScreen #audit-detail { height: 1fr; padding: 0 1; border-top: solid $panel; }
    """

    def __init__(self, bridge: Bridge, main: Workbench) -> None:
        super().__init__()
        self.bridge = bridge
        self.main = main
        self.report: AuditReport | None = None
        self.statements: dict[str, tuple[SessionAudit, Lost]] = {}
        self.picked: set[str] = set()
        self.busy = False
        self.loads = 0
        """Audits finished (or failed) so far: what tests and refreshes wait on."""

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        yield Static(Content("Auditing the sessions…"), id="audit-summary")
        yield OptionList(id="audit-list")
        with VerticalScroll(id="audit-detail"):
            yield Static("", id="audit-what")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "session audit"
        self.load()

    # -- the statements ---------------------------------------------------------------------------
    @property
    def selected(self) -> tuple[SessionAudit, Lost] | None:
        """The highlighted statement and its session."""
        listing = self.query_one("#audit-list", OptionList)
        index = listing.highlighted
        if index is None:
            return None
        option_id = listing.get_option_at_index(index).id
        return self.statements.get(option_id or "")

    @work(group="audit", exclusive=True)
    async def load(self, keep: int | None = None) -> None:
        """Run the audit in a thread (the screen stays live), then list what it found."""
        report = await run_listed(self, "#audit-list", "#audit-summary", "audit", self.bridge.audit)
        if report is None:
            return
        self.show_report(report, keep)

    def show_report(self, report: AuditReport, keep: int | None = None) -> None:
        """List a report's sessions (newest first) with their statements; picks of statements still listed stay."""
        self.report = report
        self.statements = {statement_key(st): (s, st) for s in report.sessions for st in s.statements}
        self.picked &= set(self.statements)
        self._fill(keep)
        for warning in report.warnings:
            self.notify(warning, severity="warning")
        if not report.statements:
            summary = (f"Nothing to recover: memory holds what people said in {plural(report.scanned, 'session')} "
                       f"({plural(report.unflushed_compactions, 'compaction')} without a flush)")
        else:
            summary = (f"{plural(report.statements, 'statement')} not in memory in "
                       f"{plural(len(report.sessions), 'session')} ({report.scanned} audited, "
                       f"{plural(report.unflushed_compactions, 'compaction')} without a flush)"
                       " · space picks, a appends the picked ones to the days they were said")
        self.query_one("#audit-summary", Static).update(Content(safe_text(summary)))

    def _fill(self, keep: int | None) -> None:
        if self.report is None:
            return
        listing = self.query_one("#audit-list", OptionList)
        width = min(100, self.app.size.width - 4)
        options: list[Option] = []
        for session in self.report.sessions:
            if not session.statements:
                continue
            options.append(Option(session_label(session, width), disabled=True))
            options.extend(Option(statement_label(st, statement_key(st) in self.picked, width),
                                  id=statement_key(st)) for st in session.statements)
        listing.clear_options()
        listing.add_options(options)
        if not highlight_nearest(listing, options, keep):
            self._show(None)

    @on(OptionList.OptionHighlighted, "#audit-list")
    def _highlighted(self) -> None:
        self._show(self.selected)

    def _show(self, chosen: tuple[SessionAudit, Lost] | None) -> None:
        what = self.query_one("#audit-what", Static)
        if chosen is None:
            what.update("")
            return
        session, statement = chosen
        rows = [Content.assemble((statement.kind.upper(), "bold $text-accent"),
                                 (f" · {statement.citation}", "$text-muted"),
                                 (f" · said {statement.day.isoformat()}" if statement.day else "", "$text-muted")),
                Content("")]
        for line, is_it in statement.context(CONTEXT_AROUND):
            rows.append(Content.assemble(("▌" if is_it else " ", "$text-accent"),
                                         Content.styled(safe_text(line), "bold" if is_it else "$text-muted")))
        rows.append(Content(""))
        rows.append(Content.assemble(("Session: ", "bold"), Content(safe_text(session.verdict))))
        for c in session.compactions:
            tokens = f"{plural(c.tokens_before, 'token', grouped=True)} before, " if c.tokens_before else ""
            rows.append(Content.styled(safe_text(f"  compaction at line {c.line} ({(c.at or '')[:16]}): {tokens}"
                                                 f"{'flushed' if c.flushed else 'no flush'}"), "$text-muted"))
        what.update(Content("\n").join(rows))

    # -- actions --------------------------------------------------------------------------------
    def action_pick(self) -> None:
        chosen = self.selected
        if chosen is None:
            return
        key = statement_key(chosen[1])
        self.picked.symmetric_difference_update({key})
        listing = self.query_one("#audit-list", OptionList)
        listing.replace_option_prompt(key, statement_label(chosen[1], key in self.picked,
                                                           min(100, self.app.size.width - 4)))

    def _can_act(self) -> bool:
        if self.busy:
            self.notify("One moment: the last action is still being written", severity="warning")
            return False
        return True

    def action_append(self) -> None:
        if not self._can_act():
            return
        picked = [self.statements[k][1] for k in self.statements if k in self.picked]
        if not picked:
            chosen = self.selected
            if chosen is None:
                self.notify("Nothing picked: space picks statements", severity="warning")
                return
            picked = [chosen[1]]
        self._run(lambda: self.bridge.audit_recover(picked))

    @work(group="audit-dialog", exclusive=True)
    async def action_promote(self) -> None:
        chosen = self.selected
        if chosen is None or not self._can_act():
            return
        statement = chosen[1]
        try:
            sections = await asyncio.to_thread(lambda: {t: self.bridge.review_sections(t)
                                                        for t in ("MEMORY.md", "USER.md")})
        except (MemdeckError, OSError) as exc:
            self.notify(f"Cannot read the sections: {exc}", severity="error")
            return
        first = next(iter(sections.get("MEMORY.md", [])), None)
        choice = await self.app.push_screen_wait(PromoteScreen(statement.citation, statement.text, sections,
                                                               "MEMORY.md", first))
        if choice is not None:
            self._run(lambda: self.bridge.audit_recover([statement], choice.target, choice.section, choice.text))

    def action_undo(self) -> None:
        if self._can_act():
            self._run(self.bridge.review_undo)

    @work(group="audit-action")
    async def _run(self, call: Callable[[], ReviewAction]) -> None:
        self.busy = True
        row = self.query_one("#audit-list", OptionList).highlighted
        try:
            done = await asyncio.to_thread(call)
        except (MemdeckError, OSError) as exc:
            self.notify(str(exc), title="Not done; nothing was written", severity="error", timeout=10)
            return
        finally:
            self.busy = False
        if done.action != "undo":
            self.picked.clear()
        after_action(self.main, done)
        self.load(row)

    def action_refresh(self) -> None:
        self.load(self.query_one("#audit-list", OptionList).highlighted)

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_focus_search(self) -> None:
        """The app's search key (ctrl+f) leads back to the workbench's search box."""
        self.app.pop_screen()
        self.main.action_focus_search()
