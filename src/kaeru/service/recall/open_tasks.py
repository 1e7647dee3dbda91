"""The `tasks` channel's order: the overdue tasks first, the longest overdue first, then the other
open tasks in the order found — the order `context`'s `tasks` section lists them in.

The plan said "open tasks, overdue first", and recall ranked them newest first: asked "what is left
to do?", a task written after an overdue one ranked above it, while `context` led with the overdue
one. Overdue is `tasks.is_overdue`, the one rule `context`, `reflect`, `task` and the viewer apply.

The answer then says which of its hits are overdue (`overdue_ids`, recall's `overdue`), as
`context`'s `tasks` section does: a task's line said "due 2020-01-03" where `context` said
"overdue, due 2020-01-03", and a reader had to know today to tell."""

from __future__ import annotations

from datetime import date

from kaeru.domain.model import Node, NodeType
from kaeru.service import tasks
from kaeru.storage.base import Session
from kaeru.storage.records import Initiative


def overdue_first(session: Session, task_ids: list[str], cols: list[dict[str, str]], today: date | None) -> list[str]:
    """`task_ids` (open tasks, in the order found) with the overdue ones first, by due day then
    write order; as given without `today`."""
    if today is None or not task_ids:
        return task_ids
    nodes = session.nodes_by_ids(task_ids)
    late = [
        nodes[i]
        for i in task_ids
        if i in nodes and tasks.is_overdue(nodes[i].properties.get("due"), nodes[i].status, cols, today)
    ]
    late.sort(key=lambda n: (str(n.properties["due"]), n.seq))
    first = [n.id for n in late]
    held = set(first)
    return first + [i for i in task_ids if i not in held]


def overdue_ids(session: Session, nodes: list[Node], scopes: list[Initiative], today: date) -> list[str]:
    """The ids of the tasks of `nodes` (a page of hits, in its order) that are overdue today, each
    by the board of the first searched initiative that holds it."""
    boards: dict[int, list[dict[str, str]]] = {}
    late: list[str] = []
    for node in nodes:
        if node.node_type != NodeType.TASK or not node.properties.get("due"):
            continue
        scope = next((s for s in scopes if s.id in node.initiatives), scopes[0])
        if scope.id not in boards:
            boards[scope.id] = tasks.columns(session, scope)
        if tasks.is_overdue(node.properties["due"], node.status, boards[scope.id], today):
            late.append(node.id)
    return late
