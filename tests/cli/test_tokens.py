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
    # Said as what it takes: "letters" read as any letter, and `ünï` was refused (CLI probe, session 38).
    accented = kaeru(vault, "token", "add", "ünï", as_json=True)
    assert "ASCII letters" in error_object(accented, "invalid_argument", 2)

    assert kaeru(vault, "token", "revoke", "erin").stdout.strip() == "revoked 'erin'"
    error_object(kaeru(vault, "token", "revoke", "erin", as_json=True), "not_found", 2)
    assert kaeru(vault, "token", "list", as_json=True).json() == {"ok": True, "tokens": []}


def test_revoking_the_last_token_says_that_loopback_opens_again(vault: VaultSpec) -> None:
    """Once the vault holds no token, loopback HTTP serves requests without one (decision 15.K3):
    revoking a leaked last token must not leave the server open without a word."""
    for name in ("fay", "gil"):
        assert kaeru(vault, "token", "add", name).code == 0
    first = kaeru(vault, "token", "revoke", "fay")
    assert first.code == 0 and "warning" not in first.stderr
    last = kaeru(vault, "token", "revoke", "gil", as_json=True)
    assert last.code == 0 and last.json() == {"ok": True, "revoked": "gil"}
    assert "no token is left" in last.stderr and "KAERU_AUTH_TOKEN" in last.stderr
    assert kaeru(vault, "token", "add", "hal").code == 0
    closed = kaeru(vault, "token", "revoke", "hal", KAERU_AUTH_TOKEN="an-admin-token")
    assert closed.code == 0 and "warning" not in closed.stderr  # the admin token keeps it closed


def test_help_says_how_grants_work(vault: VaultSpec) -> None:
    shown = kaeru(vault, "token", "--help")
    assert shown.code == 0 and "forbidden" in shown.stdout and "KAERU_AUTH_TOKEN" in shown.stdout


def test_a_token_for_an_initiative_the_vault_does_not_hold_is_made_with_a_warning(vault: VaultSpec) -> None:
    """A typo in `--initiatives` made a token that sees nothing, without a word (the terminal probe,
    session 48); granting one not made yet stays allowed."""
    assert kaeru(vault, "note", "-i", "webshop", "the cart keeps its items for a day").code == 0
    added = kaeru(vault, "token", "add", "ci", "--initiatives", "websop,webshop")
    assert added.code == 0, added.stderr
    assert "no initiative 'websop' (yet)" in added.stderr and "Did you mean 'webshop'?" in added.stderr
    assert "'webshop' (yet)" not in added.stderr
    as_json = kaeru(vault, "token", "add", "ci2", "--initiatives", "later", as_json=True).json()
    assert as_json["absent"] == ["later"] and as_json["initiatives"] == ["later"]
