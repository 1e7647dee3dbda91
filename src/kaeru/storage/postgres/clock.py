"""The vault's clock on PostgreSQL: the database server's, which every kaeru server on the vault
shares (decision 404). Each writer stamped what it wrote with its own machine's clock, so a laptop
minutes ahead made another's `read at: "now"` miss its writes and a server days ahead purged the
others' replay keys. A writer now adds the offset of the server's clock from its own to each reading
(`Store.clock_offset`, `service.runtime.WallClock`), measured with one query when a session opens
at most once a minute: a reading costs no round trip, and a machine's clock stepped by NTP is
followed within the minute."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

#: How long a measured offset is used before the next session measures it again, in seconds.
REMEASURE_S = 60.0


def offset_of(read_server_clock: Callable[[], datetime]) -> timedelta:
    """How far the server's clock (`read_server_clock`: one round trip) is ahead of this machine's:
    of the offsets the reading allows (it was taken at some moment of the round trip), the one
    nearest zero, and zero when the round trip allows it. Taking the middle of the round trip for
    the moment it was read put a server on this very machine milliseconds off under load (a round
    trip's two halves are not equal then), and its writes were stamped outside a window this
    machine's clock had taken around them."""
    before = datetime.now(UTC)
    server = read_server_clock()
    after = datetime.now(UTC)
    earliest, latest = server - after, server - before  # read at `after` … at `before`
    if earliest > timedelta(0):
        return earliest
    if latest < timedelta(0):
        return latest
    return timedelta(0)


class ServerClock:
    """How far the database server's clock is ahead of this machine's (negative: behind)."""

    def __init__(self) -> None:
        self.offset = timedelta(0)
        self._measured: float | None = None

    def due(self) -> bool:
        return self._measured is None or time.monotonic() - self._measured >= REMEASURE_S

    def measure(self, conn: psycopg.Connection[Any]) -> None:
        """Read the server's clock on `conn` (autocommit, idle: no transaction is left open)."""
        try:
            offset = offset_of(lambda: conn.execute("SELECT clock_timestamp()").fetchone()[0])  # type: ignore[index]
        except psycopg.Error:
            return  # a dead pooled connection: the session's first exchange replaces it
        self._measured = time.monotonic()
        self.offset = offset
