"""PostgreSQL test databases: a fresh, empty vault database per test on the server of
`KAERU_TEST_DATABASE_URL`.

Measured on the loopback test cluster (PostgreSQL 15, fsync=off):

* creating a database and migrating it: ~40 ms; `CREATE DATABASE … TEMPLATE` of a migrated
  template: 7–20 ms on an idle server, but 100–200 ms while tests run (FILE_COPY checkpoints and
  both strategies copy files; under concurrent I/O the checkpoint alone took seconds once);
* a template that anything can connect to costs +100 ms per copy (CREATE DATABASE finds an
  autovacuum worker in it, signals it and sleeps 100 ms), so the template refuses connections;
* DROP DATABASE: ~5 ms, +100 ms when the backends of the test's just-closed pool have not exited;
* emptying a used database instead: no file copy, no checkpoint. But `TRUNCATE` of every table
  makes new files for each table, index and TOAST table and unlinks the old ones: ~45 ms of server
  CPU, most of what the server spent on an empty test, when a test writes to a few tables only. So
  only the tables the test changed are emptied (`_Reset`), one query telling which.

So a database is created (from the per-process template) only when no used one is ready; a used
one is emptied in the background — its leftover sessions ended first — and handed to the next test.
Tests see what a new database would hold: the migrated schema with the rows its migrations seed (a
`text_totals` and a `text_change_horizon` row) and no others, identities restarted, no vault secret
(each vault makes its own when its store first opens), no statistics counters and no planner
statistics (a database a test ANALYZEd is dropped, not reset). Tables, indexes or functions a test
adds to the schema and does not remove are not looked for.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from psycopg import sql

from kaeru.storage.postgres.store import PostgresStore
from tests.backends import postgres_admin_url

_PREFIX = "kaeru_test_"
_WAIT_S = 120.0


def database_url(admin_url: str, name: str) -> str:
    """`admin_url` pointing at database `name` (user, password, host and query kept)."""
    parts = urlsplit(admin_url)
    return urlunsplit(parts._replace(path=f"/{name}"))


def _end_other_sessions(conn: psycopg.Connection[tuple[object, ...]], name: str) -> None:
    """End every other session of database `name` and wait until they are gone (≤ 2 s)."""
    conn.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
        (name,),
    )
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", (name,)
        ).fetchone()
        if not row or not row[0]:
            return
        time.sleep(0.002)


class _Reset:
    """How to bring a used copy of the template back to the template's state, read from the
    template once: its tables (but `schema_migrations`), their file sizes, the rows they hold (those
    migrations seed), and its sequences.

    A table is changed when its file size differs from the template's — a table with no file pages
    there gets some with its first row written, even one rolled back — or, for a table with pages
    there, when its rows differ. Only changed tables are truncated, which empties their indexes and
    TOAST tables as well, and their template rows are copied back; a sequence that was used is set
    back to its start (as `TRUNCATE … RESTART IDENTITY` would)."""

    def __init__(self, conn: psycopg.Connection[tuple[object, ...]]):
        names = [
            str(r[0])
            for r in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
                "AND tablename <> 'schema_migrations' ORDER BY tablename"
            )
        ]
        self.rows: dict[str, bytes] = {}
        checks: list[sql.Composed] = []
        for name in names:
            table = sql.Identifier(name)
            size = conn.execute(sql.SQL("SELECT pg_relation_size({})").format(self._oid(name))).fetchone()
            pages = int(str(size[0])) if size else 0
            changed = sql.SQL("pg_relation_size({}) <> {}").format(self._oid(name), pages)
            if pages:
                digest = conn.execute(self._digest(table)).fetchone()
                changed = sql.SQL("{} OR ({}) IS DISTINCT FROM {}").format(
                    changed, self._digest(table), digest[0] if digest else None
                )
                with conn.cursor().copy(sql.SQL("COPY {} TO STDOUT").format(table)) as copy:
                    held = b"".join(bytes(block) for block in copy)
                if held:
                    self.rows[name] = held
            checks.append(sql.SQL("CASE WHEN {} THEN {} END").format(changed, name))
        self.query = sql.SQL(
            "SELECT array_remove(ARRAY[{}]::text[], NULL), "
            "(SELECT array_agg(s.seqrelid) FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid "
            "WHERE c.relnamespace = current_schema()::regnamespace AND pg_sequence_last_value(s.seqrelid) IS NOT NULL), "
            "(SELECT array_agg(version ORDER BY version) FROM schema_migrations), "
            "(SELECT coalesce(bool_or(analyze_count + autoanalyze_count > 0), false) FROM pg_stat_user_tables)"
        ).format(sql.SQL(", ").join(checks))
        used = conn.execute(
            "SELECT count(*) FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid "
            "WHERE c.relnamespace = current_schema()::regnamespace AND pg_sequence_last_value(s.seqrelid) IS NOT NULL"
        ).fetchone()
        if used and used[0]:  # a used sequence is set back to its start, not to the template's value
            raise RuntimeError("a sequence of the template database has been used: resetting cannot restore it")

    @staticmethod
    def _oid(name: str) -> sql.Composed:
        return sql.SQL("{}::regclass").format('"' + name.replace('"', '""') + '"')

    @staticmethod
    def _digest(table: sql.Identifier) -> sql.Composed:
        return sql.SQL("SELECT md5(coalesce(string_agg(t::text, ' ' ORDER BY t::text), '')) FROM {} t").format(table)

    def apply(self, conn: psycopg.Connection[tuple[object, ...]], migrations: list[int]) -> None:
        """Empty what the test changed (`conn`: in autocommit, no other session on the database).

        Raises:
            psycopg.DataError: the test changed the schema's migrations or analyzed a table (the
                database is dropped instead). Other schema changes a test makes and does not undo
                (a table or index of its own) are not looked for.
        """
        row = conn.execute(self.query).fetchone()
        if row is None or [int(str(v)) for v in row[2] or []] != sorted(migrations):  # type: ignore[attr-defined]
            raise psycopg.DataError("the test changed the schema")
        if row[3]:  # ANALYZE left planner statistics (`pg_statistic`) that TRUNCATE keeps
            raise psycopg.DataError("the test analyzed tables")
        changed: list[str] = row[0] or []  # type: ignore[assignment]
        used: list[int] = row[1] or []  # type: ignore[assignment]
        with conn.transaction():
            if changed:
                conn.execute(sql.SQL("TRUNCATE {}").format(sql.SQL(", ").join(map(sql.Identifier, changed))))
            for name in changed:
                if name in self.rows:
                    with conn.cursor().copy(sql.SQL("COPY {} FROM STDIN").format(sql.Identifier(name))) as copy:
                        copy.write(self.rows[name])
            if used:
                conn.execute(
                    "SELECT setval(seqrelid, seqstart, false) FROM pg_sequence WHERE seqrelid = ANY(%s::oid[])", (used,)
                )
        # A new database has no statistics counters (`pg_stat_user_tables`): this session's own
        # (its reads and copies above) are flushed first, the ended sessions' were as they exited.
        try:
            if conn.info.server_version >= 150000:
                conn.execute("SELECT pg_stat_force_next_flush()")
            conn.execute("SELECT pg_stat_reset()")
        except psycopg.errors.InsufficientPrivilege:
            pass  # a server that does not let this role reset them: they stay


class _Factory:
    """Per process: one template, a creator thread, a recycler thread, and the ready databases."""

    def __init__(self, admin_url: str):
        self.admin_url = admin_url
        self._creator = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kaeru-test-db-create")
        self._recycler = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kaeru-test-db-recycle")
        self._admin: psycopg.Connection[tuple[object, ...]] | None = None
        self._template: str | None = None
        self._migrations: list[int] = []
        self._reset: _Reset | None = None
        self._cond = threading.Condition()
        self._ready: list[str] = []
        self._creating = 0
        self._error: BaseException | None = None
        self._all: set[str] = set()

    # --- on the creator thread ------------------------------------------------------------
    def _admin_conn(self) -> psycopg.Connection[tuple[object, ...]]:
        if self._admin is None or self._admin.closed or self._admin.broken:
            self._admin = psycopg.connect(self.admin_url, autocommit=True)
        return self._admin

    def _ensure_template(self) -> str:
        if self._template is None:
            admin = self._admin_conn()
            name = f"kaeru_tpl_{os.getpid()}_{uuid.uuid4().hex[:6]}"
            admin.execute(f'CREATE DATABASE "{name}"')
            url = database_url(self.admin_url, name)
            PostgresStore(url, min_size=1, max_size=1).close()
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("TRUNCATE meta")  # no secret, and no page left as a used copy's is
                self._migrations = [int(str(r[0])) for r in conn.execute("SELECT version FROM schema_migrations")]
                self._reset = _Reset(conn)
            admin.execute(f'ALTER DATABASE "{name}" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false')
            self._template = name
        return self._template

    def _create(self) -> None:
        try:
            template = self._ensure_template()
            name = f"{_PREFIX}{uuid.uuid4().hex[:12]}"
            strategy = " STRATEGY FILE_COPY" if self._admin_conn().info.server_version >= 150000 else ""
            self._admin_conn().execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"{strategy}')
        except BaseException as exc:
            with self._cond:
                self._creating -= 1
                self._error = exc
                self._cond.notify_all()
            return
        with self._cond:
            self._creating -= 1
            self._all.add(name)
            self._ready.append(name)
            self._cond.notify_all()

    def _create_blank(self) -> str:
        name = f"{_PREFIX}{uuid.uuid4().hex[:12]}"
        self._admin_conn().execute(f'CREATE DATABASE "{name}"')
        return name

    # --- on the recycler thread -----------------------------------------------------------
    def _recycle(self, name: str) -> None:
        """Empty a used database (ending its leftover sessions first) and make it ready again."""
        try:
            with psycopg.connect(database_url(self.admin_url, name), autocommit=True) as conn:
                _end_other_sessions(conn, name)
                if self._reset is None:
                    raise psycopg.DataError("no template to reset to")
                self._reset.apply(conn, self._migrations)
        except psycopg.Error:
            self._drop(name)
            return
        with self._cond:
            self._ready.append(name)
            self._cond.notify_all()

    def _drop(self, name: str) -> None:
        try:
            with psycopg.connect(self.admin_url, autocommit=True) as conn:
                _end_other_sessions(conn, name)
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        except psycopg.Error:
            pass  # a leftover database on a throwaway cluster must not fail a later test
        with self._cond:
            self._all.discard(name)

    # --- on the test thread ---------------------------------------------------------------
    def take(self) -> str:
        """A ready database's name; one more is created in the background when none is left."""
        with self._cond:
            deadline = time.monotonic() + _WAIT_S
            while not self._ready:
                if self._error is not None:
                    error, self._error = self._error, None
                    raise RuntimeError(f"could not create a test database: {error}") from error
                if self._creating == 0:
                    self._creating += 1
                    self._creator.submit(self._create)
                if not self._cond.wait(timeout=max(0.0, deadline - time.monotonic())):
                    raise TimeoutError("no test database became ready in time")
            name = self._ready.pop()
            if not self._ready and self._creating == 0:
                self._creating += 1
                self._creator.submit(self._create)  # a spare for the next test, while this one runs
            return name

    def blank(self) -> str:
        """A database without the vault schema (for migration tests); dropped, never recycled."""
        name = self._creator.submit(self._create_blank).result()
        with self._cond:
            self._all.add(name)
        return name

    def give_back(self, name: str, *, recycle: bool) -> None:
        if recycle:
            self._recycler.submit(self._recycle, name)
        else:
            self._recycler.submit(self._drop, name)

    def close(self) -> None:
        """At exit (both threads have finished their queues by now): drop every database made here."""
        try:
            with psycopg.connect(self.admin_url, autocommit=True) as conn:
                for name in sorted(self._all):
                    conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                if self._template is not None:
                    conn.execute(f'ALTER DATABASE "{self._template}" WITH IS_TEMPLATE false')
                    conn.execute(f'DROP DATABASE IF EXISTS "{self._template}" WITH (FORCE)')
        except psycopg.Error:
            pass  # the throwaway cluster may already be gone
        if self._admin is not None:
            self._admin.close()


_factory: _Factory | None = None
_factory_lock = threading.Lock()
_blank: set[str] = set()


def _get_factory() -> _Factory:
    global _factory
    with _factory_lock:
        if _factory is None:
            url = postgres_admin_url()
            if url is None:
                raise RuntimeError("KAERU_TEST_DATABASE_URL is unset: no PostgreSQL server to create test databases on")
            _factory = _Factory(url)
            atexit.register(_factory.close)
        return _factory


def fresh_database() -> str:
    """An empty vault database (migrated schema, no rows, no secret yet); returns its URL."""
    factory = _get_factory()
    return database_url(factory.admin_url, factory.take())


def blank_database() -> str:
    """A database with no vault schema at all (to test migrating it); returns its URL."""
    factory = _get_factory()
    name = factory.blank()
    _blank.add(name)
    return database_url(factory.admin_url, name)


def drop_database(url: str) -> None:
    """Give back a database made here: it is emptied (or dropped) in the background, its open
    sessions ended."""
    name = urlsplit(url).path.lstrip("/")
    if not name.startswith(_PREFIX):
        raise ValueError(f"refusing to drop {name!r}: not a test database")
    _get_factory().give_back(name, recycle=name not in _blank)
    _blank.discard(name)


#: The mark of a module of PostgreSQL-only tests: skipped where the suite has no server.
NEEDS_POSTGRES = pytest.mark.skipif(
    not postgres_admin_url(),
    reason="PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset (the README's test command sets it)",
)


def run_as_admin(url: str, *statements: str) -> None:
    """Run `statements` one by one, each committed (roles, grants, databases a test sets up)."""
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement.encode())


def as_role(url: str, role: str, password: str, query: str = "") -> str:
    """`url` logging in as `role` with `password` (and `query` in place of its own)."""
    parts = urlsplit(url)
    host = f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname)
    return urlunsplit(parts._replace(netloc=f"{role}:{password}@{host}", query=query))


def wait_until_blocked(url: str, timeout: float = 5.0) -> None:
    """Return once some other session of this database waits on a lock (instead of sleeping blindly):
    a second transaction a test started now waits for the first, which may commit."""
    deadline = time.monotonic() + timeout
    with psycopg.connect(url, autocommit=True) as conn:
        while time.monotonic() < deadline:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
            ).fetchone()
            if row and row[0]:
                return
            time.sleep(0.01)
    raise AssertionError("the second transaction never waited for the first")
