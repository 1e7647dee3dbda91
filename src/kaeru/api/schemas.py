"""Every tool's input and output JSON Schema (Draft 2020-12): the one source of truth for the wire.

`search`, `claim` and `revise` are the published contract (`contract/published/`), shipped in
`schemas/` with a description on every parameter and the non-standard formats `uint`/`uint32`
written as `minimum`/`maximum`; they accept exactly what the contract accepts (decision 13.C1,
tests/contract/test_schema_equivalence.py). The other tools' schemas are built here from the same
`$defs`, so a NodeRef or a Layer means the same everywhere, and their outputs reuse the contract's
envelope with their own `operation`.
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
    """A served contract schema, e.g. `search.input` or `claim.output` (the contract, described)."""
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


def link_input() -> dict[str, Any]:
    return _obj(
        {
            "initiative": _d(INITIATIVE, "The call's initiative: scopes name resolution; a chain is saved here."),
            "action": _d(
                {"type": "string", "enum": ["add", "remove", "reweight", "chain"], "default": "add"},
                "add an edge, remove (retract) it, reweight it, or save the strongest path from→to as a chain node.",
            ),
            "from": _d({"$ref": "#/$defs/NodeRef"}, "Source node of the edge (or start of the chain)."),
            "to": _d({"$ref": "#/$defs/NodeRef"}, "Target node of the edge (or end of the chain)."),
            "edge_type": _d(
                {"type": "string", "enum": EDGE_TYPES},
                "Edge type (add/remove/reweight). supersedes and falsifies are verdicts: the target stops being current.",
            ),
            "weight": _d(
                {"type": "number", "minimum": 0, "maximum": 1},
                "Required for add/reweight: 0.9–1 load-bearing (cause, source, supersession), 0.6–0.8 supporting, "
                "0.3–0.5 associative. Chains prefer strong edges.",
            ),
            "name": _d({"type": "string", "minLength": 1, "maxLength": 200}, "chain only: a name for the saved chain."),
            "summary": _d({"type": "string", "minLength": 1}, "chain only: what the path explains (the chain's body)."),
            "request_id": REQUEST_ID,
        },
        ["initiative", "from", "to"],
        _defs("NodeRef"),
    ) | {
        "allOf": [
            {
                "if": {"properties": {"action": {"enum": ["add", "reweight"]}}},
                "then": {"required": ["edge_type", "weight"]},
            },
            {
                "if": {"properties": {"action": {"const": "remove"}}, "required": ["action"]},
                "then": {"required": ["edge_type"]},
            },
        ]
    }


def verdict_input() -> dict[str, Any]:
    return _obj(
        {
            "initiative": _d(INITIATIVE, "The call's initiative: scopes name resolution of `hypothesis`."),
            "hypothesis": _d({"$ref": "#/$defs/NodeRef"}, "The hypothesis to close (made by `claim`)."),
            "status": _d(
                {"type": "string", "enum": ["supported", "refuted", "inconclusive"]},
                "The verdict. refuted makes the hypothesis read as refuted everywhere.",
            ),
            "evidence": _d(
                {"$ref": "#/$defs/Evidence"},
                "{node}: an existing node that decides it, or {method}: how it was tested (creates an experiment).",
            ),
            "expected_revision": EXPECTED_REVISION,
            "request_id": REQUEST_ID,
        },
        ["initiative", "hypothesis", "status"],
        _defs("NodeRef", "Evidence"),
    )


def evolve_input() -> dict[str, Any]:
    # The audit log and an initiative's board are written by the server only (service/evolve.py).
    types = [
        t for t in contract_schema("search.input")["$defs"]["NodeType"]["enum"] if t not in ("audit_event", "board")
    ]
    return _obj(
        {
            "initiative": _d(INITIATIVE, "The call's initiative: scopes name resolution; new nodes join it."),
            "mode": _d(
                {"type": "string", "enum": ["settle", "unsettle", "supersede", "synthesise"]},
                "settle: archival successor (source retracted, provenance kept); unsettle: reopen as operational; "
                "supersede: a new node replaces the old (old stays, flagged superseded); synthesise: a new node "
                "derived from several sources.",
            ),
            "source": _d({"$ref": "#/$defs/NodeRef"}, "The node to settle, unsettle or supersede."),
            "sources": _d(
                {"type": "array", "items": {"$ref": "#/$defs/NodeRef"}, "minItems": 1, "maxItems": 100},
                "synthesise only: the nodes the synthesis is derived from.",
            ),
            "new_name": _d(
                {"type": "string", "minLength": 1, "maxLength": 200}, "Name of the new node (default: the source's)."
            ),
            "new_body": _d(
                {"type": "string", "minLength": 1},
                "Body of the new node (required for synthesise; supersede's corrected fact).",
            ),
            "new_type": _d(
                {"type": "string", "enum": types},
                "Type of the new node (default: derived from the source; not audit_event or board, which only the "
                "server writes).",
            ),
            "expected_revision": EXPECTED_REVISION,
            "request_id": REQUEST_ID,
        },
        ["initiative", "mode"],
        _defs("NodeRef"),
    ) | {
        "allOf": [
            {"if": {"properties": {"mode": {"const": "synthesise"}}}, "then": {"required": ["sources", "new_body"]}},
            {
                "if": {"properties": {"mode": {"enum": ["settle", "unsettle", "supersede"]}}},
                "then": {"required": ["source"]},
            },
        ]
    }


def review_input() -> dict[str, Any]:
    return _obj(
        {
            "initiative": _d(INITIATIVE, "The call's initiative: scopes name resolution of `target`."),
            "action": _d(
                {"type": "string", "enum": ["flag", "close"]}, "flag a doubt about `target`, or close its open reviews."
            ),
            "target": _d({"$ref": "#/$defs/NodeRef"}, "The node under doubt."),
            "reason": _d(
                {"type": "string", "minLength": 1}, "flag: what is doubtful and why (becomes the review note)."
            ),
            "resolution": _d(
                {"type": "string", "minLength": 1}, "close: how it was resolved (a note that supersedes the reviews)."
            ),
            "request_id": REQUEST_ID,
        },
        ["initiative", "action", "target"],
        _defs("NodeRef"),
    ) | {"allOf": [{"if": {"properties": {"action": {"const": "flag"}}}, "then": {"required": ["reason"]}}]}


def slot_input() -> dict[str, Any]:
    return _obj(
        {
            "initiative": _d(INITIATIVE, "The initiative whose role this is."),
            "slot": _d({"$ref": "#/$defs/Slot"}, "The role, e.g. handoff, entrypoint, prod-state."),
            "node": _d({"$ref": "#/$defs/NodeRef"}, "The new holder; omit to release the slot."),
            "expected_slot_revision": _d(
                {"type": "string", "minLength": 1},
                'Compare-and-set: the slot revision you last saw ("0" for a never-taken slot).',
            ),
            "request_id": REQUEST_ID,
        },
        ["initiative", "slot"],
        _defs("NodeRef", "Slot"),
    )


def layer_input() -> dict[str, Any]:
    return _obj(
        {
            "initiative": _d(INITIATIVE, "The call's initiative: scopes name resolution of `nodes`."),
            "nodes": _d(
                {"type": "array", "items": {"$ref": "#/$defs/NodeRef"}, "minItems": 1, "maxItems": 200},
                "The nodes to move.",
            ),
            "layer": _d(
                {"$ref": "#/$defs/Layer"},
                "core (always in context), hot, warm (default), cold, frozen (only on request).",
            ),
            "pin": _d({"type": "boolean"}, "true: automatic hygiene never moves these nodes; false: unpin."),
            "request_id": REQUEST_ID,
        },
        ["initiative", "nodes"],
        _defs("NodeRef", "Layer"),
    ) | {"anyOf": [{"required": ["layer"]}, {"required": ["pin"]}]}


def forget_input() -> dict[str, Any]:
    return _obj(
        {
            "initiative": _d(INITIATIVE, "The call's initiative: scopes name resolution of `node`."),
            "node": _d({"$ref": "#/$defs/NodeRef"}, "The node to retract."),
            "reason": _d({"type": "string", "minLength": 1}, "Why (kept in the audit record)."),
            "expected_revision": EXPECTED_REVISION,
            "request_id": REQUEST_ID,
        },
        ["initiative", "node", "reason"],
        _defs("NodeRef"),
    )


def trail_input() -> dict[str, Any]:
    return _obj(
        {
            "initiative": _d(
                INITIATIVE, "The call's initiative: scopes name resolution (an id reaches forgotten nodes)."
            ),
            "node": _d({"$ref": "#/$defs/NodeRef"}, "The node whose trail to follow."),
            "kind": _d(
                {
                    "type": "string",
                    "enum": ["history", "provenance", "path", "neighbours", "chain"],
                    "default": "history",
                },
                "history: every revision and edge event; provenance: derived_from ancestors; path: strongest "
                "weighted path to `to`; neighbours: one hop both ways; chain: a saved chain's steps.",
            ),
            "to": _d({"$ref": "#/$defs/NodeRef"}, "kind=path: the end node."),
            "edge_types": _d(
                {"type": "array", "items": {"type": "string", "enum": EDGE_TYPES}, "minItems": 1, "uniqueItems": True},
                "kind=neighbours: only these edge types.",
            ),
        },
        ["initiative", "node"],
        _defs("NodeRef"),
    )


def current_state_input() -> dict[str, Any]:
    return _obj(
        {
            "initiative": _d(INITIATIVE, "The initiative to look in."),
            "slot": _d({"$ref": "#/$defs/Slot"}, "Ask who holds this role…"),
            "node": _d({"$ref": "#/$defs/NodeRef"}, "…or what currently replaces this node."),
            "as_of": _d(
                {"type": "string", "minLength": 1}, "Answer as of this moment (RFC 3339, a date, or 5m/2h/3d)."
            ),
        },
        ["initiative"],
        _defs("NodeRef", "Slot"),
    ) | {"oneOf": [{"required": ["slot"]}, {"required": ["node"]}]}


def task_input() -> dict[str, Any]:
    return _obj(
        {
            "initiative": _d(INITIATIVE, "The initiative whose board gets the task; created if new (with a warning)."),
            "text": _d({"type": "string", "minLength": 1}, "What to do."),
            "name": _d(
                {"type": "string", "minLength": 1, "maxLength": 200}, "Optional name (auto-generated otherwise)."
            ),
            "due": _d(
                {"type": "string", "minLength": 1}, "Due date: YYYY-MM-DD, RFC 3339, or a future offset like 3d / 2w."
            ),
            "status": _d({"type": "string", "minLength": 1}, "Board column key (default: the first column, `open`)."),
            "tags": _d(
                {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 128}, "maxItems": 64},
                "Free tags.",
            ),
            "link_to": _d({"$ref": "#/$defs/NodeRef"}, "Optional node the task is about (edge task → node)."),
            "edge_type": _d(
                {"type": "string", "enum": EDGE_TYPES, "default": "refers_to"}, "Type of the link_to edge."
            ),
            "weight": _d({"type": "number", "minimum": 0, "maximum": 1, "default": 0.5}, "Weight of the link_to edge."),
            "reminder": _d({"$ref": "#/$defs/Reminder"}, "Resurface the task from `after` for `window_days` days."),
            "options": _d(
                {"$ref": "#/$defs/CaptureOptions"}, "Slot to take with the task, its layer, slot compare-and-set."
            ),
            "request_id": REQUEST_ID,
        },
        ["initiative", "text"],
        _defs("NodeRef", "Reminder", "CaptureOptions", "Slot", "Layer"),
    )


def task_update_input() -> dict[str, Any]:
    return _obj(
        {
            "initiative": _d(INITIATIVE, "The task's initiative (its board decides the valid statuses)."),
            "task": _d({"$ref": "#/$defs/NodeRef"}, "The task."),
            "status": _d(
                {"type": "string", "minLength": 1},
                "New board column key; unknown keys are rejected with the valid list.",
            ),
            "due": _d(
                {"type": ["string", "null"], "minLength": 1}, "New due date (date, RFC 3339, 3d/2w); null clears it."
            ),
            "expected_revision": EXPECTED_REVISION,
            "request_id": REQUEST_ID,
        },
        ["initiative", "task"],
        _defs("NodeRef"),
    ) | {"anyOf": [{"required": ["status"]}, {"required": ["due"]}]}


def initiative_input() -> dict[str, Any]:
    return _obj(
        {
            "initiative": _d(INITIATIVE, "The initiative to act on."),
            "action": _d(
                {"type": "string", "enum": ["rename", "merge", "delete", "attach", "detach", "set_board"]},
                "rename it to `to`; merge it into `to` (every node and edge stays reachable); delete it (nodes left "
                "in no initiative are forgotten, recoverable through history); attach/detach `node`; set_board "
                "replaces the task board's `columns`.",
            ),
            "to": _d(INITIATIVE, "rename: the new name; merge: the initiative to merge into (must exist)."),
            "node": _d(
                {"$ref": "#/$defs/NodeRef"}, "attach/detach: the node (by id or {initiative, name} to reach across)."
            ),
            "columns": _d(
                {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 20,
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            "key": _d(
                                {"type": "string", "pattern": "^[a-z][a-z0-9_-]{0,31}$"},
                                "Column key, the status of its tasks (e.g. open, done).",
                            ),
                            "label": _d({"type": "string", "minLength": 1}, "Display name (default: the key)."),
                        },
                        "required": ["key"],
                    },
                },
                "set_board: the ordered columns [{key, label}] (add, remove, relabel and reorder in one edit).",
            ),
            "request_id": REQUEST_ID,
        },
        ["initiative", "action"],
        _defs("NodeRef"),
    ) | {
        "allOf": [
            {"if": {"properties": {"action": {"enum": ["rename", "merge"]}}}, "then": {"required": ["to"]}},
            {"if": {"properties": {"action": {"enum": ["attach", "detach"]}}}, "then": {"required": ["node"]}},
            {"if": {"properties": {"action": {"const": "set_board"}}}, "then": {"required": ["columns"]}},
        ]
    }


def initiatives_input() -> dict[str, Any]:
    return _obj(
        {"prefix": _d({"type": "string"}, "Only initiatives whose name starts with this (case-insensitive).")},
        [],
        {},
    )


SECTION_NAMES = [
    "rules",
    "slots",
    "core",
    "hot",
    "warm",
    "cortex",
    "tasks",
    "claims",
    "reviews",
    "reminders",
    "recent",
    "cold",
    "frozen",
]


def context_input() -> dict[str, Any]:
    return _obj(
        {
            "initiative": _d(INITIATIVE, "The initiative to re-enter."),
            "task": _d({"$ref": "#/$defs/NodeRef"}, "The task you are working on: adds the rules scoped to it."),
            "sections": _d(
                {
                    "type": "array",
                    "items": {"type": "string", "enum": SECTION_NAMES},
                    "minItems": 1,
                    "uniqueItems": True,
                },
                "Only these sections (rules always come first); cold and frozen only when asked for.",
            ),
            "budget_chars": _d(BUDGET, "Most body characters in the answer; rules are served first."),
        },
        ["initiative"],
        _defs("NodeRef"),
    )


def timeline_input() -> dict[str, Any]:
    return _obj(
        {
            "initiatives": _d(
                {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1, "uniqueItems": True},
                "The initiatives to walk.",
            ),
            "anchor": _d({"$ref": "#/$defs/NodeRef"}, "Show what happened around this node…"),
            "query": _d({"type": "string", "minLength": 1}, "…or around the best literal match of this text."),
            "since": _d({"type": "string", "minLength": 1}, "Window start (RFC 3339, a date, or 5m/2h/3d ago)."),
            "until": _d({"type": "string", "minLength": 1}, "Window end."),
            "before": _d({"type": "integer", "minimum": 0, "maximum": 50, "default": 5}, "Items before the anchor."),
            "after": _d({"type": "integer", "minimum": 0, "maximum": 50, "default": 5}, "Items after the anchor."),
            "limit": _d(
                {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
                "Items in a window (no anchor), and on every later page.",
            ),
            "budget_chars": _d(BUDGET, "Most body characters in the answer."),
            "cursor": _d(
                {"type": "string", "minLength": 1},
                "From continuation: the next `limit` items after the last one shown (repeat `next_arguments`).",
            ),
        },
        ["initiatives"],
        _defs("NodeRef"),
    )


def reflect_input() -> dict[str, Any]:
    return _obj({"initiative": _d(INITIATIVE, "The initiative to review.")}, ["initiative"], {})


INTENTS = [
    "resume_work",
    "resume-work",
    "explain_decision",
    "explain-decision",
    "debug_failure",
    "debug-failure",
    "apply_preference",
    "apply-preference",
    "review_change",
    "review-change",
    "explore_history",
    "explore-history",
]


def recall_input() -> dict[str, Any]:
    non_blank = {"required": ["query"], "properties": {"query": {"pattern": "\\S"}}}
    return _obj(
        {
            "initiatives": _d(
                {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1, "uniqueItems": True},
                "The initiatives to recall from (no cross-initiative leak: nothing else is searched).",
            ),
            "query": _d(
                {"type": "string"},
                "What you need, in your own words (stemmed, stop words ignored). Optional for resume_work: "
                "without a query you get slots, open tasks, hot and recent memory.",
            ),
            "task_intent": _d(
                {"type": "string", "enum": INTENTS},
                "What you are doing, to plan retrieval: resume_work (in-flight work, slots, tasks), explain_decision "
                "(decisions, verdicts, provenance), debug_failure (outcomes, refuted claims, errors), apply_preference "
                "(rules and preferences), review_change (decisions and rules a change must respect), explore_history "
                "(every revision of the matches and of their supersession chains, oldest first, one hit per "
                "revision). Dash or underscore.",
            ),
            "role": _d(
                {"type": "string", "enum": ["coder", "reviewer", "planner", "researcher"], "default": "coder"},
                "Who is asking; nudges type priors (planner: tasks and roadmaps; researcher: references…).",
            ),
            "risk": _d(
                {"type": "string", "enum": ["low", "medium", "high"], "default": "medium"},
                "high: only current, non-refuted memory from the direct channels (no neighbour or graph expansion).",
            ),
            "token_budget": _d(
                {"type": "integer", "exclusiveMinimum": 0, "maximum": 100000, "default": 4000},
                "Hard cap on the answer's text (≈4 characters a token); what is dropped is counted.",
            ),
            "include_superseded": _d(
                {"type": "boolean", "default": False},
                "Keep superseded and refuted memory level instead of demoting it.",
            ),
            "multi_hop": _d(
                {"type": "boolean", "default": False},
                "Expand the words that characterise the first hits into a second pass (needs a query).",
            ),
            "explain": _d(
                {"type": "boolean", "default": False}, "Return each hit's per-channel scores (needs a query)."
            ),
            "limit": _d({"type": "integer", "minimum": 1, "maximum": 50, "default": 10}, "Hits per page."),
            "cursor": _d({"type": "string", "minLength": 1}, "From continuation: the next page of the same recall."),
        },
        ["initiatives"],
        {},
    ) | {
        "allOf": [
            {"if": {"properties": {"explain": {"const": True}}, "required": ["explain"]}, "then": non_blank},
            {"if": {"properties": {"multi_hop": {"const": True}}, "required": ["multi_hop"]}, "then": non_blank},
        ]
    }


def archive_input() -> dict[str, Any]:
    return _obj(
        {
            "action": _d(
                {"type": "string", "enum": ["export", "import"]},
                "export the vault (or some initiatives) to files, or import an amg archive.",
            ),
            "format": _d(
                {"type": "string", "enum": ["markdown", "amg"], "default": "amg"},
                "amg: the lossless JSON Lines archive (a `.gz` path compresses it); markdown: an Obsidian-friendly "
                "folder, one page per node (export only).",
            ),
            "path": _d(
                {"type": "string", "minLength": 1},
                "File (amg) or folder (markdown), relative to the server's export root; paths outside it are refused.",
            ),
            "initiatives": _d(
                {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1, "uniqueItems": True},
                "export: only these initiatives (default: the whole vault).",
            ),
        },
        ["action", "path"],
        {},
    )


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


def input_for(operation: str) -> dict[str, Any]:
    if operation in CONTRACT_TOOLS:
        return contract_schema(f"{operation}.input")
    builders = {
        "note": note_input,
        "read": read_input,
        "replace": replace_input,
        "link": link_input,
        "verdict": verdict_input,
        "evolve": evolve_input,
        "review": review_input,
        "slot": slot_input,
        "layer": layer_input,
        "forget": forget_input,
        "trail": trail_input,
        "current_state": current_state_input,
        "task": task_input,
        "task_update": task_update_input,
        "initiative": initiative_input,
        "initiatives": initiatives_input,
        "context": context_input,
        "timeline": timeline_input,
        "reflect": reflect_input,
        "recall": recall_input,
        "archive": archive_input,
    }
    return builders[operation]()
