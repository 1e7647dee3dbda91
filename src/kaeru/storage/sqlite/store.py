"""The SQLite backend (apsw): one vault file in WAL mode, shared safely by many processes.

Writers take `BEGIN IMMEDIATE`, so every mutation is serialised at the database (not by a process
lock) and concurrent processes wait on the busy timeout instead of failing. Readers run in a
deferred transaction, which WAL turns into a consistent snapshot.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import apsw

from kaeru.errors import Unavailable
from kaeru.storage.migrate import (
    INDEX_PENDING,
    BackgroundUpgrade,
    UpgradeGate,
    VaultTooNew,
    run_pending,
    shipped,
    upgrade_later,
)
from kaeru.storage.sqlite import vectors
from kaeru.storage.sqlite.held import Held
from kaeru.storage.sqlite.machine import BUSY, MACHINE_ERRORS, make_private, translate, unusable, waiter
from kaeru.storage.sqlite.matching import CommonWords, fts_match
from kaeru.storage.sqlite.session import SqliteDb, SqliteSession
from kaeru.storage.sqlite.warmlist import KEEP, WARM_KEY

log = logging.getLogger(__name__)

__all__ = ["SqliteSession", "SqliteStore", "fts_match"]

_MIGRATIONS = "kaeru.storage.sqlite.migrations"
#: The background checkpointer waits this long after a write, so bursts share one checkpoint; when
#: no write came meanwhile the vault is idle and the WAL is truncated to nothing.
CHECKPOINT_PAUSE = 2.0
#: A commit that leaves this many pages in the WAL (512 KiB) wakes the checkpointer at once, which
#: copies them so the next writer restarts the log (decisions 16.I1, 16.D3, 16.D5). **The steady-state
#: bound while writing: ~0.5 MB** (about five short notes' pages; 0 once idle, no file after a clean
#: exit): 0.50 MB at most of the samples of 5,000 notes over stdio, more while the checkpointer waits
#: for the write lock (1–5 MB at load average 7–10, up to 14 MB at 8–11); a writer in a tight loop
#: can still reach `WAL_SAFETY_PAGES`.
CHECKPOINT_PAGES = 128
#: Whenever the log restarts, SQLite cuts the WAL file back to this size (`journal_size_limit`): the
#: bound above, so a burst does not leave its high-water mark on disk.
WAL_LIMIT_BYTES = CHECKPOINT_PAGES * 4096
#: A writer that leaves this many pages in the WAL (~16 MB) checkpoints it itself, so the next write
#: restarts the log: the hard bound when the background thread cannot keep up. Only a reader that
#: holds one snapshot all along can keep the log growing past it.
WAL_SAFETY_PAGES = 4000
#: How long the checkpointer waits for the write lock and for readers to move on before giving up
#: until the next round: it holds the write lock meanwhile, so writers wait at most about this long.
CHECKPOINT_BUSY_MS = 100
#: Tries to truncate an idle vault's WAL (one a pause) while another connection is in the way.
TRUNCATE_TRIES = 3


class SqliteStore(UpgradeGate):
    """A vault file and a small pool of connections to it."""

    backend = "sqlite"

    def __init__(
        self,
        path: Path,
        *,
        busy_timeout_ms: int = 30_000,
        pool_size: int = 8,
        search_cache_bytes: int | None = None,
        upgrade_in_background: bool = False,
    ):
        """Open (creating) the vault at `path` and bring its schema up to date — on a thread of its
        own when `upgrade_in_background` and the vault is an older one (`BackgroundUpgrade`)."""
        self.path = path
        self._busy_timeout_ms = busy_timeout_ms
        #: Idle connections, the last released on top (its page cache is the warmest). A deque's
        #: append and pop are atomic: no lock and condition per call, as a queue.Queue takes.
        self._pool: deque[apsw.Connection] = deque()
        self._pool_size = pool_size
        self._common = CommonWords(search_cache_bytes=search_cache_bytes)
        #: Semantic recall's candidate codes in memory, shared by this store's sessions (17.Y1).
        self._codes = vectors.CodeCache()
        self._all: list[apsw.Connection] = []
        self._lock = threading.Lock()
        self._secret: bytes | None = None
        self._schema = 0  # the newest migration this code knows; set by `_migrate`
        #: Set by the WAL hook past `WAL_SAFETY_PAGES`: the next committing writer checkpoints itself.
        self._overfull = False
        self._written = threading.Event()
        self._full = threading.Event()
        self._stopping = threading.Event()
        #: One checkpoint at a time in this process (SQLite refuses a second one at once).
        self._checkpointing = threading.Lock()
        try:
            make_private(path)
            conn = self._connect()
            #: The vault file and (once read) its log files, as opened: see `Held.check`.
            self._held = Held(path)
        except (OSError, apsw.CantOpenError, apsw.NotADBError, apsw.CorruptError, *MACHINE_ERRORS) as exc:
            raise unusable(path, exc) from exc
        #: The migrations applied after opening (None: none pending, or applied before returning).
        self._upgrade: BackgroundUpgrade | None = None
        try:
            current = self._up_to_date(conn)
            later = self._behind(conn) if upgrade_in_background and not current else ""
            if not current and not later and self._migrate(conn):
                self._written.set()  # a migration's WAL is checkpointed and emptied like a write's
            # Opened here, not on its thread: a vault removed a moment after opening must not end
            # that thread in an unhandled error (`Held.check` refuses the writes that follow).
            checkpoint_conn = apsw.Connection(str(path))
            self._held.logs_opened()
        except (apsw.CantOpenError, apsw.NotADBError, apsw.CorruptError, *MACHINE_ERRORS) as exc:
            raise unusable(path, exc) from exc
        finally:
            self._release(conn)
        # Checkpointing the WAL on the committing writer made an occasional write far slower than
        # the others; a background thread checkpoints instead (decision 16.I1): PASSIVE, then RESTART so
        # the next writer starts the log again from its beginning instead of growing it past its
        # high-water mark, and TRUNCATE once the vault went idle.
        self._checkpointer = threading.Thread(
            target=self._checkpoint_loop, args=(checkpoint_conn,), name="kaeru-wal-checkpoint", daemon=True
        )
        self._checkpointer.start()
        if later:
            self._upgrade = BackgroundUpgrade(later, self._upgrade_now, busy=lambda e: isinstance(e, BUSY))

    def _checkpoint_loop(self, conn: apsw.Connection) -> None:
        # SQLite's own backoff (in C): polling every millisecond from Python shortened a shared
        # vault's waits but cost this process's writers 13-25 % of their CPU in a write loop (158).
        conn.set_busy_timeout(CHECKPOINT_BUSY_MS)
        #: Tries left to truncate the WAL since the last write (0: nothing to do until the next one).
        truncate = 0
        try:
            while not self._stopping.is_set():
                # Nothing to truncate: sleep until a write (or `close`) wakes it, no timer ticking
                # while the vault is idle (a laptop's server may idle all day).
                if self._written.wait(timeout=CHECKPOINT_PAUSE if truncate else None):
                    self._written.clear()
                    truncate = TRUNCATE_TRIES
                    # Checkpoint when the WAL is full, or after a pause that bursts of writes share.
                    woken = self._full.wait(CHECKPOINT_PAUSE)
                    if self._stopping.is_set():
                        break
                    self._full.clear()
                    if woken or self._written.is_set():
                        with self._checkpointing:
                            done = self._held.intact() and self._checkpoint(conn, "RESTART")
                        if not done:
                            self._stopping.wait(CHECKPOINT_PAUSE / 4)  # not at every commit while in the way
                        continue
                # No write for a pause: the vault is idle, the WAL goes back to nothing.
                with self._checkpointing:
                    truncate = 0 if self._held.intact() and self._checkpoint(conn, "TRUNCATE") else truncate - 1
        finally:
            self._held.close(conn)

    @staticmethod
    def _checkpoint(conn: apsw.Connection, mode: str) -> bool:
        """Copy the WAL into the database (PASSIVE: never blocking a writer); then, `mode` RESTART or
        TRUNCATE, take the write lock a moment to copy what writers appended meanwhile and start the
        log again from its beginning (TRUNCATE also empties the file). False if another connection
        was in the way (the busy timeout of `conn` bounds the wait), or another checkpoint ran.

        RESTART is skipped when PASSIVE found the log shorter than the bound: it restarted since the
        full commit that woke this checkpointer — by another process's checkpointer (every server on
        the vault runs one, and the same full log wakes them all) or, after a pause, by a writer —
        and a second restart would only hold the write lock again (149)."""
        try:
            ((busy, log, _),) = conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
            if mode == "PASSIVE":
                return True
            if busy:
                return False  # another checkpoint holds the log (PASSIVE answers -1 for its size)
            if mode == "RESTART" and log < CHECKPOINT_PAGES:
                return True
            ((busy, _, _),) = conn.execute(f"PRAGMA wal_checkpoint({mode})")
            return bool(busy == 0)
        except apsw.Error:
            return False  # another process is checkpointing, or the vault is busy: try after the next write

    def _on_wal(self, conn: apsw.Connection, name: str, pages: int) -> int:
        """After each commit (SQLite's WAL hook, in place of its auto-checkpoint): how full the log is."""
        if pages >= CHECKPOINT_PAGES:
            self._full.set()
            if pages >= WAL_SAFETY_PAGES:
                self._overfull = True
        return apsw.SQLITE_OK

    def _connect(self) -> apsw.Connection:
        conn = apsw.Connection(str(self.path))
        conn.set_busy_handler(waiter(self._busy_timeout_ms))
        self._wal_mode(conn)
        for pragma in (
            "synchronous = NORMAL",
            "foreign_keys = ON",
            "temp_store = MEMORY",
            f"journal_size_limit = {WAL_LIMIT_BYTES}",
        ):
            list(conn.execute(f"PRAGMA {pragma}"))
        conn.set_wal_hook(self._on_wal)
        vectors.install(conn)
        with self._lock:
            self._all.append(conn)
        return conn

    def _wal_mode(self, conn: apsw.Connection) -> None:
        """Switch to WAL, retrying while another process holds the lock: while another server process
        writes a new vault file's first transaction (still in rollback-journal mode), SQLite answers
        "locked" at once, without calling its busy handler."""
        deadline = time.monotonic() + self._busy_timeout_ms / 1000
        while True:
            try:
                list(conn.execute("PRAGMA journal_mode = WAL"))
                return
            except apsw.BusyError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.005)
            except apsw.ReadOnlyError:
                # A rollback-journal file (a `kaeru backup`) that this user cannot write: read as it
                # is (its writes are refused as read-only); a WAL one goes on to say why it cannot.
                if next(iter(conn.execute("PRAGMA journal_mode")))[0] == "wal":
                    raise
                return

    def _acquire(self) -> apsw.Connection:
        if self._stopping.is_set():
            raise Unavailable("the vault is closing: this server is shutting down")
        try:
            return self._pool.pop()
        except IndexError:
            return self._connect()

    def _release(self, conn: apsw.Connection) -> None:
        if len(self._pool) < self._pool_size and not self._stopping.is_set():
            self._pool.append(conn)
        else:
            with self._lock:
                if conn in self._all:
                    self._all.remove(conn)
            _close_quietly(conn, self._held)

    def _up_to_date(self, conn: apsw.Connection) -> bool:
        """One read at open: True (and the vault's secret kept) when every migration this kaeru ships
        is applied, the secret exists and no re-indexing is pending — then `_migrate` has nothing to
        do and the write lock it takes is not needed (decision 16.O2); a record of a former numbering
        counts as no migration (decision 470)."""
        try:
            ((top, applied, secret, pending, schema),) = conn.execute(
                f"SELECT (SELECT max(version) FROM schema_migrations), {shipped(_MIGRATIONS).recorded}, "
                "(SELECT value FROM meta WHERE key = 'secret'), "
                f"EXISTS (SELECT 1 FROM meta WHERE {INDEX_PENDING}), "
                "(SELECT user_version FROM pragma_user_version)"
            )
        except apsw.SQLError:
            return False  # a new vault: no tables yet
        newest = shipped(_MIGRATIONS).newest
        if top != newest or applied != newest or secret is None or pending or schema != newest:
            return False
        self._secret = bytes.fromhex(secret)
        self._schema = newest
        return True

    def _behind(self, conn: apsw.Connection) -> str:
        """What an existing vault older than this kaeru still needs (`upgrade_later`)."""
        try:
            ((top, pending, strangers),) = conn.execute(shipped(_MIGRATIONS).behind)
        except apsw.SQLError:
            return ""  # a new vault: no tables yet
        return upgrade_later(top, bool(pending), shipped(_MIGRATIONS).newest, strangers)

    def _upgrade_now(self) -> None:
        """`_migrate` on a pooled connection (`BackgroundUpgrade`'s work)."""
        conn = self._acquire()
        try:
            if self._migrate(conn):
                self._written.set()
        except BUSY:
            raise  # another process is migrating this vault: waited out and tried again
        except (apsw.NotADBError, apsw.CorruptError, *MACHINE_ERRORS) as exc:
            raise unusable(self.path, exc) from exc
        finally:
            self._release(conn)

    def _migrate(self, conn: apsw.Connection) -> bool:
        """Apply pending migrations in one write transaction; whether anything was written."""
        if self._up_to_date(conn):
            return False
        list(conn.execute("BEGIN IMMEDIATE"))
        try:
            self._schema, applied, self.migrated_now = run_pending(
                SqliteDb(conn), conn, lambda sql: list(conn.execute(sql)), _MIGRATIONS, "SQLite",
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                "applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')))",
            )  # fmt: skip
            # The schema level, read by every transaction of every store on this file (`_Transaction`):
            # a server started before a later migration stops instead of writing the old shape.
            if next(iter(conn.execute("PRAGMA user_version")))[0] < self._schema:
                list(conn.execute(f"PRAGMA user_version = {int(self._schema)}"))
            # Written once, by whichever process created the vault (under this write lock), and never
            # changed: read here once instead of by every search that makes a cursor.
            self._secret = SqliteSession(conn).vault_secret()
            # A migration that changed what is indexed asks for the index to be rebuilt once.
            if list(conn.execute(f"SELECT 1 FROM meta WHERE {INDEX_PENDING}")):
                SqliteSession(conn).reindex_text()
                applied = True
            list(conn.execute("COMMIT"))
            return applied
        except BaseException:
            list(conn.execute("ROLLBACK"))
            raise

    def write(self) -> Any:
        """One serialised write transaction (BEGIN IMMEDIATE)."""
        self._upgraded()
        return _Transaction(self, "BEGIN IMMEDIATE")

    def read(self) -> Any:
        """One read snapshot."""
        self._upgraded()
        return _Transaction(self, "BEGIN")

    def close(self) -> None:
        """Stop the checkpointer, truncate the WAL and close every connection.

        The last connection to the file (in any process) then removes the `-wal` and `-shm` files;
        while another server still has the vault open, they stay for it (decision 16.I1).
        """
        self._stopping.set()
        if self._upgrade is not None:
            self._upgrade.stop()
        self._written.set()
        self._full.set()
        self._checkpointer.join(timeout=5)
        # Only idle connections are closed here: one still in a call (another thread) is closed when
        # that call releases it (`_release`), so no call loses its connection halfway.
        with self._lock:
            idle = list(self._pool)
            self._pool.clear()
            for conn in idle:
                self._all.remove(conn)
        if idle and self._held.intact():  # never through a lost log's index (`Held`)
            idle[0].set_busy_timeout(CHECKPOINT_BUSY_MS)
            self._keep_rankings(idle[0])
            self._checkpoint(idle[0], "TRUNCATE")
        for conn in idle:
            _close_quietly(conn, self._held)

    def warm(self, keep_going: Callable[[], bool]) -> None:
        """Every row's size read into the in-memory copies' cache, which a first ranking of a common
        word reads whole (decision 269), then the rankings the last process kept replayed, each in a
        snapshot of its own, while `keep_going()` (decision 270); nothing once the store is closing
        or keeps no copies."""
        if self._stopping.is_set() or self._common.text.max_bytes <= 0:
            return
        with self.read() as session:
            kept = session.warm_text()
        for ranked in kept:
            if self._stopping.is_set() or not keep_going():
                return
            with self.read() as session:
                session.replay(ranked)

    def _keep_rankings(self, conn: apsw.Connection) -> None:
        """The latest rankings the copies served, written for the next process's warm-up when they
        changed (decision 270): one upsert on the closing store's last connection, which waits for
        the write lock no longer than the last checkpoint does; a vault that cannot be written then
        keeps the older ones."""
        recent = self._common.text.recent
        if not recent.changed:
            return
        kept = recent.dumps()
        try:
            conn.execute(KEEP, (WARM_KEY, kept))
            recent.kept(kept)
        except apsw.Error as error:
            log.info("the latest rankings were not kept for the next warm-up: %s", error)

    def clock_offset(self) -> timedelta:  # a SQLite vault's writers share one machine's clock
        return timedelta(0)

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "path": str(self.path),
            "sqlite": apsw.sqlite_lib_version(),
            "pid": os.getpid(),
        }


class _Transaction:
    """One transaction on a pooled connection: `with store.read() as session` / `store.write()`.

    A class rather than a generator-based context manager, since every call opens at least one: it
    begins and reads the schema level in one statement, and the body's driver errors leave as
    `KaeruError`s (`machine.translate`) after the rollback.
    """

    __slots__ = ("_begin", "_conn", "_store")

    def __init__(self, store: SqliteStore, begin: str):
        self._store = store
        self._begin = begin
        self._conn: apsw.Connection | None = None

    def __enter__(self) -> SqliteSession:
        store = self._store
        # SQLite goes on using a file after it is deleted or replaced: writes would be lost (the
        # vault file), reads and writes go through an index other processes no longer see (its log).
        store._held.check(self._begin != "BEGIN")
        try:
            conn = store._acquire()  # a new connection when none is idle
        except apsw.Error as exc:
            raise translate(exc, store.path) from exc
        try:
            try:
                # The schema level, read in every transaction: a server started before a later
                # migration (by a newer kaeru) stops instead of reading or writing the old shape.
                schema = next(iter(conn.execute(f"{self._begin}; PRAGMA user_version")))[0]
            except apsw.Error as exc:
                raise translate(exc, store.path) from exc
            if schema != store._schema:
                raise VaultTooNew(
                    f"the vault was migrated (schema {schema}, this server knows {store._schema}) by another "
                    "kaeru while this server ran: restart it, with the newer kaeru"
                )
            session = SqliteSession(conn, store._common, snapshot=self._begin == "BEGIN", secret=store._secret)
            session.use_codes(store._codes)
        except BaseException:
            _end_quietly(conn)
            store._release(conn)
            raise
        self._conn = conn
        return session

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        conn, store = self._conn, self._store
        assert conn is not None
        self._conn = None
        try:
            if exc is not None:
                if conn.in_transaction:
                    list(conn.execute("ROLLBACK"))
                if isinstance(exc, apsw.Error):
                    raise translate(exc, store.path) from exc
                return  # the body's own error goes on as it was raised
            try:
                list(conn.execute("COMMIT"))
            except apsw.Error:
                if conn.in_transaction:
                    list(conn.execute("ROLLBACK"))
                raise
            if self._begin != "BEGIN":
                if not store._written.is_set():
                    store._written.set()
                if store._overfull:
                    store._overfull = False
                    with store._checkpointing:  # after the background thread's round, if one runs
                        store._checkpoint(conn, "PASSIVE")
        except apsw.Error as error:
            raise translate(error, store.path) from error
        finally:
            store._release(conn)


def _end_quietly(conn: apsw.Connection) -> None:
    """Roll back a transaction a failed start left open, so the pooled connection is clean."""
    if conn.in_transaction:
        try:
            list(conn.execute("ROLLBACK"))
        except apsw.Error:
            pass


def _close_quietly(conn: apsw.Connection, held: Held) -> None:
    """Close a connection of a store that is shutting down; a failure leaves nothing to do."""
    try:
        held.close(conn)
    except apsw.Error:
        pass
