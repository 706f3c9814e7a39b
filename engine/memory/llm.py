"""A small OpenAI-compatible chat client (stdlib only) and the LLM flush drafter and slug maker."""

from __future__ import annotations

import os
import random
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

from engine.config import LLMConfig
from engine.errors import MemdeckError
from engine.http import HttpClient, HttpError, RetryPolicy, Transport, public_url, validate_timeout
from engine.memory.draft import DRAFT_KINDS, MAX_ITEM_CHARS, Draft, DraftItem
from engine.memory.reltime import resolve_relative
from engine.memory.slugs import clean_slug
from engine.secrets import redact_secrets
from engine.sessions.model import Transcript
from engine.sessions.reader import normalize_session_text, spoken
from engine.textio import clean_note_text

NOTHING_TO_STORE = "NOTHING_TO_STORE"
MESSAGE_CHARS = 2000


class LLMError(MemdeckError):
    """The chat endpoint could not be used; the message says what to check."""


def _endpoint(base_url: str) -> str:
    base = base_url.strip().rstrip("/")
    if base.endswith("/chat/completions"):
        return base
    return f"{base}/chat/completions"


class ChatClient:
    """Calls an OpenAI-compatible ``/chat/completions`` endpoint through :class:`engine.http.HttpClient`.

    Retries 429 and 5xx answers, timeouts and connection errors (a local server may still be starting) with
    exponential backoff plus jitter (or the wait the server asks for); other failures raise :class:`LLMError` at once.
    A timed-out completion is sent again only once (the server may be generating it, and each one is paid for),
    and the whole call ends within ``2 × timeout + max_backoff`` seconds; the error says how long it waited.
    The API key is sent as a Bearer token and never appears in errors or ``repr``.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 30,
        retries: int = 3,
        *,
        api_key_env: str | None = None,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
        temperature: float = 0.2,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        transport: Transport | None = None,
        timeout_retries: int = 1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Configure the client.

        Args:
            base_url: the API root (``…/v1``) or the full ``…/chat/completions`` URL.
            model: the model name sent with each request.
            api_key: sent as ``Authorization: Bearer``; None for servers that need none.
            timeout: seconds per request (positive).
            retries: retries after the first attempt.
            api_key_env: named in the 401/403 message ("check the API key in …").
            backoff: first retry delay in seconds; doubles each retry, plus up to 20 % jitter.
            max_backoff: the longest delay between retries.
            temperature: sampling temperature.
            sleep: waits between retries (tests pass a recorder).
            rng: jitter source.
            transport: sends one request (tests inject a fake); defaults to urllib.
            timeout_retries: retries after a timed-out attempt (within ``retries``).
            clock: monotonic seconds for the call's deadline (tests fake it).

        Raises:
            LLMError: no base_url or model, or a timeout that is not a positive number.
        """
        if not base_url.strip():
            raise LLMError("no LLM base_url configured (set [llm] base_url, e.g. http://127.0.0.1:11434/v1)")
        if not model.strip():
            raise LLMError("no LLM model configured (set [llm] model)")
        try:
            self.timeout = validate_timeout(timeout)
        except HttpError as exc:
            raise LLMError(f"[llm] timeout: {exc.problem}") from None
        self.base_url = base_url.strip()
        self.url = _endpoint(base_url)
        self.model = model
        self._api_key = api_key
        self.retries = max(0, retries)
        self.api_key_env = api_key_env
        self.temperature = temperature
        # One resend of a timed-out completion at most, and a deadline that fits two full attempts and the
        # backoff between them: [llm] timeout = 5 waited 24 s over 4 paid attempts before this bound.
        timeout_retries = max(0, timeout_retries)
        deadline = (min(self.retries, timeout_retries) + 1) * self.timeout + max_backoff
        policy = RetryPolicy(self.retries, backoff, max_backoff, timeout_retries=timeout_retries, deadline=deadline)
        self._http = HttpClient(policy, sleep=sleep, rng=rng, transport=transport, clock=clock)

    @classmethod
    def from_config(cls, config: LLMConfig, environ: Mapping[str, str] | None = None, **kwargs: Any) -> ChatClient:
        """A client for the ``[llm]`` section, reading the key from ``api_key_env`` in ``environ`` (default: the
        process environment); an unset variable sends no key (local servers need none).

        Raises:
            LLMError: the section lacks a base_url or model, or its timeout is not a positive number.
        """
        env = os.environ if environ is None else environ
        key = env.get(config.api_key_env) if config.api_key_env else None
        return cls(config.base_url, config.model, api_key=key or None, timeout=config.timeout,
                   api_key_env=config.api_key_env, **kwargs)

    def __repr__(self) -> str:
        return f"ChatClient(url={self.url!r}, model={self.model!r}, api_key={'set' if self._api_key else 'unset'})"

    def _key_hint(self) -> str:
        if self.api_key_env:
            return f"check the API key in ${self.api_key_env}"
        return "check the API key ([llm] api_key_env)"

    def _explain(self, exc: HttpError) -> str:
        """The transport's failure in ``[llm]`` terms: which setting or key to check."""
        shown = public_url(self.url)
        suffix = f" ({exc.detail})" if exc.detail else ""
        if exc.kind == "status" and exc.status in (401, 403):
            return exc.explain(f"{exc.status} {exc.reason} from {shown}: {self._key_hint()}{suffix}")
        if exc.kind == "status" and exc.status == 404:
            return exc.explain(f"404 from {shown}: check [llm] base_url (it should end in /v1 for most servers) "
                               f"and that model {self.model!r} exists{suffix}")
        if exc.kind == "status" and (exc.status or 0) >= 500:
            return exc.explain(f"server error {exc.problem}")
        if exc.kind == "refused":
            return exc.explain(f"connection refused: is the server running at {public_url(self.base_url)}?")
        if exc.kind == "json":
            return exc.explain(f"{shown} did not answer with JSON: is base_url an OpenAI-compatible API?")
        hint = {"dns": "check [llm] base_url", "config": "check [llm] base_url",
                "timeout": "raise [llm] timeout if the model is slow"}.get(exc.kind, "")
        return exc.explain(hint=hint)

    def complete(self, messages: Sequence[Mapping[str, str]], *, max_tokens: int | None = None) -> str:
        """Send a chat and return the assistant's text.

        Args:
            messages: ``[{"role": "system"|"user"|"assistant", "content": "…"}, …]``.
            max_tokens: cap on the answer's length.

        Returns:
            The answer's text (reasoning in ``<think>…</think>`` removed), stripped.

        Raises:
            LLMError: with a message saying what to check.
        """
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(message) for message in messages],
            "temperature": self.temperature,
            "stream": False,
        }
        if max_tokens is not None:
            payload["max_tokens"] = max_tokens
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        try:
            data = self._http.post_json(self.url, payload, timeout=self.timeout, headers=headers,
                                        label=public_url(self.url))
        except HttpError as exc:
            raise LLMError(self._explain(exc)) from None
        return _answer_text(data, public_url(self.url))


_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.S | re.I)


def _answer_text(data: Any, url: str) -> str:
    try:
        content = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise LLMError(f"unexpected answer from {url}: no choices[0].message.content") from None
    if isinstance(content, list):
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    if not isinstance(content, str):
        raise LLMError(f"empty answer from {url}")
    # What the model says becomes note text: made plain here, before it is drafted, shown or written — no
    # control characters or escape sequences (an OSC 52 clipboard write), no bidi overrides, U+2028/NEL as line
    # breaks (:func:`engine.textio.clean_note_text`; lone surrogates were made U+FFFD by the HTTP client).
    return clean_note_text(_THINK.sub("", content)).strip()


# ---------------------------------------------------------------------------------------------
# Drafting a flush with the LLM

FLUSH_SYSTEM_PROMPT = """\
You read a conversation between a user and an AI assistant and pick out what is worth \
remembering in future conversations with this user.

Worth remembering: the user's preferences and dislikes; facts about the user (name, work, \
home, people in their life); decisions that were made; standing instructions for the assistant; \
plans, appointments, deadlines and todos; facts about the user's projects; changes the assistant \
confirmed it made.
Not worth remembering: greetings, thanks, small talk, one-off questions and their answers, tool \
output, anything only true for this moment, and anything listed under "Already in memory".
Keep only what the user said, or what the assistant confirmed right after the user said it; drop \
anything only the assistant claimed, suggested or explained.
Write each memory in the language the user wrote it in; do not translate.
Each conversation line shows when it was said, e.g. "[12] (Thu 12 Nov 2026 19:54) User: …". Resolve \
relative times against that line's time and keep the words: "tomorrow at 08:30" said on \
Thu 12 Nov becomes "tomorrow (Fri 13 Nov) at 08:30", "next week" becomes \
"next week (Mon 16 – Sun 22 Nov)".
Never invent or guess. Never copy passwords, API keys or other secrets.

Answer with one line per memory, in exactly this form:
- [kind] statement (line N)
kind is one of: preference, identity, decision, instruction, plan, fact, confirmed.
statement is one short sentence (under 200 characters) that makes sense on its own, months \
later, without the conversation; name the user as "User".
N is the number in square brackets at the start of the conversation line it came from.
If nothing is worth remembering, answer exactly: NOTHING_TO_STORE"""

_KIND_ALIASES = {
    "preferences": "preference",
    "likes": "preference",
    "dislike": "preference",
    "person": "fact",
    "people": "fact",
    "project": "fact",
    "facts": "fact",
    "todo": "plan",
    "task": "plan",
    "reminder": "plan",
    "deadline": "plan",
    "rule": "instruction",
    "instructions": "instruction",
    "decisions": "decision",
    "profile": "identity",
}

_ITEM_LINE = re.compile(
    r"^\s*(?:[-*•]|\d+[.)])\s+(?:\[(?P<kind>[A-Za-z _-]{1,20})\]\s*:?\s*)?(?P<text>.+?)\s*"
    r"(?:[(\[]\s*(?:lines?|L)\s*(?P<line>\d+)(?:\s*[-–,]\s*\d+)?\s*[)\]])?\s*\.?\s*$",
    re.I,
)
_TOKEN = re.compile(r"[a-z0-9]{3,}")


@dataclass(frozen=True)
class _ConversationLine:
    line: int
    text: str
    said_at: datetime | None = None


def turn_time(when: datetime | None, zone: tzinfo | None = None) -> str:
    """How a turn's time is shown to the model: ``Thu 12 Nov 2026 19:54`` in ``zone`` (empty when unknown)."""
    if when is None:
        return ""
    if zone is not None and when.tzinfo is not None:
        when = when.astimezone(zone)
    return f"{when:%a} {when.day} {when:%b %Y %H:%M}"


def _conversation(transcript: Transcript, turn_range: tuple[int, int] | None,
                  zone: tzinfo | None = None) -> list[_ConversationLine]:
    lines: list[_ConversationLine] = []
    for entry in transcript.messages():
        message = entry.message
        if message is None or message.role not in ("user", "assistant"):
            continue
        if turn_range is not None and not turn_range[0] <= entry.line <= turn_range[1]:
            continue
        # Only what was said: no injected metadata, system/exec events, slash commands, forwarded messages.
        text = normalize_session_text(redact_secrets(spoken(message)))
        if not text:
            continue
        if len(text) > MESSAGE_CHARS:
            text = text[:MESSAGE_CHARS] + " …"
        label = "User" if message.role == "user" else "Assistant"
        when = entry.time
        stamp = turn_time(when, zone)
        shown = f"[{entry.line}] ({stamp}) {label}: {text}" if stamp else f"[{entry.line}] {label}: {text}"
        lines.append(_ConversationLine(entry.line, shown, when))
    return lines


def _tidy(text: str) -> str:
    text = " ".join(text.split()).strip(" \"'`")
    text = re.sub(r"[.\s]+$", "", text)
    if len(text) > MAX_ITEM_CHARS:
        cut = text[: MAX_ITEM_CHARS - 1]
        text = (cut.rsplit(" ", 1)[0] if " " in cut else cut) + "…"
    return text


def _best_line(statement: str, lines: list[_ConversationLine]) -> int:
    words = set(_TOKEN.findall(statement.lower()))
    best = (0, lines[-1].line)
    for candidate in lines:
        overlap = len(words & set(_TOKEN.findall(candidate.text.lower())))
        if overlap > best[0]:
            best = (overlap, candidate.line)
    return best[1]


def parse_llm_draft(
    answer: str, transcript: Transcript, lines: Sequence[int] | None = None
) -> list[DraftItem]:
    """Parse the model's ``- [kind] statement (line N)`` answer into draft items.

    Lines the answer cites that are not conversation lines are replaced by the line whose words
    best match the statement. ``NOTHING_TO_STORE`` (or no parsable line) gives no items.

    Args:
        answer: the model's text.
        transcript: the session drafted from.
        lines: the JSONL lines the model was shown (defaults to every user/assistant line).

    Returns:
        The items, in the answer's order, de-duplicated.
    """
    shown = _conversation(transcript, None)
    if lines is not None:
        allowed = set(lines)
        shown = [line for line in shown if line.line in allowed]
    if not shown:
        return []
    valid = {line.line for line in shown}
    said = {line.line: line.said_at for line in shown}
    items: list[DraftItem] = []
    seen: set[str] = set()
    for raw in answer.splitlines():
        match = _ITEM_LINE.match(raw)
        if not match:
            continue
        text = _tidy(redact_secrets(match.group("text")))
        if not text or text.upper() == NOTHING_TO_STORE:
            continue
        key = " ".join(_TOKEN.findall(text.lower())) or " ".join(text.lower().split())  # CJK: no ASCII words
        if key in seen:
            continue
        seen.add(key)
        kind = (match.group("kind") or "fact").strip().lower()
        kind = _KIND_ALIASES.get(kind, kind)
        if kind not in DRAFT_KINDS:
            kind = "fact"
        cited = int(match.group("line")) if match.group("line") else None
        line = cited if cited in valid else _best_line(text, shown)
        items.append(DraftItem(text=text, kind=kind, session_id=transcript.session_id, line=line,
                               said_at=said.get(line)))
    return items


def draft_with_llm(
    transcript: Transcript,
    client: ChatClient,
    existing_memory_hint: str = "",
    *,
    is_known: Callable[[str], bool] | None = None,
    turn_range: tuple[int, int] | None = None,
    max_chars: int = 24_000,
    zone: tzinfo | None = None,
) -> Draft:
    """Ask the chat model to draft memories from a session.

    The conversation (user/assistant text only, secrets masked, each line prefixed with its JSONL
    line number) is sent with our own instructions; the newest ``max_chars`` are kept when it is
    longer. The model answers ``- [kind] statement (line N)`` lines or ``NOTHING_TO_STORE``.

    Args:
        transcript: the session.
        client: the chat client.
        existing_memory_hint: memory text the model should not repeat (e.g. ``MEMORY.md``).
        is_known: drops items memory already holds.
        turn_range: only messages on these JSONL lines (inclusive).
        max_chars: conversation budget sent to the model.
        zone: the clock's zone, each turn's time is shown in (``[N] (Thu 12 Nov 2026 19:54) User: …``) and
            relative times the model left unresolved are resolved in (:func:`engine.memory.reltime.resolve_relative`).

    Returns:
        The draft (``method == "llm"``).

    Raises:
        LLMError: the model could not be reached or answered nonsense.
    """
    lines = _conversation(transcript, turn_range, zone)
    if not lines:
        return Draft(items=(), session_id=transcript.session_id, method="llm")
    kept: list[_ConversationLine] = []
    used = 0
    for line in reversed(lines):
        if kept and used + len(line.text) + 1 > max_chars:
            break
        kept.append(line)
        used += len(line.text) + 1
    kept.reverse()
    warnings: tuple[str, ...] = ()
    if len(kept) < len(lines):
        warnings = (
            f"the conversation was long: only its last {len(kept)} of {len(lines)} messages were sent",
        )
    parts = ["Conversation:", *(line.text for line in kept)]
    hint = existing_memory_hint.strip()
    if hint:
        parts += ["", "Already in memory (do not repeat):", redact_secrets(hint[:8000])]
    messages = [
        {"role": "system", "content": FLUSH_SYSTEM_PROMPT},
        {"role": "user", "content": "\n".join(parts)},
    ]
    answer = client.complete(messages)
    items = [replace(item, text=resolve_relative(item.text, item.said_at, zone))
             for item in parse_llm_draft(answer, transcript, [line.line for line in kept])]
    skipped_known = 0
    if is_known is not None:
        fresh = [item for item in items if not is_known(item.text)]
        skipped_known = len(items) - len(fresh)
        items = fresh
    return Draft(
        items=tuple(items),
        session_id=transcript.session_id,
        method="llm",
        considered=len(kept),
        skipped_known=skipped_known,
        warnings=warnings,
    )


SLUG_PROMPT = """\
Name the topic of this conversation as a short file-name slug: 1 to 4 lowercase English words \
joined by hyphens, for example "vendor-pitch" or "api-design". Answer with the slug only."""


def slug_with_llm(text: str, client: ChatClient) -> str:
    """Ask the chat model for a file-name slug describing ``text``.

    Args:
        text: the conversation (its last 6000 characters are sent, secrets masked).
        client: the chat client.

    Returns:
        The slug cleaned as OpenClaw cleans it (may be empty when the model answered nonsense).

    Raises:
        LLMError: the model could not be reached.
    """
    sample = redact_secrets(text[-6000:])
    answer = client.complete(
        [{"role": "system", "content": SLUG_PROMPT}, {"role": "user", "content": sample}], max_tokens=20
    )
    first = next((line for line in answer.splitlines() if line.strip()), "")
    first = re.sub(r"^(?:slug\s*:\s*)", "", first.strip().strip("`\"'* "), flags=re.I)
    return clean_slug(first)


def read_memory_hint(workspace: Path, limit: int = 8000) -> str:
    """The start of ``MEMORY.md`` (or ``memory.md``), to tell the model what is already known."""
    for name in ("MEMORY.md", "memory.md"):
        path = Path(workspace) / name
        try:
            if path.is_symlink() or not path.is_file():
                continue
            with open(path, "rb") as fh:
                return fh.read(limit).decode("utf-8", errors="replace")
        except OSError:
            continue
    return ""
