"""The order of recall's open tasks is `context`'s, whatever reads them (session 55: the tasks
channel stopped decoding every open task to order them, `Session.task_facts`).

Two boards, a few hundred tasks: open and closed, overdue, due later, without a due day, several
on one day; some on both boards, where `todo` is open on one and closes a task on the other. The channel's tasks are compared with the order
worked out here from what was written: the overdue first, the longest overdue first and the older
first among those due the same day; then by due day, those without one last, the newest first
among equals; without a today, newest first. Both backends.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime

from kaeru.service import Service, worklist
from kaeru.service.recall.open_tasks import OFFERED, open_tasks
from kaeru.storage.base import Store
from tests.backends import VaultSpec
from tests.recall.helpers import made_id
from tests.working.conftest import Clock, make_call

TEAM, OTHER = "team-board", "other-team"
COLUMNS = [{"key": k} for k in ("backlog", "todo", "doing", "review", "done", "dropped")]
OTHER_COLUMNS = [{"key": k} for k in ("open", "in-progress", "done", "todo")]
OPEN = {TEAM: ("backlog", "todo", "doing", "review"), OTHER: ("open", "in-progress")}
CLOSED = {TEAM: ("done", "dropped"), OTHER: ("done", "todo")}
TODAY = date(2027, 3, 15)
#: Days before `TODAY`, on it, and after it; several tasks share each.
DAYS = ("2026-12-01", "2027-01-20", "2027-03-14", "2027-03-15", "2027-04-02", "2027-09-30", None)


@dataclass
class Written:
    id: str
    order: int  # the order it was written in
    boards: tuple[str, ...]
    status: str
    due: str | None


def _write(store: Store, vault: VaultSpec, count: int) -> list[Written]:
    call = make_call(Service(store, vault.settings(timezone="UTC"), clock=Clock(datetime(2026, 11, 1, tzinfo=UTC))))
    assert call("initiative", initiative=TEAM, action="set_board", columns=COLUMNS)["state"] == "applied"
    assert call("initiative", initiative=OTHER, action="set_board", columns=OTHER_COLUMNS)["state"] == "applied"
    written: list[Written] = []
    for i in range(count):
        board = (TEAM, OTHER)[i % 2]
        statuses = OPEN[board] + CLOSED[board]
        status = statuses[(i // 2) % len(statuses)]
        due = DAYS[(i // 3) % len(DAYS)]
        args = {"initiative": board, "name": f"job-{i:03d}", "text": f"Job {i}: wire part {i}", "status": status}
        made = made_id(call("task", **args, **({"due": due} if due else {})))
        boards: tuple[str, ...] = (board,)
        if board == TEAM and status in ("todo", "done") and i % 4 == 0:  # a column both boards have
            assert call("initiative", initiative=OTHER, action="attach", node={"id": made})["state"] == "applied"
            boards = (TEAM, OTHER)
        written.append(Written(made, i, boards, status, due))
    return written


def _expected(written: list[Written], today: date | None) -> list[str]:
    """Every open task, in the order the channel is to give them."""
    open_ = [w for w in written if any(w.status in OPEN[b] for b in w.boards)]
    if today is None:
        return [w.id for w in sorted(open_, key=lambda w: -w.order)]
    late = sorted((w for w in open_ if w.due and date.fromisoformat(w.due) < today), key=lambda w: (w.due, w.order))
    rest = sorted((w for w in open_ if w not in late), key=lambda w: (w.due or "9999-12-31", -w.order))
    return [w.id for w in late + rest]


def test_the_channel_orders_every_open_task_as_context_does(store: Store, vault: VaultSpec) -> None:
    written = _write(store, vault, 300)
    assert sum(len(w.boards) == 2 for w in written) >= 10
    with store.read() as session:
        scopes = list(session.initiatives_by_names([OTHER, TEAM]).values())
        boards = worklist.boards(session, scopes)
        for today in (TODAY, None):
            expected = _expected(written, today)
            offered = open_tasks(session, [s.id for s in scopes], boards, today)
            got = [n.id for n in offered.nodes] + offered.left
            assert got == expected, (today, [(w.id, w.boards, w.status, w.due) for w in written if w.id in got[:5]])
            assert len(offered.nodes) == OFFERED and offered.unread == 0
            # The tasks offered come whole: their status and due day as written.
            by_id = {w.id: w for w in written}
            assert [(n.status, n.properties.get("due")) for n in offered.nodes] == [
                (by_id[n.id].status, by_id[n.id].due) for n in offered.nodes
            ]
