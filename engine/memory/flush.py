"""Turning a session into memory: session notes, the extractive flush drafter, and atomic appends."""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

from engine.errors import MemdeckError
from engine.health.secrets import redact_secrets
from engine.sessions.reader import Entry, Transcript
from engine.textio import WriteRefused, atomic_append, atomic_write_bytes, create_new_file

MAX_ITEM_CHARS = 200
NOTE_MESSAGE_CHARS = 4000
SLUG_MAX_CHARS = 30

DRAFT_KINDS = ("preference", "identity", "decision", "instruction", "plan", "fact", "confirmed")


class FlushError(MemdeckError):
    """A flush or session note could not be written (nothing was changed)."""


@dataclass(frozen=True)
class DraftItem:
    """One candidate memory.

    Attributes:
        text: a standalone statement, one line, at most 200 characters.
        kind: one of :data:`DRAFT_KINDS`.
        session_id: the session it came from.
        line: the JSONL line of the message it came from.
    """

    text: str
    kind: str
    session_id: str
    line: int

    def bullet(self) -> str:
        """The Markdown bullet with its back-reference: ``- <text> (session <id8>, line <N>)``."""
        return f"- {self.text} (session {self.session_id[:8]}, line {self.line})"


@dataclass(frozen=True)
class Draft:
    """Candidate memories drafted from a session, for the user to review before appending.

    Attributes:
        items: the candidates, in transcript order.
        session_id: the session drafted from.
        method: ``extractive`` or ``llm``.
        considered: statements (extractive) or transcript lines (LLM) looked at.
        skipped_known: candidates dropped because memory already holds them.
        warnings: things the user should know (e.g. the transcript was cut for the LLM).
    """

    items: tuple[DraftItem, ...]
    session_id: str
    method: str
    considered: int = 0
    skipped_known: int = 0
    warnings: tuple[str, ...] = ()

    @property
    def is_empty(self) -> bool:
        """True when there is nothing to store."""
        return not self.items


# ---------------------------------------------------------------------------------------------
# Session notes (§9, but never overwriting)

_STOP_WORDS_TEXT = """
    a about above after again against all also am an and any are aren't as at be because been before
    being below between both but by can can't cannot could couldn't did didn't do does doesn't doing
    don't down during each few for from further had hadn't has hasn't have haven't having he he'd he'll
    he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't
    it it's its itself let's me more most mustn't my myself no nor not of off on once only or other
    ought our ours ourselves out over own same shan't she she'd she'll she's should shouldn't so some
    such than that that's the their theirs them themselves then there there's these they they'd
    they'll they're they've this those through to too under until up very was wasn't we we'd we'll
    we're we've were weren't what what's when when's where where's which while who who's whom why
    why's will with won't would wouldn't you you'd you'll you're you've your yours yourself yourselves
"""
_SLUG_EXTRA_TEXT = """
    just like get got want need know think make sure yes yeah yep nope okay ok thanks thank please hi
    hello hey bye cool great nice good well really actually maybe also one two lol haha sorry right
    user assistant can could would should shall may might must let lets gonna wanna tell say said see
    use used using go going went come back now today tomorrow yesterday thing things something
    anything everything way lot bit much many still even already yet again here there done help
    talk talked talking ask asked asking says told wanted needed prefer prefers preferred love hate
"""
_FUNCTION_WORDS = frozenset(_STOP_WORDS_TEXT.split())
_STOP_WORDS = _FUNCTION_WORDS | frozenset(_SLUG_EXTRA_TEXT.split())

_WORD = re.compile(r"[a-z0-9][a-z0-9'-]*[a-z0-9]|[a-z0-9]")


def clean_slug(text: str) -> str:
    """Clean text into a file-name slug as OpenClaw does.

    Lower-case, ``[^a-z0-9-]`` → ``-``, runs of ``-`` collapsed, leading/trailing ``-`` removed,
    cut to 30 characters (at a ``-`` when possible).
    """
    slug = re.sub(r"[^a-z0-9-]", "-", text.strip().lower())
    slug = re.sub(r"-{2,}", "-", slug).strip("-")
    if len(slug) > SLUG_MAX_CHARS:
        cut = slug[:SLUG_MAX_CHARS]
        slug = cut.rsplit("-", 1)[0] if "-" in cut and slug[SLUG_MAX_CHARS] != "-" else cut
        slug = slug.strip("-")
    return slug


def keyword_slug(text: str, words: int = 3) -> str:
    """A slug from the most frequent distinct non-stop-words of ``text`` (ties: first seen first)."""
    counts: Counter[str] = Counter()
    first_seen: dict[str, int] = {}
    for index, match in enumerate(_WORD.finditer(text.lower())):
        word = match.group(0).strip("'-")
        if len(word) < 3 or word in _STOP_WORDS or word.isdigit() or "'" in word:
            continue
        counts[word] += 1
        first_seen.setdefault(word, index)
    ranked = sorted(counts, key=lambda word: (-counts[word], first_seen[word]))
    return clean_slug("-".join(ranked[:words]))


def _note_messages(transcript: Transcript, messages: int) -> list[tuple[str, str]]:
    kept: list[tuple[str, str]] = []
    for entry in transcript.messages():
        message = entry.message
        if message is None or message.role not in ("user", "assistant"):
            continue
        if message.role == "user" and message.provenance_kind == "inter_session":
            continue
        text = message.text.strip()
        if not text or text.startswith("/"):
            continue
        kept.append((message.role, text))
    return kept[-messages:] if messages > 0 else []


def _note_line(role: str, text: str) -> str:
    if len(text) > NOTE_MESSAGE_CHARS:
        text = text[:NOTE_MESSAGE_CHARS].rstrip() + " …"
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    # Continuation lines are indented so a message's "# ..." never becomes a heading of the note.
    return "\n".join([f"{role}: {lines[0]}", *(f"    {line}" for line in lines[1:])])


def build_session_note(
    transcript: Transcript,
    session_key: str = "unknown",
    source: str = "unknown",
    messages: int = 15,
    now: datetime | None = None,
    *,
    redact: bool = True,
) -> str:
    """Render a session note like OpenClaw's session-memory hook.

    Keeps user/assistant messages with text, drops forwarded (``inter_session``) user messages and
    ``/commands``, then takes the last ``messages``. Secrets are masked unless ``redact`` is False.

    Args:
        transcript: the session.
        session_key: e.g. ``agent:main:main``.
        source: where the session came from (e.g. ``telegram``).
        messages: how many messages to keep (after filtering).
        now: the event time (UTC is used); defaults to now.
        redact: mask secrets in message text.

    Returns:
        The Markdown note, ending with a newline.
    """
    when = (now or datetime.now(UTC)).astimezone(UTC)
    lines = [
        f"# Session: {when:%Y-%m-%d %H:%M:%S} UTC",
        "",
        f"- **Session Key**: {session_key or 'unknown'}",
        f"- **Session ID**: {transcript.session_id or 'unknown'}",
        f"- **Source**: {source or 'unknown'}",
        "",
    ]
    kept = _note_messages(transcript, messages)
    if kept:
        lines += ["## Conversation Summary", ""]
        for role, text in kept:
            lines.append(_note_line(role, redact_secrets(text) if redact else text))
        lines.append("")
    return "\n".join(lines) + "\n"


def note_slug(
    transcript: Transcript,
    messages: int = 15,
    now: datetime | None = None,
    *,
    slug: str | None = None,
    slugger: Callable[[str], str] | None = None,
) -> str:
    """Choose a session note's slug.

    ``slug`` if given (cleaned), else ``slugger(conversation)`` (e.g. an LLM; an exception or an
    empty answer falls through), else the conversation's top keywords, else the UTC ``HHMM``.

    Args:
        transcript: the session.
        messages: how many messages the note keeps (the slug looks at the same ones).
        now: the event time; defaults to now.
        slug: an explicit slug.
        slugger: makes a slug from the conversation text (secrets already masked).
    """
    when = (now or datetime.now(UTC)).astimezone(UTC)
    conversation = "\n".join(f"{role}: {text}" for role, text in _note_messages(transcript, messages))
    chosen = clean_slug(slug) if slug else ""
    if not chosen and slugger is not None and conversation:
        try:
            chosen = clean_slug(slugger(redact_secrets(conversation)))
        except Exception:  # an LLM failure must not lose the note; keywords stand in
            chosen = ""
    if not chosen:
        chosen = keyword_slug(conversation)
    return chosen or f"{when:%H%M}"


def _note_candidates(folder: Path, stem: str) -> Iterable[Path]:
    for counter in range(1, 1000):
        yield folder / (f"{stem}.md" if counter == 1 else f"{stem}-{counter}.md")


def session_note_path(workspace: Path, slug: str, now: datetime | None = None) -> Path:
    """The path a session note with ``slug`` would get now (the first name not taken)."""
    when = (now or datetime.now(UTC)).astimezone(UTC)
    folder = Path(workspace) / "memory"
    stem = f"{when:%Y-%m-%d}-{slug}"
    for candidate in _note_candidates(folder, stem):
        if not candidate.exists() and not candidate.is_symlink():
            return candidate
    raise FlushError(f"no free file name for {stem}.md in {folder}")


def write_session_note(
    workspace: Path,
    transcript: Transcript,
    session_key: str = "unknown",
    source: str = "unknown",
    messages: int = 15,
    now: datetime | None = None,
    *,
    slug: str | None = None,
    slugger: Callable[[str], str] | None = None,
    redact: bool = True,
) -> Path:
    """Write a session note to ``memory/YYYY-MM-DD-<slug>.md`` (UTC date), never overwriting.

    The slug comes from :func:`note_slug`. When the name is taken, ``-2``, ``-3``, … is appended;
    the file is created atomically and only if it does not exist.

    Args:
        workspace: the workspace root (``memory/`` is created if missing).
        transcript: the session.
        session_key: e.g. ``agent:main:main``.
        source: where the session came from.
        messages: how many messages to keep.
        now: the event time; defaults to now.
        slug: an explicit slug (cleaned).
        slugger: makes a slug from the conversation text (e.g. :func:`engine.memory.llm.slug_with_llm`).
        redact: mask secrets in the note.

    Returns:
        The path written.

    Raises:
        FlushError: no free file name could be found.
        OSError: the memory folder cannot be written.
    """
    when = (now or datetime.now(UTC)).astimezone(UTC)
    note = build_session_note(transcript, session_key, source, messages, when, redact=redact)
    chosen = note_slug(transcript, messages, when, slug=slug, slugger=slugger)
    folder = Path(workspace) / "memory"
    folder.mkdir(parents=True, exist_ok=True)
    data = note.encode("utf-8")
    stem = f"{when:%Y-%m-%d}-{chosen}"
    for target in _note_candidates(folder, stem):
        if create_new_file(target, data):
            return target
    raise FlushError(f"no free file name for {stem}.md in {folder}")


# ---------------------------------------------------------------------------------------------
# The extractive drafter

_CODE_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_INLINE_CODE = re.compile(r"`[^`\n]{40,}`")
_SENTENCE_END = re.compile(r"[.!?]+(?=\s)|\n+")
_ABBREVIATIONS = frozenset(
    (
        "e.g",
        "i.e",
        "eg",
        "ie",
        "dr",
        "mr",
        "mrs",
        "ms",
        "st",
        "vs",
        "etc",
        "a.m",
        "p.m",
        "approx",
        "fig",
        "jr",
    )
)
_BULLET = re.compile(r"^\s*(?:[-*•+]|\d+[.)])\s+")

_LEADING_FILLER = re.compile(
    r"^(?:ok(?:ay)?|so|well|hey|hi|hello|also|and|but|oh|um+|uh+|btw|by the way|anyway|anyways|actually|"
    r"right|alright|all right|yeah|yes|yep|no|nope|lol|haha+|hmm+|fyi|just so you know|for the record|"
    r"quick note|note|ps|p\.s\.)\b[\s,.!:;—–-]*",
    re.I,
)
_TRAILING_CHAT = re.compile(
    r"[\s,;:—–-]*(?:thanks(?: a lot| so much)?|thank you(?: so much)?|thx|ty|lol|haha+|please|pls|plz|ok(?:ay)?|"
    r"cheers|:\)|:-\)|:d|;\)|<3|🙂|😊|😀|😄|👍|🙏)[\s!.]*$",
    re.I,
)
_CHIT_CHAT = re.compile(
    r"^(?:thanks|thank you|thx|ty|lol|haha+|ok(?:ay)?|cool|great|nice|awesome|perfect|sure|yes|yeah|yep|no|nope|"
    r"hi|hello|hey|good (?:morning|afternoon|evening|night)|bye|goodbye|see you|cheers|sounds good|got it|"
    r"never ?mind|nvm|no worries|all good|makes sense)\b[\s!.,]*(?:\w+[\s!.,]*)?$",
    re.I,
)

_USER_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "instruction",
        re.compile(
            r"\bfrom now on\b|\bgoing forward\b|\bin (?:the )?future\b|\bdon'?t ever\b|\bdo not ever\b|"
            r"\bremember (?:that|to)\b|\bkeep in mind\b|\bmake sure (?:to|you)\b|"
            r"^(?:please )?(?:always|never)\b(?! mind)|\byou should (?:always|never)\b|"
            r"\b(?:always|never) (?:use|call|reply|answer|write|respond|send|ask|suggest|book|schedule)\b",
            re.I,
        ),
    ),
    (
        "identity",
        re.compile(
            r"\bmy name is\b|\bcall me\b|\bI(?:'m| am) (?:a|an)\s+(?!bit\b|little\b|lot\b)\w|"
            r"\bI work (?:at|for|as|on|in)\b|\bI live in\b|\bI(?:'m| am) (?:from|based in|located in)\b|"
            r"\bmy (?:pronouns|birthday|email|e-mail|timezone|time zone|phone number|address)\b|"
            r"\bI(?:'m| am) \d{1,3} (?:years? old|yo)\b|\bI moved to\b|\bI was born\b",
            re.I,
        ),
    ),
    (
        "preference",
        re.compile(
            r"\bI (?:really |strongly |much |definitely )?(?:prefer|like|love|enjoy|hate|dislike|loathe|"
            r"can't stand|cannot stand)\b|\bI don'?t (?:like|want|enjoy|eat|drink)\b|"
            r"\bmy (?:favou?rite|preferred)\b|\bI(?:'d| would) rather\b|\bI (?:always|never|usually)\b(?! (?:forget|forgot|mess|screw|lose|miss)\b)|"
            r"\bI(?:'m| am) (?:vegetarian|vegan|allergic|lactose)\b",
            re.I,
        ),
    ),
    (
        "decision",
        re.compile(
            r"\bwe(?:'ve| have)? decided\b|\bI(?:'ve| have)? decided\b|\blet'?s go with\b|\bwe(?:'ll| will) use\b|"
            r"\bwe(?:'re| are) going with\b|\blet'?s use\b|\bwe(?:'ll| will) go with\b|\bdecision:|"
            r"\bwe agreed\b|\bwe(?:'re| are) switching to\b|\bI(?:'m| am) going with\b",
            re.I,
        ),
    ),
    (
        "plan",
        re.compile(
            r"\bremind me\b|\bto-?do\b|\bI need to\b|\bI have to\b|\bI must\b|\bI(?:'m| am) planning\b|"
            r"\bI plan to\b|\bdeadline\b|\bdue (?:on|by)\b|\bappointment\b",
            re.I,
        ),
    ),
    (
        "fact",
        re.compile(
            r"\bmy (?:wife|husband|partner|girlfriend|boyfriend|son|daughter|kids?|children|mom|mother|dad|"
            r"father|brother|sister|boss|manager|friend|colleague|coworker|co-worker|cofounder|co-founder|"
            r"team|dog|cat|doctor|landlord|neighbou?r)\b|(?-i:\b(?!(?:This|That|It|Here|There|What|Which|Who|Where|He|She|Today|Tomorrow)\b)[A-Z][a-z]+) is my\b|"
            r"(?-i:\b[A-Z][a-z]+)'s birthday\b|"
            r"\b(?:the|our|my) (?:project|repo|repository|app|service|api|server|database|db|stack|deploy(?:ment)?|"
            r"website|site|company|startup|product|backend|frontend|cluster|budget|launch|release)\b.{0,80}?"
            r"\b(?:is|are|uses|runs|lives|was|has|needs)\b|"
            r"\bwe(?:'re| are) (?:using|building|migrating|moving|launching|hiring)\b|\bI(?:'m| am) (?:working on|building)\b",
            re.I,
        ),
    ),
    (
        "plan",
        re.compile(
            r"\bnext (?:week|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b|\btomorrow\b|"
            r"\bon (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b|"
            r"\bby (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|the end of)\b|\b\d{4}-\d{2}-\d{2}\b|"
            r"\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
            r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.? \d{1,2}(?:st|nd|rd|th)?\b|\bmeeting (?:on|at)\b",
            re.I,
        ),
    ),
)

_ASSISTANT_CONFIRM = re.compile(
    r"^(?:done|ok(?:ay)?|got it|noted|sure|understood|alright|all set|perfect)\b[\s,:;!.—–-]+(?P<rest>.+)$",
    re.I,
)
_ASSISTANT_CHANGE = re.compile(
    r"\b(?:switched|changed|set|updated|saved|added|removed|scheduled|booked|moved|renamed|configured|"
    r"enabled|disabled|created)\b|\bI(?:'ll| will) (?:remember|use|keep|always|never|stop)\b|\bfrom now on\b|"
    r"^you (?:prefer|like|want|are|work|live|need)\b|^your\b",
    re.I,
)
_ASSISTANT_REMEMBER = re.compile(
    r"\bI(?:'ll| will) (?:remember|keep in mind|make a note)(?: of)?(?: that)?\s+(?P<rest>.+)$", re.I
)
_QUESTION_REQUEST = re.compile(r"^(?:can|could|would|will) you (?:please )?(?=remind me\b)", re.I)

_THIRD_PERSON = {"are": "is", "have": "has", "do": "does", "go": "goes", "were": "was"}


def _third_person(verb: str) -> str:
    lower = verb.lower()
    if lower in _THIRD_PERSON:
        return _THIRD_PERSON[lower]
    if re.search(r"(?:s|sh|ch|x|z|o)$", lower):
        return verb + "es"
    if re.search(r"[^aeiou]y$", lower):
        return verb[:-1] + "ies"
    return verb + "s"


def _about_user(text: str) -> str:
    """Rewrite a confirmation's leading "you …" into a statement about the user."""
    text = re.sub(r"^(?:that )", "", text, flags=re.I)
    match = re.match(r"^you(?:'re| are)\b\s*(.*)$", text, re.I)
    if match:
        return f"User is {match.group(1)}"
    match = re.match(r"^your\b\s*(.*)$", text, re.I)
    if match:
        return f"User's {match.group(1)}"
    match = re.match(r"^you\s+(\w+)\b\s*(.*)$", text, re.I)
    if match and match.group(1).lower() not in (
        "can",
        "could",
        "should",
        "will",
        "would",
        "might",
        "may",
        "must",
    ):
        return f"User {_third_person(match.group(1))} {match.group(2)}".rstrip()
    return text


def clean_statement(text: str) -> str:
    """Turn a sentence into a standalone memory statement.

    Removes list markers, leading fillers ("ok so", "btw", ...), trailing chit-chat ("thanks",
    "lol", emoji) and end punctuation, collapses whitespace, capitalises, and cuts to 200 characters
    at a word boundary.
    """
    text = _BULLET.sub("", text)
    text = " ".join(text.split())
    for _ in range(4):
        stripped = _LEADING_FILLER.sub("", text)
        stripped = _TRAILING_CHAT.sub("", stripped)
        if stripped == text:
            break
        text = stripped
    text = text.strip(" \t,;:—–-")
    text = re.sub(r"[.!,;:\s]+$", "", text)
    if len(text) > MAX_ITEM_CHARS:
        cut = text[: MAX_ITEM_CHARS - 1]
        text = (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip(" ,;:") + "…"
    if text and text[0].islower():
        text = text[0].upper() + text[1:]
    return text


def _content_words(text: str) -> int:
    return sum(1 for match in _WORD.finditer(text.lower()) if match.group(0) not in _FUNCTION_WORDS)


def _is_noise(text: str) -> bool:
    if not text or _CHIT_CHAT.match(text):
        return True
    letters = sum(ch.isalpha() for ch in text)
    if letters < 0.5 * len(text.replace(" ", "")):
        return True  # code, paths, numbers, JSON
    return bool(re.search(r"[{}<>]|=>|\(\)|;$", text))


def _sentences(text: str) -> Iterable[str]:
    """Split message text into sentences: at line breaks, and at ``.!?`` + space unless after an
    abbreviation or an initial."""
    text = _CODE_FENCE.sub("\n", text)
    text = _INLINE_CODE.sub(" ", text)
    start = 0
    for match in _SENTENCE_END.finditer(text):
        if match.group(0) == ".":
            words = text[start : match.start()].split()
            last = words[-1].lower().rstrip(".") if words else ""
            if last in _ABBREVIATIONS or (len(last) == 1 and last.isalpha()):
                continue
        part = text[start : match.end()].strip()
        start = match.end()
        if part:
            yield part
    part = text[start:].strip()
    if part:
        yield part


def _classify_user(sentence: str) -> tuple[str, str] | None:
    candidate = sentence
    if candidate.rstrip().endswith("?"):
        # A question is not a statement, except a request to be reminded.
        if not _QUESTION_REQUEST.search(_LEADING_FILLER.sub("", candidate)):
            return None
        candidate = _QUESTION_REQUEST.sub("", _LEADING_FILLER.sub("", candidate)).rstrip("?")
    cleaned = clean_statement(candidate)
    if _is_noise(cleaned) or _content_words(cleaned) < 2:
        return None
    for kind, pattern in _USER_RULES:
        if pattern.search(cleaned):
            return kind, cleaned
    return None


def _classify_assistant(sentence: str) -> tuple[str, str] | None:
    text = " ".join(sentence.split())
    remember = _ASSISTANT_REMEMBER.search(text)
    if remember:
        statement = _about_user(remember.group("rest"))
    else:
        match = _ASSISTANT_CONFIRM.match(text)
        if not match:
            return None
        rest = match.group("rest").strip()
        if not _ASSISTANT_CHANGE.search(rest) or rest.endswith("?"):
            return None
        statement = _about_user(rest)
    cleaned = clean_statement(statement)
    if _is_noise(cleaned) or _content_words(cleaned) < 2:
        return None
    return "confirmed", cleaned


def _dedupe_key(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def _in_range(entry: Entry, turn_range: tuple[int, int] | None) -> bool:
    return turn_range is None or turn_range[0] <= entry.line <= turn_range[1]


def draft_extractive(
    transcript: Transcript,
    is_known: Callable[[str], bool] | None = None,
    turn_range: tuple[int, int] | None = None,
) -> Draft:
    """Draft memories from a session without an LLM, deterministically.

    Keeps the user's preferences, identity, decisions, standing instructions, plans/todos and
    facts about people and projects, and what the assistant confirmed ("Done — switched to …",
    "Noted: …", "I'll remember …"). Drops chit-chat, questions, tool traffic, code, ``/commands``,
    forwarded messages, duplicates and anything ``is_known`` reports as already in memory.

    Args:
        transcript: the session.
        is_known: True for a statement memory already holds (e.g. backed by the search index).
        turn_range: only messages on these JSONL lines (inclusive).

    Returns:
        The draft; items carry their JSONL line.
    """
    items: list[DraftItem] = []
    seen: set[str] = set()
    considered = skipped_known = 0
    for entry in transcript.messages():
        message = entry.message
        if message is None or not _in_range(entry, turn_range) or message.role not in ("user", "assistant"):
            continue
        if message.role == "user" and message.provenance_kind == "inter_session":
            continue
        text = message.text.strip()
        if not text or text.startswith("/"):
            continue
        classify = _classify_user if message.role == "user" else _classify_assistant
        for sentence in _sentences(text):
            considered += 1
            result = classify(sentence)
            if result is None:
                continue
            kind, statement = result
            statement = redact_secrets(statement)
            key = _dedupe_key(statement)
            if not key or key in seen:
                continue
            seen.add(key)
            if is_known is not None and is_known(statement):
                skipped_known += 1
                continue
            items.append(
                DraftItem(text=statement, kind=kind, session_id=transcript.session_id, line=entry.line)
            )
    return Draft(
        items=tuple(items),
        session_id=transcript.session_id,
        method="extractive",
        considered=considered,
        skipped_known=skipped_known,
    )


# ---------------------------------------------------------------------------------------------
# Rendering and appending


def render_flush_block(draft: Draft, now: datetime) -> str:
    """Render a draft as a timestamped section for a daily file.

    Args:
        draft: the reviewed draft.
        now: the time shown in the heading (as given; pass local time for the user's clock).

    Returns:
        ``## HH:MM — Memory flush from session <id8>``, a blank line and one bullet per item,
        ending with a newline; an empty string when the draft has no items.
    """
    if draft.is_empty:
        return ""
    lines = [f"## {now:%H:%M} — Memory flush from session {draft.session_id[:8]}", ""]
    for item in draft.items:
        single = DraftItem(" ".join(item.text.split()), item.kind, item.session_id, item.line)
        lines.append(single.bullet())
    return "\n".join(lines) + "\n"


def daily_file(workspace: Path, day: date) -> Path:
    """The daily log for ``day``: ``<workspace>/memory/YYYY-MM-DD.md``."""
    return Path(workspace) / "memory" / f"{day:%Y-%m-%d}.md"


def append_flush(workspace: Path, block: str, day: date) -> Path:
    """Append a flush block to ``memory/YYYY-MM-DD.md`` atomically, never changing what is there.

    Args:
        workspace: the workspace root (``memory/`` is created if missing).
        block: the text to append (see :func:`render_flush_block`).
        day: which daily file.

    Returns:
        The daily file.

    Raises:
        FlushError: the block is empty, or the daily file is a symlink or not a regular file.
        OSError: the folder cannot be written.
    """
    if not block.strip():
        raise FlushError("nothing to append: the flush block is empty")
    target = daily_file(workspace, day)
    try:
        atomic_append(target, block)
    except WriteRefused as exc:
        raise FlushError(str(exc)) from exc
    return target


def record_flush(state_path: Path, session_id: str, when: datetime) -> None:
    """Record that a session was flushed, in memdeck's flush record (``{session_id: iso time}``).

    A record that cannot be parsed is kept aside as ``<name>.corrupt`` rather than lost.

    Args:
        state_path: the JSON file (e.g. ``<home>/flush-state.json``); its folder is created.
        session_id: the session.
        when: the flush time (stored in UTC).
    """
    path = Path(state_path)
    state: dict[str, str] = {}
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raw = b""
    if raw.strip():
        try:
            loaded = json.loads(raw.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError):
            loaded = None
        if isinstance(loaded, dict):
            state = {key: value for key, value in loaded.items() if isinstance(value, str)}
        else:
            with contextlib.suppress(OSError):
                os.replace(path, path.with_name(path.name + ".corrupt"))
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    state[session_id] = when.astimezone(UTC).isoformat().replace("+00:00", "Z")
    atomic_write_bytes(path, (json.dumps(state, indent=2, sort_keys=True) + "\n").encode("utf-8"))
