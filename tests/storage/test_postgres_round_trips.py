"""PostgreSQL's writes end in one pipeline, COMMIT included (decision 16.P2), begin with their first
statement (16.L7), and a rare word's ranking runs without parallel workers (16.P3).

A note used to wait for nine round trips; the statements whose outcome nobody reads (the audit row,
the replay response, the initiative's activity time, the statistics) now go with the COMMIT. What
must not change: a statement of that pipeline that fails rolls the whole mutation back, and the
connection serves the next transaction."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import psycopg
import pytest

from kaeru.api.requests import parse
from kaeru.errors import KaeruError
from kaeru.service import Service
from kaeru.storage.base import SearchQuery, Store
from kaeru.storage.postgres.db import XID_QUERY, PgDb
from kaeru.storage.postgres.session import PostgresSession
from kaeru.storage.postgres.store import PostgresStore
from tests.storage.test_node_rows import distinct_node


def _postgres(store: Store) -> None:
    if store.backend != "postgres":
        pytest.skip("PostgreSQL's pipeline and settings")


def test_a_rare_words_ranking_runs_without_parallel_workers_and_restores_the_setting(store: Store) -> None:
    """The GIN plan's statement alone is planned with `max_parallel_workers_per_gather = 0`; the
    statements after it plan as the server is configured (a broad scan keeps its workers)."""
    _postgres(store)
    with store.write() as session:
        initiative = session.create_initiative("alpha", "2026-01-01T00:00:00Z").id
        session.put_node(distinct_node((initiative,)), request_id=None, actor="test", new=True)
    with store.read() as session:
        assert isinstance(session, PostgresSession)
        session.common_divisor = 0  # the GIN plan, whatever share of the nodes holds the word
        configured = session._db.one(
            "SELECT current_setting('jit'), current_setting('max_parallel_workers_per_gather')"
        )
        with _round_trips(statements=True) as seen:
            rows, _, _ = session.search(SearchQuery(initiative_ids=[initiative], tokens=["lantern"]))
            after = session._db.one("SELECT current_setting('jit'), current_setting('max_parallel_workers_per_gather')")
    assert len(rows) == 1
    assert configured is not None and configured[0] == "off" and after == configured
    ranking = next(i for i, q in enumerate(seen) if q.startswith("WITH hits"))
    assert seen[ranking - 1] == "SET LOCAL max_parallel_workers_per_gather = 0"
    assert seen[ranking + 1] == "SET LOCAL max_parallel_workers_per_gather TO DEFAULT"


def test_a_statement_failing_in_the_commit_pipeline_rolls_the_mutation_back(store: Store) -> None:
    _postgres(store)
    with store.write() as session:
        initiative = session.create_initiative("alpha", "2026-01-01T00:00:00Z").id
    node = distinct_node((initiative,))
    with pytest.raises(KaeruError), store.write() as session:
        session.put_node(node, request_id=None, actor="test", new=True)
        session.touch_initiative(initiative, "2027-01-01T00:00:00Z")
        session._db.send("INSERT INTO audit (at) VALUES (NULL)")  # NOT NULL: fails inside the pipeline
    with store.read() as session:
        assert session.get_node(node.id) is None
        assert session.newest_members(initiative, None, 1) == ([], 0)
        found = session.initiative_by_name("alpha")
        assert found is not None and found.last_activity != "2027-01-01T00:00:00Z"
    with store.write() as session:  # the connection serves the next transaction
        session.put_node(node, request_id=None, actor="test", new=True)
    with store.read() as session:
        assert session.get_node(node.id) is not None
        assert session.newest_members(initiative, None, 1)[1] == 1


@contextlib.contextmanager
def _round_trips(*, statements: bool = False) -> Iterator[list[str]]:
    """Each round trip a psycopg connection makes: a statement outside a pipeline, or a pipeline
    (`statements`: every statement instead, in the order sent). Only this thread's: the test
    database factory's threads (tests/pg.py) use psycopg at the same time."""
    seen: list[str] = []
    execute, pipeline = psycopg.Connection.execute, psycopg.Connection.pipeline
    mine = threading.get_ident()

    def counted_execute(self: Any, query: Any, *args: Any, **kw: Any) -> Any:
        if (self._pipeline is None or statements) and threading.get_ident() == mine:
            seen.append(str(query)[:60])
        return execute(self, query, *args, **kw)

    def counted_pipeline(self: Any) -> Any:
        if self._pipeline is None and not statements and threading.get_ident() == mine:
            seen.append("pipeline")
        return pipeline(self)

    psycopg.Connection.execute = counted_execute  # type: ignore[method-assign]
    psycopg.Connection.pipeline = counted_pipeline  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        psycopg.Connection.execute = execute  # type: ignore[method-assign]
        psycopg.Connection.pipeline = pipeline  # type: ignore[method-assign]


def test_a_note_waits_for_four_round_trips(service: Service) -> None:
    """BEGIN with the transaction's id and the replay claim (16.L7), the initiative, the node's row (its seq is needed), and one
    pipeline with everything else and the COMMIT."""
    _postgres(service.store)
    service.note(parse("note", {"initiative": "alpha", "text": "a first note makes the initiative"}))
    with _round_trips() as seen:
        outcome, _ = service.note(parse("note", {"initiative": "alpha", "text": "a second note", "request_id": "r-2"}))
    assert outcome.primary is not None
    assert len(seen) == 4, seen
    assert seen[0] == seen[-1] == "pipeline"
    with _round_trips(statements=True) as sent:
        service.note(parse("note", {"initiative": "alpha", "text": "a third note", "request_id": "r-3"}))
    assert sent[0].startswith("BEGIN ISOLATION LEVEL READ COMMITTED")
    assert sent[1] == XID_QUERY  # its id, to ask its fate if COMMIT's answer is lost (decision 444)
    assert sent[2].startswith("INSERT INTO requests")
    assert sent[-1] == "COMMIT"


def test_a_read_that_reaches_no_statement_sends_nothing(store: Store) -> None:
    _postgres(store)
    with _round_trips() as seen, store.read():
        pass
    assert seen == []


def test_a_pooled_connection_that_died_is_replaced_at_a_writes_first_exchange(store: Store) -> None:
    """BEGIN now travels with the first statement: when that exchange finds the pooled connection
    dead, nothing can have committed, so it is sent again on a new connection — once — and the
    write happens exactly once."""
    _postgres(store)
    with store.write() as session:
        initiative = session.create_initiative("alpha", "2026-01-01T00:00:00Z").id
    node = distinct_node((initiative,))
    assert isinstance(store, PostgresStore)
    with psycopg.connect(store.url, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()"
        )
    with store.write() as session:
        session.put_node(node, request_id=None, actor="test", new=True)
    with store.read() as session:
        assert session.get_node(node.id) is not None
        assert session.newest_members(initiative, None, 1)[1] == 1


def test_after_every_pooled_connection_died_each_call_is_served(service: Service) -> None:
    """A restarted database leaves every pooled connection dead (decision 313): a transaction's first
    exchange replaces them one after the other until one lives, so no call fails — where each stale
    connection cost a call its answer (`unavailable`), reads and writes alike."""
    _postgres(service.store)
    assert isinstance(service.store, PostgresStore)
    service.note(parse("note", {"initiative": "alpha", "text": "a zebra in the pool"}))
    warm = [
        threading.Thread(target=lambda: service.search(parse("search", {"initiatives": ["alpha"], "text": "zebra"})))
        for _ in range(8)
    ]
    for t in warm:
        t.start()
    for t in warm:
        t.join()
    _kill_pooled(service.store)
    for _ in range(8):
        assert service.search(parse("search", {"initiatives": ["alpha"], "text": "zebra"})).hits
    _kill_pooled(service.store)
    for k in range(4):
        outcome, _ = service.note(parse("note", {"initiative": "alpha", "text": f"after the restart {k}"}))
        assert outcome.state == "applied"


def test_the_statistics_arrays_keep_every_term_as_written(store: Store) -> None:
    """The term array is written as one text[] literal (16.P2): every element quoted, so the word
    `null` is a term, not a NULL."""
    _postgres(store)
    with store.write() as session:
        initiative = session.create_initiative("alpha", "2026-01-01T00:00:00Z").id
        node = replace(distinct_node((initiative,)), body="null NULL lantern", name="null")
        session.put_node(node, request_id=None, actor="test", new=True)
    with store.read() as session:
        found = session._db.rows(
            "SELECT term, fields, sum(docs) FROM term_docs WHERE NOT stemmed AND term IN ('null', 'lantern') "
            "GROUP BY 1, 2 HAVING sum(docs) <> 0 ORDER BY 1"
        )
    assert [(r[0], int(r[1]), int(r[2])) for r in found] == [("lantern", 2 | 4 | 8, 1), ("null", 1 | 4, 1)]


def _kill_pooled(store: PostgresStore) -> None:
    with psycopg.connect(store.url, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()"
        )


def test_a_write_of_sent_statements_only_on_a_dead_connection_commits_once(store: Store) -> None:
    """A transaction that only sends (no statement whose answer it reads) opens alone at COMMIT, so
    a dead pooled connection is still replaced there — and the COMMIT itself is sent once."""
    _postgres(store)
    assert isinstance(store, PostgresStore)
    with store.write() as session:
        initiative = session.create_initiative("alpha", "2026-01-01T00:00:00Z").id
    _kill_pooled(store)
    with store.write() as session:
        session.touch_initiative(initiative, "2027-05-05T00:00:00Z")
    with store.read() as session:
        found = session.initiative_by_name("alpha")
        assert found is not None and found.last_activity == "2027-05-05T00:00:00Z"


def test_an_exchange_holding_commit_is_never_sent_again(store: Store) -> None:
    """If the connection breaks after COMMIT ran (here the backend ends itself right after it), the
    client cannot know whether it committed: resending would write twice. The error is raised, and
    the row is there once."""
    _postgres(store)
    assert isinstance(store, PostgresStore)
    with store.write() as session:
        session._db.run("CREATE TABLE IF NOT EXISTS commit_once (n int)")
    replaced: list[object] = []
    conn = store._pool.getconn()
    try:
        db = PgDb(conn)
        db.begin("BEGIN", lambda dead: replaced.append(dead) or psycopg.connect(store.url))
        db.send("INSERT INTO commit_once VALUES (1)")
        db.send("COMMIT")
        db.send("SELECT pg_terminate_backend(pg_backend_pid())")
        with pytest.raises(KaeruError):
            db.flush()
    finally:
        store._pool.putconn(conn)
    assert replaced == []
    with psycopg.connect(store.url) as check:
        assert check.execute("SELECT count(*) FROM commit_once").fetchone() == (1,)
        check.execute("DROP TABLE commit_once")
