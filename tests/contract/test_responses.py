"""Every tool's responses — successes and rejections — validate against the schema it declares."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from kaeru.api.outputs import output_for
from kaeru.mcp.server import KaeruServer

#: Subschemas that only restate a parameter as a condition (`if action is add then ...`).
CONDITIONS = ("if", "then", "else", "not")

# `context` records first sight of reminders, so it is not read-only (but idempotent).
READ_TOOLS = {"search", "read", "trail", "current_state", "recall", "initiatives", "timeline", "reflect"}


async def _checked(client: Client, kaeru: KaeruServer, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    envelope = result.structured_content
    assert isinstance(envelope, dict)
    spec = kaeru.registry.specs[tool]
    # The declared (lean) schema, and the full one it loosens (decision 18.C2).
    for schema in (spec.output_schema, output_for(tool, spec.kind)):
        problems = list(Draft202012Validator(schema).iter_errors(envelope))
        assert not problems, problems[0].message
    return envelope


@pytest.mark.anyio
async def test_every_tool_answers_within_its_declared_schema(client: Client, kaeru: KaeruServer) -> None:
    note = await _checked(
        client, kaeru, "note", {"initiative": "c", "text": "ref text", "kind": "reference", "source": "v1"}
    )
    node_id = note["data"]["primary"]["id"]
    await _checked(client, kaeru, "claim", {"initiative": "c", "text": "it holds", "about": node_id})
    await _checked(client, kaeru, "revise", {"initiative": "c", "node": node_id, "patch": {"description": "d"}})
    await _checked(client, kaeru, "replace", {"initiative": "c", "node": node_id, "source": "v2"})
    read = await _checked(client, kaeru, "read", {"initiative": "c", "node": node_id, "neighbours": True})
    assert read["data"]["edges"], "read with neighbours lists the claim's refers_to edge"
    await _checked(client, kaeru, "search", {"initiatives": ["c"], "text": "ref"})
    # Rejections, one per family, still validate.
    for tool, args in [
        ("note", {"initiative": "c"}),
        ("read", {"initiative": "c", "node": "missing"}),
        ("replace", {"initiative": "c", "node": "missing", "source": "x"}),
        ("search", {"initiatives": ["c"], "text": "x", "cursor": "forged.cursor"}),
    ]:
        envelope = await _checked(client, kaeru, tool, args)
        assert envelope["state"] == "rejected"


@pytest.mark.anyio
async def test_tools_list_is_complete_and_annotated(client: Client) -> None:
    listing = await client.list_tools()
    by_name = {tool.name: tool for tool in listing.tools}
    assert {"search", "read", "note", "claim", "revise", "replace"} <= set(by_name)
    for tool in listing.tools:
        assert tool.annotations is not None and tool.output_schema is not None
        Draft202012Validator.check_schema(tool.input_schema)
        Draft202012Validator.check_schema(tool.output_schema)
        assert tool.annotations.read_only_hint == (tool.name in READ_TOOLS)
        for needle in ("Changes", "Use ", "Returns"):
            assert needle in (tool.description or ""), f"{tool.name} description lacks '{needle}'"
    assert client.instructions is not None and len(client.instructions) <= 2048


def undescribed(schema: Any, where: str = "") -> list[str]:
    """Every property, at any depth (`$defs`, `anyOf` branches, array items), that has no description."""
    missing: list[str] = []
    if isinstance(schema, list):
        for index, item in enumerate(schema):
            missing += undescribed(item, f"{where}/{index}")
    elif isinstance(schema, dict):
        for key, value in schema.items():
            if key in CONDITIONS:
                continue
            if key in ("properties", "patternProperties") and isinstance(value, dict):
                for name, sub in value.items():
                    if not (isinstance(sub, dict) and str(sub.get("description", "")).strip()):
                        missing.append(f"{where}/{key}/{name}")
                    missing += undescribed(sub, f"{where}/{key}/{name}")
            elif key in ("$defs", "dependentSchemas") and isinstance(value, dict):
                for name, sub in value.items():
                    missing += undescribed(sub, f"{where}/{key}/{name}")
            else:
                missing += undescribed(value, f"{where}/{key}")
    return missing


@pytest.mark.anyio
async def test_every_parameter_of_every_tool_is_described(client: Client) -> None:
    """SPEC §3: every parameter has a description — the published three, their `$defs` and nested objects too."""
    listing = await client.list_tools()
    missing = [f"{tool.name}{path}" for tool in listing.tools for path in undescribed(tool.input_schema)]
    assert not missing, missing


def test_the_description_check_finds_a_nested_gap() -> None:
    schema = {
        "properties": {"a": {"description": "x", "items": {"properties": {"b": {"type": "string"}}}}},
        "$defs": {"D": {"properties": {"c": {"description": " "}}}},
        "anyOf": [{"properties": {"d": {}}}],
        "allOf": [{"if": {"properties": {"a": {"const": 1}}}, "then": {"required": ["a"]}}],
    }
    assert undescribed(schema) == ["/properties/a/items/properties/b", "/$defs/D/properties/c", "/anyOf/0/properties/d"]
