"""Secret redaction for text that leaves a transcript (search index, notes, flushes) and a secret scanner."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass

MASK_MIN_CHARS = 18
"""Tokens this long keep their first 6 and last 4 characters; shorter ones become ``***``."""

PEM_MARKER = "…redacted…"


@dataclass(frozen=True)
class SecretFinding:
    """One secret found in a text.

    Attributes:
        line: 1-based line of the text where the secret starts.
        kind: which pattern found it (``env``, ``json-field``, ``assignment``, ``cli-flag``, ``authorization``,
            ``bearer``, ``pem``, ``netrc``, ``prose``, ``openai``, ``github``, ``gitlab``, ``jwt``, ``slack``, ``groq``,
            ``google``, ``perplexity``, ``npm``, ``telegram``, ``aws``, ``huggingface``, ``stripe``, ``url-password``).
        preview: the matched text with the secret masked (never the secret itself).
    """

    line: int
    kind: str
    preview: str


@dataclass(frozen=True)
class _Pattern:
    kind: str
    regex: re.Pattern[str]
    group: int | str  # the capture group holding the secret; 0 for a PEM block
    check: Callable[[re.Match[str]], bool] | None = None  # does the value look like a secret at all?


def _p(kind: str, pattern: str, group: int | str = 1, flags: int = 0,
       check: Callable[[re.Match[str]], bool] | None = None) -> _Pattern:
    return _Pattern(kind, re.compile(pattern, flags), group, check)


# -- what a value after ``password=`` / ``api_key:`` must look like to be a secret ---------------------------

_NOT_SECRETS = frozenset({
    "none", "null", "nil", "true", "false", "undefined", "required", "optional", "empty", "redacted", "hidden",
    "unset", "n/a", "na", "tbd", "todo", "yes", "no",
})
"""Values that say something about a secret rather than being one (``password = None``, ``token: yes``)."""

_FILLER = frozenset("*.•-_#")
# A reference to where the secret lives, not the secret: a call or subscript (``os.environ["X"]``, ``getpass()``)
# or a settings/environment attribute (``settings.SECRET_KEY``, ``process.env.TOKEN``).
# An attribute path of plain lower-case names (``key.value``, ``config.api_key``) is code too; a token with dots
# (a JWT) has digits or capitals in it.
_CODE_REFERENCE = re.compile(r"[A-Za-z_][\w.]*[(\[].*|(?:os|process|settings|config|self|this|env|ENV)\.[\w.]+"
                             r"|[a-z_]+(?:\.[a-z_]+)+")


def _plausible(value: str, *, quoted: bool, colon: bool) -> bool:
    """Whether ``value`` (what follows a secret's name) can be the secret.

    Not: a placeholder or a masked value (``***``, ``<your-key>``, ``${DB_PASS}``, ``$TOKEN``, ``…``), a word like
    ``None``/``required``, or (unquoted) code that fetches it. After a colon — where prose says
    ``password: see the vault`` — an unquoted value needs a digit or a symbol, or 16 characters.
    """
    value = value.strip()
    if not value or value.lower() in _NOT_SECRETS or "…" in value or set(value) <= _FILLER:
        return False
    if len(value) <= 12 and set(value.lower()) == {"x"}:  # xxxx
        return False
    if value[0] in "$<%{[(":  # ${VAR}, $VAR, <your-api-key>, %(password)s, {{ secret }}, [REDACTED], (none)
        return False
    if quoted:
        return True
    if _CODE_REFERENCE.fullmatch(value) or _SECRET_VARIABLE.fullmatch(value):
        return False
    if colon:
        return len(value) >= 16 or (len(value) >= 4 and not value.isalpha())
    return len(value) >= 3


def _assigned(match: re.Match[str]) -> bool:
    return _plausible(match.group("value"), quoted=match.group("q") is not None, colon=match.group("sep") == ":")


# An environment name that only ends in ``_KEY`` (``SORT_KEY``, ``PARTITION_KEY``) is as often a setting as a
# secret (``STRIPE_KEY``, ``ENCRYPTION_KEY``): its value must look like a key, 8+ characters with a letter and a digit.
_KEY_ONLY = re.compile(r"(?:[A-Z0-9_]*_)?KEY")
_NAMED_SECRET = re.compile(r"SECRET|TOKEN|PASS|PWD|API_?KEY|ACCESS_KEY|PRIVATE_KEY")
_KEY_LIKE = re.compile(r"(?=[^\s]*[0-9])(?=[^\s]*[A-Za-z])\S{8,}")


def _env_assigned(match: re.Match[str]) -> bool:
    if not _assigned(match):
        return False
    name = match.group("name")
    if _KEY_ONLY.fullmatch(name) and _NAMED_SECRET.search(name) is None:
        return _KEY_LIKE.fullmatch(match.group("value").strip()) is not None
    return True


# The value after ``=`` or ``:`` on the same line: quoted (spaces allowed, up to the closing quote) or one bare word, which ends at
# white space, a quote, or what closes an argument list, dict or query parameter.
_VALUE = r"""(?P<sep>[=:])[ \t]*(?:(?P<q>["']))?(?P<value>(?(q)[^"'\n]+?|[^\s"'\\,;&)\]}]+))(?(q)(?P=q))"""

# Secret names in any case: ``password``, ``api_key``, ``X-API-Key``, ``client_secret``, ``auth_token``…, and with
# a prefix only, ``db_pass`` / ``mysql_pwd`` (bare ``pass``/``pwd`` are words and the shell's working folder).
_SECRET_NAME = (
    r"(?:[A-Za-z0-9]+[_.-])*(?i:password|passwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|"
    r"secret[_-]?key|private[_-]?key|client[_-]?secret|auth[_-]?token|access[_-]?token|refresh[_-]?token)"
    r"|(?:[A-Za-z0-9]+[_.-])+(?i:pass|pwd)"
)

# ``password=password``, ``token=api_token``: a variable passed on, not its value.
_SECRET_VARIABLE = re.compile(_SECRET_NAME)

# Tokens with a well-known prefix. They are one regex, so the text is scanned once for all of them (a lookahead
# on the first character skips every other position); the named group that matched is the token.
_TOKENS: tuple[tuple[str, str], ...] = (
    ("openai", r"sk-[A-Za-z0-9_-]{8,}\b"),
    ("github", r"gh[pousr]_[A-Za-z0-9]{20,}\b"),
    ("github", r"github_pat_[A-Za-z0-9_]{20,}\b"),
    ("gitlab", r"glpat-[A-Za-z0-9_-]{20,}"),
    ("jwt", r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ("slack", r"xox[baprs]-[A-Za-z0-9-]{10,}\b"),
    ("slack", r"xapp-[A-Za-z0-9-]{10,}\b"),
    ("groq", r"gsk_[A-Za-z0-9_-]{10,}\b"),
    ("google", r"AIza[0-9A-Za-z_-]{20,}"),
    ("perplexity", r"pplx-[A-Za-z0-9_-]{10,}\b"),
    ("npm", r"npm_[A-Za-z0-9]{10,}\b"),
    ("huggingface", r"hf_[A-Za-z0-9]{30,}\b"),
    ("stripe", r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}\b"),
    ("stripe", r"whsec_[A-Za-z0-9]{20,}\b"),
    ("aws", r"(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("telegram", r"bot(?P<t{n}>\d{6,}:[A-Za-z0-9_-]{20,})\b"),  # the token after ``bot`` (a bot API URL)
    ("telegram", r"\d{6,}:[A-Za-z0-9_-]{30,}\b"),
)
_TOKEN = "token"  # the group of the token pattern: the kind is the one whose named group matched
_TOKEN_REGEX = r"\b(?=[a-zA-Z0-9])(?:" + "|".join(
    pattern.replace("{n}", str(n)) if "{n}" in pattern else f"(?P<t{n}>{pattern})" for n, (_, pattern) in enumerate(_TOKENS)
) + ")"

# Commands whose ``-p`` holds a password: attached for MySQL's clients (a bare ``-p`` prompts), either way for
# ``sshpass`` and registry logins. ``ssh -p 2222`` and ``mkdir -p`` are not.
_MYSQL = re.compile(r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b")
_PASSWORD_P = re.compile(r"\b(?:sshpass|(?:docker|podman|nerdctl|buildah|helm registry) login)\b")


def _on_command_line(match: re.Match[str], command: re.Pattern[str]) -> bool:
    """Whether ``command`` is named earlier on the match's line (within 200 characters)."""
    text = match.string
    start = max(text.rfind("\n", 0, match.start()) + 1, match.start() - 200)
    return command.search(text, start, match.start()) is not None


# Order is priority: when two patterns claim overlapping text, the earlier one wins.
_PATTERNS: tuple[_Pattern, ...] = (
    _p(
        "pem",
        r"(-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----)[\s\S]+?(-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----)",
        group=0,
    ),
    _p("url-password", r"\b[a-zA-Z][a-zA-Z0-9+.-]{0,30}://[^\s:/@]*:([^\s@/]+)@"),
    _p(
        "env",
        r"\b(?P<name>[A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE)|[A-Z0-9_]*_(?:PASS|PWD|KEY)|KEY)\b[ \t]*"
        + _VALUE,
        group="value", check=_env_assigned,
    ),
    _p(
        "json-field",
        r"\"(?i:api[_-]?key|token|secret|password|passwd|access[_-]?token|refresh[_-]?token|"
        r"client[_-]?secret|private[_-]?key|auth[_-]?token)\"\s*:\s*\"([^\"]+)\"",
        check=lambda match: _plausible(match.group(1), quoted=True, colon=True),
    ),
    # key=value, key: value, 'key': 'value' (Python dicts, YAML, kwargs, query strings) with the name in any case.
    _p("assignment", r"(?<![\w.-])(?:(?P<kq>[\"']))?(?:" + _SECRET_NAME + r")(?(kq)(?P=kq))[ \t]*" + _VALUE,
       group="value", check=_assigned),
    _p(
        "cli-flag",
        r"--(?:api[-_]?key|token|secret|password|passwd|auth[-_]?token)(?:\s+|=)([\"']?)([^\s\"']+)\1",
        group=2,
    ),
    # curl/wget ``-u user:pass``, ``--user user:pass``; ``mysql -pSECRET`` (attached: a bare ``-p`` prompts);
    # ``sshpass -p pw`` and ``docker login -p pw``; a ``.netrc`` entry (``machine h login u password p``).
    _p("cli-flag", r"(?<!\S)(?:-u|--user)[ \t]+(?P<q>[\"']?)[^\s:\"'$]+:(?P<value>[^\s\"'@]+)(?P=q)",
       group="value", check=lambda match: _plausible(match.group("value"), quoted=False, colon=False)),
    _p("cli-flag", r"(?<!\S)-p(?P<value>[^\s\"']+)", group="value",
       check=lambda match: _on_command_line(match, _MYSQL) and _plausible(match.group("value"), quoted=False,
                                                                          colon=False)),
    _p("cli-flag", r"(?<!\S)-p[ \t]*(?P<q>[\"']?)(?P<value>[^\s\"']+)(?P=q)", group="value",
       check=lambda match: _on_command_line(match, _PASSWORD_P) and _plausible(match.group("value"), quoted=True,
                                                                               colon=False)),
    _p("netrc", r"\b(?:machine[ \t]+\S+|default)\s+login\s+\S+\s+password\s+(?P<value>\S+)",
       group="value", check=lambda match: _plausible(match.group("value"), quoted=False, colon=False)),
    _p("authorization", r"(?i:authorization)\s*[:=]\s*(?:Bearer|Basic|Token)\s+([A-Za-z0-9._~+/=-]+)"),
    _p("bearer", r"\bBearer\s+([A-Za-z0-9._~+/=-]{18,})"),
    _p("token", _TOKEN_REGEX, group=_TOKEN),
    # Last, prose: ``the wifi password is hunter2secret`` (a value with a digit or a symbol, as after a colon).
    _p("prose", r"(?i:\b(?:password|passcode|passphrase|pin|api[ _-]?key|token)[ \t]+(?:is|was)[ \t]+)"
       r"(?P<q>[\"']?)(?P<value>[^\s\"',;)]+?)(?P=q)(?=[\s\"',;.)]|$)",
       group="value", check=lambda match: _plausible(match.group("value"), quoted=False, colon=True)),
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
    accepted: list[_Hit] = []  # sorted by start
    starts: list[int] = []
    for pattern in _PATTERNS:
        for match in pattern.regex.finditer(text):
            kind = pattern.kind
            if pattern.group == 0:
                start, end = match.span()
                replacement = _pem_replacement(match)
            elif pattern.group == _TOKEN:
                name = match.lastgroup or ""
                kind = _TOKENS[int(name[1:])][0]
                start, end = match.span(name)
                replacement = mask_token(match.group(name))
            else:
                start, end = match.span(pattern.group)
                if start < 0 or start == end or (pattern.check is not None and not pattern.check(match)):
                    continue
                replacement = mask_token(match.group(pattern.group))
            # Accepted spans never overlap, so sorted by start their ends are sorted too: only the neighbours
            # of the insertion point can overlap (a bisect, not a scan: a long transcript has many hits).
            at = bisect.bisect_left(starts, start)
            if (at < len(starts) and starts[at] < end) or (at > 0 and accepted[at - 1].end > start):
                continue
            starts.insert(at, start)
            accepted.insert(at, _Hit(start, end, replacement, kind, match.start(), match.end()))
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

    Covers env-style ``*KEY|TOKEN|SECRET|PASSWORD|_PASS|_PWD=…`` assignments, JSON ``"apiKey": "…"`` fields,
    ``password=…``, ``api_key: '…'``, ``{'password': '…'}`` and ``X-API-Key: …`` in any case (a value that is a
    placeholder, ``None`` or code that fetches the secret is left alone; see :func:`_plausible`),
    ``--api-key``-style flags, ``curl -u user:pass``, ``mysql -pSECRET``, ``sshpass -p``/``docker login -p``,
    ``.netrc`` entries, ``the password is …`` in prose, ``Authorization:`` headers and bare ``Bearer`` tokens,
    PEM private-key blocks (PGP's too), JWTs, well-known token prefixes (``sk-``, ``ghp_``, ``github_pat_``,
    ``glpat-``, ``xox?-``, ``xapp-``, ``gsk_``, ``AIza``, ``pplx-``, ``npm_``, ``hf_``, Stripe, AWS key ids),
    Telegram bot tokens and passwords in URLs (``scheme://user:pass@host``).

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
