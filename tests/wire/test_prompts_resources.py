"""Prompts, resources and completion (issue 19) over real stdio with the SDK client, both backends;
and the server's instructions: short enough for every client, and saying how to work."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from kaeru.domain.timefmt import fmt
from kaeru.mcp.resources import LISTED
from kaeru.mcp.server import INSTRUCTIONS
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec
from tests.wire.support import call_ok, connect

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.timeout(120)]

DOCS = Path(__file__).resolve().parents[2] / "docs" / "clients.md"


async def seed(client: Any) -> str:
    """Two initiatives; a rule and a decision in one. Returns the decision's id."""
    await call_ok(
        client, "note", {"initiative": "heron-billing", "kind": "rule", "text": "Never drop the ledger table."}
    )
    made = await call_ok(
        client,
        "note",
        {
            "initiative": "heron-billing",
            "kind": "decision",
            "name": "Chose PostgreSQL",
            "text": "PostgreSQL, for window functions.",
        },
    )
    await call_ok(client, "note", {"initiative": "hermes", "text": "A second initiative."})
    node_id: str = made["data"]["primary"]["id"]
    return node_id


async def test_prompts_list_and_get(server_env: dict[str, str], tmp_path: Path) -> None:
    async with connect("stdio", server_env, tmp_path) as client:
        await seed(client)
        listed = await client.list_prompts()
        prompts = {p.name: p for p in listed.prompts}
        assert set(prompts) == {"resume", "decide", "hypothesis"}
        assert [a.name for a in prompts["resume"].arguments if a.required] == ["initiative"]

        resumed = await client.get_prompt("resume", {"initiative": "heron-billing"})
        [message] = resumed.messages
        assert message.role == "user"
        text = message.content.text
        assert "heron-billing" in text and "Never drop the ledger table." in text and "Chose PostgreSQL" in text
        # The bundle as the context tool's text, then its coverage (re-entry probe, session 49).
        assert "context ok: initiative=heron-billing" in text
        coverage = json.loads(text[text.rindex("coverage: ") + len("coverage: ") :])
        assert coverage["initiatives"] == ["heron-billing"] and coverage["rules_complete"] is True

        decided = await client.get_prompt(
            "decide", {"initiative": "heron-billing", "decision": "use uv", "why": "speed"}
        )
        # A decision given as a sentence stays one ("We use uv.." before), and `search` is asked as
        # it takes its scope: `initiative` there is refused as an unknown argument.
        said = await client.get_prompt(
            "decide", {"initiative": "heron-billing", "decision": "We use uv.", "why": "It is fast."}
        )
        text = said.messages[0].content.text
        assert "We use uv. Reason given: It is fast.\n" in text and ".." not in text
        assert '`search` initiatives=["heron-billing"]' in text
        steps = json.dumps({"initiatives": ["heron-billing"], "text": "uv"})
        assert (await client.call_tool("search", json.loads(steps))).structured_content["state"] == "ok"
        assert "kind=decision" in decided.messages[0].content.text and "use uv" in decided.messages[0].content.text
        claimed = await client.get_prompt("hypothesis", {"initiative": "heron-billing", "statement": "cache helps"})
        assert "`claim`" in claimed.messages[0].content.text and "`verdict`" in claimed.messages[0].content.text

        with pytest.raises(MCPError) as unknown:
            await client.get_prompt("resume", {"initiative": "heron-biling"})
        assert "did you mean 'heron-billing'" in unknown.value.message
        with pytest.raises(MCPError) as no_such:
            await client.get_prompt("summarise", {"initiative": "heron-billing"})
        assert (
            "unknown prompt 'summarise'" in no_such.value.message
            and "resume, decide, hypothesis" in no_such.value.message
        )
        with pytest.raises(MCPError) as blank:
            await client.get_prompt("decide", {"initiative": "  "})
        assert "needs the argument 'initiative'" in blank.value.message


async def test_resources_list_templates_and_read(server_env: dict[str, str], tmp_path: Path) -> None:
    async with connect("stdio", server_env, tmp_path) as client:
        node_id = await seed(client)
        listed = await client.list_resources()
        uris = {str(r.uri) for r in listed.resources}
        assert uris == {
            "kaeru://initiatives",
            "kaeru://initiative/heron-billing/context",
            "kaeru://initiative/hermes/context",
        }
        templates = await client.list_resource_templates()
        assert {t.uri_template for t in templates.resource_templates} == {
            "kaeru://initiative/{name}/context",
            "kaeru://node/{id}",
        }

        def envelope(result: types.ReadResourceResult) -> dict[str, Any]:
            [content] = result.contents
            assert content.mime_type == "application/json"
            parsed: dict[str, Any] = json.loads(content.text)
            return parsed

        everything = envelope(await client.read_resource("kaeru://initiatives"))
        assert everything["operation"] == "initiatives"
        assert {"heron-billing", "hermes"} <= set(json.dumps(everything["data"]).replace('"', " ").split())
        context = envelope(await client.read_resource("kaeru://initiative/heron-billing/context"))
        assert context["operation"] == "context" and "Never drop the ledger table." in json.dumps(context)
        node = envelope(await client.read_resource(f"kaeru://node/{node_id}"))
        assert node["operation"] == "read" and "PostgreSQL, for window functions." in json.dumps(node)

        for missing in ("kaeru://node/nope", "kaeru://initiative/nope/context", "kaeru://elsewhere"):
            with pytest.raises(MCPError) as refused:
                await client.read_resource(missing)
            assert refused.value.code == -32002


async def test_resources_list_names_the_most_recently_active_initiatives(
    server_env: dict[str, str], vault: VaultSpec, tmp_path: Path
) -> None:
    """Past 100 initiatives the context resources listed are the 100 most recently active, most active
    first, and the list says so: they were the first 100 names in alphabetical order (`aardvark`,
    untouched for a year, in; this week's projects out)."""
    store = open_store(vault.settings())
    try:
        with store.write() as session:
            session.create_initiative("aardvark", "2025-01-01T00:00:00.000000Z")
            for n in range(LISTED):
                session.create_initiative(f"zz-{n:03d}", fmt(datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=n)))
    finally:
        store.close()
    prefix = "kaeru://initiative/"

    def contexts(listed: types.ListResourcesResult) -> list[str]:
        return [str(r.uri)[len(prefix) : -len("/context")] for r in listed.resources if str(r.uri).startswith(prefix)]

    async with connect("stdio", server_env, tmp_path) as client:
        listed = await client.list_resources()
        assert contexts(listed) == [f"zz-{n:03d}" for n in reversed(range(LISTED))]
        [initiatives] = [r for r in listed.resources if str(r.uri) == "kaeru://initiatives"]
        assert f"those of the {LISTED} most recently active" in (initiatives.description or "")
        await call_ok(client, "note", {"initiative": "aardvark", "text": "back at it"})
        again = contexts(await client.list_resources())
        assert again[0] == "aardvark" and "zz-000" not in again and len(again) == LISTED


async def test_completion_of_prompt_and_template_arguments(server_env: dict[str, str], tmp_path: Path) -> None:
    async with connect("stdio", server_env, tmp_path) as client:
        node_id = await seed(client)
        prompt = types.PromptReference(type="ref/prompt", name="resume")
        done = await client.complete(prompt, {"name": "initiative", "value": "her"})
        assert done.completion.values == ["hermes", "heron-billing"]
        done = await client.complete(prompt, {"name": "initiative", "value": "HERO"})
        assert done.completion.values == ["heron-billing"]
        template = types.ResourceTemplateReference(type="ref/resource", uri="kaeru://initiative/{name}/context")
        done = await client.complete(template, {"name": "name", "value": "herm"})
        assert done.completion.values == ["hermes"]
        nodes = types.ResourceTemplateReference(type="ref/resource", uri="kaeru://node/{id}")
        done = await client.complete(nodes, {"name": "id", "value": "Chose Postgre"})
        assert done.completion.values == [node_id]
        done = await client.complete(nodes, {"name": "id", "value": node_id})
        assert done.completion.values == [node_id]
        # A forgotten node's id was offered, and reading it then failed "no live node".
        gone = await call_ok(client, "note", {"initiative": "hermes", "text": "A note to forget."})
        gone_id = gone["data"]["primary"]["id"]
        await call_ok(client, "forget", {"initiative": "hermes", "node": {"id": gone_id}, "reason": "test"})
        done = await client.complete(nodes, {"name": "id", "value": gone_id})
        assert done.completion.values == []


def test_instructions_name_each_tools_scope_as_it_takes_it() -> None:
    """They said "pass `initiative` on every call": `search`, `recall` and `timeline` refuse it as
    an unknown argument (they take `initiatives`, a list)."""
    from kaeru.api.schemas import _pinned_inputs, input_for

    listed = {name: set(input_for(name)["properties"]) for name in _pinned_inputs()}
    many = sorted(name for name, fields in listed.items() if "initiatives" in fields and "initiative" not in fields)
    assert many == ["archive", "recall", "search", "timeline"]
    assert "`initiatives: [...]` for `search`, `recall`, `timeline` and `archive`" in INSTRUCTIONS


def test_instructions_fit_and_say_how_to_start_capture_link_and_revise() -> None:
    assert len(INSTRUCTIONS) <= 2048
    for habit in ("`context`", "`note`", "`claim`", "`link_to`", "`revise`", "`search`"):
        assert habit in INSTRUCTIONS, habit
    # docs/clients.md prints them with their measured length.
    docs = DOCS.read_text()
    assert INSTRUCTIONS in docs
    assert re.search(rf"\b{len(INSTRUCTIONS)} characters\b", docs)
