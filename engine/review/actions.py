"""The review's writes: promote, supersede, delete a copy, merge, dismiss and undo — checked, atomic, journalled."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING

from engine.display import plural
from engine.errors import MemdeckError
from engine.markdown import HEADING, parse_blocks
from engine.review.model import DismissStore, Finding, ReviewItem
from engine.review.undo import FileChange, JournalEntry, ReviewJournal
from engine.textio import DiskStamp, decode_bytes, encode_edit, stamp_bytes

if TYPE_CHECKING:
    from engine.memory.files import MemoryFiles
    from engine.review.audit import Lost

PROMOTE_TARGETS = ("MEMORY.md", "USER.md")
"""Where a statement can be promoted: the files OpenClaw loads first."""

_SUGGESTED_TARGET = re.compile(r"\bto (MEMORY\.md|USER\.md)(?: \u00a7 (.+?))?\s*$")

_MARKER = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_SUPERSEDED = re.compile(r"\(superseded \d{4}-\d{2}-\d{2}")


class ReviewActionError(MemdeckError):
    """A review action was refused; nothing was written."""


class StatementChanged(ReviewActionError):
    """A statement the finding cites is no longer in its file as the review saw it (edited, moved away, deleted)."""

    def __init__(self, item: ReviewItem) -> None:
        super().__init__(f"{item.citation} no longer says \u201c{_short(item.text)}\u201d (it changed since the "
                         "review); nothing was written — review again")
        self.item = item


class ReviewWriteConflict(ReviewActionError):
    """A file changed on disk while the action wrote it, or since the action an undo would revert."""


class NothingToUndo(ReviewActionError):
    """No review action is recorded."""


@dataclass(frozen=True)
class ReviewAction:
    """A review action that happened: what it did (``summary``), the files written, and what to know.

    ``line``: the line written (promote, supersede, merge); ``warnings``: e.g. "not searchable yet".
    """

    action: str
    summary: str
    files: tuple[str, ...] = ()
    line: str | None = None
    finding_id: str = ""
    warnings: tuple[str, ...] = ()


# ---------------------------------------------------------------------------------------------
# Reading a file as lines, exactly

@dataclass
class _File:
    """A memory file read for an edit: its text as the editor and the index read it (:func:`decode_bytes`: any
    encoding, lines ended by ``\n``), its lines with their endings, and its exact bytes. The save writes only the
    lines an action changed, in the file's encoding and line endings (:func:`encode_edit`)."""

    rel: str
    stamp: DiskStamp | None
    text: str | None  # None: the file does not exist
    lines: list[str] = field(default_factory=list)
    edits: list[tuple[int, int, list[str]]] = field(default_factory=list)  # (start, end, replacement), 0-based
    data: bytes | None = None  # the bytes read (None: the file does not exist)

    @property
    def newline(self) -> str:
        return "\n"  # in the text; the save writes the file's own ending

    def new_text(self) -> str:
        lines = list(self.lines)
        for start, end, replacement in sorted(self.edits, key=lambda e: (e[0], e[1]), reverse=True):
            lines[start:end] = replacement
        return "".join(lines)

    def add_edit(self, start: int, end: int, replacement: list[str]) -> None:
        for other_start, other_end, _ in self.edits:
            if (start < other_end and other_start < end) or (start == end == other_start == other_end):
                raise ReviewActionError(f"two statements of this finding are the same lines of {self.rel}; "
                                        "nothing was written")
        self.edits.append((start, end, replacement))


def _load(files: MemoryFiles, rel: str) -> _File:
    """Read a memory file with the editor's decode (UTF-8, UTF-16 or UTF-32; LF, CRLF or CR lines), refusing a file
    whose edited lines would lose bytes: undecodable ones or NUL (the editor opens such a file read-only)."""
    rel, path = files.resolve(rel)
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            data = fh.read()
    except FileNotFoundError:
        return _File(rel, None, None)
    decoded = decode_bytes(data)
    if decoded.binary or decoded.nul:
        raise ReviewActionError(f"{rel} looks like a binary file (it has NUL bytes); the review does not edit it")
    if decoded.errors:
        raise ReviewActionError(f"{rel} is not valid {decoded.format.codec_name} "
                                f"({plural(decoded.errors, 'byte')} cannot be read); the review does not edit it "
                                "(the editor opens it read-only)")
    return _File(rel, stamp_bytes(data, st), decoded.text, _split_lines(decoded.text), data=data)


def _split_lines(text: str) -> list[str]:
    """Lines with their endings (decoded text: every line ends with ``\\n``, the indexer's lines)."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _body(line: str) -> str:
    """A line without its ending."""
    return line.rstrip("\r\n")


def _ending(line: str) -> str:
    return line[len(_body(line)):]


def _norm(text: str) -> str:
    """A statement compared loosely: list markers, a BOM and runs of whitespace do not count."""
    return " ".join(" ".join(_MARKER.sub("", line.replace("\ufeff", "")).split())
                    for line in text.split("\n")).strip()


def _short(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def statement_text(text: str) -> str:
    """An item's statement as one line: list markers dropped, lines joined by a space."""
    return " ".join(_MARKER.sub("", line).strip() for line in text.split("\n") if line.strip()).strip()


def _locate(file: _File, item: ReviewItem, taken: Iterable[tuple[int, int]] = ()) -> tuple[int, int]:
    """Where ``item``'s lines are now: the cited lines if they still say it, else the nearest block that does.

    Returns 0-based ``(start, end)`` (end exclusive). Blocks in ``taken`` (other items of the same finding) are
    skipped, so two identical lines are never taken for one.

    Raises:
        StatementChanged: nothing in the file says it any more.
    """
    want = _norm(item.text)
    count = max(1, item.end_line - item.start_line + 1)
    busy = set(taken)
    if not want or file.text is None:
        raise StatementChanged(item)
    cited = item.start_line - 1
    best: tuple[int, int] | None = None
    for start in range(0, max(0, len(file.lines) - count + 1)):
        block = (start, start + count)
        if block in busy:
            continue
        if _norm("".join(file.lines[start:start + count]).replace("\r", "")) == want and (
                best is None or abs(start - cited) < abs(best[0] - cited)):
            best = block
            if start == cited:
                break
    if best is None:
        raise StatementChanged(item)
    return best


def _cite(rel: str, block: tuple[int, int]) -> str:
    start, end = block[0] + 1, block[1]
    return f"{rel}#L{start}" if start == end else f"{rel}#L{start}-L{end}"


# ---------------------------------------------------------------------------------------------
# Sections of MEMORY.md / USER.md

def _headings(lines: Sequence[str]) -> list[tuple[int, int, str]]:
    """``(line index, level, title)`` of each top-level ``#`` heading, by the one block model (:mod:`engine.markdown`:
    a ``#`` line inside any code block, however fenced, is no heading)."""
    blocks = parse_blocks("\n".join(_body(line).replace("\ufeff", "") for line in lines))
    return [(b.start, b.level, b.text) for b in blocks.leaves(HEADING) if b.depth == 0 and not b.setext]


def list_sections(files: MemoryFiles, target: str = "MEMORY.md") -> list[str]:
    """The ``## `` sections of a promotion target, in file order (empty when the file does not exist).

    Raises:
        ReviewActionError: ``target`` is not MEMORY.md or USER.md, or cannot be read as text.
    """
    file = _load(files, _target(target))
    return [title for _, level, title in _headings(file.lines) if level == 2 and title]


def _target(target: str) -> str:
    if target not in PROMOTE_TARGETS:
        raise ReviewActionError(f"statements are promoted into {' or '.join(PROMOTE_TARGETS)}, not {target!r}")
    return target


def _ensure_newline(file: _File) -> None:
    """The file's last line ends with a newline (so a line can follow it)."""
    if file.lines and not _ending(file.lines[-1]):
        file.lines[-1] += file.newline


def _insert_into_section(file: _File, section: str | None, line: str) -> int:
    """Add ``line`` at the end of ``## section`` (a new section at the end when there is none; the end of the file
    when ``section`` is empty); returns the new line's 0-based index."""
    nl = file.newline
    wanted = (section or "").strip()
    headings = _headings(file.lines)
    if wanted:
        found = [h for h in headings if h[1] == 2 and h[2].casefold() == wanted.casefold()]
        if found:
            at = found[0][0]
            after = [h for h in headings if h[0] > at and h[1] <= 2]
            end = after[0][0] if after else len(file.lines)
            last = max([i for i in range(at + 1, end) if file.lines[i].strip()], default=at)
            if last == len(file.lines) - 1:
                _ensure_newline(file)
            file.lines.insert(last + 1, line + nl)
            return last + 1
    _ensure_newline(file)
    while file.lines and not file.lines[-1].strip():  # end of the file: after its last text, one blank line
        file.lines.pop()
    if wanted:
        if file.lines:
            file.lines.append(nl)
        file.lines.append(f"## {wanted}{nl}")
    elif file.lines and _HEADING.match(_body(file.lines[-1]).replace("\ufeff", "")) and len(headings) == 1:
        file.lines.append(nl)  # a file that is only its title: the line goes below it, after a blank line
    file.lines.append(line + nl)
    return len(file.lines) - 1


# ---------------------------------------------------------------------------------------------
# Writing: every file checked and written atomically, all or none; then journalled and reindexed

ReindexFn = Callable[[str], object]


@dataclass
class Context:
    """What an action needs: the memory files, the undo journal, the dismissals, and how to reindex a file."""

    files: MemoryFiles
    journal: ReviewJournal
    dismissed: DismissStore
    reindex: ReindexFn | None = None

    @classmethod
    def of(cls, files: MemoryFiles, reindex: ReindexFn | None = None) -> Context:
        """The context for a workspace: journal and dismissals in its config's data dir."""
        config = files.config
        return cls(files, ReviewJournal(config.home, config.workspace), DismissStore(config.home, config.workspace),
                   reindex)


def review_today(files: MemoryFiles) -> date:
    """Today in the user's zone (``[memory] timezone``), unless ``MEMDECK_TODAY`` pins it.

    Raises:
        ReviewActionError: ``MEMDECK_TODAY`` is not a date.
    """
    from engine.clock import ClockError

    try:
        return files.today()
    except ClockError as exc:
        raise ReviewActionError(str(exc)) from None


def _commit(ctx: Context, changed: Sequence[_File], action: str, summary: str, finding_id: str,
            line: str | None = None) -> ReviewAction:
    """Write every changed file (each unless it changed since it was read; all or none), record the undo, reindex."""
    from engine.memory.saving import SaveConflict

    done: list[tuple[_File, DiskStamp]] = []
    exact: dict[str, bytes] = {}
    for file in changed:
        text = file.new_text()
        if text == file.text:
            continue
        if file.data is not None and file.text is not None \
                and encode_edit(encode_edit(file.data, text), file.text) != file.data:
            # Writing the text before back over the new bytes would not give the old bytes (a line deleted from a
            # file of mixed endings comes back with the file's ending): undo puts the exact bytes back.
            exact[file.rel] = file.data
        try:
            result = ctx.files.save_note(file.rel, text, file.stamp)
        except (SaveConflict, OSError) as exc:
            _roll_back(ctx, done)
            if isinstance(exc, SaveConflict):
                raise ReviewWriteConflict(f"{file.rel} changed on disk while the review wrote it; nothing was "
                                          "written — review again") from None
            raise
        done.append((file, result.stamp))
    warnings: list[str] = []
    entry = JournalEntry(action, summary, _now_iso(ctx.files), finding_id,
                         tuple(FileChange(f.rel, f.text, stamp.digest, exact.get(f.rel)) for f, stamp in done))
    try:
        ctx.journal.push(entry)
    except OSError as exc:
        warnings.append(f"could not record this for undo ({exc})")
    rels = tuple(f.rel for f, _ in done)
    warnings.extend(_reindex(ctx, rels))
    return ReviewAction(action, summary, rels, line, finding_id, tuple(warnings))


def _roll_back(ctx: Context, done: Sequence[tuple[_File, DiskStamp]]) -> None:
    """Put back the files an action already wrote when a later one of its files could not be (best effort)."""
    for file, stamp in reversed(done):
        with contextlib.suppress(MemdeckError, OSError):
            if file.text is None:
                ctx.files.resolve(file.rel)[1].unlink()  # the action created it a moment ago
            else:
                ctx.files.save_note(file.rel, file.data if file.data is not None else file.text, stamp)


def _reindex(ctx: Context, rels: Iterable[str]) -> list[str]:
    warnings: list[str] = []
    if ctx.reindex is None:
        return warnings
    for rel in rels:
        try:
            ctx.reindex(rel)
        except (MemdeckError, OSError) as exc:  # the write stands; the next sync makes it searchable
            warnings.append(f"{rel} written, but not searchable yet: {exc}")
    return warnings


def _now_iso(files: MemoryFiles) -> str:
    return files.now().isoformat(timespec="seconds")


def _item(finding: Finding, index: int) -> ReviewItem:
    if not 0 <= index < len(finding.items):
        raise ReviewActionError(f"this finding has {plural(len(finding.items), 'statement')}; there is no #{index + 1}")
    return finding.items[index]


class _Files:
    """The files one action reads, each once."""

    def __init__(self, files: MemoryFiles) -> None:
        self.files = files
        self.by_rel: dict[str, _File] = {}

    def get(self, rel: str) -> _File:
        key = self.files.resolve(rel)[0]
        if key not in self.by_rel:
            self.by_rel[key] = _load(self.files, key)
        return self.by_rel[key]

    def locate(self, item: ReviewItem, taken: dict[str, list[tuple[int, int]]]) -> tuple[_File, tuple[int, int]]:
        file = self.get(item.path)
        block = _locate(file, item, taken.get(file.rel, ()))
        taken.setdefault(file.rel, []).append(block)
        return file, block

    def changed(self) -> list[_File]:
        return [f for f in self.by_rel.values() if f.edits or f.text is None or f.new_text() != f.text]


# ---------------------------------------------------------------------------------------------
# The actions

def promote(ctx: Context, item: ReviewItem, section: str | None, target: str = "MEMORY.md",
            text: str | None = None, finding_id: str = "") -> ReviewAction:
    """Add ``item``'s statement to ``target`` under ``## section`` as ``- <statement> (from <citation>)``.

    The section is made at the end when missing (``section`` empty: the end of the file); the file is made when
    missing. ``text`` replaces the statement's wording (one line). The source line stays as it is.

    Raises:
        StatementChanged: the source no longer says it. ReviewActionError: the target already says it, the
        statement is empty or not one line, or the target is not MEMORY.md/USER.md.
    """
    target = _target(target)
    opened = _Files(ctx.files)
    source, block = opened.locate(item, {})
    if source.rel == target:
        raise ReviewActionError(f"{item.citation} is already in {target}")
    statement = " ".join((text if text is not None else statement_text(item.text)).split())
    if not statement:
        raise ReviewActionError("the statement to promote is empty")
    dest = opened.get(target)
    want = _norm(statement)
    for i, existing in enumerate(dest.lines):
        said = _norm(re.sub(r"\s*\(from [^()]*#L\d+(?:-L\d+)?\)\s*$", "", _body(existing)))
        if said == want:
            raise ReviewActionError(f"{target} already says that ({target}#L{i + 1}); nothing was written")
    line = f"- {statement} (from {_cite(source.rel, block)})"
    if dest.text is None:
        dest.lines = [f"# {target}\n", "\n"]
    at = _insert_into_section(dest, section, line)
    where = f" under \u201c{section.strip()}\u201d" if section and section.strip() else ""
    return _commit(ctx, [dest], "promote", f"promoted {_cite(source.rel, block)} to {target}#L{at + 1}{where}",
                   finding_id, line)


def supersede(ctx: Context, finding: Finding, old: int | None = None, current: int | None = None,
              today: date | None = None) -> ReviewAction:
    """Mark statement ``old`` (default: every one but the current) superseded by the current one: its line gets a
    trailing `` (superseded YYYY-MM-DD → <current's citation>)``.

    The current statement is ``current``, else the finding's ``current`` unless that is ``old``, else the newest
    other statement (by note date, then the order of the finding).

    Raises:
        StatementChanged: a statement is no longer in its file. ReviewActionError: a statement is marked already,
        or the finding has only one statement.
    """
    if len(finding.items) < 2:
        raise ReviewActionError("a statement is superseded by another one: this finding has only one")
    if old is not None:
        _item(finding, old)
    if current is None:
        current = finding.current if finding.current is not None and finding.current != old else None
        if current is None:
            others = [i for i in range(len(finding.items)) if i != old]
            current = max(others, key=lambda i: (finding.items[i].day or "", i))
    _item(finding, current)
    olds = [old] if old is not None else [i for i in range(len(finding.items)) if i != current]
    if current in olds:
        raise ReviewActionError("a statement cannot supersede itself")
    day = today or review_today(ctx.files)
    opened = _Files(ctx.files)
    taken: dict[str, list[tuple[int, int]]] = {}
    cur_file, cur_block = opened.locate(finding.items[current], taken)
    pointer = _cite(cur_file.rel, cur_block)
    lines: list[str] = []
    marked: list[str] = []
    for index in olds:
        file, (start, end) = opened.locate(finding.items[index], taken)
        if any(_SUPERSEDED.search(file.lines[i]) for i in range(start, end)):
            raise ReviewActionError(f"{_cite(file.rel, (start, end))} is marked superseded already")
        last = file.lines[end - 1]
        new_last = f"{_body(last).rstrip()} (superseded {day.isoformat()} \u2192 {pointer}){_ending(last)}"
        file.add_edit(end - 1, end, [new_last])
        lines.append(_body(new_last))
        marked.append(_cite(file.rel, (start, end)))
    return _commit(ctx, opened.changed(), "supersede", f"marked {', '.join(marked)} superseded by {pointer}",
                   finding.id, lines[0] if len(lines) == 1 else None)


def delete_copy(ctx: Context, finding: Finding, index: int) -> ReviewAction:
    """Delete statement ``index``'s lines (one copy of a duplicate); another statement must still say it, every
    word and value of it (``finding.deletable``: what the review found the kept statement to hold).

    Raises:
        StatementChanged: a statement is no longer in its file. ReviewActionError: the finding has one statement,
        or the copy says something the kept statement does not.
    """
    item = _item(finding, index)
    if len(finding.items) < 2:
        raise ReviewActionError("only one statement says this: deleting it would lose it")
    if index not in finding.deletable:
        raise ReviewActionError(
            f"{item.citation} says something no other statement of this finding holds (a word or a value such as "
            "a date): deleting it would lose that; merge the statements instead (review apply --action merge); "
            "nothing was written")
    opened = _Files(ctx.files)
    taken: dict[str, list[tuple[int, int]]] = {}
    file, block = opened.locate(item, taken)
    kept = 0
    for i, other in enumerate(finding.items):
        if i != index:
            with contextlib.suppress(StatementChanged):
                opened.locate(other, taken)
                kept += 1
    if not kept:
        raise ReviewActionError(f"no other statement of this finding is still there: deleting {item.citation} "
                                "would lose it; nothing was written")
    file.add_edit(block[0], block[1], [])
    return _commit(ctx, [file], "delete", f"deleted {_cite(file.rel, block)}", finding.id)


def promote_target(finding: Finding) -> tuple[str, str | None]:
    """Where the review suggests promoting to: ``(file, section)`` from its suggestion ("promote … to MEMORY.md §
    People"), else ``("MEMORY.md", None)``."""
    m = _SUGGESTED_TARGET.search(finding.suggestion.strip())
    if m is None:
        return "MEMORY.md", None
    return m.group(1), (m.group(2) or "").strip() or None


def merge_text(finding: Finding) -> str:
    """The merged statement to start from: the finding's suggested wording when it has one, else its longest
    statement (list markers dropped)."""
    suggestion = finding.suggestion.strip()
    if suggestion.lower().startswith(("merged:", "merge:", "merge into:", "merge as:")):
        return statement_text(suggestion.split(":", 1)[1].strip().strip("\u201c\u201d\"'"))
    return max((statement_text(i.text) for i in finding.items), key=len, default="")


def merge_keeps_all(finding: Finding) -> bool:
    """Whether :func:`merge_text`'s default (the longest statement) holds every content word and value of the
    others: merging into it then loses nothing. When it does not, only a wording the person writes can keep
    both's details."""
    from engine.review.detect import holds
    from engine.review.statements import clean_text
    from engine.review.text import features

    texts = [clean_text(statement_text(i.text)) for i in finding.items]
    longest = max(texts, key=len, default="")
    kept = features(longest)
    return all(holds(kept, features(t)) for t in texts if t is not longest)


def merge(ctx: Context, finding: Finding, text: str, indices: Sequence[int] | None = None) -> ReviewAction:
    """Merge statements (default: all, in the finding's order) into one line: the first one's lines become ``text``
    (keeping its list marker), the others are deleted.

    Raises:
        StatementChanged: a statement is no longer in its file. ReviewActionError: fewer than two statements, the
        text is empty or more than one line.
    """
    chosen = list(indices) if indices is not None else list(range(len(finding.items)))
    if len(set(chosen)) < 2:
        raise ReviewActionError("a merge needs two statements or more")
    for index in chosen:
        _item(finding, index)
    merged = text.strip()
    if not merged or "\n" in merged or "\r" in merged:
        raise ReviewActionError("the merged statement must be one line of text")
    opened = _Files(ctx.files)
    taken: dict[str, list[tuple[int, int]]] = {}
    blocks = [opened.locate(finding.items[i], taken) for i in dict.fromkeys(chosen)]
    first_file, (start, end) = blocks[0]
    first_line = first_file.lines[start]
    bare = first_line.replace("\ufeff", "")
    marker = _MARKER.match(bare) or re.match(r"[ \t]*", bare)  # (an unmarked line keeps its indent: its list's)
    prefix = ("\ufeff" if first_line.startswith("\ufeff") else "") + (marker.group(0) if marker else "")
    line = merged if _MARKER.match(merged) else prefix + merged
    first_file.add_edit(start, end, [line + _ending(first_file.lines[end - 1]) or first_file.newline])
    for file, (s, e) in blocks[1:]:
        file.add_edit(s, e, [])
    cites = [_cite(f.rel, b) for f, b in blocks]
    return _commit(ctx, opened.changed(), "merge", f"merged {', '.join(cites[1:])} into {cites[0]}", finding.id,
                   line.replace("\ufeff", ""))


def dismiss(ctx: Context, finding: Finding) -> ReviewAction:
    """Remember that the user dismissed ``finding`` (it is not shown again while its statements stay the same).

    Raises:
        OSError: the dismissals cannot be written.
    """
    ctx.dismissed.dismiss(finding.id, _now_iso(ctx.files))
    summary = f"dismissed the {finding.kind} finding {finding.id}"
    warnings: tuple[str, ...] = ()
    try:
        ctx.journal.push(JournalEntry("dismiss", summary, _now_iso(ctx.files), finding.id))
    except OSError as exc:
        warnings = (f"could not record this for undo ({exc})",)
    return ReviewAction("dismiss", summary, (), None, finding.id, warnings)


RECOVER_TARGETS = ("daily", *PROMOTE_TARGETS)
"""Where the audit's statements are recovered to: the daily note of the day each was said, or MEMORY.md/USER.md."""

_BACK_REFERENCE = re.compile(r"\s*\((?:from )?session [0-9a-f]{4,}[ ,]+line \d+\)\s*$")


def move_section(ctx: Context, finding: Finding, today: date | None = None) -> ReviewAction:
    """Move a budget finding's section out of MEMORY.md/USER.md into its note (``memory/<slug>.md``, made with the
    heading as its title, or appended to verbatim when it exists), leaving the heading and
    ``- Moved to <note> on <day> …`` behind: both files in one atomic action, undone by :func:`undo`.

    Raises:
        StatementChanged: the section is no longer in the file as the review saw it. ReviewActionError: not a
        budget finding, or its note is not a memory/*.md file.
    """
    from engine.review.budget import pointer_line

    if finding.kind != "budget" or not finding.items:
        raise ReviewActionError(f"a {finding.kind} finding has no section to move")
    target = finding.target
    if not (target.startswith("memory/") and target.endswith(".md")) or ".." in target.split("/"):
        raise ReviewActionError(f"a section moves to a memory/*.md note, not {target!r}")
    item = finding.items[0]
    day = (today or review_today(ctx.files)).isoformat()
    opened = _Files(ctx.files)
    source = opened.get(item.path)
    want = item.text.split("\n")
    bodies = [_body(line) for line in source.lines]
    start = item.start_line - 1
    if bodies[start:start + len(want)] != want:
        start = next((i for i in range(len(bodies)) if bodies[i:i + len(want)] == want), -1)
        if start < 0:
            raise StatementChanged(item)
    end = start + len(want)
    section = source.lines[start:end]
    pointer = pointer_line(target, day)
    source.add_edit(start, end, [section[0] if len(section) > 1 else section[0].rstrip("\r\n") + "\n",
                                 pointer + (_ending(section[-1]) if len(section) > 1 else "\n")])
    dest = opened.get(target)
    moved = [line if line.endswith(("\n", "\r")) else line + "\n" for line in section]
    heading = _HEADING.match(want[0])
    title = heading.group(2) if heading else want[0].strip()
    if dest.text is None:
        dest.lines = [f"# {title}\n", "\n", f"Moved from {source.rel} on {day}.\n", *(
            ["\n", *moved[1:]] if len(moved) > 1 else [])]
    else:
        _ensure_newline(dest)
        while dest.lines and not dest.lines[-1].strip():
            dest.lines.pop()
        dest.lines.extend(["\n"] if dest.lines else [])
        dest.lines.extend(moved)
    summary = (f"moved \u201c{want[0].strip()}\u201d ({plural(len(want), 'line')}) from {source.rel} to "
               f"{dest.rel}")
    return _commit(ctx, [source, dest], "move", summary, finding.id, pointer)


def _said(line: str) -> str:
    """A memory line's statement without its trailing back-reference (a flush's or a recovery's)."""
    return _norm(_BACK_REFERENCE.sub("", _body(line)))


def recover(ctx: Context, statements: Sequence[Lost], target: str = "daily", section: str | None = None,
            today: date | None = None) -> ReviewAction:
    """Append the audit's statements to memory in one atomic, undoable action: ``daily`` puts each in the daily
    note of the day it was said (one ``## Recovered from sessions (audit YYYY-MM-DD)`` block per note, the note
    made when missing; a statement with no day goes to today's), ``MEMORY.md`` (or ``USER.md``) one statement
    under ``## section`` (made when missing). Each line is ``- <statement> (from session <id8> line <n>)``; a
    statement its note already says is skipped.

    Raises:
        ReviewActionError: no statement, an unknown target, more than one statement for MEMORY.md, or every
        statement already there (nothing written). ReviewWriteConflict: a file changed while it was written.
    """
    from engine.memory.names import daily_heading, daily_rel

    if target not in RECOVER_TARGETS:
        raise ReviewActionError(f"statements are recovered to {' or '.join(RECOVER_TARGETS)}, not {target!r}")
    picked = [s for s in statements if " ".join(s.text.split())]
    if not picked:
        raise ReviewActionError("no statement to recover")
    day = today or review_today(ctx.files)
    opened = _Files(ctx.files)
    if target in PROMOTE_TARGETS:
        if len(picked) != 1:
            raise ReviewActionError(f"one statement at a time goes to {target}, not {len(picked)}")
        [st] = picked
        dest = opened.get(target)
        if any(_said(existing) == _norm(st.text) for existing in dest.lines):
            raise ReviewActionError(f"{target} already says that; nothing was written")
        line = f"- {' '.join(st.text.split())} {st.back_reference}"
        if dest.text is None:
            dest.lines = [f"# {target}\n", "\n"]
        at = _insert_into_section(dest, section, line)
        where = f" under \u201c{section.strip()}\u201d" if section and section.strip() else ""
        return _commit(ctx, [dest], "recover", f"recovered {st.citation} to {target}#L{at + 1}{where}", "", line)
    by_day: dict[date, list[Lost]] = {}
    for st in picked:
        by_day.setdefault(st.day or day, []).append(st)
    written: list[str] = []
    lines: list[str] = []
    skipped = 0
    for when in sorted(by_day):
        dest = opened.get(daily_rel(when))
        have = {_said(existing) for existing in dest.lines}
        new = []
        for st in by_day[when]:
            if _norm(st.text) in have:
                skipped += 1
                continue
            have.add(_norm(st.text))
            new.append(f"- {' '.join(st.text.split())} {st.back_reference}")
        if not new:
            continue
        if dest.text is None:
            dest.lines = [daily_heading(when) + "\n"]
        _ensure_newline(dest)
        while dest.lines and not dest.lines[-1].strip():
            dest.lines.pop()
        block = [f"## Recovered from sessions (audit {day.isoformat()})", "", *new]
        dest.lines.extend(["\n"] if dest.lines else [])
        dest.lines.extend(f"{x}\n" for x in block)
        written.append(f"{plural(len(new), 'statement')} to {dest.rel}")
        lines.extend(new)
    if not written:
        raise ReviewActionError("memory already says every picked statement; nothing was written")
    already = f" ({skipped} already there)" if skipped else ""
    return _commit(ctx, opened.changed(), "recover", f"recovered {', '.join(written)}{already}", "",
                   lines[0] if len(lines) == 1 else None)


def last_action(ctx: Context) -> str | None:
    """What an undo would undo (its summary), or None."""
    entry = ctx.journal.last()
    return entry.summary if entry is not None else None


def undo(ctx: Context) -> ReviewAction:
    """Undo the last review action: its files get their text before back, byte for byte — encoding, BOM and line
    endings too (a file the action made is moved to memdeck's trash); a dismissal is forgotten.

    Raises:
        NothingToUndo: no review action is recorded.
        ReviewWriteConflict: one of its files changed since (nothing is undone: edit it by hand).
    """
    entry = ctx.journal.last()
    if entry is None:
        raise NothingToUndo("nothing to undo: no review action is recorded")
    if entry.action == "dismiss":
        ctx.dismissed.undismiss(entry.finding_id)
        ctx.journal.pop(entry)
        return ReviewAction("undo", f"undid: {entry.summary}", (), None, entry.finding_id)
    stamps: list[tuple[FileChange, DiskStamp | None]] = []
    for change in entry.files:
        rel, path = ctx.files.resolve(change.rel)
        try:
            with open(path, "rb") as fh:
                st = os.fstat(fh.fileno())
                data = fh.read()
        except FileNotFoundError:
            data = None
        if data is None or hashlib.sha256(data).hexdigest() != change.after:
            raise ReviewWriteConflict(f"{rel} changed since the review {entry.action} ({entry.summary}); not "
                                      "undone — edit it by hand")
        stamps.append((change, stamp_bytes(data, st)))
    from engine.memory.saving import SaveConflict

    restored: list[str] = []
    for change, stamp in stamps:
        try:
            if change.before is None:
                ctx.files.delete_note(change.rel)
            else:
                ctx.files.save_note(change.rel, change.before_data if change.before_data is not None
                                    else change.before, stamp)
        except SaveConflict:
            done = f" ({', '.join(restored)} restored)" if restored else ""
            raise ReviewWriteConflict(f"{change.rel} changed on disk during the undo; it was not restored{done}") \
                from None
        restored.append(change.rel)
    warnings: list[str] = []
    try:
        ctx.journal.pop(entry)
    except OSError as exc:
        warnings.append(f"could not update the undo journal ({exc})")
    warnings.extend(_reindex(ctx, restored))
    return ReviewAction("undo", f"undid: {entry.summary}", tuple(restored), None, entry.finding_id, tuple(warnings))
