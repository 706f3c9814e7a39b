"""A finding's score is its measured precision: how often findings of its evidence group were right when the
review ran over labelled workspaces (``bench/review_eval.py --calibrate``, never on the held-out set).

``precision.json`` (beside this module) holds, per evidence group, how many findings the calibration made (``n``)
and how many were right (``right``); the score is ``(right + 1) / (n + 2)``, so an unmeasured group scores .50
and a few lucky findings do not make a group look sure. A finding is *confident* at :data:`CONFIDENT` or above:
only those are shown unless every finding is asked for (``--all``).
"""

from __future__ import annotations

import functools
import json
import logging
from pathlib import Path
from typing import Any

PRECISION_FILE = Path(__file__).with_name("precision.json")
CONFIDENT = 0.80
"""The least measured precision a finding needs to be shown by default."""
UNMEASURED = 0.50
"""The score of a finding whose evidence group the calibration never saw."""
log = logging.getLogger(__name__)


@functools.lru_cache(maxsize=4)
def _document(path: Path) -> dict[str, Any]:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        log.warning("review precision table %s not readable (%s): every finding scores %.2f", path, exc,
                    UNMEASURED)
        return {}
    return data if isinstance(data, dict) else {}


@functools.lru_cache(maxsize=8)
def _table(path: Path, section: str = "groups") -> dict[str, tuple[int, int]]:
    groups = _document(path).get(section, {})
    if not isinstance(groups, dict):
        return {}
    out: dict[str, tuple[int, int]] = {}
    for name, row in groups.items():
        if isinstance(row, dict) and isinstance(row.get("n"), int) and isinstance(row.get("right"), int):
            n, right = row["n"], row["right"]
            if 0 <= right <= n:
                out[str(name)] = (right, n)
    return out


def counts(group: str, path: Path = PRECISION_FILE) -> tuple[int, int] | None:
    """``(right, n)`` the calibration measured for an evidence group, or None when it never saw one."""
    return _table(path).get(group)


def real_counts(group: str, path: Path = PRECISION_FILE) -> tuple[int, int] | None:
    """``(right, n)`` of an evidence group's findings on real notes, judged by a reader who had not read the
    rules (``real`` in ``precision.json``), or None when no such finding was judged."""
    return _table(path, "real").get(group)


def _smoothed(found: tuple[int, int] | None) -> float:
    if found is None:
        return UNMEASURED
    right, n = found
    return (right + 1) / (n + 2)


def precision(group: str, path: Path = PRECISION_FILE) -> float:
    """The measured precision of an evidence group, smoothed: ``(right + 1) / (n + 2)`` (.50 unmeasured) — the
    lower of the labelled sets' and real notes' (a group never judged on real notes is unmeasured there: rules
    near-perfect on sets written for them were right 0 of 5 times in conflicts on fresh real notes)."""
    labelled = _smoothed(counts(group, path))
    if not _table(path, "real"):
        return labelled  # a table with no real notes' verdicts at all (an older one, a test's)
    return min(labelled, _smoothed(real_counts(group, path)))


def confident(score: float) -> bool:
    """Whether a finding with this score is shown by default."""
    return score >= CONFIDENT - 1e-9


def write_table(groups: dict[str, tuple[int, int]], sources: list[str], path: Path = PRECISION_FILE) -> None:
    """Write the calibration's counts (``group → (right, n)``), sorted, with the labelled sets they came from."""
    from engine.textio import atomic_write_text

    doc = {"about": "Measured by bench/review_eval.py --calibrate: per evidence group, findings made (n) and "
                    "right (right). Score = (right + 1) / (n + 2).",
           "sources": sources,
           "groups": {g: {"right": r, "n": n} for g, (r, n) in sorted(groups.items())}}
    old = _document(path)
    for key in ("real_about", "real"):  # the real notes' verdicts are a reader's, not the calibration's
        if key in old:
            doc[key] = old[key]
    atomic_write_text(path, json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    _document.cache_clear()
    _table.cache_clear()


def write_real(groups: dict[str, tuple[int, int]], about: str, path: Path = PRECISION_FILE) -> None:
    """Replace the real notes' verdict counts (``group → (right, n)``), keeping the calibration's."""
    from engine.textio import atomic_write_text

    doc = dict(_document(path))
    doc["real_about"] = about
    doc["real"] = {g: {"right": r, "n": n} for g, (r, n) in sorted(groups.items())}
    atomic_write_text(path, json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    _document.cache_clear()
    _table.cache_clear()
