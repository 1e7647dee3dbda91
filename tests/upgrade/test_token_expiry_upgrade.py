"""A token made before tokens could expire (SQLite migration 023, PostgreSQL 021) goes on working
after the upgrade, and never expires until its owner gives it an expiry.

The vault is the upgrade fixture of the newest schema without the column (written by the code of
that version, tests/data/upgrade); the token row is what that code's `kaeru token add` stored."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kaeru.service import Service, grants
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec
from tests.upgrade.old_vaults import BEFORE, Query, columns, copied_fixture

TOKEN = "kaeru_made-before-tokens-could-expire"
#: The row that code stored: the sha256 of the token, every initiative, read and write.
ROW = (
    "INSERT INTO {table} (name, digest, initiatives, read_only, created_at) "
    f"VALUES ('olga', '{hashlib.sha256(TOKEN.encode()).hexdigest()}', NULL, {{false}}, '2026-05-01T09:00:00.000000Z')"
)


@pytest.fixture(name="old_vault", params=sorted(BEFORE))
def _old_vault(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VaultSpec]:
    """A copy of the fixture's vault holding a token of the old code, not yet opened by this code."""

    def token(query: Query, schema: str) -> None:
        assert "expires_at" not in columns(query, schema, "tokens")
        query(ROW.format(table=f"{schema}tokens", false="FALSE" if schema else 0))

    with copied_fixture(request.param, tmp_path, token) as spec:
        yield spec


def test_a_token_made_before_expiry_existed_never_expires_after_the_upgrade(old_vault: VaultSpec) -> None:
    store = open_store(old_vault.settings())  # the pending migrations run here
    try:
        service = Service(store, old_vault.settings())
        [olga] = grants.list_tokens(service.rt)
        assert (olga.name, olga.expires_at) == ("olga", None)
        accepted = grants.verify(store, TOKEN, datetime(9999, 12, 31, tzinfo=UTC))
        assert accepted is not None and accepted.name == "olga"

        now = service.rt.now()
        renewed = grants.renew_token(service.rt, "olga", now + timedelta(days=7), "owner")
        assert renewed.digest == olga.digest
        assert grants.verify(store, TOKEN, now) is not None
        assert grants.check(store, TOKEN, now + timedelta(days=8)) == grants.Expired("olga", renewed.expires_at or "")
    finally:
        store.close()
