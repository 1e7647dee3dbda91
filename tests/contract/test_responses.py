"""Every tool's responses — successes and rejections — validate against the schema it declares."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from kaeru.mcp.server import KaeruServer

# `context` records first sight of reminders, so it is not read-only (but idempotent).
READ_TOOLS = {"search", "read", "trail", "current_state", "recall", "initiatives", "timeline", "reflect"}


async def _checked(client: Client, kaeru: KaeruServer, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    envelope = result.structured_content
    assert isinstance(envelope, dict)
    schema = kaeru.registry.specs[tool].output_schema
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
        for prop, spec in tool.input_schema.get("properties", {}).items():
            if tool.name not in {"search", "claim", "revise"}:  # contract schemas are verbatim
                assert "description" in spec, f"{tool.name}.{prop} has no description"
    assert client.instructions is not None and len(client.instructions) <= 2048
