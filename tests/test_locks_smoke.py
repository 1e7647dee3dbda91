"""`python -m bench.locks` imports a synthetic archive and reports how long each write transaction
held the lock, on both backends (shape only: a benchmark is never a timed assertion). No test called
it, and it had fallen behind the typed requests: it passed the import a dict and died before timing."""

from __future__ import annotations

import pytest
from bench import locks
from bench.vaults import postgres_admin_url

from kaeru.export.vault_io import CHUNK


@pytest.mark.timeout(180)
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_an_archive_import_is_timed_transaction_by_transaction(backend: str) -> None:
    if backend == "postgres" and not postgres_admin_url():
        pytest.skip("PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset (make test starts one)")
    report = locks.run(2 * CHUNK + 1, backend)
    assert (report["backend"], report["nodes"]) == (backend, 2 * CHUNK + 1)
    # Written in chunks, not held for the whole import: the figure the bench exists to report.
    assert report["write_transactions"] >= 3
    assert 0 < report["p50_hold_ms"] <= report["p95_hold_ms"] <= report["longest_hold_ms"]
