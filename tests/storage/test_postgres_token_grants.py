"""PostgreSQL only: two transactions changing one token's grants at once never lose either change,
and a renewal racing another change records the expiry it truly replaced.

A change of grants is computed from the grants read in its transaction. On READ COMMITTED a
`kaeru token grant --remove` racing a rename, or two renames, each read the grants before the other
committed and wrote back its own result over the other's: a removal undone, a rename's new name
lost. The token rows are now read locked, so the second waits for the first and computes from what
it wrote. Two real transactions on two connections, the second started while the first holds its
change uncommitted."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kaeru.config import Settings
from kaeru.service import Service, grants, token_grants
from kaeru.storage.base import Session
from kaeru.storage.postgres.store import PostgresStore
from tests.pg import NEEDS_POSTGRES, wait_until_blocked

pytestmark = NEEDS_POSTGRES

NOW = "2030-01-01T00:00:00.000000Z"


@pytest.fixture
def store(url: str) -> Iterator[PostgresStore]:
    """A store whose lock waits outlast a busy test server's: each second transaction here waits on
    the first's token rows until it commits."""
    opened = PostgresStore(url, lock_timeout_ms=20_000)
    yield opened
    opened.close()


def _meanwhile(url: str, first: Callable[[Session], Any], second: Callable[[], Any], store: PostgresStore) -> Any:
    """Run `first` in a write transaction, then `second` in another thread while it is uncommitted,
    and commit `first` once `second` waits on it; `second`'s result."""
    pool = ThreadPoolExecutor(max_workers=1)
    try:
        with store.write() as session:
            first(session)
            later: Future[Any] = pool.submit(second)
            wait_until_blocked(url, timeout=20.0)
        return later.result(timeout=60)
    finally:
        pool.shutdown(wait=True)


def _grants(store: PostgresStore, name: str) -> tuple[str, ...] | None:
    with store.read() as session:
        record = session.token_by_name(name)
    assert record is not None
    return record.initiatives


def test_a_removal_racing_a_rename_keeps_both(store: PostgresStore, url: str) -> None:
    rt = Service(store, Settings(vault_dir=Path("/nonexistent"), database_url=url)).rt
    grants.add_token(rt, "alice", ["web", "old"], False, "owner")

    def rename(session: Session) -> None:  # the rename `web` → `web2`, uncommitted
        token_grants.follow_rename(session, "web", "web2", NOW, "owner")

    before, after = _meanwhile(
        url, rename, lambda: token_grants.grant_token(rt, "alice", (), ("old",), False, "o"), store
    )
    assert _grants(store, "alice") == ("web", "web2")  # the removal did not undo the rename's grant
    assert before.initiatives == ("web", "old", "web2") and after.initiatives == ("web", "web2")  # its true "before"


def test_two_renames_at_once_both_grant_their_new_name(store: PostgresStore, url: str) -> None:
    rt = Service(store, Settings(vault_dir=Path("/nonexistent"), database_url=url)).rt
    grants.add_token(rt, "bob", ["a", "b"], False, "owner")

    def second() -> None:
        with store.write() as session:
            token_grants.follow_rename(session, "b", "b2", NOW, "owner")

    _meanwhile(url, lambda session: token_grants.follow_rename(session, "a", "a2", NOW, "owner"), second, store)
    assert _grants(store, "bob") == ("a", "b", "a2", "b2")


def test_a_renewal_racing_another_records_the_expiry_it_replaced(store: PostgresStore, url: str) -> None:
    rt = Service(store, Settings(vault_dir=Path("/nonexistent"), database_url=url)).rt
    grants.add_token(rt, "carol", ["web"], False, "owner")
    sooner = "2099-01-01T00:00:00.000000Z"

    def renew(session: Session) -> None:  # another renewal, uncommitted
        session.set_token_expiry("carol", sooner)

    later = datetime(2099, 6, 1, tzinfo=UTC)
    _meanwhile(url, renew, lambda: grants.renew_token(rt, "carol", later, "o"), store)
    with store.read() as session:
        [record] = [a for a in session.export_audit(None) if a.operation == "token_renew"]
    [expiry] = [c for c in record.changes if c["field"] == "expires_at"]
    # Its "before" is the expiry the other renewal wrote, not the one read before that committed.
    assert (expiry["before"], expiry["after"]) == (sooner, "2099-06-01T00:00:00.000000Z")
