"""ReviewScreen: the memory review's findings by kind, their statements side by side, and the actions on them."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, TypeVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Footer, Header, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from engine.api import safe_name, safe_text
from tui.bridge import Bridge, MemdeckError
from tui.messages import FilesChanged

if TYPE_CHECKING:
    from engine.api import Finding, ReviewAction, ReviewItem, ReviewReport
    from tui.screens.workbench import Workbench

KIND_TITLES = {"duplicate": "Duplicates", "conflict": "Conflicts", "promote": "Worth promoting",
               "budget": "Cut at session start: move out"}
"""The list's group titles, in the engine's order of kinds."""

CONTEXT_LINES = 2
"""Lines shown above and below each statement."""

CONTEXT_CHARS = 44
"""Context lines are cut to this many characters (the cited lines are shown whole)."""

T = TypeVar("T")

NEW_SECTION = "\0new"
END_OF_FILE = "\0end"


def highlight_nearest(listing: OptionList, options: list[Option], keep: int | None) -> bool:
    """Highlight the selectable option nearest ``keep`` (the first when None); False when none is selectable."""
    selectable = [i for i, o in enumerate(options) if not o.disabled]
    if not selectable:
        return False
    wanted = keep if keep is not None else selectable[0]
    listing.highlighted = min(selectable, key=lambda i: (abs(i - wanted), i))
    return True


async def run_listed(screen: ListedScreen, list_id: str, summary_id: str, what: str, call: Callable[[], T]
                     ) -> T | None:
    """Run ``call`` (the review, the audit) in a thread while ``list_id`` shows it is loading, and count the
    load; on failure say so in ``summary_id`` and in a notification, and give None."""
    listing = screen.query_one(list_id, OptionList)
    listing.loading = True
    try:
        return await asyncio.to_thread(call)
    except (MemdeckError, OSError) as exc:
        screen.query_one(summary_id, Static).update(Content(safe_text(f"The {what} failed: {exc}")))
        screen.notify(f"The {what} failed: {exc}", severity="error")
        return None
    finally:
        listing.loading = False
        screen.loads += 1


class ListedScreen(Screen[None]):
    """A screen whose list is filled by :func:`run_listed` (its ``loads`` counts the loads, for tests)."""

    loads: int = 0


def _short(text: str, limit: int = 70) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def finding_label(finding: Finding, width: int = 80) -> Content:
    """One row of the list, cut to fit ``width`` cells: score, the statement it is about (the current one of a
    conflict) and how many statements."""
    from engine.api import statement_text

    main = finding.items[finding.current] if finding.current is not None else finding.items[0]
    extra = f"  +{len(finding.items) - 1}" if len(finding.items) > 1 else ""
    return Content.assemble((f" {finding.score:.2f} ", "$text-muted"),
                            Content(safe_text(_short(statement_text(main.text) or main.text,
                                                     max(20, width - 6 - len(extra))))),
                            (extra, "$text-secondary"))


def default_item(finding: Finding) -> int:
    """The statement the keys act on first: a duplicate's last copy (the first is the one to keep), a conflict's
    first older statement, the only one of a promotion."""
    if finding.kind == "conflict":
        return next((i for i in range(len(finding.items)) if i != finding.current), 0)
    return len(finding.items) - 1


@dataclass(frozen=True)
class PromoteChoice:
    """What the promote dialog returns: the file, the section (None: the end of the file) and the wording."""

    target: str
    section: str | None
    text: str


class PromoteScreen(ModalScreen[PromoteChoice | None]):
    """Pick where a statement goes: MEMORY.md or USER.md, one of its sections or a new one; reword it if needed."""

    AUTO_FOCUS = "#promote-sections"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", show=False)]
    DEFAULT_CSS = """
    PromoteScreen #promote-sections { height: auto; max-height: 8; margin-top: 1; }
    PromoteScreen #promote-new { display: none; }
    PromoteScreen.-new-section #promote-new { display: block; }
    """

    def __init__(self, citation: str, statement: str, sections: dict[str, list[str]], target: str,
                 section: str | None) -> None:
        super().__init__()
        self.citation = citation
        self.statement = statement
        self.sections = sections
        self.target = target if target in sections else "MEMORY.md"
        self.suggested = section

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog", id="promote"):  # scrolls on a short terminal: nothing is cut off
            yield Label("", id="promote-title", classes="dialog-title")
            yield Static(Content(safe_text(f"From {self.citation}; the line keeps that citation. The statement:")),
                         classes="dialog-message")
            yield Input(self.statement, id="promote-text")
            yield OptionList(id="promote-sections")
            yield Input(placeholder="New section name", id="promote-new")
            with Horizontal(classes="dialog-buttons"):
                yield Button("", id="promote-target")
                yield Button("Promote", id="promote-ok", variant="primary")
                yield Button("Cancel", id="promote-cancel")

    def on_mount(self) -> None:
        self._fill(self.suggested)

    def _fill(self, wanted: str | None) -> None:
        other = "USER.md" if self.target == "MEMORY.md" else "MEMORY.md"
        self.query_one("#promote-title", Label).update(Content(f"Promote to {self.target} — pick a section"))
        self.query_one("#promote-target", Button).label = f"Into {other} instead"
        names = self.sections.get(self.target, [])
        options = [Option(Content(f"§ {safe_name(name)}"), id=f"s:{name}") for name in names]
        options.append(Option(Content("＋ New section (type its name below)"), id=NEW_SECTION))
        options.append(Option(Content("(the end of the file, no section)"), id=END_OF_FILE))
        sections = self.query_one("#promote-sections", OptionList)
        sections.clear_options()
        sections.add_options(options)
        match = next((i for i, n in enumerate(names) if wanted and n.casefold() == wanted.casefold()), None)
        if match is None and wanted:
            self.query_one("#promote-new", Input).value = wanted
            match = len(names)
        sections.highlighted = match if match is not None else 0

    @on(OptionList.OptionHighlighted, "#promote-sections")
    def _section_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self.set_class(event.option.id == NEW_SECTION, "-new-section")

    @property
    def choice(self) -> PromoteChoice | None:
        """What Promote returns now (None while a new section has no name or the statement is empty)."""
        text = self.query_one("#promote-text", Input).value.strip()
        sections = self.query_one("#promote-sections", OptionList)
        index = sections.highlighted
        option_id = sections.get_option_at_index(index).id if index is not None else END_OF_FILE
        if option_id == NEW_SECTION:
            section: str | None = self.query_one("#promote-new", Input).value.strip() or None
            if section is None:
                return None
        elif option_id == END_OF_FILE or option_id is None:
            section = None
        else:
            section = option_id.removeprefix("s:")
        return PromoteChoice(self.target, section, text) if text else None

    @on(Input.Changed, "#promote-new")
    def _typed_section(self, event: Input.Changed) -> None:
        if event.value.strip():
            sections = self.query_one("#promote-sections", OptionList)
            sections.highlighted = len(self.sections.get(self.target, []))  # typing a name picks "new section"

    @on(Button.Pressed, "#promote-target")
    def _switch_target(self, event: Button.Pressed) -> None:
        event.stop()
        self.target = "USER.md" if self.target == "MEMORY.md" else "MEMORY.md"
        self._fill(None)

    @on(OptionList.OptionSelected, "#promote-sections")
    @on(Input.Submitted)
    @on(Button.Pressed, "#promote-ok")
    def _ok(self, event: OptionList.OptionSelected | Input.Submitted | Button.Pressed) -> None:
        event.stop()
        choice = self.choice
        if choice is None:
            self.notify("Name the new section (or pick one) and keep the statement non-empty", severity="warning")
            return
        self.dismiss(choice)

    @on(Button.Pressed, "#promote-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


class ReviewScreen(ListedScreen):
    """The findings of ``memdeck review`` to decide on: list by kind above, the selected finding below.

    Args:
        bridge: the engine, as the TUI calls it.
        main: the workbench, told about every file a review action writes (tree, index, an open editor).
    """

    AUTO_FOCUS = "#review-list"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", show=False),
        Binding("p", "promote", "Promote", id="review.promote"),
        Binding("s", "supersede", "Supersede", id="review.supersede"),
        Binding("S", "supersede_all", "Supersede all older", show=False, id="review.supersede_all"),
        Binding("d", "delete_copy", "Delete copy", id="review.delete"),
        Binding("m", "merge", "Merge", id="review.merge"),
        Binding("v", "move_section", "Move out", id="review.move"),
        Binding("x", "dismiss_finding", "Dismiss", id="review.dismiss"),
        Binding("u", "undo", "Undo", id="review.undo"),
        Binding("o", "open_item", "Open", id="review.open"),
        Binding("r", "refresh", "Refresh", id="review.refresh"),
        Binding("a", "toggle_all", "All/confident", id="review.all"),
        Binding("left", "item(-1)", "Prev statement", show=False),
        Binding("right", "item(1)", "Next statement", show=False),
    ]
    DEFAULT_CSS = """
    ReviewScreen #review-summary { height: auto; padding: 0 1; background: $boost; }
    ReviewScreen #review-list { height: auto; max-height: 40%; border: none; }
    ReviewScreen #review-detail { height: 1fr; padding: 0 1; border-top: solid $panel; }
    ReviewScreen #review-what { height: auto; margin-bottom: 1; }
    ReviewScreen #review-items { height: auto; }
    ReviewScreen .review-item { width: 1fr; height: auto; border: round $panel-lighten-2; padding: 0 1;
                                border-title-color: $text-muted; }
    ReviewScreen .review-item.-selected { border: round $accent; border-title-color: $accent;
                                          border-title-style: bold; }
    ReviewScreen.-narrow #review-items { layout: vertical; }
    ReviewScreen.-narrow #review-list { max-height: 30%; }
    """

    def __init__(self, bridge: Bridge, main: Workbench) -> None:
        super().__init__()
        self.bridge = bridge
        self.main = main
        self.report: ReviewReport | None = None
        self.findings: list[Finding] = []
        self.show_all = False  # `a`: also the less sure findings (score under .80)
        self.item_index = 0
        self.busy = False
        self.loads = 0
        """Reviews finished (or failed) so far: what tests and refreshes wait on."""
        self._contexts: dict[tuple[str, int, int], tuple[list[tuple[int, str]], bool]] = {}
        self._shown = ""  # the finding whose statements are on screen

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        yield Static(Content("Reviewing…"), id="review-summary")
        yield OptionList(id="review-list")
        with VerticalScroll(id="review-detail"):
            yield Static("", id="review-what")
            yield Horizontal(id="review-items")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "memory review"
        self.load()

    # -- the findings ---------------------------------------------------------------------------
    @property
    def finding(self) -> Finding | None:
        """The highlighted finding."""
        listing = self.query_one("#review-list", OptionList)
        index = listing.highlighted
        if index is None:
            return None
        option_id = listing.get_option_at_index(index).id
        return next((f for f in self.findings if f.id == option_id), None)

    @work(group="review", exclusive=True)
    async def load(self, keep: int | None = None) -> None:
        """Run the review in a thread (the screen stays live), then list what it found."""
        # all: `a` toggles the less sure ones
        report = await run_listed(self, "#review-list", "#review-summary", "review", lambda: self.bridge.review(True))
        if report is None:
            return
        self._contexts.clear()
        self.show_report(report, keep)

    def show_report(self, report: ReviewReport, keep: int | None = None) -> None:
        """List a report's findings by kind (``keep``: the list row to highlight, e.g. where the last one was)."""
        self.report = report
        everything = [*report.findings, *report.hidden]
        self.findings = [f for f in everything if self.show_all or f.confident]
        hidden = len(everything) - len(self.findings)
        counts = {kind: sum(1 for f in self.findings if f.kind == kind) for kind in KIND_TITLES}
        listing = self.query_one("#review-list", OptionList)
        listing.clear_options()
        options: list[Option] = []
        for kind, title in KIND_TITLES.items():
            mine = [f for f in self.findings if f.kind == kind]
            if not mine:
                continue
            options.append(Option(Content.styled(f"{title} ({len(mine)})", "bold $text-primary"), disabled=True))
            width = min(78, self.app.size.width - 4)  # one row each, also on a narrow terminal
            options.extend(Option(finding_label(f, width), id=f.id) for f in mine)
        listing.add_options(options)
        parts = [_plural(counts["duplicate"], "duplicate"), _plural(counts["conflict"], "conflict"),
                 f"{counts['promote']} worth promoting"]
        if counts["budget"]:
            parts.append(f"{counts['budget']} to move out (v)")
        stats = (f"{_plural(report.files, 'file')}, {_plural(report.statements, 'statement')}"
                 + (f", {report.dismissed} dismissed" if report.dismissed else "")
                 + (f", {hidden} less sure hidden (a shows them)" if hidden else "")
                 + (" · all findings (a: confident only)" if self.show_all else "") + f" · {report.seconds:.1f} s")
        if not self.findings:
            summary = f"Nothing to review: no duplicates, conflicts or facts to promote ({stats})"
        else:
            summary = " · ".join(parts) + f"   ({stats}; ←/→ picks a statement)"
        for warning in report.warnings:
            self.notify(warning, severity="warning")
        self.query_one("#review-summary", Static).update(Content(safe_text(summary)))
        if not highlight_nearest(listing, options, keep):
            self._show_finding(None)

    @on(OptionList.OptionHighlighted, "#review-list")
    def _highlighted(self) -> None:
        finding = self.finding
        self.item_index = default_item(finding) if finding is not None else 0
        self._show_finding(finding)

    def action_item(self, step: int) -> None:
        finding = self.finding
        if finding is None or len(finding.items) < 2:
            return
        self.item_index = (self.item_index + step) % len(finding.items)
        panels = list(self.query(".review-item"))
        if self._shown == finding.id and len(panels) == len(finding.items):
            for index, panel in enumerate(panels):  # the same statements: only the selection moves
                panel.set_class(index == self.item_index, "-selected")
        else:
            self._show_finding(finding)

    def _show_finding(self, finding: Finding | None) -> None:
        what = self.query_one("#review-what", Static)
        if finding is None:
            what.update("")
            self._shown = ""
            self.query_one("#review-items").remove_children()
            return
        head = Content.assemble((finding.kind.upper(), "bold $text-accent"),
                                (f" · score {finding.score:.2f} · {_plural(len(finding.items), 'statement')}",
                                 "$text-muted"))
        what.update(Content("\n").join([
            head, Content(safe_text(finding.reason)),
            Content.assemble(("Suggestion: ", "bold"), Content(safe_text(finding.suggestion))),
        ]))
        self._show_items(finding)

    @work(group="review-items", exclusive=True)
    async def _show_items(self, finding: Finding) -> None:
        contexts = []
        for item in finding.items:
            key = (item.path, item.start_line, item.end_line)
            if key not in self._contexts:
                try:
                    self._contexts[key] = await asyncio.to_thread(self.bridge.review_context, item, CONTEXT_LINES)
                except (MemdeckError, OSError) as exc:
                    self._contexts[key] = ([(0, f"cannot read it: {exc}")], False)
            contexts.append(self._contexts[key])
        if self.finding is not finding:
            return  # another finding was picked meanwhile
        box = self.query_one("#review-items")
        await box.remove_children()
        panels = []
        for index, (item, (lines, fresh)) in enumerate(zip(finding.items, contexts, strict=True)):
            panel = Static(_item_content(item, lines, fresh), classes="review-item")
            panel.border_title = safe_name(_item_title(finding, index))
            panel.set_class(index == self.item_index, "-selected")
            panels.append(panel)
        await box.mount_all(panels)
        self._shown = finding.id

    # -- actions --------------------------------------------------------------------------------
    def _acting(self) -> Finding | None:
        finding = self.finding
        if self.busy:
            self.notify("One moment: the last action is still being written", severity="warning")
            return None
        if finding is None:
            self.notify("Nothing selected", severity="warning")
        return finding

    @work(group="review-action")
    async def _run(self, call: Callable[[], ReviewAction]) -> None:
        self.busy = True
        try:
            done = await asyncio.to_thread(call)
        except (MemdeckError, OSError) as exc:
            self.notify(str(exc), title="Not done; nothing was written", severity="error", timeout=10)
            self.load(self._row())
            return
        finally:
            self.busy = False
        after_action(self.main, done)
        self.load(self._row())

    def _row(self) -> int | None:
        return self.query_one("#review-list", OptionList).highlighted

    @work(group="review-dialog", exclusive=True)
    async def action_promote(self) -> None:
        from engine.api import promote_target, statement_text

        finding = self._acting()
        if finding is None:
            return
        item = finding.items[self.item_index]
        target, section = promote_target(finding)
        try:
            sections = await asyncio.to_thread(lambda: {t: self.bridge.review_sections(t)
                                                        for t in ("MEMORY.md", "USER.md")})
        except (MemdeckError, OSError) as exc:
            self.notify(f"Cannot read the sections: {exc}", severity="error")
            return
        choice = await self.app.push_screen_wait(PromoteScreen(item.citation, statement_text(item.text), sections,
                                                               target, section))
        if choice is not None:
            self._run(lambda: self.bridge.review_promote(item, choice.section, choice.target, choice.text, finding.id))

    def action_supersede(self) -> None:
        finding = self._acting()
        if finding is None:
            return
        if len(finding.items) < 2:
            self.notify("Supersede needs a newer statement: this finding has one", severity="warning")
            return
        if finding.current is not None and self.item_index == finding.current:
            self.notify("★ is the likely current statement: select an older one (←/→) to mark it", severity="warning")
            return
        old = self.item_index
        self._run(lambda: self.bridge.review_supersede(finding, old))

    def action_supersede_all(self) -> None:
        finding = self._acting()
        if finding is None:
            return
        if len(finding.items) < 2:
            self.notify("Supersede needs a newer statement: this finding has one", severity="warning")
            return
        self._run(lambda: self.bridge.review_supersede(finding, None))

    @work(group="review-dialog", exclusive=True)
    async def action_delete_copy(self) -> None:
        from tui.screens.dialogs import ChoiceScreen

        finding = self._acting()
        if finding is None:
            return
        if len(finding.items) < 2:
            self.notify("Only one statement says this: nothing to delete a copy of", severity="warning")
            return
        item = finding.items[self.item_index]
        others = ", ".join(i.citation for n, i in enumerate(finding.items) if n != self.item_index)
        choice = await self.app.push_screen_wait(ChoiceScreen(
            "Delete this copy?",
            f"Delete {item.citation}:\n  {_short(item.text, 200)}\n\n{others} still "
            f"{'says' if len(finding.items) == 2 else 'say'} it. u (or ctrl+p → Undo review action) puts it back.",
            [("delete", "Delete copy", "error"), ("cancel", "Cancel", "default")]))
        if choice == "delete":
            index = self.item_index
            self._run(lambda: self.bridge.review_delete(finding, index))

    @work(group="review-dialog", exclusive=True)
    async def action_merge(self) -> None:
        from engine.api import merge_text
        from tui.screens.dialogs import PromptScreen

        finding = self._acting()
        if finding is None:
            return
        if len(finding.items) < 2:
            self.notify("A merge needs two statements or more", severity="warning")
            return
        first, rest = finding.items[0], [i.citation for i in finding.items[1:]]
        text = await self.app.push_screen_wait(PromptScreen(
            "Merge into one line", f"This line replaces {first.citation}; {', '.join(rest)} "
            f"{'is' if len(rest) == 1 else 'are'} deleted. Edit it:", merge_text(finding)))
        if text:
            self._run(lambda: self.bridge.review_merge(finding, text))

    def action_move_section(self) -> None:
        """A budget finding: move its section out of MEMORY.md/USER.md to its note (u undoes both files)."""
        finding = self._acting()
        if finding is None:
            return
        if finding.kind != "budget":
            self.notify("Only a section OpenClaw cuts at session start moves out (v)", severity="warning")
            return
        self._run(lambda: self.bridge.review_move(finding))

    def action_dismiss_finding(self) -> None:
        finding = self._acting()
        if finding is not None:
            self._run(lambda: self.bridge.review_dismiss(finding))

    def action_undo(self) -> None:
        if self.busy:
            return
        self._run(self.bridge.review_undo)

    def action_refresh(self) -> None:
        self.load(self._row())

    def action_toggle_all(self) -> None:
        """Show every finding, or only the confident ones (measured precision .80 or more: the default)."""
        self.show_all = not self.show_all
        if self.report is not None:
            self.show_report(self.report)

    def action_open_item(self) -> None:
        finding = self.finding
        if finding is None:
            return
        item = finding.items[self.item_index]
        self.app.pop_screen()
        self.main.open_note(item.path, (item.start_line, item.end_line))

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_focus_search(self) -> None:
        """The app's search key (ctrl+f) leads back to the workbench's search box."""
        self.app.pop_screen()
        self.main.action_focus_search()


def _plural(n: int, word: str) -> str:
    from engine.api import plural  # loaded by now: there is a report

    return plural(n, word, grouped=True)


def _item_title(finding: Finding, index: int) -> str:
    item = finding.items[index]
    bits = [f"{index + 1}/{len(finding.items)}", item.citation]
    if finding.current is not None:
        bits.append("★ likely current" if index == finding.current else "older")
    return " · ".join(bits)


def _item_content(item: ReviewItem, lines: list[tuple[int, str]], fresh: bool) -> Content:
    """The statement's lines, bold, with a few lines of context; a warning when the file changed since."""
    width = len(str(max((n for n, _ in lines), default=1)))
    rows: list[Content] = []
    if item.day:
        rows.append(Content.styled(item.day, "$text-muted"))
    if not fresh:
        rows.append(Content.styled("changed on disk since the review — r refreshes", "$text-warning"))
    for number, text in lines:
        cited = item.start_line <= number <= item.end_line
        shown = text if cited else _short(text, CONTEXT_CHARS)  # the statement whole; its context one row each
        rows.append(Content.assemble(
            (f"{number:>{width}} ", "$text-muted"),
            ("▌" if cited else " ", "$text-accent"),
            Content.styled(safe_text(shown), "bold" if cited else "$text-muted"),
        ))
    return Content("\n").join(rows)


def after_action(main: Workbench, done: ReviewAction) -> None:
    """Say what a review action did, and tell the workbench which files changed (its tree, index and any open
    editor of them catch up, as for a change on disk)."""
    undo = "" if done.action == "undo" else " — u or ctrl+p → Undo review action undoes it"
    main.notify(f"{done.summary[:1].upper()}{done.summary[1:]}{undo}")
    for warning in done.warnings:
        main.notify(warning, severity="warning")
    if done.files:
        workspace = main.config.workspace
        main.post_message(FilesChanged(frozenset(Path(workspace, rel) for rel in done.files)))


async def undo_review(main: Workbench) -> None:
    """The palette's Undo review action: undo, say so, and refresh an open Review screen."""
    try:
        done = await asyncio.to_thread(main.bridge.review_undo)
    except (MemdeckError, OSError) as exc:
        main.notify(str(exc), title="Not undone", severity="warning", timeout=10)
        return
    after_action(main, done)
    for screen in main.app.screen_stack:
        if isinstance(screen, ReviewScreen):
            screen.load(screen._row())
