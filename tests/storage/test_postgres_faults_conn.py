"""What a PostgreSQL server refuses, said as what it is (decision 445): a password, role or database
it will not let in, a vault database dropped and made again empty under a running server, a server
that only reads, and a role's limit on a transaction's idle time.

Found by a probe of kaeru on PostgreSQL: each was answered `internal` ("please report it"), or a
retryable `unavailable` that no retry could pass — after the pool's 30 s of silent retries, or as
"this server started while the database did not answer" for a wrong password.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg
import pytest

from kaeru.api.requests import parse
from kaeru.config import Settings
from kaeru.domain.model import Node
from kaeru.errors import Unavailable
from kaeru.service import Service
from kaeru.storage.migrate import VaultUnusable
from kaeru.storage.pending import RETRY_S, StoreWhenReachable
from kaeru.storage.postgres.db import translate
from kaeru.storage.postgres.store import PostgresStore
from tests.backends import postgres_admin_url
from tests.cli.support import kaeru
from tests.pgbouncer import pgbouncer, pgbouncer_binary

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(
        not postgres_admin_url(),
        reason="PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset (the README's test command sets it)",
    ),
]

NOW = "2030-01-01T00:00:00.000000Z"


def _admin(*statements: str) -> None:
    admin = postgres_admin_url()
    assert admin
    with psycopg.connect(admin, autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement.encode())


def _as(url: str, user: str, password: str, database: str | None = None) -> str:
    parts = urlsplit(url)
    host = f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname)
    path = parts.path if database is None else f"/{database}"
    return urlunsplit(parts._replace(netloc=f"{quote(user)}:{quote(password)}@{host}", path=path))


def _note(store: PostgresStore, url: str, text: str = "a note") -> Node:
    service = Service(store, Settings(vault_dir=Path("/nonexistent"), database_url=url))
    outcome, _ = service.note(parse("note", {"initiative": "faults", "text": text}))
    assert outcome.primary is not None
    with store.read() as session:
        node = session.get_node(outcome.primary.id)
    assert node is not None
    return node


@pytest.fixture
def blank() -> Iterator[str]:
    """A database without a vault, dropped afterwards (never reused: its settings die with it)."""
    from tests.pg import blank_database, drop_database

    made = blank_database()
    yield made
    drop_database(made)


@pytest.fixture
def owned() -> Iterator[tuple[str, str]]:
    """(url, role) of a new database a new LOGIN role owns, connected as that role."""
    admin = postgres_admin_url()
    assert admin
    suffix = uuid.uuid4().hex[:10]
    name, role, password = f"kaeru_faults_{suffix}", f"kaeru_role_{suffix}", f"pw-{suffix}"
    _admin(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'", f"CREATE DATABASE {name} OWNER {role}")
    try:
        yield _as(admin, role, password, name), role
    finally:
        _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)", f"DROP ROLE IF EXISTS {role}")


# --- a refused connection -------------------------------------------------------------------------


def test_a_password_role_or_database_the_server_refuses_is_not_retryable(owned: tuple[str, str], blank: str) -> None:
    """SQLSTATE 28P01, 28000, 3D000: waiting cannot cure them, so they are `VaultUnusable`, with the
    server's reason and what to change; a server that is down or closed to connections stays
    retryable (a stdio server waits for it, decision 236)."""
    url, role = owned
    wrong = _as(url, role, "not-the-password")
    with pytest.raises(VaultUnusable) as password:
        PostgresStore(wrong, connect_timeout_s=5)
    assert not password.value.retryable and "password authentication failed" in password.value.message
    assert "not-the-password" not in password.value.message and "percent-encoded" in password.value.message
    _admin(f"ALTER ROLE {role} NOLOGIN")
    with pytest.raises(VaultUnusable) as login:
        PostgresStore(url, connect_timeout_s=5)
    assert not login.value.retryable and "is not permitted to log in" in login.value.message
    assert "ALTER ROLE name LOGIN" in login.value.message
    missing = urlsplit(blank)._replace(path=f"{urlsplit(blank).path}_never_created").geturl()
    with pytest.raises(VaultUnusable) as database:
        PostgresStore(missing, connect_timeout_s=5)
    assert not database.value.retryable and "_never_created" in database.value.message
    assert "CREATE DATABASE" in database.value.message

    with pytest.raises(Unavailable) as down:
        PostgresStore("postgresql://kaeru:pw@127.0.0.1:1/nowhere", connect_timeout_s=5)
    assert down.value.retryable and "Connection refused" in down.value.message
    _admin(f'ALTER DATABASE "{urlsplit(blank).path.lstrip("/")}" ALLOW_CONNECTIONS false')
    with pytest.raises(Unavailable) as closed:
        PostgresStore(blank, connect_timeout_s=5)
    assert closed.value.retryable and "not currently accepting connections" in closed.value.message


def test_a_password_left_out_of_the_url_is_looked_for_where_libpq_looks(
    owned: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`kaeru setup` leaves the password out of a client's file and says libpq finds it in ~/.pgpass
    or PGPASSWORD; when it is in neither, the refusal says where to put it, not that the URL's
    password is wrong (it told that person to correct a password the URL never had)."""
    url, role = owned
    parts = urlsplit(url)
    without = urlunsplit(parts._replace(netloc=f"{quote(role)}@{parts.hostname}:{parts.port}"))
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "no-pgpass"))
    with pytest.raises(VaultUnusable) as refused:
        PostgresStore(without, connect_timeout_s=5)
    assert not refused.value.retryable and "~/.pgpass" in refused.value.message, refused.value.message
    assert "PGPASSWORD" in refused.value.message and "percent-encoded" not in refused.value.message


def test_kaeru_serve_on_stdio_stops_at_start_on_a_wrong_password(owned: tuple[str, str], tmp_path: Path) -> None:
    """It served, every call answering a retryable "… password authentication failed … (this server
    started while the database did not answer …)": README promises it fails at once."""
    url, role = owned
    env = {"KAERU_VAULT": str(tmp_path / "unused"), "KAERU_DATABASE_URL": _as(url, role, "not-the-password")}
    served = kaeru(env, "serve", stdin=b"")
    assert served.code == 1, (served.code, served.stderr)
    assert "password authentication failed" in served.stderr and "serving" not in served.stderr, served.stderr


def test_a_role_refused_while_a_server_runs_is_said_not_retryable(owned: tuple[str, str]) -> None:
    """LOGIN revoked (or the password changed) under a running server: a call that needs a new
    connection is told why, not to retry."""
    url, role = owned
    store = PostgresStore(url, connect_timeout_s=5)
    try:
        _note(store, url)
        _admin(
            f"ALTER ROLE {role} NOLOGIN",
            f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '{role}'",
        )
        with pytest.raises(VaultUnusable) as refused, store.read() as session:
            session.get_node("n_none")
        assert not refused.value.retryable and "is not permitted to log in" in refused.value.message
    finally:
        store.close()


def test_a_server_started_before_its_database_says_a_refusal_found_later_as_it_is(owned: tuple[str, str]) -> None:
    """The database a stdio server waited for answered, but refuses its password: every call says
    so, not retryable — not only the one that tried, while the next ones said "retry"."""
    url, role = owned
    pending = StoreWhenReachable(
        lambda: PostgresStore(_as(url, role, "not-the-password"), connect_timeout_s=5),
        Unavailable("cannot connect to PostgreSQL: Connection refused"),
    )
    time.sleep(RETRY_S)  # the next call opens the store
    for _ in range(2):
        with pytest.raises(Unavailable) as refused:
            pending.read()
        assert not refused.value.retryable and "password authentication failed" in refused.value.message
    pending.close()


# --- a vault database dropped and made again --------------------------------------------------------


def test_a_vault_database_made_again_empty_is_said_at_once_not_retried(blank: str) -> None:
    """Each call waited for the pool's whole timeout (its every new connection failing `_configure`
    on the missing `schema_migrations`) and then said "retry shortly"."""
    name = urlsplit(blank).path.lstrip("/")
    store = PostgresStore(blank, connect_timeout_s=5)
    try:
        _note(store, blank)
        _admin(f'DROP DATABASE "{name}" WITH (FORCE)', f'CREATE DATABASE "{name}"')
        for begin in (store.read, store.write):
            with pytest.raises(VaultUnusable) as gone, begin() as session:
                session.get_node("n_none")
            assert not gone.value.retryable, gone.value.message
            assert "schema_migrations is missing" in gone.value.message and name in gone.value.message
    finally:
        store.close()


# --- a server that only reads ----------------------------------------------------------------------


def test_a_database_that_only_reads_is_said_so_not_internal(blank: str) -> None:
    """SQLSTATE 25006 (here: `default_transaction_read_only` on a database to migrate) and 0A000
    "… during recovery" (a write on a hot standby) were `internal`, "please report it"."""
    _admin(f'ALTER DATABASE "{urlsplit(blank).path.lstrip("/")}" SET default_transaction_read_only = on')
    with pytest.raises(VaultUnusable) as refused:
        PostgresStore(blank, connect_timeout_s=5)
    assert not refused.value.retryable and "only reads" in refused.value.message
    assert "target_session_attrs=read-write" in refused.value.message, refused.value.message
    standby = translate(psycopg.errors.FeatureNotSupported("cannot set transaction read-write mode during recovery"))
    assert isinstance(standby, VaultUnusable) and "primary" in standby.message and "during recovery" in standby.message


# --- a limit on a transaction's idle time ------------------------------------------------------------


@pytest.mark.parametrize("through", ["direct", "pgbouncer"])
def test_a_role_limit_on_idle_transactions_does_not_end_a_write(blank: str, through: str) -> None:
    """A role's or database's `idle_in_transaction_session_timeout` ended a write whose work between
    two statements outlasted it (a 3 MB note): kaeru raises a limit under a minute to a minute per
    session, or per transaction behind a pooler, as it sets the lock and statement timeouts."""
    if through == "pgbouncer" and not pgbouncer_binary():
        pytest.skip("pgbouncer is not installed (the README's test command installs it)")
    PostgresStore(blank, connect_timeout_s=5).close()  # migrated before the limit applies
    _admin(f"ALTER DATABASE \"{urlsplit(blank).path.lstrip('/')}\" SET idle_in_transaction_session_timeout = '1ms'")

    def write_slowly(url: str) -> None:
        store = PostgresStore(url, connect_timeout_s=5)
        try:
            node = _note(store, url)
            with store.write() as session:
                session.get_node(node.id, for_update=True)
                # A statement of its own, not a pipeline's: a pipeline may end with a Flush after
                # its Sync, and the server arms the limit only on a Sync it answered last.
                session.get_node(node.id)
                time.sleep(0.05)  # the work between two statements, past the limit
                session.put_node(node.evolve(rev_no=2, revision="2-a", recorded_at=NOW), request_id=None, actor="t")
            with store.read() as session:
                assert [e.node.revision for e in session.revision_log(node.id)][-1] == "2-a"
        finally:
            store.close()

    if through == "direct":
        write_slowly(blank)
    else:
        with pgbouncer(blank, pool_size=1) as pooled:
            write_slowly(pooled)


@pytest.mark.parametrize(("limit", "kept"), [("1ms", "1min"), ("2s", "1min"), ("5min", "5min"), ("0", "0")])
def test_a_short_idle_limit_is_raised_to_a_minute_and_a_longer_one_kept(blank: str, limit: str, kept: str) -> None:
    """Turning the limit off let a writer that stopped mid-transaction (a laptop asleep) hold its
    row locks until TCP noticed, hours later: an operator's longer limit is kept, a shorter one
    raised to a minute (`IDLE_FLOOR`)."""
    PostgresStore(blank, connect_timeout_s=5).close()
    _admin(f"ALTER DATABASE \"{urlsplit(blank).path.lstrip('/')}\" SET idle_in_transaction_session_timeout = '{limit}'")
    store = PostgresStore(blank, connect_timeout_s=5)
    try:
        with store.write() as session:
            row = session._db.one("SELECT current_setting('idle_in_transaction_session_timeout')")
    finally:
        store.close()
    assert row is not None and row[0] == kept


def test_a_transaction_ended_for_its_idle_time_is_said_so() -> None:
    """Should the limit still apply (a session kaeru did not set up), SQLSTATE 25P03 names it. (The
    server's message is built here: a client that writes to the session the server has just closed
    may read only the reset, not the message.)"""
    ended = psycopg.errors.IdleInTransactionSessionTimeout("terminating connection due to idle-in-transaction timeout")
    said = translate(ended)
    assert said.code == "unavailable" and "idle_in_transaction_session_timeout" in said.message, said.message
    assert "ALTER ROLE name RESET" in said.message
