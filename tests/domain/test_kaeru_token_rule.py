"""The `kaeru_token` rule: kaeru's own bearer token — `kaeru_` and 32 random bytes in unpadded
base64url, as `kaeru token add` makes it (`service.grants`) — is a secret wherever it stands in a
text (security probe, finding 5: it was caught only after `token:` or `Bearer`), while ids,
hashes and `kaeru_…` words are not."""

from __future__ import annotations

import base64
import hashlib
import uuid

import pytest

from kaeru.domain.guard import redact, rules, scan
from kaeru.service.grants import TOKEN_BYTES, TOKEN_PREFIX


def token(seed: int) -> str:
    """A token of `add_token`'s shape, from fixed bytes (any 32 bytes are a possible token)."""
    raw = hashlib.sha256(f"token {seed}".encode()).digest()[:TOKEN_BYTES]
    return TOKEN_PREFIX + base64.urlsafe_b64encode(raw).decode().rstrip("=")


def test_the_rule_is_in_the_table() -> None:
    assert "kaeru_token" in rules()


def test_every_token_is_caught_alone_and_in_prose() -> None:
    """300 tokens, each alone, in a sentence, assigned and in a URL: found, redacted whole, and
    previewed by the prefix alone."""
    for secret in map(token, range(300)):
        for text in (secret, f"connect with {secret} then", f'KAERU_AUTH_TOKEN="{secret}"', f"/ui?token={secret}&x=1"):
            found = [f for f in scan(text) if f.rule == "kaeru_token"]
            assert found, text
            assert secret not in redact(text, scan(text)), text
            assert all(f.preview == "kaeru_…" for f in found)


@pytest.mark.parametrize(
    "text",
    [
        "kaeru_memory",
        "pip install kaeru_memory and run kaeru_memory.cli",
        "the cookie kaeru_ui_18841 is per port",
        "KAERU_AUTH_TOKEN is unset; KAERU_SECRET_POLICY=reject",
        # A `kaeru_` identifier of words, exactly a token's length: not token-shaped.
        "kaeru_" + "service_mutation_screen_secrets_handle_abcd",
        # One character short of and one past a token: another thing.
        "kaeru_" + "Ab1" * 14,
        "kaeru_" + "Ab1" * 14 + "Xy",
        str(uuid.UUID("01a24884-5836-701f-a491-c6770657fb89")),
        "node 01a24884-5836-701f-a491-c6770657fb89 revision 1-7f4c8d221ce6",
        hashlib.sha256(b"x").hexdigest(),
        "archive.sha256 " + hashlib.sha256(b"y").hexdigest(),
        base64.urlsafe_b64encode(hashlib.sha256(b"z").digest()).decode().rstrip("="),
    ],
)
def test_ordinary_text_is_not_a_kaeru_token(text: str) -> None:
    assert [f.rule for f in scan(text) if f.rule == "kaeru_token"] == []
