"""Calls released at once from threads of their own: the races the tests of concurrent writers stage."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


def together(calls: list[Callable[[], Any]]) -> list[Any]:
    """Run `calls` in threads released at once; their results (or the exception each raised: a
    refused or busy call is an answer in a race)."""
    start = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(i: int) -> None:
        start.wait()
        try:
            results[i] = calls[i]()
        except Exception as exc:
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results
