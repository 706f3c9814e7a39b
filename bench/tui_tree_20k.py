"""TUI keystroke latency on a 20,000-file workspace while the memory tree fills, beside a settled baseline.

Usage::

    python bench/tui_tree_20k.py --out bench/results/tui-tree-20k.json [--files 20000] [--keys 40]

The app (hashing embedder, no watcher, no model) starts headless at 120×36 on a temp workspace of ``--files``
one-line memory files (three quarters daily notes, the rest topic files). As soon as its first frame is drawn,
characters are typed into the search box one by one, each after the previous one is on the screen; the latency
of a keystroke is from pressing it to the first frame the app writes after the key was handled (``App._display``,
private Textual API, acceptable in a benchmark: it is the moment the terminal gets the new screen). Then, in the
same process and app, once the tree is full and the index synced, the same is typed again: the baseline.

The figures are p50/p95/max in ms, with the load average (the machine is shared).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from _bench_common import header, latency_ms, load_avg, table, write_json

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def make_workspace(root: Path, files: int) -> Path:
    """``files`` memory files: daily notes back from 2026-12-01, then topic files."""
    memory = root / "memory"
    memory.mkdir(parents=True)
    (root / "MEMORY.md").write_text("# Memory\n\n- the user likes short answers\n", encoding="utf-8")
    daily = files * 3 // 4
    day = date(2026, 12, 1)
    for n in range(daily):
        (memory / f"{day - timedelta(days=n):%Y-%m-%d}.md").write_text(f"# day {n}\n\n- note {n}\n", encoding="utf-8")
    for n in range(files - daily):
        (memory / f"topic-{n:05d}.md").write_text(f"# topic {n}\n\n- fact {n}\n", encoding="utf-8")
    return root


async def _type(app: Any, pilot: Any, frames: list[float], text: str) -> list[float]:
    """Type ``text`` into the search box; each key's send → the first frame after the box holds it, in seconds.

    Keys go to the driver as the terminal's would (not ``Pilot.press``, which waits for the whole process to go
    idle — with indexing in a thread, that is its own long wait).
    """
    from textual import events

    out: list[float] = []
    box = app.main.search.query_input
    box.focus()
    await pilot.pause()
    for ch in text:
        want = box.value + ch
        began = time.perf_counter()
        key = events.Key(ch, ch)
        key.set_sender(app)
        app._driver.send_message(key)
        while box.value != want:  # noqa: ASYNC110  # polling the app from its own loop, as a terminal would see it
            await asyncio.sleep(0.001)
        shown = time.perf_counter()
        while not frames or frames[-1] < shown:  # noqa: ASYNC110
            await asyncio.sleep(0.001)
        out.append(frames[-1] - began)
    return out


async def run(files: int, keys: int) -> dict[str, Any]:
    from textual.app import App

    from engine.config import load_config
    from tui.app import MemdeckApp

    frames: list[float] = []
    display = App._display

    def recording(self: Any, screen: Any, renderable: Any) -> None:
        display(self, screen, renderable)
        frames.append(time.perf_counter())

    App._display = recording  # type: ignore[method-assign]
    tmp = Path(tempfile.mkdtemp(prefix="memdeck-tree-bench-"))
    try:
        os.environ["MEMDECK_HOME"] = str(tmp / "home")
        workspace = make_workspace(tmp / "ws", files)
        config = load_config(workspace=workspace, sessions_dir=workspace / "sessions",
                             overrides={"embedding": {"provider": "hash"}})
        app = MemdeckApp(config, watch=False, load_model=False)
        text = ("pgbouncer retry note " * 4)[:keys]
        started = time.perf_counter()
        async with app.run_test(size=(120, 36)) as pilot:
            while not frames:  # noqa: ASYNC110
                await asyncio.sleep(0.001)
            first_frame = frames[0] - started
            filling = await _type(app, pilot, frames, text)
            tree = app.main.memory_tree
            while len(tree.nodes()) < files or app.main.sync.running or tree._filling:  # noqa: ASYNC110
                await asyncio.sleep(0.05)
            filled = time.perf_counter() - started
            app.main.search.query_input.value = ""
            await pilot.pause()
            settled = await _type(app, pilot, frames, text)
        return {"files": files, "keys": keys, "first_frame_s": round(first_frame, 3),
                "tree_full_and_synced_s": round(filled, 3), "while_filling": latency_ms(filling),
                "settled_baseline": latency_ms(settled), "load_avg_end": load_avg()}
    finally:
        App._display = display  # type: ignore[method-assign]
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--keys", type=int, default=40)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    result = header("tui_tree_20k", args)
    result.update(asyncio.run(run(args.files, args.keys)))
    rows = [[name, result[name]["n"], result[name]["p50_ms"], result[name]["p95_ms"], result[name]["max_ms"]]
            for name in ("while_filling", "settled_baseline")]
    print(table(["keystroke → frame", "n", "p50 ms", "p95 ms", "max ms"], rows))
    print(f"first frame {result['first_frame_s']} s; tree full and index synced {result['tree_full_and_synced_s']} s;"
          f" load {result['load_avg_start']} → {result['load_avg_end']}")
    write_json(args.out, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
