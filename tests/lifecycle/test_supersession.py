"""Supersession, verdicts and currentness as an agent sees them (issue: knowledge lifecycle)."""

from __future__ import annotations

from typing import Any

import pytest

from kaeru.mcp.adapter import ToolRegistry
from kaeru.mcp.render import compact
from kaeru.mcp.server import build_server
from kaeru.service import Service


@pytest.fixture
def call(service: Service) -> Any:
    registry: ToolRegistry = build_server(service).registry

    def run(tool: str, **args: Any) -> dict[str, Any]:
        envelope = registry.run(tool, {"initiative": "proj", **args} if tool != "search" else args)
        return envelope

    return run


def test_three_supersedes_leave_only_the_newest_current(call: Any) -> None:
    first = call("note", text="The staging database listens on port 5432")["data"]["primary"]["id"]
    second = call("evolve", mode="supersede", source=first, new_body="The staging database listens on port 6432")
    third = call(
        "evolve",
        mode="supersede",
        source=second["data"]["primary"]["id"],
        new_body="The staging database listens on port 7432",
    )
    newest = third["data"]["primary"]["id"]
    middle = second["data"]["primary"]["id"]

    preferred = call("search", initiatives=["proj"], text="staging database port")
    assert [h["id"] for h in preferred["data"]["hits"]] == [newest]
    assert {"section": "hits", "count": 2, "reason": "superseded"} in preferred["coverage"]["omitted"]

    everything = call("search", initiatives=["proj"], text="staging database port", filters={"current": "all"})
    flags = {h["id"]: h["currentness"] for h in everything["data"]["hits"]}
    assert flags == {first: "superseded", middle: "superseded", newest: "current"}

    state = call("current_state", node=first)["data"]
    assert state["status"] == "current" and state["current"]["id"] == newest
    assert [p["id"] for p in state["predecessors"]] == [middle, first]
    assert all(e["edge_type"] == "supersedes" for e in state["edges"]) and len(state["edges"]) == 2

    oldest = call("read", node=first)["data"]["hits"][0]
    assert oldest["currentness"] == "superseded" and oldest["successors"] == [middle]


def test_refuting_a_claim_with_a_method_records_the_experiment(call: Any) -> None:
    claim = call("claim", text="WAL mode keeps p95 writes under 2 ms")
    hypothesis = claim["data"]["primary"]["id"]
    verdict = call("verdict", hypothesis=hypothesis, status="refuted", evidence={"method": "soak test, 8 writers"})
    assert verdict["state"] == "applied"
    (evidence,) = verdict["data"]["evidence"]
    assert evidence["relation"] == "falsifies"

    hit = call("read", node=hypothesis, neighbours=True)["data"]
    assert hit["hits"][0]["currentness"] == "refuted" and hit["hits"][0]["status"] == "refuted"
    experiment = call("read", node=evidence["id"])["data"]["hits"][0]
    assert experiment["node_type"] == "experiment"
    assert {"from": evidence["id"], "to": hypothesis, "edge_type": "falsifies"}.items() <= next(
        e for e in hit["edges"] if e["edge_type"] == "falsifies"
    ).items()

    history = call("trail", node=hypothesis, kind="history")["data"]["entries"]
    status_changes = [c for e in history for c in e.get("changes", []) if c["field"] == "status"]
    assert status_changes[-1] == {"field": "status", "before": "open", "after": "refuted"}
    assert any(
        e["kind"] == "edge" and e["edge"]["edge_type"] == "falsifies" and e["action"] == "added" for e in history
    )


def test_taking_a_slot_supersedes_and_cools_the_previous_holder(call: Any) -> None:
    old = call("note", text="handoff: finish the migration runner")["data"]["primary"]["id"]
    taken = call("slot", slot="handoff", node=old, expected_slot_revision="0")
    revision = taken["data"]["slots"][0]["revision"]
    new = call("note", text="handoff: write the PostgreSQL store")["data"]["primary"]["id"]
    stale = call("slot", slot="handoff", node=new, expected_slot_revision="0")
    assert stale["state"] == "rejected" and stale["issues"][0]["code"] == "slot_conflict"
    assert stale["issues"][0]["retryable"] is True
    assert call("read", node=new)["data"]["hits"][0]["currentness"] == "current"

    moved = call("slot", slot="handoff", node=new, expected_slot_revision=revision)
    assert moved["state"] == "applied"
    previous = call("read", node=old)["data"]["hits"][0]
    assert previous["layer"] == "cold" and previous["currentness"] == "superseded" and previous["successors"] == [new]
    state = call("current_state", slot="handoff")["data"]
    assert state["status"] == "current" and state["current"]["id"] == new
    assert [p["id"] for p in state["predecessors"]] == [old]


def test_settle_keeps_provenance_initiatives_and_retracts_the_draft(call: Any) -> None:
    source = call("note", text="RFC 9562 defines UUIDv7", kind="reference")["data"]["primary"]["id"]
    draft = call(
        "note",
        text="draft: use UUIDv7 ids everywhere",
        kind="draft",
        link_to=source,
        edge_type="derived_from",
        weight=0.9,
    )["data"]["primary"]["id"]
    settled = call("evolve", mode="settle", source=draft)
    successor = settled["data"]["primary"]["id"]
    node = call("read", node=successor)["data"]["hits"][0]
    assert node["tier"] == "archival" and node["node_type"] == "idea" and node["initiatives"] == ["proj"]
    ancestry = call("trail", node=successor, kind="provenance")["data"]["entries"]
    assert [a["node"]["id"] for a in ancestry] == [source]
    gone = call("read", node=draft)
    assert gone["state"] == "rejected" and gone["issues"][0]["code"] == "not_found"
    assert call("search", initiatives=["proj"], text="draft UUIDv7")["data"]["hits"][0]["id"] == successor


def test_two_live_successors_are_a_conflict_with_no_current_version(call: Any) -> None:
    """A node superseded by two notes that neither supersedes the other: `current_state` answers
    `conflict` naming both candidates and the edges that decided it, and no current version."""
    old = call("note", text="the build listens on port 8080")["data"]["primary"]["id"]
    one = call("evolve", mode="supersede", source=old, new_body="the build listens on port 8081")["data"]["primary"]
    other = call("note", text="the build listens on port 9090")["data"]["primary"]["id"]
    linked = call("link", action="add", **{"from": {"id": other}}, to={"id": old}, edge_type="supersedes", weight=1.0)
    assert linked["state"] == "applied"
    state = call("current_state", node={"id": old})
    assert state["state"] == "ok"
    data = state["data"]
    assert data["status"] == "conflict" and data["current"] is None
    assert data["subject"]["id"] == old
    assert sorted(data["candidates"]) == sorted([one["id"], other])
    assert {(e["from"], e["to"]) for e in data["edges"]} == {(one["id"], old), (other, old)}
    text = compact(state)  # what an agent reads by default (KAERU_TEXT=compact)
    assert "conflict" in text.splitlines()[0]
    assert f"candidates: {', '.join(data['candidates'])}" in text


def test_forget_without_a_reason_is_refused_and_the_node_stays(call: Any) -> None:
    """The reason is kept in the audit record: a blank one is refused and nothing is forgotten."""
    node_id = call("note", text="the build cache lives on the second disk")["data"]["primary"]["id"]
    refused = call("forget", node=node_id, reason="   ")
    assert refused["state"] == "rejected"
    assert (refused["issues"][0]["code"], refused["issues"][0]["field"]) == ("invalid_argument", "reason")
    assert call("read", node=node_id)["state"] == "ok"


def test_forget_hides_a_node_except_from_history(call: Any, service: Service) -> None:
    noted = call("note", text="the deploy key lives in vault path ops/deploy")
    node_id = noted["data"]["primary"]["id"]
    before = service.rt.now().isoformat()
    call("forget", node=node_id, reason="moved to the runbook")
    assert call("search", initiatives=["proj"], text="deploy key")["data"]["hits"] == []
    assert call("read", node=node_id)["state"] == "rejected"
    past = call("read", node=node_id, at=before)
    assert past["state"] == "ok" and past["data"]["hits"][0]["body"].startswith("the deploy key")
    history = call("trail", node=node_id)["data"]["entries"]
    assert history[-1]["action"] == "forgotten"
