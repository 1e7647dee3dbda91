"""The official MCP `memory` server's file (`@modelcontextprotocol/server-memory`, `memory.jsonl`).

One JSON object a line: `{"type": "entity", "name", "entityType", "observations": [str]}` or
`{"type": "relation", "from", "to", "relationType"}`. An entity becomes an `entity` node named by the
entity, its observations the body (one a line), its type kept as the tag `type:<entityType>` and in
`properties.entity_type`; a relation becomes an edge between the two nodes, typed by
`relations.edge_type_of` (the relation's own name kept on the edge as `properties.relations`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from kaeru.domain.model import NodeType
from kaeru.export.importers.core import Batch, Item, Link
from kaeru.export.importers.relations import edge_type_of
from kaeru.service.outcomes import Issue

FORMAT = "memory-jsonl"


def type_tag(entity_type: str) -> str:
    return "type:" + "-".join(entity_type.split()).lower()[:120]


def read(lines: Iterable[str]) -> Batch:
    batch = Batch(FORMAT)
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line:
            continue
        origin = f"line {number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            batch.skipped.append(Issue("line_skipped", f"{origin}: not JSON ({exc.msg})", "path"))
            continue
        kind = record.get("type") if isinstance(record, dict) else None
        if kind == "entity" and isinstance(record.get("name"), str) and record["name"].strip():
            name = record["name"]
            entity_type = record.get("entityType")
            observations = [str(o) for o in record.get("observations") or [] if str(o).strip()]
            tags = [type_tag(entity_type)] if isinstance(entity_type, str) and entity_type.strip() else []
            extra = {"entity_type": entity_type} if isinstance(entity_type, str) else {}
            batch.items.append(
                Item(
                    key=name,
                    name=name,
                    body="\n".join(observations) or name,
                    node_type=NodeType.ENTITY,
                    tags=tags,
                    origin=origin,
                    extra=extra,
                )
            )
        elif kind == "relation" and all(isinstance(record.get(k), str) for k in ("from", "to")):
            edge_type, label = edge_type_of(str(record.get("relationType") or ""))
            batch.links.append(Link(record["from"], record["to"], edge_type, label, origin))
        else:
            batch.skipped.append(Issue("line_skipped", f"{origin}: neither an entity nor a relation", "path"))
    return batch
