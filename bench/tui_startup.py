"""TUI speed: first screen, keystroke → results, transcript open, event-loop stalls, each beside a baseline.

Usage::

    python bench/tui_startup.py --out bench/results/speed-tui.json [--quick] [--chunks 10000] [--runs 7]

Every figure is recorded with the load average (the machine is shared) and next to an in-process baseline
measured in the same run, so ratios survive a busy machine:

- **first screen**: process start → the first full frame the app writes (headless, 120×36), for memdeck, for
  the whole ``memdeck`` command (click + memdeck.cli + the TUI) and for a bare Textual app with the same widget
  kinds and no CSS (the floor: Textual's own imports and first layout). Runs are interleaved after one warm-up
  each; bytecode is cached in a temp ``PYTHONPYCACHEPREFIX`` (as an installed package has it, whatever
  ``PYTHONDONTWRITEBYTECODE`` says). Wall and process CPU time; which heavy modules were imported by then.
- **keystroke → results**: per typed character, with the app's real debounce, to the first screen refresh after
  the results are on it: from the start of the search (the debounce over) and from the keystroke, on the demo
  and on a generated ~10k-chunk workspace; the engine's own search of the same prefixes in the same process is
  the baseline.
- **stalls**: the longest gap of a 10 ms timer on the event loop while the model loads and indexing runs (demo,
  real model provider), and during a full rebuild at ~10k chunks; the baseline is the same timer in the same
  app left idle for as long (what the machine's load alone does to it).
- **transcript**: a 10 MB / 20,000-line session: time to its first screen of turns, to the whole file, and the
  longest gap meanwhile.

Everything runs on temp copies; nothing touches the real home directory (MEMDECK_HOME is a temp dir).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _bench_common import header, load_avg, percentile, table, write_json

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

HEAVY = ("torch", "numpy", "sqlite3", "sqlean", "sqlite_vec", "mistune", "pyperclip", "engine.api",
         "engine.search.pipeline", "tui.widgets.note_editor", "tui.widgets.transcript_view")

# The child records the first full frame (a LayoutUpdate written to the driver) and exits. Patching
# App._display is private Textual API, acceptable in a benchmark: it is the moment the terminal gets a screen.
FIRST_FRAME_CHILD = r"""
import json, os, sys, time
began = time.time()
kind, workspace = sys.argv[1], sys.argv[2]
from textual.app import App
imported = [None]
_display = App._display

def display(self, screen, renderable):
    _display(self, screen, renderable)
    if type(renderable).__name__ == "LayoutUpdate" and not getattr(self, "_bench_shown", False):
        self._bench_shown = True
        cpu = os.times()
        heavy = [m for m in HEAVY if m in sys.modules]
        print(json.dumps({"t": time.time(), "began": began, "imported": imported[0], "cpu": cpu.user + cpu.system,
                          "heavy": heavy, "modules": len(sys.modules)}), flush=True)
        self.exit(0)

App._display = display
if kind == "bare":
    from textual.containers import Horizontal, Vertical
    from textual.widgets import Footer, Header, Input, Static, Tree
    imported[0] = time.time()

    class Bare(App):
        BINDINGS = [("ctrl+q", "quit", "Quit"), ("ctrl+f", "focus", "Search"), ("ctrl+s", "save", "Save")]

        def compose(self):
            yield Header()
            with Horizontal():
                yield Tree("workspace")
                with Vertical():
                    yield Input(placeholder="Search")
                    yield Static("Search as you type above.")
            yield Static("opening the index…")
            yield Footer()

    Bare().run(headless=True, size=(120, 36))
elif kind == "memdeck":
    from engine.config import load_config
    from tui.app import MemdeckApp
    imported[0] = time.time()
    cfg = load_config(workspace=workspace, sessions_dir=workspace + "/sessions")
    MemdeckApp(cfg, watch=False).run(headless=True, size=(120, 36))
else:  # the whole `memdeck --workspace W` command, as a user starts it
    _run = App.run

    def run(self, *args, **kwargs):
        kwargs.update(headless=True, size=(120, 36))
        return _run(self, *args, **kwargs)

    App.run = run
    sys.argv = ["memdeck", "--workspace", workspace, "--sessions", workspace + "/sessions"]
    from memdeck.cli import main
    try:
        main()
    except SystemExit:
        pass
""".replace("HEAVY", repr(HEAVY))


def pct(values: list[float], q: float) -> float:
    """The q-th percentile (linear interpolation), 0 for no values."""
    return percentile(values, q) if values else 0.0


def first_screen(workspace: Path, runs: int, pycache: Path) -> dict[str, Any]:
    """Process start → first full frame for memdeck, the ``memdeck`` command and a bare Textual app."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    kinds = ("bare", "memdeck", "cli")
    samples: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}

    def once(kind: str) -> dict[str, Any]:
        started = time.time()
        out = subprocess.run([sys.executable, "-c", FIRST_FRAME_CHILD, kind, str(workspace)], capture_output=True,
                             text=True, timeout=120, cwd=ROOT, env=env)
        line = next((ln for ln in out.stdout.splitlines() if ln.startswith("{")), None)
        if line is None:
            raise RuntimeError(f"first-screen child ({kind}) failed: {out.stderr[-2000:]}")
        data = json.loads(line)
        data["wall"] = data["t"] - started
        data["imports"] = (data["imported"] - data["began"]) if data["imported"] else None
        return data

    load_before = load_avg()
    for kind in kinds:
        once(kind)  # warm-up: fills the bytecode cache, warms the page cache
    for _ in range(runs):
        for kind in kinds:
            samples[kind].append(once(kind))
    out: dict[str, Any] = {"runs": runs, "load_before": load_before, "load_after": load_avg()}
    for kind, rows in samples.items():
        walls = [r["wall"] for r in rows]
        imports = [r["imports"] for r in rows if r["imports"] is not None]
        out[kind] = {"median_s": statistics.median(walls), "min_s": min(walls), "max_s": max(walls),
                     "cpu_median_s": statistics.median(r["cpu"] for r in rows),
                     "imports_median_s": statistics.median(imports) if imports else None,
                     "heavy_modules": sorted({m for r in rows for m in r["heavy"]}),
                     "modules": rows[-1]["modules"]}
    bare = out["bare"]
    for kind in ("memdeck", "cli"):
        out[kind]["ratio_to_bare_wall"] = out[kind]["median_s"] / bare["median_s"]
        out[kind]["ratio_to_bare_cpu"] = out[kind]["cpu_median_s"] / bare["cpu_median_s"]
    return out


def make_big_workspace(target: Path, chunks: int) -> Path:
    """A generated workspace of ~``chunks`` chunks: daily notes of several ~1,500-character sections."""
    rng = random.Random(7)
    demo = ROOT / "engine" / "demo_workspace"
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


async def settle(pilot: Any, rounds: int = 20) -> None:
    """Wait until the app's workers are done and its queues drained."""
    app = pilot.app
    for _ in range(rounds):
        await pilot.pause()
        await asyncio.wait_for(app.workers.wait_for_complete(), timeout=600)
        await pilot.pause()
        if not any(w.is_running for w in app.workers) and not app.main.sync.running:
            return


class StallMeter:
    """The gaps between ticks of a 10 ms timer on the event loop."""

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
        ms = [1000 * g for g in self.gaps]
        return {"longest_gap_ms": max(ms, default=0.0), "p99_gap_ms": pct(ms, 99), "ticks": len(ms),
                "gaps_over_50ms": sum(1 for g in ms if g > 50), "gaps_over_100ms": sum(1 for g in ms if g > 100)}


async def idle_baseline(pilot: Any, meter: StallMeter, seconds: float) -> dict[str, float]:
    """The same 10 ms timer in the same app with nothing to do: the gaps the machine's load alone causes."""
    meter.reset()
    await asyncio.sleep(seconds)
    return meter.summary()


async def keystrokes(workspace: Path, queries: list[str], provider: str) -> dict[str, Any]:
    """Keystroke → keyword results painted, per typed character, with the app's real debounce.

    Timed inside the app, to the first screen refresh after the results were put on screen: from the moment the
    search starts (the debounce over: engine search, hand-back to the event loop, results shown, repaint), and
    from the keystroke itself (what a typist sees: the debounce included). The engine's own search of every
    prefix, in the same process, is the baseline.
    """
    from engine.config import load_config
    from tui.app import MemdeckApp
    from tui.bridge import Bridge
    from tui.widgets import search_pane
    from tui.widgets.search_pane import SearchPane

    cfg = load_config(workspace=workspace, overrides={"embedding": {"provider": provider}})
    from_search: list[float] = []
    from_key: list[float] = []
    typed: dict[str, float] = {}
    searched: dict[str, float] = {}
    original_start, original_show, original_search = SearchPane.start_search, SearchPane.show_response, Bridge.search

    def start(self: SearchPane, query: str) -> None:
        typed[query] = time.perf_counter()
        original_start(self, query)

    def search(self: Bridge, query: str, mode: str = "hybrid") -> Any:
        searched[query] = time.perf_counter()
        return original_search(self, query, mode)

    def show(self: SearchPane, query: str, response: Any) -> None:
        original_show(self, query, response)
        key, began = typed.pop(query, None), searched.pop(query, None)
        if key is not None and began is not None and query:
            def painted() -> None:
                now = time.perf_counter()
                from_search.append(now - began)
                from_key.append(now - key)
            self.call_after_refresh(painted)

    load_before = load_avg()
    SearchPane.start_search, SearchPane.show_response = start, show  # type: ignore[method-assign]
    Bridge.search = search  # type: ignore[method-assign]
    try:
        app = MemdeckApp(cfg, watch=False, load_model=False)
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(pilot, rounds=200)
            box = app.main.search.query_input
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
        Bridge.search = original_search  # type: ignore[method-assign]
    from engine.api import MemoryEngine

    engine_ms: list[float] = []
    with MemoryEngine(cfg) as eng:
        chunks = eng.store.counts()["chunks"]
        for query in queries:
            for i in range(1, len(query) + 1):
                started = time.perf_counter()
                eng.search(query[:i], mode="hybrid", ensure_fresh=False, allow_model_load=False)
                engine_ms.append(1000 * (time.perf_counter() - started))
    ms = [1000 * x for x in from_search]
    key_ms = [1000 * x for x in from_key]
    return {"chunks": chunks, "keystrokes": len(ms), "debounce_ms": 1000 * search_pane.DEBOUNCE_SECONDS,
            "p50_ms": pct(ms, 50), "p95_ms": pct(ms, 95), "max_ms": max(ms),
            "from_key_p50_ms": pct(key_ms, 50), "from_key_p95_ms": pct(key_ms, 95),
            "engine_search_p50_ms": pct(engine_ms, 50), "engine_search_p95_ms": pct(engine_ms, 95),
            "p95_minus_engine_p95_ms": pct(ms, 95) - pct(engine_ms, 95),
            "load_before": load_before, "load_after": load_avg()}


async def stalls_during_model_and_index(workspace: Path, provider: str, force: bool) -> dict[str, Any]:
    """Longest event-loop gap while the app loads the model and indexes (10 ms timer), and idle beside it."""
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
    load_before = load_avg()
    started = time.perf_counter()
    async with app.run_test(size=(120, 36)) as pilot:
        app.set_interval(0.01, meter.tick)
        meter.reset()
        if force:
            await settle(pilot, rounds=2000)
            meter.reset()
            started = time.perf_counter()
            app.main.action_rebuild()
        await settle(pilot, rounds=2000)
        seconds = time.perf_counter() - started
        out: dict[str, Any] = dict(meter.summary())
        out["seconds"] = seconds
        gaps, ends = list(meter.gaps), list(meter.ends)
        out["idle_baseline"] = await idle_baseline(pilot, meter, min(seconds, 10.0))
    out["load_before"], out["load_after"] = load_before, load_avg()
    if len(window) == 2:
        out["model_load_s"] = window[1] - window[0]
        inside = [g for g, e in zip(gaps, ends, strict=True) if e >= window[0] and e - g <= window[1]]
        rest = [g for g, e in zip(gaps, ends, strict=True) if not (e >= window[0] and e - g <= window[1])]
        out["longest_gap_during_model_load_ms"] = 1000 * max(inside, default=0.0)
        out["longest_gap_outside_model_load_ms"] = 1000 * max(rest, default=0.0)
    return out


async def transcript_open(path: Path, workspace: Path) -> dict[str, Any]:
    """A 10 MB / 20,000-line transcript: seconds to its first screen of turns, and to the whole file."""
    from engine.config import load_config
    from tui.app import MemdeckApp

    cfg = load_config(workspace=workspace, sessions_dir=path.parent, overrides={"embedding": {"provider": "none"}})
    size, line_count = await asyncio.to_thread(lambda: (path.stat().st_size, path.read_bytes().count(b"\n")))
    first: list[float] = []
    whole: list[float] = []
    meter = StallMeter()
    app = MemdeckApp(cfg, watch=False)
    load_before = load_avg()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.set_interval(0.01, meter.tick)
        longest = 0.0
        for _ in range(3):
            ensure = getattr(app.main, "ensure_transcript", None)  # older versions composed it at start
            view = await ensure() if ensure is not None else app.main.transcript
            view.lines.set_blocks([])
            view.transcript = None
            await pilot.pause()
            meter.reset()
            started = time.perf_counter()
            app.main.open_session(path)
            while not (view.path == path and view.lines.blocks):  # noqa: ASYNC110 - polling is the measurement
                await asyncio.sleep(0.001)
            first.append(time.perf_counter() - started)
            while view.transcript is None or view.partial:  # noqa: ASYNC110 - polling is the measurement
                await asyncio.sleep(0.001)
            whole.append(time.perf_counter() - started)
            longest = max(longest, meter.summary()["longest_gap_ms"])
        blocks = len(view.lines.blocks)
        skipped = view.summary.skipped if view.summary else 0
        baseline = await idle_baseline(pilot, meter, min(3.0, max(whole)))
    return {"first_screen_median_s": statistics.median(first), "first_screen_max_s": max(first),
            "whole_file_median_s": statistics.median(whole), "bytes": size, "lines": line_count, "blocks": blocks,
            "skipped_lines": skipped, "longest_gap_ms": longest, "idle_baseline": baseline,
            "load_before": load_before, "load_after": load_avg()}


def report(results: dict[str, Any]) -> str:
    """The Markdown table printed at the end (and pasted into bench/README.md)."""
    rows: list[list[Any]] = []
    fs = results["first_screen"]
    load = f"{fs['load_before']:.1f}→{fs['load_after']:.1f}"
    for kind, label in (("memdeck", "first screen: MemdeckApp"), ("cli", "first screen: `memdeck` command"),
                        ("bare", "first screen: bare Textual app (baseline)")):
        row = fs[kind]
        ratio = "" if kind == "bare" else (f"{row['ratio_to_bare_wall']:.2f}× wall, "
                                           f"{row['ratio_to_bare_cpu']:.2f}× CPU")
        rows.append([label, f"{row['median_s']:.3f} s (min {row['min_s']:.3f})", f"{row['cpu_median_s']:.2f} s",
                     ratio, load, "≤ 0.5 s" if kind != "bare" else ""])
    for key, label in (("keystroke_demo", "keystroke → results p95, demo"),
                       ("keystroke_big", f"keystroke → results p95, {results.get('big_chunks', '?')} chunks")):
        if key in results:
            k = results[key]
            rows.append([label, f"{k['p95_ms']:.1f} ms (p50 {k['p50_ms']:.1f})", "",
                         f"engine alone p95 {k['engine_search_p95_ms']:.1f} ms; from the key, "
                         f"{k['debounce_ms']:.0f} ms debounce incl.: p95 {k['from_key_p95_ms']:.0f} ms",
                         f"{k['load_before']:.1f}→{k['load_after']:.1f}", "≤ 50 ms"])
    st = results["stalls_model_load_and_embed_demo"]
    base = f"idle baseline {st['idle_baseline']['longest_gap_ms']:.0f} ms"
    if "longest_gap_during_model_load_ms" in st:
        rows.append([f"longest stall while the model loads ({st['model_load_s']:.1f} s)",
                     f"{st['longest_gap_during_model_load_ms']:.0f} ms", "", base,
                     f"{st['load_before']:.1f}→{st['load_after']:.1f}", "≤ 100 ms"])
        rows.append(["longest stall while indexing/embedding (demo)", f"{st['longest_gap_outside_model_load_ms']:.0f} ms",
                     "", base, f"{st['load_before']:.1f}→{st['load_after']:.1f}", "≤ 100 ms"])
    if "stalls_index_big" in results:
        sb = results["stalls_index_big"]
        rows.append([f"longest stall during a full rebuild, {results.get('big_chunks', '?')} chunks",
                     f"{sb['longest_gap_ms']:.0f} ms (p99 {sb['p99_gap_ms']:.0f})", "",
                     f"idle baseline {sb['idle_baseline']['longest_gap_ms']:.0f} ms",
                     f"{sb['load_before']:.1f}→{sb['load_after']:.1f}", "≤ 100 ms"])
    tr = results["transcript_10mb"]
    rows.append(["10 MB transcript: first screen of turns", f"{tr['first_screen_median_s']:.3f} s", "",
                 f"whole file {tr['whole_file_median_s']:.2f} s", f"{tr['load_before']:.1f}→{tr['load_after']:.1f}",
                 "< 1 s"])
    rows.append(["10 MB transcript: longest stall", f"{tr['longest_gap_ms']:.0f} ms", "",
                 f"idle baseline {tr['idle_baseline']['longest_gap_ms']:.0f} ms", "", "≤ 100 ms"])
    return table(["measure", "result", "CPU", "baseline / ratio", "load", "goal"], rows)


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="Smaller runs (no 10,000-chunk workspace).")
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=7, help="First-screen runs per kind (after one warm-up).")
    parser.add_argument("--only", choices=("first", "keys", "stalls", "transcript"), action="append",
                        help="Run only these parts (repeatable).")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "tui.json")
    args = parser.parse_args(argv)
    only = set(args.only or ("first", "keys", "stalls", "transcript"))
    tmp = Path(tempfile.mkdtemp(prefix="memdeck-tui-bench-"))
    os.environ["MEMDECK_HOME"] = str(tmp / "home")
    os.environ["MEMDECK_CLIPBOARD"] = "osc52"
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    demo = tmp / "demo"
    shutil.copytree(ROOT / "engine" / "demo_workspace", demo)
    results: dict[str, Any] = header("tui_startup", args)
    queries = ["database incident", "pgbouncer pool size", "uv python", "who is Nikola"]
    try:
        if "first" in only:
            results["first_screen"] = first_screen(demo, 3 if args.quick else args.runs, tmp / "pycache")
        if "keys" in only:
            results["keystroke_demo"] = asyncio.run(keystrokes(demo, queries, "none"))
        if "stalls" in only:
            results["stalls_model_load_and_embed_demo"] = asyncio.run(stalls_during_model_and_index(demo, "auto", False))
        if "transcript" in only:
            (tmp / "sessions").mkdir()
            big_transcript = make_big_transcript(tmp / "sessions" / "big.jsonl")
            results["transcript_10mb"] = asyncio.run(transcript_open(big_transcript, demo))
        if not args.quick and only & {"keys", "stalls"}:
            big = make_big_workspace(tmp / "big", args.chunks)
            if "stalls" in only:
                results["stalls_index_big"] = asyncio.run(stalls_during_model_and_index(big, "none", True))
            if "keys" in only:
                results["keystroke_big"] = asyncio.run(keystrokes(big, queries, "none"))
                results["big_chunks"] = results["keystroke_big"]["chunks"]
        results["load_avg_end"] = load_avg()
        write_json(args.out, results)
        if only == {"first", "keys", "stalls", "transcript"}:
            print(report(results))
        else:
            print(json.dumps({k: v for k, v in results.items() if k not in ("machine", "args")}, indent=2))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
