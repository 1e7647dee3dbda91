"""The `archive` tool's export (markdown or amg) under the export root: what it refuses, where it
writes (`staged`), what a signal does meanwhile (`stopping`), and how a failure is said."""

from __future__ import annotations

import errno
import hashlib
import zlib
from contextlib import nullcontext
from pathlib import Path
from typing import Any, BinaryIO, cast

from kaeru.config import Settings, file_in_the_way
from kaeru.errors import InvalidArgument, PathNotAllowed, Unavailable, UnknownInitiative
from kaeru.export import markdown
from kaeru.export.staged import (
    IN_PLACE,
    Staging,
    is_sqlite_file,
    live_database,
    remove_stale_scraps,
    staged_file,
    staged_folder,
)
from kaeru.export.stopping import InterruptedInPlace, Stopped, stopped_by_signals
from kaeru.export.vault_io import Frame, Progress, SpoolFailed, walk_vault, write_amg
from kaeru.service.outcomes import Issue, MutationOutcome
from kaeru.service.requests import ArchiveRequest
from kaeru.storage.base import Store


def export_root(settings: Settings) -> Path:
    return (settings.export_root or settings.vault_dir / "exports").resolve()


def _inside(root: Path, raw: str, field: str = "path") -> Path:
    if "\x00" in raw:  # no file system path holds NUL (`resolve` raised ValueError: an `internal`)
        raise InvalidArgument(f"{field} holds a NUL character, which no file path can", field=field)
    path = Path(raw)
    target = (path if path.is_absolute() else root / path).resolve()
    if target != root and root not in target.parents:
        raise PathNotAllowed(f"{raw!r} is outside the export root {root}", field=field)
    return target


#: File system refusals caused by the `path` given (a directory where a file goes or the reverse,
#: a name too long): the caller's to fix, so `invalid_argument`; any other OSError is the machine's
#: (`unavailable`, decision 166).
_PATH_ERRNOS = frozenset({errno.EEXIST, errno.EISDIR, errno.ENOTDIR, errno.ENAMETOOLONG, errno.ENOENT})


def _in_the_way(root: Path, target: Path, fmt: str, exc: OSError) -> str:
    """What stops the export, named: the system's "File exists" or "Is a directory" says neither
    which path nor why. A file where a folder of the path must be is looked for above the export
    root too: `kaeru export notes.txt/x.amg` exports to a root that is that file."""
    if exc.errno == errno.EISDIR and fmt == "markdown":  # a folder where one of its pages goes
        where = Path(str(exc.filename)) if exc.filename else target
        name = repr(str(where.relative_to(root))) if root in where.parents else str(where)
        return f"{name} is a folder where a page of the export goes; nothing was changed"
    if exc.errno == errno.EISDIR:
        return "it is a folder, and an amg export writes one file"
    if exc.errno not in (errno.EEXIST, errno.ENOTDIR):
        return str(exc.strerror)  # a name too long, a folder missing: the system's words say it
    blocking = file_in_the_way(target if fmt == "markdown" else target.parent)
    if blocking is None:
        return str(exc.strerror)
    # Inside the root, by the name the caller gave (an MCP client knows the root's paths only so).
    name = repr(str(blocking.relative_to(root))) if root in blocking.parents else str(blocking)
    if blocking == target:
        return f"{name} is a file, and a {fmt} export writes a folder there; nothing was written"
    return f"{name} is a file, so it cannot hold a folder or file inside it; nothing was written"


def _refuse_a_database(target: Path, settings: Settings, fmt: str) -> None:
    """No archive over a SQLite database (decision 448): `kaeru export VAULT/vault.sqlite3` destroyed
    the live vault. Its files, a database in use and (an amg file) any SQLite file — a closed vault,
    a backup; a markdown export is a folder, which a database's `-wal` name made unopenable."""
    why = live_database(target, None if settings.database_url else settings.sqlite_path)
    if why is None and fmt == "amg" and is_sqlite_file(target):
        why = f"{target} is a SQLite database (a vault or a backup): an archive written there would replace it"
    if why is not None:
        raise InvalidArgument(f"cannot export there: {why}; name another file; nothing was written", field="path")


def export(
    store: Store,
    settings: Settings,
    request: ArchiveRequest,
    progress: Progress | None = None,
    stream: BinaryIO | None = None,
) -> MutationOutcome:
    """Export under the export root; with `stream`, an amg archive is written there instead
    (`kaeru export -`: standard output), uncompressed, and its artifact's path is `-`."""
    fmt = request.format
    root = export_root(settings)
    target = _inside(root, request.path) if stream is None else None
    if target is not None:
        _refuse_a_database(target, settings, fmt)
    initiatives = None if request.initiatives is None else known_initiatives(store, request.initiatives)
    outcome = MutationOutcome(state="applied")
    progress = progress or (lambda s, n: None)
    files: list[tuple[str, str, int]] | None = None
    left = "what was written is incomplete" if target is None else _NOTHING
    try:
        with stopped_by_signals("export", left):
            if fmt == "amg":
                size, digest, frame = _amg(store, initiatives, progress, target, stream)
            else:
                if target is None:
                    raise InvalidArgument("a markdown export is a folder: it cannot be streamed", field="format")
                frame, files, removed, gone = _markdown(store, initiatives, progress, target)
                if removed or gone:
                    outcome.issues.append(Issue("pages_removed", markdown.removed_said(removed, gone)))
    except SpoolFailed as exc:
        # Where the space ran out: the records wait there until the header that counts them is written.
        where = "standard output" if target is None else repr(request.path[:200])
        raise Unavailable(
            f"cannot export to {where}: {exc.strerror or exc} in {exc.filename}, where the archive's records wait "
            f"until its header, which counts them, is written; {left}"
        ) from exc
    except OSError as exc:
        shown = request.path[:200]
        if target is None:  # the stream's reader went away, or its disk filled: the archive is cut short
            raise Unavailable(
                f"cannot write the archive to standard output: {exc.strerror or exc}; what was written is incomplete"
            ) from exc
        if exc.errno not in _PATH_ERRNOS:
            # The machine's refusal (a full disk, a quota, a read-only file system, a device error):
            # said as one, retryable like the vault's own (decision 134), and nothing was put in place.
            raise Unavailable(f"cannot export to {shown!r}: {exc.strerror or exc}; {_NOTHING}") from exc
        raise InvalidArgument(
            f"cannot export to {shown!r}: {_in_the_way(root, target, fmt, exc)}", field="path"
        ) from exc
    if files is not None:
        manifest = hashlib.sha256()
        for rel, file_digest, _ in files:
            manifest.update(rel.encode() + b"\0" + file_digest.encode() + b"\n")
        size, digest = sum(n for _, _, n in files), manifest.hexdigest()
    names, omissions = frame.header()["initiatives"], frame.omissions
    nodes, edges = frame.distinct_nodes, frame.distinct_edges
    outcome.artifacts.append(
        {
            "path": str(target) if target is not None else "-",
            "format": fmt,
            "bytes": size,
            "sha256": digest,
            "initiatives": names,
            "omissions": omissions,
            "nodes": nodes,
            "edges": edges,
        }
    )
    return outcome


#: What a failed export to a file or folder leaves (decision 166).
_NOTHING = "nothing was written, and an earlier export there is as it was"


def _amg(
    store: Store,
    initiatives: list[str] | None,
    progress: Progress,
    target: Path | None,
    stream: BinaryIO | None,
) -> tuple[int, str, Frame]:
    """The amg archive written to `target` (or `stream`): its size, sha256 and frame. Streamed
    (decision 15.P3): the vault is never held whole; the file is put in place only once whole
    (decision 166), and its records wait beside it meanwhile (`staged.spooled_beside`)."""
    if target is not None:
        remove_stale_scraps(target)
    with staged_file(target) if target is not None else nullcontext(cast(BinaryIO, stream)) as raw:
        sink = _Hashing(raw)
        if target is not None and target.suffix == ".gz":
            # zlib's own gzip framing (mtime 0, OS byte 3): the same bytes on every Python, where
            # `gzip.compress` writes the OS byte as 255 from 3.13.
            packer = zlib.compressobj(9, zlib.DEFLATED, 31)
            frame = write_amg(store, lambda b: sink.write(packer.compress(b)), initiatives, progress, beside=target)
            sink.write(packer.flush())
        else:
            frame = write_amg(store, sink.write, initiatives, progress, beside=target)
    return sink.size, sink.sha256.hexdigest(), frame


def _markdown(
    store: Store, initiatives: list[str] | None, progress: Progress, target: Path
) -> tuple[Frame, list[tuple[str, str, int]], list[str], list[str]]:
    """The markdown export written into the folder `target`, as the vault is walked (decision 127):
    a page per live node, never the vault whole. The pages an earlier export wrote here for nodes this
    one does not hold at that path (forgotten, out of scope, renamed) go with the swap that puts the
    new pages in place (`staged.staged_folder`). Its frame, files, and the pages removed and left."""
    frame = Frame()
    walk = walk_vault(store, initiatives, frame, progress)
    staging: Staging | None = None
    try:
        with staged_folder(target) as staging:
            written = markdown.write_folder(walk, frame.header, staging.folder)
            staging.remove = markdown.stale_pages(target, (rel for rel, _, _ in written.files), written.ids)
    except (Stopped, InterruptedInPlace) as stop:
        if staging is not None and staging.in_place:
            _finish_stopped(stop, staging)
        raise
    markdown.remove_empty_folders(target, staging.removed)
    return frame, written.files, staging.removed, staging.left


def _finish_stopped(stop: Stopped | InterruptedInPlace, staging: Staging) -> None:
    """A signal held while the new pages were put in place came once they all were: the folders the
    removed pages left empty are removed too (a few `rmdir`s), and the pages removed (and left) are
    said with the stop, where the `pages_removed` issue of an export that ended is not."""
    markdown.remove_empty_folders(staging.target, staging.removed)
    said = markdown.removed_said(staging.removed, staging.left)
    if not said:
        return
    if isinstance(stop, Stopped):
        stop.left = f"{stop.left or IN_PLACE}; {said}"
    else:
        stop.detail = f"{stop.detail}; {said}"


def known_initiatives(store: Store, names: list[str]) -> list[str]:
    """The initiatives an export of `names` holds, as the vault names them; refused before anything
    is written when one is not in the vault. An export of a mistyped name (`Alpha` for `alpha`) was
    an empty archive answered `applied`, written over a good export of the same path; refused, the
    name gets the `unknown_initiative` issue and the did-you-mean that `search` and `context` give.

    Raises:
        UnknownInitiative: on `initiatives[i]` of the first name unknown (every unknown one said).
    """
    from kaeru.service.search import resolve_scopes  # what `search` says of an unknown scope

    with store.read() as session:
        found, unknown = resolve_scopes(session, names)
    if unknown:
        said = "; ".join(issue.message for issue in unknown)
        raise UnknownInitiative(f"{said} (nothing was exported)", field=unknown[0].field)
    return [initiative.name for initiative in found]


class _Hashing:
    """A binary file that counts and hashes what is written to it."""

    def __init__(self, raw: Any) -> None:
        self._raw = raw
        self.size = 0
        self.sha256 = hashlib.sha256()

    def write(self, data: bytes) -> int:
        self.size += len(data)
        self.sha256.update(data)
        written: int = self._raw.write(data)
        return written

    def flush(self) -> None:
        self._raw.flush()
