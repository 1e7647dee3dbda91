"""A SQLite vault shared by servers of different kaeru versions never gets written in a shape its
newest code does not read (review of migration 010): a server started before a later migration
stops with `unavailable` instead of writing; a server of the code before 010 cannot find the table
it would write the current revision into; a migration's WAL is emptied like a write's; and closing a
store while another thread is in a call loses nothing and raises nothing."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import apsw
import pytest

from kaeru.api.requests import parse
from kaeru.errors import Unavailable
from kaeru.service import Service
from kaeru.storage.migrate import VaultTooNew
from kaeru.storage.sqlite.store import SqliteStore
from tests.backends import VaultSpec

OLD_VAULT = Path(__file__).resolve().parents[1] / "data" / "old_vault" / "vault.sqlite3"


def _raw(path: Path, sql: str) -> list[tuple[object, ...]]:
    conn = apsw.Connection(str(path))
    conn.set_busy_timeout(10_000)  # the open store's checkpointer may hold the lock a moment
    try:
        return [tuple(row) for row in conn.execute(sql)]
    finally:
        conn.close()


def test_a_server_started_before_a_later_migration_stops_instead_of_writing(sqlite_vault: VaultSpec) -> None:
    settings = sqlite_vault.settings()
    store = SqliteStore(settings.sqlite_path)
    service = Service(store, settings)
    try:
        assert (
            service.note(parse("note", {"initiative": "guard", "text": "written before the upgrade"}))[0].state
            == "applied"
        )
        # What a newer kaeru's migration leaves behind while this server keeps running.
        _raw(settings.sqlite_path, "PRAGMA user_version = 999")
        nodes = _raw(settings.sqlite_path, "SELECT count(*) FROM nodes")
        with pytest.raises(VaultTooNew, match="restart"):
            service.note(parse("note", {"initiative": "guard", "text": "written by a server that missed the upgrade"}))
        with pytest.raises(Unavailable), store.read():
            pass
        assert _raw(settings.sqlite_path, "SELECT count(*) FROM nodes") == nodes
    finally:
        store.close()


def test_a_refused_start_leaves_the_pooled_connection_usable(sqlite_vault: VaultSpec) -> None:
    """The guard refuses a transaction after it began: the connection goes back to the pool outside
    any transaction, so once the level is right again the same server reads and writes."""
    settings = sqlite_vault.settings()
    store = SqliteStore(settings.sqlite_path, pool_size=1)
    service = Service(store, settings)
    try:
        service.note(parse("note", {"initiative": "guard", "text": "before"}))
        level = _raw(settings.sqlite_path, "PRAGMA user_version")[0][0]
        _raw(settings.sqlite_path, "PRAGMA user_version = 999")
        for _ in range(3):
            with pytest.raises(VaultTooNew):
                service.note(parse("note", {"initiative": "guard", "text": "refused"}))
        _raw(settings.sqlite_path, f"PRAGMA user_version = {int(level)}")
        assert service.note(parse("note", {"initiative": "guard", "text": "after"}))[0].state == "applied"
        with store.read() as session:
            assert session.all_initiatives()
    finally:
        store.close()


def test_code_from_before_migration_010_cannot_write_the_history_where_it_is_no_longer_read(
    sqlite_vault: VaultSpec,
) -> None:
    settings = sqlite_vault.settings()
    SqliteStore(settings.sqlite_path).close()
    # The statement the older code ran for every new revision now fails: it never overwrites quietly.
    with pytest.raises(apsw.SQLError, match="no such table"):
        _raw(settings.sqlite_path, "INSERT INTO node_revisions (node_seq, rev_no) VALUES (1, 1)")
    newest = _raw(settings.sqlite_path, "SELECT max(version) FROM schema_migrations")
    assert _raw(settings.sqlite_path, "PRAGMA user_version") == newest


def test_a_migration_wal_is_emptied_while_the_server_only_reads(tmp_path: Path) -> None:
    path = tmp_path / "vault.sqlite3"
    shutil.copyfile(OLD_VAULT, path)
    store = SqliteStore(path)
    wal = path.with_name(path.name + "-wal")
    try:
        assert wal.exists() and wal.stat().st_size > 0  # the migrations went through the WAL
        with store.read() as session:
            assert session.all_initiatives()
        deadline = time.monotonic() + 60  # liveness only: the idle checkpoint comes within seconds
        while wal.stat().st_size > 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert wal.stat().st_size == 0
    finally:
        store.close()


def test_closing_a_store_while_another_thread_writes_loses_nothing(sqlite_vault: VaultSpec) -> None:
    settings = sqlite_vault.settings()
    store = SqliteStore(settings.sqlite_path)
    service = Service(store, settings)
    acknowledged: list[str] = []
    refused: list[Exception] = []
    started = threading.Event()

    def writer() -> None:
        for i in range(10_000):
            try:
                outcome, _ = service.note(
                    parse("note", {"initiative": "closing", "text": f"note {i} while the store closes"})
                )
            except Unavailable as exc:
                refused.append(exc)
                return
            assert outcome.primary is not None
            acknowledged.append(outcome.primary.id)
            started.set()

    thread = threading.Thread(target=writer)
    thread.start()
    assert started.wait(30)
    store.close()  # must not raise, whatever the writer is doing
    thread.join(30)
    assert not thread.is_alive() and refused, "the writer is told the store closed"
    reopened = SqliteStore(settings.sqlite_path)
    try:
        with reopened.read() as session:
            found = session.nodes_by_ids(acknowledged)
        assert len(found) == len(acknowledged)
    finally:
        reopened.close()
