"""recall's open tasks come from every searched board, the most overdue first, and what it leaves
out is counted (session 55's tasks probe: 3,000 tasks over 150 days, custom columns).

- Over `["other-team", "team-board"]`, "what is left to do" looked for the open columns of the
  first initiative's board only (`open`, `in-progress`) and missed every `todo` of the second.
- The tasks channel read the 50 newest open tasks and ordered those: with 1,104 overdue tasks,
  "what is overdue?" brought back none, and the answer said it was complete.
- "which tasks are late" was no question about open work, and searched for "task".
- `types: ["task"]` hid the board from the channel, which then took the default columns.

Both backends, through the tool registry.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kaeru.domain.open_work import asked_alone, open_work_phrase
from kaeru.service import Service
from kaeru.storage.base import Store
from tests.backends import VaultSpec
from tests.recall.helpers import hit_ids, made_id
from tests.working.conftest import Call, Clock, make_call

TEAM, OTHER = "team-board", "other-team"
COLUMNS = [{"key": k} for k in ("backlog", "todo", "doing", "review", "done", "dropped")]
#: The open tasks the channel offers (recall's ranking window): those past it are counted.
OFFERED = 100


def _call(store: Store, vault: VaultSpec) -> tuple[Call, Clock]:
    clock = Clock(datetime(2027, 1, 4, 10, 0, tzinfo=UTC))
    return make_call(Service(store, vault.settings(timezone="UTC"), clock=clock)), clock


def _task(call: Call, name: str, **extra: Any) -> str:
    return made_id(call("task", initiative=TEAM, name=name, text=f"Task {name}: implement the component", **extra))


def _window(answer: dict[str, Any]) -> int:
    return sum(o["count"] for o in answer["coverage"]["omitted"] if o["reason"] == "window")


def test_every_searched_board_gives_its_open_tasks(store: Store, vault: VaultSpec) -> None:
    call, _ = _call(store, vault)
    made_id(call("task", initiative=OTHER, name="badge", text="Order the new office badges"))
    assert call("initiative", initiative=TEAM, action="set_board", columns=COLUMNS)["state"] == "applied"
    todo = _task(call, "parser", status="todo")
    review = _task(call, "lexer", status="review")
    closed = [_task(call, "docs", status="done"), _task(call, "legacy", status="dropped")]

    answer = call("recall", initiatives=[OTHER, TEAM], query="what is left to do", limit=20)
    found = hit_ids(answer)
    assert {todo, review} <= set(found), answer["data"]["hits"]
    assert not set(closed) & set(found)


def test_a_task_filter_keeps_the_boards_columns(store: Store, vault: VaultSpec) -> None:
    """The caller's `types` narrow the channel's tasks, not the boards it reads their columns from."""
    call, _ = _call(store, vault)
    assert call("initiative", initiative=TEAM, action="set_board", columns=COLUMNS)["state"] == "applied"
    todo = _task(call, "parser", status="todo")
    _task(call, "docs", status="done")
    found = hit_ids(call("recall", initiatives=[TEAM], query="what is left to do", types=["task"]))
    assert found == [todo], found


def test_the_most_overdue_come_first_however_many_are_newer(store: Store, vault: VaultSpec) -> None:
    call, clock = _call(store, vault)
    assert call("initiative", initiative=TEAM, action="set_board", columns=COLUMNS)["state"] == "applied"
    # Written first, so the newest open tasks are not them: the longest overdue is written second.
    late = [_task(call, "t-late-2", due="2027-01-10", status="todo"), _task(call, "t-late-1", due="2027-01-08")]
    newer = [_task(call, f"t{i:03d}", due="2027-06-01", status="doing") for i in range(OFFERED + 2)]
    clock.advance(days=30)  # 2027-02-03: the first two are overdue, the others due in June

    for query in ("what is overdue?", "which tasks are late?", "what is left to do"):
        answer = call("recall", initiatives=[TEAM], query=query)
        found = hit_ids(answer)
        assert found[:2] == late[::-1], (query, answer["data"]["hits"][:3])
        assert answer["data"]["overdue"] == late[::-1], query
        # The open tasks past the ones offered are counted, not said to be complete.
        assert _window(answer) == len(late) + len(newer) - OFFERED, (query, answer["coverage"])
        assert answer["coverage"]["complete"] is False
        assert set(found) <= {*late, *newer}


@pytest.mark.parametrize(
    "query",
    [
        "which tasks are late?",
        "late tasks",
        "tasks running late",
        "Welche Aufgaben sind überfällig?",
        "tareas vencidas",
    ],
)
def test_late_work_is_a_question_about_open_work(query: str) -> None:
    phrase = open_work_phrase(query)
    assert phrase and asked_alone(query, phrase), (query, phrase)


@pytest.mark.parametrize("query", ["a late dinner with the team", "I had to work late yesterday", "what are late fees"])
def test_late_alone_is_no_question_about_open_work(query: str) -> None:
    assert open_work_phrase(query) == "", query
