"""The planner's statistics of a vault's tables, gathered again when a table has outgrown them.

PostgreSQL plans each statement by the statistics ANALYZE last gathered. Its autovacuum gathers
them again as a table changes, but a server may run without it (`autovacuum = off`), or it may lag
behind a bulk write (an archive import, `import-from`, a long agent session): until then the
planner sees `nodes` as migration 020 analyzed it, empty, and `memberships` as never analyzed, and
plans a scope's filter-only search and a timeline page by joining every membership of the scope
to its node, a read of the whole scope per statement where an index walk reads a page of rows.

So the store compares each table's size on disk with the size its statistics were gathered at
(`pg_class.relpages`, which ANALYZE and VACUUM set) and gathers them again for the tables that have
grown `GROWTH`-fold, once they have `MIN_PAGES`: when it opens, and after write transactions, each
time the store has committed `CHECK_EVERY` node revisions since it last looked. A server whose
autovacuum keeps up (it re-analyzes a table after a tenth of it changed) never lets a table double,
so this finds nothing to do there; elsewhere a table's statistics are gathered a few times as it
grows, the logarithm of its size. The file sizes are read from disk, not from the statistics
counters, which the server publishes late and forgets after a crash.

ANALYZE reads a bounded sample of each table; SKIP_LOCKED, it never waits for a VACUUM or another
ANALYZE. Only the tables the connecting role may analyze (those of a role it is a member of) are
looked at; where none are (a reader's role), or the server refuses (a standby in recovery), the
statistics are left to the server.
"""

from __future__ import annotations

import threading
from typing import Any

import psycopg

#: A table with fewer pages (8 kB each) than this keeps its statistics, whatever they say: read
#: whole, it costs a statement little. Low, because `memberships` holds a hundred rows a page.
MIN_PAGES = 4
#: How many times its size at its last statistics a table grows before they are gathered again.
GROWTH = 2
#: Node revisions a store commits between two looks at its tables' sizes.
CHECK_EVERY = 500

#: The vault's tables (the connection's schema) that have outgrown their statistics.
OUTGROWN = (
    "SELECT quote_ident(c.relname) FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace "
    "AND c.relkind = 'r' AND pg_has_role(c.relowner, 'USAGE') "
    "AND pg_relation_size(c.oid) >= current_setting('block_size')::bigint * greatest(%s, %s * c.relpages::bigint) "
    "ORDER BY c.relname"
)


def outgrown(conn: psycopg.Connection[Any]) -> list[str]:
    """The tables of the vault whose statistics were gathered at less than 1/`GROWTH` of their size."""
    return [str(row[0]) for row in conn.execute(OUTGROWN, (MIN_PAGES, GROWTH)).fetchall()]


def refresh(conn: psycopg.Connection[Any]) -> list[str]:
    """Gather the statistics of the tables that outgrew theirs, on `conn` (idle, in autocommit);
    returns them. Nothing when the server refuses: the statistics are only the planner's."""
    try:
        if tables := outgrown(conn):
            conn.execute(f"ANALYZE (SKIP_LOCKED) {', '.join(tables)}")
        return tables
    except psycopg.Error:
        return []


class Upkeep:
    """Counts the node revisions a store's write transactions committed, and says when the tables
    are due a look (every `CHECK_EVERY`); shared by the store's threads."""

    def __init__(self) -> None:
        self._written = 0
        self._lock = threading.Lock()

    def due(self, written: int) -> bool:
        """Whether, with `written` more node revisions committed, the tables are due a look."""
        if not written:
            return False
        with self._lock:
            self._written += written
            if self._written < CHECK_EVERY:
                return False
            self._written = 0
            return True

    def committed(self, written: int, conn: psycopg.Connection[Any]) -> None:
        """A write transaction that wrote `written` node revisions committed on `conn`: when the
        tables are due a look, gather the statistics of those that outgrew theirs."""
        if self.due(written):
            refresh(conn)
