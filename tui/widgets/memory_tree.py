"""MemoryTree: MEMORY.md, memory/ (daily newest first, topics, session notes), extra paths and sessions."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import on
from textual.binding import Binding, BindingType
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from tui.bridge import NoteEntry, TreeModel
from tui.messages import NoteChosen, SessionChosen

STATE_GLYPHS = {
    "indexed": ("●", "memory-tree--indexed", "indexed"),
    "changed": ("◐", "memory-tree--changed", "changed since indexing"),
    "new": ("+", "memory-tree--changed", "not indexed yet"),
    "not-embedded": ("○", "memory-tree--pending", "indexed, not embedded"),
}


@dataclass(frozen=True)
class NoteRef:
    """Tree data for a memory file."""

    rel: str
    label: str


@dataclass(frozen=True)
class SessionRef:
    """Tree data for a session transcript."""

    path: Path
    label: str
    detail: str
    error: str | None = None


@dataclass(frozen=True)
class GroupRef:
    """Tree data for a folder-like group."""

    key: str
    label: str
    count: int


TreeData = NoteRef | SessionRef | GroupRef
_MARK_WIDTH = 1 + max(cell_len(glyph) for glyph, _, _ in [*STATE_GLYPHS.values(), (" ", "", "")])
"""A note line's state glyph and its space (every glyph is one cell: 2)."""
BULK_REPAINT = 64
"""More changed lines than this repaint the whole tree in one go (a per-line refresh costs a region lookup each)."""
FILL_SLICE = 200
"""Notes added to the tree at once when a big group is (re)built: a screenful; the rest follow in slices."""
FILL_SLICE_MAX = 6400
"""The largest later slice. Each slice makes Textual's tree re-lay all of its lines (O(nodes)), so slices of a
fixed 200 meant ~100 full re-layouts while 20,000 files filled in, and 1–2 s keystrokes; slices that double
(200, 400, … 6,400) make it ~7, each one event-loop turn of tens of ms."""
PATCH_LIMIT = 64
"""Up to this many notes added or removed are patched in place; more rebuild the tree."""


def _note_groups(model: TreeModel) -> tuple[tuple[str, str, tuple[NoteEntry, ...]], ...]:
    """(key, label, entries) of the groups of memory files, in tree order."""
    return (("daily", "daily", model.daily), ("topics", "topics", model.topics),
            ("session-notes", "session notes", model.session_notes), ("extras", "extra paths", model.extras))


def _memory_count(model: TreeModel) -> int:
    return len(model.daily) + len(model.topics) + len(model.session_notes)


def _shape(model: TreeModel) -> tuple[object, ...]:
    """What the tree's skeleton depends on: the root files and which groups exist."""
    return (model.root, bool(model.daily), bool(model.topics), bool(model.session_notes), bool(model.extras))


class MemoryTree(Tree[TreeData]):
    """The workspace as the agent sees it, with each file's index state."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "screen.rename", "Rename", id="tree.rename"),
        Binding("delete,d", "screen.delete", "Delete", id="tree.delete"),
        Binding("a", "screen.new_topic", "New topic", id="tree.new_topic"),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = Tree.COMPONENT_CLASSES | {
        "memory-tree--indexed",
        "memory-tree--changed",
        "memory-tree--pending",
        "memory-tree--group",
        "memory-tree--detail",
    }

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("workspace", id=id)
        self.show_root = False
        self.guide_depth = 2
        self.model = TreeModel()
        self.states: dict[str, str] = {}
        self._collapsed: set[str] = {"extras"}
        self._fg_cache: dict[str, Style] = {}
        self._fill_generation = 0
        self._filling = 0
        self._pending: list[tuple[TreeNode[TreeData], tuple[NoteEntry, ...]]] = []
        self._batching = False
        self._label_widths: dict[int, int] = {}
        """A note's or session's label width by node id (its label never changes; Textual asks on every
        re-layout, for every line)."""

    # -- data ---------------------------------------------------------------------------------
    def set_model(self, model: TreeModel) -> None:
        """Show a fresh listing, keeping which groups are open and where the cursor is.

        Textual's tree re-lays itself out for every node added or removed (and removing n children costs n²),
        so a listing that adds sessions or one note must not re-add thousands of daily notes: groups are
        patched where little changed, and a full build of a big group is added in slices between frames.
        """
        if model == self.model and self.root.children:
            return  # nothing changed: a rebuild of thousands of nodes would only cost time
        cursor = self.cursor_node.data if self.cursor_node is not None else None
        old, self.model = self.model, model
        groups = {node.data.key: node for node in self._groups() if isinstance(node.data, GroupRef)}
        if not (self.root.children and _shape(old) == _shape(model) and self._patch_groups(old, model, groups)):
            self._rebuild(model, groups)
        if cursor is not None and (self.cursor_node is None or self.cursor_node.data != cursor):
            self.select_data(cursor, scroll=False)

    def _rebuild(self, model: TreeModel, groups: dict[str, TreeNode[TreeData]]) -> None:
        for node in groups.values():
            if node.is_expanded:
                self._collapsed.discard(node.data.key)  # type: ignore[union-attr]
            else:
                self._collapsed.add(node.data.key)  # type: ignore[union-attr]
        self._fill_generation += 1
        self.clear()
        self._label_widths.clear()
        self._pending = []
        root = self.root
        with self._one_invalidation():
            for entry in model.root:
                self._add_note(root, entry)
            memory = self._add_group(root, "memory", "memory/", _memory_count(model))
            for key, label, entries in _note_groups(model):
                if entries:
                    group = self._add_group(root if key == "extras" else memory, key, label, len(entries))
                    self._fill(group, entries)
            sessions = self._add_group(root, "sessions", "sessions", len(model.sessions))
            self._add_sessions(sessions, model)
        if self._pending:
            self._filling += 1
            self.run_worker(self._fill_rest(self._pending, self._fill_generation), group="tree-fill")

    def _fill(self, group: TreeNode[TreeData], entries: tuple[NoteEntry, ...]) -> None:
        """Add notes to a group: a screenful now, the rest queued for :meth:`_fill_rest`."""
        for entry in entries[:FILL_SLICE]:
            self._add_note(group, entry)
        if len(entries) > FILL_SLICE:
            self._pending.append((group, entries[FILL_SLICE:]))

    async def _fill_rest(self, pending: list[tuple[TreeNode[TreeData], tuple[NoteEntry, ...]]],
                         generation: int) -> None:
        """Add the queued notes, group after group, in doubling slices with the event loop running in between."""
        try:
            size = FILL_SLICE
            for group, entries in pending:
                start = 0
                while start < len(entries):
                    await asyncio.sleep(0)  # paint, keys and timers run between slices
                    if generation != self._fill_generation:
                        return  # rebuilt meanwhile
                    size = min(size * 2, FILL_SLICE_MAX)
                    with self._one_invalidation():
                        for entry in entries[start : start + size]:
                            self._add_note(group, entry)
                    start += size
        finally:
            self._filling -= 1

    @contextlib.contextmanager
    def _one_invalidation(self) -> Iterator[None]:
        """Add many nodes with one invalidation of the tree's caches, not one per node.

        Textual's ``TreeNode.add`` invalidates the whole tree (line cache, line numbers, a layout refresh) for
        every node: ~30 µs each, so a slice of thousands blocked the event loop for a tenth of a second or more.
        """
        self._batching = True
        try:
            yield
        finally:
            self._batching = False
            self._invalidate()

    def _invalidate(self) -> None:
        if not getattr(self, "_batching", False):  # Tree.__init__ invalidates before ours runs
            super()._invalidate()

    def process_label(self, label: str | Text) -> Text:
        """Labels are single-line Text already (``safe_name``): no copy by Textual's split per node."""
        if isinstance(label, Text) and "\n" not in label.plain:
            return label
        return super().process_label(label)

    def _patch_groups(self, old: TreeModel, model: TreeModel, groups: dict[str, TreeNode[TreeData]]) -> bool:
        """Apply small changes in place (same groups, same root files); False when a rebuild is cheaper."""
        before = {key: entries for key, _, entries in _note_groups(old)}
        changed = [(key, label, entries) for key, label, entries in _note_groups(model) if entries != before[key]]
        if self._filling or sum(len(set(before[key]) ^ set(entries)) for key, _, entries in changed) > PATCH_LIMIT:
            return False
        for key, label, entries in changed:
            group = groups[key]
            wanted = {entry.rel for entry in entries}
            for node in [n for n in group.children if not isinstance(n.data, NoteRef) or n.data.rel not in wanted]:
                node.remove()
            have = {n.data.rel for n in group.children if isinstance(n.data, NoteRef)}
            for index, entry in enumerate(entries):
                if entry.rel not in have:
                    self._add_note(group, entry, before=index if index < len(group.children) else None)
            self._relabel(group, GroupRef(key, label, len(entries)))
        if changed:
            self._relabel(groups["memory"], GroupRef("memory", "memory/", _memory_count(model)))
        if (model.sessions, model.sessions_error) != (old.sessions, old.sessions_error):
            group = groups["sessions"]
            group.remove_children()
            self._add_sessions(group, model)
            self._relabel(group, GroupRef("sessions", "sessions", len(model.sessions)))
        return True

    def _relabel(self, node: TreeNode[TreeData], data: GroupRef) -> None:
        if node.data != data:
            node.data = data
            node.refresh()

    def _add_sessions(self, group: TreeNode[TreeData], model: TreeModel) -> None:
        for session in model.sessions:
            group.add_leaf(Text(session.label), SessionRef(session.path, session.label, session.detail,
                                                           session.error))
        if not model.sessions:
            reason = model.sessions_error or "no transcripts"
            group.add_leaf(Text(reason), GroupRef("sessions-empty", reason, 0))

    def _add_group(self, parent: TreeNode[TreeData], key: str, label: str, count: int) -> TreeNode[TreeData]:
        node = parent.add(Text(label), GroupRef(key, label, count), expand=key not in self._collapsed)
        return node

    def _add_note(self, parent: TreeNode[TreeData], entry: NoteEntry, before: int | None = None) -> None:
        parent.add_leaf(Text(entry.label), NoteRef(entry.rel, entry.label), before=before)

    def _groups(self) -> list[TreeNode[TreeData]]:
        out: list[TreeNode[TreeData]] = []
        stack = list(self.root.children)
        while stack:
            node = stack.pop()
            if isinstance(node.data, GroupRef):
                out.append(node)
            stack.extend(node.children)
        return out

    def nodes(self) -> list[TreeNode[TreeData]]:
        """Every node, depth first."""
        out: list[TreeNode[TreeData]] = []
        stack = list(reversed(self.root.children))
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(reversed(node.children))
        return out

    def set_states(self, states: dict[str, str]) -> None:
        """Show each file's index state (a few changed lines repaint alone; many, the tree at once)."""
        if states == self.states:
            return
        old, self.states = self.states, dict(states)
        changed = [node for node in self.nodes()
                   if isinstance(node.data, NoteRef) and old.get(node.data.rel) != states.get(node.data.rel)]
        if len(changed) > BULK_REPAINT:
            self.notify_style_update()  # drops the line cache once, instead of one region refresh per line
            return
        for node in changed:
            node.refresh()

    def select_data(self, data: TreeData, scroll: bool = True) -> bool:
        """Move the cursor to the node holding ``data`` (a note by rel, a session by path)."""
        for node in self.nodes():
            if _same(node.data, data):
                parent = node.parent
                while parent is not None:
                    parent.expand()
                    parent = parent.parent
                self.call_after_refresh(self._move_to, node, scroll)
                return True
        return False

    def _move_to(self, node: TreeNode[TreeData], scroll: bool) -> None:
        if node.line >= 0:
            self.cursor_line = node.line
            if scroll:
                self.scroll_to_line(node.line)

    def select_note(self, rel: str) -> bool:
        """Put the cursor on a memory file."""
        return self.select_data(NoteRef(rel, ""))

    # -- rendering ----------------------------------------------------------------------------
    def notify_style_update(self) -> None:
        self._fg_cache.clear()
        super().notify_style_update()

    def _fg(self, component: str) -> Style:
        """A component's text colour and emphasis, without its background (cached until the styles change).

        Taken from the full style: partial styles lose colours that carry alpha ($text-muted).
        """
        style = self._fg_cache.get(component)
        if style is None:
            full = self.get_component_rich_style(component)
            style = self._fg_cache[component] = Style(color=full.color, bold=full.bold, italic=full.italic)
        return style

    def get_label_width(self, node: TreeNode[TreeData]) -> int:
        """The width :meth:`render_label` gives, without rendering (the tree measures every line on a rebuild)."""
        data = node.data
        if isinstance(data, NoteRef):
            width = self._label_widths.get(node.id)
            if width is None:
                width = self._label_widths[node.id] = _width(node)
            return _MARK_WIDTH + width
        width = _width(node)
        if isinstance(data, GroupRef):
            if not node.allow_expand:
                return 2 + width
            icon = self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE
            return cell_len(icon) + width + len(f" {data.count}")
        if isinstance(data, SessionRef):
            return cell_len("⚠ " if data.error else "› ") + width
        return width

    def render_label(self, node: TreeNode[TreeData], base_style: Style, style: Style) -> Text:
        data = node.data
        label = node.label.copy() if isinstance(node.label, Text) else Text(str(node.label))
        label.stylize(style)
        if isinstance(data, GroupRef):
            prefix = Text(self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE, base_style)
            if not node.allow_expand:
                return Text.assemble(Text("  "), label)
            label.stylize(self._fg("memory-tree--group"))
            count = Text(f" {data.count}", self._fg("memory-tree--detail"))
            return Text.assemble(prefix, label, count)
        if isinstance(data, NoteRef):
            state = self.states.get(data.rel)
            glyph, component, _ = STATE_GLYPHS.get(state or "", (" ", "memory-tree--detail", ""))
            mark = Text(glyph + " ", self._fg(component))
            return Text.assemble(mark, label)
        if isinstance(data, SessionRef):
            mark = Text("⚠ " if data.error else "› ", self._fg(
                "memory-tree--changed" if data.error else "memory-tree--detail"))
            return Text.assemble(mark, label)
        return label

    # -- events -------------------------------------------------------------------------------
    @on(Tree.NodeSelected)
    def _selected(self, event: Tree.NodeSelected[TreeData]) -> None:
        data = event.node.data
        if isinstance(data, NoteRef):
            event.stop()
            self.post_message(NoteChosen(data.rel))
        elif isinstance(data, SessionRef):
            event.stop()
            self.post_message(SessionChosen(data.path))

    @on(Tree.NodeHighlighted)
    def _highlighted(self, event: Tree.NodeHighlighted[TreeData]) -> None:
        data = event.node.data
        if isinstance(data, SessionRef):
            self.tooltip = f"{data.detail}" + (f"\n{data.error}" if data.error else "")
        elif isinstance(data, NoteRef):
            state = self.states.get(data.rel)
            self.tooltip = f"{data.rel}\n{STATE_GLYPHS[state][2]}" if state in STATE_GLYPHS else data.rel
        else:
            self.tooltip = None


def _width(node: TreeNode[TreeData]) -> int:
    return node.label.cell_len if isinstance(node.label, Text) else cell_len(str(node.label))


def _same(a: TreeData | None, b: TreeData) -> bool:
    if isinstance(a, NoteRef) and isinstance(b, NoteRef):
        return a.rel == b.rel
    if isinstance(a, SessionRef) and isinstance(b, SessionRef):
        return a.path == b.path
    if isinstance(a, GroupRef) and isinstance(b, GroupRef):
        return a.key == b.key
    return False
