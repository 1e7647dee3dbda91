"""The files a store holds open — the vault file, its write-ahead log (`-wal`) and the log's index
(`-shm`) — and what the store does when one of them is no longer the file at its path.

SQLite opens the three by name once and keeps them. A process that deletes the `-shm` while a
server runs (people delete `-wal` and `-shm`, taking them for scraps) leaves that server on an
index no other process sees: the next process makes a new `-shm`, takes itself for the vault's first
user, and the two write one log through two indexes that do not know of each other's locks — each
checkpoint and restart of the log by one overwrites what the other committed. A probe ended in a
file that no longer passed `quick_check` and acknowledged writes lost, even after salvage. So the
store compares the files' device and inode with those it opened before every transaction — a write's
all three, a read's the `-shm` (one `stat`) — and on a difference refuses to read or write through the index it holds, checkpoints
no more, and closes without SQLite's last-connection checkpoint (`keep_files`). Removing or
replacing the vault file itself keeps its own rule (its writes are refused; decision 148)."""

from __future__ import annotations

import os
from pathlib import Path

import apsw

from kaeru.errors import Unavailable
from kaeru.storage.sqlite.machine import identity

#: The files SQLite keeps beside a WAL-mode database while a connection has it open.
LOG_FILES = ("-wal", "-shm")


class LogLost(Unavailable):
    """The vault's `-wal` or `-shm` was deleted or replaced under this store: no retry can help, only
    a restart of every process that has the vault open."""

    retryable = False


class Held:
    """The vault file and its log files as the store opened them, as (device, inode)."""

    __slots__ = ("_file", "_index", "_index_at", "_logs", "path")

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = identity(path)
        self._logs: list[tuple[Path, tuple[int, int]]] = []
        self._index: list[tuple[Path, tuple[int, int]]] = []  # the `-shm` of `_logs`
        self._index_at: tuple[str, tuple[int, int]] | None = None  # the same, for a read's one `stat`

    def logs_opened(self) -> None:
        """Note the `-wal` and `-shm` the store's first read opened. A vault that is not in WAL mode
        (a read-only rollback-journal file) has none, and nothing is watched."""
        self._logs = []
        for end in LOG_FILES:
            log_path = self.path.with_name(self.path.name + end)
            found = identity(log_path)
            if found is not None and found != (0, 0):
                self._logs.append((log_path, found))
        self._index = [(log_path, found) for log_path, found in self._logs if log_path.name.endswith("-shm")]
        self._index_at = (str(self._index[0][0]), self._index[0][1]) if self._index else None

    def file_moved(self) -> bool:
        """Whether the vault file at the path is another than the one opened (removed, replaced)."""
        return self._file is not None and identity(self.path) != self._file

    def lost_logs(self, *, index_only: bool = False) -> list[Path]:
        """The log files (only the `-shm` when `index_only`) that are no longer the ones opened,
        while the vault file still is. A vault folder removed whole takes its log files with it:
        that is `file_moved`'s case, whose reads of the file held stay consistent (no other process
        can reach that file any more)."""
        watched = self._index if index_only else self._logs
        lost = [log_path for log_path, opened in watched if identity(log_path) != opened]
        return [] if not lost or self.file_moved() else lost

    def check(self, write: bool) -> None:
        """Refuse the transaction about to begin when what it would go through is gone.

        A read watches only the `-shm` (each `stat` is a system call on every read, which the
        cheapest reads feel): with it deleted, the log this store reads may be restarted and rewritten
        by a process using the new index, so a read may meet pages of another moment or another
        table — wrong answers, or "damaged" errors sending the user to salvage a sound file. A
        `-wal` deleted alone (its index kept) is refused to writes, whose pages would reach no one.

        Raises:
            Unavailable: a write, and the vault file was removed or replaced (retryable: a restart
                opens the file now there, and the same call then applies).
            LogLost: the `-shm` (or, for a write, the `-wal`) was deleted or replaced.
        """
        if not write and (self._index_at is None or _numbered(self._index_at[0]) == self._index_at[1]):
            return  # a read, its index the one opened (or none watched): the common case, one `stat`
        if write and self.file_moved():
            raise Unavailable(
                f"the vault file was removed or replaced while this server ran ({self.path}): nothing was "
                "written; restart the server, which then opens the vault found there"
            )
        if (self._logs if write else self._index) and (lost := self.lost_logs(index_only=not write)):
            named = " and ".join(str(log_path) for log_path in lost)
            raise LogLost(
                f"the vault's write-ahead log files were deleted or replaced while this process had the vault "
                f"open ({named}): every process on a vault shares them, so this one can no longer read or write "
                "safely and did neither. Stop every kaeru server on this vault (close the agents' sessions using it), "
                "then start them again: the vault opens as it was. Never delete a vault's -wal or -shm while "
                "a kaeru process has it open"
            )

    def intact(self) -> bool:
        """Whether checkpoints may go on: no log file lost (a checkpoint through a lost index would
        restart a log that other processes go on writing through the new one)."""
        return not self._logs or not self.lost_logs()

    def close(self, conn: apsw.Connection) -> None:
        """Close `conn`; when the vault file or a log file is no longer the one opened, without the
        checkpoint SQLite runs when the last connection closes, and without removing the log files
        then (`keep_files`)."""
        if self.file_moved() or not self.intact():
            keep_files(conn)
        conn.close()


def _numbered(path: str) -> tuple[int, int]:
    """`machine.identity` of a file its caller knows numbered, on a read's path: the path as a string."""
    try:
        found = os.stat(path)
    except OSError:
        return (0, 0)
    return (found.st_dev, found.st_ino)


def keep_files(conn: apsw.Connection) -> None:
    """Make closing `conn` leave the database and its log files as they are. SQLite's last connection
    checkpoints the log into the file and then deletes `-wal` and `-shm` by name: through a lost
    index the checkpoint writes pages other processes have since rewritten, and the names may now be
    another process's files (a vault made anew in the removed one's place)."""
    conn.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
