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

from kaeru.domain.model import Edge, EdgeType, Layer, Node, NodeType, Tier, Visibility
from kaeru.domain.text import refusal_of_lone_surrogate
from kaeru.storage.base import AuditRecord, Initiative, RevisionEntry, SlotState

FORMAT = "amg"
VERSION = 1
KINDS = ("initiative", "node", "edge", "slot", "audit")


def dumps(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def initiative_record(initiative: Initiative) -> dict[str, Any]:
    return {
        "kind": "initiative",
        "name": initiative.name,
        "created_at": initiative.created_at,
        "last_activity": initiative.last_activity,
        "properties": initiative.properties,
    }


def node_record(entry: RevisionEntry, names: dict[int, str]) -> dict[str, Any]:
    node = entry.node
    return {
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
        "initiatives": sorted(names.get(i, f"#{i}") for i in node.initiatives),
        "created_at": node.created_at,
        "recorded_at": node.recorded_at,
        "retracted": node.retracted,
        "pinned": node.pinned,
        "request_id": entry.request_id,
        "actor": entry.actor,
    }


def edge_record(edge: Edge) -> dict[str, Any]:
    return {
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


def slot_record(state: SlotState, names: dict[int, str]) -> dict[str, Any]:
    return {
        "kind": "slot",
        "initiative": names.get(state.initiative_id, f"#{state.initiative_id}"),
        "slot": state.slot,
        "node_id": state.node_id,
        "rev_no": state.rev_no,
        "revision": state.revision,
        "updated_at": state.updated_at,
    }


def audit_record(record: AuditRecord, names: dict[int, str]) -> dict[str, Any]:
    return {
        "kind": "audit",
        "at": record.at,
        "operation": record.operation,
        "actor": record.actor,
        "request_id": record.request_id,
        "initiative": names.get(record.initiative_id) if record.initiative_id is not None else None,
        "affected": record.affected,
        "changes": record.changes,
    }


@dataclass
class Archive:
    """The records of one archive, grouped by kind, plus what was left out and why."""

    initiatives: list[dict[str, Any]] = field(default_factory=list)
    nodes: list[dict[str, Any]] = field(default_factory=list)
    edges: list[dict[str, Any]] = field(default_factory=list)
    slots: list[dict[str, Any]] = field(default_factory=list)
    audit: list[dict[str, Any]] = field(default_factory=list)
    omissions: list[dict[str, Any]] = field(default_factory=list)

    def header(self) -> dict[str, Any]:
        stamps = [r["recorded_at"] for r in self.nodes] + [r["recorded_at"] for r in self.edges]
        return {
            "format": FORMAT,
            "version": VERSION,
            "exported_at": max(stamps) if stamps else None,
            "initiatives": sorted(r["name"] for r in self.initiatives),
            "counts": {
                "initiatives": len(self.initiatives),
                "node_revisions": len(self.nodes),
                "edge_revisions": len(self.edges),
                "slot_revisions": len(self.slots),
                "audit": len(self.audit),
            },
            "omissions": self.omissions,
        }

    def lines(self) -> Iterator[str]:
        yield dumps(self.header())
        for group in (self.initiatives, self.nodes, self.edges, self.slots, self.audit):
            for record in group:
                yield dumps(record)

    def distinct_nodes(self) -> int:
        return len({r["id"] for r in self.nodes})

    def distinct_edges(self) -> int:
        return len({(r["src"], r["dst"], r["edge_type"]) for r in self.edges})


def parse(lines: Iterable[str]) -> Archive:
    """An archive from its lines.

    Raises:
        ValueError: not an amg archive of a version this code reads, or a malformed line.
    """
    archive = Archive()
    iterator = iter(lines)
    first = next(iterator, None)
    if first is None:
        raise ValueError("empty archive")
    header = json.loads(first)
    if header.get("format") != FORMAT or header.get("version") != VERSION:
        raise ValueError(f"not an amg v{VERSION} archive (header {first[:80]!r})")
    groups = {
        "initiative": archive.initiatives,
        "node": archive.nodes,
        "edge": archive.edges,
        "slot": archive.slots,
        "audit": archive.audit,
    }
    for number, line in enumerate(iterator, start=2):
        if not line.strip():
            continue
        record = json.loads(line)
        if (refusal := refusal_of_lone_surrogate(record)) is not None:  # it could not be stored
            raise ValueError(f"line {number}: {refusal.message}")
        kind = record.get("kind")
        if kind not in groups:
            raise ValueError(f"line {number}: unknown record kind {kind!r}")
        groups[kind].append(record)
    archive.omissions = list(header.get("omissions", []))
    return archive


def to_node(record: dict[str, Any], ids: dict[str, int]) -> Node:
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
        initiatives=tuple(ids[n] for n in record["initiatives"] if n in ids),
        created_at=record["created_at"],
        recorded_at=record["recorded_at"],
        retracted=bool(record["retracted"]),
        pinned=bool(record["pinned"]),
    )


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
