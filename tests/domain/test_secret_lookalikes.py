"""The secret guard's look-alike checks, each with its near-twin.

Each guard of the generic `KEY = value` rule (and of the Basic-auth and private-key rules) keeps a
text a person or an agent writes from being taken for a secret: a comparison, a YAML alias, a CSS
colour, a French label, a class attribute, a value elided with `...`, prose naming a PEM header.
Each pair is that text (must not be flagged: a false positive refuses the note) and its near-twin
that holds a secret (must be flagged, the secret's whole span: a false negative stores it).
"""

from __future__ import annotations

import pytest

from kaeru.domain.guard import redact, scan

#: (what the guard keeps, a text it must let through, its twin holding a secret, that secret)
LOOKALIKES: list[tuple[str, str, str, str]] = [
    (
        "basic-auth-not-base64",
        "the client retries with Authorization: Basic credentials",
        "the client retries with Authorization: Basic ZGVwbG95OlRyMHViNGRvci05OQ",
        "ZGVwbG95OlRyMHViNGRvci05OQ",
    ),
    ("comparison", "if db_password==stored_hash_v2:", "DB_PASSWORD==Xk9pL2vQ7", "=Xk9pL2vQ7"),
    ("regex-match", 'die "weak" unless $password=~m/^\\S{12,}$/;', "password=~Tr0ub4dor99", "~Tr0ub4dor99"),
    ("class-attribute", '<span class="token">function-variable</span>', "<token>q8Zr2LmX9vKp</token>", "q8Zr2LmX9vKp"),
    ("label-with-spaces", '{"password": "Mot de passe"}', '{"password": "M0t-de-passe!"}', "M0t-de-passe!"),
    (
        "sentence-in-capitals",
        'LOGIN_PASSWORD="Mot de passe oublié ? Cliquez ici"',
        'LOGIN_PASSWORD="correct horse battery"',
        "correct horse battery",
    ),
    ("css-colour", ":root { --focus-token: #3366ffcc; }", "DB_PASSWORD=#Tr0ub4dor99", "#Tr0ub4dor99"),
    ("yaml-alias", "staging:\n  api_token: *shared_creds\n", "API_TOKEN=*Tr0ub4dor99", "*Tr0ub4dor99"),
    ("c-pointer", "  auth_token = &session_buf;", "  auth_token = Tr0ub4dor-99x;", "Tr0ub4dor-99x"),
    ("elided-value", "GITHUB_TOKEN=abc123def456...", "DB_PASSWORD=hunter2hunter2.", "hunter2hunter2"),
    ("version", "release token: v2.14.0-rc1", "release token: v2.14.0-rc1Qz8xK", "v2.14.0-rc1Qz8xK"),
    ("version-in-env-file", "CLIENT_TOKEN=3.0.0+build.7\n", "CLIENT_TOKEN=3.0.0+b7Xq9Lm2\n", "3.0.0+b7Xq9Lm2"),
    ("version-bounded", "CI_TOKEN=1.0.0-beta.2", "CI_TOKEN=1.2.3-a1b2a3b4p5b6a7", "1.2.3-a1b2a3b4p5b6a7"),
    ("amount", "Bounty for a leaked secret: $5000000", "Bounty for a leaked secret: Tr0ub4dor99", "Tr0ub4dor99"),
    (
        "words-in-a-sentence",
        "The reset token: single-use-only, it expires in an hour.",
        "The reset token: 4f9a-21c7-88d0, it expires in an hour.",
        "4f9a-21c7-88d0",
    ),
    (
        "pem-header-in-prose",
        "the file must start with -----BEGIN OPENSSH PRIVATE KEY----- and ssh refuses it unless it is chmod 600",
        "the deploy key, cut off by the terminal:\n-----BEGIN OPENSSH PRIVATE KEY-----\n"
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
    ),
    (
        "pem-body-elided",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIE...\n-----END RSA PRIVATE KEY-----",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAq8Zr2LmX9vKp4Tn7\n-----END RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEAq8Zr2LmX9vKp4Tn7",
    ),
]
IDS = [guard for guard, *_ in LOOKALIKES]


@pytest.mark.parametrize(("guard", "clean", "twin", "secret"), LOOKALIKES, ids=IDS)
def test_a_look_alike_is_not_a_secret_and_its_twin_is(guard: str, clean: str, twin: str, secret: str) -> None:
    """The look-alike is let through whole; its twin is flagged and redaction removes the secret."""
    assert scan(clean) == [], guard
    findings = scan(twin)
    assert findings, guard
    redacted = redact(twin, findings)
    assert secret not in redacted
    assert "[REDACTED:" in redacted


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("DB_PASSWORD=hunter2hunter2.", "DB_PASSWORD=[REDACTED:env_secret]."),
        ("The staging password: Tr0ub4dor99. Rotate it monthly.", "The staging password: [REDACTED:env_secret]."),
        ("the api_token is api_token=a8F3kLm29Qz.\n", "the api_token is api_token=[REDACTED:env_secret].\n"),
    ],
    ids=["env-line", "prose", "inline"],
)
def test_a_secret_that_ends_a_sentence_is_caught_without_its_full_stop(text: str, kept: str) -> None:
    """A value followed by a sentence's full stop is a value: it was let through whole (stored under
    `reject`) because a value followed by `.` was taken for code; only `...` marks an elided one."""
    assert redact(text, scan(text)).startswith(kept)


@pytest.mark.parametrize(
    "text",
    [
        "ssh said: no -----BEGIN OPENSSH PRIVATE KEY----- line found in /usr/local/etc/ssh/sshd_config",
        "-----BEGIN PRIVATE KEY-----\n<paste the key here>\n-----END PRIVATE KEY-----",
        "PEM files begin with -----BEGIN EC PRIVATE KEY----- followed by base64 lines of 64 characters",
    ],
    ids=["path", "placeholder", "explanation"],
)
def test_prose_about_a_private_key_header_is_not_a_key(text: str) -> None:
    """A header with no base64 after it (a cut-off key is flagged to the end of the text) is prose."""
    assert scan(text) == []


def test_a_private_key_pasted_on_one_line_is_still_a_key() -> None:
    """Keys squashed to one line (an env var, a JSON string with `\\n`) keep being caught whole."""
    body = "MIIEowIBAAKCAQEAq8Zr2LmX9vKp4Tn7" * 2
    for text in (
        f"KEY='-----BEGIN RSA PRIVATE KEY----- {body} -----END RSA PRIVATE KEY-----'",
        '{"key": "-----BEGIN RSA PRIVATE KEY-----\\n' + body + '\\n-----END RSA PRIVATE KEY-----"}',
    ):
        assert body not in redact(text, scan(text)), text


@pytest.mark.parametrize(
    "text",
    [
        'if [ -z "$CI" ]; then\n    export db_password=correct-horse-battery\nfi',
        "services:\n  db:\n    environment:\n      - db_password=correct-horse-battery\n",
    ],
    ids=["indented-export", "compose-list"],
)
def test_an_indented_env_line_is_an_env_line(text: str) -> None:
    """`export KEY=value` inside a shell block, `- KEY=value` in a compose list: an env line's value
    is a secret even in words (`correct-horse-battery`), as it is at the start of a line; the same
    words after a lower-case key in a sentence are not (`words-in-a-sentence` above)."""
    assert redact(text, scan(text)).count("[REDACTED:env_secret]") == 1
    assert "correct-horse-battery" not in redact(text, scan(text))
