"""Memory moved between initiatives keeps its place (decision 311): tasks merged or attached onto
a board without their column are put on it, a node detached from an initiative gives up its role
there, a rename does not split a project across spellings, and `changes` says what moved."""

from __future__ import annotations

from typing import Any

from tests.working.conftest import Call


def _tasks(call: Call, initiative: str) -> list[str]:
    sections = call("context", initiative=initiative)["data"]["sections"]
    return [i["name"] for s in sections if s["name"] == "tasks" for i in s["items"]]


def _status(call: Call, initiative: str, name: str) -> Any:
    return call("read", initiative=initiative, node=name)["data"]["hits"][0]["status"]


def test_tasks_merged_or_attached_onto_another_board_are_on_it(call: Call) -> None:
    cols = [{"key": "todo"}, {"key": "doing"}, {"key": "done"}]
    call("initiative", initiative="alpha", action="set_board", columns=cols)
    call("task", initiative="alpha", text="write the lexer", name="lexer")
    call("task", initiative="beta", text="ship beta", name="ship")
    call("task", initiative="beta", text="fix the beta CI", name="ci", status="in-progress")
    call("task", initiative="beta", text="write the beta notes", name="notes", status="done")
    attached = call("initiative", initiative="alpha", action="attach", node={"initiative": "beta", "name": "ci"})
    assert [i["code"] for i in attached["issues"]] == ["tasks_moved"]
    assert _status(call, "alpha", "ci") == "todo"
    merged = call("initiative", initiative="beta", action="merge", to="alpha")
    assert merged["state"] == "applied" and [i["code"] for i in merged["issues"]] == ["tasks_moved"]
    assert sorted(_tasks(call, "alpha")) == ["ci", "lexer", "ship"]
    assert _status(call, "alpha", "ship") == "todo" and _status(call, "alpha", "notes") == "done"
    assert call("task_update", initiative="alpha", task="ship", status="doing")["state"] == "applied"


def test_a_node_detached_from_an_initiative_gives_up_its_role_there(call: Call) -> None:
    call("note", initiative="web", text="handoff: login half done", name="handoff", options={"slot": "handoff"})
    call("note", initiative="api", text="the api scope")
    attached = call("initiative", initiative="api", action="attach", node={"initiative": "web", "name": "handoff"})
    assert attached["data"]["changes"] == [{"field": "initiatives", "before": ["web"], "after": ["web", "api"]}]
    detached = call("initiative", initiative="web", action="detach", node={"initiative": "api", "name": "handoff"})
    assert detached["data"]["changes"] == [{"field": "initiatives", "before": ["web", "api"], "after": ["api"]}]
    assert [s["slot"] for s in detached["data"]["slots"]] == ["handoff"]
    assert call("current_state", initiative="web", slot="handoff")["data"]["status"] != "current"


def test_a_rename_to_another_spelling_of_an_existing_initiative_is_refused(call: Call) -> None:
    call("note", initiative="alpha", text="x")
    call("note", initiative="gamma", text="y")
    refused = call("initiative", initiative="gamma", action="rename", to="Alpha")
    assert refused["state"] == "rejected" and refused["issues"][0]["field"] == "to"
    assert "'alpha'" in refused["issues"][0]["message"]
    assert call("initiative", initiative="alpha", action="rename", to="Alpha")["state"] == "applied"
    assert sorted(i["name"] for i in call("initiatives")["data"]["initiatives"]) == ["Alpha", "gamma"]
