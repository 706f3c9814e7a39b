"""TUI speed: first screen, keystroke → keyword results, transcript open, and event-loop stalls under load.

Run: ``python bench/tui_startup.py [--quick]``. Writes ``bench/out/tui.json`` and prints a Markdown table.
Everything runs on temp copies; nothing touches the real home directory (MEMDECK_HOME is a temp dir).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FIRST_SCREEN_CHILD = r"""
import sys, time, json
from engine.config import load_config
from tui.app import MemdeckApp

class Bench(MemdeckApp):
    def on_mount(self):
        super().on_mount()
        self.call_after_refresh(self._first)

    def _first(self):
        import os
        cpu = os.times()
        print(json.dumps({"t": time.time(), "cpu": cpu.user + cpu.system, "torch": "torch" in sys.modules,
                          "engine_api": "engine.api" in sys.modules}), flush=True)
        self.exit(0)

cfg = load_config(workspace=sys.argv[1], sessions_dir=sys.argv[1] + "/sessions")
Bench(cfg, watch=False).run(headless=True, size=(120, 36))
"""


def pct(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank)."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))
    return ordered[index]


def first_screen(workspace: Path, runs: int) -> dict[str, object]:
    """Seconds from process start to the first painted screen (headless, 120×36), real model provider."""
    times: list[float] = []
    cpu: list[float] = []
    torch_seen = False
    for _ in range(runs):
        started = time.time()
        out = subprocess.run([sys.executable, "-c", FIRST_SCREEN_CHILD, str(workspace)], capture_output=True,
                             text=True, timeout=120, cwd=ROOT, env=os.environ.copy())
        line = next((ln for ln in out.stdout.splitlines() if ln.startswith("{")), None)
        if line is None:
            raise RuntimeError(f"first-screen child failed: {out.stderr[-2000:]}")
        data = json.loads(line)
        times.append(data["t"] - started)
        cpu.append(data["cpu"])
        torch_seen = torch_seen or data["torch"]
    return {"median_s": statistics.median(times), "max_s": max(times), "cpu_median_s": statistics.median(cpu),
            "runs": runs,
            "torch_imported_before_first_screen": torch_seen}


def make_big_workspace(target: Path, chunks: int) -> Path:
    """A generated workspace of ~``chunks`` chunks: daily notes of several ~1,500-character sections."""
    rng = random.Random(7)
    demo = (ROOT / "engine" / "demo_workspace")
    words = " ".join(p.read_text(encoding="utf-8") for p in demo.rglob("*.md")).split()
    (target / "memory").mkdir(parents=True)
    shutil.copy(demo / "MEMORY.md", target / "MEMORY.md")
    sections_per_file = 5
    for i in range(chunks // sections_per_file + 1):
        day = 1 + i % 28
        month = 1 + (i // 28) % 12
        year = 2000 + i // (28 * 12)
        parts = [f"# {year}-{month:02d}-{day:02d}\n"]
        for s in range(sections_per_file):
            body = " ".join(rng.choice(words) for _ in range(230))
            parts.append(f"## Section {s}\n- {body}\n")
        (target / "memory" / f"{year}-{month:02d}-{day:02d}.md").write_text("\n".join(parts), encoding="utf-8")
    return target


def make_big_transcript(path: Path, lines: int = 20_000, target_bytes: int = 10 * 1024 * 1024) -> Path:
    """A 10 MB, 20,000-line transcript: messages, tool calls with large results, a few bad lines."""
    rng = random.Random(3)
    pad = ["lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit", "sed", "do", "eiusmod", "tempor"]
    per_line = target_bytes // lines
    out = [json.dumps({"type": "session", "version": 3, "id": "big", "timestamp": "2026-11-30T08:00:00Z"})]
    for n in range(1, lines):
        ts = f"2026-11-30T{8 + n // 3600 % 12:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z"
        kind = n % 4
        text = " ".join(rng.choice(pad) for _ in range(per_line // 6))[:per_line - 200]
        if n % 997 == 0:
            out.append("{this line is not json")
            continue
        if kind == 0:
            msg = {"role": "user", "content": text[:400]}
        elif kind == 1:
            msg = {"role": "assistant", "content": [{"type": "thinking", "thinking": text[:200]},
                   {"type": "toolCall", "id": f"t{n}", "name": "exec", "arguments": {"command": "ls -la"}}],
                   "usage": {"input": 10, "output": 5, "totalTokens": 15 + n}}
        elif kind == 2:
            msg = {"role": "toolResult", "toolCallId": f"t{n - 1}", "toolName": "exec", "isError": False,
                   "content": [{"type": "text", "text": text}]}
        else:
            msg = {"role": "assistant", "content": [{"type": "text", "text": text[:900]}]}
        out.append(json.dumps({"type": "message", "id": f"{n:08x}", "timestamp": ts, "message": msg}))
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


async def settle(pilot: object, rounds: int = 20) -> None:
    """Wait until the app's workers are done and its queues drained."""
    app = pilot.app  # type: ignore[attr-defined]
    for _ in range(rounds):
        await pilot.pause()  # type: ignore[attr-defined]
        await asyncio.wait_for(app.workers.wait_for_complete(), timeout=600)
        await pilot.pause()  # type: ignore[attr-defined]
        if not any(w.is_running for w in app.workers) and not app._sync_running:
            return


class StallMeter:
    """The longest gap between ticks of a 10 ms timer on the event loop."""

    def __init__(self) -> None:
        self.gaps: list[float] = []
        self.ends: list[float] = []
        self._last = time.perf_counter()

    def tick(self) -> None:
        now = time.perf_counter()
        self.gaps.append(now - self._last)
        self.ends.append(now)
        self._last = now

    def longest_within(self, start: float, end: float) -> float:
        """The longest gap (ms) that overlaps the window."""
        found = [g for g, e in zip(self.gaps, self.ends, strict=True) if e >= start and e - g <= end]
        return 1000 * max(found, default=0.0)

    def reset(self) -> None:
        self.gaps.clear()
        self.ends.clear()
        self._last = time.perf_counter()

    def summary(self) -> dict[str, float]:
        return {"longest_gap_ms": 1000 * max(self.gaps, default=0.0),
                "p99_gap_ms": 1000 * pct(self.gaps, 99) if self.gaps else 0.0, "ticks": len(self.gaps)}


async def keystrokes(workspace: Path, queries: list[str], provider: str) -> dict[str, object]:
    """Keystroke → keyword results painted, per typed character (the 100 ms debounce excluded).

    Timed inside the app: from the search box's change (the keystroke) to the first refresh after the
    results were put on screen.
    """
    from engine.config import load_config
    from tui.app import MemdeckApp
    from tui.widgets import search_pane
    from tui.widgets.search_pane import SearchPane

    cfg = load_config(workspace=workspace, overrides={"embedding": {"provider": provider}})
    search_pane.DEBOUNCE_SECONDS = 0.0  # measure the work behind a keystroke, not the debounce
    latencies: list[float] = []
    typed: dict[str, float] = {}
    original_start, original_show = SearchPane.start_search, SearchPane.show_response

    def start(self: SearchPane, query: str) -> None:
        typed[query] = time.perf_counter()
        original_start(self, query)

    def show(self: SearchPane, query: str, response: object) -> None:
        original_show(self, query, response)  # type: ignore[arg-type]
        began = typed.pop(query, None)
        if began is not None and query:
            self.call_after_refresh(lambda: latencies.append(time.perf_counter() - began))

    SearchPane.start_search, SearchPane.show_response = start, show  # type: ignore[method-assign]
    try:
        app = MemdeckApp(cfg, watch=False, load_model=False)
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(pilot, rounds=200)
            box = app.search.query_input
            box.focus()
            for query in queries:
                box.value = ""
                await settle(pilot)
                typed.clear()
                for ch in query:
                    await pilot.press("space" if ch == " " else ch)
                    await settle(pilot)
    finally:
        SearchPane.start_search, SearchPane.show_response = original_start, original_show  # type: ignore[method-assign]
        search_pane.DEBOUNCE_SECONDS = 0.1
    from engine.api import MemoryEngine

    engine_ms: list[float] = []
    with MemoryEngine(cfg) as eng:
        for query in queries:
            for i in range(1, len(query) + 1):
                started = time.perf_counter()
                eng.search(query[:i], mode="hybrid", ensure_fresh=False, allow_model_load=False)
                engine_ms.append(1000 * (time.perf_counter() - started))
    ms = [1000 * x for x in latencies]
    return {"keystrokes": len(ms), "p50_ms": pct(ms, 50), "p95_ms": pct(ms, 95), "max_ms": max(ms),
            "engine_search_p50_ms": pct(engine_ms, 50), "engine_search_p95_ms": pct(engine_ms, 95)}


async def stalls_during_model_and_index(workspace: Path, provider: str, force: bool) -> dict[str, object]:
    """Longest event-loop gap while the app loads the model and indexes (10 ms timer)."""
    from engine.config import load_config
    from tui.app import MemdeckApp

    cfg = load_config(workspace=workspace, overrides={"embedding": {"provider": provider}})
    meter = StallMeter()
    app = MemdeckApp(cfg, watch=False)
    window: list[float] = []
    original = app.bridge.load_model

    def timed_load() -> str:
        window.append(time.perf_counter())
        try:
            return original()
        finally:
            window.append(time.perf_counter())

    app.bridge.load_model = timed_load  # type: ignore[method-assign]
    started = time.perf_counter()
    async with app.run_test(size=(120, 36)) as pilot:
        app.set_interval(0.01, meter.tick)
        meter.reset()
        if force:
            await settle(pilot, rounds=2000)
            meter.reset()
            started = time.perf_counter()
            app.action_rebuild()
        await settle(pilot, rounds=2000)
    out: dict[str, object] = dict(meter.summary())
    out["seconds"] = time.perf_counter() - started
    if len(window) == 2:
        out["model_load_s"] = window[1] - window[0]
        out["longest_gap_during_model_load_ms"] = meter.longest_within(window[0], window[1])
        rest = [g for g, e in zip(meter.gaps, meter.ends, strict=True) if not (e >= window[0] and e - g <= window[1])]
        out["longest_gap_outside_model_load_ms"] = 1000 * max(rest, default=0.0)
    return out


async def transcript_open(path: Path, workspace: Path) -> dict[str, object]:
    """A 10 MB / 20,000-line transcript: seconds to its first screen of turns, and to the whole file."""
    from engine.config import load_config
    from tui.app import MemdeckApp

    cfg = load_config(workspace=workspace, sessions_dir=path.parent, overrides={"embedding": {"provider": "none"}})
    size, line_count = await asyncio.to_thread(lambda: (path.stat().st_size, path.read_bytes().count(b"\n")))
    first: list[float] = []
    whole: list[float] = []
    meter = StallMeter()
    app = MemdeckApp(cfg, watch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.set_interval(0.01, meter.tick)
        view = app.transcript
        for _ in range(3):
            view.lines.set_blocks([])
            view.transcript = None
            await pilot.pause()
            meter.reset()
            started = time.perf_counter()
            app.open_session(path)
            while not (view.path == path and view.lines.blocks):  # noqa: ASYNC110 - polling is the measurement
                await asyncio.sleep(0.001)
            first.append(time.perf_counter() - started)
            while view.transcript is None or view.partial:  # noqa: ASYNC110 - polling is the measurement
                await asyncio.sleep(0.001)
            whole.append(time.perf_counter() - started)
        blocks = len(view.lines.blocks)
        skipped = view.summary.skipped if view.summary else 0
    return {"first_screen_median_s": statistics.median(first), "first_screen_max_s": max(first),
            "whole_file_median_s": statistics.median(whole), "bytes": size, "lines": line_count, "blocks": blocks, "skipped_lines": skipped,
            "longest_gap_ms": meter.summary()["longest_gap_ms"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="Smaller runs (no 10,000-chunk workspace).")
    parser.add_argument("--chunks", type=int, default=10_000)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="memdeck-tui-bench-"))
    os.environ["MEMDECK_HOME"] = str(tmp / "home")
    os.environ["MEMDECK_CLIPBOARD"] = "osc52"
    demo = tmp / "demo"
    shutil.copytree(ROOT / "engine" / "demo_workspace", demo)
    results: dict[str, object] = {
        "machine": f"{platform.machine()} · {os.cpu_count()} cores · Python {platform.python_version()} · "
                   f"{platform.system()} {platform.release()}",
        "load_average": os.getloadavg(),
    }
    results["first_screen"] = first_screen(demo, 3 if args.quick else 7)
    queries = ["database incident", "pgbouncer pool size", "uv python", "who is Nikola"]
    results["keystroke_demo"] = asyncio.run(keystrokes(demo, queries, "none"))
    results["stalls_model_load_and_embed_demo"] = asyncio.run(stalls_during_model_and_index(demo, "auto", False))
    (tmp / "sessions").mkdir()
    big_transcript = make_big_transcript(tmp / "sessions" / "big.jsonl")
    results["transcript_10mb"] = asyncio.run(transcript_open(big_transcript, demo))
    if not args.quick:
        big = make_big_workspace(tmp / "big", args.chunks)
        results["stalls_index_big"] = asyncio.run(stalls_during_model_and_index(big, "none", True))
        from engine.api import MemoryEngine
        from engine.config import load_config

        with MemoryEngine(load_config(workspace=big, overrides={"embedding": {"provider": "none"}})) as eng:
            results["big_chunks"] = eng.store.counts()["chunks"]
        results["keystroke_big"] = asyncio.run(keystrokes(big, queries, "none"))
    out = ROOT / "bench" / "out"
    out.mkdir(exist_ok=True)
    (out / "tui.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    print(json.dumps(results, indent=2))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
