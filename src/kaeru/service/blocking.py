"""What `blocks` edges (blocker → blocked, SPEC 1.2) say of tasks: which open tasks wait on an open
one (`context`'s tasks section), a `blocks` link that closes a cycle (`link`), and a task closed
while a task that blocks it is still open (`task_update`). Each is a warning or a listing, never a
refusal: `blocks` is a typed relation, and only the user knows whether the work really waits.

A blocker is open when it is a live task not closed: no `done_at` (every move into a closing column
records it, every move out clears it, on whatever board) and not in a closing column of the board
asked about. Any other node (a note "waiting for the vendor") blocks nothing this can tell."""

from __future__ import annotations

from kaeru.domain.model import EdgeType, Node, NodeType
from kaeru.service import grants, tasks
from kaeru.service.outcomes import Issue
from kaeru.storage.base import Session

#: How many `blocks` steps the cycle check follows from the new link's target (a query per step).
CYCLE_DEPTH = 12
#: How many nodes the cycle check reaches at most: past that it stops and says nothing.
CYCLE_REACH = 2_000


def is_open(node: Node | None, cols: list[dict[str, str]]) -> bool:
    """Whether `node` is an open task, judged by its own `done_at` and `cols`' closing columns."""
    return (
        node is not None
        and not node.retracted
        and node.node_type == NodeType.TASK
        and "done_at" not in node.properties
        and node.status not in tasks.closing_keys(cols)
    )


def open_blockers(session: Session, ids: list[str], cols: list[dict[str, str]]) -> dict[str, dict[str, str]]:
    """For each of `ids` (tasks) that an open task blocks: {blocker id: blocker name}. Two queries
    whatever the number of tasks: their `blocks` edges, then the blockers' nodes. A blocker outside
    a limited token's grants is left out, and a task it alone blocks with it: `{task: {}}` would
    still say "blocked by something you may not see" (decision 15.K2)."""
    wanted = set(ids)
    edges = [
        e
        for e in session.live_edges(ids, [EdgeType.BLOCKS])
        if e.edge_type == EdgeType.BLOCKS and e.dst in wanted and e.src != e.dst
    ]
    if not edges:
        return {}
    blockers = session.nodes_by_ids(list({e.src for e in edges}))
    granted = grants.granted_ids(session)  # None for the admin; else asked once a transaction
    out: dict[str, dict[str, str]] = {}
    for edge in edges:
        blocker = blockers.get(edge.src)
        if blocker is not None and is_open(blocker, cols) and grants.node_visible(blocker, granted):
            out.setdefault(edge.dst, {})[blocker.id] = blocker.name
    return out


def say_still_blocked(session: Session, node: Node, cols: list[dict[str, str]]) -> list[Issue]:
    """A `still_blocked` warning when task `node`, just moved to a closing column, is blocked by an
    open task: either the blocker is finished too and was not closed, or the work was closed early."""
    found = open_blockers(session, [node.id], cols).get(node.id) or {}  # those the caller may read
    if not found:
        return []
    named = ", ".join(f"{name!r} ({i})" for i, name in list(found.items())[:5]) + (", …" if len(found) > 5 else "")
    return [
        Issue(
            "still_blocked",
            f"task {node.name!r} was closed while {named}, which block(s) it, are still open: close them too if "
            "they are finished, or `link action=remove` the blocks link if it no longer holds",
            "status",
        )
    ]


def say_cycle(session: Session, source: Node, target: Node) -> list[Issue]:
    """A `blocks_cycle` warning when the link `source` blocks `target` closes a cycle: `target`
    already blocks `source`, directly or through other nodes, so none of them can be done first.
    Followed a step at a time (one query per step, at most `CYCLE_DEPTH` steps and `CYCLE_REACH`
    nodes); a cycle past those bounds is not said. For a token limited to some initiatives the walk
    never enters a node outside its grants (one more query per step): a cycle through one is not
    said, as a path naming its place would tell the token that something lies there (15.K2)."""
    came_from: dict[str, str] = {target.id: ""}
    frontier = [target.id]
    for _ in range(CYCLE_DEPTH):
        if not frontier or len(came_from) > CYCLE_REACH:
            return []
        here = set(frontier)
        step: list[str] = []
        for edge in session.live_edges(frontier, [EdgeType.BLOCKS]):
            if edge.edge_type != EdgeType.BLOCKS or edge.src not in here or edge.dst in came_from:
                continue
            came_from[edge.dst] = edge.src
            if edge.dst == source.id:  # the caller resolved `source`: never outside its grants
                return [_cycle_issue(session, source, came_from)]
            step.append(edge.dst)
        hidden = grants.hidden_ids(session, step)  # none for the admin, with no look-up
        frontier = [i for i in step if i not in hidden]
    return []


def _cycle_issue(session: Session, source: Node, came_from: dict[str, str]) -> Issue:
    path = [source.id]
    while came_from[path[-1]]:
        path.append(came_from[path[-1]])
    path.reverse()  # target … source
    nodes = session.nodes_by_ids(path)
    names = [repr(nodes[i].name) if i in nodes else repr(i) for i in [source.id, *path]]
    return Issue(
        "blocks_cycle",
        f"this blocks link closes a cycle: {' blocks '.join(names)}, so none of them can be done first. "
        "The link was stored; `link action=remove` one link of the cycle if a task does not really wait on another",
        "to",
    )
