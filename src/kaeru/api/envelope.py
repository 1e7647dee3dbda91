"""Build API 1 envelopes (SPEC §2) from service outcomes and errors.

The JSON Schemas in `kaeru/api/schemas/` are the single source of truth for the wire shapes; these
builders produce plain JSON-ready dicts and the contract tests validate every one against them.
"""

from __future__ import annotations

from typing import Any

from kaeru import API_VERSION
from kaeru.domain.model import Currentness, Edge, Layer, NodeType, Tier, Visibility
from kaeru.errors import KaeruError
from kaeru.service.outcomes import (
    Continuation,
    Coverage,
    Issue,
    MutationOutcome,
    NodeView,
    ReadOutcome,
    StateOutcome,
    TrailEntry,
    TrailOutcome,
    change_data,
)

#: Enum member -> its wire string, by dict lookup: `.value` is a property (a Python call each time), and
#: a page of hits reads it for several fields of every hit.
_WIRE: dict[Any, str] = {m: m.value for e in (NodeType, Tier, Layer, Visibility, Currentness) for m in e}

READ_KIND = "read"
MUTATION_KIND = "mutation"


def issue_data(issue: Issue) -> dict[str, Any]:
    return {"code": issue.code, "message": issue.message, "field": issue.field, "retryable": issue.retryable}


def node_data(view: NodeView) -> dict[str, Any]:
    node = view.node
    body_range = None
    if view.body_range is not None:
        body_range = {
            "start": view.body_range.start,
            "end": view.body_range.end,
            "total": view.body_range.total,
        }
    data: dict[str, Any] = {
        "id": node.id,
        "revision": node.revision,
        "node_type": _WIRE[node.node_type],
        "tier": _WIRE[node.tier],
        "name": node.name,
        "description": node.description,
        "body": view.body,
        "body_range": body_range,
        "tags": list(node.tags),
        "layer": _WIRE[node.layer],
        "visibility": _WIRE[node.visibility],
        "status": node.status,
        "properties": node.properties,
        "initiatives": view.initiatives,
        "currentness": _WIRE[view.currentness],
        "successors": view.successors,
        "metadata_is_current": view.metadata_is_current,
        "created_at": node.created_at,
        "recorded_at": node.recorded_at,
        "pinned": node.pinned,
    }
    if view.description_range is not None:
        cut_range = view.description_range
        data["description_range"] = {"start": cut_range.start, "end": cut_range.end, "total": cut_range.total}
    return data


def edge_data(edge: Edge) -> dict[str, Any]:
    """An edge as the read tools give it; its properties when it has any (an imported relation's
    own names, `relations`: "works_at", "manages" — every one was shown as a bare `refers_to`)."""
    data: dict[str, Any] = {
        "from": edge.src,
        "to": edge.dst,
        "edge_type": edge.edge_type.value,
        "weight": edge.weight,
        "created_at": edge.created_at,
        "recorded_at": edge.recorded_at,
    }
    if edge.properties:
        data["properties"] = edge.properties
    return data


def coverage_data(coverage: Coverage) -> dict[str, Any]:
    return {
        "initiatives": coverage.initiatives,
        "complete": coverage.complete,
        "rules_complete": coverage.rules_complete,
        "omitted": [{"section": o.section, "count": o.count, "reason": o.reason} for o in coverage.omitted],
    }


def empty_search_data() -> dict[str, Any]:
    return {"hits": [], "total": 0}


def empty_mutation_data() -> dict[str, Any]:
    return {
        "primary": None,
        "created": [],
        "affected": [],
        "changes": [],
        "evidence": [],
        "failed_steps": [],
        "slots": [],
        "artifacts": [],
    }


def mutation_data(outcome: MutationOutcome) -> dict[str, Any]:
    data = outcome.to_json()
    data.pop("state")
    data.pop("issues")
    return data


def mutation_envelope(
    operation: str, outcome: MutationOutcome, *, replayed: bool, request_id: str | None
) -> dict[str, Any]:
    return {
        "api_version": API_VERSION,
        "operation": operation,
        "state": outcome.state,
        "replayed": replayed,
        "request_id": request_id,
        "data": mutation_data(outcome),
        "issues": [issue_data(i) for i in outcome.issues],
    }


def read_envelope(operation: str, outcome: ReadOutcome) -> dict[str, Any]:
    data: dict[str, Any] = {"hits": [node_data(v) for v in outcome.hits], "total": outcome.total}
    if outcome.edges is not None:
        data["edges"] = [edge_data(e) for e in outcome.edges]
    return read_base(operation, data, outcome.coverage, outcome.issues, outcome.continuation)


def read_base(
    operation: str,
    data: dict[str, Any],
    coverage: Coverage,
    issues: list[Issue],
    continuation: Continuation | None = None,
) -> dict[str, Any]:
    """The envelope of a successful read: `state: ok`, coverage, and the next page's exact call."""
    return {
        "api_version": API_VERSION,
        "operation": operation,
        "state": "ok",
        "replayed": False,
        "request_id": None,
        "data": data,
        "issues": [issue_data(i) for i in issues],
        "coverage": coverage_data(coverage),
        "continuation": None
        if continuation is None
        else {"cursor": continuation.cursor, "next_arguments": continuation.next_arguments},
    }


def _entry(entry: TrailEntry) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": entry.kind}
    for key in ("at", "actor", "request_id", "depth", "direction", "action"):
        value = getattr(entry, key)
        if value is not None:
            out[key] = value
    if entry.node is not None:
        out["node"] = node_data(entry.node)
    if entry.edge is not None:
        out["edge"] = edge_data(entry.edge)
        out["edge"]["retracted"] = entry.edge.retracted
    if entry.changes:
        out["changes"] = [change_data(c) for c in entry.changes]
    return out


def trail_envelope(outcome: TrailOutcome) -> dict[str, Any]:
    data: dict[str, Any] = {
        "kind": outcome.kind,
        "subject": node_data(outcome.subject),
        "entries": [_entry(e) for e in outcome.entries],
        "total": len(outcome.entries) if outcome.total is None else outcome.total,
    }
    if outcome.cost is not None:
        data["cost"] = round(outcome.cost, 6)
    return read_base("trail", data, outcome.coverage, outcome.issues, outcome.continuation)


def state_envelope(outcome: StateOutcome) -> dict[str, Any]:
    data: dict[str, Any] = {
        "status": outcome.status,
        "slot": outcome.slot,
        "slot_revision": outcome.slot_revision,
        "subject": node_data(outcome.subject) if outcome.subject else None,
        "current": node_data(outcome.current) if outcome.current else None,
        "predecessors": [node_data(v) for v in outcome.predecessors],
        "edges": [edge_data(e) for e in outcome.edges],
        "candidates": outcome.candidates,
    }
    return read_base("current_state", data, outcome.coverage, outcome.issues)


EMPTY_DATA: dict[str, dict[str, Any]] = {
    "recall": {"hits": [], "total": 0, "retrieval_plan": None, "next_step": None, "explain": None},
    "initiatives": {"initiatives": [], "total": 0},
    "context": {"initiative": None, "today": None, "task": None, "notices": [], "sections": []},
    "timeline": {"hits": [], "total": 0, "anchor": None},
    "reflect": {"initiative": None, "counts": {}, "items": [], "total": 0},
    "trail": {"kind": "history", "subject": None, "entries": [], "total": 0},
    "current_state": {
        "status": "not_found",
        "slot": None,
        "slot_revision": None,
        "subject": None,
        "current": None,
        "predecessors": [],
        "edges": [],
        "candidates": [],
    },
}


def rejected_envelope(operation: str, kind: str, error: KaeruError, request_id: str | None = None) -> dict[str, Any]:
    """A `rejected` envelope that still validates: empty SearchData for reads, empty MutationData otherwise."""
    return {
        "api_version": API_VERSION,
        "operation": operation,
        "state": "rejected",
        "replayed": False,
        "request_id": request_id,
        "data": dict(EMPTY_DATA[operation])
        if operation in EMPTY_DATA
        else (empty_search_data() if kind == READ_KIND else empty_mutation_data()),
        "issues": [{"code": error.code, "message": error.message, "field": error.field, "retryable": error.retryable}],
    }
