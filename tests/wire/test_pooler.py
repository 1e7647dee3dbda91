"""A team's PostgreSQL reached through PgBouncer in transaction mode (what Supabase, Neon and
Heroku give as the pooled address): every call answered, nothing of kaeru's left on the server
connections other clients get next, each transaction under kaeru's timeouts, `kaeru doctor`
able to look (decision 185), and the one server connection free again after each COMMIT (192).

Before it, a server behind the pooler failed its sixth call of a kind with `internal`
(`DuplicatePreparedStatement`: psycopg prepares a statement run five times, on a server connection
the next transaction may not get), its 30 s lock and statement timeouts stayed on whichever server
connection had run its set-up, for the pooler's other clients, and the doctor could not connect
(PgBouncer refuses the startup option it used).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator

import psycopg
import pytest
from mcp import Client

from kaeru.errors import KaeruError, Unavailable
from kaeru.storage.postgres.store import PostgresStore
from tests.backends import postgres_admin_url
from tests.pgbouncer import late_flushes, pgbouncer, pgbouncer_binary
from tests.wire.support import call_ok, stdio_params, subprocess_env

pytestmark = [
    pytest.mark.skipif(not postgres_admin_url(), reason="PostgreSQL not configured (KAERU_TEST_DATABASE_URL)"),
    pytest.mark.skipif(
        not pgbouncer_binary(), reason="pgbouncer is not installed (the README's test command installs it)"
    ),
    pytest.mark.timeout(240),
]

INITIATIVE = "pooled"
#: psycopg prepares a statement the fifth time it runs one on a connection; every kind of call
#: below runs more often than that.
ROUNDS = 8
SETTINGS = "SELECT current_setting('lock_timeout'), current_setting('statement_timeout'), current_setting('jit')"


@pytest.fixture
def database() -> Iterator[str]:
    from tests.pg import drop_database, fresh_database

    made = fresh_database()
    yield made
    drop_database(made)


@pytest.fixture
def pooled(database: str) -> Iterator[str]:
    """The database through a PgBouncer in transaction mode with ONE server connection: every
    client's transactions take turns on it, so whatever one leaves there the next one finds."""
    with pgbouncer(database, pool_size=1) as url:
        yield url


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_a_server_behind_the_pooler_answers_every_call(pooled: str) -> None:
    env = subprocess_env({"KAERU_DATABASE_URL": pooled})
    async with Client(stdio_params(env)) as client:
        ids: list[str] = []
        for i in range(ROUNDS):
            noted = await call_ok(
                client, "note", {"initiative": INITIATIVE, "text": f"deploy {i} of the zephyr staging cluster"}
            )
            node, revision = noted["data"]["primary"]["id"], noted["data"]["primary"]["revision"]
            ids.append(node)
            revised = await call_ok(
                client,
                "revise",
                {
                    "initiative": INITIATIVE,
                    "node": node,
                    "patch": {"body": f"deploy {i} of the zephyr staging cluster, rolled back"},
                    "expected_revision": revision,
                },
            )
            assert revised["state"] == "applied"
            read = await call_ok(client, "read", {"initiative": INITIATIVE, "node": node})
            assert read["data"]["hits"][0]["body"].endswith("rolled back")
            task = await call_ok(client, "task", {"initiative": INITIATIVE, "text": f"check deploy {i}"})
            await call_ok(
                client,
                "task_update",
                {"initiative": INITIATIVE, "task": task["data"]["primary"]["id"], "status": "done"},
            )
            found = await call_ok(client, "search", {"initiatives": [INITIATIVE], "text": "zephyr"})
            assert found["data"]["total"] == i + 1
            recalled = await call_ok(client, "recall", {"initiatives": [INITIATIVE], "query": "zephyr rolled back"})
            assert set(ids) <= {hit["id"] for hit in recalled["data"]["hits"]}
            await call_ok(client, "context", {"initiative": INITIATIVE})
            await call_ok(client, "timeline", {"initiatives": [INITIATIVE]})
            await call_ok(client, "initiatives", {})
        stale = await client.call_tool(
            "revise", {"initiative": INITIATIVE, "node": ids[0], "patch": {"body": "x"}, "expected_revision": revision}
        )
        assert stale.structured_content["issues"][0]["code"] == "revision_conflict"


@pytest.mark.timeout(60)  # a stall waits for minutes: fail sooner than the module's limit
def test_a_transaction_gives_the_poolers_server_connection_back(database: str) -> None:
    """After each COMMIT the pooler's one server connection is free for the next transaction, on
    another of kaeru's connections, even when the end of a pipeline reaches the pooler after the
    COMMIT's answer (decision 192). Before, that late Flush took the server connection back for an
    idle client, and the next transaction on the pool's other connection waited for it — minutes,
    until that idle connection was used again: a serving process stalled on a busy machine."""
    with pgbouncer(database, pool_size=1) as pooled, late_flushes(pooled, delay=0.05) as url:
        store = PostgresStore(url, min_size=2)
        try:
            assert store.pooled
            for i in range(3):
                with store.write() as session:
                    session.create_initiative(f"pooled-{i}", "2026-12-04T00:00:00Z")
                time.sleep(0.5)  # the agent thinks between two calls; the late Flush arrives
                with store.read() as session:  # on the pool's other connection
                    assert session.initiative_by_name(f"pooled-{i}") is not None
        finally:
            store.close()


def test_kaeru_leaves_no_setting_on_the_poolers_server_connection(pooled: str) -> None:
    """Another client of the pooler, served by the one server connection kaeru used before it,
    finds the server's own settings there."""
    with psycopg.connect(pooled, autocommit=True) as conn:
        before = _settings(conn)
    store = PostgresStore(pooled, lock_timeout_ms=1_234, statement_timeout_ms=5_678)
    try:
        with store.read() as session:
            assert session.initiative_by_name("none") is None
    finally:
        store.close()
    with psycopg.connect(pooled, autocommit=True) as conn:
        assert _settings(conn) == before


def test_each_transaction_behind_the_pooler_runs_under_kaerus_timeouts(pooled: str, database: str) -> None:
    for url in (pooled, database):
        store = PostgresStore(url, lock_timeout_ms=1_234, statement_timeout_ms=400)
        try:
            assert store.pooled is (url == pooled) and store.describe()["pooler"] is (url == pooled)
            for begin in (store.read, store.write):
                with begin() as session:
                    assert session._db.raw_one(SETTINGS) == ("1234ms", "400ms", "off")
            with pytest.raises(Unavailable) as caught, store.read() as session:
                session._db.one("SELECT pg_sleep(5)")
            assert caught.value.retryable and "KAERU_PG_STATEMENT_TIMEOUT_MS" in str(caught.value)
        finally:
            store.close()


def test_the_doctor_looks_through_the_pooler(pooled: str) -> None:
    env = subprocess_env({"KAERU_DATABASE_URL": pooled})
    subprocess.run([sys.executable, "-m", "kaeru", "note", "-i", INITIATIVE, "a note to look at"], env=env, check=True)
    done = subprocess.run(
        [sys.executable, "-m", "kaeru", "--json", "doctor"], env=env, capture_output=True, text=True, timeout=120
    )
    report = json.loads(done.stdout)
    failed = [c for c in report["checks"] if c["status"] == "fail"]
    assert done.returncode == 0 and not failed, done.stdout + done.stderr
    assert report["vault"]["pooler"] is True
    assert "through a pooler" in next(c["summary"] for c in report["checks"] if c["name"] == "vault")
    assert {"connection", "migrations", "fulltext", "search"} <= {c["name"] for c in report["checks"]}


def _settings(conn: psycopg.Connection[tuple[object, ...]]) -> tuple[object, ...] | None:
    return conn.execute(SETTINGS).fetchone()


@pytest.mark.parametrize("through", ["pooler", "direct"])
def test_the_doctors_connection_cannot_write(through: str, pooled: str, database: str) -> None:
    """Every statement of `kaeru doctor` runs in a read-only transaction, with no startup option."""
    from kaeru.storage.postgres.health import PostgresHealth

    health = PostgresHealth(pooled if through == "pooler" else database)
    try:
        assert health.describe()["pooler"] is (through == "pooler")
        with pytest.raises(KaeruError) as refused:  # the driver's error, said as the project's (214)
            health._rows("CREATE TABLE written_by_the_doctor (x int)")
        assert isinstance(refused.value.__cause__, psycopg.errors.ReadOnlySqlTransaction), refused.value
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction), health.read() as session:
            session._db._c.execute("DELETE FROM meta")
        assert health.has_table("meta") and not health.has_table("written_by_the_doctor")
    finally:
        health.close()


def test_a_new_vault_is_made_through_the_pooler() -> None:
    """Every migration, from an empty database, runs through the pooler (one transaction each run)."""
    from kaeru.storage.migrate import newest_version
    from tests.pg import blank_database, drop_database

    database = blank_database()
    try:
        with pgbouncer(database, pool_size=1) as url:
            store = PostgresStore(url)
            try:
                assert store.pooled
                assert store.applied_migrations()[-1][0] == newest_version("kaeru.storage.postgres.migrations")
            finally:
                store.close()
    finally:
        drop_database(database)
