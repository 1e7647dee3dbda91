"""Every schema `tools/list` serves names no dialect and writes no subschema as a bare `true`.

A client that hands the TypeScript SDK its own `new Ajv()`, as the SDK's documentation shows,
checks each output schema against the meta-schema its `$schema` names and knows draft-07's only:
one naming 2020-12 made its `listTools` throw, so it could call no tool. MCP takes a schema without
`$schema` as 2020-12, the dialect of them all. A bare `true` accepts what `{}` does, and portability
checkers (the MCP Inspector's `--strict`) refuse it where they expect a schema object. The contract's
own spelling, and the same verdicts, are tests/contract/test_schema_equivalence.py's; the real
client's run is tests/wire/test_ts_client.py's `stdio_strict_ajv`.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client

from kaeru.mcp.pinned import LISTING

#: Keywords whose value maps names to subschemas, whose value is one subschema, or a list of them.
_MAPS = ("properties", "patternProperties", "$defs", "dependentSchemas")
_ONE = ("items", "additionalProperties", "contains", "propertyNames", "not", "if", "then", "else")
_ONE += ("unevaluatedItems", "unevaluatedProperties")
_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")


def unportable(schema: Any, where: str = "") -> list[str]:
    """Every `$schema`, and every subschema written as a bare `true`, in `schema`."""
    if schema is True:
        return [where or "/"]
    if not isinstance(schema, dict):
        return []
    found = [f"{where}/$schema"] if "$schema" in schema else []
    for key, value in schema.items():
        if key in _MAPS and isinstance(value, dict):
            for name, sub in value.items():
                found += unportable(sub, f"{where}/{key}/{name}")
        elif key in _ONE:
            found += unportable(value, f"{where}/{key}")
        elif key in _LISTS and isinstance(value, list):
            for index, sub in enumerate(value):
                found += unportable(sub, f"{where}/{key}/{index}")
    return found


def test_the_check_finds_both() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "properties": {"a": True, "b": {"const": True, "default": True, "items": True}, "c": {"uniqueItems": True}},
        "additionalProperties": False,
        "anyOf": [True, {}],
    }
    assert unportable(schema) == ["/$schema", "/properties/a", "/properties/b/items", "/anyOf/0"]


@pytest.mark.anyio
async def test_every_listed_schema_is_portable(client: Client) -> None:
    listing = await client.list_tools()
    assert len(listing.tools) == len(json.loads(LISTING.read_text()))
    found = {
        f"{tool.name}.{direction}": unportable(schema)
        for tool in listing.tools
        for direction, schema in (("input", tool.input_schema), ("output", tool.output_schema))
    }
    assert {name: where for name, where in found.items() if where} == {}


def test_the_pinned_listing_is_portable() -> None:
    """What `kaeru serve` answers its first `tools/list` with, and what `kaeru tools` prints."""
    found = {
        f"{tool['name']}.{key}": unportable(tool[key])
        for tool in json.loads(LISTING.read_text())
        for key in ("inputSchema", "outputSchema")
    }
    assert {name: where for name, where in found.items() if where} == {}
