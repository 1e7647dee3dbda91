"""A store whose database did not answer when its server started, opened once it does.

`kaeru serve` on stdio is started by an agent's client at the start of every session; on a laptop
whose VPN or database comes up a moment after the editor, a PostgreSQL that refused the connection
ended the server before `initialize` (decision 123's fast, clear failure), and the agent had no
memory for the whole session. Such a server now serves anyway: each call answers a retryable
`unavailable` naming the reason until the database answers, and the first call after that opens the
store (and migrates it, as at start). What waiting cannot fix — a wrong password, a missing
database, a vault too new — still fails at once (`VaultUnusable`, not retryable).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from kaeru.errors import Unavailable
from kaeru.storage.base import Store

#: Seconds between two tries to open the store (a refused connection is said at once meanwhile).
RETRY_S = 2.0


class StoreWhenReachable:
    """The `Store` protocol over a store opened on first need, by `opener`, after `first` refused."""

    backend = "postgres"

    def __init__(self, opener: Callable[[], Store], first: Unavailable):
        self._opener = opener
        self._store: Store | None = None
        self._why = first
        self._tried = time.monotonic()
        self._lock = threading.Lock()

    def _opened(self) -> Store:
        with self._lock:
            if self._store is not None:
                return self._store
            if time.monotonic() - self._tried >= RETRY_S:
                self._tried = time.monotonic()
                try:
                    self._store = self._opener()
                    return self._store
                except Unavailable as exc:
                    self._why = exc
                    if not exc.retryable:
                        raise
            if not self._why.retryable:
                # Said as the last try found it until the next try: the database came up with a
                # password, role or name it refuses, which waiting does not cure (decision 445).
                why = self._why
                raise type(why)(why.message, field=why.field, details=why.details)
            raise Unavailable(
                f"{self._why.message} (this server started while the database did not answer; it connects at "
                "the first call after the database does)"
            )

    def write(self) -> Any:
        return self._opened().write()

    def read(self) -> Any:
        return self._opened().read()

    def describe(self) -> dict[str, Any]:
        return self._store.describe() if self._store is not None else {"backend": "postgres", "reachable": False}

    def clock_offset(self) -> timedelta:
        """The database's offset once it answered; none before (no call writes then)."""
        return self._store.clock_offset() if self._store is not None else timedelta(0)

    @property
    def upgrading(self) -> bool:
        """Until the database is reached its upgrade is still to come: no warm-up before it."""
        return self._store.upgrading if self._store is not None else True

    def warm(self, keep_going: Callable[[], bool]) -> None:
        if self._store is not None:
            self._store.warm(keep_going)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
