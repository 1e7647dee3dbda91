"""`kaeru token add --initiatives` refuses a grant that names no initiative, or one longer than an
initiative name can be, with exit 2 and words that say what to give, and makes no token. Two CLI
runs a case (cheap: forked), no server; both backends."""

from __future__ import annotations

import pytest

from tests.backends import VaultSpec
from tests.cli.support import kaeru


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (", ,", "give at least one initiative, or none for all of them"),
        ("web," + "x" * 129, "an initiative of a grant must be 1–128 characters"),
    ],
)
def test_a_grant_of_no_initiative_or_of_too_long_a_name_is_refused_and_no_token_made(
    vault: VaultSpec, given: str, said: str
) -> None:
    refused = kaeru(vault, "token", "add", "erin", "--initiatives", given, as_json=True)
    assert refused.code == 2, (refused.stdout, refused.stderr)
    assert refused.json()["error"] == {"code": "invalid_argument", "message": said}
    listed = kaeru(vault, "token", "list", as_json=True)
    assert listed.code == 0 and listed.json()["tokens"] == []
