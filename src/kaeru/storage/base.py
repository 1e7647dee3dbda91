"""What the service is written against.

A `Store` hands out sessions: `write()` is one serialisable transaction (SQLite `BEGIN IMMEDIATE`,
PostgreSQL row locks), `read()` a consistent snapshot. A session is the shared SQL layer's
`SqlSession` (`storage/sql/`, engine-neutral), whatever engine runs; each engine's session
implements the few methods it declares but cannot write once (replay claims, full-text search).
Methods raise `kaeru.errors.KaeruError` subclasses only. The records it reads and writes are in
`records.py`, named here too.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import timedelta
from typing import Any, Protocol

from kaeru.storage.records import (
    AuditRecord,
    EndedInitiative,
    HistoryItem,
    HistoryPlace,
    Initiative,
    ListedInitiative,
    RequestKey,
    RevisionEntry,
    SearchQuery,
    SearchRow,
    SlotState,
    StoredRequest,
    TokenRecord,
)
from kaeru.storage.sql.session import SqlSession as Session

__all__ = [
    "AuditRecord",
    "EndedInitiative",
    "HistoryItem",
    "HistoryPlace",
    "Initiative",
    "ListedInitiative",
    "RequestKey",
    "RevisionEntry",
    "SearchQuery",
    "SearchRow",
    "Session",
    "SlotState",
    "Store",
    "StoredRequest",
    "TokenRecord",
]


class Store(Protocol):
    """A vault backend: hands out sessions and reports what it is."""

    backend: str

    def write(self) -> AbstractContextManager[Session]: ...
    def read(self) -> AbstractContextManager[Session]: ...
    def close(self) -> None: ...
    def describe(self) -> dict[str, Any]: ...
    def clock_offset(self) -> timedelta:
        """How far the vault's clock is ahead of this machine's (negative: behind): what a writer
        adds to its own clock so that every writer of the vault stamps by one clock (decision 404).
        Known without a round trip: measured now and then, when a session opens."""
        ...

    @property
    def upgrading(self) -> bool:
        """Whether an upgrade of the vault may still be under way (until a transaction found it
        applied): a server waits for it before warming the read path (decision 474)."""
        ...

    def warm(self, keep_going: Callable[[], bool]) -> None:
        """Read ahead what a lasting process's first searches would read anyway, step by step while
        `keep_going()` (decisions 269, 270)."""
        ...
