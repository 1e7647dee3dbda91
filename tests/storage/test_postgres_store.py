"""PostgreSQL-only behaviour: concurrency without application locks, error translation, migrations
under concurrent start-up, and literal (never syntactic) full-text terms.

The behavioural contract itself is covered by the suite running on both backends; these tests pin
what only exists here: several transactions really running at once.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kaeru.api.requests import parse
from kaeru.config import Settings
from kaeru.domain.model import Edge, EdgeType, Node
from kaeru.errors import InvalidArgument, RevisionConflict, SlotConflict, Unavailable
from kaeru.service import Service
from kaeru.storage.base import RequestKey, SlotState
from kaeru.storage.migrate import load_migrations
from kaeru.storage.postgres.store import PostgresSession, PostgresStore, lexeme, term, tsquery_literal
from tests.backends import postgres_admin_url
from tests.pg import wait_until_blocked

pytestmark = pytest.mark.skipif(
    not postgres_admin_url(),
    reason="PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset (the README's test command sets it)",
)

NOW = "2030-01-01T00:00:00.000000Z"


@pytest.fixture
def store(url: str) -> Iterator[PostgresStore]:
    opened = PostgresStore(url, lock_timeout_ms=5_000)
    yield opened
    opened.close()


def _note(store: PostgresStore, url: str, text: str = "a note") -> Node:
    service = Service(store, Settings(vault_dir=Path("/nonexistent"), database_url=url))
    outcome, _ = service.note(parse("note", {"initiative": "pg", "text": text}))
    assert outcome.primary is not None
    with store.read() as session:
        node = session.get_node(outcome.primary.id)
    assert node is not None
    return node


def _in_second_transaction(store: PostgresStore, work: Callable[[PostgresSession], Any]) -> Future[Any]:
    def run() -> Any:
        with store.write() as session:
            return work(session)

    return ThreadPoolExecutor(max_workers=1).submit(run)


# --- literal terms --------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(token=st.text(min_size=1, max_size=20).filter(lambda t: "\x00" not in t))
def test_any_token_is_one_literal_lexeme_never_query_syntax(token: str) -> None:
    """Quotes, backslashes, `&|!():*<->` and spaces in a term stay data in both tsvector and tsquery."""
    admin = postgres_admin_url()
    assert admin is not None
    with psycopg.connect(admin, autocommit=True) as conn:
        lexemes, hit, prefix_hit, miss = conn.execute(
            "SELECT tsvector_to_array(%(v)s::tsvector), %(v)s::tsvector @@ %(q)s::tsquery, "
            "%(v)s::tsvector @@ %(p)s::tsquery, %(v)s::tsvector @@ %(other)s::tsquery",
            {
                "v": lexeme(term(token)) + ":1A",
                "q": tsquery_literal([token], match_all=True, prefix=False),
                "p": tsquery_literal([token[:1]], match_all=False, prefix=True),
                "other": tsquery_literal([token + "x"], match_all=False, prefix=False),
            },
        ).fetchone()
    assert lexemes == [term(token)]
    assert hit and prefix_hit and not miss


def test_field_weights_restrict_matches_like_fts5_columns() -> None:
    admin = postgres_admin_url()
    assert admin is not None
    vector = "'alpha':1A 'beta':2C 'gamma':3D"
    with psycopg.connect(admin, autocommit=True) as conn:

        def matches(tokens: list[str], fields: tuple[str, ...]) -> bool:
            query = tsquery_literal(tokens, match_all=False, prefix=False, fields=fields)
            row = conn.execute("SELECT %s::tsvector @@ %s::tsquery", (vector, query)).fetchone()
            return bool(row and row[0])

        assert matches(["beta"], ("tags",))
        assert not matches(["alpha"], ("tags",))
        assert matches(["gamma"], ("body", "description"))
        assert matches(["alpha", "gamma"], ("name", "description", "body", "tags"))


# --- concurrency ----------------------------------------------------------------------------------


def test_a_free_slot_taken_by_two_transactions_has_one_holder(store: PostgresStore, url: str) -> None:
    first, second = _note(store, url, "first holder"), _note(store, url, "second holder")
    with store.read() as session:
        initiative = session.initiative_by_name("pg")
    assert initiative is not None

    def take(holder: Node) -> Callable[[PostgresSession], None]:
        def work(session: PostgresSession) -> None:
            assert session.get_slot(initiative.id, "handoff", for_update=True) is None
            session.put_slot(SlotState(initiative.id, "handoff", holder.id, 1, f"1-{holder.id}", NOW))

        return work

    with store.write() as session:
        take(first)(session)
        loser = _in_second_transaction(store, take(second))
        wait_until_blocked(url)
    with pytest.raises(SlotConflict):
        loser.result(timeout=10)
    with store.read() as session:
        slot = session.get_slot(initiative.id, "handoff")
        history = session.slot_history(initiative.id, "handoff")
    assert slot is not None and slot.node_id == first.id
    assert [s.node_id for s in history] == [first.id]


def test_a_request_id_claimed_concurrently_is_answered_from_the_first(store: PostgresStore, url: str) -> None:
    key = RequestKey("pg", "note", "req-1")
    with store.write() as session:
        assert session.begin_request(key, "hash", NOW) is None
        waiter = _in_second_transaction(store, lambda s: s.begin_request(key, "hash", NOW))
        wait_until_blocked(url)
        session.finish_request(key, {"state": "applied"})
    stored = waiter.result(timeout=10)
    assert stored is not None and stored.args_hash == "hash" and stored.response == {"state": "applied"}


def test_a_request_claim_rolled_back_frees_the_key(store: PostgresStore, url: str) -> None:
    key = RequestKey("pg", "note", "req-2")
    with pytest.raises(RuntimeError), store.write() as session:
        assert session.begin_request(key, "hash", NOW) is None
        waiter = _in_second_transaction(store, lambda s: s.begin_request(key, "other", NOW))
        wait_until_blocked(url)
        raise RuntimeError("the first call fails")
    assert waiter.result(timeout=10) is None  # the second call now owns the key


def test_an_initiative_created_concurrently_is_one_row(store: PostgresStore, url: str) -> None:
    with store.write() as session:
        mine = session.create_initiative("shared", NOW)
        theirs = _in_second_transaction(store, lambda s: s.create_initiative("shared", NOW))
        wait_until_blocked(url)
    assert theirs.result(timeout=10).id == mine.id
    with store.read() as session:
        assert [i.name for i in session.all_initiatives()].count("shared") == 1


def test_a_locked_node_waits_and_then_shows_the_committed_revision(store: PostgresStore, url: str) -> None:
    node = _note(store, url)
    with store.write() as session:
        locked = session.get_node(node.id, for_update=True)
        assert locked is not None
        reader = _in_second_transaction(store, lambda s: s.get_node(node.id, for_update=True))
        wait_until_blocked(url)
        session.put_node(locked.evolve(rev_no=2, revision="2-x", recorded_at=NOW), request_id=None, actor="t")
    seen = reader.result(timeout=10)
    assert seen is not None and seen.rev_no == 2


def test_a_stale_node_write_is_a_revision_conflict_not_a_lost_update(store: PostgresStore, url: str) -> None:
    node = _note(store, url)
    with store.write() as session:
        session.put_node(node.evolve(rev_no=2, revision="2-a", recorded_at=NOW), request_id=None, actor="t")
    with pytest.raises(RevisionConflict), store.write() as session:
        session.put_node(node.evolve(rev_no=2, revision="2-b", recorded_at=NOW), request_id=None, actor="t")
    with store.read() as session:
        assert [e.node.revision for e in session.revision_log(node.id)][-1] == "2-a"


def test_the_same_edge_added_twice_concurrently_is_a_conflict(store: PostgresStore, url: str) -> None:
    a, b = _note(store, url, "source"), _note(store, url, "target")
    edge = Edge(a.id, b.id, EdgeType.REFERS_TO, 0.5, 1, NOW, NOW)
    with store.write() as session:
        session.put_edge(edge)
        twin = _in_second_transaction(store, lambda s: s.put_edge(edge))
        wait_until_blocked(url)
    with pytest.raises(RevisionConflict):
        twin.result(timeout=10)


# --- errors ---------------------------------------------------------------------------------------


def test_a_lock_wait_past_the_timeout_is_unavailable(url: str) -> None:
    store = PostgresStore(url, lock_timeout_ms=100)
    try:
        node = _note(store, url)
        with store.write() as session:
            session.get_node(node.id, for_update=True)
            blocked = _in_second_transaction(store, lambda s: s.get_node(node.id, for_update=True))
            with pytest.raises(Unavailable) as caught:
                blocked.result(timeout=10)
        assert caught.value.retryable
    finally:
        store.close()


def test_an_unreachable_server_is_unavailable_and_the_password_stays_secret() -> None:
    with pytest.raises(Unavailable) as caught:
        PostgresStore("postgresql://kaeru:s3cr3t-pw@127.0.0.1:1/nowhere", connect_timeout_s=1)
    assert "s3cr3t-pw" not in caught.value.message


def test_a_wrong_address_or_database_is_said_at_once_with_its_reason(url: str) -> None:
    """A refused connection or a database that does not exist is reported with libpq's reason,
    not as the pool's timeout after 30 s of silent retries (the default timeout is kept here)."""
    with pytest.raises(Unavailable) as refused:
        PostgresStore("postgresql://kaeru:s3cr3t-pw@127.0.0.1:1/nowhere")
    assert "Connection refused" in refused.value.message and "s3cr3t-pw" not in refused.value.message
    assert refused.value.retryable, "a server that does not answer may come up: a stdio server waits for it"
    missing = urlsplit(url)._replace(path=f"{urlsplit(url).path}_never_created").geturl()
    with pytest.raises(Unavailable) as unknown:
        PostgresStore(missing)
    assert "does not exist" in unknown.value.message and "_never_created" in unknown.value.message
    assert not unknown.value.retryable, "waiting does not make a database (decision 445)"
    password = psycopg.conninfo.conninfo_to_dict(url).get("password")
    assert not password or str(password) not in unknown.value.message


def test_describe_redacts_the_password(store: PostgresStore) -> None:
    info = store.describe()
    assert info["backend"] == "postgres"
    password = psycopg.conninfo.conninfo_to_dict(store.url).get("password")
    if password:
        assert str(password) not in str(info)


def test_a_connection_killed_between_calls_is_replaced(store: PostgresStore, url: str) -> None:
    node = _note(store, url)
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()"
        )
    with store.read() as session:
        assert session.get_node(node.id) is not None


def test_text_postgresql_cannot_store_is_an_invalid_argument(store: PostgresStore, url: str) -> None:
    node = _note(store, url)
    with pytest.raises(InvalidArgument), store.write() as session:
        session.put_node(node.evolve(rev_no=2, body="nul \x00 inside", recorded_at=NOW), request_id=None, actor="t")


def _unspaced(count: int) -> str:
    """Random CJK ideographs: a text in an unspaced script, whose pieces are nearly all distinct."""
    rng = random.Random(7)
    return "".join(chr(rng.randrange(0x4E00, 0x9FFF)) for _ in range(count))


@pytest.mark.parametrize(
    "huge",
    [
        " ".join(f"{i:06d}" + "z" * 58 for i in range(20_000)),  # 20k distinct long words: ~1.3 MB of tsvector
        _unspaced(120_000),  # nearly every two-character piece distinct, each 6 bytes of UTF-8
    ],
    ids=["distinct-numbers", "unspaced-script"],
)
def test_a_body_whose_words_overflow_a_tsvector_is_stored_whole_with_the_words_that_fit(
    store: PostgresStore, url: str, huge: str
) -> None:
    """Stored, not refused (`domain.indexroom`): each tsvector holds as many words as fit in its 1 MB."""
    node = _note(store, url)
    with store.write() as session:
        session.put_node(node.evolve(rev_no=2, body=huge, recorded_at=NOW), request_id=None, actor="t")
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT body, length(tsv), length(stv) FROM nodes WHERE id = %s AND NOT retracted "
            "ORDER BY rev_no DESC LIMIT 1",
            (node.id,),
        ).fetchone()
    assert row is not None and row[0] == huge
    assert 10_000 < row[1] < 120_000 and row[2] > 10_000


# --- migrations -----------------------------------------------------------------------------------


def test_stores_opening_a_blank_database_at_once_migrate_it_once() -> None:
    from tests.pg import blank_database, drop_database

    blank = blank_database()
    try:
        with ThreadPoolExecutor(max_workers=4) as pool:
            stores = list(pool.map(lambda _: PostgresStore(blank, max_size=2), range(4)))
        try:
            secrets = set()
            for opened in stores:
                with opened.read() as session:
                    secrets.add(session.vault_secret())
            assert len(secrets) == 1
            shipped = [m.version for m in load_migrations("kaeru.storage.postgres.migrations")]
            assert [v for v, _ in stores[0].applied_migrations()] == shipped
        finally:
            for opened in stores:
                opened.close()
    finally:
        drop_database(blank)


def test_each_database_has_its_own_vault_secret_kept_across_opens(store: PostgresStore, url: str) -> None:
    from tests.pg import drop_database, fresh_database

    with store.read() as session:
        mine = session.vault_secret()
    again = PostgresStore(url)
    other_url = fresh_database()
    other = PostgresStore(other_url)
    try:
        with again.read() as session:
            assert session.vault_secret() == mine
        with other.read() as session:
            assert session.vault_secret() != mine
    finally:
        again.close()
        other.close()
        drop_database(other_url)


def test_reads_are_one_snapshot(store: PostgresStore, url: str) -> None:
    node = _note(store, url)
    changed = threading.Event()
    with store.read() as session:
        assert session.get_node(node.id) is not None

        def write() -> None:
            with store.write() as w:
                w.put_node(node.evolve(rev_no=2, revision="2-s", recorded_at=NOW), request_id=None, actor="t")
            changed.set()

        threading.Thread(target=write).start()
        assert changed.wait(10)
        again = session.get_node(node.id)
        assert again is not None and again.rev_no == node.rev_no


def test_a_pending_stem_reindex_runs_when_the_store_opens(store: PostgresStore, url: str) -> None:
    """A vault migrated to the stemmed index (002) gets its existing nodes stemmed on the next open."""
    node = _note(store, url, "running searches")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE nodes SET stv = NULL")
        conn.execute("INSERT INTO meta (key, value) VALUES ('stem_index_pending', '1')")
    PostgresStore(url).close()
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT stv @@ %s::tsquery FROM nodes WHERE id = %s", ("'run'", node.id)).fetchone()
        pending = conn.execute("SELECT count(*) FROM meta WHERE key = 'stem_index_pending'").fetchone()
    assert row is not None and row[0] is True
    assert pending is not None and pending[0] == 0


def test_a_statement_past_the_statement_timeout_is_unavailable(url: str) -> None:
    """`KAERU_PG_STATEMENT_TIMEOUT_MS`: the server cancels it, a retryable error that names the
    setting (it said "busy; retry shortly": a call every try runs past was retried in a loop)."""
    store = PostgresStore(url, statement_timeout_ms=100)
    try:
        with pytest.raises(Unavailable) as caught, store.read() as session:
            session._db.one("SELECT pg_sleep(5)")
        assert caught.value.retryable and "KAERU_PG_STATEMENT_TIMEOUT_MS" in caught.value.message
        assert "raise the setting" in caught.value.message
        with store.read() as session:  # the connection is fine for the next call
            assert session.initiative_by_name("none") is None
    finally:
        store.close()


def test_a_database_migrated_past_this_server_stops_it(store: PostgresStore, url: str) -> None:
    """As on SQLite (decision 16.L1), per pooled connection (14.S6): a connection opened after a
    newer kaeru migrated the database serves no transaction, and every connection is replaced
    within `SCHEMA_RECHECK_S`."""
    from kaeru.storage.migrate import VaultTooNew, newest_version

    with store.read() as session:
        assert session.initiative_by_name("none") is None
    newer = newest_version("kaeru.storage.postgres.migrations") + 1
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("INSERT INTO schema_migrations (version, name) VALUES (%s, 'from_the_future')", (newer,))
    store._pool.drain()  # what the connections' maximum lifetime does within minutes
    for begin in (store.write, store.read):
        with pytest.raises(VaultTooNew) as caught, begin() as session:
            session.create_initiative("never", NOW)
        assert not caught.value.retryable and "restart it" in str(caught.value)
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM initiatives WHERE name = 'never'").fetchone() == (0,)
