"""The lock that serialises a PostgreSQL vault's upgrades, as other sessions meet it.

An upgrade holds the tables its migrations alter until it commits, which on a large vault takes a
while (decision 493's backfill). A process that waits for another's upgrade said nothing meanwhile,
and a call that such an upgrade held up past its timeout was told to raise the timeout: both say
what they wait for now. The lock is one key for the whole database, and two vaults may live in two
schemas of one database (each role's `search_path`): that another session holds it says that an
upgrade of a kaeru vault in this database is under way, not that it is this vault's, so that is all
they say.
"""

from __future__ import annotations

import logging
from typing import Any

import psycopg

from kaeru.errors import Unavailable

log = logging.getLogger(__name__)

#: Key of the advisory lock that serialises migrations of one database across processes.
MIGRATION_LOCK = 0x6B6165727500  # "kaeru\0"

#: Whether a session other than this one holds the migration lock on this database: an upgrade of a
#: kaeru vault in this database (this one, or one in another schema) is under way. A bigint key shows
#: in `pg_locks` split in two: its high half as `classid`, its low half as `objid`.
HELD_ELSEWHERE = (
    "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 "
    "AND pid <> pg_backend_pid() AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
    f"AND classid::bigint = {MIGRATION_LOCK >> 32} AND objid::bigint = {MIGRATION_LOCK & 0xFFFFFFFF})"
)


def take(conn: psycopg.Connection[Any]) -> None:
    """Take the migration lock for `conn`'s transaction. When another session holds it (another
    process upgrading a kaeru vault in this database), say so once (a warning, which a command shows
    on stderr) and wait for it: a command waited for such an upgrade in silence for as long as it took."""
    row = conn.execute("SELECT pg_try_advisory_xact_lock(%s)", (MIGRATION_LOCK,)).fetchone()
    if row is not None and row[0]:
        return
    log.warning(
        "an upgrade of a kaeru vault in this database is under way (another process holds the migration lock): "
        "waiting for it to finish"
    )
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))


def roll_back(conn: psycopg.Connection[Any], exc: BaseException) -> None:
    """Roll back `conn`'s failed transaction, if one is open (a broken connection the pool
    discards). When `exc` is a lock or statement timeout met while another process holds the
    migration lock, raise what most likely held the call up instead: an upgrade locks the tables it
    alters until it commits, and "raise the statement timeout" sent its operator the wrong way. Which
    session held the table is not known (nor whether the upgrade is this vault's), so it is said as
    what is known."""
    if conn.closed:
        return
    if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        try:
            conn.execute("ROLLBACK")
        except psycopg.Error:
            return  # the original error matters
    cause = exc if isinstance(exc, psycopg.Error) else exc.__cause__
    timed_out = isinstance(cause, psycopg.errors.LockNotAvailable) or (
        isinstance(cause, psycopg.errors.QueryCanceled) and "statement timeout" in str(cause)
    )
    try:
        upgrading = timed_out and (row := conn.execute(HELD_ELSEWHERE).fetchone()) is not None and bool(row[0])
    except psycopg.Error:
        return
    if upgrading:
        raise Unavailable(
            "an upgrade of a kaeru vault in this database is under way (another process holds the migration "
            "lock), and an upgrade holds the tables it alters until it commits: this call waited past "
            "KAERU_BUSY_TIMEOUT_MS or KAERU_PG_STATEMENT_TIMEOUT_MS for a table; nothing was read or written; "
            "retry once it is done"
        ) from exc
