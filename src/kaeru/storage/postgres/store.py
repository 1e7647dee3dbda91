"""The PostgreSQL backend (psycopg 3): many stateless servers over one database.

Semantics mirror `storage/sqlite/store.py` exactly; only the concurrency mechanics differ. SQLite
serialises every writer with `BEGIN IMMEDIATE`; here writers run concurrently in READ COMMITTED
and meet only where they touch the same rows:

* `get_node`/`get_slot(for_update=True)` take row locks (`SELECT … FOR UPDATE`), so a
  compare-and-set sees the latest committed revision and holds it until commit; a slot's holder is
  locked before the slot (`WriteContext.take_slot`), and a write PostgreSQL still ends as a
  deadlock's victim runs again, whole (`run_mutation`, decision 461);
* keys that may be claimed by two transactions at once — a replay `request_id`, a new
  initiative's name, a free slot — are claimed with `INSERT … ON CONFLICT`: the unique index makes
  the loser wait for the winner and then see its committed row, without application locks.

Reads run in REPEATABLE READ READ ONLY transactions: one consistent snapshot per call.
Full-text lexemes and queries are built in Python from `kaeru.domain.text` tokens (never by a
PostgreSQL text-search parser), so what matches is identical to the SQLite FTS5 index.
"""

from __future__ import annotations

import os
import re
import weakref
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import timedelta
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool, PoolTimeout

from kaeru.config import url_password_replaced
from kaeru.errors import Unavailable
from kaeru.storage.health import UTF8_REMEDY, holds_any_text
from kaeru.storage.migrate import (
    INDEX_PENDING,
    TEXT_PENDING,
    BackgroundUpgrade,
    UpgradeGate,
    VaultTooNew,
    VaultUnusable,
    run_pending,
    shipped,
    upgrade_later,
)
from kaeru.storage.postgres.clock import ServerClock
from kaeru.storage.postgres.db import CONNECT_REFUSALS, MIGRATOR, PgDb, migrate_as_owner, translate, unusable_schemas
from kaeru.storage.postgres.planstats import Upkeep, refresh
from kaeru.storage.postgres.search import FIELD_WEIGHTS, lexeme, term, tsquery_literal
from kaeru.storage.postgres.session import PostgresSession
from kaeru.storage.postgres.settle import xact_status
from kaeru.storage.postgres.textcache import TextCopies
from kaeru.storage.postgres.upgradelock import MIGRATION_LOCK, roll_back, take
from kaeru.storage.postgres.vectorcodes import VectorCodes

__all__ = [
    "FIELD_WEIGHTS", "PostgresSession", "PostgresStore", "lexeme", "redact_url", "term", "translate",
    "tsquery_literal",
]  # fmt: skip

_MIGRATIONS = "kaeru.storage.postgres.migrations"
_MIGRATION_LOCK = MIGRATION_LOCK  # (`upgradelock`'s) held by tests as another process upgrading would

#: How long a pooled connection lives: a database migrated by a newer kaeru is noticed by each
#: connection opened since, so within this many seconds by all of them.
SCHEMA_RECHECK_S = 300.0
_BEGIN_WRITE = "BEGIN ISOLATION LEVEL READ COMMITTED READ WRITE"
_BEGIN_READ = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
#: A role's or database's limit on a transaction's idle time, raised to a minute where it is
#: shorter: kaeru's Python work between two statements of a write (a big note's index) outlasted a
#: second's limit, and every retry with it (decision 445); a longer limit is kept, so a writer that
#: stopped mid-transaction (a laptop asleep, a hung process) still gives its row locks back.
IDLE_FLOOR = (
    "CASE WHEN current_setting('idle_in_transaction_session_timeout')::interval BETWEEN interval '1 ms' "
    "AND interval '60 s' THEN '60s' ELSE current_setting('idle_in_transaction_session_timeout') END"
)
#: What `_configure` sets for a connection's session, the first column whether a pooler answers
#: (the process answering is not the one the cancel key names); the doctor's connection sets it too.
SESSION_SETTINGS = (
    "SELECT pg_backend_pid() <> %s, CASE WHEN pg_backend_pid() = %s THEN "
    "set_config('lock_timeout', %s, false) || set_config('statement_timeout', %s, false) || "
    f"set_config('jit', 'off', false) || set_config('idle_in_transaction_session_timeout', {IDLE_FLOOR}, false) END"
)
#: What `_configure` sets for a connection's session, set for one transaction instead (a pooler's).
LOCAL_SETTINGS = (
    "SELECT set_config('lock_timeout', %s, true), set_config('statement_timeout', %s, true), "
    f"set_config('jit', 'off', true), set_config('idle_in_transaction_session_timeout', {IDLE_FLOOR}, true)"
)


def redact_url(url: str) -> str:
    """`url` without its password (in the user part or a `password=` parameter), for `describe()`."""
    return url_password_replaced(url, "***")


#: A refused connection worth waiting out: too many clients, the server starting up (SQLSTATEs
#: 53300, 57P03). libpq gives a connection refused at start-up no SQLSTATE, only the server's words.
_TRANSIENT_AT_CONNECT = re.compile(
    r"too many clients|too many connections for|remaining connection slots are reserved|"
    r"the database system is starting up|"
    r"the database system is not yet accepting connections"
)


#: How long a call waits for a pooled connection before it asks the server itself whether it takes
#: new ones (seconds): a pool that is only busy waits on, up to the pool's whole timeout (decision 236).
FIRST_WAIT_S = 2.0


def _reachable(url: str, timeout_s: float, *, vault: bool = False) -> None:
    """Connect once before the pool does, so that a wrong address, password or database name is
    said at once and why — the pool would retry it silently until its timeout (30 s) and then
    report only a timeout. A server that is full or starting up is left to the pool's wait.

    A `connect_timeout` the URL sets is libpq's to check (a bad one is said here, as the pool would
    only have waited), and a parameter libpq does not know (`?sslmod=`) is said as the URL's fault.
    With `vault`, the database must still hold the vault's tables: one dropped and made again (or
    emptied) under a running server failed each new pooled connection's `_configure`, which the
    pool retries as silently.

    Raises:
        VaultUnusable: what waiting cannot cure — a password, role or database the server refuses
            (`CONNECT_REFUSALS`), a URL libpq cannot read, the vault's tables gone (decision 445).
        Unavailable: the server refused or cannot be reached (libpq's reason, the URL redacted).
    """
    try:
        timeout: dict[str, Any] = {}
        if "connect_timeout" not in conninfo_to_dict(url):
            timeout["connect_timeout"] = max(1, round(timeout_s))
        conn = psycopg.connect(url, autocommit=True, **timeout)
    except psycopg.Error as exc:
        if isinstance(exc, psycopg.OperationalError) and _TRANSIENT_AT_CONNECT.search(str(exc)):
            return
        said = f"cannot connect to PostgreSQL at {redact_url(url)}: {' '.join(str(exc).split())}"
        remedy = next((fix for pattern, fix in CONNECT_REFUSALS if re.search(pattern, str(exc))), None)
        if remedy is None and not isinstance(exc, psycopg.ProgrammingError):
            raise Unavailable(said) from exc
        raise VaultUnusable(f"{said}: {remedy or 'correct KAERU_DATABASE_URL'}") from exc
    try:
        if vault:
            conn.execute("SELECT max(version) FROM schema_migrations")
    except psycopg.errors.UndefinedTable as exc:
        raise VaultUnusable(
            f"the vault's tables are gone: schema_migrations is missing in database {conn.info.dbname} at "
            f"{redact_url(url)} (dropped and made again, or emptied, while this server ran): nothing was "
            "written; restore the vault there, or restart kaeru to begin a new, empty one"
        ) from exc
    except psycopg.Error as exc:
        raise translate(exc) from exc
    finally:
        conn.close()


def database_encoding(conn: psycopg.Connection[Any]) -> str:
    """The encoding the database stores text in (`UTF8`, `LATIN1`, `SQL_ASCII`, …)."""
    reported = conn.info.parameter_status("server_encoding")
    if reported:
        return reported
    row = conn.execute("SELECT current_setting('server_encoding')").fetchone()
    return str(row[0]) if row else ""


def _require_utf8(conn: psycopg.Connection[Any], url: str) -> None:
    """Refuse a database that is not UTF-8 before anything is written to it. A LATIN1 or EUC_JP
    database cannot hold every text an agent writes (a note in Japanese, an emoji, a dash), and a
    SQL_ASCII one stores bytes unchecked, so its string functions count and compare them as
    bytes: either would fail or differ from SQLite note by note, long after set-up (decision 186).

    Raises:
        VaultUnusable: the database's encoding is another.
    """
    encoding = database_encoding(conn)
    if not holds_any_text(encoding):
        raise VaultUnusable(f"the database at {redact_url(url)} stores text as {encoding}: {UTF8_REMEDY}")


class PostgresStore(UpgradeGate):
    """A PostgreSQL database and a pool of connections to it; migrated on construction."""

    backend = "postgres"

    def __init__(
        self,
        url: str,
        *,
        min_size: int = 1,
        max_size: int = 16,
        lock_timeout_ms: int = 30_000,
        statement_timeout_ms: int = 30_000,
        connect_timeout_s: float = 30.0,
        search_cache_bytes: int | None = None,
        upgrade_in_background: bool = False,
    ):
        """Open the pool and bring the schema up to date (`search_cache_bytes`: the copies' bound,
        `textcache.CACHE_BYTES` when None) — on a thread of its own when `upgrade_in_background` and
        the database holds an older vault (`BackgroundUpgrade`).

        Raises:
            Unavailable: the server cannot be reached (or is too busy) within `connect_timeout_s`.
            VaultUnusable: the database is not UTF-8, or the role lacks a right the vault needs.
            Internal: a migration failed.
        """
        self.url = url
        #: The `lock_timeout` and `statement_timeout` every transaction runs under, as PostgreSQL reads them.
        self._timeouts = (f"{int(lock_timeout_ms)}ms", f"{int(statement_timeout_ms)}ms")
        #: Whether the connections reach PostgreSQL through a pooler (`_configure`).
        self.pooled = False
        #: Whether a new pooled connection found `schema_migrations` missing (`_configure`).
        self._gone = False
        self._schema = 0  # the newest migration this code knows; set by `_migrate`
        #: The in-memory copies a common-word search ranks from (decision 16.C1), shared by the sessions.
        self.copies = TextCopies(search_cache_bytes)
        self.vector_codes = VectorCodes()  # semantic recall's candidate codes, for read sessions
        self.copies.warm = self._in_snapshot  # a cold read on another thread, SQL ranking meanwhile (16.Z1)
        #: Pooled connections that found the database migrated past `_schema` when they opened.
        self._stale: weakref.WeakSet[psycopg.Connection[Any]] = weakref.WeakSet()
        #: The database server's clock, by which every writer of the vault stamps (decision 404).
        self.clock = ServerClock()
        self._upkeep = Upkeep()  # the planner's statistics, gathered again as tables outgrow them
        self._pool = ConnectionPool(
            url,
            min_size=min_size,
            max_size=max_size,
            # UTF-8 whatever PGCLIENTENCODING says: every text is Unicode (`_require_utf8`).
            kwargs={"autocommit": True, "application_name": "kaeru", "client_encoding": "UTF8"},
            configure=self._configure,
            # Connections are replaced every few minutes, so each reads the schema level anew.
            max_lifetime=SCHEMA_RECHECK_S,
            timeout=connect_timeout_s,
            open=False,
            name="kaeru",
        )
        self.server_version = ""
        #: The migrations applied after opening (None: none pending, or applied before returning).
        self._upgrade: BackgroundUpgrade | None = None
        _reachable(url, connect_timeout_s)
        try:
            self._pool.open(wait=True, timeout=connect_timeout_s)
            with self._pool.connection() as conn:
                _require_utf8(conn, url)
                current = self._up_to_date(conn)
                later = self._behind(conn) if upgrade_in_background and not current else ""
                if not current and not later:
                    self._migrate(conn)
                if not later:  # a vault bulk-written where autovacuum is off or behind: its tables outgrew them
                    refresh(conn)
                version = conn.info.server_version
                self.clock.measure(conn)
                self.server_version = f"{version // 10000}.{version % 10000}"
        except BaseException as exc:
            self._pool.close()
            if isinstance(exc, psycopg.Error):
                raise translate(exc) from exc
            raise
        if later:
            self._upgrade = BackgroundUpgrade(
                later, self._upgrade_now, busy=lambda e: isinstance(e, psycopg.errors.LockNotAvailable)
            )

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        """Per-connection settings: lock waits and statements past their timeouts (0: none) end as a
        retryable `Unavailable` (`LockNotAvailable`, `QueryCanceled`) instead of hanging a caller.
        A connection opened after the start-up migration also reads the schema level: one older than
        the database serves no transaction (`_stale`, decisions 16.L1, 14.S6). No JIT compilation:
        a broad search's plan looks costly enough to be compiled, and compiling it took longer than
        the work it was for (decision 16.Q1). A limit on a transaction's idle time is at least a
        minute (`IDLE_FLOOR`, decision 445).

        Behind a connection pooler (PgBouncer, as Supabase, Neon and Heroku offer it), the server
        process that answers is not the one whose cancel key the connection was given, and in
        transaction mode the next transaction may run on another server connection: a session
        setting would stay on a server connection other clients get next, and a prepared statement
        would be missing there (or already exist). Such a connection prepares nothing, and each of
        its transactions sets its own timeouts (`_session`, decision 185)."""
        key = conn.info.backend_pid
        lock, statement = self._timeouts
        try:
            row = conn.execute(
                SESSION_SETTINGS + (", (SELECT max(version) FROM schema_migrations)" if self._schema else ""),
                (key, key, lock, statement),
            ).fetchone()
        except psycopg.errors.UndefinedTable:
            self._gone = True  # the pool retries in silence: `_connection` asks and says it at once
            raise
        self._gone = False
        if row is not None and row[0]:
            self.pooled = True
            conn.prepare_threshold = None
        if self._schema and row is not None and row[2] != self._schema:
            self._stale.add(conn)

    def _up_to_date(self, conn: psycopg.Connection[Any]) -> bool:
        """One read at open: True when every migration this kaeru ships is applied, the secret exists
        and no re-indexing is pending — then `_migrate` has nothing to do and takes no lock
        (decision 16.O2); a record of a former numbering counts as no migration (decision 470)."""
        try:  # the connection is in autocommit: a failed read leaves no transaction behind
            row = conn.execute(
                f"SELECT (SELECT max(version) FROM schema_migrations), {shipped(_MIGRATIONS).recorded}, "
                "EXISTS (SELECT 1 FROM meta WHERE key = 'secret'), "
                f"EXISTS (SELECT 1 FROM meta WHERE {INDEX_PENDING})"
            ).fetchone()
        except psycopg.errors.UndefinedTable:
            return False  # a new database: no tables yet
        newest = shipped(_MIGRATIONS).newest
        if row is None or row[0] != newest or row[1] != newest or not row[2] or row[3]:
            return False
        self._schema = newest
        return True

    def _behind(self, conn: psycopg.Connection[Any]) -> str:
        """What an existing vault older than this kaeru still needs (`upgrade_later`)."""
        try:
            row = conn.execute(shipped(_MIGRATIONS).behind).fetchone()
        except psycopg.errors.UndefinedTable:
            return ""  # a new database: no tables yet
        return "" if row is None else upgrade_later(row[0], bool(row[1]), shipped(_MIGRATIONS).newest, row[2])

    def _upgrade_now(self) -> None:
        """`_migrate` on a pooled connection (`BackgroundUpgrade`'s work)."""
        try:
            with self._pool.connection() as conn:
                self._migrate(conn)
        except psycopg.errors.LockNotAvailable:
            raise  # another process is migrating this vault: waited out and tried again
        except psycopg.Error as exc:
            raise translate(exc) from exc

    def _migrate(self, conn: psycopg.Connection[Any]) -> None:
        """Apply pending migrations in one transaction, serialised across processes by an advisory lock."""
        if self._up_to_date(conn):
            return
        conn.execute("BEGIN")
        try:
            # Another process may be migrating (re-stemming a big vault takes a while): wait for it
            # longer than for ordinary row locks.
            conn.execute("SET LOCAL lock_timeout = '600s'")
            conn.execute("SET LOCAL statement_timeout = 0")
            conn.execute("SET LOCAL idle_in_transaction_session_timeout = 0")  # behind a pooler too
            take(conn)  # said when another process holds it
            self._schema, _, self.migrated_now = run_pending(
                PgDb(conn), conn, conn.execute, _MIGRATIONS, "PostgreSQL",
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                "applied_at TEXT NOT NULL DEFAULT to_char(clock_timestamp() AT TIME ZONE 'UTC', "
                '\'YYYY-MM-DD"T"HH24:MI:SS.US"Z"\'))',
            )  # fmt: skip
            # A migration that changed what is indexed asks for the index columns to be computed
            # again once: the stems only (002, 009), or the literal tokens too (015).
            pending = {r[0] for r in conn.execute(f"SELECT key FROM meta WHERE {INDEX_PENDING}")}
            if pending:
                session = PostgresSession(conn, read_only=False)
                session.rebuild_text_index(stems_only=TEXT_PENDING not in pending)
            conn.execute("COMMIT")
        except BaseException as exc:
            if not conn.broken:
                conn.execute("ROLLBACK")
                # Refused by a statement of a migration, or of `run_pending` (whose `PgDb` translated it).
                cause = exc if isinstance(exc, psycopg.Error) else exc.__cause__
                if isinstance(cause, psycopg.errors.InsufficientPrivilege):
                    self._refuse_not_owner(conn, cause)
                # A schema of the path the role may not use is left out of it: "no schema … selected".
                if isinstance(cause, psycopg.errors.InvalidSchemaName) and (
                    said := unusable_schemas(lambda sql: conn.execute(sql).fetchall())
                ):
                    raise VaultUnusable(f"{said[0]}: {said[1]}") from exc
            raise

    def _refuse_not_owner(self, conn: psycopg.Connection[Any], exc: psycopg.Error) -> None:
        """A refused migration of a vault whose tables another role owns is said as that: only their
        owner may apply it. The schema's rights the refusal otherwise names (`GRANT_REMEDY`) were
        given and refused again, and every command of a role with the DML grants the doctor prints
        failed so while a migration was pending (decision 187).

        Raises:
            VaultUnusable: this role does not act as the tables' owner.
        """
        row = conn.execute(MIGRATOR).fetchone()
        if row is None or row[1]:
            return  # a new vault, or this role's own: the refusal as PostgreSQL said it
        owner, role = str(row[0]), str(row[3])
        what = self._behind(conn) or "applying its pending migrations"
        first = str(exc).strip().splitlines()[0]
        raise VaultUnusable(
            f"the vault needs an upgrade ({what}) that only the role owning its tables, {owner}, may apply: "
            f"PostgreSQL refused the role {role} in KAERU_DATABASE_URL ({first}); nothing was changed: "
            + migrate_as_owner(owner, role)
        ) from exc

    def applied_migrations(self) -> list[tuple[int, str]]:
        with self.read() as session:
            rows = session._db.rows("SELECT version, name FROM schema_migrations ORDER BY version")
        return [(int(r[0]), str(r[1])) for r in rows]

    def _connection(self) -> psycopg.Connection[Any]:
        """A pooled connection for a new transaction, which its first exchange begins (decision
        16.L7), unless the database was migrated past this code since the connection opened."""
        try:
            if self._gone:  # the vault's tables were missing: asked again now, not after the wait
                _reachable(self.url, FIRST_WAIT_S, vault=True)
            try:
                conn = self._pool.getconn(timeout=FIRST_WAIT_S)
            except PoolTimeout:
                # No connection yet: if the server refuses new ones (stopped, restarting, the database
                # closed to connections) the call is told so now, with libpq's reason, not after the
                # pool's whole wait (decision 236); a server that is only busy leaves it to that wait.
                _reachable(self.url, FIRST_WAIT_S, vault=bool(self._schema))
                conn = self._pool.getconn()
        except psycopg.Error as exc:
            raise translate(exc) from exc
        if conn not in self._stale:
            return conn
        self._pool.putconn(conn)
        raise VaultTooNew(
            f"the database was migrated past schema {self._schema}, which this server knows, by another "
            "kaeru while this server ran: restart it, with the newer kaeru"
        )

    def _replace(self, dead: psycopg.Connection[Any]) -> psycopg.Connection[Any]:
        """Another connection for a transaction whose first exchange found its pooled one dead
        (nothing ran on it: the pool discards it). Taken first, so that when none can be had the
        dead one is still the session's, given back once."""
        fresh = self._connection()
        self._pool.putconn(dead)
        return fresh

    def _settle(self, xid: str) -> str | None:
        """What became of write transaction `xid` (`settle.xact_status`)."""
        return xact_status(self.url, xid)

    @contextmanager
    def _session(self, begin: str, read_only: bool) -> Iterator[PostgresSession]:
        conn = self._connection()
        if self.clock.due():
            self.clock.measure(conn)
        db = PgDb(conn)
        # BEGIN goes with the first statement (16.L7); a pooled connection that died is replaced then.
        # A write learns its transaction id there too, to ask its fate if COMMIT's answer is lost.
        settle = None if read_only else self._settle
        db.begin(begin, self._replace, (LOCAL_SETTINGS, self._timeouts) if self.pooled else None, settle)
        try:
            try:
                session = PostgresSession(db, read_only=read_only, copies=self.copies)
                session.use_codes(self.vector_codes) if read_only else None
                yield session
                session.flush_term_stats()
                if db.begun_only():
                    db.discard()  # nothing reached the server: no transaction to end
                else:
                    # What the transaction held back and its COMMIT go in one pipeline: one round
                    # trip (decision 16.P2). A failed statement aborts the rest, COMMIT included.
                    db.commit()
                    self._upkeep.committed(session.nodes_written, db.connection)
            except BaseException as exc:
                roll_back(db.connection, exc)  # raises what held it up when an upgrade under way did
                raise
        finally:
            db.discard()
            # One closed by an interrupt (`PgDb._pipelined`), which ends the command, is not given
            # back: the pool would say on stderr that it discards it, above the interrupt's one line.
            if not db.abandoned:
                self._pool.putconn(db.connection)

    def clock_offset(self) -> timedelta:
        return self.clock.offset

    def write(self) -> AbstractContextManager[PostgresSession]:
        """One write transaction (READ COMMITTED; rows the mutation depends on are locked explicitly)."""
        self._upgraded()
        return self._session(_BEGIN_WRITE, read_only=False)

    def read(self) -> AbstractContextManager[PostgresSession]:
        """One read snapshot (REPEATABLE READ READ ONLY)."""
        self._upgraded()
        return self._session(_BEGIN_READ, read_only=True)

    def _in_snapshot(self, work: Callable[[PgDb], None]) -> None:
        """`work` with a database in a new read snapshot (the copies' cold read, on its own thread)."""
        with self.read() as session:
            work(session._db)

    def close(self) -> None:
        if self._upgrade is not None:
            self._upgrade.stop()
        self._pool.close()

    def warm(self, keep_going: Callable[[], bool]) -> None:
        """Nothing is read ahead: a copy's first read already runs on another thread while SQL answers
        (16.Z1), and PostgreSQL keeps no row sizes in memory (decision 269)."""

    def describe(self) -> dict[str, Any]:
        stats = self._pool.get_stats()
        return {
            "backend": self.backend,
            "url": redact_url(self.url),
            "postgresql": self.server_version,
            "pool": {"min": self._pool.min_size, "max": self._pool.max_size, "size": stats.get("pool_size", 0)},
            "pooler": self.pooled,
            "pid": os.getpid(),
        }
