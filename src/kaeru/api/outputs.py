"""Every tool's output JSON Schema: the contract's envelope, with each tool's own `operation` and data.

The published tools (`search`, `claim`, `revise`) serve the contract's own output schemas; the
others reuse the contract's envelope (`search.output` for reads, `claim.output` for mutations).
"""

from __future__ import annotations

import copy
from typing import Any

from kaeru.api.schemas import CONTRACT_TOOLS, contract_schema

_NODE_OR_NULL = {"anyOf": [{"$ref": "#/$defs/NodeData"}, {"type": "null"}]}
_EDGE = {
    "type": "object",
    "properties": {
        "from": {"type": "string"},
        "to": {"type": "string"},
        "edge_type": {"type": "string"},
        "weight": {"type": "number"},
        "created_at": {"type": "string"},
        "recorded_at": {"type": "string"},
        "retracted": {"type": "boolean"},
    },
    "required": ["from", "to", "edge_type", "weight"],
}
CUSTOM_DATA: dict[str, dict[str, Any]] = {
    "recall": {
        "type": "object",
        "properties": {
            "hits": {"type": "array", "items": {"$ref": "#/$defs/NodeData"}},
            "total": {"type": "integer", "minimum": 0},
            "retrieval_plan": {
                "type": ["object", "null"],
                "properties": {
                    "intent": {"type": ["string", "null"]},
                    "role": {"type": "string"},
                    "risk": {"type": "string"},
                    "channels": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "name": {"type": "string"},
                                "weight": {"type": "number"},
                                "reason": {"type": "string"},
                            },
                            "required": ["name", "weight", "reason"],
                        },
                    },
                    "plan_hash": {"type": "string"},
                },
                "required": ["channels", "plan_hash"],
            },
            "next_step": {"type": ["object", "null"]},
            "explain": {"type": ["object", "null"], "additionalProperties": {"type": "object"}},
        },
        "required": ["hits", "total", "retrieval_plan", "next_step"],
    },
    "initiatives": {
        "type": "object",
        "properties": {
            "initiatives": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "created_at": {"type": "string"},
                        "last_activity": {"type": "string"},
                        "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
                        "slots": {"type": "array", "items": {"type": "string"}},
                    },
                    "required": ["name", "last_activity", "counts"],
                },
            },
            "total": {"type": "integer", "minimum": 0},
        },
        "required": ["initiatives", "total"],
    },
    "context": {
        "type": "object",
        "properties": {
            "initiative": {"type": ["string", "null"]},
            "today": {"type": ["string", "null"]},
            "task": {"type": ["string", "null"]},
            "notices": {"type": "array", "items": {"type": "string"}},
            "sections": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "items": {"type": "array", "items": {"$ref": "#/$defs/NodeData"}},
                        "total": {"type": "integer", "minimum": 0},
                    },
                    "required": ["name", "items", "total"],
                },
            },
        },
        "required": ["initiative", "sections", "notices"],
    },
    "timeline": {
        "type": "object",
        "properties": {
            "hits": {"type": "array", "items": {"$ref": "#/$defs/NodeData"}},
            "total": {"type": "integer", "minimum": 0},
            "anchor": {"type": ["string", "null"]},
        },
        "required": ["hits", "total", "anchor"],
    },
    "reflect": {
        "type": "object",
        "properties": {
            "initiative": {"type": ["string", "null"]},
            "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "kind": {"type": "string"},
                        "message": {"type": "string"},
                        "node": {"type": "string"},
                        "name": {"type": "string"},
                        "fix": {
                            "type": "object",
                            "properties": {"tool": {"type": "string"}, "arguments": {"type": "object"}},
                            "required": ["tool", "arguments"],
                        },
                    },
                    "required": ["kind", "message"],
                },
            },
            "total": {"type": "integer", "minimum": 0},
        },
        "required": ["initiative", "counts", "items", "total"],
    },
    "trail": {
        "type": "object",
        "properties": {
            "kind": {"type": "string"},
            "subject": _NODE_OR_NULL,
            "total": {"type": "integer", "minimum": 0},
            "cost": {"type": "number"},
            "entries": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "kind": {"type": "string"},
                        "at": {"type": "string"},
                        "node": {"$ref": "#/$defs/NodeData"},
                        "edge": {"$ref": "#/$defs/EdgeData"},
                        "changes": {"type": "array", "items": {"$ref": "#/$defs/Change"}},
                        "actor": {"type": "string"},
                        "request_id": {"type": "string"},
                        "depth": {"type": "integer"},
                        "direction": {"type": "string"},
                        "action": {"type": "string"},
                    },
                    "required": ["kind"],
                },
            },
        },
        "required": ["kind", "subject", "entries", "total"],
    },
    "current_state": {
        "type": "object",
        "properties": {
            "status": {"type": "string", "enum": ["current", "no_current", "not_found", "ambiguous", "conflict"]},
            "slot": {"type": ["string", "null"]},
            "slot_revision": {"type": ["string", "null"]},
            "subject": _NODE_OR_NULL,
            "current": _NODE_OR_NULL,
            "predecessors": {"type": "array", "items": {"$ref": "#/$defs/NodeData"}},
            "edges": {"type": "array", "items": {"$ref": "#/$defs/EdgeData"}},
            "candidates": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["status", "subject", "current", "predecessors", "edges", "candidates"],
    },
}


def output_for(operation: str, kind: str) -> dict[str, Any]:
    """The envelope schema of `operation`: the contract's own (minus `uint` formats) for the published tools."""
    if operation in CONTRACT_TOOLS:
        return contract_schema(f"{operation}.output")
    base = copy.deepcopy(contract_schema("search.output" if kind == "read" else "claim.output"))
    base["properties"]["operation"] = {"const": operation, "type": "string"}
    if kind == "read":
        base["$defs"]["EdgeData"] = copy.deepcopy(_EDGE)
        if operation in CUSTOM_DATA:
            name = "".join(part.title() for part in operation.split("_")) + "Data"
            base["$defs"][name] = copy.deepcopy(CUSTOM_DATA[operation])
            base["$defs"]["Change"] = copy.deepcopy(contract_schema("claim.output")["$defs"]["Change"])
            base["properties"]["data"] = {"$ref": f"#/$defs/{name}"}
        else:
            base["$defs"]["SearchData"]["properties"]["edges"] = {
                "type": "array",
                "items": {"$ref": "#/$defs/EdgeData"},
            }
    return base
