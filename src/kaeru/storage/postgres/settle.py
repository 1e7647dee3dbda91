"""What became of a write whose COMMIT answer was lost: asked of the server on a new connection.

A connection that breaks after COMMIT was sent leaves the client unable to tell a transaction the
server committed from one it never received. Saying "nothing was written" of the first made an
agent write the same note again (decision 444). The server keeps each recent transaction's fate by
its id (`pg_xact_status`), which the write learnt in its first exchange (`db.XID_QUERY`).

The question has a deadline of its own, connection included: behind a pooler the connection opens
at once and the question then waits in the pooler's queue for a server (minutes, by PgBouncer's
`query_wait_timeout`), and a server that accepts and stops answering would hold it for ever.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict

#: How long the fate of a transaction is asked for, connecting included (seconds): a server that
#: received COMMIT finishes it at once, and one whose client vanished before COMMIT ends the
#: transaction when it reads the closed socket; past this the write's fate is told as unknown.
SETTLE_WAIT_S = 3.0
#: Between two questions while the transaction is still in progress (seconds).
_POLL_S = 0.05


def xact_status(url: str, xid: str, wait_s: float = SETTLE_WAIT_S) -> str | None:
    """`committed` or `aborted` (`pg_xact_status` of `xid`, asked on a connection of its own, not
    the pool's: the pool may hold only connections that died with the first), `in progress` when it
    was still so at the deadline, or None when the server could not be asked within `wait_s`.

    Asked on a thread of its own, in an event loop of its own: the caller may be on a thread whose
    loop is running, and `asyncio.wait_for` cancels the question, connecting or waiting, when its
    time is up."""
    found: list[str | None] = [None]

    def ask() -> None:
        try:
            found[0] = asyncio.run(asyncio.wait_for(_ask(url, xid, wait_s), wait_s))
        except (TimeoutError, psycopg.Error, OSError):
            found[0] = None

    thread = threading.Thread(target=ask, name="kaeru-settle", daemon=True)
    thread.start()
    thread.join(wait_s + 1.0)  # `wait_for` ends it by then; a stuck cancel does not hold the call
    return found[0]


async def _ask(url: str, xid: str, wait_s: float) -> str | None:
    options: dict[str, Any] = {"autocommit": True, "prepare_threshold": None}
    if "connect_timeout" not in conninfo_to_dict(url):
        options["connect_timeout"] = max(1, round(wait_s))
    async with await psycopg.AsyncConnection.connect(url, **options) as conn:
        while True:
            cur = await conn.execute("SELECT pg_xact_status(%s::xid8)", (xid,))
            row = await cur.fetchone()
            status = str(row[0]) if row and row[0] is not None else None
            if status != "in progress":
                return status
            await asyncio.sleep(_POLL_S)
