"""A call that a PostgreSQL upgrade under way holds up says so. An upgrade holds the tables its
migrations alter until it commits (on a large vault, minutes: decision 493's backfill), and a server
already running met those locks: its call waited out the lock or statement timeout and was told to
"raise the setting", which does not help — the upgrade is what it waits for. When the call times out
while another session holds the migration lock, the refusal says that an upgrade of a kaeru vault in
this database is under way, to retry once it is done; with no one holding that lock, the timeout it
was. Which session held the table is not looked for, and the lock is one for the whole database
(whose other schemas may hold other vaults): the refusal says no more than that.

The upgrade is stood in for by a session holding the migration lock and one of the tables a call
needs, as an upgrade's ALTER TABLE holds it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest

from kaeru.service import Service
from kaeru.storage.factory import open_store
from kaeru.storage.postgres.store import _MIGRATION_LOCK
from tests.backends import VaultSpec
from tests.schema_checked import checked_calls

P = "harbour"


@contextmanager
def _holding_nodes(vault: VaultSpec, *, upgrading: bool) -> Iterator[None]:
    """The `nodes` table locked as an ALTER TABLE locks it, by a session that holds the migration lock
    too when `upgrading`."""
    assert vault.database_url is not None
    with psycopg.connect(vault.database_url, autocommit=True) as conn:
        conn.execute("BEGIN")
        if upgrading:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        conn.execute("LOCK TABLE nodes IN ACCESS EXCLUSIVE MODE")
        try:
            yield
        finally:
            conn.execute("ROLLBACK")


@pytest.mark.parametrize("backend", ["postgres"])
@pytest.mark.parametrize(
    "timeouts",
    [{"busy_timeout_ms": 300}, {"busy_timeout_ms": 0, "pg_statement_timeout_ms": 300}],
    ids=["lock_timeout", "statement_timeout"],
)
def test_a_call_an_upgrade_under_way_held_up_says_an_upgrade_is_under_way(
    vault: VaultSpec, timeouts: dict[str, int]
) -> None:
    settings = vault.settings(**timeouts)
    store = open_store(settings)
    try:
        run = checked_calls(Service(store, settings))

        def refused(text: str) -> dict[str, Any]:
            answer = run("note", initiative=P, text=text)
            assert answer["state"] == "rejected", answer
            [issue] = answer["issues"]
            assert issue["code"] == "unavailable" and issue["retryable"] is True, issue
            return dict(issue)

        assert run("note", initiative=P, text="the ferry leaves at nine")["state"] == "applied"
        with _holding_nodes(vault, upgrading=True):
            issue = refused("the ferry leaves at ten")
        assert "an upgrade of a kaeru vault in this database is under way" in issue["message"], issue
        assert "retry once it is done" in issue["message"], issue
        assert "raise the setting" not in issue["message"], issue
        # A table held by anything but an upgrade: the timeout it was.
        with _holding_nodes(vault, upgrading=False):
            issue = refused("the ferry leaves at eleven")
        assert "under way" not in issue["message"], issue
        # Once released, the call goes through.
        assert run("note", initiative=P, text="the ferry leaves at noon")["state"] == "applied"
    finally:
        store.close()
