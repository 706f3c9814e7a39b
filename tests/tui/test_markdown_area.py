"""The editor's highlighting, in a running widget: drawn from the engine's block model as the note is edited."""

from __future__ import annotations

from textual.app import App, ComposeResult

from tui.widgets.markdown_area import MarkdownArea

CODE = [(0, None, "code_block")]


class _Editor(App[None]):
    def compose(self) -> ComposeResult:
        yield MarkdownArea(id="editor")


async def test_the_editor_draws_a_four_backtick_fence_as_code_while_it_is_edited() -> None:
    app = _Editor()
    async with app.run_test(size=(80, 20)) as pilot:
        area = app.query_one(MarkdownArea)
        area.load_text("intro\n\n````md\n```\n# inside\n```\n````\n\nafter\n")
        await pilot.pause()
        assert area._highlights[3] == CODE and area._highlights[4] == CODE  # the ``` line and the "# inside"
        assert not area._highlights.get(8)
        area.replace("```", (2, 0), (2, 4))  # the opening fence is now ```: the ``` on line 3 closes it
        await pilot.pause()
        assert area._highlights[4] == [(0, 1, "heading.marker"), (1, None, "heading")]
        assert area._highlights[5] == [(0, 3, "heading.marker")]  # the next ``` opens a fence the ```` closes
        area.replace("````", (2, 0), (2, 3))  # and back
        await pilot.pause()
        assert area._highlights[4] == CODE and area._highlights[5] == CODE and not area._highlights.get(8)
