"""MemoryTree: MEMORY.md, memory/ (daily newest first, topics, session notes), extra paths and sessions."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

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


class MemoryTree(Tree[TreeData]):
    """The workspace as the agent sees it, with each file's index state."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "app.rename", "Rename", id="tree.rename"),
        Binding("delete,d", "app.delete", "Delete", id="tree.delete"),
        Binding("a", "app.new_topic", "New topic", id="tree.new_topic"),
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

    # -- data ---------------------------------------------------------------------------------
    def set_model(self, model: TreeModel) -> None:
        """Rebuild from a fresh listing, keeping which groups are open and where the cursor is."""
        if model == self.model and self.root.children:
            return  # nothing changed: a rebuild of thousands of nodes would only cost time
        cursor = self.cursor_node.data if self.cursor_node is not None else None
        for node in self._groups():
            if isinstance(node.data, GroupRef):
                if node.is_expanded:
                    self._collapsed.discard(node.data.key)
                else:
                    self._collapsed.add(node.data.key)
        self.model = model
        self.clear()
        root = self.root
        for entry in model.root:
            self._add_note(root, entry)
        memory = self._add_group(root, "memory", "memory/", len(model.daily) + len(model.topics)
                                 + len(model.session_notes))
        for key, label, entries in (
            ("daily", "daily", model.daily),
            ("topics", "topics", model.topics),
            ("session-notes", "session notes", model.session_notes),
        ):
            if entries:
                group = self._add_group(memory, key, label, len(entries))
                for entry in entries:
                    self._add_note(group, entry)
        if model.extras:
            extras = self._add_group(root, "extras", "extra paths", len(model.extras))
            for entry in model.extras:
                self._add_note(extras, entry)
        sessions = self._add_group(root, "sessions", "sessions", len(model.sessions))
        for session in model.sessions:
            sessions.add_leaf(Text(session.label), SessionRef(session.path, session.label, session.detail,
                                                              session.error))
        if not model.sessions:
            reason = model.sessions_error or "no transcripts"
            sessions.add_leaf(Text(reason), GroupRef("sessions-empty", reason, 0))
        if cursor is not None:
            self.select_data(cursor, scroll=False)

    def _add_group(self, parent: TreeNode[TreeData], key: str, label: str, count: int) -> TreeNode[TreeData]:
        node = parent.add(Text(label), GroupRef(key, label, count), expand=key not in self._collapsed)
        return node

    def _add_note(self, parent: TreeNode[TreeData], entry: NoteEntry) -> None:
        parent.add_leaf(Text(entry.label), NoteRef(entry.rel, entry.label))

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
        """Show each file's index state."""
        if states == self.states:
            return
        old, self.states = self.states, dict(states)
        for node in self.nodes():
            if isinstance(node.data, NoteRef) and old.get(node.data.rel) != states.get(node.data.rel):
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
    def _fg(self, component: str) -> Style:
        """A component's text colour and emphasis, without its background.

        Taken from the full style: partial styles lose colours that carry alpha ($text-muted).
        """
        full = self.get_component_rich_style(component)
        return Style(color=full.color, bold=full.bold, italic=full.italic)

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


def _same(a: TreeData | None, b: TreeData) -> bool:
    if isinstance(a, NoteRef) and isinstance(b, NoteRef):
        return a.rel == b.rel
    if isinstance(a, SessionRef) and isinstance(b, SessionRef):
        return a.path == b.path
    if isinstance(a, GroupRef) and isinstance(b, GroupRef):
        return a.key == b.key
    return False
