"""A read-only look at a PostgreSQL vault for `kaeru doctor`: nothing is created, migrated or written.

One plain connection (no pool) with `default_transaction_read_only`, so even a bug here cannot
change the database.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

from kaeru.errors import Unavailable
from kaeru.storage.health import SAMPLE_IDS, IndexAgreement
from kaeru.storage.migrate import load_migrations
from kaeru.storage.postgres.store import _BEGIN_READ, _NODE_COLS, PostgresSession, _node, redact_url


class PostgresHealth:
    """One read-only connection to a vault database."""

    backend = "postgres"

    def __init__(self, url: str, *, connect_timeout_s: int = 10):
        """Connect to `url` read-only.

        Raises:
            Unavailable: the server cannot be reached or refuses the connection.
        """
        self.url = url
        try:
            self._c = psycopg.connect(
                url,
                autocommit=True,
                connect_timeout=connect_timeout_s,
                application_name="kaeru-doctor",
                options="-c default_transaction_read_only=on",
            )
        except psycopg.Error as exc:
            raise Unavailable(f"cannot connect to {redact_url(url)}: {str(exc).strip()}") from exc
        version = self._c.info.server_version
        self.server_version = f"{version // 10000}.{version % 10000}"

    def close(self) -> None:
        self._c.close()

    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        return self._c.execute(sql, params).fetchall()

    def describe(self) -> dict[str, Any]:
        return {"backend": self.backend, "url": redact_url(self.url), "postgresql": self.server_version}

    def has_table(self, name: str) -> bool:
        return self._rows("SELECT to_regclass(%s)", (name,))[0][0] is not None

    def applied_migrations(self) -> list[int]:
        """Migration numbers recorded in the vault (empty when it has no migration table)."""
        if not self.has_table("schema_migrations"):
            return []
        return [int(r[0]) for r in self._rows("SELECT version FROM schema_migrations ORDER BY version")]

    @staticmethod
    def known_migrations() -> int:
        """The newest migration this kaeru ships."""
        return load_migrations("kaeru.storage.postgres.migrations")[-1].version

    def integrity(self) -> list[str]:
        """The server answers a query: `["ok"]` (PostgreSQL checks its own pages)."""
        return ["ok"] if self._rows("SELECT 1")[0][0] == 1 else ["the server did not answer SELECT 1"]

    def index_agreement(self) -> IndexAgreement:
        """Live nodes against their full-text vectors (`tsv` literal, `stv` stemmed)."""
        live = self._rows("SELECT count(*) FROM nodes WHERE NOT retracted")[0][0]
        indexed = self._rows("SELECT count(*) FROM nodes WHERE tsv IS NOT NULL AND stv IS NOT NULL")[0][0]
        missing = self._rows("SELECT id FROM nodes WHERE NOT retracted AND (tsv IS NULL OR stv IS NULL) ORDER BY seq")
        stale = self._rows("SELECT id FROM nodes WHERE retracted AND (tsv IS NOT NULL OR stv IS NOT NULL) ORDER BY seq")
        pending = bool(self._rows("SELECT 1 FROM meta WHERE key = 'stem_index_pending'"))
        return IndexAgreement(
            live_nodes=int(live),
            indexed_rows=int(indexed),
            missing=[str(r[0]) for r in missing[:SAMPLE_IDS]],
            missing_count=len(missing),
            stale=[str(r[0]) for r in stale[:SAMPLE_IDS]],
            stale_count=len(stale),
            rebuild_pending=pending,
        )

    @contextmanager
    def read(self) -> Iterator[PostgresSession]:
        """One read snapshot (REPEATABLE READ READ ONLY)."""
        self._c.execute(_BEGIN_READ)
        try:
            yield PostgresSession(self._c, read_only=True)
        finally:
            self._c.execute("ROLLBACK")


def rebuild_text_index(store: Any) -> int:
    """Recompute both full-text vectors of every node of a (read-write) `PostgresStore`: live nodes
    get theirs, retracted ones none (as a write leaves them); the live nodes indexed."""
    with store.write() as session:
        session._run("UPDATE nodes SET tsv = NULL, stv = NULL WHERE retracted")
        count = 0
        for row in session._rows(f"SELECT seq, id, {_NODE_COLS} FROM nodes WHERE NOT retracted"):
            node = _node(row)
            tsv, stv = session._index_terms(node)
            session._run("UPDATE nodes SET tsv = %s::tsvector, stv = %s::tsvector WHERE seq = %s", (tsv, stv, node.seq))
            count += 1
        session._run("DELETE FROM meta WHERE key = 'stem_index_pending'")
    return count
