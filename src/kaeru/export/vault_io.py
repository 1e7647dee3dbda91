"""Reading a whole vault (or some initiatives) into an `amg` archive, and writing one into a vault."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kaeru.export import amg
from kaeru.storage.base import AuditRecord, SlotState, Store

Progress = Callable[[str, int], None]


def _noop(stage: str, count: int) -> None:
    return None


def read_archive(store: Store, initiatives: Sequence[str] | None = None, progress: Progress = _noop) -> amg.Archive:
    """Everything the vault holds about `initiatives` (all when None), in the amg order."""
    archive = amg.Archive()
    with store.read() as session:
        every = session.all_initiatives()
        chosen = every if initiatives is None else [i for i in every if i.name in set(initiatives)]
        missing = sorted(set(initiatives or []) - {i.name for i in chosen})
        if missing:
            archive.omissions.append({"reason": f"unknown initiatives: {', '.join(missing)}", "count": len(missing)})
        names = {i.id: i.name for i in every}
        scope = None if initiatives is None else [i.id for i in chosen]
        archive.initiatives = [amg.initiative_record(i) for i in sorted(chosen, key=lambda i: i.name)]
        node_ids: set[str] = set()
        for entry in session.export_revisions(scope):
            archive.nodes.append(amg.node_record(entry, names))
            node_ids.add(entry.node.id)
            if len(archive.nodes) % 1000 == 0:
                progress("nodes", len(archive.nodes))
        progress("nodes", len(archive.nodes))
        skipped = 0
        for edge in session.export_edges(None):
            if edge.src in node_ids and edge.dst in node_ids:
                archive.edges.append(amg.edge_record(edge))
            elif edge.src in node_ids or edge.dst in node_ids:
                skipped += 1
        if skipped:
            archive.omissions.append(
                {"reason": "edge revisions to nodes outside the exported initiatives", "count": skipped}
            )
        progress("edges", len(archive.edges))
        archive.slots = [amg.slot_record(s, names) for s in session.export_slots(scope)]
        archive.audit = [amg.audit_record(a, names) for a in session.export_audit(scope)]
        progress("audit", len(archive.audit))
    archive.nodes.sort(key=lambda r: (r["created_at"], r["id"], r["rev_no"]))
    return archive


@dataclass
class ImportReport:
    initiatives: int = 0
    node_revisions: int = 0
    edge_revisions: int = 0
    slot_revisions: int = 0
    audit: int = 0
    skipped: int = 0


def write_archive(store: Store, archive: amg.Archive, progress: Progress = _noop) -> ImportReport:
    """Import `archive` in one transaction; records already present (same id and revision) are skipped."""
    report = ImportReport()
    with store.write() as session:
        ids: dict[str, int] = {}
        for record in archive.initiatives:
            existed = session.initiative_by_name(record["name"]) is not None
            initiative = session.restore_initiative(
                record["name"], record["created_at"], record["last_activity"], record.get("properties") or {}
            )
            ids[initiative.name] = initiative.id
            report.initiatives += not existed
        for record in archive.nodes:
            for name in record["initiatives"]:
                if name not in ids:
                    ids[name] = session.restore_initiative(name, record["recorded_at"], record["recorded_at"], {}).id
            if session.has_revision(record["id"], int(record["rev_no"])):
                report.skipped += 1
                continue
            session.put_node(
                amg.to_node(record, ids), request_id=record.get("request_id"), actor=record.get("actor") or "import"
            )
            report.node_revisions += 1
            if report.node_revisions % 1000 == 0:
                progress("nodes", report.node_revisions)
        for record in archive.edges:
            if session.has_edge_revision(record["src"], record["dst"], record["edge_type"], int(record["rev_no"])):
                report.skipped += 1
                continue
            session.put_edge(amg.to_edge(record))
            report.edge_revisions += 1
        for record in archive.slots:
            initiative_id = ids.get(record["initiative"])
            if initiative_id is None:
                continue
            known = {s.rev_no for s in session.slot_history(initiative_id, record["slot"])}
            if int(record["rev_no"]) in known:
                report.skipped += 1
                continue
            session.put_slot(
                SlotState(
                    initiative_id,
                    record["slot"],
                    record["node_id"],
                    int(record["rev_no"]),
                    record["revision"],
                    record["updated_at"],
                )
            )
            report.slot_revisions += 1
        present = {(a.at, a.operation, a.request_id) for a in session.export_audit(None)}
        for record in archive.audit:
            if (record["at"], record["operation"], record["request_id"]) in present:
                report.skipped += 1
                continue
            session.append_audit(
                AuditRecord(
                    record["at"],
                    record["operation"],
                    record["actor"],
                    record["request_id"],
                    ids.get(record["initiative"]) if record["initiative"] else None,
                    list(record["affected"]),
                    list(record["changes"]),
                )
            )
            report.audit += 1
        progress("done", report.node_revisions)
    return report
