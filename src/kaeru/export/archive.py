"""The `archive` use case: export (markdown or amg) under the export root, import an amg archive,
and `copy` a whole vault from one backend to another."""

from __future__ import annotations

import errno
import gzip
import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kaeru.config import Settings
from kaeru.domain.timefmt import fmt
from kaeru.errors import InvalidArgument, PathNotAllowed
from kaeru.export import amg, markdown
from kaeru.export.screen import Refusal, screen
from kaeru.export.vault_io import Finish, ImportReport, Progress, read_archive, write_archive
from kaeru.service.outcomes import Change, Issue, MutationOutcome
from kaeru.service.requests import ArchiveRequest
from kaeru.storage.base import AuditRecord, Session, Store


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


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


#: File system refusals caused by the `path` given (a directory where a file goes or the reverse,
#: a name too long): the caller's to fix, so `invalid_argument`; any other OSError stays `internal`.
_PATH_ERRNOS = frozenset({errno.EEXIST, errno.EISDIR, errno.ENOTDIR, errno.ENAMETOOLONG, errno.ENOENT})


def export(
    store: Store, settings: Settings, request: ArchiveRequest, progress: Progress | None = None
) -> MutationOutcome:
    fmt = request.format
    root = export_root(settings)
    target = _inside(root, request.path)
    initiatives = request.initiatives
    archive = read_archive(store, initiatives, progress or (lambda s, n: None))
    names = archive.header()["initiatives"]
    outcome = MutationOutcome(state="applied")
    try:
        if fmt == "amg":
            data = ("\n".join(archive.lines()) + "\n").encode()
            if target.suffix == ".gz":
                data = gzip.compress(data, mtime=0)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            size, digest = len(data), _digest(data)
        else:  # markdown
            files = markdown.render(archive)
            target.mkdir(parents=True, exist_ok=True)
            manifest = hashlib.sha256()
            size = 0
            for rel, text in files.items():
                path = target / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                payload = text.encode()
                path.write_bytes(payload)
                size += len(payload)
                manifest.update(rel.encode() + b"\0" + _digest(payload).encode() + b"\n")
            digest = manifest.hexdigest()
    except OSError as exc:
        if exc.errno not in _PATH_ERRNOS:
            raise
        shown = request.path[:200]
        raise InvalidArgument(f"cannot export to {shown!r}: {exc.strerror}", field="path") from exc
    outcome.artifacts.append(
        {
            "path": str(target),
            "format": fmt,
            "bytes": size,
            "sha256": digest,
            "initiatives": names,
            "omissions": archive.omissions,
            "nodes": archive.distinct_nodes(),
            "edges": archive.distinct_edges(),
        }
    )
    return outcome


def load(path: Path) -> amg.Archive:
    return parse_bytes(path.read_bytes(), path.suffix == ".gz")


def parse_bytes(raw: bytes, gz: bool) -> amg.Archive:
    if gz:
        raw = gzip.decompress(raw)
    return amg.parse(raw.decode().splitlines())


def import_(
    store: Store, settings: Settings, request: ArchiveRequest, progress: Progress | None = None
) -> MutationOutcome:
    """Import an amg archive: screened whole first (the write path's limits and secret policy, every
    refused line and field named, nothing written if any is refused), then written in one
    transaction with the import's own audit records (decisions 15.N1–15.N4)."""
    if request.format != "amg":
        raise InvalidArgument("only amg archives can be imported", field="format")
    root = export_root(settings)
    source = _inside(root, request.path)
    if not source.is_file():
        raise InvalidArgument(f"no archive at {source}", field="path")
    try:
        raw = source.read_bytes()
        archive = parse_bytes(raw, source.suffix == ".gz")
    except (ValueError, OSError, EOFError) as exc:
        raise InvalidArgument(f"not a readable amg archive: {exc}", field="path") from exc
    found = screen(archive, settings.secret_policy)
    if (error := found.error()) is not None:
        raise error
    digest = _digest(raw)
    extra: list[dict[str, Any]] = [
        {"field": "archive.sha256", "before": None, "after": digest},
        {"field": "archive.path", "before": None, "after": str(source)},
    ]
    redactions: list[Issue] = []

    def finish(session: Session, report: ImportReport) -> None:
        # Only the records written count: a replay skips them, and redacts nothing.
        redactions.extend(issue for record, issue in found.redacted if record in report.written)
        extra.append({"field": "archive.redacted", "before": 0, "after": len(redactions)})
        provenance_audit("import", settings.actor, extra)(session, report)

    report = write_archive(store, archive, progress or (lambda s, n: None), finish)
    outcome = _report_outcome(report)
    outcome.issues.extend(redactions)
    return outcome


def provenance_audit(operation: str, actor: str, extra: list[dict[str, Any]]) -> Finish:
    """The `finish` step that records an import or copy: one audit record for each live initiative
    that received records (audit is read per initiative), each with the whole run's counts; none
    when nothing was new (a replay changes nothing)."""

    def finish(session: Session, report: ImportReport) -> None:
        if not (report.node_revisions or report.edge_revisions or report.slot_revisions or report.initiatives):
            return
        at = fmt(datetime.now(UTC))
        changes = [{"field": f"imported.{k}", "before": 0, "after": v} for k, v in report.counts().items()] + extra
        owners: list[int | None] = [*sorted(report.touched)] or [None]
        for initiative_id in owners:
            session.append_audit(AuditRecord(at, operation, actor, None, initiative_id, [], changes))

    return finish


def _report_outcome(report: ImportReport) -> MutationOutcome:
    outcome = MutationOutcome(state="applied" if report.node_revisions or report.edge_revisions else "unchanged")
    for name in ("initiatives", "node_revisions", "edge_revisions", "slot_revisions", "audit", "skipped"):
        outcome.changes.append(Change(f"imported.{name}", 0, getattr(report, name)))
    return outcome


def content_digest(store: Store) -> tuple[dict[str, int], str]:
    """Counts per record kind and a digest of every record (the vault's own import/copy records
    left out): equal on two vaults iff they hold the same memory."""
    archive = read_archive(store)
    digest = hashlib.sha256()
    for line in list(archive.lines())[1:]:
        digest.update(line.encode() + b"\n")
    return archive.header()["counts"], digest.hexdigest()


@dataclass
class CopyReport:
    report: ImportReport
    #: The verified content digest of the memory copied (`content_digest`: without import/copy records).
    digest: str
    #: Secret-looking texts the source holds, copied as they are (decision 15.N3).
    flagged: list[Refusal]


def copy(source: Store, target: Store, progress: Progress | None = None, actor: str = "copy") -> CopyReport:
    """Copy everything from `source` into `target`, verify it, and record a `copy` audit record.

    The source's records are screened first: one breaking the write path's limits refuses the copy
    before anything is written; secret-looking texts are reported, not changed (decision 15.N3).

    Raises:
        KaeruError: a record of the source is refused (every refused line and field named).
        RuntimeError: the copy does not hold the same records as the source.
    """
    archive = read_archive(source, None, progress or (lambda s, n: None), provenance=True)
    found = screen(archive, "report")
    if (error := found.error()) is not None:
        raise error
    report = write_archive(target, archive, progress or (lambda s, n: None))
    # The memory is verified (the vaults' own import/copy records, moved along too, are left out:
    # a target copied into before holds the record of that copy).
    source_counts, memory_digest = content_digest(source)
    target_counts, target_digest = content_digest(target)
    if (source_counts, memory_digest) != (target_counts, target_digest):
        raise RuntimeError(f"copy differs from its source: {source_counts} vs {target_counts}")
    extra: list[dict[str, Any]] = [
        {"field": "archive.sha256", "before": None, "after": memory_digest},
        {"field": "copy.flagged_secrets", "before": 0, "after": len(found.flagged)},
    ]
    finish = provenance_audit("copy", actor, extra)
    with target.write() as session:  # after the verification, which compares the records copied
        finish(session, report)
    return CopyReport(report, memory_digest, found.flagged)
