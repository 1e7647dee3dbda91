"""A cache bounded by the memory it keeps alive, for the memos that make tokenising and ranking cheap.

A memo keyed by whole texts cannot be bounded by its number of entries: one 4 MB note is worth
ten thousand ordinary ones. `BoundedCache` counts an estimate of the bytes each entry keeps alive
(key and value), evicts the oldest entries once the total passes its budget, and never stores an
entry larger than its per-entry limit (such a value is computed again when asked for again).

Reads take no lock (a lookup is one dictionary operation); writes and evictions take one, so
concurrent writers keep the byte count exact. Eviction is first in, first out: these memos are
cheap to refill, and a hit must stay as cheap as a dictionary lookup.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

#: What one entry costs besides its key and value: the ordered dictionary's slot and link node.
ENTRY_OVERHEAD = 100


def shallow_size(key: object, value: object) -> int:
    """The estimate for entries whose key and value hold no other objects (strings, numbers)."""
    return sys.getsizeof(key) + sys.getsizeof(value) + ENTRY_OVERHEAD


class BoundedCache(Generic[K, V]):
    """A first-in-first-out memo holding at most `max_bytes` (as `size_of` estimates them)."""

    def __init__(
        self,
        max_bytes: int,
        size_of: Callable[[K, V], int] = shallow_size,
        max_entry_bytes: int | None = None,
    ) -> None:
        if max_bytes <= 0:
            raise ValueError("max_bytes must be positive")
        self.max_bytes = max_bytes
        self.max_entry_bytes = min(max_bytes, max_entry_bytes or max_bytes)
        self._size_of = size_of
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._sizes: dict[K, int] = {}
        self._bytes = 0
        self._lock = threading.Lock()
        #: The lock-free read: the dictionary's own `get`.
        self.get: Callable[[K], V | None] = self._entries.get

    def put(self, key: K, value: V) -> V:
        """Remember `value` for `key` if it fits; returns `value` either way."""
        size = self._size_of(key, value)
        if size > self.max_entry_bytes:
            return value
        with self._lock:
            if key in self._entries:
                return value
            self._entries[key] = value
            self._sizes[key] = size
            self._bytes += size
            while self._bytes > self.max_bytes:
                old, _ = self._entries.popitem(last=False)
                self._bytes -= self._sizes.pop(old)
        return value

    def items(self) -> list[tuple[K, V]]:
        """What is held now, oldest first (a copy: the memo may change while it is read)."""
        with self._lock:
            return list(self._entries.items())

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._sizes.clear()
            self._bytes = 0

    @property
    def bytes(self) -> int:
        """The estimated bytes the entries keep alive (never above `max_bytes`)."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries
