"""A superseded task, claim or slot holder hands its place on (decision 294): the corrected task is
on the board in its column, the corrected claim among the open ones, the corrected holder holds
the role, and a role handed back to an earlier holder leaves one current holder, not two nodes
superseding each other."""

from __future__ import annotations

from typing import Any

from tests.working.conftest import Call


def _section(envelope: dict[str, Any], name: str) -> list[str]:
    return [item["id"] for s in envelope["data"]["sections"] if s["name"] == name for item in s["items"]]


def _id(envelope: dict[str, Any]) -> str:
    assert envelope["state"] == "applied", envelope
    return str(envelope["data"]["primary"]["id"])


def _node(call: Call, node_id: str) -> dict[str, Any]:
    return dict(call("read", initiative="p", node={"id": node_id})["data"]["hits"][0])


def test_a_superseded_task_hands_its_column_and_its_place_on_the_board(call: Call) -> None:
    old = _id(call("task", initiative="p", text="add an index on cart_items", name="add-index", due="2026-03-01"))
    call("task_update", initiative="p", task=old, status="in-progress")
    new = _id(call("evolve", initiative="p", mode="supersede", source=old, new_body="add a composite index"))
    assert _node(call, new)["status"] == "in-progress"
    answer = call("context", initiative="p")
    assert _section(answer, "tasks") == [new]
    call("task_update", initiative="p", task=new, status="done")
    assert _section(call("context", initiative="p"), "tasks") == []
    assert call("reflect", initiative="p")["data"]["counts"].get("overdue_task") is None


def test_a_note_superseded_by_a_task_is_on_the_board(call: Call) -> None:
    note = _id(call("note", initiative="p", text="the importer drops empty lines"))
    task = _id(call("evolve", initiative="p", mode="supersede", source=note, new_type="task", new_body="fix it"))
    node = _node(call, task)
    assert node["status"] == "open" and "kind:task" in node["tags"] and "status:open" in node["tags"]
    assert task in _section(call("context", initiative="p"), "tasks")


def test_a_superseded_claim_is_replaced_among_the_open_claims(call: Call) -> None:
    old = _id(call("claim", initiative="p", text="payment timeouts come from the sandbox rate limit"))
    new = _id(call("evolve", initiative="p", mode="supersede", source=old, new_body="they come from the pool limit"))
    assert _node(call, new)["status"] == "open"
    assert _section(call("context", initiative="p"), "claims") == [new]


def test_superseding_a_slot_holder_hands_the_slot_on(call: Call) -> None:
    old = _id(call("note", initiative="p", text="prod runs v1.4.2", options={"slot": "prod-state"}))
    answer = call("evolve", initiative="p", mode="supersede", source=old, new_body="prod runs v1.5.0")
    new = _id(answer)
    assert [s["slot"] for s in answer["data"]["slots"]] == ["prod-state"]
    state = call("current_state", initiative="p", slot="prod-state")["data"]
    assert state["current"]["id"] == new and state["status"] == "current"


def test_a_slot_handed_back_leaves_one_current_holder(call: Call) -> None:
    first = _id(call("note", initiative="p", text="handoff: login page half done", options={"slot": "handoff"}))
    second = _id(call("note", initiative="p", text="handoff: login done, next signup", options={"slot": "handoff"}))
    third = _id(call("note", initiative="p", text="handoff: signup done, next billing", options={"slot": "handoff"}))
    call("slot", initiative="p", slot="handoff", node={"id": first})  # two hand-overs back
    state = call("current_state", initiative="p", slot="handoff")["data"]
    assert state["current"]["id"] == first and state["current"]["currentness"] == "current"
    assert call("current_state", initiative="p", node={"id": first})["data"]["status"] == "current"
    found = call("search", initiatives=["p"], text="handoff")["data"]["hits"]
    assert [h["id"] for h in found] == [first]
    assert {_node(call, i)["currentness"] for i in (second, third)} == {"superseded"}
