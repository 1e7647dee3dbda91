"""A task on several initiatives' boards. Its status is stored once, on the task, and each board reads
it against its own columns: a status one board lacks takes the task off that board — out of its
`context`, its open-task searches and the viewer's board — without closing it. Nothing may do that
silently: `attach` refuses a task whose column the board it joins lacks (it had moved the task to
that board's first column, which took it off its own), and a `task_update` that moves a shared task
to a column another of its boards lacks says so."""

from __future__ import annotations

from kaeru.domain.model import Node, NodeType
from kaeru.errors import InvalidArgument
from kaeru.service import tasks
from kaeru.service.outcomes import Issue
from kaeru.storage.base import Initiative, Session


def refuse_off_board(session: Session, node: Node, target: Initiative) -> None:
    """Refuse attaching task `node` to `target` when `target`'s board has no column of its status.

    A task keeps one status on every board it is on: putting it in the target's first column (as a
    `merge` does, where the task leaves its old board) would take it off the boards it stays on, and
    a status the target lacks would leave it on no column of the target's board. The refusal names
    the columns and the two ways on: give the target the column, or move the task first to a column
    both boards have."""
    if node.node_type != NodeType.TASK or target.id in node.initiatives:
        return
    cols = tasks.columns(session, target)
    keys = [c["key"] for c in cols]
    if node.status in keys:
        return
    names = session.initiative_names(list(node.initiatives))
    where = ", ".join(repr(names.get(i, str(i))) for i in node.initiatives)
    common = _common(session, node, keys)
    both = [k for k in tasks.open_keys(cols) if k in common]  # of open work: never "close it first"
    move = f"or `task_update` it first to an open column both have ({', '.join(both)})" if both else ""
    raise InvalidArgument(
        f"task {node.name!r} is in column {node.status!r}, which the board of {target.name!r} does not have "
        f"(its columns: {', '.join(keys)}); a task has one status on every board it is on, so attaching it "
        f"would take it off the board of {where}. Add the column to {target.name!r} with `initiative "
        f"set_board`{', ' + move if move else ''}",
        field="node",
    )


def _common(session: Session, node: Node, keys: list[str]) -> set[str]:
    """The column keys among `keys` that every board `node` is on has."""
    common = set(keys)
    for initiative in _initiatives(session, node.initiatives):
        common &= {c["key"] for c in tasks.columns(session, initiative)}
    return common


def _initiatives(session: Session, ids: list[int] | tuple[int, ...]) -> list[Initiative]:
    names = session.initiative_names(list(ids))
    found = session.initiatives_by_names(list(names.values()))
    return [found[names[i]] for i in ids if i in names and names[i] in found]


def say_left_boards(session: Session, node: Node, status: str, here: Initiative) -> list[Issue]:
    """A `left_board` warning for each other initiative of task `node` whose board has no column
    `status`, which a `task_update` through `here` just moved it to: it is off that board's open
    work now, yet not closed. One board read per other initiative (a task is rarely on more than a
    couple); a task on one board costs nothing."""
    others = [i for i in node.initiatives if i != here.id]
    if not others:
        return []
    issues: list[Issue] = []
    for initiative in _initiatives(session, others):
        keys = [c["key"] for c in tasks.columns(session, initiative)]
        if status in keys:
            continue
        issues.append(
            Issue(
                "left_board",
                f"task {node.name!r} is also on the board of {initiative.name!r}, which has no column {status!r} "
                f"(its columns: {', '.join(keys)}): it left that board's open work without being closed there. "
                f"Add the column to {initiative.name!r} with `initiative set_board`, or `detach` the task from it",
                "status",
            )
        )
    return issues
