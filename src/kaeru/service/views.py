"""Turning stored nodes into what callers see: currentness, successors, initiative names, cut bodies."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from kaeru.domain.budget import Cut, allocate, cut
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


def budgeted_views(
    session: Session, nodes: Sequence[Node], budget: int, only_initiatives: set[int] | None = None
) -> tuple[list[NodeView], int]:
    """Views of the leading `nodes` whose text fits `budget` characters (description + body).

    Every shown node gets a fair share, cut on word boundaries (the description keeps at least half
    of a node's share when it has a body); nodes that do not fit at all are left out — the caller
    defers them. Returns the views and how many texts were cut.
    """
    lengths = [len(n.description or "") + len(n.body or "") for n in nodes]
    granted = allocate(lengths, budget) or []
    shown = list(nodes[: len(granted)])
    bodies: dict[str, tuple[str | None, Cut | None]] = {}
    descriptions: dict[str, Cut] = {}
    truncated = 0
    for node, grant in zip(shown, granted, strict=True):
        description, body = node.description or "", node.body or ""
        if description:
            room = grant if not body else max(grant // 2, grant - len(body))
            piece = cut(description, 0, min(len(description), room))
            if piece.truncated:
                descriptions[node.id] = piece
                truncated += 1
            grant -= len(piece.text)
        if node.body is None:
            bodies[node.id] = (None, None)
            continue
        if len(body) <= grant:  # fits whole: nothing to cut
            bodies[node.id] = (body, None)
            continue
        part = cut(body, 0, max(grant, 0))
        bodies[node.id] = (part.text, part if part.truncated else None)
        truncated += part.truncated
    views = build_views(session, shown, bodies=bodies, only_initiatives=only_initiatives)
    return [
        replace(
            v,
            node=v.node.evolve(description=descriptions[v.node.id].text),
            description_range=descriptions[v.node.id],
        )
        if v.node.id in descriptions
        else v
        for v in views
    ], truncated
