"""PostgreSQL snapshots as the search copies compare them (`textcache`, decision 16.C1): which
transactions one snapshot sees that another did not, and which tables the vault is.

A restore into the database a server uses (`pg_restore --clean`) drops the vault's tables and makes
them anew, holding rows whose transaction ids the copies' snapshot saw long ago (and a `seq` counter
set back): no change log can name what differs from the copies. The tables' oids are new then, so
the copies are read anew when they differ from the copies' (`current`, read with the snapshot)."""

from __future__ import annotations

from kaeru.storage.postgres.db import PgDb

#: A snapshot: `(xmin, xmax, transactions in flight)` of `pg_current_snapshot()`.
Snapshot = tuple[int, int, frozenset[int]]

#: This transaction's snapshot, the change log's horizon and the oids of `nodes` and `text_changes`
#: (a catalog cache lookup each: no more round trips than the snapshot alone).
_CURRENT = (
    "SELECT pg_current_snapshot()::text, coalesce((SELECT horizon::text FROM text_change_horizon), '0'), "
    "'nodes'::regclass::oid::text || ' ' || 'text_changes'::regclass::oid::text"
)


def current(db: PgDb) -> tuple[Snapshot, int, str] | None:
    """This transaction's snapshot, the change log's horizon, and which tables the vault is."""
    row = db.raw_one(_CURRENT)
    return None if row is None else (parse_snapshot(str(row[0])), int(row[1]), str(row[2]))


def parse_snapshot(text: str) -> Snapshot:
    xmin, xmax, xip = text.split(":")
    return int(xmin), int(xmax), frozenset(int(x) for x in xip.split(",") if x)


def sees_all_of(later: Snapshot, earlier: Snapshot) -> bool:
    """Whether every transaction `earlier` sees as committed, `later` sees too: `later` ends no
    sooner, and each transaction it sees in flight below `earlier`'s end was in flight for
    `earlier` as well."""
    if later == earlier:
        return True
    if earlier[1] > later[1]:
        return False
    return all(x in earlier[2] for x in later[2] if x < earlier[1])
