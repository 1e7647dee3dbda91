"""Every tool's output JSON Schema: the contract's envelope, with each tool's own `operation` and data.

The published tools (`search`, `claim`, `revise`) serve the contract's own output schemas, written
portably (`portable`); the others reuse the contract's envelope (`search.output` for reads,
`claim.output` for mutations).
"""

from __future__ import annotations

import copy
import json
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
        "properties": {"type": "object"},
    },
    "required": ["from", "to", "edge_type", "weight"],
}
#: recall's raw fallback: a passage of a stored source (`read` with `body_offset=offset` opens it there).
_RAW_HIT = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "revision": {"type": "string"},
        "name": {"type": "string"},
        "initiatives": {"type": "array", "items": {"type": "string"}},
        "excerpt": {"type": "string"},
        "offset": {"type": "integer", "minimum": 0},
        "chars": {"type": "integer", "minimum": 0},
        "matched": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["id", "revision", "name", "initiatives", "excerpt", "offset", "chars", "matched"],
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
            "raw_hits": {"type": "array", "items": _RAW_HIT},
            "raw_hits_error": {"type": "string"},
            "overdue": {"type": "array", "items": {"type": "string"}},
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


#: The one definition a lean schema keeps by reference: an issue (code, message, field, retryable) is
#: what a program acts on when a call is refused. Everything else below `data`'s fields is typed only
#: (decision 18.M2).
_KEPT = ("Issue",)


def _type_only(node: Any, defs: dict[str, Any], used: set[str], kept_defs: tuple[str, ...] = _KEPT) -> Any:
    """A schema accepting at least what `node` accepts: its JSON type(s) only (or anything), with
    every path to a definition of `kept_defs` kept."""
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        if name in kept_defs:
            used.add(name)
            return {"$ref": node["$ref"]}
        return _type_only(defs[name], defs, used, kept_defs)
    branches = node.get("anyOf") or node.get("oneOf")
    if branches:
        loose = [_type_only(b, defs, used, kept_defs) for b in branches]
        if all(isinstance(b, dict) and set(b) == {"type"} for b in loose):
            kinds: set[str] = set()
            for b in loose:
                kinds |= {b["type"]} if isinstance(b["type"], str) else set(b["type"])
            return {"type": sorted(kinds) if len(kinds) > 1 else kinds.pop()}
        return {"anyOf": loose}
    if "const" in node:  # the value says its type
        return {"const": node["const"]}
    if "type" in node:
        typed: dict[str, Any] = {"type": node["type"]}
        typed.update({k: node[k] for k in ("enum",) if k in node})
        # Every path to a kept definition stays (context's `sections[].items[]` are NodeData).
        items = _type_only(node["items"], defs, used, kept_defs) if isinstance(node.get("items"), dict) else {}
        if "$ref" in json.dumps(items):
            typed["items"] = items
        kept = {}
        for name, sub in (node.get("properties") or {}).items():
            loose = _type_only(sub, defs, used, kept_defs)
            if "$ref" in json.dumps(loose):
                kept[name] = loose
        if kept:
            typed["properties"] = kept
        return typed
    return {}


def _loosen(node: Any, defs: dict[str, Any], used: set[str], depth: int, kept_defs: tuple[str, ...] = _KEPT) -> Any:
    """`node` spelled out `depth` levels deep and typed only below; never stricter than `node`
    (`oneOf` becomes `anyOf`; every other keyword is kept or dropped, and a dropped one only accepts more)."""
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        if name in kept_defs:
            used.add(name)
            return {"$ref": node["$ref"]}
        return _loosen(defs[name], defs, used, depth, kept_defs)
    if depth <= 0:
        return _type_only(node, defs, used, kept_defs)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("properties", "patternProperties"):
            out[key] = {name: _loosen(sub, defs, used, depth - 1, kept_defs) for name, sub in value.items()}
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            out[key] = _loosen(value, defs, used, depth - 1, kept_defs)
        elif key in ("anyOf", "oneOf"):
            out["anyOf"] = [_loosen(b, defs, used, depth, kept_defs) for b in value]
        elif key in ("type", "const", "enum", "required", "minimum", "maximum", "additionalProperties"):
            out[key] = value
    return out


def lean_output_for(operation: str, kind: str) -> dict[str, Any]:
    """The output schema `tools/list` serves for a tool outside the published contract (decisions
    18.C2, 18.M2): the envelope's fields typed, `data` spelled out to its own fields and each of them
    typed only (a node, an entity or an edge is an `object`, a list of them an `array`), and one
    `Issue` definition. It accepts every envelope the full schema accepts: programs and the tests
    hold answers to the full schema (`output_for`; tests/contract/test_responses.py checks the
    server's answers against both). The published tools serve their contract schemas, only
    written portably (`portable`): the same verdict on every document."""
    if operation in CONTRACT_TOOLS:
        served: dict[str, Any] = portable(output_for(operation, kind))
        return served
    full = output_for(operation, kind)
    defs = full["$defs"]
    used: set[str] = set()
    properties = {key: _loosen(sub, defs, used, 1 if key == "data" else 0) for key, sub in full["properties"].items()}
    lean: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": full["required"],
    }
    done: set[str] = set()
    kept: dict[str, Any] = {}
    while used - done:
        name = sorted(used - done)[0]
        done.add(name)
        kept[name] = _loosen(defs[name], defs, used, 1)
    lean["$defs"] = dict(sorted(kept.items()))
    return lean


#: The dialect MCP assumes for a schema that names none, and the contract's.
_DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
#: Keywords whose value maps names to subschemas (the names are not keywords).
_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "dependentSchemas")
#: Keywords whose value is one subschema, and those whose value is a list of them (Draft 2020-12).
_SUBSCHEMA = (
    "items",
    "additionalProperties",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
)
_SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")


def portable(schema: Any) -> Any:
    """A contract output schema as `tools/list` serves it: without `$schema`, every `true`
    subschema written `{}`; the same verdict on every document (decision 18.L1 for `$schema`).

    MCP takes a schema without `$schema` as Draft 2020-12, the contract's dialect, while a client
    that hands the TypeScript SDK its own `new Ajv()` (as the SDK's documentation shows) cannot
    compile one naming 2020-12 (its `listTools` throws); and `{}` accepts what `true` does
    where portability checkers (the MCP Inspector's `--strict`) want a schema object. Values
    that are not subschemas (`const`, `enum`, `default`, `uniqueItems`, ...) are kept as they are.
    """
    if schema is True:
        return {}
    if not isinstance(schema, dict):
        return copy.deepcopy(schema)
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "$schema" and value == _DRAFT_2020_12:
            continue
        if key in _SUBSCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: portable(sub) for name, sub in value.items()}
        elif key in _SUBSCHEMA:
            out[key] = portable(value)
        elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
            out[key] = [portable(sub) for sub in value]
        else:
            out[key] = copy.deepcopy(value)
    return out
