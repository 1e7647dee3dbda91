"""`kaeru migrate` says what it is about to do to an older vault before doing it (decision 474): a
re-indexing upgrade of a large vault takes a while, and the command printed nothing meanwhile. The
line goes to stderr, so `--json` still prints one document on stdout; a current vault gets none."""

from __future__ import annotations

from tests.backends import VaultSpec
from tests.cli.support import kaeru
from tests.lifecycle.older_vault import older_vault


def test_migrate_says_it_is_upgrading_an_older_vault_first_and_nothing_on_a_current_one(vault: VaultSpec) -> None:
    older_vault(vault)  # its text index due a rebuild, as every vault written before SQLite 020 / PostgreSQL 015
    upgraded = kaeru(vault, "migrate", as_json=True)
    assert upgraded.code == 0, upgraded.stderr
    assert upgraded.json()["ok"] is True, upgraded.stdout
    assert "upgrading the vault (rebuilding its text index)" in upgraded.stderr, upgraded.stderr
    assert len(upgraded.stderr.splitlines()) == 1, upgraded.stderr

    current = kaeru(vault, "migrate")
    assert current.code == 0, current.stderr
    assert "already current" in current.stdout, current.stdout
    assert current.stderr == "", current.stderr
