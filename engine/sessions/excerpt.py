"""Session citations (``sessions/…jsonl#L12-L20``) and the readable text ``get`` returns for their lines."""

from __future__ import annotations

from engine.citation import Citation
from engine.citation import parse_citation as _parse
from engine.secrets import redact_secrets
from engine.sessions.model import Entry, Transcript
from engine.sessions.reader import spoken

MAX_EXCERPT_CHARS = 100_000
"""A whole transcript asked for at once is cut here (ask for lines instead)."""
TOOL_TEXT_CHARS = 600
"""How much of a tool call's arguments or a tool result an excerpt shows."""

__all__ = ["Citation", "is_session_path", "parse_citation", "render_excerpt"]


def is_session_path(path: str) -> bool:
    """Whether a path a user or agent gave names a session (``sessions/…``), anchor or not."""
    return path.strip().startswith("sessions/")


def parse_citation(path: str, from_line: int | None = None, lines: int | None = None) -> Citation:
    """Split ``sessions/…jsonl#L12-L20`` (or any citation form :mod:`engine.citation` reads) into its path and
    line range; explicit ``from``/``lines`` win.

    Raises:
        PathRefused: a line anchor that is not a range.
    """
    return _parse(path, from_line, lines)


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _describe(entry: Entry) -> str | None:
    """One entry as a person (or an agent) reads it; None for entries that say nothing (internal data)."""
    message = entry.message
    if message is not None:
        if message.role in ("user", "assistant"):
            words = spoken(message)
            label = "User" if message.role == "user" else "Assistant"
            calls = [f"[tool call {call.name} {_clip(call.arguments, 200)}]" for call in message.tool_calls]
            if not words and not calls:
                return f"{label}: (not speech: injected by OpenClaw, a command or a forwarded message)" \
                    if message.text.strip() else None
            return f"{label}: " + "\n".join(part for part in (words, *calls) if part)
        if message.tool_result is not None:
            name = message.tool_result.tool_name or "tool"
            failed = " (error)" if message.tool_result.is_error else ""
            return f"Tool result {name}{failed}: {_clip(message.text, TOOL_TEXT_CHARS)}"
        return f"{message.raw_role or 'Message'}: {_clip(message.text, TOOL_TEXT_CHARS)}" if message.text else None
    if entry.kind == "compaction":
        return f"Compaction summary: {entry.summary}" if entry.summary else "Compaction"
    if entry.kind == "branch_summary":
        return f"Branch summary: {entry.summary}" if entry.summary else None
    if entry.kind == "custom_message" and entry.detail:
        return f"Note ({entry.custom_type or 'custom'}): {_clip(entry.detail, TOOL_TEXT_CHARS)}"
    if entry.kind == "label" and entry.detail:
        return f"Label: {entry.detail}"
    if entry.kind == "session_info" and entry.detail:
        return f"Session name: {entry.detail}"
    if entry.kind == "model_change" and entry.detail:
        return f"Model: {entry.detail}"
    if entry.kind == "session":
        return f"Session {entry.id or ''} started {entry.timestamp or ''}".rstrip()
    return None


def render_excerpt(transcript: Transcript, from_line: int | None = None, lines: int | None = None) -> str:
    """The entries on JSONL lines ``from_line`` … ``from_line + lines - 1`` as readable text, one block per entry.

    Each block starts ``L<line> ``: user and assistant speech (injected metadata stripped), tool calls and
    results (shortened), summaries, labels. Secrets are masked, as in the search index.
    """
    first = max(1, from_line or 1)
    last = first + lines - 1 if lines else None
    blocks: list[str] = []
    size = 0
    for entry in transcript.entries:
        if entry.line < first or (last is not None and entry.line > last):
            continue
        text = _describe(entry)
        if text is None:
            continue
        body = redact_secrets(text).rstrip()
        head, *rest = body.split("\n")
        block = "\n".join([f"L{entry.line} {head}", *(f"    {line}" if line.strip() else "" for line in rest)])
        size += len(block) + 1
        if size > MAX_EXCERPT_CHARS:
            blocks.append(f"… (cut at {MAX_EXCERPT_CHARS:,} characters: ask for fewer lines with from/lines)")
            break
        blocks.append(block)
    return "\n".join(blocks)
