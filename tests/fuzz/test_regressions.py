"""Defects the fuzzer found, each pinned by the call that showed it."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from kaeru.export.archive import content_digest
from kaeru.mcp.server import KaeruServer


async def _rejected(client: Client, kaeru: KaeruServer, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    before = content_digest(kaeru.service.store)
    result = await client.call_tool(tool, args)
    envelope = result.structured_content
    assert isinstance(envelope, dict) and result.is_error
    assert not list(Draft202012Validator(kaeru.registry.specs[tool].output_schema).iter_errors(envelope))
    assert envelope["state"] == "rejected"
    assert content_digest(kaeru.service.store) == before
    return envelope


@pytest.mark.anyio
async def test_a_lone_surrogate_in_an_enum_value_is_a_rejection_not_a_protocol_error(
    client: Client, kaeru: KaeruServer
) -> None:
    # The compiled schema validator raised UnicodeEncodeError comparing it with the enum, which
    # escaped the adapter and reached the client as a JSON-RPC error.
    envelope = await _rejected(client, kaeru, "initiative", {"initiative": "a", "action": "lone \udfff surrogate"})
    assert [(i["code"], i["field"]) for i in envelope["issues"]] == [("invalid_argument", "action")]


@pytest.mark.anyio
async def test_a_request_id_holding_a_lone_surrogate_is_not_echoed(client: Client, kaeru: KaeruServer) -> None:
    # Echoed, it made the envelope impossible to write as JSON text.
    envelope = await _rejected(client, kaeru, "note", {"initiative": "a", "text": "t", "request_id": "r\ud800"})
    assert envelope["request_id"] is None
    assert envelope["issues"][0]["field"] == "request_id"


@pytest.mark.anyio
@pytest.mark.parametrize("action", ["import", "export"])
async def test_an_archive_path_holding_nul_is_invalid_not_internal(
    client: Client, kaeru: KaeruServer, action: str
) -> None:
    # `Path.resolve` raised ValueError ("embedded null byte"), answered as `internal`.
    envelope = await _rejected(client, kaeru, "archive", {"action": action, "path": "alpha\x00beta"})
    assert [(i["code"], i["field"]) for i in envelope["issues"]] == [("invalid_argument", "path")]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("tool", "args", "field"),
    [
        ("note", {"initiative": "a", "text": "retry me", "request_id": "a\x00b"}, "request_id"),
        ("read", {"initiative": "a", "node": "a\x00b"}, "node"),
        ("search", {"initiatives": ["a"], "filters": {"tags": ["a\x00b"]}}, "filters.tags[0]"),
        ("recall", {"initiatives": ["a"], "query": "base a\x00b"}, "query"),
        ("search", {"initiatives": ["a"], "text": "base a\x00b"}, "text"),
    ],
    ids=["request_id", "node_ref", "tag_filter", "recall_query", "search_text"],
)
async def test_a_nul_in_any_string_argument_is_refused_alike_on_both_backends(
    client: Client, kaeru: KaeruServer, tool: str, args: dict[str, Any], field: str
) -> None:
    # SQLite applied a NUL `request_id` and answered `not_found`/`ok` to a NUL NodeRef, tag filter
    # or query; PostgreSQL, which cannot hold NUL, refused them with no field, naming `text`.
    await client.call_tool("note", {"initiative": "a", "text": "base node", "name": "base"})
    envelope = await _rejected(client, kaeru, tool, args)
    assert [(i["code"], i["field"]) for i in envelope["issues"]] == [("invalid_argument", field)]
    assert envelope["issues"][0]["message"] == f"{field} contains a NUL character"


@pytest.mark.anyio
async def test_a_blank_task_reference_in_context_is_invalid_not_internal(client: Client, kaeru: KaeruServer) -> None:
    # `context` parsed the reference a second time, unguarded: ValueError, answered as `internal`.
    await client.call_tool("note", {"initiative": "a", "text": "t"})
    envelope = await _rejected(client, kaeru, "context", {"initiative": "a", "task": "   "})
    assert [(i["code"], i["field"]) for i in envelope["issues"]] == [("invalid_argument", "task")]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("first", "then"),
    [
        ({"format": "amg", "path": "x.amg"}, {"format": "markdown", "path": "x.amg"}),  # a file where a folder goes
        ({"format": "markdown", "path": "md"}, {"format": "amg", "path": "md"}),  # a folder where a file goes
        ({"format": "amg", "path": "x.amg"}, {"format": "amg", "path": "x.amg/inner.amg"}),  # a file as a folder
        (None, {"format": "amg", "path": "n" * 300}),  # a name longer than the file system allows
    ],
)
async def test_an_export_path_the_file_system_refuses_is_invalid_not_internal(
    client: Client, kaeru: KaeruServer, first: dict[str, str] | None, then: dict[str, str]
) -> None:
    # The OSError (FileExistsError, IsADirectoryError, NotADirectoryError, name too long) was `internal`.
    await client.call_tool("note", {"initiative": "a", "text": "t"})
    if first is not None:
        made = await client.call_tool("archive", {"action": "export", **first})
        assert not made.is_error
    envelope = await _rejected(client, kaeru, "archive", {"action": "export", **then})
    assert [(i["code"], i["field"]) for i in envelope["issues"]] == [("invalid_argument", "path")]


@pytest.mark.anyio
@pytest.mark.parametrize("path", ["n" * 300, "d/" + "n" * 300 + "/x.amg"])
async def test_an_import_path_the_file_system_refuses_is_invalid_not_internal(
    client: Client, kaeru: KaeruServer, path: str
) -> None:
    # `Path.is_file` raised OSError (ENAMETOOLONG) before the archive was read: `internal`
    # (found by `bench.fuzz --backend postgres --seed 6`). Only once the export folder exists: the
    # look-up stops at a missing folder first (ENOENT, which `is_file` answers with False).
    await client.call_tool("note", {"initiative": "a", "text": "t"})
    assert not (await client.call_tool("archive", {"action": "export", "path": "d/x.amg"})).is_error
    envelope = await _rejected(client, kaeru, "archive", {"action": "import", "path": path})
    assert [(i["code"], i["field"]) for i in envelope["issues"]] == [("invalid_argument", "path")]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["settle", "unsettle"])
async def test_settling_a_slot_holder_hands_the_slot_on(client: Client, kaeru: KaeruServer, mode: str) -> None:
    # Handing the slot to the successor cooled the source (a new revision), then the source was
    # retracted from its stale copy: the same revision written twice, answered as `internal`.
    held = await client.call_tool(
        "note", {"initiative": "a", "text": "we ship on fridays", "kind": "decision", "options": {"slot": "plan"}}
    )
    node = held.structured_content["data"]["primary"]["id"]
    if mode == "unsettle":
        settled = await client.call_tool("evolve", {"initiative": "a", "mode": "settle", "source": node})
        assert not settled.is_error, settled.structured_content
        node = settled.structured_content["data"]["primary"]["id"]
    result = await client.call_tool("evolve", {"initiative": "a", "mode": mode, "source": node, "new_body": "b"})
    envelope = result.structured_content
    assert envelope["state"] == "applied", envelope["issues"]
    successor = envelope["data"]["primary"]["id"]
    state = await client.call_tool("current_state", {"initiative": "a", "slot": "plan"})
    assert state.structured_content["data"]["current"]["id"] == successor
    gone = await client.call_tool("read", {"initiative": "a", "node": node})
    assert gone.structured_content["issues"][0]["code"] == "not_found"
