"""Whether a rule is in force: one test for `context`, `recall` and `reflect`.

A rule is in force while it is active, its `applicability.through` day has not passed, and the task
it is scoped to (if any) is open. `context` held back the rule of a dropped task while `recall`,
which tested `constraint_state` and `through` only, still ranked it among the rules to follow
under `apply_preference` (decision 471). A task is closed as `context` tells it
(`context_current.Stale.closed`: a closing column of its board, or `done_at`); one forgotten or gone
leaves nothing to work on either.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date

from kaeru.domain.model import Node
from kaeru.service.context_current import Stale
from kaeru.storage.base import Initiative, Session


def rule_applies(node: Node, today: date, task_id: str | None) -> bool:
    """An active rule applies unless its `through` date has passed or it is scoped to another task."""
    props = node.properties
    if props.get("constraint_state", "active") != "active":
        return False
    applicability = props.get("applicability") or {}
    through = applicability.get("through")
    if through and date.fromisoformat(through) < today:
        return False
    scoped = applicability.get("task")
    return not (scoped and scoped != task_id)


def scoped_task(rule: Node) -> str | None:
    """The id of the task `rule` applies to while it is worked on (None: every task)."""
    applicability = rule.properties.get("applicability")
    scoped = applicability.get("task") if isinstance(applicability, dict) else None
    return scoped if isinstance(scoped, str) and scoped else None


def closed_tasks(session: Session, task_ids: Iterable[str], scopes: list[Initiative]) -> set[str]:
    """Of `task_ids`, those no longer worked on: forgotten or gone, or closed on the board of the
    first of `scopes` holding the task (else of the first initiative holding it). The tasks are
    read in one query, each board once."""
    wanted = list(dict.fromkeys(task_ids))
    found = session.nodes_by_ids(wanted) if wanted else {}
    boards: dict[int, Stale] = {}
    others: dict[int, Initiative] | None = None
    closed: set[str] = set()
    for task_id in wanted:
        task = found.get(task_id)
        if task is None or task.retracted:
            closed.add(task_id)
            continue
        home = next((s for s in scopes if s.id in task.initiatives), None)
        if home is None and task.initiatives:
            if others is None:
                others = {i.id: i for i in session.all_initiatives()}
            home = others.get(task.initiatives[0])
        if home is None:
            continue
        if home.id not in boards:
            boards[home.id] = Stale(session, home)
        if boards[home.id].closed(task):
            closed.add(task_id)
    return closed
