"""The server's long-lived heap kept out of the cyclic collector's full passes (decisions 66, 267).

A full collection walks every tracked object that is not frozen. What a server builds to serve —
modules, the SDK's models, the store, the memos' structure — lives as long as the process, so each
full pass walked it for nothing and paused whichever call was running, the longer the larger the
process. `settle_heap` collects once and freezes what survives. Modules are imported lazily, at the
first call that needs them (recall's machinery, numpy, the exporters), and so arrive after the first
settling: `unsettled` says so, and the transports settle again at a moment with no call running.
"""

from __future__ import annotations

import gc
import sys

#: How many modules were loaded at the last settling (`unsettled` compares).
_settled_modules = 0


def settle_heap() -> None:
    """Collect, then freeze what survives (`gc.freeze`): a later full collection scans only what was
    made since. Collected first, so no garbage is kept for good; frozen objects are still freed by
    reference counting when the last reference goes (a memo's evicted entry), only never walked.
    The collector is switched on again here if start-up switched it off (`kaeru serve` does, while
    it imports)."""
    global _settled_modules
    gc.collect()
    gc.freeze()
    gc.enable()
    _settled_modules = len(sys.modules)


def unsettled() -> bool:
    """Whether modules were imported since the last settling (their functions, classes and tables
    would be walked by every full collection from now on)."""
    return len(sys.modules) > _settled_modules
