"""An initiative's open reviews, newest first, and the page of them after a given one (`reflect`).

An open review is a live node of the scope that a live node `contradicts` (a review note, or a
contradicting memory) and whose verdict is still awaited: `review close` retracts those edges. It
is read here for both `context`'s reviews section and `reflect` — the scope's live `contradicts`
edges, less those from nodes outside the caller's grants (`grants.granted_edges`, decision 372),
newest node first — whole: `context` shows the newest `CAPS["reviews"]` and `reflect` 25 a kind, so a
person with more doubts than that could not see them all. A later page is keyed by the last node
the caller was shown (its `seq`, fixed for its life), not by an offset: a review closed or raised
between two pages neither repeats nor skips another.
"""

from __future__ import annotations

from kaeru.domain.model import Edge, EdgeType, Node
from kaeru.errors import InvalidArgument
from kaeru.service import grants
from kaeru.storage.base import Initiative, Session


def open_reviews(session: Session, scope: Initiative) -> list[tuple[Node, list[Edge]]]:
    """Each node of `scope` under review with the doubts against it the caller may see, newest first."""
    doubted = grants.granted_edges(session, session.inbound([scope.id], [EdgeType.CONTRADICTS.value]))
    nodes = session.nodes_by_ids(list(doubted))
    return [(node, doubted[node.id]) for node in sorted(nodes.values(), key=lambda n: -n.seq)]


def reviews_after(
    session: Session, scope: Initiative, reviews: list[tuple[Node, list[Edge]]], node_id: str
) -> list[tuple[Node, list[Edge]]]:
    """The `reviews` older than the node `node_id` of `scope` (the last one a page listed; it may
    have been closed since, or forgotten: its place in the order stays).

    Raises:
        InvalidArgument: `node_id` names no node of `scope`.
    """
    last = session.nodes_by_ids([node_id]).get(node_id)
    if last is None or scope.id not in last.initiatives:
        raise InvalidArgument(
            f"reviews_after names no node of {scope.name!r}: send the `node` of the last `open_review` item "
            "a page listed, or leave it out for the whole work-list",
            field="reviews_after",
        )
    return [(node, edges) for node, edges in reviews if node.seq < last.seq]
