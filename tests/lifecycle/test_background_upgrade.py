"""An older vault opened by `kaeru serve` on stdio: upgraded beside serving, never under it.

An agent's client starts the server and waits for `initialize` with a timeout; a migration that
re-indexes a large vault ran before it (23 s at 100k nodes, minutes at a million) and the client gave
up on a server that was working. With `upgrade_in_background` the store opens at once, the upgrade
runs on its own thread, and every transaction waits for it — a bounded time, then a retryable
`unavailable` saying what is under way — so nothing reads or writes the old schema.

The upgrade is held up deterministically by taking the migration lock first, as another process
upgrading the same vault would: SQLite's write lock, PostgreSQL's advisory lock. Before, opening
waited for that lock (and failed at the busy timeout) instead of returning.
"""

from __future__ import annotations

import time

import pytest

from kaeru.errors import Unavailable
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage import migrate
from kaeru.storage.base import Store
from kaeru.storage.factory import open_store
from kaeru.storage.migrate import TEXT_PENDING, VaultTooNew
from tests.backends import VaultSpec
from tests.lifecycle.older_vault import migration_lock, older_vault


def _pending(store: Store) -> bool:
    with store.read() as session:
        return bool(session._db.rows(f"SELECT 1 FROM meta WHERE key = '{TEXT_PENDING}'"))


def test_an_older_vault_opens_at_once_and_every_call_waits_for_its_upgrade(
    vault: VaultSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    older_vault(vault)
    monkeypatch.setattr(migrate, "UPGRADE_WAIT_S", 0.2)
    settings = vault.settings(busy_timeout_ms=200)  # a foreground open would fail at this timeout
    with migration_lock(vault):
        store = open_store(settings, upgrade_in_background=True)  # returns while the lock is held
        try:
            run = build_server(Service(store, settings)).registry.run
            for name, args in (
                ("search", {"initiatives": ["upgrade"], "text": "kingfisher"}),
                ("note", {"initiative": "upgrade", "text": "the heron waits", "request_id": "during"}),
            ):
                refused = run(name, args)
                assert refused["state"] == "rejected", refused
                (issue,) = refused["issues"]
                assert issue["code"] == "unavailable" and issue["retryable"] is True, issue
                assert "being upgraded (rebuilding its text index" in issue["message"], issue
            with pytest.raises(Unavailable):
                store.read()
        except BaseException:
            store.close()
            raise
    try:
        # The lock released, the upgrade goes ahead (retried past the busy timeout) and the calls answer.
        deadline = time.monotonic() + 60
        while True:
            try:
                with store.read():
                    break
            except Unavailable:
                assert time.monotonic() < deadline, "the upgrade did not finish once the lock was free"
        assert not _pending(store)
        found = run("search", {"initiatives": ["upgrade"], "text": "kingfisher"})
        names = [hit["name"] for hit in found["data"]["hits"]]
        assert len(names) == 1 and names[0].startswith("the-kingfisher-nests-by-the"), found
        applied = run("note", {"initiative": "upgrade", "text": "the heron waits", "request_id": "during"})
        assert applied["state"] == "applied" and applied["replayed"] is False, applied
    finally:
        store.close()


def test_a_vault_already_current_opens_as_before(vault: VaultSpec) -> None:
    older_vault(vault)
    open_store(vault.settings()).close()  # the foreground open rebuilds the index
    with migration_lock(vault):
        # Nothing to upgrade: no lock is taken, and reads answer at once, the lock held or not.
        store = open_store(vault.settings(), upgrade_in_background=True)
        try:
            assert not _pending(store)
        finally:
            store.close()


def test_a_vault_from_a_newer_kaeru_is_refused_at_open_all_the_same(vault: VaultSpec) -> None:
    older_vault(vault)
    store = open_store(vault.settings())
    try:
        with store.write() as session:
            session._db.run("INSERT INTO schema_migrations (version, name) VALUES (999, 'from_the_future')")
    finally:
        store.close()
    with pytest.raises(VaultTooNew, match="upgrade kaeru"):
        open_store(vault.settings(), upgrade_in_background=True).close()
