"""Secret redaction for text that leaves a transcript (search index, notes, flushes) and a secret scanner."""

from __future__ import annotations

import re
from dataclasses import dataclass

MASK_MIN_CHARS = 18
"""Tokens this long keep their first 6 and last 4 characters; shorter ones become ``***``."""

PEM_MARKER = "…redacted…"


@dataclass(frozen=True)
class SecretFinding:
    """One secret found in a text.

    Attributes:
        line: 1-based line of the text where the secret starts.
        kind: which pattern found it (``env``, ``json-field``, ``cli-flag``, ``authorization``,
            ``bearer``, ``pem``, ``openai``, ``github``, ``slack``, ``groq``, ``google``,
            ``perplexity``, ``npm``, ``telegram``, ``aws``, ``huggingface``, ``stripe``, ``url-password``).
        preview: the matched text with the secret masked (never the secret itself).
    """

    line: int
    kind: str
    preview: str


@dataclass(frozen=True)
class _Pattern:
    kind: str
    regex: re.Pattern[str]
    group: int  # the capture group holding the secret; 0 for a PEM block


def _p(kind: str, pattern: str, group: int = 1, flags: int = 0) -> _Pattern:
    return _Pattern(kind, re.compile(pattern, flags), group)


# Order is priority: when two patterns claim overlapping text, the earlier one wins.
_PATTERNS: tuple[_Pattern, ...] = (
    _p(
        "pem",
        r"(-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----)[\s\S]+?(-----END [A-Z0-9 ]*PRIVATE KEY-----)",
        group=0,
    ),
    _p("url-password", r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+:([^\s@/]+)@"),
    _p(
        "env", r"\b[A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD)\b\s*[=:]\s*([\"']?)([^\s\"'\\]+)\1", group=2
    ),
    _p(
        "json-field",
        r"\"(?i:api[_-]?key|token|secret|password|passwd|access[_-]?token|refresh[_-]?token|"
        r"client[_-]?secret|private[_-]?key|auth[_-]?token)\"\s*:\s*\"([^\"]+)\"",
    ),
    _p(
        "cli-flag",
        r"--(?:api[-_]?key|token|secret|password|passwd|auth[-_]?token)(?:\s+|=)([\"']?)([^\s\"']+)\1",
        group=2,
    ),
    _p("authorization", r"(?i:authorization)\s*[:=]\s*(?:Bearer|Basic|Token)\s+([A-Za-z0-9._~+/=-]+)"),
    _p("bearer", r"\bBearer\s+([A-Za-z0-9._~+/=-]{18,})"),
    _p("openai", r"\b(sk-[A-Za-z0-9_-]{8,})\b"),
    _p("github", r"\b(gh[pousr]_[A-Za-z0-9]{20,})\b"),
    _p("github", r"\b(github_pat_[A-Za-z0-9_]{20,})\b"),
    _p("slack", r"\b(xox[baprs]-[A-Za-z0-9-]{10,})\b"),
    _p("slack", r"\b(xapp-[A-Za-z0-9-]{10,})\b"),
    _p("groq", r"\b(gsk_[A-Za-z0-9_-]{10,})\b"),
    _p("google", r"\b(AIza[0-9A-Za-z_-]{20,})"),
    _p("perplexity", r"\b(pplx-[A-Za-z0-9_-]{10,})\b"),
    _p("npm", r"\b(npm_[A-Za-z0-9]{10,})\b"),
    _p("huggingface", r"\b(hf_[A-Za-z0-9]{30,})\b"),
    _p("stripe", r"\b((?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,})\b"),
    _p("aws", r"\b((?:AKIA|ASIA)[0-9A-Z]{16})\b"),
    _p("telegram", r"\bbot(\d{6,}:[A-Za-z0-9_-]{20,})\b"),
    _p("telegram", r"\b(\d{6,}:[A-Za-z0-9_-]{30,})\b"),
)


def mask_token(token: str) -> str:
    """Mask one secret: first 6 + ``…`` + last 4 characters when it has 18 or more, else ``***``.

    Args:
        token: the secret.

    Returns:
        The masked form.
    """
    if len(token) < MASK_MIN_CHARS:
        return "***"
    return f"{token[:6]}…{token[-4:]}"


@dataclass(frozen=True)
class _Hit:
    start: int  # span replaced
    end: int
    replacement: str
    kind: str
    match_start: int  # whole match, for previews
    match_end: int


def _pem_replacement(match: re.Match[str]) -> str:
    separator = "\n" if "\n" in match.group(0) else " "
    return f"{match.group(1)}{separator}{PEM_MARKER}{separator}{match.group(2)}"


def _collect(text: str) -> list[_Hit]:
    accepted: list[_Hit] = []
    for pattern in _PATTERNS:
        for match in pattern.regex.finditer(text):
            if pattern.group == 0:
                start, end = match.span()
                replacement = _pem_replacement(match)
            else:
                start, end = match.span(pattern.group)
                if start < 0 or start == end:
                    continue
                replacement = mask_token(match.group(pattern.group))
            if any(start < hit.end and hit.start < end for hit in accepted):
                continue
            accepted.append(_Hit(start, end, replacement, pattern.kind, match.start(), match.end()))
    accepted.sort(key=lambda hit: hit.start)
    return accepted


def _apply(text: str, hits: list[_Hit], offset: int = 0) -> str:
    parts: list[str] = []
    cursor = offset
    for hit in hits:
        parts.append(text[cursor - offset : hit.start - offset])
        parts.append(hit.replacement)
        cursor = hit.end
    parts.append(text[cursor - offset :])
    return "".join(parts)


def redact_secrets(text: str) -> str:
    """Mask API keys, tokens, passwords and private keys in ``text``.

    Covers env-style ``*KEY|TOKEN|SECRET|PASSWORD=…`` assignments, JSON ``"apiKey": "…"`` fields,
    ``--api-key``-style flags, ``Authorization:`` headers and bare ``Bearer`` tokens, PEM private-key
    blocks, well-known token prefixes (``sk-``, ``ghp_``, ``github_pat_``, ``xox?-``, ``xapp-``,
    ``gsk_``, ``AIza``, ``pplx-``, ``npm_``, ``hf_``, Stripe, AWS key ids), Telegram bot tokens and
    passwords in URLs (``scheme://user:pass@host``).

    Args:
        text: any text.

    Returns:
        The text with each secret masked (see :func:`mask_token`); a PEM block keeps only its
        BEGIN and END lines around ``…redacted…``.
    """
    if not text:
        return text
    hits = _collect(text)
    if not hits:
        return text
    return _apply(text, hits)


def find_secrets(text: str) -> list[SecretFinding]:
    """Scan ``text`` for secrets without changing it.

    Args:
        text: any text.

    Returns:
        One finding per secret, in text order; each preview is the matched text with the secret
        masked and cut to 120 characters.
    """
    findings: list[SecretFinding] = []
    if not text:
        return findings
    hits = _collect(text)
    for hit in hits:
        inside = [other for other in hits if hit.match_start <= other.start and other.end <= hit.match_end]
        preview = _apply(text[hit.match_start : hit.match_end], inside, offset=hit.match_start)
        preview = " ".join(preview.split())
        if len(preview) > 120:
            preview = preview[:119] + "…"
        line = text.count("\n", 0, hit.start) + 1
        findings.append(SecretFinding(line=line, kind=hit.kind, preview=preview))
    return findings
