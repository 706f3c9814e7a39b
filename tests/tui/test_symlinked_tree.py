"""A symlinked ``memory/`` and folder links inside it in the TUI (issue 22): the tree lists the notes behind a
followed link, and the editor saves one through the link into the real file, which is then indexed."""

from __future__ import annotations

from pathlib import Path

from tests.tui.conftest import make_app, settle, tui_config


def _workspace(root: Path) -> tuple[Path, Path, Path]:
    """``memory -> dotfiles/memory`` (stow) holding ``projects -> <ws>/projects`` and ``out -> <outside>``."""
    ws, dotfiles, projects = root / "ws", root / "dotfiles" / "memory", root / "ws" / "projects"
    for folder in (dotfiles, projects, root / "outside"):
        folder.mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n\n- tea\n", encoding="utf-8")
    (dotfiles / "stowed.md").write_text("# Stowed\n\n- a stowed note\n", encoding="utf-8")
    (projects / "p.md").write_text("# Project\n\n- the first line\n", encoding="utf-8")
    (root / "outside" / "o.md").write_text("# Outside\n", encoding="utf-8")
    (ws / "memory").symlink_to(dotfiles)
    (dotfiles / "projects").symlink_to(projects)
    (dotfiles / "out").symlink_to(root / "outside")
    return ws, dotfiles, projects


async def test_the_tree_lists_notes_behind_followed_links_and_a_save_writes_through(tmp_path: Path) -> None:
    ws, _dotfiles, projects = _workspace(tmp_path)
    app = make_app(tui_config(ws))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        rels = {note.rel for note in app.main.memory_tree.model.notes}
        assert rels == {"MEMORY.md", "memory/stowed.md", "memory/projects/p.md"}  # not memory/out/o.md
        app.main.open_note("memory/projects/p.md")
        await settle(pilot)
        area = app.main.editor.area
        area.focus()
        area.move_cursor((2, len(area.document[2])))
        await pilot.press(*" and the pangolin")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert not app.main.editor.modified
        assert (projects / "p.md").read_text(encoding="utf-8") == "# Project\n\n- the first line and the pangolin\n"
        assert (ws / "memory" / "projects").is_symlink() and not (projects / "p.md").is_symlink()
        hits = app.main.bridge.search("pangolin", mode="keyword").results
        assert [hit.path for hit in hits] == ["memory/projects/p.md"]
