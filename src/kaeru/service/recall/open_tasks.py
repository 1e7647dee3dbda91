"""The `tasks` channel's order: the overdue tasks first, the longest overdue first, then the other
open tasks in the order found — the order `context`'s `tasks` section lists them in.

The plan said "open tasks, overdue first", and recall ranked them newest first: asked "what is left
to do?", a task written after an overdue one ranked above it, while `context` led with the overdue
one. Overdue is `tasks.is_overdue`, the one rule `context`, `reflect`, `task` and the viewer apply."""

from __future__ import annotations

from datetime import date

from kaeru.service import tasks
from kaeru.storage.base import Session


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
