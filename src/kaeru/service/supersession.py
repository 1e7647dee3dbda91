"""Keeping `supersedes` free of cycles when a slot goes back to an earlier holder (decision 294).

Taking a slot supersedes its previous holder (`WriteContext.take_slot`): `prod-2` takes
`prod-state` from `prod-1`, `prod-2 supersedes prod-1`. Handing the slot back to `prod-1` (a
rollback) added `prod-1 supersedes prod-2` beside it: each superseded the other, both were hidden
from `search`, and the slot's holder was a superseded node. The edges of the way back are retracted
first (history keeps them), so the newest hand-over alone says which holder is current."""

from __future__ import annotations

from kaeru.domain.model import Edge, EdgeType
from kaeru.storage.base import Session

#: How many nodes a walk down a supersedes chain visits at most (a chain of slot holders is short;
#: the bound keeps a pathological graph from costing a write more than a few reads).
MAX_CHAIN = 64


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
