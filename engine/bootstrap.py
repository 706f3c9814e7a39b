"""What OpenClaw injects at the start of a session: the bootstrap files and the part of each the agent receives.

OpenClaw 2026.9.6 puts the workspace's bootstrap files into every main session's system prompt, in this order:
``AGENTS.md``, ``SOUL.md``, ``IDENTITY.md``, ``USER.md``, ``BOOTSTRAP.md``, ``MEMORY.md`` (``dist/
workspace-bootstrap-policy-*.mjs``). Each is cut to ``agents.defaults.bootstrapMaxChars`` (20,000 characters;
``USER.md`` never more than 4,000) and all of them together to ``bootstrapTotalMaxChars`` (60,000); an entry of
``agents.list``/``agents.entries`` may override either for its agent (``dist/bootstrap-*.mjs``,
``resolveBootstrapCharLimit``). A file over its limit keeps its first 75% and last 25% of the room left after a
marker (``[...truncated, read MEMORY.md for full content...]``); the middle is what the agent never sees. When the
total runs short, a file is cut at the end (``clampToBudget``). ``AGENTS.md`` keeps a head, a policy digest and a
tail instead. A missing ``MEMORY.md``/``USER.md`` is skipped; another missing file costs its ``[MISSING] Expected
at: …`` line.

Lengths are JavaScript string lengths (UTF-16 code units), as OpenClaw counts them: an emoji is two. This module
reproduces that arithmetic exactly and reads OpenClaw's config (``$OPENCLAW_CONFIG_PATH``, else
``<state>/openclaw.json``; JSON5) read-only. Not modelled: files added by the ``bootstrap-extra-files`` hook, and
sub-agent, cron and group sessions (which receive fewer files).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.display import plural
from engine.markdown import HEADING, parse_blocks

DEFAULT_MAX_CHARS = 20_000
DEFAULT_TOTAL_MAX_CHARS = 60_000
USER_MAX_CHARS = 4_000
MIN_FILE_BUDGET_CHARS = 64
HEAD_RATIO = 0.75
TAIL_RATIO = 0.25
MIN_TRIMMED_CONTENT_CHARS = 16
BOOTSTRAP_FILES = ("AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md", "BOOTSTRAP.md", "MEMORY.md")
"""OpenClaw 2026.9.6's bootstrap files in prompt order."""
SKIPPED_WHEN_MISSING = frozenset({"MEMORY.md", "USER.md"})

_AGENTS_DIGEST_RATIO = 0.35
_AGENTS_HEAD_RATIO = 0.45
_AGENTS_TAIL_RATIO = 0.15
_AGENTS_DIGEST_MAX_LINE = 240
_AGENTS_CANDIDATE = re.compile(
    r"\b(?:AGENTS\.md|scoped|required|must|never|do not|before subtree|read scoped|owner|security|secret|credential|"
    r"test|validation|command|commit|push|github|pr)\b|(?:🔴|禁止|嚴禁|不得|絕不|絕對不|切勿|必須|務必|一律|紅線)",
    re.I,
)
_AGENTS_HIGH = re.compile(
    r"\b(?:AGENTS\.md|scoped|required|must|never|do not|before subtree|read scoped|security|secret|credential)\b|"
    r"(?:🔴|禁止|嚴禁|不得|絕不|絕對不|切勿)",
    re.I,
)
_LIST_OR_HEADING = re.compile(r"^(?:#{1,6}|\s*[-*+]|\s*\d+[.)])\s+\S")
_FENCE = re.compile(r"^\s*(?:`{3,}|~{3,})")
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029" \
    "\u202f\u205f\u3000\ufeff"
"""What JavaScript's ``trimEnd`` removes (``\\s``)."""


# ---------------------------------------------------------------------------------------------
# JavaScript strings: a str whose astral characters are written as two surrogate code points


def _js(text: str) -> str:
    """``text`` as UTF-16 code units, one code point each (so ``len`` and slices count as JavaScript does)."""
    if text.isascii() or all(ord(c) < 0x10000 for c in text):
        return text
    out = []
    for c in text:
        o = ord(c)
        if o < 0x10000:
            out.append(c)
        else:
            o -= 0x10000
            out.append(chr(0xD800 + (o >> 10)) + chr(0xDC00 + (o & 0x3FF)))
    return "".join(out)


def _high(c: str) -> bool:
    return 0xD800 <= ord(c) <= 0xDBFF


def _low(c: str) -> bool:
    return 0xDC00 <= ord(c) <= 0xDFFF


def _slice(s: str, start: int, end: int | None = None) -> str:
    """OpenClaw's ``sliceUtf16Safe``: a slice that leaves no half of a surrogate pair at either edge."""
    n = len(s)
    lo = max(n + start, 0) if start < 0 else min(start, n)
    hi = n if end is None else (max(n + end, 0) if end < 0 else min(end, n))
    if hi <= lo:
        return ""
    if 0 < lo < n and _low(s[lo]) and _high(s[lo - 1]):
        lo += 1
    if 0 < hi < n and _high(s[hi - 1]) and _low(s[hi]):
        hi -= 1
    return s[lo:hi]


def _truncate(s: str, limit: float) -> str:
    limit = max(0, int(limit))
    return s if len(s) <= limit else _slice(s, 0, limit)


def _clamp(content: str, budget: int) -> str:
    """OpenClaw's ``clampToBudget``: cut at the end with an ellipsis."""
    if budget <= 0:
        return ""
    if len(content) <= budget:
        return content
    if budget <= 3:
        return _truncate(content, budget)
    return _truncate(content, budget - 1) + "…"


# ---------------------------------------------------------------------------------------------
# Cutting one file as OpenClaw does


@dataclass(frozen=True)
class _Cut:
    content: str
    truncated: bool
    head: int  # code units kept from the start (all when not truncated)
    tail: int  # code units kept from the end


def _trim_agents(trimmed: str, max_chars: int) -> _Cut:
    head = int(max_chars * _AGENTS_HEAD_RATIO)
    tail = int(max_chars * _AGENTS_TAIL_RATIO)
    digest_budget = int(max_chars * _AGENTS_DIGEST_RATIO)
    candidates: list[tuple[str, bool]] = []
    if digest_budget > 0:
        last_prose: str | None = None
        for source in re.split(r"\r?\n", trimmed):
            line = re.sub(r"\s+", " ", source.strip())
            if len(line) > _AGENTS_DIGEST_MAX_LINE:
                line = _truncate(line, _AGENTS_DIGEST_MAX_LINE - 1) + "…"
            if not line:
                last_prose = None
                continue
            if _FENCE.match(line):
                last_prose = None
            elif _LIST_OR_HEADING.match(line) or _AGENTS_CANDIDATE.search(line):
                candidates.append((line if last_prose is None else f"{last_prose}\n{line}",
                                   bool(_AGENTS_HIGH.search(line))))
                last_prose = None
            else:
                last_prose = line

    def digest(budget: int) -> tuple[str, int]:
        if budget <= 0:
            return "", 0
        chosen: set[int] = set()
        used = 0
        for want_high in (True, False):
            for i, (text, high) in enumerate(candidates):
                if i in chosen or (want_high and not high):
                    continue
                sep = 1 if chosen else 0
                if used + sep + len(text) <= budget:
                    chosen.add(i)
                    used += sep + len(text)
        return "\n".join(t for i, (t, _) in enumerate(candidates) if i in chosen), len(candidates) - len(chosen)

    text, omitted = digest(digest_budget)

    def render() -> str:
        parts = [
            _slice(trimmed, 0, head),
            "[...truncated, read AGENTS.md for full content...]",
            "[Policy digest from AGENTS.md]" if text else "",
            text,
            f"[...{omitted} more policy lines omitted...]" if omitted > 0 else "",
            f"…(truncated AGENTS.md: kept {head}+policy {len(text)}+{tail} chars of {len(trimmed)})…",
            _slice(trimmed, -tail) if tail > 0 else "",
        ]
        return "\n".join(p for p in parts if p)

    rendered = render()
    while len(rendered) > max_chars and (tail > 0 or head > 1 or digest_budget > 0):
        overflow = len(rendered) - max_chars
        if tail > 0:
            tail = max(0, tail - overflow)
        elif head > 1:
            head = max(1, head - overflow)
        else:
            digest_budget = max(0, digest_budget - overflow)
            text, omitted = digest(digest_budget)
        rendered = render()
    return _Cut(_truncate(rendered, max_chars), True, head, tail)


def trim_content(content: str, name: str, max_chars: int) -> _Cut:
    """OpenClaw's ``trimBootstrapContent`` on JavaScript-length text (see :func:`_js`)."""
    trimmed = content.rstrip(_JS_SPACE)
    if len(trimmed) <= max_chars:
        return _Cut(trimmed, False, len(trimmed), 0)
    if name.lower() == "agents.md":
        return _trim_agents(trimmed, max_chars)
    total = len(trimmed)

    def full_marker(h: int, t: int) -> str:
        return "\n".join(("", f"[...truncated, read {name} for full content...]",
                          f"…(truncated {name}: kept {h}+{t} chars of {total})…", ""))

    def compact_marker(h: int, t: int) -> str:
        return f"[…truncated {h}+{t}/{total}]"

    def separators(h: int, t: int, marker: str) -> int:
        return (int(h > 0) + int(t > 0)) if "\n" in marker else 0

    probe = full_marker(0, 0)
    template = full_marker if max_chars - len(probe) - separators(1, 1, probe) >= MIN_TRIMMED_CONTENT_CHARS \
        else compact_marker
    head = tail = 0
    marker = template(head, tail)
    for _ in range(3):
        budget = max(0, max_chars - len(marker) - separators(head, tail, marker))
        nh, nt = int(budget * HEAD_RATIO), int(budget * TAIL_RATIO)
        nm = template(nh, nt)
        if nh == head and nt == tail and len(nm) == len(marker):
            break
        head, tail, marker = nh, nt, nm
    rendered = head + tail + len(marker) + separators(head, tail, marker)
    while rendered > max_chars and (tail > 0 or head > 0):
        overflow = rendered - max_chars
        if tail > 0:
            tail = max(0, tail - overflow)
        else:
            head = max(0, head - overflow)
        marker = template(head, tail)
        rendered = head + tail + len(marker) + separators(head, tail, marker)
    if head == 0 and tail == 0 and trimmed:
        single = template(1, 0)
        if 1 + len(single) + separators(1, 0, single) <= max_chars:
            head, marker = 1, single
    head_text = _slice(trimmed, 0, head)
    tail_text = _slice(trimmed, -tail) if tail > 0 else ""
    joiner = "\n" if "\n" in marker else ""
    out = joiner.join(p for p in (head_text, marker, tail_text) if p)
    return _Cut(_truncate(out, max_chars), True, len(head_text), len(tail_text))


# ---------------------------------------------------------------------------------------------
# The budget of a workspace


@dataclass(frozen=True)
class CutSection:
    """A heading of a file whose section the agent does not (fully) receive."""

    heading: str
    line: int  # 1-based
    whole: bool  # every line of the section is cut

    def to_dict(self) -> dict[str, Any]:
        return {"heading": self.heading, "line": self.line, "whole": self.whole}


@dataclass(frozen=True)
class BootstrapFile:
    """One bootstrap file and what of it a main session receives.

    Attributes:
        name: the file name (``MEMORY.md``).
        present: the file exists in the workspace.
        chars: its length as OpenClaw counts it (UTF-16 code units, trailing white space dropped).
        injected: the characters of it the session receives (the cut marker included).
        limit: the per-file limit that applies to it (``USER.md``: at most 4,000).
        causes: ``per-file-limit`` and/or ``total-limit`` when it is cut.
        cut_lines: the 1-based first and last line the session does not receive, when cut.
        cut_sections: the headings whose sections lose lines.
    """

    name: str
    present: bool
    chars: int
    injected: int
    limit: int
    causes: tuple[str, ...] = ()
    cut_lines: tuple[int, int] | None = None
    cut_sections: tuple[CutSection, ...] = ()

    @property
    def truncated(self) -> bool:
        return bool(self.causes)

    def describe(self) -> str:
        """One line for a person: ``MEMORY.md: 19,999 of 45,210 characters (cut: lines 120–410, 6 sections)``."""
        if not self.present:
            return f"{self.name}: missing"
        if not self.truncated:
            return f"{self.name}: all {plural(self.chars, 'character', grouped=True)}"
        why = " and ".join({"per-file-limit": f"over its {self.limit:,}-character limit",
                            "total-limit": "the total limit ran out"}[c] for c in self.causes)
        where = ""
        if self.cut_lines:
            a, b = self.cut_lines
            where = f"; lines {a}–{b} never reach the agent" if a != b else f"; line {a} never reaches the agent"
            whole = [s.heading for s in self.cut_sections if s.whole]
            if whole:
                shown = ", ".join(whole[:3]) + (f" and {len(whole) - 3} more" if len(whole) > 3 else "")
                where += f" (whole sections: {shown})"
        return f"{self.name}: {self.injected:,} of {plural(self.chars, 'character', grouped=True)} ({why}{where})"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "present": self.present, "chars": self.chars, "injected": self.injected,
                "limit": self.limit, "truncated": self.truncated, "causes": list(self.causes),
                "cut_lines": list(self.cut_lines) if self.cut_lines else None,
                "cut_sections": [s.to_dict() for s in self.cut_sections]}


@dataclass(frozen=True)
class BootstrapBudget:
    """What OpenClaw injects from a workspace at the start of a main session.

    Attributes:
        max_chars: the per-file limit in force (``bootstrapMaxChars``).
        total_max_chars: the limit on all files together (``bootstrapTotalMaxChars``).
        config_path: the OpenClaw config the limits came from, or None when OpenClaw's defaults apply.
        config_problem: why that config could not be read (the defaults apply then), else None.
        files: every bootstrap file in prompt order.
    """

    max_chars: int
    total_max_chars: int
    config_path: str | None
    config_problem: str | None
    files: tuple[BootstrapFile, ...] = field(default_factory=tuple)

    @property
    def injected(self) -> int:
        return sum(f.injected for f in self.files)

    @property
    def cut(self) -> tuple[BootstrapFile, ...]:
        return tuple(f for f in self.files if f.truncated)

    def file(self, name: str) -> BootstrapFile | None:
        return next((f for f in self.files if f.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        return {"max_chars": self.max_chars, "total_max_chars": self.total_max_chars, "injected": self.injected,
                "config_path": self.config_path, "config_problem": self.config_problem,
                "truncated": [f.name for f in self.cut], "files": [f.to_dict() for f in self.files]}


def openclaw_config_path() -> Path:
    """OpenClaw's config file: ``$OPENCLAW_CONFIG_PATH``, else ``<state>/openclaw.json``."""
    env = os.environ.get("OPENCLAW_CONFIG_PATH", "").strip()
    if env:
        return Path(env).expanduser()
    state = os.environ.get("OPENCLAW_STATE_DIR", "").strip()
    return (Path(state).expanduser() if state else Path.home() / ".openclaw") / "openclaw.json"


def read_openclaw_config(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """OpenClaw's config (JSON5), read-only: ``(config, None)``, ``(None, None)`` when there is none, or
    ``(None, why)`` when it cannot be read."""
    import json5  # a small pure-Python parser; imported here so the engine starts without it being read

    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"cannot read {path}: {exc.strerror or exc}"
    if len(raw) > 8 * 1024 * 1024:
        return None, f"{path} is over 8 MB: not read"
    try:
        data = json5.loads(raw.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError) as exc:
        return None, f"{path} is not valid JSON5: {str(exc).splitlines()[0][:200]}"
    if not isinstance(data, dict):
        return None, f"{path} does not hold an object"
    return data, None


def _agent_entry(cfg: Mapping[str, Any], agent: str) -> Mapping[str, Any] | None:
    agents = cfg.get("agents")
    if not isinstance(agents, Mapping):
        return None
    want = agent.strip().lower()
    entries = agents.get("entries")
    if isinstance(entries, Mapping):
        for key, entry in entries.items():
            if str(key).strip().lower() == want and isinstance(entry, Mapping):
                return entry
        return None
    listed = agents.get("list")
    if isinstance(listed, list):
        for entry in listed:
            if isinstance(entry, Mapping) and str(entry.get("id", "")).strip().lower() == want:
                return entry
    return None


def _limit(cfg: Mapping[str, Any] | None, agent: str, key: str, fallback: int) -> int:
    if not cfg:
        return fallback
    entry = _agent_entry(cfg, agent)
    raw = entry.get(key) if entry is not None else None
    if raw is None:
        agents = cfg.get("agents")
        defaults = agents.get("defaults") if isinstance(agents, Mapping) else None
        raw = defaults.get(key) if isinstance(defaults, Mapping) else None
    if isinstance(raw, (int, float)) and not isinstance(raw, bool) and raw == raw and raw not in (float("inf"),) \
            and raw > 0:
        return int(raw)
    return fallback


def limits(cfg: Mapping[str, Any] | None, agent: str = "main") -> tuple[int, int]:
    """``(bootstrapMaxChars, bootstrapTotalMaxChars)`` for ``agent`` (its entry first, then ``agents.defaults``)."""
    return (_limit(cfg, agent, "bootstrapMaxChars", DEFAULT_MAX_CHARS),
            _limit(cfg, agent, "bootstrapTotalMaxChars", DEFAULT_TOTAL_MAX_CHARS))


def _line_of(text: str, unit: int) -> int:
    """The 1-based line of ``text`` (a JavaScript-length string) that holds code unit ``unit``."""
    return text.count("\n", 0, max(0, unit)) + 1


def _cut_sections(text: str, first: int, last: int) -> tuple[CutSection, ...]:
    plain = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    blocks = parse_blocks(plain)
    heads = [b for b in blocks.leaves(HEADING)]
    n_lines = plain.count("\n") + 1
    out = []
    for i, h in enumerate(heads):
        start = h.start + 1
        end = next((o.start for o in heads[i + 1:] if o.level <= h.level), n_lines)  # its last line, 1-based
        if end < first or start > last:
            continue
        out.append(CutSection(h.text, start, start >= first and end <= last))
    return tuple(out)


def read_bootstrap_file(path: Path, unreadable: str | None = "[UNREADABLE]") -> str | None:
    """A bootstrap file as OpenClaw reads it: None when missing, ``unreadable`` when it cannot be read."""
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    except OSError:
        return unreadable


def bootstrap_budget(workspace: Path, agent: str = "main", config_path: Path | None = None) -> BootstrapBudget:
    """What a main session of ``agent`` receives from ``workspace``'s bootstrap files (OpenClaw 2026.9.6).

    Args:
        workspace: the agent's workspace folder.
        agent: the agent id whose limits apply.
        config_path: OpenClaw's config file (default :func:`openclaw_config_path`).
    """
    path = config_path or openclaw_config_path()
    cfg, problem = read_openclaw_config(path)
    max_chars, total_max = limits(cfg, agent)
    files = budget_for({name: read_bootstrap_file(workspace / name) for name in BOOTSTRAP_FILES}, max_chars, total_max,
                       workspace)
    return BootstrapBudget(max_chars, total_max, str(path) if cfg is not None else None, problem, files)


def budget_for(contents: Mapping[str, str | None], max_chars: int, total_max: int,
               workspace: Path | None = None) -> tuple[BootstrapFile, ...]:
    """The bootstrap files of ``contents`` (name → text, None when missing) as OpenClaw 2026.9.6 injects them."""
    return tuple(f for f, _ in injected_texts(contents, max_chars, total_max, workspace))


def injected_texts(contents: Mapping[str, str | None], max_chars: int, total_max: int,
                   workspace: Path | None = None) -> list[tuple[BootstrapFile, str | None]]:
    """Each bootstrap file with the text a session receives of it (None when it receives nothing)."""
    remaining = max(1, total_max)
    out: list[tuple[BootstrapFile, str | None]] = []
    names: Sequence[str] = [n for n in BOOTSTRAP_FILES if n in contents]
    stopped = False
    for name in names:
        limit = min(max_chars, USER_MAX_CHARS) if name.lower() == "user.md" else max_chars
        raw = contents[name]
        if raw is None:
            if name in SKIPPED_WHEN_MISSING:
                continue
            missing = None
            if not stopped and remaining > 0:
                where = str(workspace / name) if workspace is not None else name
                missing = _clamp(_js(f"[MISSING] Expected at: {where}"), remaining) or None
                remaining = max(0, remaining - len(missing or ""))
            out.append((BootstrapFile(name, False, 0, len(missing or ""), limit), missing))
            continue
        text = _js(raw)
        chars = len(text.rstrip(_JS_SPACE))
        if stopped or remaining <= 0 or remaining < MIN_FILE_BUDGET_CHARS:
            stopped = True
            out.append((BootstrapFile(name, True, chars, 0, limit, ("total-limit",) if chars else (),
                                      (1, _line_of(text, chars)) if chars else None,
                                      _cut_sections(text, 1, _line_of(text, chars)) if chars else ()), None))
            continue
        available = remaining
        file_max = max(1, min(limit, remaining))
        cut = trim_content(text, name, file_max)
        kept = _clamp(cut.content, remaining)
        remaining = max(0, remaining - len(kept))
        causes: list[str] = []
        head, tail = cut.head, cut.tail
        if cut.truncated or len(kept) < len(cut.content):
            if chars > limit:
                causes.append("per-file-limit")
            if available < limit and chars > available:
                causes.append("total-limit")
            if not causes:
                causes.append("total-limit")
            if len(kept) < len(cut.content):  # the total cut the end off what was left
                head, tail = min(head, max(0, len(kept) - 1)), 0
        cut_lines = None
        sections: tuple[CutSection, ...] = ()
        if causes:
            first, last = _line_of(text, head), _line_of(text, chars - tail - 1)
            if head > 0 and text[head - 1] == "\n":
                first = _line_of(text, head)
            cut_lines = (first, max(first, last))
            sections = _cut_sections(text, *cut_lines)
        out.append((BootstrapFile(name, True, chars, len(kept), limit, tuple(causes), cut_lines, sections),
                    kept or None))
    return out
