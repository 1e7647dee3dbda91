"""An agent's session, end to end, against the real server over stdio and streamable HTTP.

Driven by the official SDK client, which also validates every structured result against the tool's
declared output schema — so a malformed envelope fails here the way it would fail an agent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.wire.support import call_ok, connect, structured, utc_stamp

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.timeout(120)]

TOOLS = {"search", "read", "note", "claim", "revise", "replace"}
INITIATIVE = "wire-e2e"
OLD_BODY = "The staging cluster drains its queue through tangerine workers every night."
NEW_BODY = "The staging cluster now drains its queue through persimmon workers twice a day."


async def test_note_claim_revise_search_read(transport: str, server_env: dict[str, str], tmp_path: Path) -> None:
    async with connect(transport, server_env, tmp_path) as client:
        noted = await call_ok(
            client, "note", {"initiative": INITIATIVE, "text": OLD_BODY, "name": "nightly-drain", "kind": "observation"}
        )
        assert noted["operation"] == "note" and noted["state"] == "applied" and noted["replayed"] is False
        note_id = noted["data"]["primary"]["id"]
        first_revision = noted["data"]["primary"]["revision"]

        claimed = await call_ok(
            client,
            "claim",
            {
                "initiative": INITIATIVE,
                "text": "Moving the drain off the nightly window halves latency",
                "about": note_id,
                "evidence": {"method": "compare p95 latency for a week before and after"},
            },
        )
        assert claimed["state"] == "applied"
        hypothesis_id = claimed["data"]["primary"]["id"]
        created = {ref["id"] for ref in claimed["data"]["created"]}
        assert hypothesis_id in created and len(created) == 2, "the {method} evidence creates an experiment node"
        [evidence] = claimed["data"]["evidence"]
        assert evidence["id"] in created - {hypothesis_id}
        hypothesis = await call_ok(
            client, "read", {"initiative": INITIATIVE, "node": {"id": hypothesis_id}, "neighbours": True}
        )
        edges = {(e["from"], e["to"], e["edge_type"]) for e in hypothesis["data"]["edges"]}
        assert (hypothesis_id, note_id, "refers_to") in edges, edges
        assert (evidence["id"], hypothesis_id, evidence["relation"]) in edges, edges

        between = utc_stamp()  # after the note was recorded, before the revision

        revised = await call_ok(
            client,
            "revise",
            {
                "initiative": INITIATIVE,
                "node": note_id,
                "patch": {"body": NEW_BODY},
                "expected_revision": first_revision,
            },
        )
        assert revised["state"] == "applied"
        assert revised["data"]["primary"]["id"] == note_id
        new_revision = revised["data"]["primary"]["revision"]
        assert new_revision != first_revision
        assert {"field": "body", "before": OLD_BODY, "after": NEW_BODY} in revised["data"]["changes"]

        found_new = await call_ok(client, "search", {"initiatives": [INITIATIVE], "text": "persimmon"})
        assert [hit["id"] for hit in found_new["data"]["hits"]] == [note_id]
        assert found_new["data"]["hits"][0]["body"] == NEW_BODY
        found_old = await call_ok(client, "search", {"initiatives": [INITIATIVE], "text": "tangerine"})
        assert note_id not in [hit["id"] for hit in found_old["data"]["hits"]]

        now = await call_ok(client, "read", {"initiative": INITIATIVE, "node": note_id})
        [current] = now["data"]["hits"]
        assert (current["id"], current["revision"], current["body"]) == (note_id, new_revision, NEW_BODY)

        then = await call_ok(client, "read", {"initiative": INITIATIVE, "node": note_id, "at": between})
        [past] = then["data"]["hits"]
        assert (past["id"], past["revision"], past["body"]) == (note_id, first_revision, OLD_BODY)


REJECTIONS: list[tuple[str, dict[str, Any], str]] = [
    ("search", {"initiatives": [INITIATIVE], "text": "anything", "limit": 0}, "limit"),
    ("search", {"initiatives": [INITIATIVE], "text": "anything", "limit": "ten"}, "limit"),
    ("search", {"initiatives": [INITIATIVE], "text": "anything", "colour": "red"}, "colour"),
    ("search", {"text": "anything"}, "initiatives"),
    ("read", {"initiative": INITIATIVE, "node": "x", "at": 5}, "at"),
    ("note", {"initiative": INITIATIVE}, "text"),
    ("note", {"initiative": INITIATIVE, "text": "x", "kind": "rumour"}, "kind"),
    ("note", {"initiative": INITIATIVE, "text": "never stored", "colour": "red"}, "colour"),
    ("claim", {"initiative": INITIATIVE, "text": "x", "initial_status": "maybe"}, "initial_status"),
    ("revise", {"initiative": INITIATIVE, "node": "x", "patch": {}}, "patch"),
    ("replace", {"initiative": INITIATIVE, "node": "x"}, "source"),
]


async def test_tools_list_and_instructions_then_schema_violations_are_rejected_envelopes(
    transport: str, server_env: dict[str, str], tmp_path: Path
) -> None:
    """One server for both (a server start per test was most of their time): what it lists and
    instructs, then what it refuses by schema, with nothing applied."""
    async with connect(transport, server_env, tmp_path) as client:
        listing = await client.list_tools()
        tools = {tool.name: tool for tool in listing.tools}
        assert set(tools) >= TOOLS
        for name in TOOLS:
            tool = tools[name]
            assert tool.description, name
            assert tool.input_schema.get("type") == "object", name
            assert tool.output_schema is not None, f"{name} has no output schema"
            assert tool.output_schema.get("type") == "object", name
            assert "state" in tool.output_schema.get("properties", {}), name
        assert tools["search"].annotations.read_only_hint is True
        assert tools["read"].annotations.read_only_hint is True
        assert tools["note"].annotations.read_only_hint is False
        instructions = client.instructions
        assert instructions, "the server sends no instructions"
        assert len(instructions) <= 2048

        for tool, args, field in REJECTIONS:
            # The SDK raises on a JSON-RPC error or on structured content that breaks the output schema.
            result = await client.call_tool(tool, args)
            assert result.is_error is True, (tool, args)
            envelope = structured(result)
            assert envelope["api_version"] == 1
            assert envelope["operation"] == tool
            assert envelope["state"] == "rejected"
            assert envelope["replayed"] is False
            codes = [issue["code"] for issue in envelope["issues"]]
            assert codes == ["invalid_argument"], (tool, args, envelope["issues"])
            [issue] = envelope["issues"]
            assert issue["field"] == field, (tool, args, issue)
            assert issue["retryable"] is False
            assert issue["message"]
            if tool in ("search", "read"):
                assert envelope["data"] == {"hits": [], "total": 0}
            else:
                assert envelope["data"]["primary"] is None and envelope["data"]["created"] == []

        # Nothing was applied: the rejected note did not even create its initiative.
        after = await call_ok(client, "search", {"initiatives": [INITIATIVE], "text": "never stored"})
        assert after["data"]["hits"] == []
        assert [issue["code"] for issue in after["issues"]] == ["unknown_initiative"]


async def test_domain_rejections_and_a_retry_with_request_id_over_the_wire(
    transport: str, server_env: dict[str, str], tmp_path: Path
) -> None:
    """One server for both (a server start per test was most of their time): a stale revise and a
    missing node refused, then a retry answered from the first call and a reused id refused."""
    async with connect(transport, server_env, tmp_path) as client:
        noted = await call_ok(client, "note", {"initiative": INITIATIVE, "text": "a node to conflict on"})
        node_id = noted["data"]["primary"]["id"]
        revision = noted["data"]["primary"]["revision"]
        await call_ok(client, "revise", {"initiative": INITIATIVE, "node": node_id, "patch": {"body": "changed"}})

        stale = await client.call_tool(
            "revise",
            {
                "initiative": INITIATIVE,
                "node": node_id,
                "patch": {"body": "lost update"},
                "expected_revision": revision,
            },
        )
        envelope = structured(stale)
        assert stale.is_error is True and envelope["state"] == "rejected"
        [issue] = envelope["issues"]
        assert issue["code"] == "revision_conflict" and issue["retryable"] is True

        missing = await client.call_tool(
            "read", {"initiative": INITIATIVE, "node": {"id": "01900000-0000-7000-8000-000000000000"}}
        )
        envelope = structured(missing)
        assert missing.is_error is True and envelope["state"] == "rejected"
        assert [i["code"] for i in envelope["issues"]] == ["not_found"]
        assert envelope["data"] == {"hits": [], "total": 0}

        # A retry with the same request_id is answered from the first call (its own marker word).
        args = {"initiative": INITIATIVE, "text": "retried capture zq7retry", "request_id": "rq-wire-1"}
        first = await call_ok(client, "note", args)
        again = await call_ok(client, "note", dict(args))
        assert first["replayed"] is False and again["replayed"] is True
        assert again["request_id"] == "rq-wire-1"
        assert again["data"]["primary"] == first["data"]["primary"]
        found = await call_ok(client, "search", {"initiatives": [INITIATIVE], "text": "zq7retry"})
        assert found["data"]["total"] == 1

        reused = await client.call_tool("note", {**args, "text": "a different capture zq7retry"})
        envelope = structured(reused)
        assert reused.is_error is True and envelope["state"] == "rejected"
        [issue] = envelope["issues"]
        assert (issue["code"], issue["field"]) == ("request_id_reused", "request_id")
        found = await call_ok(client, "search", {"initiatives": [INITIATIVE], "text": "zq7retry"})
        assert found["data"]["total"] == 1


async def test_long_body_reads_whole_through_continuations(
    transport: str, server_env: dict[str, str], tmp_path: Path
) -> None:
    body = " ".join(f'line{i} of the incident transcript, quoted "verbatim" AND * : (' for i in range(5000))
    async with connect(transport, server_env, tmp_path) as client:
        noted = await call_ok(client, "note", {"initiative": INITIATIVE, "text": body})
        node_id = noted["data"]["primary"]["id"]
        arguments: dict[str, Any] = {"initiative": INITIATIVE, "node": node_id, "budget_chars": 64000}
        pieces: list[str] = []
        for _ in range(len(body) // 512 + 2):
            page = await call_ok(client, "read", arguments)
            [hit] = page["data"]["hits"]
            assert hit["id"] == node_id
            pieces.append(hit["body"])
            if not page["continuation"]:
                break
            arguments = page["continuation"]["next_arguments"]
        assert len(pieces) > 1, "a body over the budget is paged"
        assert "".join(pieces) == body
