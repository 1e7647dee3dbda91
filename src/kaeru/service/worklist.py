"""The open tasks of one or several initiatives' boards, the overdue first: the list `context`'s
`tasks` section gives, read for `recall` in one place.

A task has one status, which each board it is on reads against its own columns (`task_boards`): a
task is open when a board of a searched initiative it is on has its status among its open columns.
Recall read the open columns of the first searched initiative's board only, so over
`["other-team", "team-board"]` it looked for `open`/`in-progress` tasks and missed every `todo` of
the second board.

Overdue is a day in a task's properties, which no index orders by: the open tasks are read (at
most `OPEN_READ`, as `context` and `reflect` read them) and put in `context`'s order — the overdue
first, the longest overdue first, then the others by due day (those without one last), newest
first among equals. Recall had taken its 50 newest open tasks and ordered those: with the overdue
tasks older than those, "what is overdue?" brought back none of them.

Only what that order needs is read of each (`Session.task_facts`: status, due day, initiatives),
and each board's columns are sorted into open and closing once: decoding thousands of whole tasks,
and working out a board's closing columns again for each, made a `recall` that resumes work cost
many times what it had, for the hundred tasks it shows (which its caller loads)."""

from __future__ import annotations

from datetime import date

from kaeru.domain.model import Node, NodeType
from kaeru.service import tasks
from kaeru.storage.base import Initiative, SearchQuery, Session
from kaeru.storage.sql.taskfacts import TaskFacts

#: At most this many open tasks are read to find the overdue ones (`context` reads as many).
OPEN_READ = 5000


class Boards:
    """The columns of each searched initiative's board, by initiative id, and the open ones."""

    def __init__(self, columns: dict[int, list[dict[str, str]]]):
        self.columns = columns
        self._open = {i: frozenset(tasks.open_keys(cols)) for i, cols in columns.items()}
        self._closing = {i: frozenset(tasks.closing_keys(cols)) for i, cols in columns.items()}

    def open_keys(self) -> list[str]:
        """Every open column of the boards, in board order: what a task's status is filtered on."""
        return list(dict.fromkeys(k for cols in self.columns.values() for k in tasks.open_keys(cols)))

    def open_on(self, node: Node | TaskFacts) -> list[int]:
        """The searched initiatives `node` is on whose boards have its status open."""
        return [i for i in node.initiatives if node.status in self._open.get(i, ())]

    def is_overdue(self, node: Node, today: date, open_on: list[int] | None = None) -> bool:
        """Whether task `node` is overdue today by the first board it is open on (`tasks.is_overdue`).
        `open_on`: `self.open_on(node)`, when known."""
        if node.node_type != NodeType.TASK:
            return False
        return self.overdue_by(
            node.properties.get("due"), node.status, self.open_on(node) if open_on is None else open_on, today
        )

    def overdue_by(self, due: object, status: str | None, on: list[int], today: date) -> bool:
        """`tasks.is_overdue` by the first of the boards `on`, with its closing columns as sorted once."""
        if not due or not on:
            return False
        return tasks.is_overdue(str(due), status, self.columns[on[0]], today, self._closing[on[0]])


def boards(session: Session, scopes: list[Initiative]) -> Boards:
    """The boards of `scopes` (the defaults for an initiative without one). Read with a session no
    caller's filters narrow: a recall for `types: ["task"]` found no board, and took the defaults."""
    return Boards({s.id: tasks.columns(session, s) for s in scopes})


def open_tasks(
    session: Session, scope_ids: list[int], found: Boards, today: date | None
) -> tuple[list[TaskFacts], int]:
    """The open tasks of the searched initiatives in `context`'s order (without `today`: newest
    first), at most `OPEN_READ`, as `TaskFacts`; and how many there are."""
    keys = found.open_keys()
    if not keys:  # no open column (a status filter of none would be no filter)
        return [], 0
    rows, total, _ = session.search(
        SearchQuery(initiative_ids=scope_ids, types=[NodeType.TASK.value], statuses=keys, window=OPEN_READ)
    )
    facts = session.task_facts([r.seq for r in rows])
    late: list[TaskFacts] = []
    rest: list[TaskFacts] = []
    for row in rows:
        task = facts.get(row.seq)
        on = found.open_on(task) if task is not None else []
        if task is not None and on:
            (late if today is not None and found.overdue_by(task.due, task.status, on, today) else rest).append(task)
    total -= len(rows) - len(late) - len(rest)  # a status open on one board, of a task on another only
    if today is None:
        return rest, total
    late.sort(key=lambda t: (str(t.due), t.seq))
    rest.sort(key=lambda t: (str(t.due or "9999-12-31"), -t.seq))
    return late + rest, total
