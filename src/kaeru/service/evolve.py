"""Identity-changing moves (`evolve`): settle, unsettle, supersede, synthesise — each one transaction."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from kaeru.domain.model import EdgeType, HypothesisStatus, Layer, Node, NodeType, Tier, default_tier
from kaeru.errors import InvalidArgument
from kaeru.service import tasks
from kaeru.service.mutation import WriteContext
from kaeru.service.outcomes import Change
from kaeru.service.revise import check_revision
from kaeru.service.supersession import supersede_the_current

if TYPE_CHECKING:
    from kaeru.service.requests import EvolveRequest

SETTLED_TYPE = {
    NodeType.EPISODE: NodeType.OUTCOME,
    NodeType.TASK: NodeType.OUTCOME,
    NodeType.EXPERIMENT: NodeType.OUTCOME,
    NodeType.HYPOTHESIS: NodeType.OUTCOME,
    NodeType.DRAFT: NodeType.IDEA,
    NodeType.SCRATCH: NodeType.IDEA,
}
#: Tags re-derived or meaningless on a successor; everything else (manual tags) is carried.
DROPPED_FAMILIES = ("topic:", "lang:", "status:", "due:")


def _new_type(raw: str | None, fallback: NodeType) -> NodeType:
    """The successor's type: the one asked for (never a server-written one: the schema's enum leaves
    those out, `SERVER_WRITTEN`), else `fallback`."""
    return fallback if raw is None else NodeType(raw)


def _texts(ctx: WriteContext, request: EvolveRequest, source: Node | None) -> tuple[str | None, str | None]:
    name = ctx.clean_name("new_name", request.new_name) if request.new_name else None
    body = ctx.clean("new_body", request.new_body) if request.new_body is not None else None
    if body is None and source is not None:
        body = source.body
    return name, body


def _status(source: Node, node_type: NodeType, carried: bool, cols: list[dict[str, str]]) -> str | None:
    """The successor's status (decision 294): a task keeps its board column (the board's first when
    the source was no task or its column is gone), a hypothesis its status when `carried` (the same
    claim in another tier) and `open` otherwise (a new wording has no verdict yet); other types none.
    Without it a superseding task or claim had no status: on no board, in no list of open claims.
    `cols`: the call's initiative's board columns (read only for a task)."""
    if node_type == NodeType.TASK:
        keys = [c["key"] for c in cols]
        return source.status if source.node_type == NodeType.TASK and source.status in keys else keys[0]
    if node_type == NodeType.HYPOTHESIS:
        return source.status if carried and source.node_type == NodeType.HYPOTHESIS and source.status else "open"
    return None


#: What a successor keeps of its source's place: core and hot, chosen for what it says, go on;
#: cold or frozen is where the source went as it aged or lost a slot — a new decision replacing a
#: cooled one was born cold, left out of `context` and `recall` the day it was made.
_CARRIED_LAYERS = (Layer.CORE, Layer.HOT)
#: Properties of the source that describe its own history, not what it says: its chain and when
#: hygiene demoted it (a reminder's shown day is dropped from the carried reminder).
NOT_CARRIED = ("chain", "hygiene_demoted_at")


def carried_tags(tags: Iterable[str]) -> list[str]:
    """The tags a successor carries of `tags` (its source's): not those re-derived for it or
    meaningless on it (`DROPPED_FAMILIES`)."""
    return [t for t in tags if not t.startswith(DROPPED_FAMILIES)]


def carried_properties(
    properties: dict[str, Any], node_type: NodeType, status: str | None, cols: list[dict[str, str]], now: str
) -> dict[str, Any]:
    """What a successor of `node_type` at `status` carries of its source's `properties` — `evolve`'s
    and a re-import's new node of another type (`retype`) alike: not the source's own history
    (`NOT_CARRIED`), nor the day a reminder was last shown (the successor's is yet to be). A task in
    a column that closes it (`cols`: the board) has `done_at` (the source's, or `now`), as
    `task_update` gives it; a task in an open column has none."""
    out = {k: v for k, v in properties.items() if k not in NOT_CARRIED}
    if isinstance(reminder := out.get("reminder"), dict) and "seen" in reminder:
        out["reminder"] = {k: v for k, v in reminder.items() if k != "seen"}
    if node_type == NodeType.TASK:
        if status in tasks.closing_keys(cols):
            out.setdefault("done_at", now)
        else:
            out.pop("done_at", None)
    return out


def _successor(
    ctx: WriteContext, source: Node, request: EvolveRequest, node_type: NodeType, tier: Tier, *, rename: bool = False
) -> Node:
    """A new node carrying the source's content; `rename` names it after its new body when no name
    is given (a supersede: the source keeps its name, so the successor's must differ)."""
    name, body = _texts(ctx, request, source)
    if name is None and not (rename and request.new_body is not None):
        name = source.name
    cols = tasks.columns(ctx.session, ctx.initiative) if node_type == NodeType.TASK else []
    status = _status(source, node_type, not rename, cols)
    tags = [t for t in carried_tags(source.tags) if status is None or not t.startswith("kind:")]
    if status is not None:  # the kind and status tags a task or a claim is written with
        tags = ["kind:task" if node_type == NodeType.TASK else "kind:claim", f"status:{status}", *tags]
    properties = carried_properties(source.properties, node_type, status, cols, ctx.now_s)
    return ctx.create_node(
        node_type=node_type,
        body=body,
        name=name,
        description=source.description,
        tags=tags,
        layer=source.layer if source.layer in _CARRIED_LAYERS else Layer.WARM,
        status=status,
        properties=properties,
        tier=tier,
        initiatives=tuple(dict.fromkeys((*source.initiatives, ctx.initiative.id))),
    )


def _carry_edges(ctx: WriteContext, source: Node, successor: Node) -> None:
    """Every live edge of `source`, both ways, onto its settled (or unsettled) `successor`: it is the
    same knowledge under a new identity. Carrying only `derived_from` lost the rest with the source:
    a correction settled let the fact it superseded read current again, a settled fact someone had
    superseded read current, and its doubts and links were gone (decision 371)."""
    for edge in ctx.session.live_edges([source.id]):
        outgoing = edge.src == source.id
        other_id = edge.dst if outgoing else edge.src
        if edge.edge_type == EdgeType.CONSOLIDATED_TO or other_id == source.id:
            continue
        other = ctx.session.get_node(other_id)
        if other is None or other.retracted:
            continue
        src, dst = (successor, other) if outgoing else (other, successor)
        ctx.add_edge(src, dst, edge.edge_type, edge.weight, edge.properties)


def hand_on_slots(ctx: WriteContext, source: Node, successor: Node) -> bool:
    """Every role `source` holds, in whichever initiative, handed to `successor`: only the call's
    initiative's were, and another's slot was left with the superseded or retracted source (decision
    376) — also a slot of an initiative the source is no member of, which `slot` allows. Returns
    whether any was handed on."""
    held = ctx.session.slots_held_by(source.id)
    for state in held:
        ctx.take_slot(state.slot, successor, None, initiative_id=state.initiative_id)
    return bool(held)


def _consolidate(ctx: WriteContext, source: Node, request: EvolveRequest, tier: Tier) -> Node:
    """settle/unsettle: a successor in `tier`, the source's edges carried, `consolidated_to`, source retracted."""
    if tier == Tier.ARCHIVAL:
        settled = SETTLED_TYPE.get(source.node_type, source.node_type)
        if source.node_type == NodeType.HYPOTHESIS and source.status == HypothesisStatus.REFUTED:
            # An outcome has no status: a refuted claim settled read as a current finding (376).
            settled = NodeType.HYPOTHESIS
        node_type = _new_type(request.new_type, settled)
    else:
        node_type = _new_type(request.new_type, source.node_type)
    successor = _successor(ctx, source, request, node_type, tier)
    _carry_edges(ctx, source, successor)
    ctx.add_edge(source, successor, EdgeType.CONSOLIDATED_TO, 1.0)
    if hand_on_slots(ctx, source, successor):
        # Handing a slot on cools its previous holder, a new revision of the source: retract that
        # one (retracting the stale copy wrote the same revision twice, an `internal`).
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


def evolve(ctx: WriteContext, request: EvolveRequest) -> None:
    """One identity-changing move; the schema has required what each mode needs (sources and new_body
    for synthesise, source for the others)."""
    mode = request.mode
    if mode == "synthesise":
        raw_sources = request.sources or []
        # Every source is resolved (and row-locked) before anything is written, so an unknown or
        # forgotten one refuses the call whole. Nodes are not hashable: de-duplicate by id, in order
        # (the same node named twice, by id and by name, is one source).
        sources: dict[str, Node] = {}
        for i, raw in enumerate(raw_sources):
            found = ctx.resolve(raw, f"sources[{i}]")
            sources.setdefault(found.id, found)
        name, body = _texts(ctx, request, None)
        if not body or not body.strip():
            raise InvalidArgument("synthesise needs new_body: the synthesis itself", field="new_body")
        node = ctx.create_node(
            node_type=_new_type(request.new_type, NodeType.SUMMARY),
            body=body,
            name=name,
            name_fallback="synthesis",
            tags=["role:synthesise"],
        )
        for source in sources.values():
            ctx.add_edge(node, source, EdgeType.DERIVED_FROM, 1.0)
        ctx.outcome.primary = ctx.outcome_ref(node)
        return
    if request.source is None:
        raise InvalidArgument(f"{mode} needs source", field="source")
    source = ctx.resolve(request.source, "source")
    check_revision(source, request.expected_revision, ctx.session)
    if mode == "settle":
        if source.tier == Tier.ARCHIVAL:
            raise InvalidArgument(f"{source.name!r} is already archival; use unsettle to reopen it", field="source")
        successor = _consolidate(ctx, source, request, Tier.ARCHIVAL)
    elif mode == "unsettle":
        if source.tier == Tier.OPERATIONAL:
            raise InvalidArgument(f"{source.name!r} is already operational", field="source")
        successor = _consolidate(ctx, source, request, Tier.OPERATIONAL)
    else:  # supersede: `mode` is one of the four (the request's Literal, checked by the schema)
        if request.new_body is None and request.new_name is None:
            raise InvalidArgument("supersede needs new_body (the corrected fact) or new_name", field="new_body")
        node_type = _new_type(request.new_type, source.node_type)
        successor = _successor(ctx, source, request, node_type, default_tier(node_type), rename=True)
        # A source superseded before: the successor supersedes its current version(s) too (decision 462).
        heads = supersede_the_current(ctx, successor, source, 1.0, "source")
        # The corrected memory holds the source's roles, as settle hands them on (decision 294).
        for replaced in (source, *heads):
            hand_on_slots(ctx, replaced, successor)
        ctx.mark_affected(ctx.session.get_node(source.id) or source)
    ctx.outcome.primary = ctx.outcome_ref(successor)
