"""Every tool's input and output JSON Schema (Draft 2020-12): the one source of truth for the wire.

`search`, `claim` and `revise` are the published contract, shipped verbatim in `schemas/`. The other
tools' schemas are built here from the same `$defs`, so a NodeRef or a Layer means the same
everywhere, and their outputs reuse the contract's envelope with their own `operation`.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from importlib import resources
from typing import Any

CONTRACT_TOOLS = ("search", "claim", "revise")
_SCHEMA = "https://json-schema.org/draft/2020-12/schema"


@cache
def contract_schema(name: str) -> dict[str, Any]:
    """A shipped schema file, e.g. `search.input` or `claim.output`."""
    text = resources.files("kaeru.api").joinpath("schemas", f"{name}.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def _defs(*names: str) -> dict[str, Any]:
    claim = contract_schema("claim.input")["$defs"]
    revise = contract_schema("revise.input")["$defs"]
    search = contract_schema("search.input")["$defs"]
    pool = {**search, **revise, **claim}
    return {n: copy.deepcopy(pool[n]) for n in names}


def _obj(properties: dict[str, Any], required: list[str], defs: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "$schema": _SCHEMA,
        "type": "object",
        "additionalProperties": False,
        "properties": properties,
        "required": required,
    }
    if defs:
        schema["$defs"] = defs
    return schema


def _d(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {**schema, "description": description}


INITIATIVE = {"type": "string", "minLength": 1, "maxLength": 128}
REQUEST_ID = contract_schema("claim.input")["properties"]["request_id"]
EXPECTED_REVISION = contract_schema("revise.input")["properties"]["expected_revision"]
BUDGET = {"type": "integer", "minimum": 512, "maximum": 64000, "default": 8000}
EDGE_TYPES = [
    "refers_to",
    "derived_from",
    "supersedes",
    "contradicts",
    "verifies",
    "falsifies",
    "targets",
    "consolidated_to",
    "part_of",
    "causal",
    "temporal",
    "blocks",
]
NOTE_KINDS = [
    "observation",
    "decision",
    "jot",
    "reference",
    "rule",
    "idea",
    "draft",
    "scratch",
    "entity",
    "concept",
    "checklist",
    "roadmap",
]


def note_input() -> dict[str, Any]:
    return _obj(
        {
            "initiative": _d(
                INITIATIVE, "The initiative (project scope) to write into; created if new (with a warning)."
            ),
            "text": _d(
                {"type": "string", "minLength": 1},
                "What to remember, in the user's language. Becomes the body.",
            ),
            "kind": _d(
                {"type": "string", "enum": NOTE_KINDS, "default": "observation"},
                "Epistemic status: observation (seen), decision (chosen, with why), jot (quick aside), reference "
                "(external source), rule (a standing constraint that `context` always delivers), idea, draft, "
                "scratch, entity, concept, checklist, roadmap.",
            ),
            "name": _d(
                {"type": "string", "minLength": 1, "maxLength": 200},
                "Optional name; auto-generated from the first words plus a unique suffix when omitted. Names are not unique.",
            ),
            "source": _d(
                {"type": "string", "minLength": 1},
                "kind=reference only: the verbatim document text. Immutable afterwards (change it with `replace`); `text` becomes the description.",
            ),
            "url": _d({"type": "string", "minLength": 1}, "Where the material came from (stored in properties.url)."),
            "tags": _d(
                {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1, "maxLength": 128},
                    "maxItems": 64,
                    "uniqueItems": True,
                },
                "Free tags; `kind:`, `topic:` and `lang:` tags are derived automatically.",
            ),
            "occurred_at": _d(
                {"type": "string", "minLength": 1},
                "When it happened, if not now (RFC 3339, a date, or a past offset like 2d); becomes created_at.",
            ),
            "link_to": _d(
                {"$ref": "#/$defs/NodeRef"}, "Optional node to link the new node to, in the same transaction."
            ),
            "edge_type": _d(
                {"type": "string", "enum": EDGE_TYPES, "default": "refers_to"},
                "Type of the link_to edge (new node → link_to).",
            ),
            "weight": _d(
                {"type": "number", "minimum": 0, "maximum": 1, "default": 0.5},
                "How load-bearing the link is: 0.9–1 cause/source, 0.6–0.8 supporting, 0.3–0.5 associative.",
            ),
            "reminder": _d(
                {"$ref": "#/$defs/Reminder"},
                "Resurface this note from `after` for `window_days` days after it is first shown.",
            ),
            "applicability": _d(
                {"$ref": "#/$defs/Applicability"},
                "kind=rule only: applies while working on `task` and/or until `through`.",
            ),
            "options": _d(
                {"$ref": "#/$defs/CaptureOptions"},
                "Slot to take with the new node, its layer, and a slot compare-and-set token.",
            ),
            "request_id": REQUEST_ID,
        },
        ["initiative", "text"],
        _defs("NodeRef", "Reminder", "Applicability", "CaptureOptions", "Slot", "Layer"),
    )


def read_input() -> dict[str, Any]:
    return _obj(
        {
            "initiative": _d(INITIATIVE, "The call's initiative: scopes name resolution of `node`."),
            "node": _d(
                {"$ref": "#/$defs/NodeRef"},
                "The node: its id, an exact name in `initiative`, or {initiative, name}.",
            ),
            "at": _d(
                {"type": "string", "minLength": 1},
                "Read the node as it was at this moment: RFC 3339, a date (its end, UTC), or a past offset like 5m, 2h, 3d.",
            ),
            "body_offset": _d(
                {"type": "integer", "minimum": 0, "default": 0},
                "Start the body at this character (for paging long bodies; see continuation).",
            ),
            "neighbours": _d(
                {"type": "boolean", "default": False},
                "Also return the node's edges, both directions (as of `at` when given).",
            ),
            "budget_chars": _d(BUDGET, "Most body characters to return (512..64000); the rest pages via continuation."),
        },
        ["initiative", "node"],
        _defs("NodeRef"),
    )


def replace_input() -> dict[str, Any]:
    return _obj(
        {
            "initiative": _d(INITIATIVE, "The call's initiative: scopes name resolution of `node`."),
            "node": _d({"$ref": "#/$defs/NodeRef"}, "The reference note whose source to replace."),
            "source": _d(
                {"type": "string", "minLength": 1},
                "The new verbatim source text; old bytes stay in history with their sha256.",
            ),
            "expected_revision": EXPECTED_REVISION,
            "request_id": REQUEST_ID,
        },
        ["initiative", "node", "source"],
        _defs("NodeRef"),
    )


def output_for(operation: str, kind: str) -> dict[str, Any]:
    """The envelope schema of `operation`: the contract's own for the three published tools."""
    if operation in CONTRACT_TOOLS:
        return contract_schema(f"{operation}.output")
    base = copy.deepcopy(contract_schema("search.output" if kind == "read" else "claim.output"))
    base["properties"]["operation"] = {"const": operation, "type": "string"}
    if kind == "read":
        base["$defs"]["SearchData"]["properties"]["edges"] = {
            "type": "array",
            "items": {"$ref": "#/$defs/EdgeData"},
        }
        base["$defs"]["EdgeData"] = {
            "type": "object",
            "properties": {
                "from": {"type": "string"},
                "to": {"type": "string"},
                "edge_type": {"type": "string"},
                "weight": {"type": "number"},
                "created_at": {"type": "string"},
                "recorded_at": {"type": "string"},
            },
            "required": ["from", "to", "edge_type", "weight"],
        }
    return base


def input_for(operation: str) -> dict[str, Any]:
    if operation in CONTRACT_TOOLS:
        return contract_schema(f"{operation}.input")
    return {"note": note_input, "read": read_input, "replace": replace_input}[operation]()
