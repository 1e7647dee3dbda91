"""The `tasks` channel: the open tasks of every searched board, the overdue first, the longest
overdue first — the order `context`'s `tasks` section lists them in (`worklist.open_tasks`) — and
which hits are overdue.

The plan said "open tasks, overdue first", and recall ranked them newest first: asked "what is left
to do?", a task written after an overdue one ranked above it, while `context` led with the overdue
one. It then ordered only its 50 newest open tasks: the overdue ones older than those never came
back, and the answer said it was complete. Now the channel offers the first `OFFERED` of them all,
and the open tasks it leaves out (those no other channel found) are counted in `coverage.omitted` as
`window`, as the ranking window's are (13.F3). Overdue is `tasks.is_overdue`, the one rule
`context`, `reflect`, `task` and the viewer apply.

The answer then says which of its hits are overdue (`overdue_ids`, recall's `overdue`), as
`context`'s `tasks` section does: a task's line said "due 2020-01-03" where `context` said
"overdue, due 2020-01-03", and a reader had to know today to tell."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from kaeru.domain.model import Node, NodeType
from kaeru.service import worklist
from kaeru.storage.base import Session
from kaeru.storage.records import Initiative

#: How many open tasks the channel offers the fusion: the ranking window's worth (`fusion.WINDOW`).
OFFERED = 100


@dataclass
class Offered:
    """The open tasks the channel offers, in its order, and those it read and left out; `unread`:
    how many open tasks lie past the ones read (`worklist.OPEN_READ`)."""

    nodes: list[Node]
    left: list[str] = field(default_factory=list)
    unread: int = 0


def open_tasks(session: Session, scope_ids: list[int], boards: worklist.Boards, today: date | None) -> Offered:
    """The channel's candidates: the first `OFFERED` open tasks of the searched boards, overdue
    first (only those loaded whole: the others are ordered by what `Session.task_facts` reads)."""
    listed, total = worklist.open_tasks(session, scope_ids, boards, today)
    nodes = session.nodes_by_seqs([t.seq for t in listed[:OFFERED]])
    offered = [nodes[t.id] for t in listed[:OFFERED] if t.id in nodes]
    return Offered(offered, [t.id for t in listed[OFFERED:]], max(0, total - len(listed)))


def overdue_ids(
    session: Session, nodes: list[Node], scopes: list[Initiative], today: date, boards: worklist.Boards | None = None
) -> list[str]:
    """The ids of the tasks of `nodes` (a page of hits, in its order) that are overdue today, each by
    a searched board it is open on (the boards read only when a task with a due day is on the page)."""
    late: list[str] = []
    for node in nodes:
        if node.node_type != NodeType.TASK or not node.properties.get("due"):
            continue
        boards = boards or worklist.boards(session, scopes)
        if boards.is_overdue(node, today):
            late.append(node.id)
    return late
