"""SQLite-only behaviour of the store: opening a vault other processes are creating at the same time."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import apsw

from kaeru.storage.sqlite.store import SqliteStore


def test_opening_waits_for_a_vault_another_process_is_creating(tmp_path: Path) -> None:
    """Several servers started at once on a new vault file: while the first one writes the new file's
    first transaction (still in rollback-journal mode), SQLite refuses the others' switch to WAL at
    once, without its busy handler; the store retries instead of failing."""
    path = tmp_path / "vault.sqlite3"
    holder = apsw.Connection(str(path))
    list(holder.execute("BEGIN IMMEDIATE"))
    list(holder.execute("CREATE TABLE creating (x)"))

    def release() -> None:
        time.sleep(0.3)
        list(holder.execute("COMMIT"))

    releaser = threading.Thread(target=release)
    releaser.start()
    store = SqliteStore(path, busy_timeout_ms=5000)
    releaser.join()
    try:
        with store.read() as session:
            assert session.all_initiatives() == []
    finally:
        store.close()
        holder.close()
