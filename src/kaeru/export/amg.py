"""`amg` (agent memory graph): the lossless interchange format, as JSON Lines (see docs/amg.md).

One header line, then every initiative, node revision, edge revision, slot revision and audit
record, in a fixed order, each as canonical JSON (sorted keys, no spaces). Initiatives are named,
not numbered, so an archive moves between vaults; `exported_at` is the newest recorded time in the
archive, so the same vault state always gives the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kaeru.domain.model import Edge, EdgeType, Layer, NameSpan, Node, NodeType, Tier, Visibility
from kaeru.storage.base import AuditRecord, EndedInitiative, Initiative, RevisionEntry, SlotState
from kaeru.storage.records import EdgeEntry

FORMAT = "amg"
#: Version 2 adds initiatives' name histories and the initiatives merged away or deleted (see
#: docs/amg.md); version 1 archives still import.
VERSION = 2
READABLE_VERSIONS = (1, 2)

#: How a record names an initiative: (name, None) for a live one, (last name, ended_at) for an
#: initiative merged away or deleted — two ended initiatives (or one ended, one live) may share a name.
InitiativeKey = tuple[str, str | None]
KINDS = ("initiative", "node", "edge", "slot", "audit")


def dumps(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def spans_record(spans: list[NameSpan]) -> list[dict[str, Any]]:
    return [{"name": s.name, "from": s.valid_from, "to": s.valid_to} for s in spans]


def spans_of(record: dict[str, Any]) -> list[NameSpan]:
    return [NameSpan(s["name"], s["from"], s.get("to")) for s in record.get("names") or []]


def initiative_record(initiative: Initiative, spans: list[NameSpan]) -> dict[str, Any]:
    return {
        "kind": "initiative",
        "name": initiative.name,
        "created_at": initiative.created_at,
        "last_activity": initiative.last_activity,
        "properties": initiative.properties,
        "names": spans_record(spans),
    }


def ended_record(ended: EndedInitiative, spans: list[NameSpan]) -> dict[str, Any]:
    return {
        "kind": "initiative",
        "name": ended.name,
        "created_at": ended.created_at,
        "ended_at": ended.ended_at,
        "names": spans_record(spans),
    }


def node_record(entry: RevisionEntry, keys: dict[int, InitiativeKey]) -> dict[str, Any]:
    node = entry.node
    found = [keys.get(i, (f"#{i}", None)) for i in node.initiatives]
    ended = sorted([name, at] for name, at in found if at is not None)
    record = {
        "kind": "node",
        "id": node.id,
        "rev_no": node.rev_no,
        "revision": node.revision,
        "node_type": node.node_type.value,
        "tier": node.tier.value,
        "name": node.name,
        "body": node.body,
        "description": node.description,
        "tags": list(node.tags),
        "layer": node.layer.value,
        "visibility": node.visibility.value,
        "status": node.status,
        "properties": node.properties,
        "initiatives": sorted(name for name, at in found if at is None),
        "created_at": node.created_at,
        "recorded_at": node.recorded_at,
        "retracted": node.retracted,
        "pinned": node.pinned,
        "request_id": entry.request_id,
        "actor": entry.actor,
    }
    if ended:
        record["ended_initiatives"] = ended
    return record


def _refer(record: dict[str, Any], key: InitiativeKey | None) -> dict[str, Any]:
    """`record` naming its initiative by `key`: `initiative` (and `initiative_ended_at` when ended)."""
    record["initiative"] = key[0] if key else None
    if key and key[1] is not None:
        record["initiative_ended_at"] = key[1]
    return record


def record_key(record: dict[str, Any]) -> InitiativeKey | None:
    """The initiative a slot or audit record names (None: none)."""
    if record.get("initiative") is None:
        return None
    return (record["initiative"], record.get("initiative_ended_at"))


def edge_record(entry: EdgeEntry) -> dict[str, Any]:
    """An edge revision's record; it names who made the revision (`actor`, `request_id`) when the
    vault knows, so an import names the link's actor without the write's audit record (a scoped
    export leaves out other initiatives' records). An older archive's records name neither."""
    edge = entry.edge
    record: dict[str, Any] = {
        "kind": "edge",
        "src": edge.src,
        "dst": edge.dst,
        "edge_type": edge.edge_type.value,
        "weight": edge.weight,
        "rev_no": edge.rev_no,
        "properties": edge.properties,
        "created_at": edge.created_at,
        "recorded_at": edge.recorded_at,
        "retracted": edge.retracted,
    }
    if entry.actor is not None:
        record.update(actor=entry.actor, request_id=entry.request_id)
    return record


def slot_record(state: SlotState, keys: dict[int, InitiativeKey]) -> dict[str, Any]:
    record = {
        "kind": "slot",
        "slot": state.slot,
        "node_id": state.node_id,
        "rev_no": state.rev_no,
        "revision": state.revision,
        "updated_at": state.updated_at,
    }
    return _refer(record, keys.get(state.initiative_id, (f"#{state.initiative_id}", None)))


def audit_record(record: AuditRecord, keys: dict[int, InitiativeKey]) -> dict[str, Any]:
    out = {
        "kind": "audit",
        "at": record.at,
        "operation": record.operation,
        "actor": record.actor,
        "request_id": record.request_id,
        "affected": record.affected,
        "changes": record.changes,
    }
    return _refer(out, keys.get(record.initiative_id) if record.initiative_id is not None else None)


@dataclass
class Archive:
    """The records of one archive, grouped by kind, plus what was left out and why."""

    initiatives: list[dict[str, Any]] = field(default_factory=list)
    #: Initiatives merged away or deleted that the records still name (kind `initiative`, `ended_at` set).
    ended: list[dict[str, Any]] = field(default_factory=list)
    version: int = VERSION
    nodes: list[dict[str, Any]] = field(default_factory=list)
    edges: list[dict[str, Any]] = field(default_factory=list)
    slots: list[dict[str, Any]] = field(default_factory=list)
    audit: list[dict[str, Any]] = field(default_factory=list)
    omissions: list[dict[str, Any]] = field(default_factory=list)
    #: The line each parsed record was read from, by the record's `id()` (header: line 1).
    line_of: dict[int, int] = field(default_factory=dict, compare=False, repr=False)

    def header(self) -> dict[str, Any]:
        stamps = [r["recorded_at"] for r in self.nodes] + [r["recorded_at"] for r in self.edges]
        counts = {
            "initiatives": len(self.initiatives),
            "ended_initiatives": len(self.ended),
            "node_revisions": len(self.nodes),
            "edge_revisions": len(self.edges),
            "slot_revisions": len(self.slots),
            "audit": len(self.audit),
        }
        return header(self.initiatives, max(stamps) if stamps else None, counts, self.omissions)

    def lines(self) -> Iterator[str]:
        yield dumps(self.header())
        for group in (self.initiatives, self.ended, self.nodes, self.edges, self.slots, self.audit):
            for record in group:
                yield dumps(record)

    def distinct_nodes(self) -> int:
        return len({r["id"] for r in self.nodes})

    def distinct_edges(self) -> int:
        return len({(r["src"], r["dst"], r["edge_type"]) for r in self.edges})


def header(
    initiatives: list[dict[str, Any]], exported_at: str | None, counts: dict[str, int], omissions: list[dict[str, Any]]
) -> dict[str, Any]:
    """An archive's header line: what it holds, counted, and the newest time it records."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": exported_at,
        "initiatives": sorted(r["name"] for r in initiatives),
        "counts": counts,
        "omissions": omissions,
    }


#: One record as read from an archive: (line number, kind, record). An ended initiative's kind is
#: `initiative`, with `ended_at` set.
Numbered = tuple[int, str, dict[str, Any]]


def read_header(first: str | None) -> dict[str, Any]:
    """The header of an archive from its first line.

    Raises:
        ValueError: not an amg archive of a version this code reads.
    """
    if first is None:
        raise ValueError("empty archive")
    found = json.loads(first)
    if not isinstance(found, dict) or found.get("format") != FORMAT or found.get("version") not in READABLE_VERSIONS:
        raise ValueError(f"not an amg v1 or v{VERSION} archive (header {first[:80]!r})")
    return found


def records(lines: Iterable[str], start: int = 2) -> Iterator[Numbered]:
    """The records of the lines after the header, one at a time (an archive is never held whole).

    Raises:
        ValueError: a malformed line, or a record of an unknown kind.
    """
    for number, line in enumerate(lines, start=start):
        if not line.strip():
            continue
        record = json.loads(line)
        kind = record.get("kind") if isinstance(record, dict) else None
        if kind not in KINDS:
            raise ValueError(f"line {number}: unknown record kind {kind!r}")
        yield number, kind, record


def parse(lines: Iterable[str]) -> Archive:
    """An archive from its lines, held whole (a version 1 archive is rewritten as a whole on import).

    Raises:
        ValueError: not an amg archive of a version this code reads, or a malformed line.
    """
    archive = Archive()
    iterator = iter(lines)
    found = read_header(next(iterator, None))
    archive.version = int(found["version"])
    groups = {
        "initiative": archive.initiatives,
        "node": archive.nodes,
        "edge": archive.edges,
        "slot": archive.slots,
        "audit": archive.audit,
    }
    for number, kind, record in records(iterator):
        archive.line_of[id(record)] = number  # what it holds is screened before import (export.screen)
        if kind == "initiative" and record.get("ended_at") is not None:
            archive.ended.append(record)
        else:
            groups[kind].append(record)
    archive.omissions = list(found.get("omissions", []))
    return archive


def to_node(record: dict[str, Any], ids: dict[InitiativeKey, int]) -> Node:
    return Node(
        id=record["id"],
        rev_no=int(record["rev_no"]),
        revision=record["revision"],
        node_type=NodeType(record["node_type"]),
        tier=Tier(record["tier"]),
        name=record["name"],
        body=record["body"],
        description=record["description"],
        tags=tuple(record["tags"]),
        layer=Layer(record["layer"]),
        visibility=Visibility(record["visibility"]),
        status=record["status"],
        properties=record["properties"],
        initiatives=tuple(ids[k] for k in node_keys(record) if k in ids),
        created_at=record["created_at"],
        recorded_at=record["recorded_at"],
        retracted=bool(record["retracted"]),
        pinned=bool(record["pinned"]),
    )


def node_keys(record: dict[str, Any]) -> list[InitiativeKey]:
    """The initiatives a node record names: live ones by name, then ended ones by (name, end)."""
    live: list[InitiativeKey] = [(n, None) for n in record["initiatives"]]
    return live + [(n, at) for n, at in record.get("ended_initiatives") or []]


def to_edge(record: dict[str, Any]) -> Edge:
    return Edge(
        src=record["src"],
        dst=record["dst"],
        edge_type=EdgeType(record["edge_type"]),
        weight=float(record["weight"]),
        rev_no=int(record["rev_no"]),
        recorded_at=record["recorded_at"],
        created_at=record["created_at"],
        properties=record["properties"],
        retracted=bool(record["retracted"]),
    )
