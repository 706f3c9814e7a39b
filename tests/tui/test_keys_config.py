"""A ``[keys]`` remap onto quit's key is refused in the running app: ctrl+q still quits, and a warning names both
binding ids (issue 22 #12)."""

from __future__ import annotations

from pathlib import Path

from tests.tui.conftest import make_app, settle, tui_config


async def test_a_remap_onto_quit_is_refused_and_ctrl_q_still_quits(demo_workspace: Path) -> None:
    config = tui_config(demo_workspace, keys={"memdeck.save": "ctrl+q", "memdeck.svae": "f6", "memdeck.mode": "f8"})
    app = make_app(config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        warnings = [str(n.message) for n in app._notifications if n.severity == "warning"]
        assert any("memdeck.save" in w and "memdeck.quit" in w and "ctrl+q" in w for w in warnings), warnings
        assert any("memdeck.svae" in w and "memdeck.save" in w for w in warnings), warnings
        assert any(w.startswith("[keys]") for w in warnings)  # shown as text, not eaten as markup
        help_rows = {row.binding_id: row.keys for row in app.key_help()}
        assert "f8" in help_rows["memdeck.mode"] and "q" not in help_rows["memdeck.save"].lower()
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_code == 0
