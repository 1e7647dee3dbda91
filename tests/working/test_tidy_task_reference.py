"""The check that a reference names a task (or a checklist, as a scope of work) is the tasks module's,
beside `check_status`: it lived in `capture`, and `context` imported the capture use cases to reach
it. Every door that takes a task reference answers with its one wording."""

from __future__ import annotations

from typing import Any

from kaeru.service import capture, tasks
from tests.working.conftest import Call


def _refusal(answer: dict[str, Any], field: str) -> str:
    assert answer["state"] == "rejected", answer
    [issue] = answer["issues"]
    assert (issue["code"], issue["field"]) == ("invalid_argument", field), issue
    return str(issue["message"])


def test_every_door_that_takes_a_task_reference_refuses_with_the_tasks_check(call: Call) -> None:
    assert callable(tasks.require_task) and not hasattr(capture, "require_task")
    note = call("note", initiative="g", text="the pump hums", name="hum")["data"]["primary"]["id"]
    plan = call("note", initiative="g", kind="checklist", text="1. drain 2. swap", name="plan")["data"]["primary"]
    scoped = _refusal(call("context", initiative="g", task=note, sections=["rules"]), "task")
    rule = call("note", initiative="g", kind="rule", text="torque bolts to 40 Nm", applicability={"task": note})
    assert _refusal(rule, "applicability.task") == scoped
    assert scoped.startswith("'hum' is of type ") and scoped.endswith(", not a task or checklist")
    # A checklist scopes work (`context`, a rule), but `task_update` moves tasks only.
    assert call("context", initiative="g", task=plan["id"], sections=["rules"])["state"] == "ok"
    moved = call("task_update", initiative="g", task=plan["id"], status="done")
    assert _refusal(moved, "task") == "'plan' is of type checklist, not a task"
