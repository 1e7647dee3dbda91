"""The longest write-lock hold during an archive import. A script, not a test.

Writes a synthetic archive of `--nodes` node revisions (`bench.archives`), imports it into a fresh
vault through the `archive` use case (screening, then writing), and times every write transaction
the store opens (from `store.write()` entering — on SQLite, `BEGIN IMMEDIATE` taking the lock — to
its commit). Prints the longest hold, the number of write transactions, their p50/p95 and the
import's wall time.

    PYTHONPATH=src python -m bench.locks [--nodes 100000] [--backend sqlite|postgres]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench import archives
from bench.stats import percentile
from bench.vaults import new_vault


def timed_writes(store: Any) -> list[float]:
    """Wrap `store.write` so every write transaction's duration (seconds) lands in the list returned."""
    holds: list[float] = []
    original = store.write

    @contextmanager
    def write() -> Iterator[Any]:
        started = time.perf_counter()
        with original() as session:
            yield session
        holds.append(time.perf_counter() - started)

    store.write = write
    return holds


def run(nodes: int, backend: str) -> dict[str, Any]:
    from kaeru.export import archive
    from kaeru.service.requests.reads import ArchiveRequest
    from kaeru.storage.factory import open_store

    vault = new_vault(backend, "locks", None, keep=False)
    root = Path(tempfile.mkdtemp(prefix="kaeru-bench-locks-"))
    try:
        archives.write(root / "big.amg", nodes)
        settings = vault.settings()
        settings = dataclasses.replace(settings, export_root=root)
        store = open_store(settings)
        try:
            holds = timed_writes(store)
            started = time.perf_counter()
            outcome = archive.import_(store, settings, ArchiveRequest(action="import", path="big.amg"))
            wall = time.perf_counter() - started
        finally:
            store.close()
        assert outcome.state == "applied", outcome
        ordered = sorted(holds)
        return {
            "backend": backend,
            "nodes": nodes,
            "import_s": round(wall, 2),
            "write_transactions": len(holds),
            "longest_hold_ms": round(ordered[-1] * 1000, 1),
            "p50_hold_ms": round(percentile(ordered, 50) * 1000, 1),
            "p95_hold_ms": round(percentile(ordered, 95) * 1000, 1),
        }
    finally:
        vault.drop()
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    ns = parser.parse_args(argv)
    print(json.dumps(run(ns.nodes, ns.backend)))


if __name__ == "__main__":
    main()
