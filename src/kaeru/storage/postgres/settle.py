"""What became of a write whose COMMIT answer was lost: asked of the server on a new connection.

A connection that breaks after COMMIT was sent leaves the client unable to tell a transaction the
server committed from one it never received. Saying "nothing was written" of the first made an
agent write the same note again (decision 444). The server keeps each recent transaction's fate by
its id (`pg_xact_status`), which the write learnt in its first exchange (`db.XID_QUERY`).
"""

from __future__ import annotations

import time
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict

#: How long the fate of a transaction still "in progress" is waited for (seconds): a server that
#: received COMMIT finishes it at once, and one whose client vanished before COMMIT ends the
#: transaction when it reads the closed socket; a server cut off by the network may hold it longer,
#: and then the write's fate is told as unknown.
SETTLE_WAIT_S = 2.0
#: Between two questions while the transaction is still in progress (seconds).
_POLL_S = 0.05


def xact_status(url: str, xid: str, wait_s: float = SETTLE_WAIT_S) -> str | None:
    """`committed` or `aborted` (`pg_xact_status` of `xid`, asked on a connection of its own, not
    the pool's: the pool may hold only connections that died with the first), `in progress` when it
    was still so after `wait_s`, or None when the server cannot be asked."""
    options: dict[str, Any] = {}
    if "connect_timeout" not in conninfo_to_dict(url):
        options["connect_timeout"] = max(1, round(wait_s))
    deadline = time.monotonic() + wait_s
    try:
        with psycopg.connect(url, autocommit=True, **options) as conn:
            while True:
                row = conn.execute("SELECT pg_xact_status(%s::xid8)", (xid,)).fetchone()
                status = str(row[0]) if row and row[0] is not None else None
                if status != "in progress" or time.monotonic() >= deadline:
                    return status
                time.sleep(_POLL_S)
    except psycopg.Error:
        return None
