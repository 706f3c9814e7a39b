"""Drafting memories from a session: the extractive drafter, the LLM drafter's entry point, and the one rule
for "memory already holds this"."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from engine.config import LLMConfig
from engine.memory.draft import MAX_ITEM_CHARS, Draft, DraftItem
from engine.memory.slugs import FUNCTION_WORDS, WORD
from engine.secrets import redact_secrets
from engine.sessions.model import Entry, Transcript
from engine.sessions.reader import spoken

DRAFT_METHODS = ("auto", "llm", "extractive")
KNOWN_LINE_COVERAGE = 0.55
"""How much of a statement's words one line of a memory hit must hold for the statement to count as known."""


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
    return sum(1 for match in WORD.finditer(text.lower()) if match.group(0) not in FUNCTION_WORDS)


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
    return " ".join(WORD.findall(text.lower()))


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
        # Only what was said: no injected metadata, system/exec events, slash commands, forwarded messages.
        text = spoken(message).strip()
        if not text:
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
# What memory already holds


class _Snippeted(Protocol):
    @property
    def snippet(self) -> str: ...


def is_known(statement: str, search: Callable[[str], Iterable[_Snippeted]],
             threshold: float = KNOWN_LINE_COVERAGE) -> bool:
    """Whether memory already holds ``statement``: one line of a top keyword hit has most of its words.

    The one rule every door's flush uses to skip what memory already says. Deterministic and model-free.

    Args:
        statement: a drafted memory.
        search: the top keyword hits for a text (``MemoryEngine`` passes its index); only called when the
            statement has at least two search terms.
        threshold: the share of the statement's terms one line must cover.
    """
    from engine.search.query import query_terms  # deferred: drafting without an index needs neither
    from engine.search.snippets import best_line_coverage

    terms = query_terms(statement)
    if len(terms) < 2:
        return False
    return any(best_line_coverage(hit.snippet, terms) >= threshold for hit in search(statement))


# ---------------------------------------------------------------------------------------------
# Choosing the drafter


def llm_configured(llm: LLMConfig | None) -> bool:
    """Whether an ``[llm]`` section names an endpoint and a model."""
    return llm is not None and bool(llm.base_url.strip() and llm.model.strip())


def draft_flush(
    transcript: Transcript,
    *,
    method: str = "auto",
    llm: LLMConfig | None = None,
    workspace: Path | None = None,
    is_known: Callable[[str], bool] | None = None,
) -> Draft:
    """Draft memories from a session with the method asked for.

    Args:
        transcript: the session.
        method: ``auto`` (the LLM when one is configured; if it fails, the extractive drafter with a
            warning), ``llm`` (only the LLM) or ``extractive``.
        llm: the ``[llm]`` section.
        workspace: its ``MEMORY.md`` is shown to the LLM as what not to repeat.
        is_known: True for a statement memory already holds (those are dropped and counted).

    Raises:
        LLMError: ``method`` is ``llm`` and no LLM is configured or it failed.
        ValueError: an unknown ``method``.
    """
    if method not in DRAFT_METHODS:
        raise ValueError(f"unknown draft method {method!r} (one of {', '.join(DRAFT_METHODS)})")
    if method == "llm" or (method == "auto" and llm_configured(llm)):
        from engine.memory.llm import ChatClient, LLMError, draft_with_llm, read_memory_hint

        if llm is None or not llm_configured(llm):
            raise LLMError("no LLM configured (set [llm] base_url and model)")
        try:
            hint = read_memory_hint(workspace) if workspace is not None else ""
            return draft_with_llm(transcript, ChatClient.from_config(llm), hint, is_known=is_known)
        except LLMError as exc:
            if method == "llm":
                raise
            draft = draft_extractive(transcript, is_known=is_known)
            return replace(draft, warnings=(*draft.warnings, f"LLM draft failed ({exc}); used the extractive drafter"))
    return draft_extractive(transcript, is_known=is_known)
