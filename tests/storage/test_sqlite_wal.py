"""The SQLite WAL stays bounded under a steady stream of writes, and a closed store leaves none
(decision 16.I1). Sizes only: nothing here waits for the background checkpointer."""

from __future__ import annotations

import time
from pathlib import Path

import apsw

from kaeru.api.requests import parse
from kaeru.service import Service
from kaeru.storage.sqlite.store import CHECKPOINT_PAGES, WAL_LIMIT_BYTES, WAL_SAFETY_PAGES, SqliteStore
from tests.backends import VaultSpec

#: A WAL frame: its 24-byte header and one page (4 KiB by default).
FRAME = 24 + 4096
#: The bound: the pages after which a writer checkpoints itself, one more transaction's worth, the header.
WAL_BOUND = (WAL_SAFETY_PAGES + 200) * FRAME + 32


def _wal(path: Path) -> Path:
    return path.with_name(path.name + "-wal")


def _size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def test_the_wal_stays_under_its_bound_after_many_writes(sqlite_vault: VaultSpec) -> None:
    settings = sqlite_vault.settings()
    store = SqliteStore(settings.sqlite_path)
    service = Service(store, settings)
    wal = _wal(settings.sqlite_path)
    body = "the heron waits by the weir at dusk while the tide turns over the mudflats " * 2
    largest = 0
    written = 0
    try:
        # Enough notes for ~3× the bound in WAL pages if the log never restarted (~27 pages a note).
        for i in range(3 * WAL_SAFETY_PAGES // 20):
            outcome, _ = service.note(parse("note", {"initiative": "weir", "text": f"{body} {i}"}))
            assert outcome.state == "applied"
            largest = max(largest, _size(wal))
            written += 1
        with store.read() as session:
            weir = session.initiative_by_name("weir")
            assert weir is not None and len(session.member_ids(weir.id)) == written
    finally:
        store.close()

    assert 0 < largest <= WAL_BOUND, f"the WAL reached {largest:,} bytes (bound {WAL_BOUND:,})"
    assert not wal.exists()
    assert not settings.sqlite_path.with_name(settings.sqlite_path.name + "-shm").exists()


def test_a_restarted_log_is_cut_back_to_the_steady_state_bound(sqlite_vault: VaultSpec) -> None:
    """The file does not keep a burst's high-water mark: the writer that restarts the log cuts it back
    to `journal_size_limit`, the bound the checkpointer keeps while writing (decision 16.D5)."""
    assert WAL_LIMIT_BYTES == CHECKPOINT_PAGES * 4096  # the documented bound, in the file's own pages
    settings = sqlite_vault.settings()
    store = SqliteStore(settings.sqlite_path)
    service = Service(store, settings)
    wal = _wal(settings.sqlite_path)
    body = "the heron waits by the weir at dusk while the tide turns over the mudflats " * 2
    holder = apsw.Connection(str(settings.sqlite_path))
    try:
        service.note(parse("note", {"initiative": "weir", "text": body}))
        # A reader holding one snapshot stops every checkpoint from restarting the log: it grows.
        list(holder.execute("BEGIN"))
        list(holder.execute("SELECT count(*) FROM nodes"))
        while _size(wal) <= 3 * WAL_LIMIT_BYTES:
            outcome, _ = service.note(parse("note", {"initiative": "weir", "text": f"{body} {_size(wal)}"}))
            assert outcome.state == "applied"
        list(holder.execute("COMMIT"))
        # Every frame copied, so the next writer restarts the log. The store's checkpointer may be in
        # the middle of its own attempt (a PASSIVE checkpoint answers busy then): ask again.
        deadline = time.monotonic() + 30  # liveness only
        while time.monotonic() < deadline:
            ((busy, frames, copied),) = holder.execute("PRAGMA wal_checkpoint(PASSIVE)")
            if not busy and frames == copied:
                break
            time.sleep(0.05)
        outcome, _ = service.note(parse("note", {"initiative": "weir", "text": f"{body} after"}))
        assert outcome.state == "applied"
        assert _size(wal) <= WAL_LIMIT_BYTES, f"the WAL kept {_size(wal):,} bytes (bound {WAL_LIMIT_BYTES:,})"
    finally:
        holder.close()
        store.close()
    assert not wal.exists()


def test_a_store_closed_while_another_is_open_keeps_the_wal_for_it(sqlite_vault: VaultSpec) -> None:
    settings = sqlite_vault.settings()
    first = SqliteStore(settings.sqlite_path)
    second = SqliteStore(settings.sqlite_path)
    wal = _wal(settings.sqlite_path)
    try:
        Service(first, settings).note(parse("note", {"initiative": "weir", "text": "written by the first store"}))
        first.close()
        assert wal.exists()  # the second store's connections still use it
        outcome, _ = Service(second, settings).note(
            parse("note", {"initiative": "weir", "text": "written by the second store"})
        )
        assert outcome.state == "applied"
    finally:
        second.close()
    assert not wal.exists()
    conn = apsw.Connection(str(settings.sqlite_path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        assert conn.execute("SELECT count(*) FROM nodes").fetchone() == (2,)
    finally:
        conn.close()


def test_a_checkpointer_finding_the_log_restarted_leaves_the_writers_alone(sqlite_vault: VaultSpec) -> None:
    """Every server process on a vault runs a checkpointer, and one full log wakes them all: the
    first restarts the log, and the others, finding it short, must not take the write lock again to
    restart it a second time while another process's writer is mid-transaction (decision 149).
    Plain connections stand for the other processes: no background thread takes part."""
    path = sqlite_vault.settings().sqlite_path
    SqliteStore(path).close()  # the schema, then no WAL
    writer = apsw.Connection(str(path))  # another server's writer
    checkpointer = apsw.Connection(str(path))  # this server's checkpointer, no busy wait
    ran: list[str] = []
    checkpointer.exec_trace = lambda _cursor, sql, _bindings: ran.append(sql) is None
    try:
        list(writer.execute("CREATE TABLE filler (b BLOB)"))
        list(writer.execute("INSERT INTO filler VALUES (zeroblob(3000))"))
        list(writer.execute("BEGIN IMMEDIATE"))
        list(writer.execute("INSERT INTO filler VALUES (zeroblob(3000))"))
        assert SqliteStore._checkpoint(checkpointer, "RESTART")  # not busy: it left the write lock alone
        assert ran == ["PRAGMA wal_checkpoint(PASSIVE)"]
        list(writer.execute("COMMIT"))
        # A long log is still restarted.
        for _ in range(CHECKPOINT_PAGES):
            list(writer.execute("INSERT INTO filler VALUES (zeroblob(3000))"))
        ((_, frames, _),) = writer.execute("PRAGMA wal_checkpoint(PASSIVE)")
        assert frames >= CHECKPOINT_PAGES
        ran.clear()
        assert SqliteStore._checkpoint(checkpointer, "RESTART")
        assert ran == ["PRAGMA wal_checkpoint(PASSIVE)", "PRAGMA wal_checkpoint(RESTART)"]
        list(writer.execute("INSERT INTO filler VALUES (zeroblob(3000))"))
        ((_, frames, _),) = writer.execute("PRAGMA wal_checkpoint(PASSIVE)")
        assert frames < CHECKPOINT_PAGES
    finally:
        writer.close()
        checkpointer.close()
