"""PostgreSQL's common-word search ranked from in-memory copies (decision 16.C1) answers exactly as
its SQL plan: the same rows, order, scores (`float.hex`), `total`, omissions, successors and counts,
after any writes — and never from copies that are not current for the search's snapshot: a row
committed late by a writer that was in flight when the copies were read (with a lower `seq` than
rows they saw) is read when it commits, and an older snapshot than the copies ranks in SQL.

The workload is `test_postgres_common_words`'s (notes from ten words, claims, revisions,
supersessions, forgets, two initiatives) plus nodes attached to and detached from an initiative,
with searches between the writes, so the copies are refreshed from the change log (migration 013)
again and again, read again whole past their bound, or not used at all when memory is short.
"""

from __future__ import annotations

import itertools
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kaeru.api.requests import parse
from kaeru.domain.text import stem
from kaeru.errors import KaeruError
from kaeru.service import Service
from kaeru.storage.base import SearchQuery
from kaeru.storage.postgres.db import PgDb
from kaeru.storage.postgres.session import PostgresSession
from kaeru.storage.postgres.store import PostgresStore
from kaeru.storage.postgres.textcache import CACHE_BYTES, REFRESH_PHRASES, REFRESH_ROWS, SPARSE_ROWS
from tests.backends import postgres_admin_url
from tests.storage.test_postgres_common_words import _run, _service, query, step

pytestmark = pytest.mark.skipif(
    not postgres_admin_url(),
    reason="PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset (the README's test command sets it)",
)
np = pytest.importorskip("numpy")

move = st.tuples(st.sampled_from(["attach", "detach"]), st.sampled_from(["a", "b"]), st.integers(0, 60))
steps = st.lists(st.one_of(step, move, move), min_size=4, max_size=16)
FORCE_COMMON = 10**9  # every word matched from its term counts: the plan the copies stand for

_examples = itertools.count()


@pytest.fixture
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """A new vault database and its store (once for a whole hypothesis test: its examples share it),
    whose copies are read in place: these tests check what the copies answer, not when they are read
    (`test_a_cold_read_happens_in_the_background` does)."""
    for service in _service(tmp_path_factory):
        assert isinstance(service.store, PostgresStore)
        service.store.copies.warm = None
        service.store.copies.sparse_rows = -1  # every phrase copied (the directed tests count the reads)
        yield service


def _write(service: Service, scope: str, ids: list[str], op: tuple[Any, ...]) -> None:
    if op[0] not in ("attach", "detach"):
        _run(service, scope, ids, op)
        return
    if not ids:
        return
    try:
        service.initiative(
            parse("initiative", {"initiative": f"{scope}-{op[1]}", "action": op[0], "node": ids[op[2] % len(ids)]})
        )
    except KaeruError:
        return


def _made(session: PostgresSession, scope: str, q: dict[str, Any], successors: list[tuple[int, str]]) -> SearchQuery:
    found = [session.initiative_by_name(f"{scope}-{s}") for s in q["scope"]]
    tokens = list(dict.fromkeys(stem(w) for w in q["words"])) if q["stemmed"] else list(q["words"])
    named = {k: q[k] for k in ("match_all", "stemmed", "omit_superseded", "window", "count_total", "fields")}
    out = successors if q["successors"] else None
    ids = [i.id for i in found if i is not None]
    return SearchQuery(initiative_ids=ids, tokens=tokens, superseded_out=out, superseded_head=2, **named)


def _answer(session: PostgresSession, scope: str, q: dict[str, Any], copies: bool) -> tuple[Any, ...]:
    """The search's rows (scores as `float.hex`), total, omissions and successors, and the count of
    the matches — asked before the search (counted on its own) and after it (as it counted them)."""
    session.text_cache = copies
    session.common_divisor = FORCE_COMMON
    session._counted.clear()
    successors: list[tuple[int, str]] = []
    made = _made(session, scope, q, successors)
    if not made.initiative_ids:
        return ()
    count = session.count_matches(made)
    rows, total, omitted = session.search(made)
    assert session.count_matches(made) == count
    return [(r.id, r.seq, r.score.hex(), r.refuted) for r in rows], total, omitted, successors, count


def _compare(store: PostgresStore, scope: str, q: dict[str, Any]) -> tuple[Any, ...]:
    with store.read() as session:
        assert isinstance(session, PostgresSession)
        sql = _answer(session, scope, q, copies=False)
        copied = _answer(session, scope, q, copies=True)
    assert copied == sql, q
    return copied


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rounds=st.lists(st.tuples(steps, st.lists(query, min_size=1, max_size=4)), min_size=2, max_size=4),
    refresh_rows=st.sampled_from([0, 2, REFRESH_ROWS]),
    max_bytes=st.sampled_from([CACHE_BYTES, 600]),
    sparse_rows=st.sampled_from([-1, 1, 3, SPARSE_ROWS]),
)
def test_the_copies_answer_as_sql(
    fresh: Service,
    rounds: list[tuple[list[Any], list[dict[str, Any]]]],
    refresh_rows: int,
    max_bytes: int,
    sparse_rows: int,
) -> None:
    """Whatever is copied, read for the ranking alone (`sparse_rows`: rare phrases through the GIN
    index), brought up to date or read again, the copies answer as SQL does."""
    store = fresh.store
    assert isinstance(store, PostgresStore)
    store.copies.refresh_rows, store.copies.max_bytes = refresh_rows, max_bytes
    store.copies.sparse_rows = sparse_rows
    scope = f"copies-{next(_examples)}"
    ids: list[str] = []
    ranked = store.copies.ranked
    matched = False
    for writes, queries in rounds:
        for op in writes:
            _write(fresh, scope, ids, op)
        for q in queries:
            answer = _compare(store, scope, q)
            matched = matched or bool(answer and answer[-1])
    if max_bytes == CACHE_BYTES and matched:
        # A query that matched some rows is one the copies answer (a word no live row holds is
        # not, and every node may have been forgotten). A cold read runs on another thread and SQL
        # answers meanwhile (16.Z1): under load it may outlast every query above, so once it is
        # done the last query is asked again.
        deadline = time.monotonic() + 60
        while store.copies._warming and time.monotonic() < deadline:
            time.sleep(0.01)
        _compare(store, scope, rounds[-1][1][-1])
        assert store.copies.ranked > ranked  # the copies answered some of them


#: The query of the directed tests below: one common word, superseded matches omitted, a full window.
_ONE_WORD = {"scope": ("a",), "words": ["alpha"], "match_all": False, "stemmed": False, "omit_superseded": True}
_DIRECTED = {**_ONE_WORD, "window": 5000, "count_total": True, "successors": False}


def _query(**changes: Any) -> dict[str, Any]:
    return {**_DIRECTED, "fields": ("name", "description", "body", "tags"), **changes}


def _ids(answer: tuple[Any, ...]) -> set[str]:
    return {r[0] for r in answer[0]}


def _noted(service: Service, scope: str, texts: list[str]) -> PostgresStore:
    """`service`'s store after a note of each text in initiative `<scope>-a`."""
    for text in texts:
        service.note(parse("note", {"initiative": f"{scope}-a", "text": text}))
    store = service.store
    assert isinstance(store, PostgresStore)
    return store


def test_a_late_commit_with_a_lower_seq_is_never_missed(fresh: Service) -> None:
    """Two writers: the first takes a `seq` and stays in flight while the second commits a higher
    one and a search reads the copies (the first writer in flight in their snapshot); when the
    first commits, the next search reads its row from the change log."""
    scope = "late"
    store = _noted(fresh, scope, [f"alpha beta {i}" for i in range(6)])
    first = _compare(store, scope, _query())
    loads = store.copies.loads
    with store.read() as session:
        template = session.get_node(sorted(_ids(first))[0])
    assert template is not None
    late = template.evolve(id=str(uuid.uuid4()), body="alpha alpha alpha late", rev_no=1)
    with ExitStack() as stack:
        writer = stack.enter_context(store.write())  # in flight: its row takes the lower seq
        writer.put_node(late, request_id=None, actor="test", new=True)
        writer._db.flush()
        fresh.note(parse("note", {"initiative": f"{scope}-a", "text": "alpha gamma newer"}))
        during = _compare(store, scope, _query())
        assert late.id not in _ids(during)
        assert len(_ids(during)) == len(_ids(first)) + 1  # the committed writer's note is there
    after = _compare(store, scope, _query())
    assert late.id in _ids(after)
    assert store.copies.loads == loads  # brought up to date from the log, never read again whole
    with store.read() as session:
        seqs = {r[0]: r[1] for r in after[0]}
    assert seqs[late.id] < max(seqs.values())  # committed late, with the lower seq


def test_moves_between_initiatives_are_followed(fresh: Service) -> None:
    """A node attached to an initiative joins its scope in the copies, detached it leaves it, and a
    forgotten one leaves every scope — each read back from the change log."""
    scope = "moves"
    made = [fresh.note(parse("note", {"initiative": f"{scope}-a", "text": f"alpha {i}"}))[0] for i in range(4)]
    fresh.note(parse("note", {"initiative": f"{scope}-b", "text": "alpha in b"}))
    node = made[0].primary.id if made[0].primary is not None else ""
    store = fresh.store
    assert isinstance(store, PostgresStore)
    in_b = _query(scope=("b",))
    assert node not in _ids(_compare(store, scope, in_b))
    assert node in _ids(_compare(store, scope, _query()))
    loads = store.copies.loads
    fresh.initiative(parse("initiative", {"initiative": f"{scope}-b", "action": "attach", "node": node}))
    assert node in _ids(_compare(store, scope, in_b))
    fresh.initiative(parse("initiative", {"initiative": f"{scope}-b", "action": "detach", "node": node}))
    assert node not in _ids(_compare(store, scope, in_b))
    assert node in _ids(_compare(store, scope, _query()))
    fresh.forget(parse("forget", {"initiative": f"{scope}-a", "node": node, "reason": "test"}))
    assert node not in _ids(_compare(store, scope, _query(scope=("a", "b"))))
    assert store.copies.loads == loads  # every change read back, no copy read again whole


def test_a_refresh_after_a_write_reads_back_only_the_recent_copies(fresh: Service) -> None:
    """After a write, the changed rows are read back for the `REFRESH_PHRASES` most recently used
    copies only (a column each in one statement); the older copies are dropped and read again whole
    when a search asks for them, answering as SQL does. Every copy held was refreshed before: the
    first search after each write did more work the more words the session had searched."""
    scope = "recent"
    words = [f"word{i}x" for i in range(REFRESH_PHRASES + 30)]
    store = _noted(fresh, scope, [" ".join(words[i::3]) for i in range(3)])
    for word in words:
        _compare(store, scope, _query(words=[word]))

    def held(word: str) -> bool:
        state = store.copies._state
        return state is not None and any(key[1] == word for key in state.values)

    assert held(words[0]) and held(words[-1])
    fresh.note(parse("note", {"initiative": f"{scope}-a", "text": "word1x and more"}))
    after = _compare(store, scope, _query(words=[words[-1]]))
    assert held(words[-1]) and not held(words[0])
    assert len(_ids(after)) == 1
    loads = store.copies.loads
    assert len(_ids(_compare(store, scope, _query(words=[words[1]])))) == 2  # read again whole, new note in
    assert store.copies.loads == loads + 1


def test_the_first_read_brings_the_common_words(fresh: Service) -> None:
    """The first search of a common word reads the copies of the vault's other common words in
    the same pass, so their first searches read nothing."""
    scope = "prefetch"
    store = _noted(fresh, scope, [f"alpha beta gamma{i}" for i in range(6)])
    _compare(store, scope, _query())
    loads = store.copies.loads
    for word in ("beta", "alpha"):
        _compare(store, scope, _query(words=[word]))
    assert store.copies.loads == loads
    _compare(store, scope, _query(words=["gamma1"]))  # rare: not read with them
    assert store.copies.loads == loads + 1


def test_an_older_snapshot_ranks_in_sql(fresh: Service) -> None:
    """Copies brought to a newer snapshot are not used by an older one: it ranks in SQL and sees
    its own rows."""
    scope = "older"
    store = _noted(fresh, scope, [f"alpha {i}" for i in range(5)])
    with store.read() as old:
        assert isinstance(old, PostgresSession)
        before = _answer(old, scope, _query(), copies=False)
        fresh.note(parse("note", {"initiative": f"{scope}-a", "text": "alpha newest"}))
        newer = _compare(store, scope, _query())  # the copies now at a newer snapshot
        assert len(newer[0]) == len(before[0]) + 1
        ranked = store.copies.ranked
        assert _answer(old, scope, _query(), copies=True) == before
        assert store.copies.ranked == ranked  # not from the copies


def test_the_change_log_is_written_by_every_node_write_and_pruned(fresh: Service) -> None:
    """A note, a revision, a forget and an attach each add the node's row to the log in their own
    transaction; pruning keeps the newest rows and moves the horizon, past which copies are read
    again whole (and still answer as SQL)."""
    scope = "log"
    store = fresh.store
    assert isinstance(store, PostgresStore)

    def logged() -> list[tuple[int, int]]:
        with psycopg.connect(store.url) as conn:
            rows = conn.execute("SELECT xid::text::bigint, node_seq FROM text_changes ORDER BY xid").fetchall()
        return [(int(r[0]), int(r[1])) for r in rows]

    start = len(logged())
    made, _ = fresh.note(parse("note", {"initiative": f"{scope}-a", "text": "alpha one"}))
    other, _ = fresh.note(parse("note", {"initiative": f"{scope}-b", "text": "alpha two"}))
    assert made.primary is not None and other.primary is not None
    node, seq = made.primary.id, _seq(store, made.primary.id)
    fresh.revise(parse("revise", {"initiative": f"{scope}-a", "node": node, "patch": {"body": "alpha again"}}))
    fresh.initiative(parse("initiative", {"initiative": f"{scope}-b", "action": "attach", "node": node}))
    _compare(store, scope, _query(scope=("a", "b")))
    fresh.forget(parse("forget", {"initiative": f"{scope}-a", "node": node, "reason": "test"}))
    rows = logged()[start:]
    mine = [x for x, s in rows if s == seq]
    assert len(mine) == 4 and len(set(mine)) == 4  # four writes, four transactions
    assert _seq(store, other.primary.id) in {s for _, s in rows}
    loads = store.copies.loads
    fresh.note(parse("note", {"initiative": f"{scope}-a", "text": "alpha three"}))
    with psycopg.connect(store.url, autocommit=True) as conn:
        conn.execute("SELECT kaeru_prune_text_changes(0)")  # only the newest transaction's rows stay
        left = conn.execute("SELECT count(DISTINCT xid), min(xid)::text FROM text_changes").fetchone()
        horizon = conn.execute("SELECT horizon::text FROM text_change_horizon").fetchone()
    assert left is not None and horizon is not None
    assert left[0] == 1 and horizon[0] == left[1]
    answer = _compare(store, scope, _query(scope=("a", "b")))
    assert store.copies.loads > loads  # the copies were older than the horizon: read again whole
    assert node not in _ids(answer)


def _seq(store: PostgresStore, node_id: str) -> int:
    with psycopg.connect(store.url) as conn:
        row = conn.execute("SELECT seq FROM nodes WHERE id = %s", (node_id,)).fetchone()
    assert row is not None
    return int(row[0])


def test_the_migration_adds_the_log_and_its_trigger(url: str) -> None:
    """The log's trigger is on `nodes`; pruning an emptied log (a test database is emptied between
    tests, its one horizon row too) puts the horizon row back; supersession edges have their index."""
    with psycopg.connect(url) as conn:
        conn.execute("DELETE FROM text_change_horizon")
        conn.execute("SELECT kaeru_prune_text_changes(10)")
        found = conn.execute(
            "SELECT (SELECT count(*) FROM pg_trigger WHERE tgname = 'nodes_text_changes'), "
            "(SELECT array_agg(horizon::text) FROM text_change_horizon), to_regclass('edges_supersedes')::text"
        ).fetchone()
    assert found == (1, ["0"], "edges_supersedes")


@pytest.fixture
def as_served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """A new vault database and its store as the server opens it (cold copies read in the background)."""
    yield from _service(tmp_path_factory)


def test_a_cold_read_happens_in_the_background(as_served: Service) -> None:
    """The store's copies are read on another thread while SQL answers (at 1M nodes the first read
    takes seconds longer than SQL's answer): searches meanwhile are SQL's, one read at a time, and
    once it is done the copies answer — the same rows and scores."""
    store = _noted(as_served, "cold", [f"alpha beta {i}" for i in range(6)])
    assert store.copies.warm is not None  # the store reads cold copies in the background
    store_warm, release, threads = store.copies.warm, threading.Event(), []

    def held(work: Callable[[PgDb], None]) -> None:
        threads.append(threading.current_thread())
        assert release.wait(60)
        store_warm(work)

    store.copies.warm = held
    first = _compare(store, "cold", _query())
    second = _compare(store, "cold", _query())
    assert (store.copies.loads, store.copies.ranked) == (0, 0)  # both answered by SQL
    assert len(threads) == 1 and threads[0] is not threading.current_thread()
    release.set()
    threads[0].join(60)
    assert store.copies.loads > 0 and not threads[0].is_alive()
    assert _compare(store, "cold", _query()) == first == second
    assert store.copies.ranked > 0  # the copies answered it


def test_a_rare_word_is_read_for_its_ranking_alone(fresh: Service) -> None:
    """A phrase no copy holds that few nodes hold is read from the rows holding it, for the one
    ranking, and never kept: a copy of it would read every member of the scope (decision 140)."""
    scope = "sparse"
    store = _noted(fresh, scope, [f"alpha beta gamma{i}" for i in range(6)])
    store.copies.sparse_rows = 3  # alpha, in six nodes, is copied; gamma1, in one, is not
    before = _compare(store, scope, _query(words=["alpha", "gamma1"]))
    assert store.copies.sparse_reads == 1 and store.copies.ranked > 0
    held = set(store.copies._state.values) if store.copies._state is not None else set()
    assert any(key[1] == "alpha" for key in held) and not any(key[1] == "gamma1" for key in held)
    assert len(_ids(before)) == 6
    fresh.note(parse("note", {"initiative": f"{scope}-a", "text": "gamma1 again, written after"}))
    after = _compare(store, scope, _query(words=["gamma1"]))  # read again: the new node is in
    assert len(_ids(after)) == 2 and store.copies.sparse_reads == 2


def test_a_commoner_word_is_read_for_its_ranking_while_it_is_copied(as_served: Service) -> None:
    """Served (cold copies read in the background), a phrase no copy holds that more nodes hold is
    read for the ranking that asks for it while its copy is read on another thread, as long as that
    costs less than SQL's ranking (`sparse_budget`); then its copy answers."""
    scope = "budget"
    # delta0…delta7 in three nodes each: not among the common words read with alpha's copy.
    store = _noted(as_served, scope, [f"alpha beta delta{i % 8}" for i in range(24)])
    store.copies.sparse_rows = 1
    _compare(store, scope, _query())  # the first search: SQL, while alpha, the sizes and the scope are read
    _wait_for_copies(store)
    ranked, reads = store.copies.ranked, store.copies.sparse_reads
    _compare(store, scope, _query(words=["alpha", "delta1"]))  # delta1 is read, and copied
    assert store.copies.ranked > ranked and store.copies.sparse_reads > reads
    # Then its copy answers: installed by the read, or (when any transaction of the cluster moved the
    # snapshot meanwhile) added by a later ranking. On a loaded machine a ranking may still find the
    # copies busy and leave it to SQL, which answers the same; the copy must answer within a few tries.
    assert _copy_answers(store, scope, _query(words=["alpha", "delta1"]))
    store.copies.sparse_budget = 0  # a phrase past the budget is not read so: SQL ranks while it is copied
    reads = store.copies.sparse_reads
    assert _copy_answers(store, scope, _query(words=["delta0"]))
    assert store.copies.sparse_reads == reads


def _copy_answers(store: PostgresStore, scope: str, q: dict[str, Any], tries: int = 20) -> bool:
    """Whether the copies answer `q` without reading a phrase for the ranking, within `tries`
    searches (each compared with SQL), the copies read in the background waited for between them."""
    for _ in range(tries):
        _wait_for_copies(store)
        ranked, reads = store.copies.ranked, store.copies.sparse_reads
        _compare(store, scope, q)
        if store.copies.ranked > ranked and store.copies.sparse_reads == reads:
            return True
    return False


def _wait_for_copies(store: PostgresStore) -> None:
    deadline = time.monotonic() + 60
    while store.copies._warming and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not store.copies._warming
