"""TextLine: fixed-height text that repaints without asking the screen for a new layout."""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget


class TextLine(Widget):
    """Like Static, but :meth:`update` only repaints (its height comes from the stylesheet).

    Static.update re-lays out the whole screen; status lines, headers and the search summary change on every
    keystroke or progress tick, so they must not.
    """

    def __init__(self, content: Content | str = "", *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._content = content if isinstance(content, Content) else Content(content)

    @property
    def content(self) -> Content:
        """What the line shows."""
        return self._content

    def update(self, content: Content | str) -> None:
        """Show new text (a repaint, no layout)."""
        new = content if isinstance(content, Content) else Content(content)
        if not new.is_same(self._content):
            self._content = new
            self.refresh()

    def render(self) -> Content:
        return self._content
