"""`kaeru token add/list/revoke` as a person uses them, on both backends."""

from __future__ import annotations

import pytest

from tests.backends import VaultSpec
from tests.cli.support import error_object, kaeru

pytestmark = pytest.mark.timeout(300)


def test_add_prints_the_token_once_list_never_shows_it_revoke_ends_it(vault: VaultSpec) -> None:
    added = kaeru(vault, "token", "add", "erin", "--initiatives", "web, infra", "--read-only")
    assert added.code == 0, added.stderr
    token = added.stdout.strip()
    assert token.startswith("kaeru_") and "\n" not in token
    assert "web, infra" in added.stderr and "read-only" in added.stderr

    listed = kaeru(vault, "token", "list")
    assert listed.code == 0 and listed.stdout.startswith("erin\tweb,infra\tread-only\t")
    assert token not in listed.stdout + listed.stderr

    message = error_object(kaeru(vault, "token", "add", "erin", as_json=True), "invalid_argument", 2)
    assert "exists" in message
    error_object(kaeru(vault, "token", "add", "bad name", as_json=True), "invalid_argument", 2)

    assert kaeru(vault, "token", "revoke", "erin").stdout.strip() == "revoked 'erin'"
    error_object(kaeru(vault, "token", "revoke", "erin", as_json=True), "not_found", 2)
    assert kaeru(vault, "token", "list", as_json=True).json() == {"ok": True, "tokens": []}


def test_help_says_how_grants_work(vault: VaultSpec) -> None:
    shown = kaeru(vault, "token", "--help")
    assert shown.code == 0 and "forbidden" in shown.stdout and "KAERU_AUTH_TOKEN" in shown.stdout
