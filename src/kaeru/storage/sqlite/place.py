"""Where a SQLite vault must not live: a network file system, or a folder a sync client copies between
machines (decision 182).

SQLite's write-ahead log keeps its index in shared memory (the `-shm` file, mapped by every process
on the vault) and needs every process on one machine: "WAL does not work over a network
filesystem". A vault on NFS or SMB opened from two machines — a home folder mounted everywhere, the
default vault's place on many university and company networks — can be corrupted, and locks there are
not to be trusted even from one. A sync client (Dropbox, OneDrive, iCloud Drive, Google Drive) copies
`vault.sqlite3`, its `-wal` and `-shm` one by one whenever they change: the copy on the other machine
is a file caught between writes, and two machines writing make conflicted copies. Neither shows
until the vault is damaged or a day's notes are missing, so `kaeru doctor` and `kaeru serve` say so
at once. For many machines the answer is PostgreSQL; for one machine, a local folder.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from kaeru.storage.health import SHARED_PLACE_REMEDY as REMEDY

__all__ = ["NETWORK_TYPES", "REMEDY", "SYNC_FOLDERS", "file_system_of", "shared_place", "sync_folder_of"]

#: File system types (as `/proc/self/mountinfo` names them) whose files other machines reach.
NETWORK_TYPES = frozenset(
    {
        "nfs",
        "nfs4",
        "cifs",
        "smb3",
        "smbfs",
        "ncpfs",
        "afs",
        "9p",
        "ceph",
        "glusterfs",
        "lustre",
        "gpfs",
        "beegfs",
        "fuse.sshfs",
        "fuse.s3fs",
        "fuse.rclone",
        "fuse.gcsfuse",
        "fuse.glusterfs",
        "fuse.cephfs",
        "davfs",
        "fuse.davfs2",
    }
)
#: Folder names sync clients keep in step across machines (whole path parts), and the beginnings of
#: the names they give folders of an account ("Dropbox (Team)", "OneDrive - Contoso", macOS's
#: "OneDrive-Personal" and "GoogleDrive-<email>"); everything under macOS's `CloudStorage` is a
#: provider's.
SYNC_FOLDERS = (
    "Dropbox",
    "OneDrive",
    "Google Drive",
    "GoogleDrive",
    "iCloud Drive",
    "Mobile Documents",
    "CloudStorage",
    "Nextcloud",
    "ownCloud",
    "pCloudDrive",
    "pCloud Drive",
)
SYNC_PREFIXES = ("Dropbox (", "OneDrive - ", "OneDrive-", "GoogleDrive-")


def _unescaped(field: str) -> str:
    """A mountinfo path: spaces, tabs, newlines and backslashes are written as octal escapes."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def file_system_of(folder: Path, mountinfo: str) -> str | None:
    """The type of the file system `folder` (absolute, resolved) is on, by the longest mount point
    holding it in `mountinfo` (the text of `/proc/self/mountinfo`); None when none is listed.
    Compared as strings: a mount table can hold thousands of lines (containers, automounts)."""
    where = str(folder).rstrip("/") + "/"
    best: tuple[int, str] | None = None
    for line in mountinfo.splitlines():
        fields = line.split()
        if "-" not in fields or len(fields) < 5:
            continue
        point = _unescaped(fields[4]).rstrip("/") + "/"
        if where.startswith(point) and (best is None or len(point) >= best[0]):
            best = (len(point), fields[fields.index("-") + 1])
    return best[1] if best else None


def sync_folder_of(folder: Path) -> str | None:
    """The sync client's folder that holds `folder`, by name, or None."""
    for part in folder.parts:
        if part in SYNC_FOLDERS or part.startswith(SYNC_PREFIXES):
            return part
    return None


def shared_place(folder: Path) -> str | None:
    """Why the vault folder `folder` is a place a SQLite vault must not live, or None."""
    given = folder.expanduser().absolute()
    where = given.resolve()
    # Either path may name the sync folder: a link into it, or a link named like it (`~/Dropbox`
    # pointing at another disk) — found in review.
    synced = sync_folder_of(given) or sync_folder_of(where)
    if synced is not None:
        return (
            f"the vault folder {where} is inside {synced!r}, which a sync client copies file by file between "
            "machines: a copy caught between writes is damaged, and two machines writing make conflicting copies"
        )
    if sys.platform.startswith("linux"):
        try:
            # Decoded as a path is: a mount point whose name is not UTF-8 still matches the folder's.
            mountinfo = os.fsdecode(Path("/proc/self/mountinfo").read_bytes())
        except OSError:
            return None
        kind = file_system_of(where, mountinfo)
        if kind in NETWORK_TYPES:
            return (
                f"the vault folder {where} is on a network file system ({kind}): SQLite's write-ahead log needs "
                "every process on one machine, and two machines on it can corrupt the vault"
            )
    return None
