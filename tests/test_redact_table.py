"""A labelled table of secrets redaction must mask, and of ordinary text it must leave alone.

Session text (search index, excerpts, flush drafts, session notes) is redacted with
:func:`engine.secrets.redact_secrets`; ``doctor`` scans memory files with :func:`find_secrets`. Both run
the same rule set, so every positive here must be masked by the one *and* found by the other, and every
negative left unchanged by both. ``python -m tests.test_redact_table`` prints precision and recall.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from engine.api import MemoryFiles
from engine.config import load_config
from engine.health.checks import scan_secrets
from engine.secrets import find_secrets, redact_secrets

# (label, text, the secret that must not survive)
POSITIVE: list[tuple[str, str, str]] = [
    ("key=value", "password=hunter2secret", "hunter2secret"),
    ("key = value", "password = hunter2secret", "hunter2secret"),
    ("key: quoted", "api_key: 'abcd1234efgh5678'", "abcd1234efgh5678"),
    ("key: value", "passwd: swordfish99", "swordfish99"),
    ("yaml indented", "db:\n  password: hunter2secret\n", "hunter2secret"),
    ("python dict", "{'password': 'hunter2'}", "hunter2"),
    ("python dict api_key", "cfg = {'api_key': 'abcd1234efgh'}", "abcd1234efgh"),
    ("json", '{"password": "hunter2"}', "hunter2"),
    ("json number", '{"pin_password": 482913}', "482913"),
    ("kwargs", 'connect(user="app", password="hunter2secret")', "hunter2secret"),
    ("quoted with space", "DB_PASSWORD='p@ss w0rd!'", "p@ss w0rd!"),
    ("env DB_PASS", "DB_PASS=s3cr3tPa55", "s3cr3tPa55"),
    ("env PGPASSWORD", "PGPASSWORD=pg-secret-99 psql -h db", "pg-secret-99"),
    ("env MYSQL_PWD", "MYSQL_PWD=rootpw123 mysql", "rootpw123"),
    ("env SECRET_KEY", "SECRET_KEY=django-insecure-abc123xyz", "django-insecure-abc123xyz"),
    ("env AWS secret", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("export quoted", 'export GITHUB_TOKEN="tok-notaprefix-123456"', "tok-notaprefix-123456"),
    ("lowercase token=", "token=abcdef1234567890", "abcdef1234567890"),
    ("client_secret", 'client_secret = "0a1b2c3d4e5f"', "0a1b2c3d4e5f"),
    ("auth_token", "auth_token=xyz987654321", "xyz987654321"),
    ("header X-API-Key", "X-API-Key: abcd1234efgh5678", "abcd1234efgh5678"),
    ("query string", "https://api.example.com/v1?access_token=abc123xyz789&page=2", "abc123xyz789"),
    ("url user:pass", "https://user:pass1234@host.example.com/db", "pass1234"),
    ("url postgres", "postgres://admin:s3cret@localhost:5432/app", "s3cret"),
    ("authorization bearer", "Authorization: Bearer abc.def.ghi", "abc.def.ghi"),
    ("authorization basic", "Authorization: Basic dXNlcjpwYXNz", "dXNlcjpwYXNz"),
    ("private_key", 'private_key: "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"', "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"),
    ("secret: value", "secret: s3cr3t-value", "s3cr3t-value"),
    ("in a sentence", "ok so the config has password=hunter2secret in it", "hunter2secret"),
    ("cli flag", "mysql --password=hunter2secret", "hunter2secret"),
    ("url without user", "redis://:password123@cache:6379/0", "password123"),
    ("camelCase", "apiKey: 'x9f3k2'", "x9f3k2"),
    ("no space after colon", "password:hunter2", "hunter2"),
    ("url mongodb+srv", "mongodb+srv://app:pa$$w0rd@cluster0.example.net", "pa$$w0rd"),
    # round 2 (written before the rules were run on them)
    ("jwt bare", "use eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U now",
     "eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    ("openai sk-proj", "key sk-proj-abcdEFGH1234ijklMNOP5678qrst", "sk-proj-abcdEFGH1234ijklMNOP5678qrst"),
    ("anthropic sk-ant", "sk-ant-api03-AbCdEf123456_GhIjKl789-MnOp", "sk-ant-api03-AbCdEf123456_GhIjKl789-MnOp"),
    ("github ghp", "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"),
    ("slack xoxb", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
     "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"),
    ("aws key id", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("gitlab glpat", "glpat-xK3mP9qR2sT5vW8yZ1aB", "glpat-xK3mP9qR2sT5vW8yZ1aB"),
    ("stripe webhook whsec", "whsec_4eC39HqLyjWDarjtT1zdp7dc", "whsec_4eC39HqLyjWDarjtT1zdp7dc"),
    ("pem rsa multi-line", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq\nZx9Kq2\n-----END RSA PRIVATE KEY-----",
     "MIIEowIBAAKCAQEA7bq"),
    ("pem openssh", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
     "b3BlbnNzaC1rZXktdjEAAAAA"),
    ("pgp private key block", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF1xYz8BCADk\n-----END PGP PRIVATE KEY BLOCK-----",
     "lQOYBF1xYz8BCADk"),
    ("pem in a json string", '{"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvgIBADANBgkq\\n-----END PRIVATE KEY-----\\n"}',
     "MIIEvgIBADANBgkq"),
    (".netrc line", "machine api.example.com login mara password s3cr3tNetrc", "s3cr3tNetrc"),
    (".netrc lines", "machine github.com\n  login mara\n  password ghs3cretvalue99\n", "ghs3cretvalue99"),
    ("curl -u", "curl -u admin:s3cr3tpw https://api.example.com/v1", "s3cr3tpw"),
    ("curl --user", "curl --user admin:s3cr3tpw https://api.example.com", "s3cr3tpw"),
    ("mysql -p attached", "mysql -u root -pSECRETpw99 app", "SECRETpw99"),
    ("--password space", "mysql --password hunter2secret -h db", "hunter2secret"),
    ("sshpass -p", "sshpass -p 'hunter2secret' ssh mara@host", "hunter2secret"),
    ("export TOKEN", "export TOKEN=abc123def456ghi", "abc123def456ghi"),
    ("yaml quoted spaces", 'password: "correct horse battery staple"', "correct horse battery staple"),
    ("header in curl -H", 'curl -H "X-Auth-Token: abcdef123456" https://x', "abcdef123456"),
    ("prose: password is", "the wifi password is hunter2secret, ask Ana", "hunter2secret"),
    ("env url password", "DATABASE_URL=postgres://app:pw4db99@db/app", "pw4db99"),
]

# (label, text that must come back unchanged)
NEGATIVE: list[tuple[str, str]] = [
    ("policy prose", "the password policy changed"),
    ("reset prose", "reset my password tomorrow"),
    ("rotation prose", "api_key rotation is on Friday"),
    ("empty value", "password="),
    ("empty after colon", "password: "),
    ("short word after colon", "password: see the vault"),
    ("yes", "token: yes"),
    ("required", "password: required"),
    ("None in code", "password = None"),
    ("null json", '{"password": null}'),
    ("already masked", "password=***"),
    ("placeholder angle", "api_key: <your-api-key>"),
    ("env reference", "API_KEY=$OPENAI_API_KEY"),
    ("env reference braces", "password: ${DB_PASSWORD}"),
    ("code reference", 'token = os.environ["GITHUB_TOKEN"]'),
    ("counts", "max_tokens=2000 and total_tokens: 4096"),
    ("plural", "tokens: 1523 used"),
    ("bypass", "BYPASS=1 COMPASS=north"),
    ("shell pwd", "PWD=/home/mara OLDPWD=/tmp"),
    ("secret santa", "secret_santa: Mara"),
    ("passwordless", "passwordless login is enabled"),
    ("vault prose", "The API key is in 1Password."),
    ("flag file", "Use --password-file /etc/pw"),
    ("plain url", "Visit https://example.com/path?x=1 for details"),
    ("email", "mail mara@example.com about it"),
    ("time", "Meeting at 10:30: bring the slides"),
    ("must be", "The password must be 12 characters"),
    ("variable passed on", "connect(password=password, token=api_token)"),
    ("generated", "secret = secrets.token_hex(16)"),
    ("prompted", "password = getpass.getpass()"),
    ("template", 'password: "{{ vault_password }}"'),
    ("parenthesised none", "refresh_token: (none)"),
    ("word after colon", "access_token: expired"),
    ("bare key", "the key: abc123"),
    ("attribute", "client(api_key=key.value, secret=config.client_secret)"),
    # round 2 (written before the rules were run on them)
    ("prose changed", "I changed my password yesterday and the token expired"),
    ("bare getpass", "password = getpass()"),
    ("token count", "token_count=123"),
    ("max tokens yaml", "max_tokens: 4096"),
    ("secret santa yes", "secret_santa: yes"),
    ("git log sha", "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 fix the token refresh"),
    ("sha256 digest", "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
    ("mysql -p prompts", "mysql -u root -p app"),
    ("mkdir -p", "mkdir -p build/out"),
    ("ssh -p port", "ssh -p 2222 mara@host"),
    ("curl -u env refs", "curl -u $API_USER:$API_PASS https://x"),
    ("curl -u user only", "curl -u mara https://api.example.com"),
    ("password stdin", "echo $PW | docker login --password-stdin"),
    ("token file flag", "gh auth login --with-token < ~/.tok --token-file ~/.tok"),
    ("jwt prose", "a JWT starts with eyJ and has three parts"),
    ("uuid", "session 5a5a5a5a-1111-4222-8333-444455556666 ended"),
    ("sort key", "SORT_KEY=created_at"),
    ("partition key", "PARTITION_KEY=tenant_id"),
    ("hotkey", "HOTKEY=ctrl+shift+k"),
    ("password is required prose", "the password is required for every login"),
    ("password is in vault prose", "the password is in the vault"),
    ("password was reset prose", "her password was reset on Monday"),
    ("netrc prose", "the machine login screen asks for a password every time"),
    ("min length", "PASSWORD_MIN_LENGTH=12"),
    ("token expiry", "TOKEN_EXPIRY=3600"),
]


def masked(text: str, secret: str) -> bool:
    """Redaction removed the secret, and doctor's scanner reports it."""
    return secret not in redact_secrets(text) and bool(find_secrets(text))


def untouched(text: str) -> bool:
    """Neither redaction nor the scanner touches the text."""
    return redact_secrets(text) == text and not find_secrets(text)


def score(redact: Callable[[str], str] = redact_secrets,
          find: Callable[[str], Sequence[object]] = find_secrets) -> tuple[float, float]:
    """(precision, recall) of ``redact`` on the table (a hit is a changed text, found by ``find``)."""
    tp = sum(1 for _, text, secret in POSITIVE if secret not in redact(text) and find(text))
    fp = sum(1 for _, text in NEGATIVE if redact(text) != text or find(text))
    precision = tp / (tp + fp) if tp + fp else 1.0
    return precision, tp / len(POSITIVE)


@pytest.mark.parametrize(("label", "text", "secret"), POSITIVE, ids=[case[0] for case in POSITIVE])
def test_secret_is_masked_and_found(label: str, text: str, secret: str) -> None:
    assert masked(text, secret), redact_secrets(text)


@pytest.mark.parametrize(("label", "text"), NEGATIVE, ids=[case[0] for case in NEGATIVE])
def test_ordinary_text_is_left_alone(label: str, text: str) -> None:
    assert untouched(text), (redact_secrets(text), find_secrets(text))


def test_redaction_is_idempotent() -> None:
    for _, text, _ in POSITIVE:
        once = redact_secrets(text)
        assert redact_secrets(once) == once




def test_doctor_scans_memory_files_with_the_same_rules(tmp_path: Path) -> None:
    """``doctor``'s scan of memory files flags every positive and no negative: one rule set."""
    (tmp_path / "memory").mkdir()
    for number, (_, text, _) in enumerate(POSITIVE):
        (tmp_path / "memory" / f"secret-{number:02d}.md").write_text(text + "\n", encoding="utf-8")
    (tmp_path / "memory" / "ordinary.md").write_text("\n".join(text for _, text in NEGATIVE) + "\n",
                                                     encoding="utf-8")
    flagged = {finding.path for finding in scan_secrets(load_config(workspace=tmp_path))}
    assert flagged == {f"memory/secret-{number:02d}.md" for number in range(len(POSITIVE))}


def test_session_text_memdeck_shows_is_redacted(tmp_path: Path) -> None:
    """A transcript's secrets are masked in every door that shows its text: the title a listing makes of the first
    words (cut after masking, so no half-secret is left), the tool calls ``get`` shows, and a secret that the JSON
    line spells with escapes."""
    sid = "5a5a5a5a-1111-4222-8333-444455556666"
    first = "deploy it, password=hunter2secret and the token is ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 ok"
    events = [
        {"type": "session", "version": 3, "id": sid, "timestamp": "2026-11-27T17:00:00Z"},
        {"type": "message", "id": "m1", "message": {"role": "user", "content": first}},
        {"type": "message", "id": "m2", "message": {"role": "assistant", "content": [{
            "type": "toolCall", "id": "c1", "name": "exec",
            "arguments": {"command": "curl -u admin:s3cr3tpw99 https://api.example.com"}}]}},
    ]
    lines = [json.dumps(event) for event in events]
    lines.append('{"type":"message","id":"m3","message":{"role":"user","content":"pass\\u0077ord=escapedsecret9"}}')
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / f"{sid}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    files = MemoryFiles(load_config(workspace=tmp_path, overrides={"sessions_dir": str(folder),
                                                                   "sources": ["memory", "sessions"]}))
    (info,) = files.list_sessions()
    assert info.title is not None and "hunter2" not in info.title and "password=***" in info.title
    shown = files.get_session(f"sessions/{sid}.jsonl").text
    for secret in ("hunter2secret", "s3cr3tpw99", "escapedsecret9", "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"):
        assert secret not in shown and secret not in (info.title or "")
    assert "curl -u admin:***" in shown


if __name__ == "__main__":
    p, r = score()
    print(f"precision {p:.3f}  recall {r:.3f}  ({len(POSITIVE)} positive, {len(NEGATIVE)} negative)")
