"""Before serving, the server hides its long-lived heap from the garbage collector."""

from __future__ import annotations

import gc
import weakref

from kaeru.mcp.transports import settle_heap


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def test_settling_freezes_what_lives_and_collects_what_is_garbage() -> None:
    """A full collection then scans only what calls create; a garbage cycle made before serving is
    collected, not frozen for good."""
    a, b = _Node(), _Node()
    a.other, b.other = b, a  # a cycle only the collector can free
    gone = weakref.ref(a)
    del a, b
    kept = [_Node()]
    try:
        settle_heap()
        assert gone() is None
        assert gc.get_freeze_count() > 0
        assert all(o is not kept for o in gc.get_objects())  # frozen: no collection walks it
    finally:
        gc.unfreeze()
