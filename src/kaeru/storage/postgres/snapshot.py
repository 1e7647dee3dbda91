"""PostgreSQL snapshots as the search copies compare them (`textcache`, decision 16.C1): which
transactions one snapshot sees that another did not."""

from __future__ import annotations

#: A snapshot: `(xmin, xmax, transactions in flight)` of `pg_current_snapshot()`.
Snapshot = tuple[int, int, frozenset[int]]


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
