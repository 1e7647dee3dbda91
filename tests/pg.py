"""PostgreSQL test databases: a fresh, empty vault database per test on the server of
`KAERU_TEST_DATABASE_URL`.

Measured on the loopback test cluster (PostgreSQL 15, fsync=off):

* creating a database and migrating it: ~40 ms; `CREATE DATABASE … TEMPLATE` of a migrated
  template: 7–20 ms on an idle server, but 100–200 ms while tests run (FILE_COPY checkpoints and
  both strategies copy files; under concurrent I/O the checkpoint alone took seconds once);
* a template that anything can connect to costs +100 ms per copy (CREATE DATABASE finds an
  autovacuum worker in it, signals it and sleeps 100 ms), so the template refuses connections;
* DROP DATABASE: ~5 ms, +100 ms when the backends of the test's just-closed pool have not exited;
* emptying a used database instead (`TRUNCATE … RESTART IDENTITY` of every table but
  `schema_migrations`): ~20 ms, no file copy, no checkpoint.

So a database is created (from the per-process template) only when no used one is ready; a used
one is emptied in the background — its leftover sessions ended first — and handed to the next test.
Tests see exactly what a new database would hold: the migrated schema, no rows, identities
restarted, and no vault secret (each vault makes its own when its store first opens).
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


class _Factory:
    """Per process: one template, a creator thread, a recycler thread, and the ready databases."""

    def __init__(self, admin_url: str):
        self.admin_url = admin_url
        self._creator = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kaeru-test-db-create")
        self._recycler = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kaeru-test-db-recycle")
        self._admin: psycopg.Connection[tuple[object, ...]] | None = None
        self._template: str | None = None
        self._migrations: list[int] = []
        self._tables = ""
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
                conn.execute("DELETE FROM meta")
                self._migrations = [int(str(r[0])) for r in conn.execute("SELECT version FROM schema_migrations")]
                tables = conn.execute(
                    "SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = current_schema() "
                    "AND tablename <> 'schema_migrations' ORDER BY tablename"
                ).fetchall()
                self._tables = ", ".join(str(t[0]) for t in tables)
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
                done = [int(str(r[0])) for r in conn.execute("SELECT version FROM schema_migrations ORDER BY 1")]
                if done != sorted(self._migrations) or not self._tables:
                    raise psycopg.DataError("the test changed the schema")
                conn.execute(f"TRUNCATE {self._tables} RESTART IDENTITY")
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
