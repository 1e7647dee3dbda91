"""Tasks on a board with editable columns, and reminders that fire on their day for their window."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from kaeru.service import grants
from tests.working.conftest import Call, Clock


def _ids(envelope: dict[str, Any], section: str) -> list[str]:
    return [i["id"] for s in envelope["data"]["sections"] if s["name"] == section for i in s["items"]]


def test_board_columns_are_strict_and_editable(call: Call) -> None:
    task = call("task", initiative="b", text="write the scale-out test")["data"]["primary"]
    rejected = call("task_update", initiative="b", task=task["id"], status="review")
    assert rejected["state"] == "rejected" and rejected["issues"][0]["field"] == "status"
    assert "open, in-progress, done" in rejected["issues"][0]["message"]

    edit = call(
        "initiative",
        initiative="b",
        action="set_board",
        columns=[{"key": "open", "label": "To do"}, {"key": "review", "label": "In review"}, {"key": "done"}],
    )
    assert edit["state"] == "applied"
    moved = call("task_update", initiative="b", task=task["id"], status="review")
    assert moved["data"]["changes"] == [{"field": "status", "before": "open", "after": "review"}]
    answer = call("context", initiative="b")
    tasks = next(s for s in answer["data"]["sections"] if s["name"] == "tasks")
    assert [c["key"] for c in tasks["columns"]] == ["open", "review", "done"]
    assert task["id"] in _ids(answer, "tasks")
    done = call("task_update", initiative="b", task=task["id"], status="done")
    assert done["state"] == "applied"
    assert task["id"] not in _ids(call("context", initiative="b"), "tasks")
    gone = call("task_update", initiative="b", task=task["id"], status="in-progress")
    assert gone["state"] == "rejected" and "open, review, done" in gone["issues"][0]["message"]


def test_overdue_tasks_come_first(call: Call, clock: Clock) -> None:
    later = call("task", initiative="b", text="due later", due="2026-04-01")["data"]["primary"]["id"]
    undated = call("task", initiative="b", text="no due date")["data"]["primary"]["id"]
    overdue = call("task", initiative="b", text="was due last week", due="2026-02-20")["data"]["primary"]["id"]
    answer = call("context", initiative="b")
    assert _ids(answer, "tasks") == [overdue, later, undated]
    tasks = next(s for s in answer["data"]["sections"] if s["name"] == "tasks")
    assert tasks["overdue"] == [overdue]


def test_reminders_fire_from_their_day_for_their_window(call: Call, clock: Clock) -> None:
    node = call(
        "note", initiative="r", text="check the certificate expiry", reminder={"after": "2026-03-05", "window_days": 2}
    )["data"]["primary"]["id"]
    assert node not in _ids(call("context", initiative="r"), "reminders"), "not before its day"
    clock.advance(days=4)  # 2026-03-06: first sight, the window starts now
    revision = call("read", initiative="r", node=node)["data"]["hits"][0]["revision"]
    first = call("context", initiative="r")
    assert node in _ids(first, "reminders")
    clock.advance(days=1)  # 2026-03-07: inside the 2-day window
    assert node in _ids(call("context", initiative="r"), "reminders")
    clock.advance(days=1)  # 2026-03-08: the window is over (counted from the first sight, once)
    assert node not in _ids(call("context", initiative="r"), "reminders")
    # The first sight is the initiative's record, not a revision of the node: an agent that read it
    # before another agent's `context` showed it still edits it with the revision it read.
    assert call("read", initiative="r", node=node)["data"]["hits"][0]["revision"] == revision
    edited = call("revise", initiative="r", node=node, patch={"body": "check the expiry"}, expected_revision=revision)
    assert edited["state"] == "applied", edited["issues"]
    # A reminder set again starts again.
    call("revise", initiative="r", node=node, patch={"reminder": {"after": "2026-03-09", "window_days": 1}})
    clock.advance(days=1)  # 2026-03-09
    assert node in _ids(call("context", initiative="r"), "reminders")


def test_a_reminder_whose_window_runs_past_the_calendar_keeps_context_working(call: Call, clock: Clock) -> None:
    """`window_days` may be as large as the schema's 2**31-1: the window then never closes, and
    `context` — every agent's first call — keeps answering with its rules and the reminder."""
    rule = call("note", initiative="r", text="never deploy on fridays", kind="rule")["data"]["primary"]["id"]
    node = call(
        "note", initiative="r", text="renew the cert", reminder={"after": "2026-03-01", "window_days": 2**31 - 1}
    )["data"]["primary"]["id"]
    for _ in range(3):  # the first call stamps `seen`; the later ones count the window from it
        answer = call("context", initiative="r")
        assert answer["state"] == "ok", answer["issues"]
        assert node in _ids(answer, "reminders") and rule in _ids(answer, "rules")
        clock.advance(days=400)


def test_a_tasks_reminder_is_delivered_in_reminders_then_the_task_returns_to_its_board(
    call: Call, clock: Clock
) -> None:
    """A due reminder on an open task is delivered like any other: in `reminders`, stamped at first
    sight, for its window; the tasks section neither shows it twice nor counts it meanwhile."""
    task = call(
        "task", initiative="r", text="renew the certificate", reminder={"after": "2026-03-04", "window_days": 2}
    )
    other = call("task", initiative="r", text="rotate the keys")
    node, plain = task["data"]["primary"]["id"], other["data"]["primary"]["id"]
    before = call("context", initiative="r")
    assert _ids(before, "tasks") == [plain, node] and node not in _ids(before, "reminders")
    clock.advance(days=2)  # 2026-03-04: its day
    due = call("context", initiative="r")
    assert _ids(due, "reminders") == [node]
    assert _ids(due, "tasks") == [plain]
    tasks = next(s for s in due["data"]["sections"] if s["name"] == "tasks")
    assert tasks["total"] == 1
    clock.advance(days=2)  # 2026-03-06: the window is over
    after = call("context", initiative="r")
    assert node not in _ids(after, "reminders") and node in _ids(after, "tasks")


def test_a_role_holders_reminder_is_delivered_and_the_role_still_names_it(call: Call, clock: Clock) -> None:
    held = call(
        "note",
        initiative="r",
        text="the release checklist for 2.0",
        reminder={"after": "2026-03-02", "window_days": 1},
        options={"slot": "release-plan"},
    )
    node = held["data"]["primary"]["id"]
    answer = call("context", initiative="r")
    assert _ids(answer, "reminders") == [node]
    slots = next(s for s in answer["data"]["sections"] if s["name"] == "slots")
    assert node not in [i["id"] for i in slots["items"]], "shown once, under reminders"
    assert slots["holders"] == {"release-plan": node}


def test_due_as_a_future_offset_is_that_many_days_or_weeks_from_today(call: Call, clock: Clock) -> None:
    """`due="3d"` / `"2w"` is a day counted from today (2026-03-02); hours are no day and are refused."""
    in_days = call("task", initiative="b", text="answer the review", due="3d")
    in_weeks = call("task", initiative="b", text="ship the release", due="2w")
    due = [call("read", initiative="b", node=t["data"]["primary"]["id"]) for t in (in_days, in_weeks)]
    assert [d["data"]["hits"][0]["properties"]["due"] for d in due] == ["2026-03-05", "2026-03-16"]
    worded = [call("task", initiative="b", text=f"in words {d}", due=d) for d in ("3 days", "in 2 Weeks", "1 day")]
    read_back = [call("read", initiative="b", node=t["data"]["primary"]["id"]) for t in worded]
    assert [d["data"]["hits"][0]["properties"]["due"] for d in read_back] == ["2026-03-05", "2026-03-16", "2026-03-03"]
    hours = call("task", initiative="b", text="too soon to be a day", due="5h")
    assert hours["state"] == "rejected"
    assert hours["issues"][0]["field"] == "due" and "3d, 2w" in hours["issues"][0]["message"]
    # A time ago is no due day (it counted back from 1970 once "ago" was a moment: decision 284).
    ago = call("task", initiative="b", text="already late", due="3d ago")
    assert ago["state"] == "rejected" and ago["issues"][0]["field"] == "due"
    # A word that is no day is told the forms a due takes, not those of a moment past ("2d ago", now).
    worded_day = call("task", initiative="b", text="some day", due="tomorrow")["issues"][0]
    assert worded_day["field"] == "due" and "'tomorrow'" in worded_day["message"]
    assert "3d, 2w" in worded_day["message"] and "ago" not in worded_day["message"]
    assert len(_ids(call("context", initiative="b"), "tasks")) == 5, "the refused tasks were not written"


def test_a_task_can_carry_a_reminder_and_a_blank_task_is_refused(call: Call) -> None:
    task = call(
        "task", initiative="r", text="renew the certificate", reminder={"after": "2026-03-03", "window_days": 2}
    )
    node = task["data"]["primary"]["id"]
    stored = call("read", initiative="r", node=node)["data"]["hits"][0]["properties"]["reminder"]
    assert stored == {"after": "2026-03-03", "window_days": 2}
    blank = call("task", initiative="r", text="   ")
    assert blank["state"] == "rejected" and blank["issues"][0]["field"] == "text"


def test_editing_the_board_again_edits_the_same_board(call: Call) -> None:
    """A second edit changes the one board node (same id, new columns); the same columns again are
    `unchanged`; duplicate keys are refused and leave the board as it was."""
    cols = [
        {"key": "open", "label": "To do"},
        {"key": "review", "label": "In review"},
        {"key": "done", "label": "Done"},
    ]
    first = call("initiative", initiative="b", action="set_board", columns=cols)
    assert first["state"] == "applied"
    board = first["data"]["primary"]["id"]
    same = call("initiative", initiative="b", action="set_board", columns=cols)
    assert same["state"] == "unchanged"
    fewer = [{"key": "open", "label": "To do"}, {"key": "done", "label": "Done"}]
    second = call("initiative", initiative="b", action="set_board", columns=fewer)
    assert second["state"] == "applied" and second["data"]["primary"]["id"] == board
    assert second["data"]["changes"] == [{"field": "columns", "before": cols, "after": fewer}]
    duplicate = call("initiative", initiative="b", action="set_board", columns=[{"key": "open"}, {"key": "open"}])
    assert duplicate["state"] == "rejected" and duplicate["issues"][0]["field"] == "columns"
    tasks = next(s for s in call("context", initiative="b")["data"]["sections"] if s["name"] == "tasks")
    assert [c["key"] for c in tasks["columns"]] == ["open", "done"]
    boards = call("search", initiatives=["b"], filters={"types": ["board"]})
    assert [h["id"] for h in boards["data"]["hits"]] == [board], "one board node, edited in place"


def test_tasks_of_a_removed_column_are_moved_not_lost(call: Call, clock: Clock) -> None:
    """A board edit that drops columns moves their tasks (decision 295): an overdue open task to the
    new first column, still first in `context` and counted by `reflect`; a finished one to the new
    closing column, still finished. Left in a column the board no longer has, they were on no list."""
    late = call("task", initiative="b", text="renew the domain", due="2026-03-01")["data"]["primary"]["id"]
    busy = call("task", initiative="b", text="rotate the keys", status="in-progress")["data"]["primary"]["id"]
    done = call("task", initiative="b", text="write the notes", status="done")["data"]["primary"]["id"]
    kept = call("task", initiative="b", text="review the docs")["data"]["primary"]["id"]
    clock.advance(days=3)
    cols = [{"key": "open"}, {"key": "doing"}, {"key": "shipped"}]
    edit = call("initiative", initiative="b", action="set_board", columns=cols)
    assert edit["state"] == "applied"
    assert [i["code"] for i in edit["issues"]] == ["tasks_moved"]
    assert "1 from 'done' to 'shipped'" in edit["issues"][0]["message"]
    assert "1 from 'in-progress' to 'open'" in edit["issues"][0]["message"]
    assert {a["id"] for a in edit["data"]["affected"]} >= {busy, done}
    statuses = {i: call("read", initiative="b", node={"id": i})["data"]["hits"][0] for i in (late, busy, done, kept)}
    assert {i: n["status"] for i, n in statuses.items()} == {late: "open", busy: "open", done: "shipped", kept: "open"}
    assert "status:shipped" in statuses[done]["tags"] and statuses[done]["properties"].get("done_at")
    answer = call("context", initiative="b")
    assert _ids(answer, "tasks")[0] == late and set(_ids(answer, "tasks")) == {late, busy, kept}
    assert call("reflect", initiative="b")["data"]["counts"].get("overdue_task") == 1
    assert call("task_update", initiative="b", task=busy, status="doing")["state"] == "applied"
    again = call("initiative", initiative="b", action="set_board", columns=[*cols, {"key": "parked"}])
    # Nothing moves; `shipped`, no longer the last column of a board without `done`, no longer
    # closes a task, and the finished one there is open again (decision 460 says so).
    assert again["state"] == "applied" and [i["code"] for i in again["issues"]] == ["closing_columns_changed"]


def test_a_task_named_board_is_the_one_its_name_calls(call: Call) -> None:
    """The board is a node the server names `board` (decision 299): an agent's own node of that name
    is the one the name resolves to, not `ambiguous_ref` against the board."""
    call(
        "initiative", initiative="b", action="set_board", columns=[{"key": "open"}, {"key": "review"}, {"key": "done"}]
    )
    task = call("task", initiative="b", text="buy a whiteboard for the team room", name="board")["data"]["primary"]
    moved = call("task_update", initiative="b", task="board", status="done")
    assert moved["state"] == "applied", moved["issues"]
    assert moved["data"]["primary"]["id"] == task["id"]


def test_a_read_only_tokens_look_does_not_start_a_reminders_window(call: Call, clock: Clock) -> None:
    """A read-only token writes nothing, `context` included (grants probe, session 41; decision 365):
    a person's glance through the viewer or a read-only client started the window, which could close
    before the agent's own re-entry saw the reminder. The look still shows it."""
    node = call("note", initiative="r", text="renew the domain", reminder={"after": "2026-03-05", "window_days": 1})[
        "data"
    ]["primary"]["id"]
    clock.advance(days=4)  # 2026-03-06: due
    with grants.acting(grants.Principal("reader", None, read_only=True)):
        assert node in _ids(call("context", initiative="r"), "reminders")
    clock.advance(days=2)  # 2026-03-08: past a window the look would have started
    assert node in _ids(call("context", initiative="r"), "reminders"), "the agent's first sight starts it"
    audit = call("search", initiatives=["r"], filters={"types": ["audit_event"]}, limit=50)["data"]["hits"]
    assert "reader" not in json.dumps(audit)


def test_a_reminder_first_seen_by_a_clock_set_ahead_still_runs_out(call: Call, clock: Clock) -> None:
    """A `context` on a machine whose clock was 20 days ahead recorded the reminder's first sight
    20 days on: counted from a day still to come, its 2-day window never ran out once the clock was
    right (decision 405, the clock-skew probe). A first sight in the future counts as none."""
    node = call(
        "note", initiative="r", text="rotate the signing key", reminder={"after": "2026-03-02", "window_days": 2}
    )["data"]["primary"]["id"]
    right = clock.moment
    clock.advance(days=20)  # the clock set ahead: first sight recorded on 2026-03-22
    assert node in _ids(call("context", initiative="r"), "reminders")
    clock.moment = right + timedelta(hours=1)  # corrected: 2026-03-02 again
    assert node in _ids(call("context", initiative="r"), "reminders")  # first really seen today
    clock.advance(days=1)
    assert node in _ids(call("context", initiative="r"), "reminders")
    clock.advance(days=1)  # two days after the real first sight: over
    assert node not in _ids(call("context", initiative="r"), "reminders")
