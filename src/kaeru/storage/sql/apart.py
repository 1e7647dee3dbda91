"""A step of a transaction that may fail without failing the rest of it (recall's vector scan)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from kaeru.storage.sql.session import SqlSession


@contextmanager
def apart(session: SqlSession) -> Iterator[None]:
    """Run the block's statements so that their failure leaves `session`'s transaction usable.

    On PostgreSQL a failed statement (a scan cancelled by `statement_timeout`, a lock it waited for
    past `lock_timeout`) aborts the whole transaction: every later statement is refused until it
    ends. The block runs inside a savepoint, rolled back to when it fails, so the statements after
    it read the same snapshot as before. The savepoint's opening and release are sent with the
    neighbouring statements (`Db.send`): no round trip of their own. SQLite's transaction outlives
    a failed statement, and a read session there may hold no transaction for a savepoint to be in:
    nothing is added."""
    db = session._db
    if db.dialect.name != "postgres":
        yield
        return
    db.send("SAVEPOINT kaeru_apart")
    try:
        yield
    except Exception:  # an interrupt ends the transaction whatever state it is in
        db.run("ROLLBACK TO SAVEPOINT kaeru_apart")
        raise
    db.send("RELEASE SAVEPOINT kaeru_apart")
