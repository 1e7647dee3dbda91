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


def test_a_vault_whose_text_index_was_rebuilt_is_refilled_on_open(tmp_path: Path) -> None:
    """Migration 006 replaces the full-text tables and flags the index for a refill: the next open
    fills it from `nodes`, so search (literal words) and recall (stems) find what was there before."""
    from kaeru.service import Service
    from tests.backends import VaultSpec

    spec = VaultSpec("sqlite", tmp_path / "vault")
    settings = spec.settings()
    store = SqliteStore(settings.sqlite_path)
    service = Service(store, settings)
    made, _ = service.note({"initiative": "upgrade", "text": "The harbour cranes were repainted in spring"})
    assert made.primary is not None
    store.close()
    raw = apsw.Connection(str(settings.sqlite_path))
    list(raw.execute("DELETE FROM nodes_fts"))
    list(raw.execute("INSERT INTO meta (key, value) VALUES ('stem_index_pending', '1')"))
    raw.close()

    store = SqliteStore(settings.sqlite_path)
    service = Service(store, settings)
    try:
        found = service.search({"initiatives": ["upgrade"], "text": "cranes"})
        recalled = service.recall({"initiatives": ["upgrade"], "query": "repainting crane"})  # stems only
        assert [h.node.id for h in found.hits] == [made.primary.id]
        assert made.primary.id in [h.node.id for h in recalled.hits]
        pending = list(
            apsw.Connection(str(settings.sqlite_path)).execute("SELECT 1 FROM meta WHERE key = 'stem_index_pending'")
        )
        assert pending == []
    finally:
        store.close()
