"""Drive memdeck on the demo workspace at 120×36 and write SVG (and PNG, with cairosvg) into screenshots/.

Run: ``python scripts/screenshots.py [--provider auto|hash|none] [--only NAME ...]``. The default loads the real
model, as a user would see it; ``--only review`` rewrites just that shot (the others are still driven, not saved).
PNGs come from cairosvg (``pip install cairosvg``; it needs the system's libcairo), else from ``rsvg-convert`` or
``inkscape`` on the PATH; without any of them only SVGs are written.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OUT = ROOT / "screenshots"
SIZE = (120, 36)


async def settle(pilot: object, rounds: int = 400) -> None:
    """Wait for the app's workers and queues to go quiet."""
    app = pilot.app  # type: ignore[attr-defined]
    for _ in range(rounds):
        await pilot.pause()  # type: ignore[attr-defined]
        await asyncio.wait_for(app.workers.wait_for_complete(), timeout=600)
        await pilot.pause()  # type: ignore[attr-defined]
        if not any(w.is_running for w in app.workers) and not app.main.sync.running:
            return


def to_png(svg_path: Path) -> bool:
    """Render an SVG to PNG (the terminal font swapped for a local monospace one) with the first converter found."""
    svg = svg_path.read_text(encoding="utf-8")
    svg = re.sub(r"font-family:\s*Fira Code[^;\"]*", "font-family: DejaVu Sans Mono, Menlo, monospace", svg)
    svg = re.sub(r"@font-face\s*{[^}]*}", "", svg)
    png = svg_path.with_suffix(".png")
    try:
        import cairosvg
    except (ImportError, OSError):  # OSError: the package is there, libcairo is not
        cairosvg = None
    if cairosvg is not None:
        cairosvg.svg2png(bytestring=svg.encode("utf-8"), write_to=str(png), output_width=1800)
        return True
    with tempfile.NamedTemporaryFile("w", suffix=".svg", encoding="utf-8", delete=False) as tmp:
        tmp.write(svg)
    try:
        for tool, args in (("rsvg-convert", ["-w", "1800", "-o", str(png), tmp.name]),
                           ("inkscape", [tmp.name, "--export-type=png", f"--export-filename={png}", "-w", "1800"])):
            if shutil.which(tool):
                subprocess.run([tool, *args], check=True, capture_output=True)
                return True
    finally:
        os.unlink(tmp.name)
    return False


async def shoot(provider: str, only: set[str] | None = None) -> list[Path]:
    """Take the screenshots (``only``: the names to write, all if None); returns the SVG files written."""
    from engine.config import load_config
    from tui.app import MemdeckApp
    from tui.widgets import index_status

    tmp = Path(tempfile.mkdtemp(prefix="memdeck-shots-"))
    os.environ["MEMDECK_HOME"] = str(tmp / "home")
    os.environ["MEMDECK_CLIPBOARD"] = "osc52"
    workspace = tmp / "workspace"
    shutil.copytree(ROOT / "engine" / "demo_workspace", workspace)

    def display_path(path: str) -> str:
        if path.endswith(".sqlite"):
            return "~/.local/share/memdeck/index/workspace-3f2a9c.sqlite"
        return "~/.openclaw/workspace" if Path(path) == workspace else path

    index_status.display_path = display_path  # type: ignore[assignment]
    config = load_config(workspace=workspace, sessions_dir=workspace / "sessions",
                         overrides={"embedding": {"provider": provider}})
    OUT.mkdir(exist_ok=True)
    written: list[Path] = []

    def save(app: MemdeckApp, name: str) -> None:
        if only is not None and name not in only:
            return
        for widget in app.query("Input, TextArea"):
            widget.cursor_blink = False  # type: ignore[attr-defined]
        app.clear_notifications()
        path = OUT / f"{name}.svg"
        app.save_screenshot(str(path))
        written.append(path)

    async def typed(pilot: object, text: str) -> None:
        app = pilot.app  # type: ignore[attr-defined]
        app.main.search.query_input.focus()
        app.main.search.query_input.value = ""
        await pilot.press(*["space" if ch == " " else ch for ch in text])  # type: ignore[attr-defined]

    # The model load is held back until the first shot is taken, so that it always shows the state a user
    # sees for the first seconds: keyword results while "vector: loading model…".
    app = MemdeckApp(config, watch=False, load_model=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        # 1. Keyword results while the model is still loading.
        if app.bridge.needs_model:
            app.main.status_pane.model_pending = True
            app.main.refresh_status()
        await typed(pilot, "pgbouncer")
        await settle(pilot)
        if app.bridge.needs_model:
            save(app, "status-model-loading")
            app.main.action_load_model()
        await settle(pilot)
        # 2. Hybrid results for a question.
        await typed(pilot, "why did the api run out of database connections")
        await settle(pilot)
        save(app, "search")
        # 3. Enter: the editor at the range.
        await pilot.press("enter")
        await settle(pilot)
        save(app, "editor")
        # 4. A session transcript, one tool result unfolded.
        path = next(app.bridge.sessions_dir.glob("3f6c2a9e*.jsonl"))
        app.main.open_session(path)
        await settle(pilot)
        await pilot.press(*["down"] * 7, "enter")
        await settle(pilot)
        save(app, "transcript")
        # 5. The light theme, and the keys.
        app.theme = "memdeck-light"
        app.main.open_note("memory/2026-11-27.md")
        await settle(pilot)
        save(app, "light")
        app.theme = "memdeck-dark"
        await pilot.press("f1")
        await pilot.pause()
        save(app, "help")
        # 6. The memory review, the conflict selected so that its two statements stand side by side.
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("ctrl+g")
        review = app.screen
        for _ in range(400):
            await settle(pilot)
            if getattr(review, "loads", 0):
                break
        conflict = next(f for f in review.findings if f.kind == "conflict")  # type: ignore[attr-defined]
        listing = review.query_one("#review-list")
        listing.highlighted = next(i for i, o in enumerate(listing.options)  # type: ignore[attr-defined]
                                   if o.id == conflict.id)
        for _ in range(400):
            await settle(pilot)
            if review._shown == conflict.id:  # type: ignore[attr-defined]
                break
        save(app, "review")
    shutil.rmtree(tmp, ignore_errors=True)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--provider", default="auto", choices=["auto", "hash", "none"])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="write only these shots (e.g. review)")
    args = parser.parse_args()
    written = asyncio.run(shoot(args.provider, set(args.only) if args.only else None))
    pngs = [to_png(p) for p in written]
    for path, png in zip(written, pngs, strict=True):
        print(f"{path.relative_to(ROOT)}" + (" (+ .png)" if png else ""))
    if not all(pngs):
        print("PNG needs cairosvg (pip install cairosvg), rsvg-convert or inkscape", file=sys.stderr)


if __name__ == "__main__":
    main()
