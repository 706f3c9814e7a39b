"""Tests for secret redaction and the secret scanner."""

from __future__ import annotations

import pytest

from engine.secrets import find_secrets, mask_token, redact_secrets

# Fake secrets, long enough to be masked to first 6 + … + last 4.
OPENAI = "sk-proj-AbCdEfGhIjKlMnOpQrSt1234"
GITHUB = "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
GITHUB_PAT = "github_pat_11ABCDEFG0123456789_abcdefghijklmnop"
SLACK = "xoxb-1234567890-0987654321-AbCdEfGhIj"
SLACK_APP = "xapp-1-A0123456789-0123456789012-abcdef"
GROQ = "gsk_AbCdEfGhIjKlMnOpQrStUv"
GOOGLE = "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUv"
PPLX = "pplx-AbCdEfGhIjKlMnOpQrSt"
NPM = "npm_AbCdEfGhIjKlMnOpQrStUvWx"
HF = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345"
STRIPE = "sk_live_AbCdEfGhIjKlMnOpQrSt"
AWS = "AKIAIOSFODNN7EXAMPLE"
TELEGRAM = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
BEARER = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abcdef"


@pytest.mark.parametrize(
    ("text", "secret", "masked", "kind"),
    [
        ("export OPENAI_API_KEY=abc123def456ghi789jkl", "abc123def456ghi789jkl", "abc123…9jkl", "env"),
        ('DB_PASSWORD="hunter2"', "hunter2", "***", "env"),
        ("GITHUB_TOKEN: 'tok_0123456789abcdefghij'", "tok_0123456789abcdefghij", "tok_01…ghij", "env"),
        ('{"apiKey": "a1b2c3d4e5f6g7h8i9j0k1"}', "a1b2c3d4e5f6g7h8i9j0k1", "a1b2c3…j0k1", "json-field"),
        ('{"password":"s3cret"}', "s3cret", "***", "json-field"),
        (
            '{"refresh_token": "rt-0123456789abcdefghijk"}',
            "rt-0123456789abcdefghijk",
            "rt-012…hijk",
            "json-field",
        ),
        ("mytool --api-key zyxwvutsrqponmlkjihg run", "zyxwvutsrqponmlkjihg", "zyxwvu…jihg", "cli-flag"),
        ("mytool --password=short", "short", "***", "cli-flag"),
        ("Authorization: Bearer abc.def", "abc.def", "***", "authorization"),
        (
            "authorization: Basic dXNlcjpwYXNzd29yZDEyMzQ1Njc4",
            "dXNlcjpwYXNzd29yZDEyMzQ1Njc4",
            "dXNlcj…Njc4",
            "authorization",
        ),
        (f"curl -H 'x: Bearer {BEARER}'", BEARER, BEARER[:6] + "…" + BEARER[-4:], "bearer"),
        (f"key {OPENAI} here", OPENAI, "sk-pro…1234", "openai"),
        (f"token {GITHUB}", GITHUB, "ghp_Ab…6789", "github"),
        (f"pat {GITHUB_PAT}", GITHUB_PAT, "github…mnop", "github"),
        (f"slack {SLACK}", SLACK, "xoxb-1…GhIj", "slack"),
        (f"app {SLACK_APP}", SLACK_APP, "xapp-1…cdef", "slack"),
        (f"groq {GROQ}", GROQ, "gsk_Ab…StUv", "groq"),
        (f"google {GOOGLE}", GOOGLE, "AIzaSy…StUv", "google"),
        (f"pplx {PPLX}", PPLX, "pplx-A…QrSt", "perplexity"),
        (f"npm {NPM}", NPM, "npm_Ab…UvWx", "npm"),
        (f"hf {HF}", HF, "hf_AbC…2345", "huggingface"),
        (f"stripe {STRIPE}", STRIPE, "sk_liv…QrSt", "stripe"),
        (f"aws {AWS}", AWS, "AKIAIO…MPLE", "aws"),
        (f"https://api.telegram.org/bot{TELEGRAM}/getMe", TELEGRAM, "123456…Dsaw", "telegram"),
        (f"token is {TELEGRAM}", TELEGRAM, "123456…Dsaw", "telegram"),
        ("postgres://admin:pa55word@db.internal:5432/app", "pa55word", "***", "url-password"),
        (
            "https://bob:aVeryLongPasswordValue123@example.com/x",
            "aVeryLongPasswordValue123",
            "aVeryL…e123",
            "url-password",
        ),
    ],
)
def test_each_pattern_is_masked(text: str, secret: str, masked: str, kind: str) -> None:
    out = redact_secrets(text)
    assert secret not in out
    assert masked in out
    findings = find_secrets(text)
    assert [f.kind for f in findings] == [kind]
    assert secret not in findings[0].preview
    assert masked in findings[0].preview


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("", "***"),
        ("a" * 17, "***"),
        ("abcdefghijklmnopqr", "abcdef…opqr"),
        ("0123456789" * 5, "012345…6789"),
    ],
)
def test_mask_token(token: str, expected: str) -> None:
    assert mask_token(token) == expected


PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\n"
    "aNrBTr0e8NgG4tO9ELtuAjmR7tjVwCC1fB9BbAE6dA2q4n2vUG7bTn9DGCFJeqps\n"
    "-----END RSA PRIVATE KEY-----"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            f"key:\n{PEM}\ndone",
            "key:\n-----BEGIN RSA PRIVATE KEY-----\n…redacted…\n-----END RSA PRIVATE KEY-----\ndone",
        ),
        (
            " ".join(PEM.split()),  # whitespace-normalised (as in session search text): still caught
            "-----BEGIN RSA PRIVATE KEY----- …redacted… -----END RSA PRIVATE KEY-----",
        ),
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
            "-----BEGIN OPENSSH PRIVATE KEY-----\n…redacted…\n-----END OPENSSH PRIVATE KEY-----",
        ),
    ],
)
def test_pem_blocks(text: str, expected: str) -> None:
    assert redact_secrets(text) == expected
    findings = find_secrets(text)
    assert [f.kind for f in findings] == ["pem"]
    assert "MIIE" not in findings[0].preview and "b3Bl" not in findings[0].preview


@pytest.mark.parametrize(
    "text",
    [
        "",
        "I prefer dark mode and tabs over spaces.",
        "The KEY insight is that sorting helps.",  # "KEY" without an assignment
        "Visit https://example.com/path?x=1 for details",
        "ssh user@host.example.com",
        "Meeting at 10:30 with the team: bring the slides",
        "monkey business: bananas",
        "sk-short",  # too short to be an OpenAI key
        "Use --verbose and --token-file ./t.txt",
    ],
)
def test_ordinary_text_is_unchanged(text: str) -> None:
    assert redact_secrets(text) == text
    assert find_secrets(text) == []


def test_overlapping_patterns_mask_once() -> None:
    text = f"OPENAI_API_KEY={OPENAI}"
    assert redact_secrets(text) == "OPENAI_API_KEY=sk-pro…1234"
    assert [f.kind for f in find_secrets(text)] == ["env"]


def test_authorization_header_wins_over_bare_bearer() -> None:
    text = f"Authorization: Bearer {BEARER}"
    assert redact_secrets(text) == f"Authorization: Bearer {BEARER[:6]}…{BEARER[-4:]}"
    assert [f.kind for f in find_secrets(text)] == ["authorization"]


def test_find_secrets_reports_lines_in_order() -> None:
    text = f"first line\nGROQ is {GROQ}\n\n{PEM}\nlast AWS {AWS}"
    findings = find_secrets(text)
    assert [(f.line, f.kind) for f in findings] == [(2, "groq"), (4, "pem"), (8, "aws")]
    for finding in findings:
        for secret in (GROQ, AWS, "MIIEowIBAAKCAQEA"):
            assert secret not in finding.preview


def test_multiple_secrets_in_one_text_all_masked() -> None:
    text = f"a={OPENAI} b={GITHUB} c=https://u:{'p' * 20}@h"
    out = redact_secrets(text)
    for secret in (OPENAI, GITHUB, "p" * 20):
        assert secret not in out
    assert out.count("…") == 3


def test_long_preview_is_cut() -> None:
    text = '{"apiKey": "' + "x" * 500 + '"}'
    (finding,) = find_secrets(text)
    assert len(finding.preview) <= 120
    assert "x" * 20 not in finding.preview
