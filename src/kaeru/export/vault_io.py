"""Reading a whole vault (or some initiatives) into an `amg` archive, and writing one into a vault."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from kaeru.export import amg
from kaeru.storage.base import AuditRecord, EndedInitiative, Session, SlotState, Store

Progress = Callable[[str, int], None]


def _noop(stage: str, count: int) -> None:
    return None


#: Audit operations that record how records came into this vault (an archive import, a copy), not
#: memory: an amg export leaves them out unless asked (`copy` moves them), so export → import →
#: export stays byte-identical (decision 15.N4).
PROVENANCE_OPERATIONS = frozenset({"import", "copy"})


def read_archive(
    store: Store, initiatives: Sequence[str] | None = None, progress: Progress = _noop, *, provenance: bool = False
) -> amg.Archive:
    """Everything the vault holds about `initiatives` (all when None), in the amg order; with
    `provenance`, also the vault's own `import`/`copy` audit records."""
    archive = amg.Archive()
    with store.read() as session:
        every = session.all_initiatives()
        chosen = every if initiatives is None else [i for i in every if i.name in set(initiatives)]
        missing = sorted(set(initiatives or []) - {i.name for i in chosen})
        if missing:
            archive.omissions.append({"reason": f"unknown initiatives: {', '.join(missing)}", "count": len(missing)})
        ended = session.ended_initiatives()
        history = session.name_history(None)
        keys: dict[int, amg.InitiativeKey] = {i.id: (i.name, None) for i in every}
        keys.update({e.id: (e.name, e.ended_at) for e in ended})
        scope = None if initiatives is None else [i.id for i in chosen]
        archive.initiatives = [
            amg.initiative_record(i, history.get(i.id, [])) for i in sorted(chosen, key=lambda i: i.name)
        ]
        node_ids: set[str] = set()
        named: set[int] = set()
        for entry in session.export_revisions(scope):
            archive.nodes.append(amg.node_record(entry, keys))
            named.update(entry.node.initiatives)
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
        slots = list(session.export_slots(scope))
        audit = [a for a in session.export_audit(scope) if provenance or a.operation not in PROVENANCE_OPERATIONS]
        named.update(s.initiative_id for s in slots)
        named.update(a.initiative_id for a in audit if a.initiative_id is not None)
        archive.slots = [amg.slot_record(s, keys) for s in slots]
        archive.audit = [amg.audit_record(a, keys) for a in audit]
        # Ended initiatives: all of them in a whole-vault export, else those the records name.
        archive.ended = [
            amg.ended_record(e, history.get(e.id, []))
            for e in sorted(ended, key=lambda e: (e.name, e.ended_at, e.id))
            if scope is None or e.id in named
        ]
        progress("audit", len(archive.audit))
    # Nodes stay in the order the store gives them: the order the vault first recorded them (then by
    # revision), which an import reproduces, so reads listing nodes in recording order survive it.
    # By initiative name (not the vault's internal number), so the order survives an import.
    archive.slots.sort(key=lambda r: (r["initiative"], r.get("initiative_ended_at") or "", r["slot"], r["rev_no"]))
    return archive


@dataclass
class ImportReport:
    initiatives: int = 0
    node_revisions: int = 0
    edge_revisions: int = 0
    slot_revisions: int = 0
    audit: int = 0
    skipped: int = 0
    #: The vault's ids of the live initiatives that received new records (for the import's audit).
    touched: set[int] = field(default_factory=set)
    #: The `id()` of every archive record written (not skipped as already present).
    written: set[int] = field(default_factory=set)

    def counts(self) -> dict[str, int]:
        return {k: v for k, v in asdict(self).items() if isinstance(v, int)}


Finish = Callable[[Session, ImportReport], None]


def write_archive(
    store: Store, archive: amg.Archive, progress: Progress = _noop, finish: Finish | None = None
) -> ImportReport:
    """Import `archive` in one transaction; records already present (same id and revision) are
    skipped. `finish` runs last in that transaction (the import's own audit records)."""
    report = ImportReport()
    with store.write() as session:
        ids: dict[amg.InitiativeKey, int] = {}
        restored_ended: list[int] = []
        v1_ended = {r["key"]: r for r in _v1_ended(archive)}  # (names live initiatives' histories too)
        for record in archive.initiatives:
            existed = session.initiative_by_name(record["name"]) is not None
            initiative = session.restore_initiative(
                record["name"], record["created_at"], record["last_activity"], record.get("properties") or {}
            )
            if not existed and record.get("names"):
                session.restore_name_history(initiative.id, amg.spans_of(record))
            ids[(initiative.name, None)] = initiative.id
            report.initiatives += not existed
            if not existed:
                report.touched.add(initiative.id)
                report.written.add(id(record))

        def restore_ended(record: dict[str, Any]) -> None:
            key = record.get("key") or (record["name"], record["ended_at"])
            ended = EndedInitiative(0, record["name"], record.get("created_at"), record["ended_at"])
            ids[key], created = session.restore_ended_initiative(ended, amg.spans_of(record))
            if created:
                restored_ended.append(ids[key])
                report.written.add(id(record))

        for record in archive.ended:
            restore_ended(record)
        # A version 1 archive's `#<n>` initiatives are restored only when a revision naming them is
        # new here: importing a v1 archive of this very vault (whose ended initiatives have their
        # names now) brings nothing new, and must not add a nameless copy of each.
        v1_named = {key for r in archive.nodes for key in amg.node_keys(r) if key in v1_ended}
        for record in archive.slots:
            key = amg.record_key(record)
            if key in v1_ended and key not in v1_named:  # named by slot revisions only
                restore_ended(v1_ended[key])
        for record in archive.nodes:
            if session.has_revision(record["id"], int(record["rev_no"])):
                report.skipped += 1
                continue
            for key in amg.node_keys(record):
                if key in v1_ended and key not in ids:
                    restore_ended(v1_ended[key])
                elif key not in ids and key[1] is None:  # a live initiative outside the archive's scope
                    name = key[0]
                    ids[key] = session.restore_initiative(name, record["recorded_at"], record["recorded_at"], {}).id
            session.put_node(
                amg.to_node(record, ids), request_id=record.get("request_id"), actor=record.get("actor") or "import"
            )
            report.node_revisions += 1
            report.written.add(id(record))
            report.touched.update(ids[k] for k in amg.node_keys(record) if k[1] is None and k in ids)
            if report.node_revisions % 1000 == 0:
                progress("nodes", report.node_revisions)
        for record in archive.edges:
            if session.has_edge_revision(record["src"], record["dst"], record["edge_type"], int(record["rev_no"])):
                report.skipped += 1
                continue
            session.put_edge(amg.to_edge(record))
            report.edge_revisions += 1
            report.written.add(id(record))
        for record in archive.slots:
            initiative_id = ids.get(ref) if (ref := amg.record_key(record)) is not None else None
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
            report.written.add(id(record))
            if record.get("initiative_ended_at") is None:
                report.touched.add(initiative_id)
        for initiative_id in restored_ended:  # an ended initiative holds no slot now
            session.clear_slots(initiative_id)
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
                    ids.get(ref) if (ref := amg.record_key(record)) is not None else None,
                    list(record["affected"]),
                    list(record["changes"]),
                )
            )
            report.audit += 1
            report.written.add(id(record))
        if finish is not None:
            finish(session, report)
        progress("done", report.node_revisions)
    return report


_V1_ENDED = re.compile(r"^#\d+$")


def _v1_ended(archive: amg.Archive) -> list[dict[str, Any]]:
    """A version 1 archive names an initiative merged away or deleted `#<number>`, without a record:
    such initiatives become ended ones (their names unknown), ended at the last record naming them —
    not live, empty initiatives. Live initiatives get the name histories its audit records tell."""
    if archive.version != 1:
        return []
    live = {r["name"] for r in archive.initiatives}
    last: dict[str, str] = {}
    for record in archive.nodes:
        for name in record["initiatives"]:
            if name not in live and _V1_ENDED.match(name):
                last[name] = max(last.get(name, ""), record["recorded_at"])
    for record in archive.slots:
        name = record["initiative"]
        if name not in live and _V1_ENDED.match(name):
            last[name] = max(last.get(name, ""), record["updated_at"])
    renames = _v1_renames(archive)
    for record in archive.initiatives:  # live: the renames its audit records hold
        if not record.get("names") and renames.get(record["name"]):
            record["names"] = _spans(record["created_at"], renames[record["name"]], record["name"], None)
    ended: list[dict[str, Any]] = [
        {"key": (n, at), "name": n, "created_at": None, "ended_at": at, "names": []} for n, at in sorted(last.items())
    ]
    for record in archive.nodes:  # refer to them as ended from now on
        found = [n for n in record["initiatives"] if n in last]
        if found:
            record["initiatives"] = [n for n in record["initiatives"] if n not in last]
            record["ended_initiatives"] = sorted([n, last[n]] for n in found)
    for record in archive.slots:
        if record["initiative"] in last:
            record["initiative_ended_at"] = last[record["initiative"]]
    return ended


def _v1_renames(archive: amg.Archive) -> dict[str, list[tuple[str, str]]]:
    """The renames `(old name, at)` a version 1 archive's audit records tell of each live
    initiative (by its name there), since the last merge or delete under that name (old SQLite
    handed a freed id out again). Every `initiative` operation recorded `{field: "initiative",
    before: old name, after: ...}`; a merge also `merged_nodes`, a delete `forgotten_nodes`. (Its
    audit records name no ended initiative: those stay `#<n>`, names unknown.)"""
    renames: dict[str, list[tuple[str, str]]] = {}
    for record in archive.audit:
        label = record.get("initiative")
        if not isinstance(label, str) or record["operation"] != "initiative":
            continue
        changes = [c for c in record["changes"] if isinstance(c, dict)]
        ends = bool({c.get("field") for c in changes} & {"merged_nodes", "forgotten_nodes"})
        for change in changes:
            if change.get("field") == "initiative" and isinstance(change.get("before"), str):
                if ends:
                    renames.pop(label, None)
                else:
                    renames.setdefault(label, []).append((change["before"], record["at"]))
    return renames


def _spans(created: str, renames: list[tuple[str, str]], last: str, until: str | None) -> list[dict[str, Any]]:
    """Name spans from `created` through `renames` (old name, at) to `last`, held until `until`."""
    spans: list[dict[str, Any]] = []
    start = created
    for name, at in renames:
        if start < at:
            spans.append({"name": name, "from": start, "to": at})
            start = at
    if until is None or start < until:
        spans.append({"name": last, "from": start, "to": until})
    return spans
