"""IndexStatus: provider and model, vector and FTS readiness, counts, last sync, index file; indexing progress."""

from __future__ import annotations

import os
import time
from datetime import datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content

from tui.widgets.text_line import TextLine

if TYPE_CHECKING:
    from textual.widgets import ProgressBar

Part = Content | str | tuple[str, str]


def format_clock(timestamp: float | None, zone: tzinfo | None = None) -> str:
    """``HH:MM:SS`` of a sync in ``zone`` (the user's; None: the system's), ``never`` when there was none."""
    if timestamp is None:
        return "never"
    return datetime.fromtimestamp(timestamp, zone).strftime("%H:%M:%S") if zone is not None else \
        time.strftime("%H:%M:%S", time.localtime(timestamp))


def display_path(path: str) -> str:
    """A path with the home directory shown as ``~``."""
    home = str(Path.home())
    if path == home or path.startswith(home + os.sep):
        return "~" + path[len(home) :]
    return path


def vector_part(state: str, model_pending: bool, vectors: tuple[int, int] | None = None) -> tuple[str, str]:
    """How the vector leg is doing, with its colour; ``vectors`` (embedded, chunks) while some chunks wait: then it
    reads ``vectors 1,152/2,706`` in the warning colour, never "ready"."""
    if state.startswith("vectors "):
        return state, "$text-warning"
    if vectors is not None and vectors[0] < vectors[1] and state in ("ready", "not-loaded"):
        return f"vectors {vectors[0]:,}/{vectors[1]:,}", "$text-warning"
    if state == "ready":
        return "vector: ready", "$text-success"
    if state == "loading" or (state == "not-loaded" and model_pending):
        return "vector: loading model…", "$text-warning"
    if state == "not-loaded":
        return "vector: not loaded", "$text-muted"
    why = state.split(": ", 1)[1] if ": " in state else state
    return f"vector: unavailable ({why})", "$text-error"


def bootstrap_parts(budget: Any) -> list[Part]:
    """What an agent session receives of MEMORY.md / USER.md at its start (OpenClaw's bootstrap limits)."""
    if budget is None:
        return []
    from engine.api import plural  # loaded already: the budget came from the engine
    parts: list[Part] = []
    for name in ("MEMORY.md", "USER.md"):
        f = budget.file(name)
        if f is None or not f.present:
            continue
        if f.truncated:
            whole = sum(1 for s in f.cut_sections if s.whole)
            cut = f" · {plural(whole, 'section')} cut" if whole else ""
            parts += [_sep(), (f"⚠ agent gets {f.injected:,} of {plural(f.chars, 'char', grouped=True)} of {name}{cut}",
                                    "$text-warning")]
        else:
            parts += [_sep(), (f"{name} ", "$text-muted"), (f"{f.chars:,}/{f.limit:,}", "bold"),
                      (" to the agent", "$text-muted")]
    return parts


def _sep() -> tuple[str, str]:
    return ("  │  ", "$text-muted")


class IndexStatus(Vertical):
    """The bottom pane: the engine line, then the index line (the progress bar in its place while indexing).

    The progress row takes the index line's place instead of adding one, so the pane keeps its height: a
    taller status pane would resize every pane above it (the tree re-measures all its lines on a resize).
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.status: Any = None
        self.model_pending = False
        self.indexing = False
        self._progress: tuple[Horizontal, TextLine, ProgressBar] | None = None
        self._early: tuple[str, int, int, str | None, tuple[int, int]] | None = None  # progress that came before the pane mounted
        self._shown: tuple[str | None, tzinfo | None] = (None, None)  # show_status's vector state and zone
        self.vectors: tuple[int, int] | None = None  # (embedded, chunks) while some chunks wait for vectors

    def compose(self) -> ComposeResult:
        yield TextLine(Content.styled("opening the index…", "$text-muted"), id="status-engine")
        yield TextLine("", id="status-index")

    def on_mount(self) -> None:
        if self._early is not None:  # indexing reported progress before the pane was in the DOM
            early, self._early = self._early, None
            self.call_later(self.show_progress, *early)  # is_mounted turns True once this handler returns

    def _progress_row(self) -> tuple[Horizontal, TextLine, ProgressBar]:
        """The progress row, made on first use (indexing starts after the first screen); only once mounted."""
        if self._progress is None:
            from textual.widgets import ProgressBar

            label = TextLine("", id="progress-label")
            bar = ProgressBar(id="progress-bar", show_eta=False)
            row = Horizontal(label, bar, TextLine(Content.styled("esc cancels", "$text-muted"), id="progress-hint"),
                             id="status-progress")
            row.display = False
            self.mount(row)
            self._progress = (row, label, bar)
        return self._progress

    def show_error(self, message: str) -> None:
        """The index could not be opened."""
        from engine.api import safe_name  # paths and errors are shown through the display rule

        self.query_one("#status-engine", TextLine).update(
            Content.styled(f"index unavailable: {safe_name(message)}", "$text-error"))

    def show_status(self, status: Any, vector_state: str | None = None, zone: tzinfo | None = None) -> None:
        """Render an engine Status (``vector_state`` overrides its vector state, e.g. after a model load; times in
        ``zone``, the user's)."""
        from engine.api import byte_size, safe_name  # names shown through the display rule

        self.status = status
        self._shown = (vector_state, zone)
        pending = getattr(status, "pending_embeddings", 0)
        if not self.indexing or self.vectors is None:
            self.vectors = (status.chunks - pending, status.chunks) if pending else None
        state = vector_state or status.vector_state
        provider = status.provider
        model = f" · {status.model}" + (f" ({status.dims}d)" if status.dims else "") if status.model else ""
        engine: list[Part] = [("provider ", "$text-muted"), (provider + model, "bold")]
        expected = status.provider == status.requested_provider or (
            status.requested_provider == "auto" and status.provider == "local")
        if status.provider_reason and not expected:
            engine.append((f" ({status.provider_reason})", "$text-muted"))
        engine += [_sep(), vector_part(state, self.model_pending, self.vectors), _sep()]
        engine.append(("FTS: ready", "$text-success") if status.fts_ready else ("FTS: unavailable", "$text-error"))
        if status.vec_version is None:
            engine += [_sep(), ("sqlite-vec not loaded", "$text-warning")]
        self.query_one("#status-engine", TextLine).update(Content.assemble(*engine))
        index: list[Part] = [
            ("files ", "$text-muted"), (f"{status.files_indexed}/{status.files_on_disk}", "bold"),
            ("  chunks ", "$text-muted"), (f"{status.chunks:,}", "bold"),
            ("  dirty ", "$text-muted"),
            (f"{status.dirty_files}", "bold $text-warning" if status.dirty_files else "bold"),
        ]
        if status.pending_embeddings:
            index += [("  not embedded ", "$text-muted"), (f"{status.pending_embeddings:,}", "bold")]
        index += [("  synced ", "$text-muted"), (format_clock(status.last_sync, zone), "bold")]
        index += bootstrap_parts(getattr(status, "bootstrap", None))  # before the path: it matters more
        index += [_sep(), (safe_name(display_path(status.index_path)), "$text-muted"),
                  (f" {byte_size(status.index_bytes)}", "$text-muted")]
        if status.issues:
            index += [_sep(), (f"⚠ {safe_name(status.issues[0])}", "$text-warning")]
        self.query_one("#status-index", TextLine).update(Content.assemble(*index))

    def show_progress(self, phase: str, done: int, total: int, path: str | None,
                      work: tuple[int, int] = (0, 0)) -> None:
        """Indexing moved on (before the pane is mounted, or after it left the DOM, the latest is kept for on_mount:
        mounting the row into a pane that is not mounted raises MountError). ``work``: the embedding's characters
        sent of all to send, when known (the bar follows it)."""
        self.indexing = True
        if not (self.is_mounted and self.is_attached):
            self._early = (phase, done, total, path, work)
            return
        work_done, work_total = work
        row, label, bar = self._progress_row()
        if not row.display:
            self.query_one("#status-index").display = False
            row.display = True
        text = "indexing files" if phase == "files" else "embedding chunks"
        shown_done, shown_total = done, total
        if phase == "embed" and self.status is not None:
            # The engine line counts the vectors as they come: `vectors 1,152/2,706` (the run embeds the last
            # ``total`` chunks of the index's; a sync that re-chunked files may have changed the count). The
            # progress row says the same numbers, not this run's share of them (`56/92` beside `vectors 62/98`).
            chunks = max(int(self.status.chunks), total)
            shown_done, shown_total = chunks - total + done, chunks
            self.vectors = (shown_done, shown_total) if done < total else None
            self.show_status(self.status, *self._shown)
        label.update(Content(f"{text} {shown_done:,}/{shown_total:,} "))
        if phase == "embed" and work_total:
            # The bar follows the work (it moves while the head's line vectors go in and no chunk is counted), on
            # the label's scale: a run that resumes at 377 of 1,329 chunks starts at 28%, not "377/1,329 … 1%".
            before = shown_total - total  # chunks embedded before this run
            share = (before + total * min(work_done, work_total) / work_total) / max(1, shown_total)
            bar.update(total=1000, progress=round(1000 * share))
        else:
            bar.update(total=max(1, shown_total), progress=shown_done)

    def hide_progress(self) -> None:
        """Indexing ended."""
        self.indexing = False
        self._early = None
        self.vectors = None  # the status that follows says what is left
        if self._progress is not None and self._progress[0].display:
            self._progress[0].display = False
            self.query_one("#status-index").display = True
