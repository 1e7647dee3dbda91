"""A read-only look at a SQLite vault for `kaeru doctor` (and tab completion, and `kaeru backup`):
nothing is created, migrated or changed.

The vault file is opened without `SQLITE_OPEN_CREATE` and with `PRAGMA query_only`, so no statement
here can change it; a vault that does not exist is reported, never created. It is opened for
writing where it can be — the file writable, no write-ahead log beside it — only so that, closing as
the last connection, SQLite removes the `-wal` and `-shm` files opening made; with a log there (a
server running, or one that crashed) it is opened read-only, and nothing is touched.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import apsw

from kaeru.errors import Internal, KaeruError, NotFound, Unavailable
from kaeru.storage.health import Health, IndexAgreement
from kaeru.storage.migrate import VaultUnusable
from kaeru.storage.sqlite.machine import translate, unnameable
from kaeru.storage.sqlite.session import SqliteSession

#: Less free space than this beside the vault and the doctor says a write (a few pages into the log,
#: its index and text-index pages) will likely be refused: the disk is full for kaeru.
FULL_BYTES = 64 * 1024


def damaged(exc: apsw.Error) -> VaultUnusable:
    """A file SQLite cannot read, said as the store says it at open (`unusable`): `unavailable`, not
    to be retried, with the way out — not `internal`, which asks the user to report a fault of ours."""
    return VaultUnusable(
        f"the vault file is damaged and cannot be read ({exc}): `kaeru doctor` checks it; stop every kaeru "
        "process, then `kaeru salvage NEW_FOLDER` copies what still reads into a new vault"
    )


def _query_only(path: Path, flags: int, busy_timeout_ms: int) -> apsw.Connection:
    """A connection to the existing vault file at `path` (never created: no `SQLITE_OPEN_CREATE`)
    on which no statement writes."""
    conn = apsw.Connection(str(path), flags=flags)
    try:
        conn.set_busy_timeout(busy_timeout_ms)
        list(conn.execute("PRAGMA query_only = 1"))
        list(conn.execute("SELECT count(*) FROM sqlite_schema"))
    except apsw.Error:
        conn.close()
        raise
    return conn


#: The schema's tables, views and triggers by name, and its unique and primary-key constraints as
#: `table(columns)`; SQLite's own tables (`sqlite_…`) and the indexes of `_INDEXES` aside.
_OBJECTS = (
    "SELECT type, name FROM sqlite_schema WHERE type IN ('table', 'view', 'trigger') "
    "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
    "UNION ALL SELECT CASE l.origin WHEN 'pk' THEN 'primary key' ELSE 'unique' END, m.name || '(' || "
    "(SELECT group_concat(name, ', ') FROM (SELECT name FROM pragma_index_info(l.name) ORDER BY seqno)) || ')' "
    "FROM sqlite_schema m, pragma_index_list(m.name) l WHERE m.type = 'table' AND l.origin IN ('u', 'pk')"
)
#: The indexes a statement made (those of constraints have no `sql`).
_INDEXES = "SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL"


class SqliteHealth(Health):
    """One query-only connection to a vault file."""

    backend = "sqlite"
    migrations = "kaeru.storage.sqlite.migrations"

    def __init__(self, path: Path, *, busy_timeout_ms: int = 30_000):
        """Open `path` read-only.

        Raises:
            NotFound: there is no vault file at `path`.
            Unavailable: the file cannot be opened as a database.
        """
        if (refusal := unnameable(path)) is not None:
            raise refusal
        self.path = path
        if path.is_dir():
            raise Unavailable(f"{path} is a folder, not a vault file")
        if not path.is_file():
            raise NotFound(f"there is no vault at {path}")
        try:
            log = path.with_name(path.name + "-wal")
            try:
                # Read-write but `query_only`: no statement writes, and the last connection to close
                # removes the `-wal` and `-shm` that opening a WAL vault makes. A read-only connection
                # cannot, so every `kaeru doctor` and every tab completion (decision 183) left both
                # beside a vault no server had open. Only where no log is there already: closing
                # would copy it into the file, and a log left beside another file (a backup copied
                # over a crashed vault) would damage it for good (found in review).
                if log.exists() and log.stat().st_size:
                    raise apsw.ReadOnlyError("a write-ahead log is there: look without touching it")
                self._c = _query_only(path, apsw.SQLITE_OPEN_READWRITE, busy_timeout_ms)
            except (apsw.CantOpenError, apsw.ReadOnlyError, apsw.PermissionsError):
                self._c = _query_only(path, apsw.SQLITE_OPEN_READONLY, busy_timeout_ms)  # or a read-only file
        except apsw.Error as exc:
            raise Unavailable(f"cannot open {path} as a SQLite database ({type(exc).__name__}: {exc})") from exc

    def describe(self) -> dict[str, Any]:
        return {"backend": self.backend, "path": str(self.path), "sqlite": apsw.sqlite_lib_version()}

    def has_table(self, name: str) -> bool:
        return bool(self._rows("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?", (name,)))

    def schema_objects(self) -> tuple[set[str], dict[str, str]]:
        """What the vault's schema holds, from `sqlite_schema` and its indexes' lists alone (no table
        is read): tables, views, triggers, unique and primary-key constraints (`storage.schema_objects`)
        and each index by name with the statement that made it."""
        found = {f"{kind} {name}" for kind, name in self._rows(_OBJECTS)}
        indexes = {str(name): str(sql) for name, sql in self._rows(_INDEXES)}
        return found, indexes

    def integrity(self) -> list[str]:
        """`PRAGMA quick_check`'s lines: `["ok"]` for a sound file; one line saying so when the file
        is too damaged for the check to run."""
        try:
            return [str(r[0]) for r in self._rows("PRAGMA quick_check")]
        except (Internal, VaultUnusable) as exc:
            return [exc.message]

    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """The rows of `sql`, the driver's errors said as the project's (`_said`)."""
        try:
            return list(self._c.execute(sql, params))
        except apsw.Error as exc:
            raise self._said(exc) from exc

    def _said(self, exc: apsw.Error) -> KaeruError:
        """A driver error as the project's: a file SQLite cannot read is `damaged`;
        any other (a table a damaged vault lacks, a lock held too long) as the store says it. The
        doctor's subject is exactly such a vault: a check that meets one fails with its fix, and an
        error the look left untranslated ended `kaeru doctor` in a traceback (decision 424)."""
        if isinstance(exc, apsw.CorruptError | apsw.NotADBError | apsw.IOError):
            return damaged(exc)
        return translate(exc, self.path)

    def index_agreement(self) -> IndexAgreement:
        """Live nodes against the rows of the full-text index, by count and by row id."""
        return self._agreement(
            "SELECT count(*) FROM nodes WHERE retracted = 0",
            "SELECT count(*) FROM nodes_fts",
            "SELECT id FROM nodes WHERE retracted = 0 AND seq NOT IN (SELECT rowid FROM nodes_fts) ORDER BY seq",
            "SELECT f.rowid, n.id FROM nodes_fts f LEFT JOIN nodes n ON n.seq = f.rowid "
            "WHERE n.seq IS NULL OR n.retracted <> 0 ORDER BY f.rowid",
        )

    def wal_bytes(self) -> int:
        """The size of the vault's write-ahead log on disk (0 when there is none)."""
        wal = self.path.with_name(self.path.name + "-wal")
        return wal.stat().st_size if wal.exists() else 0

    def unwritable(self) -> tuple[str, str] | None:
        """Why this process could not write the vault — its file, or the folder where SQLite makes the
        `-wal` and `-shm` files beside it, read-only for this user or on a read-only file system — and
        the fix, or None."""
        fix = (
            "make the file and its folder writable by the user that runs kaeru (chmod u+w), or run kaeru as their owner"
        )
        if not os.access(self.path, os.W_OK):
            return f"the vault file {self.path} cannot be written by this user (a read-only file or file system)", fix
        if not os.access(self.path.parent, os.W_OK | os.X_OK):
            why = f"the vault folder {self.path.parent} cannot be written by this user (SQLite makes its -wal and -shm files there)"
            return why, fix
        try:
            free = shutil.disk_usage(self.path.parent).free
        except OSError:
            return None
        if free < FULL_BYTES:  # reads answer and every write fails `unavailable`: the doctor said healthy
            return (
                f"the disk holding the vault is full ({free // 1024} KiB free at {self.path.parent})",
                "free some space on that disk (or move the vault to one with room: stop kaeru, move the folder, "
                "point --vault / KAERU_VAULT at it)",
            )
        return None

    def copy_into(self, target: Path) -> None:
        """Write a consistent copy of the vault to `target` (absent, or an empty file), from one read
        snapshot: `VACUUM INTO`, which writers of the vault do not wait for (decision 181)."""
        # `query_only` refuses the copy's writes too; `VACUUM INTO` writes only the copy.
        list(self._c.execute("PRAGMA query_only = 0"))
        # A Python callback now and then, so a signal's handler can run (and stop the copy).
        self._c.set_progress_handler(lambda: False, 10_000)
        try:
            self._c.execute("VACUUM INTO ?", (str(target),))
        except apsw.FullError as exc:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(target)) from exc
        except (apsw.BusyError, apsw.LockedError) as exc:
            raise Unavailable(f"the vault is busy ({exc}); retry shortly") from exc
        except (apsw.CorruptError, apsw.NotADBError) as exc:
            raise damaged(exc) from exc
        except apsw.Error as exc:  # a path SQLite cannot open, a quota, a failing disk
            raise Unavailable(f"cannot write the copy {target}: {exc}") from exc
        finally:
            self._c.set_progress_handler(None)
            list(self._c.execute("PRAGMA query_only = 1"))

    def shared_place(self) -> str | None:
        """Why the vault's folder is no place for a SQLite vault (a network file system, a sync
        client's folder), or None (decision 182)."""
        from kaeru.storage.sqlite.place import shared_place

        return shared_place(self.path.parent)

    def readable_by_others(self) -> str | None:
        """Which of the vault's files other accounts on this machine can read — a file with a read
        bit for others, reached through folders they may all enter — or None (decision 177). A vault
        made by kaeru is its owner's alone; one made before that, or copied in, may not be.

        None on Windows too, where mode bits say nothing of who may read a file (its ACLs do):
        `kaeru doctor` says there that it cannot tell, not that the vault is readable."""
        if sys.platform == "win32":
            return None
        folders = [self.path.parent.resolve(), *self.path.parent.resolve().parents]
        try:
            if any(not folder.stat().st_mode & stat.S_IXOTH for folder in folders):
                return None
            files = [self.path.with_name(self.path.name + end) for end in ("", "-wal", "-shm")]
            shown = [f"{f.name} {stat.S_IMODE(f.stat().st_mode):04o}" for f in files if f.exists()]
            exposed = [f for f in files if f.exists() and f.stat().st_mode & stat.S_IROTH]
        except OSError:
            return None  # gone or unreadable meanwhile: nothing to say about it here
        if not exposed:
            return None
        return f"other accounts on this machine can read the vault ({', '.join(shown)} in {self.path.parent})"

    @contextmanager
    def read(self) -> Iterator[SqliteSession]:
        """One read snapshot on the read-only connection; the session's statements are not
        translated one by one (`SqliteDb`), so their driver errors are here, as the store's
        transaction does (`_said`)."""
        try:
            list(self._c.execute("BEGIN"))
            try:
                yield SqliteSession(self._c, snapshot=True)
            finally:
                if self._c.in_transaction:
                    list(self._c.execute("ROLLBACK"))
        except apsw.Error as exc:
            raise self._said(exc) from exc
