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
    assert attached["state"] == "rejected" and attached["issues"][0]["field"] == "node"  # no 'in-progress' here
    assert _status(call, "beta", "ci") == "in-progress"  # still on beta's board
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


def _columns(call: Call, initiative: str) -> list[str]:
    sections = call("context", initiative=initiative)["data"]["sections"]
    return [c["key"] for s in sections if s["name"] == "tasks" for c in s["columns"]]


def test_a_merge_keeps_the_targets_board_or_brings_the_only_one(call: Call) -> None:
    """Decision 314: the target's own board decides its columns (the merged one is forgotten, not a
    second board); a target without one takes the merged initiative's board with its tasks."""
    call("initiative", initiative="a1", action="set_board", columns=[{"key": "todo"}, {"key": "done"}])
    call("task", initiative="a1", text="task of a1", name="t-a1")
    call("initiative", initiative="b1", action="set_board", columns=[{"key": "backlog"}, {"key": "shipped"}])
    call("task", initiative="b1", text="task of b1", name="t-b1")
    assert call("initiative", initiative="a1", action="merge", to="b1")["state"] == "applied"
    assert _columns(call, "b1") == ["backlog", "shipped"]
    assert sorted(_tasks(call, "b1")) == ["t-a1", "t-b1"] and _status(call, "b1", "t-a1") == "backlog"
    boards = call("search", initiatives=["b1"], filters={"types": ["board"]})["data"]["hits"]
    assert len(boards) == 1
    call(
        "initiative", initiative="a2", action="set_board", columns=[{"key": "todo"}, {"key": "review"}, {"key": "done"}]
    )
    call("task", initiative="a2", text="task of a2", name="t-a2", status="review")
    call("note", initiative="b2", text="b2 has no board yet")
    assert call("initiative", initiative="a2", action="merge", to="b2")["state"] == "applied"
    assert _columns(call, "b2") == ["todo", "review", "done"]
    assert _status(call, "b2", "t-a2") == "review" and _tasks(call, "b2") == ["t-a2"]
