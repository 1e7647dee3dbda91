"""A task on several initiatives' boards. Its status is stored once, on the task, and each board reads
it against its own columns: a status one board lacks takes the task off that board — out of its
`context`, its open-task searches and the viewer's board — without closing it. Nothing may do that
silently: `attach` refuses a task whose column the board it joins lacks (it had moved the task to
that board's first column, which took it off its own), and a `task_update` that moves a shared task
to a column another of its boards lacks says so, as does an `initiative set_board` whose removed
columns move shared tasks off another of their boards (`LeftBoards`).

A token limited to some initiatives is told of the boards it may read only (decision 15.K2): a board
outside its grants is neither named, nor warned of, nor counted in the columns a refusal offers."""

from __future__ import annotations

from collections import Counter

from kaeru.domain.model import Node, NodeType
from kaeru.errors import InvalidArgument
from kaeru.service import grants, tasks
from kaeru.service.outcomes import Issue
from kaeru.storage.base import Initiative, Session


def refuse_off_board(session: Session, node: Node, target: Initiative) -> None:
    """Refuse attaching task `node` to `target` when `target`'s board has no column of its status.

    A task keeps one status on every board it is on, so attached as it is it would sit on no column
    of the target's board; putting it in the target's first column (as a `merge` does, where the
    task leaves its old board) would take it off the boards it stays on when they lack that column.
    The refusal names the columns and the two ways on: give the target the column, or move the task
    first to an open column its boards and the target all have."""
    if node.node_type != NodeType.TASK or target.id in node.initiatives:
        return
    cols = tasks.columns(session, target)
    keys = [c["key"] for c in cols]
    if node.status in keys:
        return
    boards = _initiatives(session, _visible(session, node.initiatives))
    where = ", ".join(repr(b.name) for b in boards)
    common = _common(session, boards, keys)
    both = [k for k in tasks.open_keys(cols) if k in common]  # of open work: never "close it first"
    if both and boards:
        all_have = f"{where} and {target.name!r} {'both' if len(boards) == 1 else 'all'} have"
        way = f", or `task_update` it first to an open column {all_have} ({', '.join(both)})"
    elif boards:
        off = "the board of" if len(boards) == 1 else "one of the boards of"
        way = f" (moving it to an open column of {target.name!r} would take it off {off} {where})"
    else:
        way = ""
    raise InvalidArgument(
        f"task {node.name!r} is in column {node.status!r}, which the board of {target.name!r} does not have "
        f"(its columns: {', '.join(keys)}); a task has one status on every board it is on, so attached as it is "
        f"it would be on no column of {target.name!r}. Add the column to {target.name!r} with "
        f"`initiative set_board`{way}",
        field="node",
    )


def _visible(session: Session, ids: list[int] | tuple[int, ...]) -> list[int]:
    """`ids` (initiatives) without those outside the caller's grants (all of them for the admin)."""
    granted = grants.granted_ids(session)
    return [i for i in ids if granted is None or i in granted]


def _common(session: Session, boards: list[Initiative], keys: list[str]) -> set[str]:
    """The column keys among `keys` that every one of `boards` has."""
    common = set(keys)
    for initiative in boards:
        common &= {c["key"] for c in tasks.columns(session, initiative)}
    return common


def _initiatives(session: Session, ids: list[int]) -> list[Initiative]:
    names = session.initiative_names(ids)
    found = session.initiatives_by_names(list(names.values()))
    return [found[names[i]] for i in ids if i in names and names[i] in found]


def say_left_boards(session: Session, node: Node, status: str, here: Initiative) -> list[Issue]:
    """A `left_board` warning for each other initiative of task `node` whose board has no column
    `status`, which a `task_update` through `here` just moved it to: it is off that board's open
    work now, yet not closed. One board read per other initiative (a task is rarely on more than a
    couple); a task on one board costs nothing. A board outside a limited token's grants is not
    said: the token may not learn that it exists, nor its columns."""
    others = [i for i in node.initiatives if i != here.id]
    if not others or not (others := _visible(session, others)):
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


class LeftBoards:
    """The tasks an `initiative set_board` on `here` moves out of its removed columns (`_rehome`) that
    are also on other initiatives' boards: a board without the column a task was moved to lost it
    from its open work, without it being closed there — as a `task_update` would (`say_left_boards`)
    but for many tasks at once. Counted as they are moved (the task read for the move carries its
    initiatives: nothing more is read per task), then said as one `left_board` per board."""

    def __init__(self, here: Initiative) -> None:
        self.here = here
        #: (the task's other initiatives, its column before, its column now) -> how many tasks.
        self.moves: Counter[tuple[tuple[int, ...], str, str]] = Counter()

    def note(self, node: Node, status: str) -> None:
        """Count task `node`, about to move from its column to `status`, if it is on another board."""
        if others := tuple(i for i in node.initiatives if i != self.here.id):
            self.moves[(others, node.status or "", status)] += 1

    def say(self, session: Session) -> list[Issue]:
        """A `left_board` for each other board that lost some of the moved tasks: one that had their
        column before and lacks the one they are in now. One board read per other initiative, none
        per task; a board outside a limited token's grants is not said (decision 15.K2)."""
        ids = list(dict.fromkeys(i for others, _, _ in self.moves for i in others))
        issues: list[Issue] = []
        for initiative in _initiatives(session, _visible(session, ids)) if ids else []:
            keys = [c["key"] for c in tasks.columns(session, initiative)]
            lost: Counter[str] = Counter()
            for (others, was, now), n in self.moves.items():
                if initiative.id in others and was in keys and now not in keys:
                    lost[now] += n
            if lost:
                issues.append(self._left(initiative, keys, lost))
        return issues

    def _left(self, initiative: Initiative, keys: list[str], lost: Counter[str]) -> Issue:
        missing = " or ".join(repr(k) for k in sorted(lost))
        return Issue(
            "left_board",
            f"{lost.total()} task(s) moved out of the removed columns of {self.here.name!r} are also on the "
            f"board of {initiative.name!r}, which has no column {missing} (its columns: {', '.join(keys)}): "
            f"they left that board's open work without being closed there. Add the column to "
            f"{initiative.name!r} with `initiative set_board`, or `detach` the tasks from it",
            "columns",
        )
