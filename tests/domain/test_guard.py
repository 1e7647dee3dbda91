"""The secret guard: each rule of kaeru's guard is detected, clean text stays clean, redaction hides."""

from __future__ import annotations

import pytest

from kaeru.domain.guard import redact, scan

SAMPLES = {
    "openai_key": "sk-" + "A1b2C3d4E5f6G7h8I9j0K1",
    "github_pat": "ghp_" + "a" * 20 + "B1",
    "github_oauth": "gho_" + "b" * 22,
    "github_server": "ghs_" + "c" * 22,
    "github_fine_pat": "github_pat_" + "11ABCDEFG0" + "x" * 20,
    "slack_bot": "xoxb-" + "1234567890-abcdef",
    "slack_user": "xoxp-" + "1234567890-abcdef",
    "aws_access_key": "AKIA" + "ABCDEFGHIJKLMNOP",
    "google_api_key": "AIza" + "Sy" + "A" * 33,
    "private_key_block": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
    "env_secret": "DB_PASSWORD=hunter2hunter2",
}


@pytest.mark.parametrize("rule", sorted(SAMPLES))
def test_each_rule_is_detected_inside_prose(rule: str) -> None:
    """Every rule of the guard finds its secret embedded in ordinary text."""
    secret = SAMPLES[rule]
    findings = scan(f"deploy notes for the staging box\n{secret}\nthanks")
    assert rule in {f.rule for f in findings}


@pytest.mark.parametrize("rule", sorted(set(SAMPLES) - {"env_secret", "private_key_block"}))
def test_prefixed_keys_are_detected_mid_sentence(rule: str) -> None:
    """Prefixed API keys are found wherever they sit in a line of prose."""
    findings = scan(f"deploy notes: use {SAMPLES[rule]} for the staging box")
    assert rule in {f.rule for f in findings}


@pytest.mark.parametrize("rule", sorted(SAMPLES))
def test_findings_never_echo_the_whole_secret(rule: str) -> None:
    """A finding's preview is truncated so reporting it cannot leak it."""
    secret = SAMPLES[rule]
    findings = scan(secret)
    assert findings
    for finding in findings:
        assert len(finding.preview) < len(secret)


@pytest.mark.parametrize(
    "line",
    [
        "export GITHUB_TOKEN=abcdefgh12345",
        "MY_API_KEY = 'abcdefgh12345'",
        'client_secret="s3cr3t-value-xyz"',
        "APIKEY=abcdefghijkl",
        "AWS_ACCESS_KEY=abcdefghijkl",
        "PASSWD=correcthorse",
        "PRIVATE_KEY=abcdefghijkl",
    ],
)
def test_env_secret_markers(line: str) -> None:
    """`KEY=value` lines whose key ends with a secret marker and whose value is long are flagged."""
    assert [f.rule for f in scan(line)] == ["env_secret"]


@pytest.mark.parametrize(
    "text",
    [
        "API_KEY=todo",
        "PASSWORD=short",
        "ask-the-user-about-the-deployment-target-before-merging",
        "TOKENS = abcdefghijklmnop",
        "the secret of good soup is patience",
        "sk-short",
        "AKIA123",
        "ghp_tooShort",
        "The user asked: what token budget should recall use?",
        "",
    ],
)
def test_clean_text_is_not_flagged(text: str) -> None:
    """Placeholders, hyphenated prose and words like `secret`/`token` in sentences are not secrets."""
    assert scan(text) == []


@pytest.mark.parametrize(
    "line",
    [
        "config: DB_PASSWORD=hunter2hunter2",
        "Note: use DB_PASSWORD=hunter2hunter2",
        "a=b DB_PASSWORD=hunter2hunter2",
    ],
)
def test_env_secret_after_other_text_on_the_line(line: str) -> None:
    """A `KEY=value` secret is caught even when the line starts with other `word:`/`word=` text."""
    assert "env_secret" in {f.rule for f in scan(line)}


@pytest.mark.parametrize(
    "line",
    [
        "DB_PASSWORD=hunter2hunter2 for staging",
        'export DB_PASSWORD="correct horse battery"',
    ],
)
def test_env_secret_value_followed_by_words_or_quoted_with_spaces(line: str) -> None:
    """kaeru's rule: the value trimmed of quotes/spaces is ≥ 8 chars, so these lines are secrets."""
    assert "env_secret" in {f.rule for f in scan(line)}


def test_scan_of_none_is_empty() -> None:
    """No text, no findings."""
    assert scan(None) == []


def test_findings_are_in_text_order() -> None:
    """Several secrets are all found, in order of position."""
    text = f"first {SAMPLES['aws_access_key']} then {SAMPLES['github_pat']}"
    findings = scan(text)
    assert [f.rule for f in findings] == ["aws_access_key", "github_pat"]
    assert findings[0].start < findings[1].start


def test_redact_removes_every_secret_and_keeps_the_rest() -> None:
    """Redaction removes each secret and leaves the surrounding words untouched."""
    text = f"use {SAMPLES['openai_key']} and\nDB_PASSWORD=hunter2hunter2\nthen deploy"
    out = redact(text, scan(text))
    assert SAMPLES["openai_key"] not in out
    assert "hunter2hunter2" not in out
    assert out.startswith("use ")
    assert out.endswith("then deploy")


def test_redact_without_findings_is_identity() -> None:
    """Clean text is returned unchanged."""
    assert redact("nothing to hide here", []) == "nothing to hide here"


def test_redact_private_key_block_whole() -> None:
    """A private key block is removed whole, including its body lines."""
    text = "key:\n" + SAMPLES["private_key_block"] + "\nend"
    out = redact(text, scan(text))
    assert "MIIEowIBAAKCAQEA" not in out
    assert out.endswith("\nend")
