"""A server that offers fewer tools (`KAERU_TOOLS`, `kaeru serve --tools`; decision 439).

Every listed tool's definition sits in the model's context all session, and some clients cap the
tools of all their servers together: a person serves `core` (or a list of names) and the model sees
only those. What the agent relies on: the listing holds exactly the chosen tools, in the usual
order; a call of another tool says it is not served here (not that it does not exist) and writes
nothing; the prompts offered are those whose tools are; a list that names no tool, or a tool that is
none, stops the server at start with the name it did not know — never a server that offers less
than asked, unsaid."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from kaeru.domain.tool_set import CORE, TOOL_NAMES, ToolSetError, served_tools
from kaeru.mcp.adapter import ToolRegistry
from kaeru.mcp.prompts import NEEDS
from kaeru.mcp.server import INSTRUCTIONS, instructions_for
from kaeru.mcp.tools import register_tools
from tests.cli.support import kaeru
from tests.wire.support import call_ok, connect, http_server

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


def test_the_names_are_the_registrys_in_its_order() -> None:
    catalogue = ToolRegistry.catalogue()
    register_tools(catalogue)
    assert tuple(catalogue.specs) == TOOL_NAMES
    # The prompts' tools are all in `core`: a `core` server offers every prompt.
    assert {tool for needs in NEEDS.values() for tool in needs} <= set(CORE)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, TOOL_NAMES),
        ("", TOOL_NAMES),
        ("  ", TOOL_NAMES),
        ("all", TOOL_NAMES),
        ("core", CORE),
        ("Core", CORE),
        ("note, search recall", ("recall", "search", "note")),  # commas or spaces; the listing's order
        ("-archive,-initiative", tuple(t for t in TOOL_NAMES if t not in ("archive", "initiative"))),
        (
            "core,-task,-task_update,timeline",
            tuple(t for t in TOOL_NAMES if t in (*CORE, "timeline") and "task" not in t),
        ),
        ("all,-core", tuple(t for t in TOOL_NAMES if t not in CORE)),
        ("search,search", ("search",)),
    ],
)
def test_a_list_names_tools_and_presets_left_to_right(raw: str | None, expected: tuple[str, ...]) -> None:
    assert served_tools(raw) == expected


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        ("lnk", "'lnk' is not a tool or a preset (did you mean link?)"),
        ("core,-tsk", "'-tsk' is not a tool or a preset (did you mean task?)"),
        ("-", "'-' is not a tool or a preset"),
        ("core,-core", "leaves no tool to serve"),
        ("-all", "leaves no tool to serve"),
    ],
)
def test_a_list_kaeru_cannot_read_is_refused_with_the_entry(raw: str, said: str) -> None:
    with pytest.raises(ToolSetError) as refused:
        served_tools(raw)
    assert said in str(refused.value)


def test_the_instructions_say_which_tools_are_offered() -> None:
    assert instructions_for(None) == INSTRUCTIONS
    # The longest narrowed instructions (all tools but one) stay within the 2,048 characters clients show.
    assert all(len(instructions_for(tuple(t for t in TOOL_NAMES if t != left))) <= 2048 for left in TOOL_NAMES)
    narrowed = instructions_for(("search", "note"))
    assert narrowed.startswith(INSTRUCTIONS)
    assert narrowed.endswith("OFFERED HERE: only `search`, `note`.")


async def test_a_core_server_lists_calls_and_refuses_as_chosen(server_env: dict[str, str], tmp_path: Path) -> None:
    async with connect("stdio", {**server_env, "KAERU_TOOLS": "core"}, tmp_path) as client:
        listed = await client.list_tools()
        assert tuple(t.name for t in listed.tools) == CORE
        made = await call_ok(client, "note", {"initiative": "heron", "text": "the ledger is append-only"})
        found = await call_ok(client, "search", {"initiatives": ["heron"], "text": "ledger"})
        assert [h["id"] for h in found["data"]["hits"]] == [made["data"]["primary"]["id"]]
        # A tool kaeru has and this server does not offer: said so, and nothing written.
        forget = {
            "initiative": "heron",
            "node": made["data"]["primary"]["id"],
            "reason": "a call a core server refuses",
        }
        refused = await client.call_tool("forget", forget)
        assert refused.is_error
        assert "tool 'forget' is not served here" in refused.content[0].text
        assert "initiatives, link, note" in refused.content[0].text  # the tools that are
        still = await call_ok(client, "read", {"initiative": "heron", "node": made["data"]["primary"]["id"]})
        assert still["data"]["hits"][0]["id"] == made["data"]["primary"]["id"]
        again = await call_ok(client, "search", {"initiatives": ["heron"], "text": "ledger"})
        assert again["data"]["hits"] == found["data"]["hits"], "not forgotten"
        unknown = await client.call_tool("forgot", {})
        assert unknown.is_error and "unknown tool 'forgot'" in unknown.content[0].text
        prompts = await client.list_prompts()
        assert {p.name for p in prompts.prompts} == {"resume", "decide", "hypothesis"}


async def test_a_server_without_a_prompts_tools_does_not_offer_the_prompt(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    async with connect("stdio", {**server_env, "KAERU_TOOLS": "context,note,search"}, tmp_path) as client:
        assert tuple(t.name for t in (await client.list_tools()).tools) == ("context", "search", "note")
        assert [p.name for p in (await client.list_prompts()).prompts] == ["resume"]
        from mcp.shared.exceptions import MCPError

        with pytest.raises(MCPError, match="unknown prompt 'decide'; prompts: resume"):
            await client.get_prompt("decide", {"initiative": "heron"})


async def test_over_http_the_flag_decides(server_env: dict[str, str], tmp_path: Path) -> None:
    """`kaeru serve --http --tools …` (the flag over the variable): listed and called over HTTP."""
    from mcp import Client

    env = {**server_env, "KAERU_TOOLS": "core"}
    serve = (sys.executable, "-m", "kaeru", "serve", "--tools", "-archive,-initiative")
    with http_server(env, tmp_path, serve=serve) as server:
        async with Client(server.url) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            assert names == [t for t in TOOL_NAMES if t not in ("archive", "initiative")]
            called = await client.call_tool("archive", {"action": "export", "path": "kept.amg"})  # valid, if served
            assert called.is_error and "tool 'archive' is not served here" in called.content[0].text
            assert not (Path(server_env["KAERU_VAULT"]) / "exports" / "kept.amg").exists()
            await call_ok(client, "timeline", {"initiatives": ["x"]})


def test_a_list_naming_no_tool_stops_the_server_at_start(server_env: dict[str, str]) -> None:
    by_variable = kaeru(server_env, "serve", stdin=b"", KAERU_TOOLS="core,-core")
    assert by_variable.code == 2
    assert "KAERU_TOOLS: 'core,-core' leaves no tool to serve" in by_variable.stderr
    by_flag = kaeru(server_env, "serve", "--tools", "contxt", stdin=b"")
    assert by_flag.code == 2
    assert "--tools: 'contxt' is not a tool or a preset (did you mean context?)" in by_flag.stderr
    assert not by_flag.stdout


def test_setup_writes_the_list_for_the_server_the_client_starts(server_env: dict[str, str], tmp_path: Path) -> None:
    target = tmp_path / "mcp.json"
    made = kaeru(server_env, "setup", "cursor", "--path", str(target), "--write", "--tools", " core,-task ")
    assert made.code == 0, made.stderr
    written = json.loads(target.read_text())["mcpServers"]["kaeru"]
    assert written["env"]["KAERU_TOOLS"] == "core,-task"
    wrong = kaeru(server_env, "setup", "cursor", "--tools", "cor")
    assert wrong.code == 2 and "did you mean core?" in wrong.stderr
    empty = kaeru(server_env, "setup", "cursor", "--tools", " , ")
    assert empty.code == 2 and "--tools is empty" in empty.stderr
    remote = kaeru(server_env, "setup", "cursor", "--http", "http://127.0.0.1:9876/mcp", "--tools", "core")
    assert remote.code == 2 and "--tools goes with a server the client starts" in remote.stderr


def test_kaeru_doctor_names_a_list_it_cannot_read(server_env: dict[str, str]) -> None:
    checked = kaeru(server_env, "doctor", KAERU_TOOLS="lnk")
    assert checked.code != 0
    assert "KAERU_TOOLS: 'lnk' is not a tool or a preset (did you mean link?)" in checked.stdout
