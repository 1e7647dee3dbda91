"""The request models (decision 14.T1): what each tool accepts is declared once, in its model.

- The 21 generated input schemas accept and reject exactly what the hand-built ones did before
  issue 14: equal to them once descriptions are set aside (`data/input_schemas_before_14.json`
  is the `tools/list` snapshot of that commit, made lean by `lean_input` as the served ones are:
  decision 18.L1), so every example and fuzz case is judged the same.
- The contract tools' models carry the contract files' fields, requirements and defaults.
- Every parameter of a generated schema is described.
- Arguments the schema accepts build the model as sent; `wire()` gives them back unchanged (replay
  keys and cursors are computed from it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kaeru.api.requests import parse, parser_for
from kaeru.api.schemas import CONTRACT_TOOLS, contract_schema, input_for, lean_input
from kaeru.domain.model import EdgeType, NoteKind
from kaeru.errors import InvalidArgument
from kaeru.service.requests import REQUESTS, LinkRequest, NoteRequest, TaskUpdateRequest

BEFORE = json.loads((Path(__file__).parent / "data" / "input_schemas_before_14.json").read_text())
GENERATED = sorted(set(REQUESTS) - set(CONTRACT_TOOLS))


def _without_descriptions(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_descriptions(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [_without_descriptions(v) for v in node]
    return node


def test_every_tool_has_a_model_and_a_schema() -> None:
    assert sorted(REQUESTS) == sorted(BEFORE)
    assert len(GENERATED) == 21


#: Optional parameters added since that snapshot (a new optional field accepts everything it did).
ADDED = {
    # issue 17: recall's filters, and the branch a memory is written on.
    "recall": {"types", "tags", "layers", "branch", "include_stale", "include_suppressed"},
    "note": {"branch"},
    "task": {"branch"},
    # session 15: a trail is paged (decision 87); session 55: a history's newest page.
    "trail": {"limit", "cursor", "newest"},
    # session 16: initiatives answers in pages (decision 100).
    "initiatives": {"limit", "cursor"},
    "archive": {"request_id"},
    # session 55: the open reviews a page at a time after the last one listed.
    "reflect": {"reviews_after"},
}


#: Requirements relaxed since that snapshot, each by a decision: everything it accepted is still
#: accepted (decision 312: `link add` without `edge_type` makes SPEC 1.2's default `refers_to` edge).
RELAXED = {"link": {"allOf"}}
#: Values an enum accepts since that snapshot, each by a decision (decision 319: `context`'s
#: `decisions` section).
WIDENED = {("context", "sections"): {"decisions"}}


def _conditions_as_before(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with each `if` that names its field as present, where the schema requires that field
    anyway, as it was written before decision 367: the same calls are accepted either way."""
    required = set(schema.get("required", []))
    for part in [schema, *schema.get("allOf", [])]:
        condition = part.get("if", {})
        if condition.get("required") and set(condition["required"]) <= required:
            del condition["required"]
    return schema


def _as_before(tool: str) -> Any:
    schema = _without_descriptions(input_for(tool))
    added = ADDED.get(tool, set())
    assert added <= set(schema["properties"]) and not added & set(schema.get("required", [])), tool
    return {**schema, "properties": {k: v for k, v in schema["properties"].items() if k not in added}}


@pytest.mark.parametrize("tool", GENERATED)
def test_a_generated_schema_validates_like_the_hand_built_one(tool: str) -> None:
    now, before = _conditions_as_before(_as_before(tool)), _without_descriptions(lean_input(BEFORE[tool]))
    for key in RELAXED.get(tool, set()):
        now.pop(key, None)
        before.pop(key, None)
    for (widened_tool, field), values in WIDENED.items():
        if widened_tool == tool:
            items = now["properties"][field]["items"]
            assert values <= set(items["enum"])
            items["enum"] = [v for v in items["enum"] if v not in values]
    assert now == before


@pytest.mark.parametrize("tool", CONTRACT_TOOLS)
def test_the_contract_tools_still_serve_their_contract_file(tool: str) -> None:
    # Descriptions were shortened in issue 18 and the schemas made lean; what validates is unchanged.
    assert input_for(tool) == lean_input(contract_schema(f"{tool}.input"))
    assert _without_descriptions(input_for(tool)) == _without_descriptions(lean_input(BEFORE[tool]))


@pytest.mark.parametrize("tool", CONTRACT_TOOLS)
def test_a_contract_model_has_the_contract_fields(tool: str) -> None:
    schema = contract_schema(f"{tool}.input")
    model = REQUESTS[tool]
    fields = {(f.alias or name): f for name, f in model.model_fields.items()}
    assert set(fields) == set(schema["properties"])
    assert {n for n, f in fields.items() if f.is_required()} == set(schema["required"])
    for name, spec in schema["properties"].items():
        if "default" in spec:
            assert fields[name].default == spec["default"], name


@pytest.mark.parametrize("tool", GENERATED)
def test_every_parameter_is_described(tool: str) -> None:
    for name, spec in input_for(tool)["properties"].items():
        assert spec.get("description", "").strip(), f"{tool}.{name}"


def test_enums_come_from_the_domain() -> None:
    note = input_for("note")["properties"]
    assert note["kind"]["enum"] == [k.value for k in NoteKind]
    assert note["edge_type"]["enum"] == [e.value for e in EdgeType]
    assert input_for("trail")["properties"]["edge_types"]["items"]["enum"] == [e.value for e in EdgeType]


def test_the_budget_bounds_are_declared_once() -> None:
    for tool in ("read", "context", "timeline", "search"):
        budget = input_for(tool)["properties"]["budget_chars"]
        assert (budget["minimum"], budget["maximum"], budget["default"]) == (512, 64000, 8000), tool


def test_accepted_arguments_build_the_model_as_sent() -> None:
    args = {"initiative": "p", "from": "a", "to": {"id": "b"}, "edge_type": "causal", "weight": 1}
    request = parse("link", args)
    assert isinstance(request, LinkRequest)
    assert (request.source, request.to, request.weight, request.action) == ("a", {"id": "b"}, 1, "add")
    assert request.wire() == args  # defaults are not added: replay keys stay those of the wire


def test_defaults_are_the_models() -> None:
    request = parse("note", {"initiative": "p", "text": "t"})
    assert isinstance(request, NoteRequest)
    assert (request.kind, request.edge_type, request.weight, request.tags) == ("observation", "refers_to", 0.5, None)


def test_a_null_that_means_something_is_told_from_absence() -> None:
    cleared = parse("task_update", {"initiative": "p", "task": "t", "due": None})
    moved = parse("task_update", {"initiative": "p", "task": "t", "status": "done"})
    assert isinstance(cleared, TaskUpdateRequest) and isinstance(moved, TaskUpdateRequest)
    assert cleared.given("due") and not moved.given("due")


@pytest.mark.parametrize(
    ("tool", "args", "field"),
    [
        ("read", {"initiative": "p", "node": "n", "budget_chars": 511}, "budget_chars"),
        ("context", {"initiative": "p", "budget_chars": 64001}, "budget_chars"),
        ("note", {"initiative": "p", "text": "t", "kind": "rumour"}, "kind"),
        ("note", {"initiative": "p", "text": "t", "colour": "red"}, "colour"),
        ("link", {"initiative": "p", "action": "reweight", "from": "a", "to": "b", "weight": 0.5}, "edge_type"),
        ("link", {"initiative": "p", "from": "a", "to": "b"}, "weight"),
        ("layer", {"initiative": "p", "nodes": ["a"]}, "layer"),
    ],
)
def test_a_refusal_names_the_field(tool: str, args: dict[str, Any], field: str | None) -> None:
    with pytest.raises(InvalidArgument) as refused:
        parse(tool, args)
    assert refused.value.field == field
    assert parser_for(tool).problem(args) is not None
