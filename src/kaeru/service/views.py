"""Turning stored nodes into what callers see: currentness, successors, initiative names, cut bodies."""

from __future__ import annotations

from collections.abc import Sequence

from kaeru.domain.budget import Cut
from kaeru.domain.currentness import decide
from kaeru.domain.model import Node
from kaeru.service.outcomes import NodeView
from kaeru.storage.base import Session


def build_views(
    session: Session,
    nodes: Sequence[Node],
    *,
    at: str | None = None,
    bodies: dict[str, tuple[str | None, Cut | None]] | None = None,
    only_initiatives: set[int] | None = None,
) -> list[NodeView]:
    """Views of `nodes` (current, or as of `at`); `bodies` overrides the shown body per id."""
    ids = [n.id for n in nodes]
    verdicts = session.verdicts_against_at(ids, at) if at else session.verdicts_against(ids)
    names = session.initiative_names([i for n in nodes for i in n.initiatives])
    views: list[NodeView] = []
    for node in nodes:
        currentness, successors = decide(node.node_type, node.status, node.retracted, verdicts.get(node.id, []))
        member_ids = [i for i in node.initiatives if only_initiatives is None or i in only_initiatives]
        body, body_range = (bodies or {}).get(node.id, (node.body, None))
        views.append(
            NodeView(
                node=node,
                initiatives=sorted(names[i] for i in member_ids if i in names),
                currentness=currentness,
                successors=successors,
                body=body,
                body_range=body_range,
            )
        )
    return views
