"""The server's long-lived heap kept out of the cyclic collector's full passes (decisions 66, 267).

A full collection walks every tracked object that is not frozen. What a server builds to serve —
modules, the SDK's models, the store, the memos' structure — lives as long as the process, so each
full pass walked it for nothing and paused whichever call was running, the longer the larger the
process. `settle_heap` collects once and freezes what survives. Modules are imported lazily, at the
first call that needs them (recall's machinery, numpy, the exporters), and so arrive after the first
settling: the tool registry, which asks for each settling, asks again after a call that imported
modules (`ToolRegistry._settle_if_imported`), and the transports settle at a moment with no call
running.
"""

from __future__ import annotations

import gc


def settle_heap() -> None:
    """Collect, then freeze what survives (`gc.freeze`): a later full collection scans only what was
    made since. Collected first, so no garbage is kept for good; frozen objects are still freed by
    reference counting when the last reference goes (a memo's evicted entry), only never walked.
    The collector is switched on again here if start-up switched it off (`kaeru serve` does, while
    it imports)."""
    gc.collect()
    gc.freeze()
    gc.enable()
