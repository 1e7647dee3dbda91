"""The `archive` use case: export (markdown or amg) under the export root (`exporting`), import an
amg archive, and `copy` a whole vault from one backend to another."""

from __future__ import annotations

import gzip
import hashlib
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kaeru.config import Settings, file_in_the_way
from kaeru.domain.timefmt import fmt
from kaeru.errors import InvalidArgument, Unavailable
from kaeru.export import amg, verify
from kaeru.export.exporting import _PATH_ERRNOS, _inside, export_root
from kaeru.export.exporting import export as export  # the `archive` tool's export: there since 15.P3
from kaeru.export.import_report import ImportReport
from kaeru.export.screen import Refusal, Screener, Screening, screen
from kaeru.export.staged import is_sqlite_file
from kaeru.export.tally import Tally
from kaeru.export.vault_io import (
    Finish,
    Progress,
    Screened,
    write_amg,
    write_archive,
    write_records,
)
from kaeru.service.outcomes import Change, Issue, MutationOutcome
from kaeru.service.requests import ArchiveRequest
from kaeru.service.runtime import after_newest, vault_now
from kaeru.storage.base import AuditRecord, Session, Store


def load(path: Path) -> amg.Archive:
    return parse_bytes(path.read_bytes(), path.suffix == ".gz")


def parse_bytes(raw: bytes, gz: bool) -> amg.Archive:
    if gz:
        raw = gzip.decompress(raw)
    return amg.parse(raw.decode().split("\n"))


def _lines(path: Path) -> Any:
    """The archive's text, line by line (split at `\n` only), gzip or not."""
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", newline="\n")
    return path.open(encoding="utf-8", newline="\n")


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as raw:
        while block := raw.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def scan(path: Path, policy: str, shown: str | None = None) -> tuple[int, Screening]:
    """The archive's version and what screening its records under `policy` found: the first pass of
    an import, over the file as a stream (nothing is held but what screening found). Its records
    are counted too: an archive that does not hold what its header counts is refused here, before
    anything of it is written (`tally`).

    Raises:
        ValueError, OSError, EOFError: not a readable amg archive.
        InvalidArgument: records missing or in excess of the header's counts, naming `shown` (the
            archive as the user knows it; its path when None).
    """
    screener = Screener(policy)
    tally = Tally()
    with _lines(path) as lines:
        header = amg.read_header(next(lines, None))
        for line, kind, record in amg.records(lines):
            tally.add(kind, record)
            screener.check(line, kind, record)
    tally.check(header, shown or str(path))
    return int(header["version"]), screener.found


def screened(path: Path, policy: str) -> Iterator[Screened]:
    """The archive's records as they are read (the second pass), each with the redaction issues it
    got: under `redact` they are screened again, which rewrites them as the first pass did; under
    any other policy the first pass found nothing to change, so they go as they are."""
    screener = Screener(policy) if policy == "redact" else None
    with _lines(path) as lines:
        amg.read_header(next(lines, None))
        for line, kind, record in amg.records(lines):
            yield line, kind, record, screener.check(line, kind, record) if screener else []


@dataclass(frozen=True)
class ReadArchive:
    """An archive found, screened and counted whole before the vault is opened: a failed import (no
    file, a SQLite file, an archive cut short) creates no vault (decision 448)."""

    source: Path
    version: int
    found: Screening
    digest: str


def read_for_import(settings: Settings, request: ArchiveRequest, origin: str | None = None) -> ReadArchive:
    """The archive of `request`, checked without the vault (`import_`'s first pass). Raises what an
    import refuses: not amg, no file, a SQLite file, not whole, screening's refusal, the machine's."""
    if request.format != "amg":
        raise InvalidArgument("only amg archives can be imported", field="format")
    root = export_root(settings)
    source = _inside(root, request.path)
    try:
        found_file = source.is_file()
    except OSError as exc:  # `is_file` answers False for a missing path, but raises for one too long
        if exc.errno not in _PATH_ERRNOS:
            raise _unreadable(request.path, exc) from exc
        raise InvalidArgument(
            f"cannot read an archive at {request.path[:200]!r}: {exc.strerror}", field="path"
        ) from exc
    if not found_file:
        if source.is_dir():  # it said "no archive at …/md0" of a Markdown export's folder
            raise InvalidArgument(
                f"{source} is a folder, and an amg archive is one file; a folder of kaeru's Markdown export "
                f"is read back by `kaeru import-from kaeru-md {source} --initiative NAME`",
                field="path",
            )
        blocking = file_in_the_way(source.parent)
        said = f": {blocking} is a file, not a folder" if blocking is not None else ""
        raise InvalidArgument(f"no archive at {source}{said}", field="path")
    shown = "read from standard input" if origin == "-" else str(source)
    if is_sqlite_file(source):
        # It said "not a readable amg archive: 'utf-8' codec can't decode byte 0x99" (found by a probe).
        raise InvalidArgument(
            f"{shown} is a SQLite vault file (a `kaeru backup`), not an amg archive: restore it by putting it "
            "in a new, empty folder as vault.sqlite3 and pointing KAERU_VAULT (or --vault) there (README: Back "
            "up and restore); `kaeru copy --from THAT_FOLDER --to …` copies its memory into another vault",
            field="path",
        )
    try:
        version, found = scan(source, settings.secret_policy, shown)
        digest = _file_digest(source)
    except (ValueError, OSError, EOFError) as exc:
        if isinstance(exc, OSError) and exc.errno is not None and exc.errno not in _PATH_ERRNOS:
            raise _unreadable(request.path, exc) from exc  # gzip's own "not a gzip file" has no errno
        raise InvalidArgument(f"not a readable amg archive: {exc}", field="path") from exc
    if (error := found.error()) is not None:
        raise error
    return ReadArchive(source, version, found, digest)


def import_(
    store: Store,
    settings: Settings,
    request: ArchiveRequest,
    progress: Progress | None = None,
    origin: str | None = None,
    read: ReadArchive | None = None,
) -> MutationOutcome:
    """Import an amg archive: screened whole first (the write path's limits and secret policy, every
    refused line and field named, nothing written if any is refused), then written in chunks of
    `CHUNK` records per transaction, the last with the import's own audit records (decisions
    15.N1–15.N4, 15.P2). Both passes read the file as a stream. `origin`: where the archive came
    from, as its audit records it, when not its path (`kaeru import -`: `-`, standard input).
    `read`: the first pass, done by `read_for_import` before the vault was opened."""
    if read is None:
        read = read_for_import(settings, request, origin)
    source, version, found, digest = read.source, read.version, read.found, read.digest
    policy = settings.secret_policy
    extra: list[dict[str, Any]] = [
        {"field": "archive.sha256", "before": None, "after": digest},
        {"field": "archive.path", "before": None, "after": origin or str(source)},
    ]

    def finish(session: Session, report: ImportReport) -> None:
        # Only the records written count: a replay skips them, and redacts nothing.
        extra.append({"field": "archive.redacted", "before": 0, "after": len(report.redactions)})
        provenance_audit("import", settings.actor, extra, store)(session, report)

    if version == 1:
        # A version 1 archive is rewritten as a whole (its ended initiatives are inferred from every
        # record), so it is held whole: such archives come from before version 2 and are small.
        archive = load(source)
        found = screen(archive, policy)
        report = write_archive(store, archive, progress or (lambda s, n: None), finish, issues=found.redacted)
    else:
        report = write_records(store, screened(source, policy), progress or (lambda s, n: None), finish)
    outcome = _report_outcome(report)
    outcome.issues.extend([*report.redactions, *report.warnings])
    if settings.semantic and report.node_revisions:
        # The vectors are not computed here: this use case is given a store, not the service's
        # embedder (`import-from` is, and embeds). Said, so semantic recall's gap is not silent.
        outcome.issues.append(
            Issue(
                "not_embedded",
                f"{report.node_revisions} node revision(s) imported without vectors for semantic recall: "
                "recall finds them by their words; run `kaeru reindex` to add their vectors",
            )
        )
    if report.stopped is not None:
        # Whole chunks are in the vault and the rest is not: neither `applied` nor `rejected` says
        # that (SPEC 2.1), `partial` does, and its counts are what was committed (decision 212).
        outcome.state = "partial"
        outcome.failed_steps.append(report.failed_step())
    return outcome


def _unreadable(path: str, exc: OSError) -> Unavailable:
    """The machine's refusal to read an archive (no permission, a device error), not the archive's
    fault nor the path's (decision 166): it reached the CLI as a traceback and a client as `internal`."""
    return Unavailable(f"cannot read the archive {path[:200]!r}: {exc.strerror or exc}; nothing was imported")


def provenance_audit(operation: str, actor: str, extra: list[dict[str, Any]], store: Store) -> Finish:
    """The `finish` step that records an import or copy: one audit record for each live initiative
    that received records (audit is read per initiative), each with the whole run's counts; none
    when nothing was new (a replay changes nothing). A run that wrote only audit records or an ended
    initiative wrote something, so it is recorded too. Stamped by `store`'s clock, as every write
    of the vault is (decision 404), after the vault's newest write before the run (483: the
    archive's own records, written last, carry their first vault's stamps)."""
    with store.read() as session:
        before = session.newest_stamp()

    def finish(session: Session, report: ImportReport) -> None:
        if not report.wrote():
            return
        now = vault_now(store)
        at = fmt(after_newest(now, before) or now)
        changes = [{"field": f"imported.{k}", "before": 0, "after": v} for k, v in report.counts().items()] + extra
        owners: list[int | None] = [*sorted(report.touched)] or [None]
        for initiative_id in owners:
            session.append_audit(AuditRecord(at, operation, actor, None, initiative_id, [], changes))

    return finish


def _report_outcome(report: ImportReport) -> MutationOutcome:
    """`applied` when the import wrote any record — a slot revision, an initiative or an audit record
    as well as a node or edge revision — and `unchanged` only when it wrote nothing (SPEC 2: a valid
    mutation that changed nothing): an import that brought a slot's new holder said `unchanged`."""
    outcome = MutationOutcome(state="applied" if report.wrote() else "unchanged")
    for name, count in report.counts().items():
        outcome.changes.append(Change(f"imported.{name}", 0, count))
    if report.conflicts:  # another vault's edit of the same revision: the vault's own is kept (decision 315)
        outcome.issues.append(Issue("import_conflict", report.diverged_words(), field="path"))
    return outcome


def content_digest(store: Store) -> tuple[dict[str, int], str]:
    """Counts per record kind and a digest of every record (the vault's own import/copy records
    left out): equal on two vaults iff they hold the same memory. Streamed, like an export."""
    digest = hashlib.sha256()
    frame = write_amg(store, digest.update, with_header=False)
    return frame.header()["counts"], digest.hexdigest()


@dataclass
class CopyReport:
    report: ImportReport
    #: The verified content digest of the memory copied (`content_digest`: without import/copy records).
    digest: str
    #: Secret-looking texts the source holds, copied as they are (decision 15.N3).
    flagged: list[Refusal]
    #: Merged into a vault that held memory: verified as holding every record of the source, not as
    #: being the source.
    merged: bool = False


def copy(
    source: Store, target: Store, progress: Progress | None = None, actor: str = "copy", *, merge: bool = False
) -> CopyReport:
    """Copy everything from `source` into `target`, verify it, and record a `copy` audit record.

    The source's records are screened first: one breaking the write path's limits refuses the copy
    before anything is written; secret-looking texts are reported, not changed (decision 15.N3).
    Into an empty target the copy must be the source, record for record; with `merge` (the target
    held memory: `kaeru copy --force`) it must hold every record of the source (`verify`).

    Raises:
        KaeruError: a record of the source is refused (every refused line and field named).
        RuntimeError: the copy does not hold the same records as the source.
    """
    # Through an amg archive in a temporary file: the source is streamed out, screened in one pass
    # and written in chunks in another, so neither vault is held in memory (decision 15.P3).
    with tempfile.TemporaryDirectory(prefix="kaeru-copy-") as scratch:
        path = Path(scratch) / "copy.amg"
        with path.open("wb") as out:
            write_amg(source, out.write, None, progress or (lambda s, n: None), provenance=True)
        _, found = scan(path, "report")
        if (error := found.error()) is not None:
            raise error
        report = write_records(target, screened(path, "allow"), progress or (lambda s, n: None))
        if report.stopped is not None:
            raise report.stopped  # a copy is verified whole or refused: a part of one is no copy
    memory_digest = _verified(source, target, report if merge else None)
    extra: list[dict[str, Any]] = [
        {"field": "archive.sha256", "before": None, "after": memory_digest},
        {"field": "copy.flagged_secrets", "before": 0, "after": len(found.flagged)},
    ]
    finish = provenance_audit("copy", actor, extra, target)
    with target.write() as session:  # after the verification, which compares the records copied
        finish(session, report)
    return CopyReport(report, memory_digest, found.flagged, merge)


def _verified(source: Store, target: Store, merge: ImportReport | None) -> str:
    """The source's content digest, once the target is verified to hold its memory (the vaults' own
    import/copy records, moved along too, are left out: a target copied into before holds the
    record of that copy). Merged, the target holds more than the source: every record of the source
    must be in it (a record that diverged from the target's, `merge.conflicts`, cannot be: said so,
    decision 463); else the target must be the source.

    Raises:
        RuntimeError: the target does not hold the source's memory.
    """
    source_counts, memory_digest = content_digest(source)
    if merge is not None:
        if (lacking := verify.missing_records(source, target, merge)) is not None:
            raise RuntimeError(f"copy merged into the target does not hold all of its source: {lacking}")
        return memory_digest
    target_counts, target_digest = content_digest(target)
    if (source_counts, memory_digest) != (target_counts, target_digest):
        raise RuntimeError(f"copy differs from its source: {source_counts} vs {target_counts}")
    return memory_digest
