"""A read-only look at a PostgreSQL vault for `kaeru doctor`: nothing is created, migrated or written.

One plain connection (no pool) on which psycopg opens every statement's transaction READ ONLY, so
even a bug here cannot change the database. The connection carries no startup options: a pooler
such as PgBouncer refuses them (decision 185). It runs under the timeouts a store's connection runs
under — the settings', not the role's or the database's (`PostgresStore._configure`): a role's short
`statement_timeout` failed the doctor's look while every call passed (decision 446).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import psycopg

from kaeru.errors import Unavailable
from kaeru.storage.health import Health, IndexAgreement
from kaeru.storage.migrate import VaultUnusable
from kaeru.storage.postgres.clock import offset_of
from kaeru.storage.postgres.db import READ_ONLY_REMEDY, TABLE_GRANT_REMEDY, translate
from kaeru.storage.postgres.store import (
    LOCAL_SETTINGS,
    SESSION_SETTINGS,
    PostgresSession,
    database_encoding,
    redact_url,
)
from kaeru.storage.schema_objects import REQUIRED

#: The schema's tables and views by name (the indexes of constraints aside, said as those), unique
#: and primary-key constraints as `table(columns)`, triggers by name, each index with its statement;
#: all from the catalog of the vault's schema — the one its `schema_migrations` is found in: an
#: object of the same name in another schema of the search path hid a missing one.
_OBJECTS = (
    "WITH here AS (SELECT relnamespace AS oid FROM pg_class WHERE oid = to_regclass('schema_migrations')) "
    "SELECT CASE WHEN relkind IN ('r', 'p') THEN 'table' WHEN relkind IN ('v', 'm') THEN 'view' ELSE 'index' END, "
    "relname, CASE WHEN relkind IN ('i', 'I') THEN replace(pg_get_indexdef(oid), "
    "' ON ' || relnamespace::regnamespace::text || '.', ' ON ') END FROM pg_class "
    "WHERE relnamespace IN (SELECT oid FROM here) AND relkind IN ('r', 'p', 'v', 'm', 'i', 'I') "
    "AND oid NOT IN (SELECT conindid FROM pg_constraint WHERE contype IN ('p', 'u')) "
    "UNION ALL SELECT CASE k.contype WHEN 'p' THEN 'primary key' ELSE 'unique' END, c.relname || '(' || "
    "(SELECT string_agg(a.attname, ', ' ORDER BY u.i) FROM unnest(k.conkey) WITH ORDINALITY u(n, i) "
    "JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n) || ')', NULL "
    "FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid "
    "WHERE k.contype IN ('p', 'u') AND c.relnamespace IN (SELECT oid FROM here) "
    "UNION ALL SELECT 'trigger', t.tgname, NULL FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
    "WHERE NOT t.tgisinternal AND c.relnamespace IN (SELECT oid FROM here)"
)

#: The vault's own tables that its writes change (`schema_migrations` only a migration does; another
#: application's tables in a shared schema are none of kaeru's business).
_WRITTEN = sorted(
    o.removeprefix("table ") for o in REQUIRED["postgres"] if o.startswith("table ") and o != "table schema_migrations"
)
#: Of those tables and the sequences they own, the ones this role lacks a right on that a write needs
#: (one privilege at a time: `has_table_privilege` with a list is true when any one is held).
_DENIED = (
    "WITH here AS (SELECT relnamespace AS oid FROM pg_class WHERE oid = to_regclass('schema_migrations')), "
    "mine AS (SELECT oid, relname FROM pg_class WHERE relnamespace IN (SELECT oid FROM here) "
    "AND relkind IN ('r', 'p') AND relname = ANY(%s)) "
    "SELECT 'table ' || relname FROM mine WHERE NOT (has_table_privilege(oid, 'SELECT') AND "
    "has_table_privilege(oid, 'INSERT') AND has_table_privilege(oid, 'UPDATE') AND has_table_privilege(oid, 'DELETE')) "
    "UNION ALL SELECT 'sequence ' || s.relname FROM pg_class s JOIN pg_depend d ON d.objid = s.oid "
    "AND d.deptype IN ('a', 'i') JOIN mine ON mine.oid = d.refobjid "
    "WHERE CASE WHEN s.relkind = 'S' THEN NOT has_sequence_privilege(s.oid, 'USAGE') ELSE false END ORDER BY 1"
)


class PostgresHealth(Health):
    """One read-only connection to a vault database."""

    backend = "postgres"
    migrations = "kaeru.storage.postgres.migrations"

    def __init__(
        self,
        url: str,
        *,
        connect_timeout_s: int = 10,
        lock_timeout_ms: int = 30_000,
        statement_timeout_ms: int = 30_000,
    ):
        """Connect to `url` read-only, under `lock_timeout_ms` and `statement_timeout_ms` (the
        settings' defaults unless told otherwise: `use_timeouts`).

        Raises:
            Unavailable: the server cannot be reached or refuses the connection.
            VaultUnusable: the first statement ran past the timeout the role or the database starts
                each session with.
        """
        self.url = url
        try:
            self._c = psycopg.connect(
                url,
                connect_timeout=connect_timeout_s,
                application_name="kaeru-doctor",
                client_encoding="UTF8",
                autocommit=True,  # the session's settings outlive the statement that sets them
            )
        except psycopg.Error as exc:
            raise Unavailable(f"cannot connect to {redact_url(url)}: {str(exc).strip()}") from exc
        try:
            self.pooled = False
            self.use_timeouts(lock_timeout_ms, statement_timeout_ms)
            self._c.autocommit = False
            self._c.read_only = True  # every transaction psycopg begins (each `_rows`, `read`)
            self._c.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        except BaseException:
            self._c.close()
            raise
        version = self._c.info.server_version
        self.server_version = f"{version // 10000}.{version % 10000}"

    def use_timeouts(self, lock_timeout_ms: int, statement_timeout_ms: int) -> None:
        """Run what follows under these timeouts (0: none), as a store's connection does
        (`PostgresStore._configure`): set for the session, or behind a pooler — whose answering
        process is not the one the cancel key names, and may change between transactions — for
        each transaction, which then prepares nothing (decision 185)."""
        self._timeouts = (f"{int(lock_timeout_ms)}ms", f"{int(statement_timeout_ms)}ms")
        key = self._c.info.backend_pid
        idle = self._c.autocommit
        self._c.autocommit = True
        try:
            row = self._c.execute(SESSION_SETTINGS, (key, key, *self._timeouts)).fetchone()
        except psycopg.errors.QueryCanceled as exc:  # under the role's or the database's timeout still
            raise VaultUnusable(
                f"the server cancelled kaeru's first statement, which sets its timeouts: the role or the database "
                f"starts each session with a statement_timeout too short for it ({str(exc).strip()}); raise it "
                "(ALTER ROLE name SET statement_timeout = '5s'), kaeru then sets its own (KAERU_PG_STATEMENT_TIMEOUT_MS)"
            ) from exc
        except psycopg.Error as exc:
            raise translate(exc) from exc
        finally:
            self._c.autocommit = idle
        self.pooled = bool(row and row[0])
        if self.pooled:
            self._c.prepare_threshold = None

    def _local(self) -> None:
        """Behind a pooler, this transaction's timeouts, as its first statement (`use_timeouts`)."""
        if self.pooled:
            try:
                self._c.execute(LOCAL_SETTINGS, self._timeouts)
            except psycopg.Error as exc:
                raise translate(exc) from exc

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "url": redact_url(self.url),
            "postgresql": self.server_version,
            "pooler": self.pooled,
        }

    def text_encoding(self) -> str:
        """The database's text encoding: a vault needs UTF8 (`PostgresStore`, decision 186)."""
        return database_encoding(self._c)

    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """`sql`'s rows, read in a transaction of its own (read-only, as every one here); the
        driver's errors as the project's (a role that may connect but not read the vault's tables
        is a failed check, not a traceback)."""
        try:
            self._local()
            return list(self._c.execute(sql, params))
        except psycopg.Error as exc:
            raise translate(exc) from exc
        finally:
            with contextlib.suppress(psycopg.Error):  # a lost connection has nothing to roll back
                self._c.rollback()

    def clock_offset(self) -> timedelta:
        """How far the server's clock is ahead of this machine's: every writer stamps by the
        server's (decision 404), so a machine far off it stamps nothing wrong, but its other logs
        and tools disagree with the vault's times."""
        return offset_of(lambda: self._rows("SELECT clock_timestamp()")[0][0])

    def has_table(self, name: str) -> bool:
        return self._rows("SELECT to_regclass(%s)", (name,))[0][0] is not None

    def schema_objects(self) -> tuple[set[str], dict[str, str]]:
        """What the vault's schema holds, from the catalog alone (no table is read): tables, views,
        triggers, unique and primary-key constraints (`storage.schema_objects`) and each other index by
        name with the statement that makes it."""
        found: set[str] = set()
        indexes: dict[str, str] = {}
        for kind, name, statement in self._rows(_OBJECTS):
            if kind == "index":
                indexes[str(name)] = str(statement)
            else:
                found.add(f"{kind} {name}")
        return found, indexes

    def unwritable(self) -> tuple[str, str] | None:
        """Why this role could not write the vault — a standby in recovery, sessions read-only by
        default, or a table or sequence of the vault it may not change — and the fix, or None. Each
        refuses every write (decisions 187, 445) while reads answer; the doctor's connection only reads."""
        ((recovery, read_only),) = self._rows(
            "SELECT pg_is_in_recovery(), current_setting('default_transaction_read_only') = 'on'"
        )
        if recovery:
            return "the PostgreSQL server is a standby in recovery", READ_ONLY_REMEDY
        if read_only:
            return "the role or the database sets default_transaction_read_only = on", READ_ONLY_REMEDY
        denied = [str(r[0]) for r in self._rows(_DENIED, (_WRITTEN,))]
        if denied:
            shown = ", ".join(denied[:4]) + (f" and {len(denied) - 4} more" if len(denied) > 4 else "")
            return f"the role {self._c.info.user} may not change {shown}", TABLE_GRANT_REMEDY
        return None

    def integrity(self) -> list[str]:
        """The server answers a query: `["ok"]` (PostgreSQL checks its own pages)."""
        return ["ok"] if self._rows("SELECT 1")[0][0] == 1 else ["the server did not answer SELECT 1"]

    def index_agreement(self) -> IndexAgreement:
        """Live nodes against their full-text vectors (`tsv` literal, `stv` stemmed)."""
        return self._agreement(
            "SELECT count(*) FROM nodes WHERE NOT retracted",
            "SELECT count(*) FROM nodes WHERE tsv IS NOT NULL AND stv IS NOT NULL",
            "SELECT id FROM nodes WHERE NOT retracted AND (tsv IS NULL OR stv IS NULL) ORDER BY seq",
            "SELECT seq, id FROM nodes WHERE retracted AND (tsv IS NOT NULL OR stv IS NOT NULL) ORDER BY seq",
        )

    def section_count_errors(self) -> list[str] | None:
        """The (initiative, facet) pairs whose kept section size (`section_counts`, summed over its
        shards) differs from the memberships counted, at most six, as `name facet: kept N, counted M`;
        None before the migration that keeps them."""
        if not self.has_table("section_counts"):
            return None
        rows = self._rows(
            "WITH kept AS (SELECT initiative_id, facet, sum(members) AS n FROM section_counts GROUP BY 1, 2), "
            "counted AS (SELECT initiative_id, facet, count(*) AS n FROM memberships WHERE facet <> '' "
            "GROUP BY 1, 2) SELECT coalesce(i.name, x.initiative_id::text), x.facet, x.kept, x.counted FROM "
            "(SELECT initiative_id, facet, coalesce(k.n, 0) AS kept, coalesce(c.n, 0) AS counted "
            "FROM kept k FULL JOIN counted c USING (initiative_id, facet)) x "
            "LEFT JOIN initiatives i ON i.id = x.initiative_id WHERE x.kept <> x.counted ORDER BY 1, 2 LIMIT 6"
        )
        return [f"{r[0]} {r[1]}: kept {r[2]}, counted {r[3]}" for r in rows]

    @contextmanager
    def read(self) -> Iterator[PostgresSession]:
        """One read snapshot (REPEATABLE READ READ ONLY, which psycopg begins with the first statement)."""
        try:
            self._local()
            yield PostgresSession(self._c, read_only=True)
        finally:
            self._c.rollback()
