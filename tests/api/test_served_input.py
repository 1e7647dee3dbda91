"""The input schemas `tools/list` serves (decision 18.M1): a hint for the model, never the judge.

Outside the published contract a served schema accepts at least what the exact schema accepts
(every document the exact one takes, drawn by hypothesis from it, passes the served one), and the
server still judges every call by the exact schema: arguments the hint lets through and the exact
schema refuses are refused by a real tool call, with the field and reason the exact schema gives.
The contract's three are served exactly as they validate.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis_jsonschema import from_schema
from jsonschema import Draft202012Validator

from kaeru.api.outputs import output_for
from kaeru.api.requests import RequestParser
from kaeru.api.schemas import CONTRACT_TOOLS, NODE_REF_FORMS, hint_input, input_for, served_input
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.service.requests import REQUESTS
from tests.jsonschema_memo import install

install()  # each property's strategy built once: the same examples, sooner

GENERATED = sorted(set(REQUESTS) - set(CONTRACT_TOOLS))
PUBLISHED = Path(__file__).resolve().parents[2] / "contract" / "published"


def _judge(schema: dict[str, Any]) -> Draft202012Validator:
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


@pytest.mark.parametrize("tool", CONTRACT_TOOLS)
def test_the_contract_is_served_exactly(tool: str) -> None:
    assert served_input(tool) == input_for(tool)


@pytest.mark.parametrize("formats", [[], ["--formats"]])
def test_the_contracts_own_checker_passes_on_the_served_schemas(
    service: Service, tmp_path: Path, formats: list[str]
) -> None:
    """`validate.py` over the schemas `tools/list` serves for the three, in place of its files."""
    if service.store.backend != "sqlite":
        pytest.skip("no store involved: once is enough")
    listing = {tool.name: tool for tool in build_server(service).registry.list_tools()}
    shutil.copy(PUBLISHED / "validate.py", tmp_path)
    (tmp_path / "examples").mkdir()
    for tool in CONTRACT_TOOLS:
        served = listing[tool]
        (tmp_path / f"{tool}.input.json").write_text(json.dumps(served.input_schema))
        (tmp_path / f"{tool}.output.json").write_text(json.dumps(served.output_schema))
        for example in PUBLISHED.glob(f"examples/{tool}.*.json"):
            shutil.copy(example, tmp_path / "examples")
    run = subprocess.run([sys.executable, str(tmp_path / "validate.py"), *formats], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout
    assert "6 schemas, 18 valid + 36 invalid examples, 0 failure(s)" in run.stdout, run.stdout


@pytest.mark.parametrize("tool", GENERATED)
def test_a_served_schema_accepts_every_document_the_exact_one_accepts(tool: str) -> None:
    exact = input_for(tool)
    hint = served_input(tool)
    Draft202012Validator.check_schema(hint)
    judge, served, fast = _judge(exact), _judge(hint), jsonschema_rs.validator_for(hint, validate_formats=True)

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(from_schema(exact))
    def check(document: Any) -> None:
        assert judge.is_valid(document)
        assert served.is_valid(document), (document, list(served.iter_errors(document))[:1])
        assert fast.is_valid(document), document

    check()


@pytest.mark.parametrize("tool", GENERATED)
def test_a_served_schema_is_lean(tool: str) -> None:
    """No NodeRef definition, no length or pattern bound, yet every property still described."""
    text = json.dumps(served_input(tool))
    assert "NodeRef" not in text and "2147483647" not in text, tool
    bounds = {"minLength", "maxLength", "pattern", "format", "uniqueItems", "minItems", "maxItems"}
    assert not _keywords(served_input(tool)) & bounds, tool
    exact_names = set(input_for(tool)["properties"])
    assert set(served_input(tool)["properties"]) == exact_names
    assert all(spec.get("description") for spec in served_input(tool)["properties"].values()), tool


def test_the_exact_schemas_have_the_bounds_the_hints_leave_out() -> None:
    """Else the check above would hold for want of anything to leave out."""
    bounded = [tool for tool in GENERATED if _keywords(input_for(tool)) & {"minLength", "pattern", "minItems"}]
    assert len(bounded) >= 18, bounded


def _keywords(node: Any) -> set[str]:
    """The keywords used anywhere in `node` (the names under `properties` and `$defs` are not)."""
    if isinstance(node, list):
        return {word for item in node for word in _keywords(item)}
    if not isinstance(node, dict):
        return set()
    found = set(node)
    for key, value in node.items():
        if key in ("properties", "$defs") and isinstance(value, dict):
            found |= {word for sub in value.values() for word in _keywords(sub)}
        elif key not in ("enum", "const", "default", "required"):
            found |= _keywords(value)
    return found


def test_a_node_ref_names_its_forms_once_per_tool() -> None:
    link = served_input("link")["properties"]
    assert link["from"]["type"] == ["string", "object"] and link["from"]["description"].endswith(NODE_REF_FORMS)
    assert NODE_REF_FORMS not in link["to"]["description"] and link["to"]["description"]
    assert served_input("evolve")["properties"]["sources"]["items"]["description"] == NODE_REF_FORMS


def test_a_one_of_is_loosened_into_an_any_of() -> None:
    """Loosened, both branches take "abc": a `oneOf` would then refuse what the exact schema accepted."""
    schema = {"oneOf": [{"type": "string", "maxLength": 3}, {"type": "string", "minLength": 4}]}
    hint = hint_input(schema)
    assert "oneOf" not in hint and _judge(schema).is_valid("abc") and _judge(hint).is_valid("abc")


def test_an_if_and_a_not_are_kept_verbatim() -> None:
    """Dropping the bound inside `if` would send short `a`s to `then` too and refuse them."""
    schema = {
        "type": "object",
        "if": {"properties": {"a": {"maxLength": 2}}},
        "then": {"required": ["b"]},
        "not": {"properties": {"a": {"const": "zzz", "maxLength": 3}}, "required": ["a"]},
    }
    hint = hint_input(schema)
    assert hint["if"] == schema["if"] and hint["not"] == schema["not"]
    assert _judge(hint).is_valid({"a": "long enough"})


def test_a_definition_used_once_is_written_in_its_place() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/One", "description": "here"}, "b": {"$ref": "#/$defs/Two"}},
        "$defs": {"One": {"type": "string", "description": "there"}, "Two": {"type": "integer"}},
    }
    assert hint_input(schema) == {
        "type": "object",
        "properties": {"a": {"description": "here", "type": "string"}, "b": {"type": "integer"}},
    }
    shared = {**schema, "properties": {"a": {"$ref": "#/$defs/Two"}, "b": {"$ref": "#/$defs/Two"}}}
    assert hint_input(shared)["$defs"] == {"Two": {"type": "integer"}}


#: Arguments the served hint accepts and the exact schema refuses: (tool, arguments, field, reason).
LOOSER = [
    ("note", {"initiative": "p", "text": "t", "name": "n" * 300}, "name", "is too long"),
    ("read", {"initiative": "p", "node": {"id": ""}}, "node.id", "should be non-empty"),
    ("read", {"initiative": "p", "node": {"name": "x"}}, "node", "is not a node reference"),
    ("slot", {"initiative": "p", "slot": "Bad Slot!"}, "slot", "does not match"),
    ("task", {"initiative": "p", "text": "t", "options": {"slot": "Bad!"}}, "options.slot", "does not match"),
    ("layer", {"initiative": "p", "nodes": [], "layer": "hot"}, "nodes", "should be non-empty"),
    ("recall", {"initiatives": ["p"], "query": "q", "tags": ["a", "a"]}, "tags", "has non-unique elements"),
]


@pytest.mark.parametrize(("tool", "arguments", "field", "reason"), LOOSER, ids=[f"{c[0]}-{c[2]}" for c in LOOSER])
def test_the_server_still_refuses_what_only_the_hint_accepts(
    service: Service, tool: str, arguments: dict[str, Any], field: str, reason: str
) -> None:
    assert _judge(served_input(tool)).is_valid(arguments), "the case must pass the hint to prove anything"
    assert not _judge(input_for(tool)).is_valid(arguments)
    registry = build_server(service).registry
    envelope = registry.run(tool, arguments)
    assert envelope["state"] == "rejected"
    [issue] = envelope["issues"]
    assert (issue["code"], issue["field"]) == ("invalid_argument", field)
    assert reason in issue["message"]
    exact = RequestParser(tool, input_for(tool)).problem(arguments)
    assert exact is not None and (issue["field"], issue["message"]) == (exact.field, str(exact))
    spec = registry.specs[tool]
    for schema in (spec.output_schema, output_for(tool, spec.kind)):
        assert _judge(schema).is_valid(envelope)
    assert spec.parser.schema == input_for(tool) != spec.served_input_schema


@pytest.mark.parametrize(
    ("arguments", "field", "said"),
    [
        ({"tags": [f"tag{i:03d}-" + "x" * 40 for i in range(65)]}, "tags", "is too long: at most 64 items (65 given)"),
        ({"name": "n" * 600}, "name", "is too long: at most 200 characters (600 given)"),
        ({"tags": ["t" * 300]}, "tags.0", "is too long: at most 128 characters (300 given)"),
    ],
)
def test_a_value_past_its_bound_is_refused_with_the_bound(
    service: Service, arguments: dict[str, Any], field: str, said: str
) -> None:
    """jsonschema echoes the value first and the reason last, and the message was cut at 500
    characters: 65 long tags were refused with a list cut mid-word, no "too long" and no 64."""
    envelope = build_server(service).registry.run("note", {"initiative": "p", "text": "t", **arguments})
    [issue] = envelope["issues"]
    assert (issue["field"], issue["message"]) == (field, f"{field}: {said}")
