"""`kaeru backup FILE`: a consistent copy of a SQLite vault, made while servers use it (decision 181).

Copying the vault's folder while a server runs can copy a file caught between a write and its
checkpoint, or leave out what is still in the `-wal`: a backup that is old, or that does not open.
SQLite's `VACUUM INTO` writes every page of one read snapshot into a new database file; writers go
on meanwhile. The copy is written beside its target under a hidden name (private, as the vault is:
decision 177), checked with `PRAGMA quick_check`, made durable, then renamed onto the target — an
earlier backup of that name is replaced only by a whole one. A file already at the target is
replaced only when it is an earlier backup of this same vault (rotation), is empty, or `force` says
so; the backup is its owner's alone (0600) whatever the mode of the file it replaced.

The copy is a vault file: put it in a folder as `vault.sqlite3` and point `KAERU_VAULT` at the folder.
A PostgreSQL vault is backed up with the database's own tools (`pg_dump`), or as an archive.
"""

from __future__ import annotations

import hmac
import os
import stat
import time
import urllib.parse
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kaeru.config import Settings, expanded, file_in_the_way, not_utf8
from kaeru.errors import Internal, InvalidArgument, Unavailable
from kaeru.export.staged import (
    PRIVATE_FILE,
    PRIVATE_FOLDER,
    hidden_beside,
    is_sqlite_file,
    live_database,
    remove_stale_scraps,
)
from kaeru.export.stopping import stopped_by_signals
from kaeru.storage.factory import open_health


@dataclass(frozen=True)
class Backup:
    path: Path
    bytes: int
    live_nodes: int
    seconds: float


def backup(settings: Settings, target: Path, *, force: bool = False) -> Backup:
    """Copy the vault of `settings` to the file `target`; a file there is replaced only if it is an
    earlier backup of this vault or empty, or when `force`.

    Raises:
        InvalidArgument: a PostgreSQL vault, or a target that is a folder, in the vault's folder, a
            SQLite database in use (`staged.live_database`), not a regular file, or (without
            `force`) a file that is not an earlier backup of this vault (`_not_ours`).
        NotFound: there is no vault.
        Unavailable: the copy could not be written (a full disk, a read-only folder) or the vault
            stayed busy; nothing was put in place.
        Internal: the copy did not pass `quick_check`.
    """
    if settings.database_url:
        raise InvalidArgument(
            "a PostgreSQL vault is backed up with the database's own tools (pg_dump), or as an archive: "
            "kaeru export FILE.amg.gz",
            field="path",
        )
    try:
        target = expanded(str(target), str(target)).resolve()  # through a link: the file it names is replaced
    except ValueError as exc:  # a `~` and no home (decision 189)
        raise InvalidArgument(str(exc), field="path") from None
    if (shown := not_utf8(target)) is not None:
        raise InvalidArgument(
            f"{shown} is not named in UTF-8, and SQLite writes only to UTF-8 file names: name another file "
            "(or folder); nothing was written",
            field="path",
        )
    if target.is_dir():
        raise InvalidArgument(f"{target} is a folder: name the backup file", field="path")
    folder = settings.vault_dir.expanduser()
    if folder.exists() and target.parent.exists() and target.parent.samefile(folder):
        # Beside the vault, a backup named like its `-wal` or `-shm` replaced the live file and
        # corrupted the vault (found in review); nothing else belongs in that folder either.
        raise InvalidArgument(
            f"{target} is in the vault's own folder: put backups elsewhere (another disk, ideally)", field="path"
        )
    if (why := live_database(target, settings.sqlite_path)) is not None:
        # Another vault's database (found by a probe): replaced under its server, or beside the
        # `-wal` a killed one left, which SQLite then applied to the copy — a malformed vault.
        raise InvalidArgument(f"{why}; name another file; nothing was written", field="path")
    started = time.perf_counter()
    health = open_health(settings)  # NotFound when there is no vault: nothing is created
    try:
        if not force and (why := _not_ours(target, health)) is not None:
            raise InvalidArgument(
                f"{why}: a backup replaces only an earlier backup of this vault; name another file, or pass "
                "--force to replace it; nothing was written",
                field="path",
            )
        remove_stale_scraps(target)
        partial = _made_private(target)
        try:
            with stopped_by_signals("backup", "nothing was put in place"):
                health.copy_into(partial)
            live = _checked(partial)
            with open(partial, "rb+") as written:
                os.fsync(written.fileno())
            size = partial.stat().st_size
            os.replace(partial, target)  # made 0600: private whatever the file it replaces was (decision 177)
            _synced_folder(target.parent)
        except OSError as exc:
            raise Unavailable(
                f"cannot write the backup {target}: {exc.strerror or exc}; nothing was put in place, and an "
                "earlier backup there is as it was"
            ) from exc
        finally:
            for scrap in (partial, *(partial.with_name(partial.name + end) for end in ("-journal", "-wal", "-shm"))):
                with suppress(OSError):  # a scrap that cannot be removed must not hide why the copy failed
                    scrap.unlink(missing_ok=True)
    finally:
        health.close()
    return Backup(target, size, live, time.perf_counter() - started)


def _not_ours(target: Path, health: Any) -> str | None:
    """What the file at `target` is when it is not an earlier backup of this vault, or None.

    A backup of this vault holds the vault's secret (`meta`, made once when the vault was created):
    a scheduled backup to one name replaces yesterday's. Anything else there was replaced whole
    before — another vault cleanly closed (its notes gone), a text file (kept world-readable, as
    its mode was) — where `kaeru export` refuses. An empty file holds nothing to lose (`mktemp`)."""
    try:
        found = target.stat()
    except FileNotFoundError:
        return None
    except OSError:
        return None  # the copy's own write says what is wrong with the place
    if not stat.S_ISREG(found.st_mode):
        raise InvalidArgument(f"{target} is not a regular file: name a file for the backup", field="path")
    if found.st_size == 0:
        return None
    if not is_sqlite_file(target):
        return f"{target} is a file that is not a SQLite database"
    theirs = _secret_of(target)
    if theirs is None:
        return f"{target} is a SQLite database that is not a kaeru vault"
    with health.read() as session:
        ours: bytes = session.vault_secret()
    if not hmac.compare_digest(theirs.encode(), ours.hex().encode()):
        return f"{target} is another vault, or a backup of another vault"
    return None


def _secret_of(path: Path) -> str | None:
    """The vault secret of the SQLite file at `path`, read without writing anything beside it (no
    `-wal` or `-shm` is beside it: `live_database`), or None when it holds none."""
    import apsw

    uri = "file:" + urllib.parse.quote(str(path.absolute())) + "?immutable=1"
    try:
        conn = apsw.Connection(uri, flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    except apsw.Error:
        return None
    try:
        rows = list(conn.execute("SELECT value FROM meta WHERE key = 'secret'"))
    except apsw.Error:
        return None
    finally:
        conn.close()
    return str(rows[0][0]) if rows and isinstance(rows[0][0], str) else None


def _synced_folder(folder: Path) -> None:
    """The rename made durable: the folder's entry written out too."""
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # a system that does not open folders (Windows): the rename is as durable as it gets
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)


def _made_private(target: Path) -> Path:
    """An empty file beside `target`, for its owner only (`VACUUM INTO` writes into an empty file).

    Raises:
        InvalidArgument: a file stands where a folder of `target`'s path must be — the path given
            is to be changed, and the system's "File exists" named neither the file nor why.
        Unavailable: any other refusal of the file system (no permission, a full disk).
    """
    try:
        target.parent.mkdir(mode=PRIVATE_FOLDER, parents=True, exist_ok=True)
        partial = hidden_beside(target)
        os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), PRIVATE_FILE))
    except OSError as exc:
        blocker = file_in_the_way(target.parent)
        if blocker is not None:
            raise InvalidArgument(
                f"cannot write the backup {target}: {blocker} is a file, not a folder; nothing was written",
                field="path",
            ) from None
        raise Unavailable(f"cannot write the backup {target}: {exc.strerror or exc}; nothing was written") from exc
    return partial


def _checked(copy: Path) -> int:
    """The copy's live nodes, once `quick_check` says the copy is sound."""
    from kaeru.storage.sqlite.health import SqliteHealth

    opened = SqliteHealth(copy)
    try:
        lines = opened.integrity()
        if lines != ["ok"]:
            raise Internal(
                f"the backup did not check out (quick_check: {'; '.join(lines[:3])}): `kaeru doctor` checks the vault"
            )
        if not opened.has_table("nodes"):
            raise InvalidArgument(
                "the vault holds no kaeru schema yet (an empty file): there is nothing to back up", field="path"
            )
        return opened.index_agreement().live_nodes
    finally:
        opened.close()
