"""What the MCP surface beyond `tools/call` answers when it cannot answer as asked — resources,
completion, prompts and the lists — over the wire with the SDK's client, on both backends (session
55's probe of that surface).

Before: a NUL in a completion value or a node resource's id reached PostgreSQL, whose refusal came
back as JSON-RPC code 0 with two chained tracebacks in the log (on SQLite the completion of "\\x00"
offered an arbitrary node); a database gone did the same to `resources/list`, node reads and
completion, while the tools answered `unavailable`; a resource read refused `unavailable` said
-32002 "not found"; an initiative named `..` was listed under a URI a URL parser rewrites; completion
offered the alphabetically first initiatives; `decide` took any initiative name, NUL included; and a
bogus pagination cursor was ignored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from kaeru.storage.factory import open_store
from tests.backends import VaultSpec
from tests.wire.bearer_clients import bearer_client
from tests.wire.closed_database import closed, pg_vault
from tests.wire.support import call_ok, connect, http_server, subprocess_env

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.timeout(180)]

__all__ = ["pg_vault"]

NOT_FOUND = -32002
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
NODES = types.ResourceTemplateReference(type="ref/resource", uri="kaeru://node/{id}")
CONTEXTS = types.ResourceTemplateReference(type="ref/resource", uri="kaeru://initiative/{name}/context")
RESUME = types.PromptReference(type="ref/prompt", name="resume")


def _make(vault: VaultSpec, initiatives: dict[str, str]) -> None:
    """Initiatives made in the vault directly, each with its last activity: as an older kaeru or a
    long-lived vault left them (a name a write refuses now, an order of activity no test waits for)."""
    store = open_store(vault.settings())
    try:
        with store.write() as session:
            for name, at in initiatives.items():
                session.create_initiative(name, at)
    finally:
        store.close()


async def _refused(call: Any) -> MCPError:
    with pytest.raises(MCPError) as refused:
        await call
    return refused.value


async def test_text_no_vault_holds_completes_to_nothing_and_reads_as_not_found(
    server_env: dict[str, str], transport: str, tmp_path: Path
) -> None:
    async with connect(transport, server_env, tmp_path) as client:
        await call_ok(client, "note", {"initiative": "heron", "name": "hello", "text": "the first note"})
        for typed in ("\x00", "a\x00", "hel\x00lo"):
            for ref, argument in ((NODES, "id"), (CONTEXTS, "name"), (RESUME, "initiative")):
                done = await client.complete(ref, {"name": argument, "value": typed})
                assert done.completion.values == [], (typed, argument)
        for uri in ("kaeru://node/a%00b", "kaeru://node/%00"):
            refused = await _refused(client.read_resource(uri))
            assert refused.code == NOT_FOUND, refused
        # And the server goes on answering.
        done = await client.complete(NODES, {"name": "id", "value": "hel"})
        assert len(done.completion.values) == 1


async def test_a_database_gone_answers_unavailable_not_code_0(pg_vault: VaultSpec, tmp_path: Path) -> None:
    """Each request that reads the vault outside a tool answers `unavailable` as JSON-RPC -32603 —
    the server's fault, not the resource's absence — and the operator's log says so in one line per
    kind, without a traceback."""
    admin = "surface-refusals-admin-token-7c1"
    env = subprocess_env(pg_vault.env(), KAERU_AUTH_TOKEN=admin)  # the admin token is checked without the vault
    with http_server(env, tmp_path) as server:
        async with bearer_client(server.url, admin) as client:
            made = await call_ok(client, "note", {"initiative": "pg", "name": "hello", "text": "before the outage"})
            node = made["data"]["primary"]["id"]
            with closed(pg_vault):
                asked = {
                    "resources/list": client.list_resources(),
                    "node": client.read_resource(f"kaeru://node/{node}"),
                    "context": client.read_resource("kaeru://initiative/pg/context"),
                    "complete node": client.complete(NODES, {"name": "id", "value": "hel"}),
                    "complete initiative": client.complete(RESUME, {"name": "initiative", "value": "p"}),
                    "resume": client.get_prompt("resume", {"initiative": "pg"}),
                    "decide": client.get_prompt("decide", {"initiative": "pg"}),
                }
                for what, call in asked.items():
                    refused = await _refused(call)
                    assert refused.code == INTERNAL_ERROR and refused.message.startswith("unavailable: "), (
                        what,
                        refused,
                    )
            listed = await client.list_resources()
            assert "kaeru://initiative/pg/context" in {str(r.uri) for r in listed.resources}
    log = server.output()
    assert "Traceback" not in log, log[-3000:]
    assert "unavailable answer to resources/list: " in log, log[-3000:]
    assert "unavailable answer to completion/complete: " in log, log[-3000:]


async def test_names_made_only_of_dots_are_refused_new_and_left_out_of_the_listing(
    server_env: dict[str, str], vault: VaultSpec, tmp_path: Path
) -> None:
    _make(vault, {"..": "2026-01-01T00:00:00.000000Z", ".": "2026-01-01T00:00:01.000000Z"})
    async with connect("stdio", server_env, tmp_path) as client:
        for name in ("...", "  ....  "):  # "." and ".." exist here
            refused = await client.call_tool("note", {"initiative": name, "text": "in a dotted scope"})
            envelope = refused.structured_content
            assert refused.is_error and envelope is not None, (name, refused)
            [issue] = envelope["issues"]
            assert (issue["code"], issue["field"]) == ("invalid_argument", "initiative"), issue
            assert "only dots" in issue["message"]
        await call_ok(client, "note", {"initiative": "heron", "text": "a named scope"})
        renamed = await client.call_tool("initiative", {"initiative": "heron", "action": "rename", "to": "....."})
        [issue] = renamed.structured_content["issues"]
        assert renamed.is_error and issue["field"] == "to" and "only dots" in issue["message"], issue
        # An older vault's: still read and written by the tools, not listed as resources.
        await call_ok(client, "note", {"initiative": "..", "text": "still written"})
        context = await call_ok(client, "context", {"initiative": ".."})
        assert "still written" in json.dumps(context)
        listed = {str(r.uri) for r in (await client.list_resources()).resources}
        assert listed == {"kaeru://initiatives", "kaeru://initiative/heron/context"}, listed
        for uri in listed:
            assert (await client.read_resource(uri)).contents, uri
        done = await client.complete(CONTEXTS, {"name": "name", "value": ""})
        assert done.completion.values == ["heron"]
        done = await client.complete(RESUME, {"name": "initiative", "value": "."})
        assert set(done.completion.values) == {".", ".."}  # a prompt's argument is no URI


async def test_completion_offers_the_most_recently_active_first(
    server_env: dict[str, str], vault: VaultSpec, tmp_path: Path
) -> None:
    _make(
        vault,
        {
            "aardvark": "2025-01-01T00:00:00.000000Z",
            "heron-archive": "2025-02-01T00:00:00.000000Z",
            "zebra": "2026-03-01T00:00:00.000000Z",
            "heron": "2026-04-01T00:00:00.000000Z",
        },
    )
    async with connect("stdio", server_env, tmp_path) as client:
        listed = [str(r.uri) for r in (await client.list_resources()).resources][1:]
        order = ["heron", "zebra", "heron-archive", "aardvark"]
        assert listed == [f"kaeru://initiative/{n}/context" for n in order]
        for ref, argument in ((RESUME, "initiative"), (CONTEXTS, "name")):
            done = await client.complete(ref, {"name": argument, "value": ""})
            assert done.completion.values == order
            done = await client.complete(ref, {"name": argument, "value": "HER"})
            assert done.completion.values == ["heron", "heron-archive"]


async def test_capture_prompts_say_a_new_initiative_and_refuse_what_a_write_would(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    async with connect("stdio", server_env, tmp_path) as client:
        await call_ok(client, "note", {"initiative": "hermes", "text": "a project"})
        await call_ok(client, "note", {"initiative": "old-name", "text": "a project renamed"})
        await call_ok(client, "initiative", {"initiative": "old-name", "action": "rename", "to": "new-name"})
        for prompt in ("decide", "hypothesis"):
            known = (await client.get_prompt(prompt, {"initiative": "hermes"})).messages[0].content.text
            assert "There is no initiative" not in known
            typo = (await client.get_prompt(prompt, {"initiative": "hermez"})).messages[0].content.text
            assert 'There is no initiative "hermez" yet' in typo and '"hermes": ask me which I meant' in typo
            fresh = (await client.get_prompt(prompt, {"initiative": "kestrel"})).messages[0].content.text
            assert 'There is no initiative "kestrel" yet: the first write creates it.' in fresh
            for bad, said in (("a\x00b", "NUL"), ("...", "only dots"), ("old-name", "renamed to 'new-name'")):
                refused = await _refused(client.get_prompt(prompt, {"initiative": bad}))
                assert refused.code == INVALID_PARAMS and said in refused.message, (prompt, bad, refused)


async def test_a_list_refuses_a_cursor_it_never_gave(
    server_env: dict[str, str], transport: str, tmp_path: Path
) -> None:
    async with connect(transport, server_env, tmp_path) as client:
        lists = {
            "tools/list": client.list_tools,
            "prompts/list": client.list_prompts,
            "resources/list": client.list_resources,
            "resources/templates/list": client.list_resource_templates,
        }
        for what, listing in lists.items():
            whole = await listing()
            assert whole.next_cursor is None, what
            assert (await listing(cursor="")) == whole, what  # an empty cursor: none, the whole list
            refused = await _refused(listing(cursor="bogus"))
            assert refused.code == INVALID_PARAMS and "invalid cursor" in refused.message, (what, refused)
