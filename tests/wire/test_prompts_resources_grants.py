"""Prompts, resources and completion over HTTP keep to a person's grants (issue 19): a token without a
grant on an initiative can neither read its context resource nor its nodes, nor resume it — and is
not even told its name (listing, completion) — both backends, real `kaeru serve --http`."""

from __future__ import annotations

import json
from pathlib import Path

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from tests.backends import VaultSpec
from tests.cli.support import kaeru
from tests.wire.bearer_clients import bearer_client
from tests.wire.support import call_ok, http_server

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.timeout(180)]

ADMIN = "wire-admin-token-19w"


@pytest.mark.anyio
async def test_prompts_and_resources_keep_to_the_grants(
    vault: VaultSpec, server_env: dict[str, str], tmp_path: Path
) -> None:
    made = kaeru(vault, "token", "add", "alice", "--initiatives", "web", as_json=True)
    assert made.code == 0, made.stderr
    alice: str = made.json()["token"]
    env = {**server_env, "KAERU_AUTH_TOKEN": ADMIN, "KAERU_ACTOR": "the-admin"}
    with http_server(env, tmp_path) as server:
        async with bearer_client(server.url, ADMIN) as admin:
            secret = await call_ok(
                admin, "note", {"initiative": "payroll", "name": "Salaries", "text": "payroll secret zq19pay"}
            )
            secret_id = secret["data"]["primary"]["id"]
            await call_ok(
                admin, "note", {"initiative": "web", "kind": "rule", "text": "the cart rounds half up zq19web"}
            )
            # The admin sees both (the refusals below are the grants, not missing data).
            payroll = await admin.read_resource("kaeru://initiative/payroll/context")
            assert "zq19pay" in payroll.contents[0].text

        async with bearer_client(server.url, alice) as client:
            listed = await client.list_resources()
            uris = {str(r.uri) for r in listed.resources}
            assert "kaeru://initiative/web/context" in uris
            assert not any("payroll" in uri for uri in uris), uris

            everything = await client.read_resource("kaeru://initiatives")
            assert "payroll" not in everything.contents[0].text

            own = await client.read_resource("kaeru://initiative/web/context")
            assert "zq19web" in own.contents[0].text
            with pytest.raises(MCPError) as error:
                await client.read_resource("kaeru://initiative/payroll/context")
            assert "forbidden" in error.value.message and "zq19pay" not in error.value.message
            # A node outside the grants is missed like a node that does not exist: not even the name
            # of its initiative is said.
            with pytest.raises(MCPError) as error:
                await client.read_resource(f"kaeru://node/{secret_id}")
            said = json.dumps(error.value.error.model_dump(mode="json"))
            assert error.value.code == -32002 and "zq19pay" not in said and "payroll" not in said, said

            resumed = await client.get_prompt("resume", {"initiative": "web"})
            assert "zq19web" in resumed.messages[0].content.text
            with pytest.raises(MCPError) as error:
                await client.get_prompt("resume", {"initiative": "payroll"})
            assert "zq19pay" not in error.value.message

            prompt = types.PromptReference(type="ref/prompt", name="resume")
            done = await client.complete(prompt, {"name": "initiative", "value": ""})
            assert done.completion.values == ["web"]
            template = types.ResourceTemplateReference(type="ref/resource", uri="kaeru://initiative/{name}/context")
            done = await client.complete(template, {"name": "name", "value": "pay"})
            assert done.completion.values == []
            nodes = types.ResourceTemplateReference(type="ref/resource", uri="kaeru://node/{id}")
            done = await client.complete(nodes, {"name": "id", "value": "Salaries"})
            assert done.completion.values == []
