"""What `supersedes` edges leave behind: cycles when a slot goes back to an earlier holder (decision
294), and facts that read current again when their only successor is forgotten (decision 393).

Taking a slot supersedes its previous holder (`WriteContext.take_slot`): `prod-2` takes
`prod-state` from `prod-1`, `prod-2 supersedes prod-1`. Handing the slot back to `prod-1` (a
rollback) added `prod-1 supersedes prod-2` beside it: each superseded the other, both were hidden
from `search`, and the slot's holder was a superseded node. The edges of the way back are retracted
first (history keeps them), so the newest hand-over alone says which holder is current."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from kaeru.domain.model import Edge, EdgeType, Node
from kaeru.service import grants
from kaeru.service.outcomes import Issue
from kaeru.storage.base import Session

if TYPE_CHECKING:
    from kaeru.service.mutation import WriteContext

#: How many nodes a walk down a supersedes chain visits at most (a chain of slot holders is short;
#: the bound keeps a pathological graph from costing a write more than a few reads).
MAX_CHAIN = 64

#: Nodes named in a `superseded_current_again` warning at most (the rest are counted).
NAMED_AT_MOST = 10


def edges_back_to(session: Session, start: str, target: str) -> list[Edge]:
    """The live `supersedes` edges into `target` on the chains that lead from `start` down to it
    (`start` supersedes … supersedes `target`); none when `target` is not below `start`."""
    frontier, seen, found = [start], {start}, []
    while frontier and len(seen) <= MAX_CHAIN:
        here = set(frontier)
        frontier = []
        for edge in session.live_edges(sorted(here), [EdgeType.SUPERSEDES]):
            if edge.src not in here:
                continue
            if edge.dst == target:
                found.append(edge)
            elif edge.dst not in seen:
                seen.add(edge.dst)
                frontier.append(edge.dst)
    return found


def left_current(session: Session, retracted: Iterable[Edge], leaving: int | None = None) -> list[Node]:
    """The live nodes that a retracted `supersedes` edge was the last live one into: with it gone,
    nothing supersedes them and they read current again (a node is superseded only while a live
    node supersedes it). `leaving`: an initiative being deleted, whose own nodes are forgotten with
    it and so are not counted here. In id order."""
    targets = sorted({e.dst for e in retracted if e.edge_type == EdgeType.SUPERSEDES})
    if not targets:
        return []
    still = {e.dst for e in session.live_edges(targets, [EdgeType.SUPERSEDES])}
    found = session.nodes_by_ids([t for t in targets if t not in still])
    return [
        found[t]
        for t in sorted(found)
        if not found[t].retracted and (leaving is None or found[t].initiatives != (leaving,))
    ]


def current_again(nodes: list[Node], cause: str, field: str) -> Issue:
    """The warning that `nodes` read current again because of `cause` (their successor forgotten):
    `search`, `recall` and `context` answer them as current from now on, which the caller may not
    have meant when it forgot the node that replaced them."""
    named = ", ".join(repr(n.name) for n in nodes[:NAMED_AT_MOST])
    more = f" and {len(nodes) - NAMED_AT_MOST} more" if len(nodes) > NAMED_AT_MOST else ""
    one = len(nodes) == 1
    it = "it" if one else "them"
    return Issue(
        "superseded_current_again",
        f"{named}{more} {'reads' if one else 'read'} current again: nothing supersedes {it} now that {cause} "
        f"(if {'it is' if one else 'they are'} out of date: `link supersedes` from what replaces {it}, or "
        f"`forget` {it})",
        field,
    )


def say_current_again(ctx: WriteContext, gone: list[Edge], cause: str, field: str, leaving: int | None = None) -> None:
    """Warn of the nodes that the retracted edges `gone` (out of forgotten nodes) left current
    again; a limited token is told only of those it may see (15.K2)."""
    back = left_current(ctx.session, gone, leaving)
    hidden = grants.hidden_ids(ctx.session, [n.id for n in back])
    shown = [n for n in back if n.id not in hidden]
    if shown:
        ctx.outcome.issues.append(current_again(shown, cause, field))
