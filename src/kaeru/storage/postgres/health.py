"""A read-only look at a PostgreSQL vault for `kaeru doctor`: nothing is created, migrated or written.

One plain connection (no pool) on which psycopg opens every statement's transaction READ ONLY, so
even a bug here cannot change the database. The connection carries no startup options: a pooler
such as PgBouncer refuses them (decision 185).
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
from kaeru.storage.postgres.clock import offset_of
from kaeru.storage.postgres.db import translate
from kaeru.storage.postgres.store import PostgresSession, database_encoding, redact_url


class PostgresHealth(Health):
    """One read-only connection to a vault database."""

    backend = "postgres"
    migrations = "kaeru.storage.postgres.migrations"

    def __init__(self, url: str, *, connect_timeout_s: int = 10):
        """Connect to `url` read-only.

        Raises:
            Unavailable: the server cannot be reached or refuses the connection.
        """
        self.url = url
        try:
            self._c = psycopg.connect(
                url, connect_timeout=connect_timeout_s, application_name="kaeru-doctor", client_encoding="UTF8"
            )
            self._c.read_only = True  # every transaction psycopg begins (each `_rows`, `read`)
            self._c.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
            # Behind a pooler the answering process is not the one the cancel key names (`PostgresStore`).
            self.pooled = self._rows("SELECT pg_backend_pid() <> %s", (self._c.info.backend_pid,))[0][0]
        except psycopg.Error as exc:
            raise Unavailable(f"cannot connect to {redact_url(url)}: {str(exc).strip()}") from exc
        version = self._c.info.server_version
        self.server_version = f"{version // 10000}.{version % 10000}"

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
            yield PostgresSession(self._c, read_only=True)
        finally:
            self._c.rollback()
