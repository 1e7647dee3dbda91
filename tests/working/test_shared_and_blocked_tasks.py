"""A task on two boards never leaves one's open work silently; what `blocks` links say is said
(blocked tasks in `context`, a cycle, a task closed before its blocker); `reflect` lists the most
overdue tasks first and no task as an orphan; `context` counts every open task and says when the
task it is for is closed; a task search by a status no board has says so. A token limited to some
initiatives is told none of this of a board or node outside them (decision 15.K2)."""

from __future__ import annotations

from typing import Any

from kaeru.service import grants
from tests.working.conftest import Call, Clock

COLS = [{"key": "backlog"}, {"key": "doing"}, {"key": "done"}]


def _tasks(call: Call, initiative: str, **args: Any) -> dict[str, Any]:
    answer = call("context", initiative=initiative, sections=["tasks"], **args)
    return next(s for s in answer["data"]["sections"] if s["name"] == "tasks")


def _codes(answer: dict[str, Any]) -> list[str]:
    return [i["code"] for i in answer["issues"]]


def test_attaching_a_task_never_takes_it_off_its_own_board(call: Call) -> None:
    call("initiative", initiative="team-a", action="set_board", columns=COLS)
    shared = call("task", initiative="team-a", text="shared work", name="shared", status="doing")
    tid = shared["data"]["primary"]["id"]
    call("note", initiative="team-b", text="seed b")
    refused = call("initiative", initiative="team-b", action="attach", node={"id": tid})
    assert refused["state"] == "rejected" and refused["issues"][0]["field"] == "node"
    said = refused["issues"][0]["message"]
    assert "'doing'" in said and "open, in-progress, done" in said and "set_board" in said
    # Attached as it is it would sit on no column of team-b; moved to one, it would leave team-a's board.
    assert "on no column of 'team-b'" in said and "would take it off the board of 'team-a'" in said, said
    assert [i["name"] for i in _tasks(call, "team-a")["items"]] == ["shared"]  # still team-a's open work
    # With the column on both boards it is shared, in the same column on each.
    call("initiative", initiative="team-b", action="set_board", columns=[{"key": "open"}, *COLS])
    attached = call("initiative", initiative="team-b", action="attach", node={"id": tid})
    assert attached["state"] == "applied" and _codes(attached) == []
    assert [(i["name"], i["status"]) for i in _tasks(call, "team-b")["items"]] == [("shared", "doing")]
    assert [i["name"] for i in _tasks(call, "team-a")["items"]] == ["shared"]


def test_moving_a_shared_task_to_a_column_another_board_lacks_says_it_left_that_board(call: Call) -> None:
    call("initiative", initiative="team-a", action="set_board", columns=[*COLS[:2], {"key": "review"}, COLS[2]])
    tid = call("task", initiative="team-a", text="shared work", status="doing")["data"]["primary"]["id"]
    call("initiative", initiative="team-b", action="set_board", columns=COLS)
    assert call("initiative", initiative="team-b", action="attach", node={"id": tid})["state"] == "applied"
    moved = call("task_update", initiative="team-a", task={"id": tid}, status="review")
    assert moved["state"] == "applied" and _codes(moved) == ["left_board"]
    assert "'team-b'" in moved["issues"][0]["message"] and "'review'" in moved["issues"][0]["message"]
    back = call("task_update", initiative="team-a", task={"id": tid}, status="doing")
    assert back["state"] == "applied" and _codes(back) == []


def test_a_board_edit_that_moves_shared_tasks_off_another_board_says_it_left_that_board(call: Call) -> None:
    # Both boards have `doing`; `team-b` has no `open`, where removing `doing` from `team-a` moves its tasks.
    call("initiative", initiative="team-a", action="set_board", columns=[{"key": "open"}, *COLS[1:]])
    call("initiative", initiative="team-b", action="set_board", columns=COLS)
    ids = [call("task", initiative="team-a", text=f"work {n}", status="doing")["data"]["primary"]["id"] for n in "xy"]
    call("task", initiative="team-a", text="team-a's own work", status="doing")
    for tid in ids:
        assert call("initiative", initiative="team-b", action="attach", node={"id": tid})["state"] == "applied"
    assert len(_tasks(call, "team-b")["items"]) == 2
    edit = call("initiative", initiative="team-a", action="set_board", columns=[{"key": "open"}, COLS[2]])
    assert edit["state"] == "applied" and _codes(edit) == ["tasks_moved", "left_board"], edit["issues"]
    said = edit["issues"][1]["message"]
    assert said.startswith("2 task(s)") and "board of 'team-b'" in said and "no column 'open'" in said, said
    assert _tasks(call, "team-b")["items"] == []  # what the warning says: off team-b's open work
    # Moved to a column the other board has, they stay on it: nothing said of it.
    call("initiative", initiative="team-b", action="set_board", columns=[{"key": "open"}, *COLS])
    edit = call("initiative", initiative="team-a", action="set_board", columns=[COLS[0], COLS[2]])
    assert _codes(edit) == ["tasks_moved"] and len(_tasks(call, "team-b")["items"]) == 2, edit["issues"]


def test_context_names_the_open_blockers_of_the_tasks_it_shows(call: Call) -> None:
    ids = {
        n: call("task", initiative="p", text=f"task {n}", name=n)["data"]["primary"]["id"]
        for n in ("schema", "api", "docs", "old")
    }
    call("task_update", initiative="p", task={"id": ids["old"]}, status="done")
    for blocker, blocked in (("schema", "api"), ("old", "docs")):
        link = {"from": {"id": ids[blocker]}, "to": {"id": ids[blocked]}}
        assert call("link", initiative="p", **link, edge_type="blocks", weight=0.8)["state"] == "applied"
    section = _tasks(call, "p")
    assert section["blocked_by"] == {ids["api"]: {ids["schema"]: "schema"}}  # a closed blocker blocks nothing


def test_a_blocks_link_that_closes_a_cycle_is_stored_with_a_warning(call: Call) -> None:
    ids = [call("task", initiative="p", text=f"step {n}", name=n)["data"]["primary"]["id"] for n in "abc"]
    for x, y in ((0, 1), (1, 2)):
        linked = call(
            "link", initiative="p", **{"from": {"id": ids[x]}, "to": {"id": ids[y]}}, edge_type="blocks", weight=0.8
        )
        assert _codes(linked) == []
    closing = call(
        "link", initiative="p", **{"from": {"id": ids[2]}, "to": {"id": ids[0]}}, edge_type="blocks", weight=0.8
    )
    assert closing["state"] == "applied" and _codes(closing) == ["blocks_cycle"]
    assert "'c' blocks 'a' blocks 'b' blocks 'c'" in closing["issues"][0]["message"]


def test_closing_a_task_whose_blocker_is_open_warns(call: Call) -> None:
    blocker = call("task", initiative="p", text="migrate the db", name="migrate")["data"]["primary"]["id"]
    blocked = call("task", initiative="p", text="drop the old table", name="drop")["data"]["primary"]["id"]
    call("link", initiative="p", **{"from": {"id": blocker}, "to": {"id": blocked}}, edge_type="blocks", weight=0.8)
    closed = call("task_update", initiative="p", task={"id": blocked}, status="done")
    assert closed["state"] == "applied" and _codes(closed) == ["still_blocked"]
    assert "'migrate'" in closed["issues"][0]["message"]
    call("task_update", initiative="p", task={"id": blocked}, status="open")
    call("task_update", initiative="p", task={"id": blocker}, status="done")
    assert _codes(call("task_update", initiative="p", task={"id": blocked}, status="done")) == []


def test_reflect_lists_the_most_overdue_tasks_first_and_no_task_as_an_orphan(call: Call, clock: Clock) -> None:
    # Written newest-due first, so storage order is the opposite of how late they are.
    for day in range(28, 0, -1):
        call("task", initiative="p", text=f"task due on the {day}th", name=f"t{day:02d}", due=f"2026-02-{day:02d}")
    finished = call("task", initiative="p", text="a finished task", name="finished")["data"]["primary"]["id"]
    call("task_update", initiative="p", task={"id": finished}, status="done")
    call("note", initiative="p", text="a lone note", name="lone")
    answer = call("reflect", initiative="p")
    overdue = [i["name"] for i in answer["data"]["items"] if i["kind"] == "overdue_task"]
    assert answer["data"]["counts"]["overdue_task"] == 28
    assert overdue == [f"t{day:02d}" for day in range(1, 26)]
    assert [i["name"] for i in answer["data"]["items"] if i["kind"] == "orphan"] == ["lone"]


def test_context_counts_every_open_task_and_says_when_its_task_is_closed(call: Call, clock: Clock) -> None:
    for n in range(40):
        clock.advance(minutes=1)
        call("task", initiative="p", text=f"task number {n}", name=f"t{n:02d}")
    answer = call("context", initiative="p")
    section = next(s for s in answer["data"]["sections"] if s["name"] == "tasks")
    shown_elsewhere = sum(
        1 for s in answer["data"]["sections"] if s["name"] != "tasks" for i in s["items"] if i["node_type"] == "task"
    )
    assert section["open_total"] == 40 == section["total"] + shown_elsewhere
    call("note", initiative="p", kind="rule", text="never touch prod from t00", applicability={"task": "t00"})
    assert _codes(call("context", initiative="p", task="t00")) == []
    call("task_update", initiative="p", task="t00", status="done")
    closed = call("context", initiative="p", task="t00")
    assert closed["state"] == "ok" and _codes(closed) == ["task_closed"]
    assert "'t00'" in closed["issues"][0]["message"]


def test_a_task_search_by_a_status_no_board_has_says_so(call: Call) -> None:
    call("initiative", initiative="p", action="set_board", columns=COLS)
    call("task", initiative="p", text="a task on the board")
    call("claim", initiative="p", text="the cache is the bottleneck")  # an `open` claim
    tasks_only = call("search", initiatives=["p"], filters={"types": ["task"], "statuses": ["open"]})
    assert tasks_only["data"]["total"] == 0 and _codes(tasks_only) == ["invalid_argument"]
    assert (
        "'open'" in tasks_only["issues"][0]["message"] and "backlog, doing, done" in tasks_only["issues"][0]["message"]
    )
    # Without the type filter, `open` is a claim's status: found, no warning.
    anything = call("search", initiatives=["p"], filters={"statuses": ["open"]})
    assert anything["data"]["total"] == 1 and _codes(anything) == []


# --- a token limited to some initiatives (decision 15.K2): nothing of a board or node outside them ---
SECRET, PUB, PUB2 = "secret-merger", "pub", "pub2"
LIMITED = grants.Principal("lim", frozenset({PUB, PUB2}))


def _as_limited(call: Call, tool: str, **args: Any) -> dict[str, Any]:
    with grants.acting(LIMITED):
        return call(tool, **args)


def _shared_with_a_secret_board(call: Call) -> str:
    """A task on `secret-merger`'s board (no `open`, no `review`) and `pub`'s, in `doing`."""
    call("initiative", initiative=SECRET, action="set_board", columns=COLS)
    call("initiative", initiative=PUB, action="set_board", columns=[{"key": "open"}, *COLS[1:2], {"key": "review"}])
    tid = call("task", initiative=SECRET, text="shared work", name="shared", status="doing")["data"]["primary"]["id"]
    assert call("initiative", initiative=PUB, action="attach", node={"id": tid})["state"] == "applied"
    return str(tid)


def test_a_limited_token_is_not_warned_of_a_board_outside_its_grants(call: Call) -> None:
    tid = _shared_with_a_secret_board(call)
    moved = _as_limited(call, "task_update", initiative=PUB, task={"id": tid}, status="review")
    assert moved["state"] == "applied" and _codes(moved) == [], moved["issues"]
    # The admin moving it back and forth is told it left `secret-merger`'s board.
    call("task_update", initiative=PUB, task={"id": tid}, status="doing")
    assert _codes(call("task_update", initiative=PUB, task={"id": tid}, status="review")) == ["left_board"]


def test_a_board_edit_by_a_limited_token_does_not_warn_of_a_board_outside_its_grants(call: Call) -> None:
    tid = _shared_with_a_secret_board(call)
    # Removing `doing` from `pub` moves the task to `open`, which `secret-merger`'s board lacks.
    edit = _as_limited(call, "initiative", initiative=PUB, action="set_board", columns=[{"key": "open"}, COLS[2]])
    assert edit["state"] == "applied" and _codes(edit) == ["tasks_moved"], edit["issues"]
    # The admin making the same edit is told the task left `secret-merger`'s board.
    call("initiative", initiative=PUB, action="set_board", columns=[{"key": "open"}, *COLS[1:]])
    call("task_update", initiative=SECRET, task={"id": tid}, status="doing")
    edit = call("initiative", initiative=PUB, action="set_board", columns=[{"key": "open"}, COLS[2]])
    assert _codes(edit) == ["tasks_moved", "left_board"] and f"'{SECRET}'" in edit["issues"][1]["message"]


def test_an_attach_refused_to_a_limited_token_names_only_the_boards_it_may_read(call: Call) -> None:
    tid = _shared_with_a_secret_board(call)
    call("task_update", initiative=PUB, task={"id": tid}, status="review")
    # `pub2` lacks `review`: the refusal names `pub` alone and offers `open`, which `pub` and `pub2`
    # have (`secret-merger` does not, so the admin is offered no column).
    refused = _as_limited(call, "initiative", initiative=PUB2, action="attach", node={"id": tid})
    said = refused["issues"][0]["message"]
    assert refused["state"] == "rejected" and SECRET not in said and "backlog" not in said, said
    assert "on no column of 'pub2'" in said and "'pub' and 'pub2' both have (open)" in said, said
    admin = call("initiative", initiative=PUB2, action="attach", node={"id": tid})["issues"][0]["message"]
    assert "(open)" not in admin and "off one of the boards of 'secret-merger', 'pub'" in admin, admin


def _blocked_through_a_secret_task(call: Call) -> tuple[str, str, str]:
    """`acquire` (in `secret-merger` alone) blocks `shared`, and `seen` (in `pub`) blocks `acquire`."""
    tid = _shared_with_a_secret_board(call)
    hidden = call("task", initiative=SECRET, text="acquire acme", name="acquire")["data"]["primary"]["id"]
    seen = call("task", initiative=PUB, text="a visible task", name="seen")["data"]["primary"]["id"]
    for src, dst in ((hidden, tid), (seen, hidden)):
        link = {"from": {"id": src}, "to": {"id": dst}}
        assert call("link", initiative=SECRET, **link, edge_type="blocks", weight=0.8)["state"] == "applied"
    return tid, hidden, seen


def test_a_limited_token_is_not_told_of_a_blocker_outside_its_grants(call: Call) -> None:
    tid, hidden, _ = _blocked_through_a_secret_task(call)
    assert _tasks(call, PUB)["blocked_by"] == {tid: {hidden: "acquire"}}
    with grants.acting(LIMITED):
        section = _tasks(call, PUB)
    assert {i["name"] for i in section["items"]} == {"shared", "seen"} and "blocked_by" not in section, section


def test_a_limited_token_is_not_told_of_a_cycle_through_a_node_outside_its_grants(call: Call) -> None:
    tid, _, seen = _blocked_through_a_secret_task(call)
    link = {"from": {"id": tid}, "to": {"id": seen}}
    # `shared` blocks `seen` closes a cycle only through `acquire`: the limited token is not told of it.
    closing = _as_limited(call, "link", initiative=PUB, **link, edge_type="blocks", weight=0.8)
    assert closing["state"] == "applied" and _codes(closing) == [], closing["issues"]
    assert call("link", initiative=PUB, action="remove", **link, edge_type="blocks")["state"] == "applied"
    again = call("link", initiative=PUB, **link, edge_type="blocks", weight=0.8)
    assert _codes(again) == ["blocks_cycle"] and "'acquire'" in again["issues"][0]["message"]
