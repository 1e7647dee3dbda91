"""`lean_input` (decision 18.L1): its rewrites remove repetition and never change a verdict.

The contract's three are proven against the published files by tests/contract/test_schema_equivalence.py;
here each rule is checked where it must apply and where it must not, and every tool's schema of
before issue 14 gets the same verdicts lean as whole, from both validators the server uses.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from jsonschema import Draft7Validator, Draft202012Validator

from kaeru.api.schemas import input_for, lean_input
from tests.jsonschema_memo import install

install()  # each property's strategy built once: the same examples, sooner

CONTRACT = Path(__file__).parents[2] / "contract" / "published"
BEFORE = json.loads((Path(__file__).parents[1] / "contract" / "data" / "input_schemas_before_14.json").read_text())
_TEXT = {"type": "string", "minLength": 1}
_PROPS = {"a": _TEXT, "b": _TEXT, "c": _TEXT}
_OBJECT = {"type": "object", "properties": _PROPS, "additionalProperties": False}


def test_an_empty_required_and_the_dialect_go() -> None:
    lean = lean_input({"$schema": "https://json-schema.org/draft/2020-12/schema", **_OBJECT, "required": []})
    assert lean == _OBJECT


def test_a_property_named_required_stays() -> None:
    schema = {"type": "object", "properties": {"required": {"type": "array"}}, "required": ["required"]}
    assert lean_input(schema) == schema


def test_an_any_of_of_restatements_is_the_required_it_adds() -> None:
    branch = {"allOf": [{**_OBJECT, "required": ["a", "b"]}, {"required": ["b"]}]}
    other = {"allOf": [{**_OBJECT, "required": ["a", "c"]}, {"required": ["c"]}]}
    lean = lean_input({**_OBJECT, "required": ["a"], "anyOf": [branch, other]})
    assert lean == {**_OBJECT, "required": ["a"], "anyOf": [{"required": ["b"]}, {"required": ["c"]}]}


def test_a_restating_all_of_member_becomes_its_parents_if_then() -> None:
    condition = {"if": {"required": ["b"]}, "then": {"required": ["c"]}}
    lean = lean_input({**_OBJECT, "allOf": [dict(_OBJECT), condition]})
    assert lean == {**_OBJECT, **condition}


@pytest.mark.parametrize(
    "member",
    [
        {**_OBJECT, "properties": {"a": _TEXT}},  # fewer properties: its additionalProperties is stricter
        {**_OBJECT, "additionalProperties": True},  # says something else
        {**_OBJECT, "minProperties": 2},  # a keyword the parent does not have
    ],
)
def test_a_member_that_says_more_stays(member: dict[str, Any]) -> None:
    schema = {**_OBJECT, "allOf": [member]}
    assert lean_input(schema) == schema


@pytest.mark.parametrize(
    "extra", [{"patternProperties": {"^x": _TEXT}}, {"unevaluatedProperties": False}, {"unevaluatedItems": False}]
)
def test_a_parent_whose_verdict_depends_on_its_members_keeps_them(extra: dict[str, Any]) -> None:
    condition = {"if": {"required": ["b"]}, "then": {"required": ["c"]}}
    schema = {**_OBJECT, **extra, "allOf": [dict(_OBJECT), condition]}
    assert lean_input(schema) == schema


def test_a_branch_adding_nothing_leaves_the_any_of_whole() -> None:
    """Rewritten, the branch would be `{}` and the anyOf would accept everything it refused."""
    schema = {**_OBJECT, "required": ["a"], "anyOf": [{"allOf": [{**_OBJECT, "required": ["a"]}]}, {"required": ["b"]}]}
    assert lean_input(schema)["anyOf"] == schema["anyOf"]


def test_an_if_then_is_not_merged_over_the_parents_own() -> None:
    schema = {**_OBJECT, "if": {"required": ["a"]}, "then": {"required": ["b"]}}
    schema["allOf"] = [{"if": {"required": ["b"]}, "then": {"required": ["c"]}}]
    assert lean_input(schema) == schema


def test_the_served_schemas_are_lean() -> None:
    for tool in BEFORE:
        text = json.dumps(input_for(tool))
        assert "$schema" not in text and '"required": []' not in text, tool
        assert input_for(tool) == lean_input(input_for(tool)), tool


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4) | st.sampled_from(["", "x", "warm", "handoff"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)


@pytest.mark.parametrize("tool", sorted(BEFORE))
def test_every_tool_of_before_14_gets_the_same_verdicts_lean(tool: str) -> None:
    whole = BEFORE[tool]
    lean = lean_input(whole)
    judge = Draft202012Validator(whole, format_checker=Draft202012Validator.FORMAT_CHECKER)
    served = Draft202012Validator(lean, format_checker=Draft202012Validator.FORMAT_CHECKER)
    fast = jsonschema_rs.validator_for(lean, validate_formats=True)
    names = sorted(whole.get("properties", {})) or ["x"]
    drawn = from_schema(whole) | st.dictionaries(st.sampled_from(names), _JSON, max_size=5)

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(drawn)
    def check(document: Any) -> None:
        verdict = judge.is_valid(document)
        assert served.is_valid(document) == verdict, document
        assert fast.is_valid(document) == verdict, document

    check()


def _refs_with_siblings(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, list):
        return [found for item in node for found in _refs_with_siblings(item)]
    if not isinstance(node, dict):
        return []
    here = [node] if "$ref" in node and set(node) - {"$ref", "description"} else []
    return here + [found for value in node.values() for found in _refs_with_siblings(value)]


@pytest.mark.parametrize("tool", sorted(BEFORE))
def test_a_ref_has_no_sibling_but_its_description(tool: str) -> None:
    """Without `$schema`, a client may judge with an older draft, which ignores a `$ref`'s siblings."""
    assert _refs_with_siblings(input_for(tool)) == []


def test_an_older_draft_judges_the_labelled_examples_alike() -> None:
    """A client validating with draft 7 (the default of several validators) gives the same verdicts."""
    checked = 0
    for path in sorted(CONTRACT.glob("examples/*.input.*.json")):
        tool = path.name.split(".")[0]
        if tool not in BEFORE:
            continue
        document = json.loads(path.read_text())
        schema = input_for(tool)
        assert Draft7Validator(schema).is_valid(document) == Draft202012Validator(schema).is_valid(document), path.name
        assert Draft202012Validator(schema).is_valid(document) == (".valid." in path.name), path.name
        checked += 1
    assert checked >= 30
