"""PostgreSQL snapshots as the search copies compare them (`textcache`, decision 16.C1): which
transactions one snapshot sees that another did not, and which tables the vault is.

A restore into the database a server uses (`pg_restore --clean`) drops the vault's tables and makes
them anew, holding rows whose transaction ids the copies' snapshot saw long ago (and a `seq` counter
set back): no change log can name what differs from the copies. The tables' oids are new then, so
the copies are read anew when they differ from the copies' (`current`, read with the snapshot).

A restore not made in one transaction (pg_restore's default) commits the new tables first, loads
them table by table, and makes the trigger that feeds `text_changes` last (post-data): until then
the tables may be empty or half loaded and no write to them is logged, so copies read meanwhile
could never be brought up to date. While that trigger is missing (or disabled) no copy is kept
(`Now.logged`: SQL ranks), and its oid is part of the origin, so the copies are read anew once the
restore has made it. The semantic codes (`vectorcodes`) learn of vector writes from a second trigger
(migration 024), which the restore may make after the first: they need both, and both oids name
their origin (`Now.codes_origin`, `Now.codes_logged`); the search copies read no vector."""

from __future__ import annotations

from typing import NamedTuple

from kaeru.storage.postgres.db import PgDb

#: A snapshot: `(xmin, xmax, transactions in flight)` of `pg_current_snapshot()`.
Snapshot = tuple[int, int, frozenset[int]]

#: This transaction's snapshot, the change log's horizon, the oids of `nodes` and `text_changes`, and
#: the oids of the triggers that log node writes (migration 013) and vector writes (024) when they
#: fire: catalog lookups, in the same round trip as the snapshot.
_CURRENT = (
    "SELECT pg_current_snapshot()::text, coalesce((SELECT horizon::text FROM text_change_horizon), '0'), "
    "'nodes'::regclass::oid::text || ' ' || 'text_changes'::regclass::oid::text, (SELECT oid::text "
    "FROM pg_trigger WHERE tgrelid = 'nodes'::regclass AND tgname = 'nodes_text_changes' AND tgenabled IN ('O', 'A')), "
    "(SELECT oid::text FROM pg_trigger WHERE tgrelid = 'node_vectors'::regclass "
    "AND tgname = 'node_vectors_text_changes' AND tgenabled IN ('O', 'A'))"
)


#: The node seqs the change log names after a snapshot (`changed_since`); `{kinds}` picks the rows.
_CHANGED = (
    "SELECT DISTINCT node_seq FROM text_changes WHERE xid >= %(xmin)s::xid8 {kinds}"
    "AND (xid >= %(xmax)s::xid8 OR xid = ANY(%(xip)s::text[]::xid8[])) LIMIT %(limit)s"
)


class Now(NamedTuple):
    """What a search's copies are checked against (`current`)."""

    snapshot: Snapshot
    #: The change log's horizon: rows of older transactions may be pruned.
    horizon: int
    #: Which tables the vault is and which trigger logs their changes; copies read from others are forgotten.
    origin: str
    #: Whether node writes are logged now: if not (a restore under way), no copy is read or ranked from.
    logged: bool
    #: `origin` and the trigger that logs vector writes: codes read from others are forgotten.
    codes_origin: str
    #: Whether node and vector writes are both logged now: if not, the codes are not used (exact scan).
    codes_logged: bool


def current(db: PgDb) -> Now | None:
    """This transaction's snapshot, the change log's horizon, and which tables the vault is."""
    row = db.raw_one(_CURRENT)
    if row is None:
        return None
    origin = f"{row[2]} {row[3] or '-'}"
    logged = row[3] is not None
    return Now(
        parse_snapshot(str(row[0])),
        int(row[1]),
        origin,
        logged,
        f"{origin} {row[4] or '-'}",
        logged and row[4] is not None,
    )


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


def changed_since(db: PgDb, then: Snapshot, horizon: int, limit: int, *, nodes_only: bool) -> list[int] | None:
    """The seqs of the nodes `text_changes` logged for transactions `then` did not see, sorted; None
    when they cannot all be told: the log is pruned past `then` (`horizon`), or more than `limit`
    changed (a copy is then read again whole). `nodes_only`: only node rows (the search copies read
    no vector); else vector rows too (the semantic codes)."""
    if then[0] < horizon:
        return None
    found = db.raw_rows(
        _CHANGED.format(kinds="AND kind = 'node' " if nodes_only else ""),
        {"xmin": str(then[0]), "xmax": str(then[1]), "xip": [str(x) for x in then[2]], "limit": limit + 1},
    )
    return None if len(found) > limit else sorted(int(r[0]) for r in found)
