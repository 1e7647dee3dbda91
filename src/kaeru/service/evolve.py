"""Identity-changing moves (`evolve`): settle, unsettle, supersede, synthesise — each one transaction."""

from __future__ import annotations

from typing import Any

from kaeru.domain.model import EdgeType, Node, NodeType, Tier, default_tier
from kaeru.errors import InvalidArgument
from kaeru.service.mutation import WriteContext
from kaeru.service.outcomes import Change
from kaeru.service.revise import check_revision

SETTLED_TYPE = {
    NodeType.EPISODE: NodeType.OUTCOME,
    NodeType.TASK: NodeType.OUTCOME,
    NodeType.EXPERIMENT: NodeType.OUTCOME,
    NodeType.HYPOTHESIS: NodeType.OUTCOME,
    NodeType.DRAFT: NodeType.IDEA,
    NodeType.SCRATCH: NodeType.IDEA,
}
#: Tags re-derived or meaningless on a successor; everything else (manual tags) is carried.
_DROPPED_FAMILIES = ("topic:", "lang:", "status:", "due:")


#: Types only the server writes: an audit record is the log of a write, and a board is the one task
#: board of an initiative (found by its type); a successor or synthesis of either type would pose as one.
_SERVER_TYPES = (NodeType.AUDIT_EVENT, NodeType.BOARD)


def _new_type(raw: Any, fallback: NodeType) -> NodeType:
    if raw is None:
        return fallback
    try:
        chosen = NodeType(raw)
    except ValueError as exc:
        raise InvalidArgument(f"unknown node type {raw!r}", field="new_type") from exc
    if chosen in _SERVER_TYPES:
        raise InvalidArgument(
            f"new_type {chosen.value!r} is written by the server itself; choose another type (e.g. summary, concept)",
            field="new_type",
        )
    return chosen


def _carried_tags(node: Node) -> list[str]:
    return [t for t in node.tags if not t.startswith(_DROPPED_FAMILIES)]


def _texts(ctx: WriteContext, args: dict[str, Any], source: Node | None) -> tuple[str | None, str | None]:
    name = ctx.clean_name("new_name", args["new_name"]) if args.get("new_name") else None
    body = ctx.clean("new_body", args["new_body"]) if args.get("new_body") is not None else None
    if body is None and source is not None:
        body = source.body
    return name, body


def _successor(
    ctx: WriteContext, source: Node, args: dict[str, Any], node_type: NodeType, tier: Tier, *, rename: bool = False
) -> Node:
    """A new node carrying the source's content; `rename` names it after its new body when no name is given."""
    name, body = _texts(ctx, args, source)
    if name is None and not (rename and args.get("new_body") is not None):
        name = source.name
    return ctx.create_node(
        node_type=node_type,
        body=body,
        name=name,
        description=source.description,
        tags=_carried_tags(source),
        layer=source.layer,
        properties={k: v for k, v in source.properties.items() if k not in ("chain",)},
        tier=tier,
        initiatives=tuple(dict.fromkeys((*source.initiatives, ctx.initiative.id))),
    )


def _consolidate(ctx: WriteContext, source: Node, args: dict[str, Any], tier: Tier) -> Node:
    """settle/unsettle: a successor in `tier`, provenance copied, `consolidated_to`, source retracted."""
    if tier == Tier.ARCHIVAL:
        node_type = _new_type(args.get("new_type"), SETTLED_TYPE.get(source.node_type, source.node_type))
    else:
        node_type = _new_type(args.get("new_type"), source.node_type)
    successor = _successor(ctx, source, args, node_type, tier)
    live = ctx.session.live_edges([source.id])
    for edge in live:
        if edge.src == source.id and edge.edge_type == EdgeType.DERIVED_FROM:
            target = ctx.session.get_node(edge.dst)
            if target is not None and not target.retracted:
                ctx.add_edge(successor, target, EdgeType.DERIVED_FROM, edge.weight)
    ctx.add_edge(source, successor, EdgeType.CONSOLIDATED_TO, 1.0)
    for held in ctx.session.slots_held_by(source.id):
        if held.initiative_id == ctx.initiative.id:
            ctx.take_slot(held.slot, successor, None)
            # Handing the slot on cools its previous holder, a new revision of the source: retract
            # that one (retracting the stale copy wrote the same revision twice, an `internal`).
            source = ctx.session.get_node(source.id, for_update=True) or source
    # The source is retracted last, but its edges stay live until then; keep the consolidated_to
    # edge (history) and retract the rest with the node, as forget does.
    for edge in ctx.session.live_edges([source.id]):
        if not (edge.edge_type == EdgeType.CONSOLIDATED_TO and edge.dst == successor.id):
            ctx.retract_edge(edge)
    gone = ctx.update_node(source, retracted=True)
    ctx.mark_affected(gone)
    ctx.outcome.changes.append(Change("tier", source.tier.value, tier.value))
    return successor


def evolve(ctx: WriteContext, args: dict[str, Any]) -> None:
    mode = args.get("mode")
    if mode == "synthesise":
        raw_sources = args.get("sources") or []
        if not raw_sources:
            raise InvalidArgument("synthesise needs at least one source", field="sources")
        if not isinstance(raw_sources, list):
            raise InvalidArgument("sources must be a list of NodeRefs", field="sources")
        # Every source is resolved (and row-locked) before anything is written, so an unknown or
        # forgotten one refuses the call whole. Nodes are not hashable: de-duplicate by id, in order
        # (the same node named twice, by id and by name, is one source).
        sources: dict[str, Node] = {}
        for i, raw in enumerate(raw_sources):
            found = ctx.resolve(raw, f"sources[{i}]")
            sources.setdefault(found.id, found)
        name, body = _texts(ctx, args, None)
        if not body or not body.strip():
            raise InvalidArgument("synthesise needs new_body: the synthesis itself", field="new_body")
        node = ctx.create_node(
            node_type=_new_type(args.get("new_type"), NodeType.SUMMARY),
            body=body,
            name=name,
            name_fallback="synthesis",
            tags=["role:synthesise"],
        )
        for source in sources.values():
            ctx.add_edge(node, source, EdgeType.DERIVED_FROM, 1.0)
        ctx.outcome.primary = ctx.outcome_ref(node)
        return
    if args.get("source") is None:
        raise InvalidArgument(f"{mode} needs source", field="source")
    source = ctx.resolve(args["source"], "source")
    check_revision(source, args.get("expected_revision"))
    if mode == "settle":
        if source.tier == Tier.ARCHIVAL:
            raise InvalidArgument(f"{source.name!r} is already archival; use unsettle to reopen it", field="source")
        successor = _consolidate(ctx, source, args, Tier.ARCHIVAL)
    elif mode == "unsettle":
        if source.tier == Tier.OPERATIONAL:
            raise InvalidArgument(f"{source.name!r} is already operational", field="source")
        successor = _consolidate(ctx, source, args, Tier.OPERATIONAL)
    elif mode == "supersede":
        if args.get("new_body") is None and args.get("new_name") is None:
            raise InvalidArgument("supersede needs new_body (the corrected fact) or new_name", field="new_body")
        node_type = _new_type(args.get("new_type"), source.node_type)
        successor = _successor(ctx, source, args, node_type, default_tier(node_type), rename=True)
        ctx.add_edge(successor, source, EdgeType.SUPERSEDES, 1.0)
        ctx.mark_affected(source)
    else:
        raise InvalidArgument("mode is settle, unsettle, supersede or synthesise", field="mode")
    ctx.outcome.primary = ctx.outcome_ref(successor)
