"""Line vectors from the index as a second opinion on how alike two statements are (never loads the model)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from engine.index import queries
from engine.index.store import DB_ERRORS
from engine.review.statements import Statement

if TYPE_CHECKING:
    from engine.index.store import Store


def line_vector_lookup(store: Store, statements: Sequence[Statement]
                       ) -> tuple[Callable[[Statement, Statement], float | None], str] | None:
    """A similarity function over the statements' line vectors (their cosine, rescaled by :func:`baseline`),
    and an id of the model that made them; None when the index has no line vectors for these files (then the
    review is lexical only).

    A line's vector is used only when the indexed line still reads as the file does now (a stale index must
    not pair lines by their old text).
    """
    try:
        identity = store.get_identity()
        paths = sorted({s.path for s in statements})
        chunk_ids = [cid for cid, _ in queries.chunk_ids_for_paths(store.conn, paths)] if paths else []
        if not chunk_ids:
            return None
        rows = queries.chunk_rows(store.conn, chunk_ids)
        vecs = queries.line_vectors_for(store.conn, chunk_ids)
    except DB_ERRORS:
        return None
    if not vecs:
        return None  # an index built without line vectors: lexical only
    windows: list[tuple[int, int, int, bytes]] = []
    with_lines = {cid for cid, _, _ in vecs}
    # A chunk with one line worth a vector gets no line vectors (the indexer leaves them out: its window's
    # vector is that line's); a short note's only statement would otherwise have no vector at all.
    bare = [cid for cid in chunk_ids if cid not in with_lines]
    if bare:
        try:
            windows = queries.window_vectors_for(store.conn, bare)
        except DB_ERRORS:
            windows = []  # no vector table (sqlite-vec missing): the line vectors alone
    import numpy as np  # deferred: the engine never imports numpy at module import time

    chunks = {r[0]: r for r in rows}
    first_line = {(s.path, s.start_line): s.text.split("\n", 1)[0].strip() for s in statements}
    by_line: dict[tuple[str, int], Any] = {}

    def place(chunk_id: int, offset: int) -> tuple[str, int] | None:
        """The statement that starts at this line of the chunk, when the indexed line still reads as it does."""
        row = chunks.get(chunk_id)
        if row is None:
            return None
        _, path, _source, start, _end, text, line_map_json, _imp = row
        line_map = json.loads(line_map_json) if line_map_json else None
        line_no = line_map[offset] if line_map and offset < len(line_map) else start + offset
        lines = text.split("\n")
        want = first_line.get((path, line_no))
        if want is None or offset >= len(lines) or lines[offset].strip() != want:
            return None
        return path, line_no

    def unit(blob: bytes, dtype: str) -> Any:
        vec = np.frombuffer(blob, dtype=dtype).astype(np.float32)
        norm = float(np.linalg.norm(vec))
        return vec / norm if norm > 0 and np.isfinite(norm) else None

    for chunk_id, offset, blob in vecs:
        at = place(chunk_id, offset)
        if at is None or at in by_line:
            continue
        vec = unit(blob, "int8")
        if vec is not None:
            by_line[at] = vec
    per_chunk: dict[int, list[tuple[int, int, bytes]]] = {}
    for chunk_id, first, last, blob in windows:
        per_chunk.setdefault(chunk_id, []).append((first, last, blob))
    for chunk_id, found in per_chunk.items():
        row = chunks.get(chunk_id)
        if row is None or len(found) != 1:
            continue
        starts = [at for offset in range(len(row[5].split("\n"))) if (at := place(chunk_id, offset)) is not None]
        if len(starts) == 1 and starts[0] not in by_line:  # the chunk's only statement: the window is its vector
            vec = unit(found[0][2], "<f4")
            if vec is not None:
                by_line[starts[0]] = vec
    if not by_line:
        return None
    keyed = {s.key: by_line[(s.path, s.start_line)] for s in statements if (s.path, s.start_line) in by_line}
    base = baseline([keyed[k] for k in sorted(keyed)])
    model = json.dumps(identity, sort_keys=True, default=str) if identity else "unknown"
    return LineVectors(keyed, base), "lines:" + hashlib.sha256(model.encode()).hexdigest()[:12]


class LineVectors:
    """The statements' line vectors: called with two statements, their cosine rescaled so that what two
    unrelated statements of this workspace score is 0 and the same line is 1 (None when one has no vector)."""

    def __init__(self, keyed: dict[str, Any], base: float) -> None:
        self.keyed = keyed
        self.base = base
        self.span = 1.0 - base

    def __call__(self, a: Statement, b: Statement) -> float | None:
        va, vb = self.keyed.get(a.key), self.keyed.get(b.key)
        if va is None or vb is None:
            return None
        return max(0.0, (float(va @ vb) - self.base) / self.span)

    def across_scripts(self, curated: Sequence[Statement], others: Sequence[Statement], least: float
                       ) -> list[tuple[Statement, Statement, float]]:
        """``(curated, other, similarity)`` for each pair written in different scripts (Latin, Cyrillic, Han…),
        each the other's nearest line in another script, whose rescaled cosine is ``least`` or more: one fact in Serbian in MEMORY.md and in Chinese in a daily
        note shares no word, so the lexical candidates never pair them."""
        import numpy as np  # deferred: the engine never imports numpy at module import time

        if len(self.keyed) < 8:
            return []  # too few vectors to know what "unrelated" scores here (no baseline)
        left = [(c, sc) for c in curated if c.key in self.keyed and (sc := script_of(c.clean))]
        right = [(o, so) for o in others if o.key in self.keyed and (so := script_of(o.clean))]
        if not left or not right or len({sc for _, sc in left} | {so for _, so in right}) < 2:
            return []
        a = np.stack([self.keyed[c.key] for c, _ in left])
        b = np.stack([self.keyed[o.key] for o, _ in right])
        sims = (a @ b.T - self.base) / self.span
        names = sorted({sc for _, sc in left} | {so for _, so in right})
        code_l = np.array([names.index(sc) for _, sc in left])
        code_r = np.array([names.index(so) for _, so in right])
        sims[code_l[:, None] == code_r[None, :]] = -1.0  # the same script: the lexical rules compare those
        out: list[tuple[Statement, Statement, float]] = []
        best_right, best_left = sims.argmax(axis=1), sims.argmax(axis=0)
        for i, j in zip(*np.nonzero(sims >= least), strict=True):
            if best_right[i] == j and best_left[j] == i:  # each the other's nearest line in another script
                out.append((left[int(i)][0], right[int(j)][0], min(1.0, float(sims[i, j]))))
        return out


_SCRIPTS = (("han", ((0x3400, 0x9FFF), (0xF900, 0xFAFF))), ("kana", ((0x3040, 0x30FF),)),
            ("hangul", ((0xAC00, 0xD7AF),)), ("cyrillic", ((0x0400, 0x04FF),)), ("greek", ((0x0370, 0x03FF),)),
            ("arabic", ((0x0600, 0x06FF),)))


def script_of(text: str) -> str:
    """The script most of a text's letters are in ("latin", "cyrillic", "han", …; "" for no letters). A Han
    character counts as two letters: a Chinese sentence with a Latin name in it is still Chinese."""
    counts: dict[str, int] = {}
    for ch in text:
        if not ch.isalpha():
            continue
        code = ord(ch)
        name = next((n for n, spans in _SCRIPTS if any(lo <= code <= hi for lo, hi in spans)),
                    "latin" if code < 0x0250 or 0x1E00 <= code <= 0x1EFF else "other")
        counts[name] = counts.get(name, 0) + (2 if name in ("han", "kana", "hangul") else 1)
    return max(counts, key=lambda n: (counts[n], n)) if counts else ""


BASELINE_QUANTILE = 0.5
"""Which quantile of unrelated pairs' cosine counts as "unrelated" (0 after rescaling)."""


def baseline(vectors: Sequence[Any], pairs: int = 4000) -> float:
    """The cosine two unrelated statements of this workspace typically have (capped to 0–0.95).

    Models differ a lot here: multilingual-e5 puts any two sentences at ~0.8, MiniLM at ~0.1, so a raw cosine
    says little until it is set against the workspace's own pairs. Statements ``i`` and ``i + k`` (``k``
    spread over the list, a fixed stride: the same vectors give the same baseline) stand in for random pairs.
    """
    n = len(vectors)
    if n < 8:
        return 0.0
    import numpy as np  # deferred: the engine never imports numpy at module import time

    matrix = np.stack(vectors)
    steps = [max(1, (n * j) // 7) % n or 1 for j in range(1, 7)]
    sims: list[Any] = []
    per = max(1, pairs // len(steps))
    for k in steps:
        idx = np.arange(0, n, max(1, n // per))[:per]
        sims.append(np.einsum("ij,ij->i", matrix[idx], matrix[(idx + k) % n]))
    found = float(np.quantile(np.concatenate(sims), BASELINE_QUANTILE))
    return min(max(found, 0.0), 0.95)
