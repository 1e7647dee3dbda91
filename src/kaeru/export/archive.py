"""The `archive` use case: export (markdown or amg) under the export root, import an amg archive,
and `copy` a whole vault from one backend to another."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path
from typing import Any

from kaeru.config import Settings
from kaeru.errors import InvalidArgument, PathNotAllowed
from kaeru.export import amg, markdown
from kaeru.export.vault_io import ImportReport, Progress, read_archive, write_archive
from kaeru.service.outcomes import Change, MutationOutcome
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


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def export(store: Store, settings: Settings, args: dict[str, Any], progress: Progress | None = None) -> MutationOutcome:
    fmt = args.get("format", "amg")
    root = export_root(settings)
    target = _inside(root, str(args.get("path") or ""))
    initiatives = args.get("initiatives")
    archive = read_archive(store, initiatives, progress or (lambda s, n: None))
    names = archive.header()["initiatives"]
    outcome = MutationOutcome(state="applied")
    if fmt == "amg":
        data = ("\n".join(archive.lines()) + "\n").encode()
        if target.suffix == ".gz":
            data = gzip.compress(data, mtime=0)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        size, digest = len(data), _digest(data)
    elif fmt == "markdown":
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
    else:
        raise InvalidArgument("format is markdown or amg", field="format")
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
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    return amg.parse(raw.decode().splitlines())


def import_(
    store: Store, settings: Settings, args: dict[str, Any], progress: Progress | None = None
) -> MutationOutcome:
    if args.get("format", "amg") != "amg":
        raise InvalidArgument("only amg archives can be imported", field="format")
    root = export_root(settings)
    source = _inside(root, str(args.get("path") or ""))
    if not source.is_file():
        raise InvalidArgument(f"no archive at {source}", field="path")
    try:
        archive = load(source)
    except (ValueError, OSError) as exc:
        raise InvalidArgument(f"not a readable amg archive: {exc}", field="path") from exc
    report = write_archive(store, archive, progress or (lambda s, n: None))
    return _report_outcome(report)


def _report_outcome(report: ImportReport) -> MutationOutcome:
    outcome = MutationOutcome(state="applied" if report.node_revisions or report.edge_revisions else "unchanged")
    for name in ("initiatives", "node_revisions", "edge_revisions", "slot_revisions", "audit", "skipped"):
        outcome.changes.append(Change(f"imported.{name}", 0, getattr(report, name)))
    return outcome


def content_digest(store: Store) -> tuple[dict[str, int], str]:
    """Counts per record kind and a digest of every record: equal on two vaults iff they hold the same."""
    archive = read_archive(store)
    digest = hashlib.sha256()
    for line in list(archive.lines())[1:]:
        digest.update(line.encode() + b"\n")
    return archive.header()["counts"], digest.hexdigest()


def copy(source: Store, target: Store, progress: Progress | None = None) -> tuple[ImportReport, str]:
    """Copy everything from `source` into `target`; returns the report and the verified digest.

    Raises:
        RuntimeError: the copy does not hold the same records as the source.
    """
    archive = read_archive(source, None, progress or (lambda s, n: None))
    report = write_archive(target, archive, progress or (lambda s, n: None))
    source_counts, source_digest = content_digest(source)
    target_counts, target_digest = content_digest(target)
    if (source_counts, source_digest) != (target_counts, target_digest):
        raise RuntimeError(f"copy differs from its source: {source_counts} vs {target_counts}")
    return report, source_digest
