"""Every column from the board's closing one (`done`, else the last) to its end closes a task
(decision 460, amending 30): an agent that adds `dropped` after `done` to abandon a task reads
"the terminal one" as its new column. `dropped` was open work in `context`, in `recall`'s "what
is left to do" and `resume_work`, overdue in `reflect`. And the experiment a `claim {method}`
writes stayed `open` after its claim's verdict, shown in `context` as open work under way."""

from __future__ import annotations

from typing import Any

from tests.working.conftest import Call, Clock, section, section_ids
from tests.working.limited import applied_id

BOARD = [{"key": "open"}, {"key": "in-progress"}, {"key": "done"}, {"key": "dropped"}]


def _node(call: Call, node_id: str, initiative: str = "b") -> dict[str, Any]:
    return dict(call("read", initiative=initiative, node={"id": node_id})["data"]["hits"][0])


def _hits(envelope: dict[str, Any]) -> list[str]:
    assert envelope["state"] == "ok", envelope
    return [h["id"] for h in envelope["data"]["hits"]]


def test_a_task_dropped_after_done_is_closed_everywhere(call: Call, clock: Clock) -> None:
    assert call("initiative", initiative="b", action="set_board", columns=BOARD)["state"] == "applied"
    late = applied_id(call("task", initiative="b", text="evaluate exposing a GraphQL API", due="2026-03-03"))
    left = applied_id(call("task", initiative="b", text="ship the PDF export"))
    clock.advance(days=5)
    dropped = call("task_update", initiative="b", task=late, status="dropped")
    assert dropped["data"]["changes"] == [{"field": "status", "before": "open", "after": "dropped"}]
    assert _node(call, late)["properties"].get("done_at"), "closing records the moment"
    assert section_ids(call("context", initiative="b"), "tasks") == [left]
    assert section(call("context", initiative="b"), "tasks")["overdue"] == []
    assert call("reflect", initiative="b")["data"]["counts"].get("overdue_task") is None
    assert _hits(call("recall", initiatives=["b"], query="what is left to do")) == [left]
    # Written straight into a closing column: finished, and a past due is no warning of lateness.
    shelved = call("task", initiative="b", text="port the CLI to Windows", status="dropped", due="2026-03-01")
    assert shelved["issues"] == [] and _node(call, applied_id(shelved))["properties"].get("done_at")
    # Back to an open column: open again, without its done_at.
    call("task_update", initiative="b", task=late, status="open")
    assert "done_at" not in _node(call, late)["properties"]
    assert late in section_ids(call("context", initiative="b"), "tasks")


def test_resuming_work_the_open_task_leads_the_dropped_ones(call: Call) -> None:
    """`recall resume_work` ranks open tasks first (its `tasks` channel): the dropped ones, newer
    writes, came first as open work and the one task left was last."""
    call("initiative", initiative="b", action="set_board", columns=BOARD)
    left = applied_id(call("task", initiative="b", text="ship the PDF export"))
    for i in range(3):
        call(
            "task_update",
            initiative="b",
            task=applied_id(call("task", initiative="b", text=f"try option {i}")),
            status="dropped",
        )
    assert _hits(call("recall", initiatives=["b"], task_intent="resume_work"))[0] == left


def test_moving_a_finished_task_between_closing_columns_keeps_when_it_was_closed(call: Call, clock: Clock) -> None:
    call("initiative", initiative="b", action="set_board", columns=BOARD)
    task = applied_id(call("task", initiative="b", text="write the migration notes", status="done"))
    closed = _node(call, task)["properties"]["done_at"]
    clock.advance(days=2)
    call("task_update", initiative="b", task=task, status="dropped")
    assert _node(call, task)["properties"]["done_at"] == closed


def test_a_dropped_task_superseded_stays_closed(call: Call) -> None:
    call("initiative", initiative="b", action="set_board", columns=BOARD)
    old = applied_id(call("task", initiative="b", text="try GraphQL", status="dropped"))
    new = applied_id(call("evolve", initiative="b", mode="supersede", source=old, new_body="try GraphQL federation"))
    node = _node(call, new)
    assert node["status"] == "dropped" and node["properties"].get("done_at")
    assert section_ids(call("context", initiative="b"), "tasks") == []


def test_a_board_edit_that_changes_which_columns_close_says_so_and_restamps_the_tasks(call: Call, clock: Clock) -> None:
    """A board without `done` is closed by its last column only: a column added after it takes
    that place, and its tasks were open again without a word, still carrying their `done_at`."""
    cols = [{"key": "todo"}, {"key": "doing"}, {"key": "shipped"}]
    call("initiative", initiative="b", action="set_board", columns=cols)
    shipped = applied_id(call("task", initiative="b", text="ship the invoice export", status="shipped"))
    assert section_ids(call("context", initiative="b"), "tasks") == []
    edit = call("initiative", initiative="b", action="set_board", columns=[*cols, {"key": "parked"}])
    assert edit["state"] == "applied"
    assert [i["code"] for i in edit["issues"]] == ["closing_columns_changed"]
    assert "1 in 'shipped' open again" in edit["issues"][0]["message"]
    assert shipped in {a["id"] for a in edit["data"]["affected"]}
    assert "done_at" not in _node(call, shipped)["properties"]
    assert section_ids(call("context", initiative="b"), "tasks") == [shipped]
    # The other way: a column put after `done` closes its tasks, which record when.
    busy = applied_id(call("task", initiative="b", text="rotate the keys", status="doing"))
    again = call(
        "initiative", initiative="b", action="set_board", columns=[{"key": "todo"}, {"key": "done"}, {"key": "doing"}]
    )
    assert "1 in 'doing' closed" in " ".join(i["message"] for i in again["issues"])
    assert _node(call, busy)["properties"].get("done_at")
    assert busy not in section_ids(call("context", initiative="b"), "tasks")


def test_adding_a_column_after_done_leaves_every_task_where_it_was(call: Call) -> None:
    task = applied_id(call("task", initiative="b", text="write the notes", status="done"))
    edit = call("initiative", initiative="b", action="set_board", columns=BOARD)
    assert edit["state"] == "applied" and edit["issues"] == [] and edit["data"]["affected"] == []
    assert _node(call, task)["properties"].get("done_at")


def test_removing_done_keeps_a_dropped_task_closed(call: Call) -> None:
    call("initiative", initiative="b", action="set_board", columns=BOARD)
    done = applied_id(call("task", initiative="b", text="write the notes", status="done"))
    dropped = applied_id(call("task", initiative="b", text="try GraphQL", status="dropped"))
    edit = call("initiative", initiative="b", action="set_board", columns=[{"key": "open"}, {"key": "dropped"}])
    assert [i["code"] for i in edit["issues"]] == ["tasks_moved"]
    assert _node(call, done)["status"] == "dropped" and _node(call, done)["properties"].get("done_at")
    assert _node(call, dropped)["properties"].get("done_at")
    assert section_ids(call("context", initiative="b"), "tasks") == []


def test_a_board_whose_every_column_closes_a_task_is_refused(call: Call) -> None:
    """A new task goes into the first column: on `done, open` it was closed the moment it was written."""
    call("task", initiative="b", text="write the notes")
    for columns in ([{"key": "done"}, {"key": "open"}], [{"key": "todo"}]):
        refused = call("initiative", initiative="b", action="set_board", columns=columns)
        assert refused["state"] == "rejected" and refused["issues"][0]["field"] == "columns"
        assert "put an open column first" in refused["issues"][0]["message"]
    tasks = section(call("context", initiative="b"), "tasks")
    assert [c["key"] for c in tasks["columns"]] == ["open", "in-progress", "done"]


def test_a_claims_experiment_takes_the_verdict(call: Call) -> None:
    """`claim {method}` writes an experiment under way (`targets`, status `open`); the claim's
    verdict settles it too, so `context` no longer shows it `open` beside the settled claim."""
    made = call(
        "claim",
        initiative="c",
        text="The listing is slow because of an N+1 query.",
        evidence={"method": "count queries with SQL echo"},
    )
    claim = applied_id(made)
    experiment = made["data"]["evidence"][0]["id"]
    assert _node(call, experiment, "c")["status"] == "open"
    proof = applied_id(call("note", initiative="c", text="SQL echo shows 201 queries for 200 invoices."))
    settled = call("verdict", initiative="c", hypothesis=claim, status="supported", evidence={"node": proof})
    assert settled["state"] == "applied"
    assert experiment in {a["id"] for a in settled["data"]["affected"]}
    assert _node(call, experiment, "c")["status"] == "supported"
    shown = {i["id"]: i.get("status") for s in call("context", initiative="c")["data"]["sections"] for i in s["items"]}
    assert shown.get(experiment) != "open"
    assert (
        call("search", initiatives=["c"], filters={"types": ["experiment"], "statuses": ["open"]})["data"]["hits"] == []
    )
