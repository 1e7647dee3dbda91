"""An export written out of sight first and put in place only once it is whole (decision 166).

An export can fail half-way — the disk fills, a quota is reached, the device errs. Written straight to
its path, it left a truncated archive or half a folder of pages where the user expects an export, and
over a previous export of the same name, which it had already destroyed. So an archive is written to
a hidden file beside its target and renamed onto it at the end (a rename within one folder is atomic),
and a markdown export's pages to a hidden folder inside the target. Once every page is written, they
are moved into place with the pages they replace or that go (an earlier export's) moved aside, no
signal acted on meanwhile (`stopping.held_signals`: one that came is acted on, and said, once the
new export is in place), and any failure puts the pages aside back: the folder holds the old export
or the new one, never half of each — a Ctrl-C while pages were moved left thousands of new pages
among the old. A page that cannot be put back is kept, and the error says where. The person's
other files in the folder stay (decision 166). On failure the hidden file or folder is removed and the target is as it was. Only a SIGKILL
or a power cut in those renames can still leave a mix (and the pages aside as a scrap, which a later
export or backup of that name removes: `remove_stale_scraps`).

An export is a copy of the vault, so what it makes is its owner's alone, as the vault is (decision
177): new files read and write for the owner only, a new folder the owner's only; a file it replaces
keeps the mode it had (the user chose it).
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO, cast

from kaeru.errors import Unavailable
from kaeru.export.stopping import InterruptedInPlace, Stopped, held_signals


def hidden_beside(target: Path) -> Path:
    """A hidden name beside `target` that no one else uses."""
    return _hidden(target.parent, target.name)


#: The longest file name most file systems take, in bytes (ext4, XFS, APFS, NTFS's 255 characters).
NAME_MAX_BYTES = 255


def _hidden(folder: Path, name: str) -> Path:
    """A name no one else uses in `folder`: hidden, and unique to this process and call. The name it
    stands beside is shortened to fit: a target of a legal 230–255-byte name was refused as "File
    name too long" for the ~26 bytes this adds (decision 426), and a backup's ended in a traceback."""
    suffix = f".{os.getpid()}-{secrets.token_hex(4)}.partial"
    return folder / f".{_kept(name, suffix)}{suffix}"


def _kept(name: str, suffix: str) -> str:
    """As much of `name` as a hidden name ending in `suffix` keeps: room too for the `-journal`
    SQLite writes beside a backup's copy while it makes it."""
    room = NAME_MAX_BYTES - 1 - len(suffix.encode()) - len("-journal")
    return os.fsdecode(os.fsencode(name)[:room])  # as the file system's bytes: any name a path may hold


#: A hidden copy `_hidden` names, and what SQLite writes beside it.
_SCRAP = re.compile(r"\.(?P<kept>.*)(?P<suffix>\.(?P<pid>[0-9]+)-[0-9a-f]{8}\.partial)(-journal|-wal|-shm)?", re.DOTALL)


#: A scrap younger than this is left, whatever its pid says; and no pid is larger than Linux allows.
SCRAP_AGE_S = 600
_MAX_PID = 2**22


def remove_stale_scraps(target: Path) -> None:
    """Remove `stale_scraps(target)`: a file, or a folder (a markdown export's hidden pages) whole.
    One that cannot be removed (another's, gone meanwhile) is left: the export or backup goes on."""
    for scrap in stale_scraps(target):
        try:
            if stat.S_ISDIR(os.stat(scrap, follow_symlinks=False).st_mode):
                shutil.rmtree(scrap, ignore_errors=True)
            else:
                scrap.unlink()
        except OSError:
            pass


def stale_scraps(target: Path) -> list[Path]:
    """The hidden copies beside `target` (and their `-journal`, `-wal`, `-shm`) that a process no
    longer alive left — killed by SIGKILL, or the machine stopped, while it wrote a backup or an
    export of that name: a whole vault's size each, found by no one, and private data. A process
    still alive may be writing its copy now: its files are left. Only where a process can be asked
    whether it lives without harm (POSIX: `kill` with signal 0; on Windows it would end it)."""
    if os.name != "posix":
        return []
    try:
        names = os.listdir(target.parent)
    except OSError:
        return []
    found = []
    for name in names:
        scrap = _SCRAP.fullmatch(name)
        if scrap is None or scrap["kept"] != _kept(target.name, scrap["suffix"]):
            continue
        pid = int(scrap["pid"])
        if pid == os.getpid() or pid == 0 or pid > _MAX_PID:
            continue
        try:
            # Old as well as of no process here: a process of another pid namespace (a container,
            # another machine on a shared folder) may be writing it now (review of decision 482).
            if time.time() - os.stat(target.parent / name, follow_symlinks=False).st_mtime < SCRAP_AGE_S:
                continue
            os.kill(pid, 0)
        except ProcessLookupError:
            found.append(target.parent / name)
        except OSError:
            pass  # alive, another user's, or gone meanwhile: not asked further
    return found


#: The files SQLite keeps beside a database while it is open, or after a writer stopped short: the
#: write-ahead log and its index, and the rollback journal.
SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")

#: The first bytes of every SQLite database file.
SQLITE_MAGIC = b"SQLite format 3\x00"


def is_sqlite_file(path: Path) -> bool:
    """Whether `path` is a file that starts as a SQLite database does (a vault or a backup of one).
    Only a regular file is opened: opening a FIFO to read waits for a writer (an export to a named
    pipe hung), and a device may answer anything."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return False
        with path.open("rb") as raw:
            return raw.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:  # missing, a folder, unreadable: not a database this can tell
        return False


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:  # one is missing: the same only if named alike
        return a == b


def live_database(target: Path, vault_file: Path | None) -> str | None:
    """Why writing a file over `target` would destroy a database, or None (decision 448).

    A file put over a SQLite database that a server has open, or that a killed writer left with its
    `-wal` or `-journal`, is not what the next opener reads: SQLite applies the log it finds to
    whatever file has the name (a malformed vault), or the running server answers "vault file was
    removed or replaced" and the memory it held is gone. `vault_file` is this vault's own database
    (None for PostgreSQL): it and its companions are refused even when nothing is beside them. A
    plain file — an earlier backup of that name, with nothing beside it — is not refused here: a
    backup replaces it only when it is one of this vault (`export.backup._not_ours`), and only by a
    whole one (decision 181)."""
    target = target.absolute()
    if vault_file is not None:
        own = vault_file.expanduser().absolute()
        for end in ("", *SQLITE_COMPANIONS):
            if _same_file(target, own.with_name(own.name + end)):
                what = "the vault's own database" if not end else f"the vault's own {end} file"
                return f"{target} is {what}: writing there would destroy the vault"
    for end in SQLITE_COMPANIONS:
        beside = target.with_name(target.name + end)
        if os.path.lexists(beside):
            return (
                f"{target} is a SQLite database in use or not cleanly closed ({beside.name} is beside it): "
                "writing over it would destroy it (a vault's `vault.sqlite3` perhaps)"
            )
        if target.name.endswith(end) and is_sqlite_file(target.with_name(target.name[: -len(end)])):
            return f"{target} is the {end} file of the SQLite database beside it: writing there would destroy that database"
    return None


#: What an export makes: the owner's alone (decision 177).
PRIVATE_FILE = 0o600
PRIVATE_FOLDER = 0o700


def _binary() -> int:
    """`os.open`'s flags for bytes written as given, and not inherited by a child: Windows opens a
    descriptor in text mode without O_BINARY, writing each newline as CR LF (an archive whose bytes
    no longer had its reported sha256, configurations in CR LF)."""
    return getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def private_file(path: Path) -> BinaryIO:
    """`path` opened for writing from its start; made read and write for its owner only if it is new
    (an existing file keeps its mode)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _binary()
    return os.fdopen(os.open(path, flags, PRIVATE_FILE), "wb")


def replace_keeping_mode(new: Path, old: Path) -> None:
    """Move `new` onto `old`, which keeps its mode if it was there."""
    try:
        os.chmod(new, stat.S_IMODE(os.stat(old).st_mode))
    except FileNotFoundError:
        pass
    os.replace(new, old)


def private_copy(source: Path, target: Path) -> None:
    """Copy `source` to the new file `target`, readable by its owner only until it holds all of
    `source` and takes its mode (`shutil.copy2` makes the copy with the umask's mode first)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _binary()
    with source.open("rb") as reading, os.fdopen(os.open(target, flags, PRIVATE_FILE), "wb") as writing:
        shutil.copyfileobj(reading, writing)
    shutil.copystat(source, target)


@contextmanager
def staged_file(target: Path) -> Iterator[BinaryIO]:
    """A new file beside `target`, renamed onto it when the block ends, removed if it raises.

    A folder at `target` is refused before anything is written (`IsADirectoryError`), as opening it
    would have been."""
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(target))
    target.parent.mkdir(mode=PRIVATE_FOLDER, parents=True, exist_ok=True)
    partial = hidden_beside(target)
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _binary()
        with os.fdopen(os.open(partial, flags, PRIVATE_FILE), "wb") as raw:
            yield raw
        replace_keeping_mode(partial, target)
    finally:
        partial.unlink(missing_ok=True)


@contextmanager
def spooled_beside(target: Path | None) -> Iterator[BinaryIO]:
    """A scratch file for what must be written before `target` can be (an archive's records, which
    its header comes before and counts): beside `target`, on its file system, so a full disk is the
    target's own and said so (in the system's temporary folder, a RAM disk often, an export of a
    vault that fitted on its disk failed with "No space left on device"). Removed from its folder at
    once where the system allows (POSIX: no scrap even after a SIGKILL), else when the block ends.
    With no `target` (standard output): in the system's temporary folder."""
    path = None if target is None else hidden_beside(target)
    if path is None:
        raw = cast(BinaryIO, tempfile.TemporaryFile())  # noqa: SIM115 (closed below, whatever happens)
    else:
        raw = os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | _binary(), PRIVATE_FILE), "w+b")
    try:
        if path is not None and os.name == "posix":
            path.unlink()
        yield raw
    finally:
        with suppress(OSError):  # what is left to flush is not read again; a full disk is said already
            raw.close()
        if path is not None:
            path.unlink(missing_ok=True)


class Staging:
    """A markdown export being written: its pages go to `folder` (hidden, inside the target); the
    pages of an earlier export to remove with the swap are named (`remove`) before the block ends,
    and what became of them is said after it (`removed`, and `left` with why). `unrestored` says
    what a failed swap could not move back, if anything (`_put_back`); `in_place`, that the new
    export was put in place (a signal held meanwhile may still end the export once it is)."""

    def __init__(self, target: Path, folder: Path) -> None:
        self.target, self.folder = target, folder
        self.remove: list[str] = []
        self.removed: list[str] = []
        self.left: list[str] = []
        self.unrestored: str | None = None
        self.in_place = False


#: What a markdown export stopped by a signal held while its pages were put in place left: the
#: signal is acted on only once they are all there.
IN_PLACE = (
    "it came while the new export was put in place, which was finished first: the folder holds the new export, whole"
)
#: What a Ctrl-C held while the pages were put in place says, once they all are.
CTRL_C_IN_PLACE = "stopped by Ctrl-C (SIGINT) after the new export was put in place: the folder holds it, whole"


@contextmanager
def staged_folder(target: Path) -> Iterator[Staging]:
    """A hidden folder inside `target` (made if missing) to write pages to; when the block ends the
    new export replaces the old one whole (`_swap`), other files left alone. If the block raises, the
    hidden folder is removed, and so is `target` if this call made it and nothing else is in it.

    A SIGTERM or SIGHUP held during the swap ends the export once the swap is done: said as a stop
    after the new export was put in place (`IN_PLACE`), not as one that left the old export (a
    folder holding the new export was said to be "as it was"); a Ctrl-C as `InterruptedInPlace`,
    and `Staging.in_place` tells the caller the swap was done."""
    made = not target.exists()
    target.mkdir(mode=PRIVATE_FOLDER, parents=True, exist_ok=True)
    remove_stale_scraps(target / "export")
    staging = Staging(target, _hidden(target, "export"))
    staging.folder.mkdir(mode=PRIVATE_FOLDER)
    swapped = False
    try:
        yield staging
        aside = _hidden(target, "export")
        try:
            with held_signals():
                _swap(staging, aside)
                swapped = staging.in_place = True
        finally:
            if swapped:  # after the signals are let go: removing what was moved aside changes no page
                shutil.rmtree(aside, ignore_errors=True)
    except BaseException as exc:
        shutil.rmtree(staging.folder, ignore_errors=True)
        if made and not swapped:
            try:
                target.rmdir()
            except OSError:
                pass  # not empty: something else was put there meanwhile
        if isinstance(exc, Stopped) and (swapped or staging.unrestored):
            raise Stopped(str(exc), left=IN_PLACE if swapped else staging.unrestored) from None
        if isinstance(exc, KeyboardInterrupt) and swapped:
            raise InterruptedInPlace(CTRL_C_IN_PLACE) from None
        raise
    shutil.rmtree(staging.folder, ignore_errors=True)


def _swap(staging: Staging, aside: Path) -> None:
    """Every file written to `staging.folder` moved to its place under the target, the file it
    replaces (keeping that file's mode) and each of `staging.remove` moved aside first into the
    hidden folder `aside`, which the caller removes once all are in place. A rename refused half-way
    moves back what was moved: the target is as it was (`_put_back`). A page to remove that cannot
    be moved is left, and said."""
    target, partial = staging.target, staging.folder
    aside.mkdir(mode=PRIVATE_FOLDER)
    placed: list[str] = []
    moved: list[str] = []
    made: list[Path] = []
    try:
        for folder, _, files in os.walk(partial):
            here = Path(folder)
            rel_folder = here.relative_to(partial)
            if not (target / rel_folder).is_dir():
                (target / rel_folder).mkdir(mode=PRIVATE_FOLDER)
                made.append(target / rel_folder)
            for name in files:
                rel = str(rel_folder / name)
                if _move_aside(target, aside, rel, keep_mode_on=here / name):
                    moved.append(rel)
                os.replace(here / name, target / rel)
                placed.append(rel)
    except BaseException as exc:
        _put_back(staging, aside, placed, moved, made)
        if staging.unrestored is not None and isinstance(exc, Exception):
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise Unavailable(f"cannot put the export in place in {target}: {why}; {staging.unrestored}") from exc
        raise
    for rel in staging.remove:
        try:
            if _move_aside(target, aside, rel):
                staging.removed.append(rel)
        except OSError as exc:
            staging.left.append(f"{rel} ({exc.strerror or exc})")


def _put_back(staging: Staging, aside: Path, placed: list[str], moved: list[str], made: list[Path]) -> None:
    """Undo a swap refused half-way: the new pages `placed` back into the hidden folder, the earlier
    export's pages `moved` aside back in place, the folders `made` removed. The folder `aside` is
    removed only if every page in it went back: a page that could not was deleted with it (the
    person's previous export, lost on a failing disk). Kept, it is renamed out of the scraps a later
    export removes, and `staging.unrestored` says where it is and which new pages stayed."""
    target, partial = staging.target, staging.folder
    stayed = [rel for rel in reversed(placed) if not _renamed(target / rel, partial / rel)]
    lost = [rel for rel in reversed(moved) if not _renamed(aside / rel, target / rel)]
    for new_folder in reversed(made):
        with suppress(OSError):
            new_folder.rmdir()
    stayed = [rel for rel in stayed if rel not in moved or rel in lost]  # else the earlier page is back over it
    if not lost:
        shutil.rmtree(aside, ignore_errors=True)
    said = []
    if lost:
        kept = target / f".export-earlier-pages.{os.getpid()}-{secrets.token_hex(4)}"
        if not _renamed(aside, kept):
            kept = aside
        said.append(
            f"{len(lost)} page(s) of the earlier export could not be moved back and are in {kept}: {_some(lost)}"
        )
    if stayed:
        said.append(f"{len(stayed)} new page(s) could not be taken back and are in place: {_some(stayed)}")
    staging.unrestored = "; ".join(said) or None


def _renamed(old: Path, new: Path) -> bool:
    """Whether `old` was moved onto `new`."""
    try:
        os.replace(old, new)
    except OSError:
        return False
    return True


def _some(rels: list[str], shown: int = 5) -> str:
    more = f" and {len(rels) - shown} more" if len(rels) > shown else ""
    return ", ".join(rels[:shown]) + more


def _move_aside(target: Path, aside: Path, rel: str, keep_mode_on: Path | None = None) -> bool:
    """Move the file `target/rel` (if there) to `aside/rel`, first giving `keep_mode_on` (its new
    page) its mode; whether one was there. A folder where a page goes is refused, as replacing it
    was (`IsADirectoryError`): it is the person's, not a page to move aside."""
    old = target / rel
    try:
        found = os.stat(old, follow_symlinks=False)
    except FileNotFoundError:
        return False
    if stat.S_ISDIR(found.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(old))
    if keep_mode_on is not None:
        with suppress(OSError):
            os.chmod(keep_mode_on, stat.S_IMODE(os.stat(old).st_mode))
    (aside / rel).parent.mkdir(mode=PRIVATE_FOLDER, parents=True, exist_ok=True)
    os.replace(old, aside / rel)
    return True
