"""A read-only look at a PostgreSQL vault for `kaeru doctor`: nothing is created, migrated or written.

One plain connection (no pool) on which psycopg opens every statement's transaction READ ONLY, so
even a bug here cannot change the database. The connection carries no startup options: a pooler
such as PgBouncer refuses them (decision 185). It runs under the timeouts a store's connection runs
under — the settings', not the role's or the database's (`PostgresStore._configure`): a role's short
`statement_timeout` failed the doctor's look while every call passed (decision 446).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any
from urllib.parse import quote, unquote

import psycopg

from kaeru.errors import KaeruError, Unavailable
from kaeru.storage.health import Health, IndexAgreement
from kaeru.storage.migrate import VaultUnusable
from kaeru.storage.postgres.clock import offset_of
from kaeru.storage.postgres.db import (
    CONNECT_REFUSALS,
    GRANT_REMEDY,
    MIGRATOR,
    READ_ONLY_REMEDY,
    TABLE_GRANT_REMEDY,
    migrate_as_owner,
    translate,
    unusable_schemas,
)
from kaeru.storage.postgres.store import (
    LOCAL_SETTINGS,
    SESSION_SETTINGS,
    PostgresSession,
    database_encoding,
    redact_url,
)
from kaeru.storage.postgres.upgradelock import HELD_ELSEWHERE
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
#: (one privilege at a time: `has_table_privilege` with a list is true when any one is held), each
#: with `read` when SELECT is the one lacking — reads of it are refused too — else `change`.
_DENIED = (
    "WITH here AS (SELECT relnamespace AS oid FROM pg_class WHERE oid = to_regclass('schema_migrations')), "
    "mine AS (SELECT oid, relname FROM pg_class WHERE relnamespace IN (SELECT oid FROM here) "
    "AND relkind IN ('r', 'p') AND relname = ANY(%s)) "
    "SELECT CASE WHEN has_table_privilege(oid, 'SELECT') THEN 'change' ELSE 'read' END, 'table ' || relname "
    "FROM mine WHERE NOT (has_table_privilege(oid, 'SELECT') AND has_table_privilege(oid, 'INSERT') AND "
    "has_table_privilege(oid, 'UPDATE') AND has_table_privilege(oid, 'DELETE')) "
    "UNION ALL SELECT 'change', 'sequence ' || s.relname FROM pg_class s JOIN pg_depend d ON d.objid = s.oid "
    "AND d.deptype IN ('a', 'i') JOIN mine ON mine.oid = d.refobjid "
    "WHERE CASE WHEN s.relkind = 'S' THEN NOT has_sequence_privilege(s.oid, 'USAGE') ELSE false END ORDER BY 2"
)

#: The schemas of this database that hold a kaeru vault (`schema_migrations` beside `nodes` and
#: `meta`: other tools name their table `schema_migrations` too) which the search path does not find,
#: as SQL writes them (a `search_path` or `ALTER ROLE … SET search_path` takes them so).
_ELSEWHERE = (
    "SELECT quote_ident(n.nspname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE c.relname = 'schema_migrations' AND c.relkind IN ('r', 'p') "
    "AND c.oid IS DISTINCT FROM to_regclass('schema_migrations') "
    "AND (SELECT count(*) FROM pg_class t WHERE t.relnamespace = n.oid AND t.relname IN ('nodes', 'meta')) = 2 "
    "ORDER BY 1"
)


def with_search_path(url: str, schema: str) -> str:
    """`url` with `-csearch_path=schema` in its `options` (a search path it set there replaced, other
    options kept), added with `&` to a query it has. The query's other parameters stay as written
    (libpq reads a `+` as a plus); the value is percent-encoded whole, its spaces and backslashes
    escaped first as the server splits `options` (a quoted schema name may hold a space)."""
    base, _, query = url.partition("?")
    pairs = [p for p in query.split("&") if p]
    given = [unquote(p.partition("=")[2]) for p in pairs if unquote(p.partition("=")[0]) == "options"]
    kept = re.sub(r"(-c\s*|--)search_path=(\\.|\S)*", "", " ".join(given)).split()
    setting = "-csearch_path=" + schema.replace("\\", "\\\\").replace(" ", "\\ ")
    options = "options=" + quote(" ".join([*kept, setting]), safe="")
    pairs = [p for p in pairs if unquote(p.partition("=")[0]) != "options"] + [options]
    return f"{base}?{'&'.join(pairs)}"


def _listed(names: list[str]) -> str:
    """At most four names, and how many more."""
    return ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")


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
            # What a store's connection names for a refusal waiting will not cure (a pooler's refused `options`).
            remedy = next((f": {fix}" for pattern, fix in CONNECT_REFUSALS if re.search(pattern, str(exc))), "")
            raise Unavailable(f"cannot connect to {redact_url(url)}: {str(exc).strip()}{remedy}") from exc
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
            **self._vault_schema(),
        }

    def _vault_schema(self) -> dict[str, Any]:
        """The schema the vault lives in (as SQL writes it: quoted where it must be), and the search
        path that chose it: where the search path finds `schema_migrations`, else where a first
        migration would make it (`current_schema()`); None when no schema of the search path exists.
        Two schemas of one database are two vaults, and the URL's `options` (or the role's
        `search_path`) chooses: the doctor names the one it looked at."""
        ((schema, path),) = self._rows(
            "SELECT coalesce((SELECT relnamespace::regnamespace::text FROM pg_class "
            "WHERE oid = to_regclass('schema_migrations')), quote_ident(current_schema())), "
            "current_setting('search_path')"
        )
        return {"schema": None if schema is None else str(schema), "search_path": str(path)}

    def url_for_schema(self, schema: str) -> str:
        """This vault's URL, its password hidden, set to look in `schema` (as SQL writes it: quoted
        where it must be): the doctor's fix for a vault in another schema said "add
        `?options=-csearch_path%3D…`", wrong for a URL that has a query and for a schema with capitals."""
        return with_search_path(redact_url(self.url), schema)

    def vaults_elsewhere(self) -> list[str]:
        """The other schemas of this database that hold a kaeru vault the search path does not reach
        (a `pg_dump -n schema` restored, opened without its `search_path`)."""
        return [str(r[0]) for r in self._rows(_ELSEWHERE)]

    def schema_refused(self) -> tuple[str, str] | None:
        """A schema of the search path this role may not use (no USAGE), said with the grant; None if none."""
        return unusable_schemas(self._rows)

    def _migrator(self) -> tuple[str, bool, bool, str, str] | None:
        """Who may apply a pending migration (`db.MIGRATOR`): the tables' owner, whether this role
        acts as it, whether it may create in the vault's schema, this role and the schema; None
        before the vault is made."""
        rows = self._rows(MIGRATOR)
        if not rows:
            return None
        owner, acts, creates, role, schema = rows[0]
        return str(owner), bool(acts), bool(creates), str(role), str(schema)

    def cannot_migrate(self) -> tuple[str, str] | None:
        """Why this role could not apply the vault's pending migrations, and the fix, or None: only
        the owner of a table may change it (a role with the data rights alone was refused every
        command while one was pending, and told to run `kaeru migrate`), and a migration creates in
        the vault's schema."""
        found = self._migrator()
        if found is None:
            return None
        owner, acts, creates, role, schema = found
        if not acts:
            return (
                f"which only the role that owns the vault's tables, {owner}, may apply: every command of the "
                f"role {role} is refused until then",
                migrate_as_owner(owner, role),
            )
        if not creates:
            return (
                f"and the role {role} may not create in schema {schema}, as migrations do: every command is "
                "refused until they are applied",
                GRANT_REMEDY,
            )
        return None

    def grant_fix(self) -> str:
        """The grants that give this role what a vault another role made needs, its names filled in
        (`TABLE_GRANT_REMEDY` says them with placeholders)."""
        found = self._migrator()
        if found is None or found[1]:
            return TABLE_GRANT_REMEDY
        ((role, schema),) = self._rows("SELECT quote_ident(%s), quote_ident(%s)", (found[3], found[4]))
        usage = "" if schema == "public" else f"GRANT USAGE ON SCHEMA {schema} TO {role}; "
        return (
            f"as the role that owns the vault's tables, {found[0]}, grant this one their rights: `{usage}GRANT SELECT, "
            f"INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {role}; GRANT USAGE, SELECT ON ALL "
            f"SEQUENCES IN SCHEMA {schema} TO {role}` (or connect as {found[0]})"
        )

    def refusal_fix(self, error: KaeruError) -> str | None:
        """The grants that cure `error`, when it is PostgreSQL refusing this role a right on a table or
        a sequence (`grant_fix`); None for any other error."""
        cause = error.__cause__
        refused = isinstance(cause, psycopg.errors.InsufficientPrivilege)
        return self.grant_fix() if refused and re.search(r"for (table|sequence) ", str(cause)) else None

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

    def upgrading(self) -> bool:
        """Whether another process holds the migration lock: an upgrade of a vault in this database runs."""
        return bool(self._rows(HELD_ELSEWHERE)[0][0])

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
        """Why this role could not write the vault, said whole with what it refuses — a standby in
        recovery, sessions read-only by default, a table or sequence of the vault it may not change
        (or not even read), or, before the vault is made, a schema it may not create it in — and the
        fix, or None. Each refuses every write (decisions 187, 445); the doctor's connection only reads."""
        ((recovery, read_only),) = self._rows(
            "SELECT pg_is_in_recovery(), current_setting('default_transaction_read_only') = 'on'"
        )
        refused = "reads answer, every write is refused"
        if recovery:
            return f"the PostgreSQL server is a standby in recovery: {refused}", READ_ONLY_REMEDY
        if read_only:
            return f"the role or the database sets default_transaction_read_only = on: {refused}", READ_ONLY_REMEDY
        if not self.has_table("schema_migrations"):
            return self._uncreatable()
        denied = self._rows(_DENIED, (_WRITTEN,))
        unread = [str(name) for kind, name in denied if kind == "read"]
        unchanged = [str(name) for kind, name in denied if kind == "change"]
        if not denied:
            return None
        said = [f"may not read {_listed(unread)}"] if unread else []
        said += [f"may not change {_listed(unchanged)}"] if unchanged else []
        if unread:  # a missing SELECT is no write right: the reads of it fail as well
            refused = "the calls that read it are refused as well as every write"
        return f"the role {self._c.info.user} {' and '.join(said)}: {refused}", self.grant_fix()

    def _uncreatable(self) -> tuple[str, str] | None:
        """Before the vault is made: why this role could not make it in the schema it would go to
        (a role with CONNECT alone was told `writable: ok` while `kaeru migrate` was refused)."""
        ((schema, creates),) = self._rows("SELECT current_schema(), has_schema_privilege(current_schema(), 'CREATE')")
        user = self._c.info.user
        if schema is None and (refused := self.schema_refused()) is not None:
            return f"{refused[0]}: every command is refused", refused[1]
        if schema is None:
            return (
                f"the database holds no vault yet, and no schema of the role {user}'s search_path exists to make "
                "one in: the first `kaeru note` or `kaeru migrate` is refused",
                "create the schema (`CREATE SCHEMA name AUTHORIZATION role`) or correct its name in KAERU_DATABASE_URL",
            )
        if creates:
            return None
        return (
            f"the database holds no vault yet, and the role {user} may not create tables in schema {schema}, "
            "where the first `kaeru note` or `kaeru migrate` makes it: every command is refused",
            GRANT_REMEDY,
        )

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
