"""How PostgreSQL's search copies (decision 16.C1) are read as a server serves: a copy read in the
background never keeps a ranking waiting (16.N1), and a commoner word no copy holds is read for its
ranking from the scope's members alone, when that costs less than SQL's ranking (16.N2). Every
answer is compared with the SQL plan's: the same rows, order, scores, total and counts."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kaeru.api.requests import parse
from kaeru.service import Service
from kaeru.storage.postgres.db import PgDb
from kaeru.storage.postgres.store import PostgresStore
from tests.backends import postgres_admin_url
from tests.storage.test_postgres_common_words import _service
from tests.storage.test_postgres_copies import _compare, _ids, _noted, _query, _wait_for_copies

pytestmark = pytest.mark.skipif(
    not postgres_admin_url(),
    reason="PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset (the README's test command sets it)",
)
np = pytest.importorskip("numpy")


@pytest.fixture
def as_served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """A new vault database and its store as the server opens it (cold copies read in the background)."""
    yield from _service(tmp_path_factory)


def _held(
    store: PostgresStore, monkeypatch: pytest.MonkeyPatch, reading: threading.Event, release: threading.Event
) -> None:
    """Make the store's next background read stop in its first read of the database (its pass over
    the members) until `release`, once `reading` is set."""
    store_warm = store.copies.warm
    assert store_warm is not None

    def held(work: Callable[[PgDb], None]) -> None:
        def paused(db: PgDb) -> None:
            copy = db.copy_columns

            def copy_columns(*args: Any, **named: Any) -> list[Any]:
                if not reading.is_set():
                    reading.set()
                    assert release.wait(60)
                return copy(*args, **named)

            monkeypatch.setattr(db, "copy_columns", copy_columns)
            work(db)

        store_warm(paused)

    store.copies.warm = held


def test_a_background_read_never_keeps_a_newer_ranking_waiting(
    as_served: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a copy is read in the background, a write moves the snapshot: the next search brings
    the copies it holds to its snapshot and is ranked from them, not by SQL after waiting for the
    read; what the read brings is then carried by the next search to its snapshot by the change
    log — with the node written meanwhile — and answers as SQL does."""
    scope = "unlocked"
    store = _noted(as_served, scope, [f"alpha beta delta{i % 8}" for i in range(24)])
    store.copies.sparse_rows = -1
    store.copies.sparse_budget = 0  # no phrase read for one ranking: SQL ranks while it is copied
    first = _compare(store, scope, _query())  # SQL, while alpha's copy is read
    _wait_for_copies(store)
    reading, release = threading.Event(), threading.Event()
    _held(store, monkeypatch, reading, release)
    try:
        _compare(store, scope, _query(words=["delta1"]))  # SQL; delta1's copy is read in the background…
        assert reading.wait(60)  # …and stopped mid-read
        as_served.note(parse("note", {"initiative": f"{scope}-a", "text": "alpha delta1 written meanwhile"}))
        ranked = store.copies.ranked
        after = _compare(store, scope, _query())
        assert store.copies.ranked > ranked  # alpha's copy, brought to the new snapshot, answered
        assert _ids(after) > _ids(first) and len(_ids(after)) == len(_ids(first)) + 1
    finally:
        release.set()
    _wait_for_copies(store)
    ranked = store.copies.ranked
    found = _compare(store, scope, _query(words=["delta1"]))
    assert store.copies.ranked > ranked and store.copies.sparse_reads == 0  # its copy answered
    assert len(_ids(found)) == 4  # the three first noted and the one written during the read
    state = store.copies._state
    assert state is not None and any(key[1] == "delta1" for key in state.values)


def test_a_commoner_word_is_read_from_the_scopes_members(as_served: Service) -> None:
    """A phrase no copy holds, more than `sparse_rows` nodes hold, is read for a ranking from the
    members of the searched scope alone — here fewer rows than the scope has members, though the
    whole vault holds it in more rows than that (SQL's ranking would read every member)."""
    scope = "members"
    store = _noted(as_served, scope, [f"alpha beta{' delta' if i < 4 else ''} {i}" for i in range(10)])
    for i in range(90):
        as_served.note(parse("note", {"initiative": f"{scope}-b", "text": f"gamma{' delta' if i < 12 else ''} {i}"}))
    store.copies.sparse_rows = 1
    _compare(store, scope, _query())  # SQL, while alpha's copy and the scope's members are read
    _wait_for_copies(store)
    reads, rows, ranked = store.copies.sparse_reads, store.copies.sparse_rows_read, store.copies.ranked
    found = _compare(store, scope, _query(words=["alpha", "delta"], match_all=True))
    assert store.copies.ranked > ranked and store.copies.sparse_reads > reads
    assert store.copies.sparse_rows_read - rows == 4  # delta's rows in scope a, not the 12 in b
    assert len(_ids(found)) == 4


def test_a_read_begun_before_the_copies_are_cleared_is_not_kept(
    as_served: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copies are cleared when every node changes at once (a re-index, which the change log does
    not follow): a read in the background begun before is dropped, not installed nor added later."""
    scope = "cleared"
    store = _noted(as_served, scope, [f"alpha beta {i}" for i in range(6)])
    reading, release = threading.Event(), threading.Event()
    _held(store, monkeypatch, reading, release)
    try:
        _compare(store, scope, _query())  # SQL, while alpha's copy is read in the background…
        assert reading.wait(60)  # …stopped mid-read
        store.copies.clear()
    finally:
        release.set()
    _wait_for_copies(store)
    assert store.copies._state is None and store.copies._brought is None
