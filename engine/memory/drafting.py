"""Drafting memories from a session: the extractive drafter, the LLM drafter's entry point, and the one rule
for "memory already holds this"."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import tzinfo
from pathlib import Path
from typing import Protocol

from engine.config import LLMConfig
from engine.memory import cues
from engine.memory.draft import MAX_ITEM_CHARS, Draft, DraftItem
from engine.memory.reltime import resolve_relative
from engine.memory.slugs import FUNCTION_WORDS
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
_SENTENCE_END = re.compile(r"[.!?]+(?=\s)|[。！？]+|\n+")
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
    text = text.strip(" \t,;:—–-、，；：")
    text = re.sub(r"[.!,;:\s。！、，；：]+$", "", text)
    if len(text) > MAX_ITEM_CHARS:
        cut = text[: MAX_ITEM_CHARS - 1]
        text = (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip(" ,;:") + "…"
    if text and text[0].islower():
        text = text[0].upper() + text[1:]
    return text


_CJK = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")
"""One CJK character (kana or Han): those scripts write no spaces, so each character is a token."""
_HAN_OR_KATAKANA = re.compile(r"[\u30a0-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")
_UNICODE_WORD = re.compile(r"[^\W\d_](?:[\w'’-]*[^\W_])?|\d+")


def _tokens(text: str) -> list[str]:
    """The words of ``text`` in any script (lower-cased), each CJK character a word of its own."""
    text = text.lower()
    cjk = _CJK.findall(text)
    return [*_UNICODE_WORD.findall(_CJK.sub(" ", text)), *cjk]


def _content_tokens(text: str) -> set[str]:
    """The words that carry meaning: no function words, no kana (Japanese particles and endings), plural -s
    dropped so "projects" meets "project"."""
    found: set[str] = set()
    for token in _tokens(text):
        if token in FUNCTION_WORDS or (_CJK.fullmatch(token) and not _HAN_OR_KATAKANA.fullmatch(token)):
            continue
        found.add(token[:-1] if len(token) > 3 and token.endswith("s") and token.isascii() else token)
    return found


def _content_words(text: str) -> int:
    """How many content words ``text`` has: words (any script) not function words, plus CJK characters."""
    return sum(1 for token in _tokens(text) if token not in FUNCTION_WORDS)


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


_QUESTION = re.compile(r"[?？]\s*$|(?:吗|嗎|么|麼)\s*[。.]?\s*$|^\s*¿")


def _classify_user(sentence: str) -> tuple[str, str] | None:
    candidate = sentence
    if _QUESTION.search(candidate):
        # A question is not a statement, except a request to be reminded.
        if not _QUESTION_REQUEST.search(_LEADING_FILLER.sub("", candidate)):
            return None
        candidate = _QUESTION_REQUEST.sub("", _LEADING_FILLER.sub("", candidate)).rstrip("?")
    cleaned = clean_statement(candidate)
    if _is_noise(cleaned) or _content_words(cleaned) < 2:
        return None
    kind = cues.classify(cleaned)
    return (kind, cleaned) if kind is not None else None


CONFIRMATION_OVERLAP = 0.4
"""The share of an assistant sentence's content words the person's turn just before must hold for the sentence
to count as a confirmation of what they said (below it, it is only the assistant's claim: dropped)."""


def confirms(sentence: str, user_turn: str) -> bool:
    """Whether an assistant ``sentence`` repeats what the person said in ``user_turn`` (at least
    :data:`CONFIRMATION_OVERLAP` of its content words are in it)."""
    words = _content_tokens(sentence)
    if not words:
        return False
    said = _content_tokens(user_turn)
    return len(words & said) >= CONFIRMATION_OVERLAP * len(words)


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


def _confirmed_part(sentence: str) -> str:
    """What an assistant's confirmation says was done or noted, without its "Done —" / "I'll remember"."""
    text = " ".join(sentence.split())
    remember = _ASSISTANT_REMEMBER.search(text)
    if remember:
        return remember.group("rest")
    match = _ASSISTANT_CONFIRM.match(text)
    return match.group("rest") if match else text


def _dedupe_key(text: str) -> str:
    return " ".join(_tokens(text))


def _in_range(entry: Entry, turn_range: tuple[int, int] | None) -> bool:
    return turn_range is None or turn_range[0] <= entry.line <= turn_range[1]


def draft_extractive(
    transcript: Transcript,
    is_known: Callable[[str], bool] | None = None,
    turn_range: tuple[int, int] | None = None,
    zone: tzinfo | None = None,
) -> Draft:
    """Draft memories from a session without an LLM, deterministically.

    Keeps what a person would keep, from the person's own speech, in any language the cues read (see
    :mod:`engine.memory.cues`): their standing instructions, identity ("call me …"), preferences, decisions,
    plans/todos and facts about their people and projects. An assistant sentence is kept only as a confirmation
    of what the person said just before ("Done — switched to …", "Noted: …", "I'll remember …", with at least
    :data:`CONFIRMATION_OVERLAP` of its words in the person's turn): nothing only the assistant claimed. Drops
    chit-chat, questions, tool traffic, code, ``/commands``, injected text, forwarded messages, duplicates and
    anything ``is_known`` reports as already in memory. Relative times are resolved against the turn's own time
    in ``zone`` (``tomorrow (Fri 13 Nov) at 08:30``, see :mod:`engine.memory.reltime`).

    Args:
        transcript: the session.
        is_known: True for a statement memory already holds (e.g. backed by the search index).
        turn_range: only messages on these JSONL lines (inclusive).
        zone: the clock's zone, the day a turn's time falls on (None: the timestamps' own zone, UTC).

    Returns:
        The draft; items carry their JSONL line and the time they were said.
    """
    items: list[DraftItem] = []
    seen: set[str] = set()
    considered = skipped_known = 0
    user_turn = ""
    for entry in transcript.messages():
        message = entry.message
        if message is None or not _in_range(entry, turn_range) or message.role not in ("user", "assistant"):
            continue
        # Only what was said: no injected metadata, system/exec events, slash commands, forwarded messages.
        text = spoken(message).strip()
        if not text:
            continue
        said_at = entry.time
        for sentence in _sentences(text):
            considered += 1
            if message.role == "user":
                result = _classify_user(sentence)
            else:
                result = _classify_assistant(sentence)
                if result is not None and not confirms(_confirmed_part(sentence), user_turn):
                    result = None  # only the assistant's claim
            if result is None:
                continue
            kind, statement = result
            statement = redact_secrets(statement)
            key = _dedupe_key(statement)
            if not key or key in seen:
                continue
            seen.add(key)
            statement = resolve_relative(statement, said_at, zone)
            if is_known is not None and is_known(statement):
                skipped_known += 1
                continue
            items.append(DraftItem(text=statement, kind=kind, session_id=transcript.session_id, line=entry.line,
                                   said_at=said_at))
        if message.role == "user":
            user_turn = text
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
    zone: tzinfo | None = None,
) -> Draft:
    """Draft memories from a session with the method asked for.

    Args:
        transcript: the session.
        method: ``auto`` (the LLM when one is configured; if it fails, the extractive drafter with a
            warning), ``llm`` (only the LLM) or ``extractive``.
        llm: the ``[llm]`` section.
        workspace: its ``MEMORY.md`` is shown to the LLM as what not to repeat.
        is_known: True for a statement memory already holds (those are dropped and counted).
        zone: the clock's zone: the day each turn was said on, which relative times count from.

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
            return draft_with_llm(transcript, ChatClient.from_config(llm), hint, is_known=is_known, zone=zone)
        except LLMError as exc:
            if method == "llm":
                raise
            draft = draft_extractive(transcript, is_known=is_known, zone=zone)
            return replace(draft, warnings=(*draft.warnings, f"LLM draft failed ({exc}); used the extractive drafter"))
    return draft_extractive(transcript, is_known=is_known, zone=zone)
