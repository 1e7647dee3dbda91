"""Two ordinary lifecycle calls in a row must leave memory saying what is current (the lifecycle
probe, session 41; decision 376): a refuted claim settled read as a current finding; a successor
made in one initiative left another initiative's role with the node it replaced; a `supersedes`
link the other way round left both nodes superseded and nothing current; `context` listed falsified
decisions and tasks as in force. Both backends."""

from __future__ import annotations

from typing import Any

import pytest

from tests.working.conftest import Call


def _id(answer: dict[str, Any]) -> str:
    assert answer["state"] == "applied", answer["issues"]
    node: str = answer["data"]["primary"]["id"]
    return node


def _currentness(call: Call, node: str, initiative: str = "p") -> str:
    hit: str = call("read", initiative=initiative, node={"id": node})["data"]["hits"][0]["currentness"]
    return hit


@pytest.mark.parametrize("how", ["verdict", "initial_status"])
def test_a_refuted_claim_settled_stays_refuted(call: Call, how: str) -> None:
    text = "the memory leak is in the image cache"
    if how == "verdict":
        claim = _id(call("claim", initiative="p", text=text))
        assert call("verdict", initiative="p", hypothesis={"id": claim}, status="refuted")["state"] == "applied"
    else:
        claim = _id(call("claim", initiative="p", text=text, initial_status="refuted"))
    settled = _id(call("evolve", initiative="p", mode="settle", source={"id": claim}))
    assert _currentness(call, settled) == "refuted"
    assert call("search", initiatives=["p"], text="memory leak")["data"]["hits"][0]["currentness"] == "refuted"
    state = call("current_state", initiative="p", node={"id": claim})["data"]
    assert state["status"] != "current", state


@pytest.mark.parametrize("mode", ["supersede", "settle"])
def test_a_successor_takes_its_sources_roles_in_every_initiative_it_joins(call: Call, mode: str) -> None:
    source = _id(call("note", initiative="p", text="prod runs on host-a"))
    assert call("initiative", initiative="q", action="attach", node={"id": source})["state"] == "applied"
    for initiative in ("p", "q"):
        assert call("slot", initiative=initiative, slot="prod-state", node={"id": source})["state"] == "applied"
    extra = {"new_body": "prod runs on host-b"} if mode == "supersede" else {}
    successor = _id(call("evolve", initiative="p", mode=mode, source={"id": source}, **extra))
    for initiative in ("p", "q"):
        state = call("current_state", initiative=initiative, slot="prod-state")["data"]
        assert state["status"] == "current" and state["current"]["id"] == successor, (initiative, state)


def test_a_supersedes_link_the_other_way_round_decides_instead_of_making_a_cycle(call: Call) -> None:
    old = _id(call("note", initiative="p", text="the api rate limit is 100 per minute"))
    new = _id(
        call("evolve", initiative="p", mode="supersede", source={"id": old}, new_body="the api rate limit is 500")
    )
    back = call("link", initiative="p", **{"from": {"id": old}, "to": {"id": new}}, edge_type="supersedes", weight=1)
    assert back["state"] == "applied"
    assert [i["code"] for i in back["issues"]] == ["supersession_reversed"]
    assert _currentness(call, old) == "current" and _currentness(call, new) == "superseded"
    assert [h["id"] for h in call("search", initiatives=["p"], text="rate limit")["data"]["hits"]] == [old]
    assert call("current_state", initiative="p", node={"id": new})["data"]["current"]["id"] == old


def test_context_leaves_out_decisions_and_tasks_that_evidence_falsifies(call: Call) -> None:
    decided = _id(call("note", initiative="p", text="we ship on Fridays", kind="decision"))
    task = _id(call("task", initiative="p", text="migrate the queue to kafka"))
    kept = _id(call("note", initiative="p", text="we review every change", kind="decision"))
    for node in (decided, task):
        evidence = _id(call("note", initiative="p", text=f"evidence against {node}"))
        falsified = {"from": {"id": evidence}, "to": {"id": node}, "edge_type": "falsifies", "weight": 1}
        assert call("link", initiative="p", **falsified)["state"] == "applied"
    sections = {
        s["name"]: s for s in call("context", initiative="p", sections=["decisions", "tasks"])["data"]["sections"]
    }
    assert [n["id"] for n in sections["decisions"]["items"]] == [kept] and sections["decisions"]["total"] == 1
    assert sections.get("tasks", {"items": []})["items"] == []


@pytest.mark.parametrize("mode", ["supersede", "settle"])
def test_a_successor_takes_a_role_its_source_holds_where_it_is_no_member(call: Call, mode: str) -> None:
    """`slot` gives `q`'s role to a node only in `p`; the successor made in `p` takes it too, and the
    answer lists the call's initiative's slot changes only (review, session 41)."""
    source = _id(call("note", initiative="p", text="prod runs on host-a"))
    for initiative in ("p", "q"):
        assert call("slot", initiative=initiative, slot="prod-state", node={"id": source})["state"] == "applied"
    extra = {"new_body": "prod runs on host-b"} if mode == "supersede" else {}
    made = call("evolve", initiative="p", mode=mode, source={"id": source}, **extra)
    successor = _id(made)
    assert [s["slot"] for s in made["data"]["slots"]] == ["prod-state"]
    state = call("current_state", initiative="q", slot="prod-state")["data"]
    assert state["status"] == "current" and state["current"]["id"] == successor, state


def test_an_open_claim_that_evidence_falsifies_stays_listed_for_its_verdict(call: Call) -> None:
    claim = _id(call("claim", initiative="p", text="the leak is in the cache"))
    evidence = _id(call("note", initiative="p", text="the heap dump shows no cache growth"))
    falsified = {"from": {"id": evidence}, "to": {"id": claim}, "edge_type": "falsifies", "weight": 1}
    assert call("link", initiative="p", **falsified)["state"] == "applied"
    [claims] = call("context", initiative="p", sections=["claims"])["data"]["sections"][1:]
    assert claims["name"] == "claims" and [n["id"] for n in claims["items"]] == [claim], claims
