"""A trail's pages (decision 87): `limit` entries a page, the rest counted and continued by a cursor.

A history only grows at its end, so its cursor carries how many entries were served; a node's
neighbours are live links, which change, so theirs carries the last link's key as well.
"""

from __future__ import annotations

from typing import Any

from kaeru.domain.model import EdgeType, Node
from kaeru.service import cursors, grants
from kaeru.service.outcomes import Continuation, Coverage, NodeView, Omission, TrailEntry, TrailOutcome
from kaeru.service.views import build_views
from kaeru.storage.base import Session


def neighbours(
    session: Session, node: Node, edge_types: set[EdgeType] | None, after: tuple[str, str, str] | None, limit: int
) -> tuple[list[TrailEntry], int, tuple[str, str, str] | None]:
    """One page of the node's live links to live nodes, in the order of their keys (source, target,
    type), as the whole list always was: `limit` of them after the key `after`; how many follow; and
    the page's last key. A link removed between two pages skips nothing; one made meanwhile comes on
    a later page when its key sorts after the last one shown (decision 87)."""
    edges = [e for e in session.live_edges([node.id]) if edge_types is None or e.edge_type in edge_types]
    others = session.nodes_by_ids([e.dst if e.src == node.id else e.src for e in edges])
    linked = [
        e for e in edges if (o := others.get(e.dst if e.src == node.id else e.src)) is not None and not o.retracted
    ]
    if grants.granted_ids(session) is not None:
        # Before paging: a token limited to some initiatives neither sees nor counts the others.
        visible = grants.visible_ids(session, [e.src for e in linked] + [e.dst for e in linked])
        linked = [e for e in linked if e.src in visible and e.dst in visible]
    if after is not None:
        linked = [e for e in linked if e.key > after]
    page, rest = linked[:limit], len(linked) - min(limit, len(linked))
    views = build_views(session, [others[e.dst if e.src == node.id else e.src] for e in page])
    entries = [
        TrailEntry(kind="neighbour", node=view, edge=edge, direction="out" if edge.src == node.id else "in")
        for edge, view in zip(page, views, strict=True)
    ]
    return entries, rest, page[-1].key if page else after


def paged(
    session: Session,
    args: dict[str, Any],
    key: str,
    secret: bytes,
    kind: str,
    subject: NodeView,
    page: list[TrailEntry],
    coverage: Coverage,
    served: int,
    rest: int,
    last: tuple[str, str, str] | None,
) -> TrailOutcome:
    """A trail page: `rest` entries after it are counted as left out (`limit`) and the next page's
    exact arguments given, its cursor carrying the entries served so far (and, for neighbours, the
    last one's position)."""
    continuation = None
    if rest and page:
        position = (last[0], 0, f"{last[1]}\n{last[2]}") if last is not None else None
        token = cursors.encode(
            secret or session.vault_secret(),
            cursors.CursorState("trail", None, served + len(page), key, position=position),
        )
        continuation = Continuation(token, {**{k: v for k, v in args.items() if k != "cursor"}, "cursor": token})
        coverage.omitted.append(Omission("entries", rest, "limit"))
        coverage.complete = False
    total = served + len(page) + rest
    return TrailOutcome(kind, subject, page, coverage, total=total, continuation=continuation)
