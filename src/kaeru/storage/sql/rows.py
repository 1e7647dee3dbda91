"""Rows → records, for both engines: SQLite's fast decoder (positional, enum members by dict look-up,
JSON by pydantic-core's parser); row decoding costs more than any SQL layer around it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from pydantic_core import from_json

from kaeru.domain.model import Edge, EdgeType, Layer, Node, NodeType, Tier, Visibility
from kaeru.storage.records import AuditRecord, Initiative, SlotState

NODE_COLS = (
    "rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, "
    "properties, initiatives, created_at, recorded_at, retracted, pinned"
)
EDGE_COLS = "src, dst, edge_type, weight, rev_no, properties, created_at, recorded_at, retracted"
SLOT_COLS = "initiative_id, slot, node_id, rev_no, revision, updated_at"
AUDIT_COLS = "seq, at, operation, actor, request_id, initiative_id, affected, changes"
INITIATIVE_COLS = "id, name, created_at, last_activity, properties"


def prefixed(columns: str, alias: str) -> str:
    """`columns` of the table aliased `alias` (`a, b` → `e.a, e.b`)."""
    return ", ".join(f"{alias}.{c.strip()}" for c in columns.split(","))


def marks(n: int) -> str:
    return ", ".join("?" * n)


#: `json.dumps(value, sort_keys=True)` without building an encoder per call (a write stores three).
sorted_json = json.JSONEncoder(sort_keys=True).encode

_NODE_TYPES = {m.value: m for m in NodeType}
_TIERS = {m.value: m for m in Tier}
_LAYERS = {m.value: m for m in Layer}
_VISIBILITIES = {m.value: m for m in Visibility}
_EDGE_TYPES = {m.value: m for m in EdgeType}


def parse_json(text: str) -> Any:
    """`json.loads`, by pydantic-core's parser (faster on the short lists rows hold). That parser refuses a
    lone surrogate escape (`"\\ud800"`), which `json.dumps` writes for such a character in a tag or
    property, so those few rows are read by `json.loads`."""
    try:
        return from_json(text)
    except ValueError:
        return json.loads(text)


@lru_cache(maxsize=8192)
def _json_tuple(text: str) -> tuple[Any, ...]:
    """A JSON list that many rows share (a node's initiatives), decoded once."""
    return tuple(parse_json(text))


def json_object(text: str) -> dict[str, Any]:
    if text == "{}":
        return {}
    value: dict[str, Any] = parse_json(text)
    return value


def node_json(seq: int, node_id: str, row: Sequence[Any]) -> Node:
    """A node whose tags and initiatives are JSON text (SQLite)."""
    (rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, properties,
     initiatives, created_at, recorded_at, retracted, pinned) = row  # fmt: skip
    # Positional, in `Node`'s field order (keywords cost a dict a node); tags differ from row to
    # row, so they are decoded without the memo.
    return Node(
        node_id, rev_no, revision, _NODE_TYPES[node_type], _TIERS[tier], name, body, description,
        tuple(parse_json(tags)), _LAYERS[layer], _VISIBILITIES[visibility], status, json_object(properties),
        _json_tuple(initiatives), created_at, recorded_at, bool(retracted), bool(pinned), seq,
    )  # fmt: skip


def node_arrays(seq: int, node_id: str, row: Sequence[Any]) -> Node:
    """A node whose tags and initiatives are arrays (PostgreSQL)."""
    (rev_no, revision, node_type, tier, name, body, description, tags, layer, visibility, status, properties,
     initiatives, created_at, recorded_at, retracted, pinned) = row  # fmt: skip
    return Node(
        node_id, rev_no, revision, _NODE_TYPES[node_type], _TIERS[tier], name, body, description,
        tuple(tags), _LAYERS[layer], _VISIBILITIES[visibility], status, json_object(properties),
        tuple(initiatives), created_at, recorded_at, bool(retracted), bool(pinned), seq,
    )  # fmt: skip


def edge(row: Sequence[Any]) -> Edge:
    src, dst, edge_type, weight, rev_no, properties, created_at, recorded_at, retracted = row
    return Edge(
        src=src,
        dst=dst,
        edge_type=_EDGE_TYPES[edge_type],
        weight=float(weight),
        rev_no=rev_no,
        properties=json_object(properties),
        created_at=created_at,
        recorded_at=recorded_at,
        retracted=bool(retracted),
    )


def slot(row: Sequence[Any]) -> SlotState:
    return SlotState(*row)


def audit(row: Sequence[Any]) -> AuditRecord:
    return AuditRecord(row[1], row[2], row[3], row[4], row[5], json.loads(row[6]), json.loads(row[7]))


def initiative(row: Sequence[Any]) -> Initiative:
    return Initiative(row[0], row[1], row[2], row[3], json_object(row[4]))
