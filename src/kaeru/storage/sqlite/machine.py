"""What the machine does to a vault file, said in words a person can act on: a lock held too long,
a full disk, a read-only file or file system, a failing disk, a file removed or replaced (decisions
134, 135, 137). Kept apart from the store, which only calls these."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import apsw

from kaeru.config import file_in_the_way, not_utf8
from kaeru.errors import Internal, KaeruError, Unavailable
from kaeru.storage.migrate import VaultUnusable

#: What the machine can do to a vault file: a lock held too long, a full disk, a file or file system
#: that cannot be written, a failing disk.
BUSY = (apsw.BusyError, apsw.LockedError)
MACHINE_ERRORS = (*BUSY, apsw.FullError, apsw.ReadOnlyError, apsw.IOError)


def translate(exc: apsw.Error, path: Path) -> KaeruError:
    """A driver error as the project's error. What the machine did to the vault file — a full disk,
    a file or file system that became read-only, a failing disk — is `unavailable`, said in words a
    person can act on: the transaction was rolled back, so the same call (with its `request_id`)
    may succeed once the cause is fixed. A damaged file is `unavailable`, not retryable, and points at
    `kaeru doctor` and `kaeru salvage`."""
    if isinstance(exc, apsw.BusyError | apsw.LockedError):
        return Unavailable(f"the vault is busy ({exc}); retry shortly")
    if isinstance(exc, apsw.FullError):
        return Unavailable(
            f"the disk holding the vault is full ({path}; {free_space(path)}): nothing was written; "
            "free some space and try again"
        )
    if isinstance(exc, apsw.ReadOnlyError):
        return Unavailable(
            f"the vault file cannot be written ({path}: {exc}; a read-only file, folder or file system): "
            "nothing was written; make it writable and try again"
        )
    if isinstance(exc, apsw.IOError):
        # SQLite reports a full disk as an I/O error where it grows the shared-memory file or the
        # log; the space left says which it was.
        return Unavailable(
            f"the disk holding the vault could not be read or written ({path}: {exc}; {free_space(path)}): "
            "nothing was written; check the disk and its free space, and try again"
        )
    if isinstance(exc, apsw.CorruptError | apsw.NotADBError):
        # Not `internal` ("an unexpected server fault: report it"): the file is damaged, retrying
        # cannot help, and the message says what can (the backup probe, session 51).
        return VaultUnusable(
            f"the vault file is damaged ({path}: {exc}): `kaeru doctor` checks it; `kaeru salvage NEW_FOLDER` "
            "copies what still reads into a new vault"
        )
    return Internal(f"storage error: {type(exc).__name__}: {exc}")


#: How often a connection that found the vault locked tries again. SQLite's own busy timeout backs
#: off to 100 ms between tries: a writer waiting behind a long chunked operation (a merge, a delete,
#: an import: each chunk its own transaction, the next one begun at once) woke too rarely to find
#: the lock free between two chunks, and waited for most of the operation (decision 137).
BUSY_POLL_S = 0.001


def waiter(timeout_ms: int) -> Callable[[int], bool]:
    """A busy handler for one connection: try again every `BUSY_POLL_S` until `timeout_ms` have
    passed since the lock was first found taken (then the statement fails as busy)."""
    since = 0.0

    def busy(tries: int) -> bool:
        nonlocal since
        now = time.monotonic()
        if tries == 0:
            since = now
        if now - since >= timeout_ms / 1000:
            return False
        time.sleep(BUSY_POLL_S)
        return True

    return busy


#: A vault holds its user's notes, decisions and sources: a new one is theirs alone (decision 177).
PRIVATE_FOLDER = 0o700
PRIVATE_FILE = 0o600


def make_private(path: Path) -> None:
    """Make the vault's folder (owner only) and an empty vault file (read and write for its owner
    only) when they are missing, before SQLite opens it: SQLite creates a database file with the
    process's umask (0644: readable by every account on the machine) and gives its `-wal` and
    `-shm` files the database file's mode, so the file made here keeps all three private.

    An existing folder or file is left as it is (the user chose its mode; `kaeru doctor` says when
    other accounts can read it). A file that cannot be made here is left to SQLite's open, which
    says why (`unusable`).

    Raises:
        OSError: the folder cannot be made.
    """
    path.parent.mkdir(mode=PRIVATE_FOLDER, parents=True, exist_ok=True)
    try:
        made = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), PRIVATE_FILE)
    except OSError:
        return  # there already, or not makeable here: SQLite's own open says which
    os.close(made)


def identity(path: Path) -> tuple[int, int] | None:
    """The file at `path` as (device, inode); (0, 0) when there is none; None when its file system
    does not number files (inode 0), where removal or replacement cannot be told."""
    try:
        found = os.stat(path)
    except OSError:
        return (0, 0)
    return (found.st_dev, found.st_ino) if found.st_ino else None


def free_space(path: Path) -> str:
    """The space left where the vault file lives, for a message."""
    try:
        free = shutil.disk_usage(path.parent).free
    except OSError:
        return "free space unknown"
    return f"{free / 2**20:.1f} MiB free" if free >= 2**20 else f"{free // 1024} KiB free"


#: How a command names the vault it opens (the default place too is moved by these): the advice
#: when that place cannot hold a vault.
VAULT_NAMED_BY = "--vault or KAERU_VAULT"


class UnfitPlace(VaultUnusable):
    """A place that cannot hold a vault, and how to name another. The store knows only the path, so
    it advises the vault's own settings; a command that named the place otherwise (`kaeru copy
    --to`) says how it was named (`named_by`): "set KAERU_VAULT" told a person who had typed
    `--to` to change a setting that named another vault (decision 424)."""

    def __init__(self, why: str, named_by: str = VAULT_NAMED_BY):
        super().__init__(f"{why}; name another folder with {named_by}")
        self.why = why

    def named_by(self, how: str) -> UnfitPlace:
        """The same refusal, advising the option or argument `how` that named the place."""
        return UnfitPlace(self.why, how)


def unnameable(path: Path) -> UnfitPlace | None:
    """The refusal of a vault file whose folder SQLite cannot name (not UTF-8: decision 440), or None."""
    shown = not_utf8(path.parent)
    if shown is None:
        return None
    return UnfitPlace(f"the vault folder {shown} is not named in UTF-8, and SQLite opens only UTF-8 file names")


def unusable(path: Path, exc: Exception) -> VaultUnusable:
    """Why the vault at `path` cannot be opened, in words a person can act on."""
    if isinstance(exc, OSError):
        blocker = file_in_the_way(path.parent)
        why = f"{blocker} is a file, not a folder" if blocker is not None else exc.strerror or exc
        return UnfitPlace(f"cannot make the vault folder {path.parent}: {why}")
    if isinstance(exc, apsw.CantOpenError):
        what = "it is a folder" if path.is_dir() else "check that its folder is writable"
        return UnfitPlace(f"cannot open the vault file {path} ({what})")
    if isinstance(exc, MACHINE_ERRORS):
        return VaultUnusable(f"cannot open the vault: {translate(exc, path).message}")
    return VaultUnusable(
        f"{path} is not a kaeru vault or is damaged ({exc}): `kaeru salvage NEW_FOLDER` copies what still "
        "reads of a damaged vault into a new one; or move it aside, or restore it from an export"
    )
