"""The nodes this process wrote lately without a `request_id`, to say when a call repeats one
(decision 291).

A client that times out and sends its `note` again, or an agent that loops, writes the same memory
twice: replay (`request_id`) only covers the calls that name a key, and most do not. A call without
one is still applied — two identical notes may be two events — but one that repeats, argument for
argument, a call the same actor made in the same initiative within `RETRY_WINDOW` says so, naming
the node the first wrote. Kept per process (a stdio server is one agent's session; its retries come
back to it), bounded by count.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from datetime import datetime, timedelta

#: How long an identical call is taken for a retry of the first.
RETRY_WINDOW = timedelta(minutes=10)
#: The most calls remembered (the oldest forgotten first).
RECENT_CALLS = 512

#: (operation, initiative, actor, the arguments' digest).
CallKey = tuple[str, str, str, str]


class RecentWrites:
    """The node each recent call wrote, by its key; one lock, since HTTP calls run on threads."""

    def __init__(self, capacity: int = RECENT_CALLS, window: timedelta = RETRY_WINDOW):
        self.capacity = capacity
        self.window = window
        self._calls: OrderedDict[CallKey, tuple[str, datetime]] = OrderedDict()
        self._lock = threading.Lock()

    def find(self, key: CallKey, now: datetime) -> str | None:
        """The node the same call wrote within the window before `now`, if any."""
        with self._lock:
            found = self._calls.get(key)
            if found is None:
                return None
            node_id, at = found
            if not timedelta(0) <= now - at <= self.window:
                del self._calls[key]
                return None
            return node_id

    def remember(self, key: CallKey, node_id: str, now: datetime) -> None:
        with self._lock:
            self._calls[key] = (node_id, now)
            self._calls.move_to_end(key)
            while len(self._calls) > self.capacity:
                self._calls.popitem(last=False)
