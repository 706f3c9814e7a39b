"""The statements of a workspace: each bullet or plain line of the memory files, with its line range and date."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path

from engine import markdown
from engine.config import Config
from engine.search.dates import file_date
from engine.sessions.speech import injected_kinds, is_injected, strip_injected
from engine.textio import read_text_file
from engine.workspace import indexed_root_files, memory_tree_paths

_BULLET = re.compile(r"^(\s*)(?:[-*+]|\d{1,3}[.)])\s+")
_CHECKBOX = re.compile(r"^\[[ xX]\]\s*")
_INLINE_COMMENT = re.compile(r"<!--.*?-->")
# Leading clock times and dates a log line starts with ("14:07 CEST —", "2026-10-02 —"): not part of the fact.
_LEAD_TIME = re.compile(r"^(?:\d{1,2}:\d{2}(?:\s*(?:[A-Z]{2,5}|[ap]\.?m\.?))?|\d{4}-\d{2}-\d{2})\s*(?:[—–:-]+\s*|\s)")
# Citations the flush and promote actions append: "(session 9b2d4e71, line 20)", "(from memory/x.md#L3)".
_CITATION = re.compile(r"\s*\((?:session [0-9a-f]{6,}[^)]*|(?:from |see |source:? )?[\w./-]+\.(?:md|jsonl)#L\d+[^)]*)\)")
_SPEAKER = re.compile(r"^(?:user|assistant|system|human|ai)\s*:\s*", re.IGNORECASE)  # session-note transcript lines
_SUPERSEDED = re.compile(r"\(superseded\b[^)]*\)", re.IGNORECASE)
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"[*_`~]{1,3}")
_LINE_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")

# Whose words a statement is (only the user's own notes are facts the review compares or promotes).
OWN = "own"
ASSISTANT = "assistant"  # "Assistant:", "**Agent**:", "AI:" … a line the agent said
QUOTE = "quote"  # a blockquote, a quoted transcript line ("user: …"), a line wholly in quotation marks
INJECTED = "injected"  # text OpenClaw or a plugin injected (engine.sessions.speech's detectors)
OPTION = "option"  # an item of a list under a label line ("Options:", "Which do you prefer?")
LABEL = "label"  # a label or question line itself ("Options:", "Which do you prefer?"), or a metadata line
STEP = "step"  # a step of a numbered procedure (an item of an ordered list of two or more under one heading)
FRAGMENT = "fragment"  # an item under a label line that goes on the label's sentence ("He prefers:" / "- the early
# train"): its subject is in the label, so alone it says nothing whole
ORIGINS = (OWN, ASSISTANT, QUOTE, INJECTED, OPTION, LABEL, STEP, FRAGMENT)

_ASSISTANT = re.compile(
    r"^(?:[*_]{1,2})?(?:assistant|agent|ai|bot|openclaw|claude|gpt|model|the agent)(?:[*_]{1,2})?\s*:(?:[*_]{1,2})?\s",
    re.IGNORECASE)
_TRANSCRIPT = re.compile(r"^(?:[*_]{1,2})?(?:user|human|system|tool)(?:[*_]{1,2})?\s*:(?:[*_]{1,2})?\s",
                         re.IGNORECASE)
_QUOTED = re.compile(r"^[\"“„«'‘].{8,}[\"”“»'’]\W*$")
_BOLD_HEADING = re.compile(r"^(?:\*\*|__)(?:[^*_]{0,60}[:：][^*_]{0,60}|[^*_]{1,80}(?:\*\*|__)\s*[:：])(?:\*\*|__)?$")
"""A line that is all bold and a label ("**规则2: 阶段性汇总**", "**Deploy steps:**", "**Deploy steps**:"): a heading
for the lines below it (a bold rule without a colon, "**ALWAYS use message.send**", is the rule itself)."""
_LABEL_LINE = re.compile(r"^[^.!?。！？]{1,150}[:：]\s*$")  # a line ending in a colon introduces what follows ("他更喜欢：")
_OPTIONS_LABEL = re.compile(r"\b(options?|choices?|alternatives?|candidates?|either|pick one|proposals?|"
                            r"possibilities|variants?|opcij\w*|izbor\w*|mogućnost\w*|varijant\w*)\b|选项|方案|可选",
                            re.IGNORECASE)  # (and in Serbian and Chinese)
_QUESTION = re.compile(r"[?？]\s*(?:\)|\*+)?\s*$")
# A metadata line: an emphasised label and a short value ("- **Session Key**: agent:main:main", "**Source:**
# telegram"), what a note's header records about the note, not a statement about the world.
_META_LINE = re.compile(r"^(?:[-*+]\s+)?(?:\*\*|__)[^*_:\n]{1,40}(?::(?:\*\*|__)|(?:\*\*|__):)\s*(?P<value>.*)$")
META_VALUE_WORDS = 3
"""The most words a metadata line's value has ("telegram", "agent:main:main", "9b2d4e71"): a longer value is a
statement with a bold lead-in ("**Decision**: we move billing to Postgres in May")."""
_ORDERED = re.compile(r"^\s*\d{1,3}[.)]\s+")

CURATED = "curated"
DAILY = "daily"
SESSION = "session"
TOPIC = "topic"


@dataclass(frozen=True)
class Statement:
    """One statement: a bullet (with its continuation lines) or a plain line of a memory file.

    Attributes:
        path: the workspace-relative file.
        start_line, end_line: the 1-based lines it spans.
        text: the lines as written (joined with newlines; what a finding cites).
        clean: the statement without bullet, checkbox, leading time stamp, citations and markup.
        kind: ``curated`` (MEMORY.md/USER.md), ``daily``, ``session`` or ``topic``.
        day: the note's date (from its name), else None.
        section: the nearest heading above it ("" when none).
        order: the position in time for "which is newer": (date ordinal, time of day, line); curated and
            topic lines are undated-oldest (date 0) unless the line or its section's heading names a date.
        key: stable id: the file, the clean text, which occurrence of it in the file, and whether it is marked
            superseded.
        superseded: the line already carries a ``(superseded …)`` mark.
        checkbox: the line is a task item (``- [ ]``/``- [x]``).
        origin: whose words: ``own`` (the notes' own), ``assistant``, ``quote``, ``injected``, ``option`` (an item
            under a label line) or ``label`` (the label or question line itself); see :func:`origin_of`.
        parent: what a list item is an item of: the item it is nested under, else the line that leads its list
            ("Revenue streams ready:" / "- Job search"); "" for a line that is no list item or whose list has no
            lead line (its heading is then its context).
    """

    path: str
    start_line: int
    end_line: int
    text: str
    clean: str
    kind: str
    day: str | None
    section: str
    order: tuple[int, int, int]
    key: str
    superseded: bool = False
    checkbox: bool = False
    origin: str = OWN
    parent: str = ""
    extra: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    def to_raw(self) -> tuple[object, ...]:
        """The fields as plain values (what the review cache stores; the path is the cache's key)."""
        return (self.start_line, self.end_line, self.text, self.clean, self.kind, self.day, self.section,
                self.order, self.key, self.superseded, self.checkbox, self.origin, self.parent)

    @classmethod
    def from_raw(cls, path: str, raw: tuple[object, ...]) -> Statement:
        """The statement :meth:`to_raw` gave, of the file ``path``.

        Raises:
            TypeError, ValueError: not that shape.
        """
        start, end, text, clean, kind, day, section, order, key, superseded, checkbox, origin, parent = raw
        if not (isinstance(start, int) and isinstance(end, int) and isinstance(text, str) and isinstance(clean, str)
                and isinstance(kind, str) and (day is None or isinstance(day, str)) and isinstance(section, str)
                and isinstance(order, tuple) and len(order) == 3 and isinstance(key, str)
                and origin in ORIGINS and isinstance(parent, str)):
            raise ValueError("not a review statement")
        return cls(path, start, end, text, clean, kind, day, section, order, key, bool(superseded), bool(checkbox),
                   str(origin), parent)

    @property
    def dated(self) -> bool:
        """Whether the statement comes from a dated daily or session note."""
        return self.day is not None


def file_kind(rel: str) -> tuple[str, str | None, int]:
    """``(kind, day, minute of day)`` of a workspace file from its name."""
    name = rel.rsplit("/", 1)[-1]
    if "/" not in rel:
        return CURATED, None, 0
    when = file_date(rel)  # the search's reading of dated names: YYYY-MM-DD.md, YYYY-MM-DD-HHMM.md, -slug.md
    if when is None:
        return TOPIC, None, 0
    day = when.isoformat()
    rest = name[len(day) + 1:-len(".md")] or None
    if rest is None:
        return DAILY, day, 0
    minute = int(rest[:2]) * 60 + int(rest[2:4]) if re.fullmatch(r"\d{4}", rest) and int(rest[:2]) < 24 else 0
    return SESSION, day, minute


def clean_text(text: str) -> str:
    """A statement without bullet, checkbox, leading time stamp, citations, links and emphasis marks."""
    lines = [ln.strip() for ln in text.split("\n")]
    out = " ".join(ln for ln in lines if ln)
    out = _BULLET.sub("", out, count=1)
    out = _CHECKBOX.sub("", out, count=1)
    out = _SPEAKER.sub("", out, count=1)
    out = _INLINE_COMMENT.sub(" ", out)
    out = _SUPERSEDED.sub(" ", out)
    out = _CITATION.sub(" ", out)
    out = _LINK.sub(r"\1", out)
    out = _EMPHASIS.sub("", out)
    for _ in range(2):
        out = _LEAD_TIME.sub("", out.strip(), count=1)
    return " ".join(out.split())


def origin_of(raw: str, clean: str) -> str:
    """Whose words a statement's lines are, from their text alone: an assistant line, a quote (blockquote, a
    transcript's speaker line, a line wholly in quotation marks), injected text, a label or question line, or the
    notes' own."""
    first = raw.lstrip()
    body = _BULLET.sub("", first, count=1)
    body = _CHECKBOX.sub("", body, count=1)
    for _ in range(2):
        body = _LEAD_TIME.sub("", body.strip(), count=1)
    if _ASSISTANT.match(body):
        return ASSISTANT
    if first.startswith(">") or body.startswith(">") or _TRANSCRIPT.match(body.lstrip("> ")) \
            or _QUOTED.match(clean):
        return QUOTE
    if is_injected(body) or injected_kinds(body):
        return INJECTED
    if _LABEL_LINE.match(clean) or _QUESTION.search(clean) or _BOLD_HEADING.match(body.strip()):
        return LABEL
    return OWN


def metadata_line(raw: str) -> bool:
    """Whether a line is a metadata line by its shape: an emphasised label, a colon and a value of at most
    :data:`META_VALUE_WORDS` words (a session note's ``- **Session Key**: agent:main:main``)."""
    m = _META_LINE.match(raw.strip())
    return m is not None and len(m.group("value").split()) <= META_VALUE_WORDS


def _injected_lines(lines: list[str]) -> set[int]:
    """The 1-based lines of a file that sit in injected text: a plugin's tag block on lines of its own, or a
    paragraph the speech filter reads as injected as a whole (a startup-context block, a metadata header)."""
    out: set[int] = set()
    i = 0
    n = len(lines)
    while i < n:
        tag = re.match(r"^\s*<([A-Za-z][\w:.-]{0,63})(?:\s[^<>]*)?>\s*$", lines[i])
        if tag is not None:
            close = f"</{tag.group(1)}>"
            for j in range(i + 1, min(n, i + 400)):
                if lines[j].strip() == close:
                    if is_injected("\n".join(ln.strip() for ln in lines[i:j + 1])):
                        out.update(range(i + 1, j + 2))
                        i = j
                    break
        i += 1
    start = None
    for k in range(n + 1):
        blank = k == n or not lines[k].strip()
        if blank and start is not None:
            para = "\n".join(ln.strip() for ln in lines[start:k])
            if k - start > 1 and not (set(range(start + 1, k + 1)) <= out) and injected_kinds(para):
                kept = {ln.strip() for ln in strip_injected(para).split("\n")}
                out.update(x + 1 for x in range(start, k) if lines[x].strip() not in kept)
            start = None
        elif not blank and start is None:
            start = k
    return out


def _ordinal(day: str | None) -> int:
    if day is None:
        return 0
    try:
        return date.fromisoformat(day).toordinal()
    except ValueError:
        return 0


def parse_statements(rel: str, text: str) -> list[Statement]:
    """The statements of one file: bullets (with indented continuation lines) and plain lines, without headings,
    code (fenced or indented, front matter), HTML comments, tables, rules and empty lines.

    What is code, a heading, a table or a rule is :mod:`engine.markdown`'s reading (CommonMark), the one the
    chunker and the editor use: a ```` fence holding a ``` line is code to its closing ````."""
    kind, day, minute = file_kind(rel)
    out: list[Statement] = []
    seen: dict[str, int] = {}
    section = ""
    in_comment = False
    current: list[str] = []
    start = 0
    lines = text.split("\n")
    blocks = markdown.parse_blocks(text)
    roles = blocks.roles
    titles = {b.start: b.text for b in blocks.blocks if b.kind == markdown.HEADING}
    injected = _injected_lines(lines)
    under_label: list[int | None] = [None]  # the least indent of the items under the last label line (None: none)
    shape: list[tuple[int, bool, str]] = []  # per statement: its indent, whether an ordered item, its section
    label_section = [""]
    label_items: list[int | None] = [None]  # the least indent of the items under the last label line of any kind
    label_count = [0]  # how many items stood under the last label line so far
    items: list[tuple[int, str]] = []  # the open list's items above this one: (indent, clean text)
    lead = [""]  # the line that leads the open list ("Revenue streams ready:"), "" when none
    last: list[tuple[bool, str, str]] = []  # the last statement: whether bulleted, its clean text, its section
    gap = [False]  # whether a blank line stood since the last statement

    def flush(end: int) -> None:
        nonlocal current
        if not current:
            return
        raw = "\n".join(current)
        current = []
        clean = clean_text(raw)
        if len(clean) < 3 or not re.search(r"\w", clean):
            return
        stripped = _BULLET.sub("", raw.lstrip(), count=1)
        line_day = None
        if kind in (CURATED, TOPIC):
            # the line's own date, else its section's ("## Primary model (2026-02-12)"): a curated section dated
            # after a daily note is the newer of the two
            found = _LINE_DATE.search(clean) or _LINE_DATE.search(section)
            line_day = found.group(0) if found else None
        order = (_ordinal(day) or _ordinal(line_day), minute, start)
        folded = clean.casefold()
        superseded = bool(_SUPERSEDED.search(raw))
        n = seen.get(folded, 0)
        seen[folded] = n + 1
        # The clean text drops the "(superseded …)" mark, but the key must not: marking (or unmarking) a line is
        # a change the incremental review has to see, or it would keep the pairs cached for the unmarked line.
        mark = "\0superseded" if superseded else ""
        key = hashlib.sha1(f"{rel}\0{folded}\0{n}{mark}".encode()).hexdigest()[:16]
        origin = INJECTED if any(x in injected for x in range(start, end + 1)) else origin_of(raw, clean)
        if origin == OWN and kind != CURATED and "\n" not in raw and metadata_line(raw):
            origin = LABEL  # (in MEMORY.md/USER.md "- **Timezone:** Europe/Belgrade" is the fact itself)
        indent = len(raw) - len(raw.lstrip())
        bulleted = _BULLET.match(raw) is not None
        if origin == LABEL:
            # "Options:", "Which do you prefer?": the items below are alternatives, not facts ("Decisions:" and
            # "He prefers:" are labels too, but what follows them is what was decided or preferred).
            # Its items sit below it: nested under a bulleted label, or a list right under a plain label line.
            least = indent + 1 if bulleted else indent
            under_label[0] = least if (_OPTIONS_LABEL.search(clean) or _QUESTION.search(clean)) else None
            label_items[0] = least
            label_section[0] = section
            label_count[0] = 0
        elif label_items[0] is not None and bulleted and indent >= label_items[0] and section == label_section[0]:
            label_count[0] += 1
            if origin == OWN and under_label[0] is not None and indent >= under_label[0]:
                origin = OPTION
            elif origin == OWN and (clean[:1].islower() or not clean[:1].isalnum()):  # (not CJK: uncased)
                origin = FRAGMENT  # "He prefers:" / "- the early train this time", "Files changed:" / "- `api/x.py`"
        else:
            under_label[0] = label_items[0] = None
        parent = ""
        if bulleted:
            if not items:
                # a list right below a plain line ("Revenue streams ready:", "January's primary skill with:") is
                # that line's list
                before = last[-1] if last else None
                lead[0] = before[1] if before is not None and not before[0] and before[2] == section and (
                    not gap[0] or before[1].endswith((":", "："))) else ""
            while items and items[-1][0] >= indent:
                items.pop()
            parent = items[-1][1] if items else lead[0]
            items.append((indent, clean))
        else:
            items.clear()
            lead[0] = ""
        last[:] = [(bulleted, clean, section)]
        gap[0] = False
        out.append(Statement(rel, start, end, raw, clean, kind, day, section, order, key,
                             superseded=superseded, checkbox=bool(_CHECKBOX.match(stripped)), origin=origin,
                             parent=parent))
        shape.append((indent, _ORDERED.match(raw) is not None, section))

    for number, line in enumerate(lines, 1):
        role = roles[number - 1]
        if role in markdown.LITERAL_ROLES:  # code, its fences, front matter
            flush(number - 1)
            continue
        if in_comment:
            if "-->" in line:
                in_comment = False
            continue
        bare = _INLINE_COMMENT.sub("", line)
        if "<!--" in bare:  # a comment that runs over several lines
            flush(number - 1)
            in_comment = "-->" not in bare.split("<!--", 1)[1]
            bare = bare.split("<!--", 1)[0]
            if not bare.strip():
                continue
        if not bare.strip():
            flush(number - 1)
            gap[0] = True
            if label_count[0]:
                # A blank line after the items under a label ends them: the list after it is the notes' own.
                under_label[0] = label_items[0] = None
                label_count[0] = 0
            continue
        if role in (markdown.LineRole.HEADING, markdown.LineRole.UNDERLINE):
            flush(number - 1)
            section = titles.get(number - 1, section)
            items.clear()
            lead[0] = ""
            continue
        if role in (markdown.LineRole.TABLE, markdown.LineRole.RULE) or bare.lstrip().startswith("|"):
            flush(number - 1)
            continue
        bullet = _BULLET.match(bare)
        continuation = bool(current) and bullet is None and (bare[:1].isspace())
        if continuation:
            current.append(bare)
            continue
        flush(number - 1)
        current = [bare]
        start = number
    flush(len(lines))
    return _mark_steps(out, shape)


def _mark_steps(out: list[Statement], shape: list[tuple[int, bool, str]]) -> list[Statement]:
    """Mark the items of numbered procedures as :data:`STEP`: an ordered list of two or more items at one indent
    under one heading (what lies between them is nested deeper). A step means something only in its procedure:
    two runbooks that share a step are two procedures, and deleting the step from one breaks it."""
    steps: set[int] = set()
    run: list[int] = []

    def close() -> None:
        if len(run) >= 2:
            steps.update(run)
        run.clear()

    for i, (indent, ordered, section) in enumerate(shape):
        if run:
            first_indent, _, first_section = shape[run[0]]
            if section != first_section or indent < first_indent or (indent == first_indent and not ordered):
                close()
            elif indent > first_indent:
                continue  # nested under a step (a sub-item, a note on it)
        if ordered:
            run.append(i)
    close()
    if not steps:
        return out
    return [replace(s, origin=STEP) if i in steps and s.origin == OWN else s for i, s in enumerate(out)]


@dataclass(frozen=True)
class FileStamp:
    """What decides whether a file's statements can come from the cache: its size and modification time."""

    rel: str
    path: Path
    mtime_ns: int
    size: int


def review_files(config: Config) -> list[FileStamp]:
    """The files a review reads: ``MEMORY.md``, ``USER.md`` (``memory.md`` when configured) and
    ``memory/**/*.md`` (folder symlinks by the scan's rule, file symlinks skipped), in a stable order."""
    ws = config.workspace
    found: list[FileStamp] = []
    for name in indexed_root_files(config):
        _add(found, ws / name, name)
    for raw in memory_tree_paths(config):  # the scan's walk: folder symlinks by its rule (engine.workspace)
        path = Path(raw)
        if any(part.startswith(".") for part in path.relative_to(ws).parts[1:-1]):
            continue  # hidden folders (an editor's or a sync tool's) hold no statements
        _add(found, path, path.relative_to(ws).as_posix())
    return found


def _add(found: list[FileStamp], path: Path, rel: str) -> None:
    try:
        st = os.lstat(path)
    except OSError:
        return
    import stat as _stat

    if _stat.S_ISREG(st.st_mode):
        found.append(FileStamp(rel, path, st.st_mtime_ns, st.st_size))


def curated_headings(files: Iterable[FileStamp]) -> set[tuple[str, str]]:
    """``(file, heading)`` of every heading below the title in ``MEMORY.md``/``USER.md``, also one with no
    line under it yet (an empty "## Health" is still where a health fact goes)."""
    out: set[tuple[str, str]] = set()
    for f in files:
        if file_kind(f.rel)[0] != CURATED:
            continue
        try:
            text = f.path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        out.update((f.rel, b.text) for b in markdown.parse_blocks(text).blocks
                   if b.kind == markdown.HEADING and b.level >= 2 and b.text)
    return out


def read_statements(config: Config, files: Iterable[FileStamp],
                    known: dict[str, tuple[int, int, list[Statement]]] | None = None
                    ) -> tuple[dict[str, list[Statement]], list[str]]:
    """Each file's statements (``rel → statements``) and the files that could not be read.

    ``known``: statements parsed before, by file, with the (mtime_ns, size) they were parsed at; a file whose
    stamp is unchanged is not read again.
    """
    out: dict[str, list[Statement]] = {}
    problems: list[str] = []
    limit = config.index.max_file_bytes
    known = known or {}
    for f in files:
        cached = known.get(f.rel)
        if cached is not None and cached[0] == f.mtime_ns and cached[1] == f.size:
            out[f.rel] = cached[2]
            continue
        if f.size > limit:
            problems.append(f"{f.rel}: over max_file_bytes, not reviewed")
            continue
        try:
            decoded = read_text_file(f.path, limit)
        except OSError as exc:
            problems.append(f"{f.rel}: not readable ({exc.strerror or exc})")
            continue
        if decoded.binary:
            problems.append(f"{f.rel}: binary, not reviewed")
            continue
        out[f.rel] = parse_statements(f.rel, decoded.text)
    return out, problems
