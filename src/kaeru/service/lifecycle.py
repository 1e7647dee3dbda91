"""The knowledge lifecycle: verdicts, reviews, slots, layers and forgetting."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kaeru.domain.model import (
    EdgeType,
    HypothesisStatus,
    Layer,
    Node,
    NodeType,
)
from kaeru.errors import InvalidArgument, NotFound, SlotConflict
from kaeru.service import grants
from kaeru.service.capture import EVIDENCE_RELATION
from kaeru.service.mutation import WriteContext
from kaeru.service.outcomes import Change, EvidenceLink, SlotChange
from kaeru.service.revise import check_revision
from kaeru.service.supersession import say_current_again
from kaeru.storage.base import SlotState

if TYPE_CHECKING:
    from kaeru.service.requests import ForgetRequest, LayerRequest, ReviewRequest, SlotRequest, VerdictRequest

REVIEW_TAG = "kind:review"
RESOLUTION_TAG = "kind:resolution"


def _status_tags(tags: tuple[str, ...], status: str) -> tuple[str, ...]:
    return (*[t for t in tags if not t.startswith("status:")], f"status:{status}")


def verdict(ctx: WriteContext, request: VerdictRequest) -> None:
    """Close an existing hypothesis as supported, refuted or inconclusive (the schema's enum), with its evidence."""
    hypothesis = ctx.resolve(request.hypothesis, "hypothesis")
    if hypothesis.node_type != NodeType.HYPOTHESIS:
        raise InvalidArgument(
            f"{hypothesis.name!r} is of type {hypothesis.node_type.value}, not a hypothesis", field="hypothesis"
        )
    check_revision(hypothesis, request.expected_revision, ctx.session)
    status = HypothesisStatus(request.status)
    evidence_node: Node | None = None
    raw = request.evidence
    if raw is not None:
        if "node" in raw:
            evidence_node = ctx.resolve(raw["node"], "evidence.node")
            if evidence_node.id == hypothesis.id:
                raise InvalidArgument("a hypothesis cannot be its own evidence", field="evidence.node")
        else:
            method = ctx.clean("evidence.method", raw.get("method"))
            if not method or not method.strip():  # said as `claim` says it, of the field sent
                raise InvalidArgument("evidence.method must not be blank", field="evidence.method")
            evidence_node = ctx.create_node(
                node_type=NodeType.EXPERIMENT,
                body=method,
                name_fallback="evidence",
                tags=["kind:experiment"],
                status=status.value,
            )
    if hypothesis.status == status.value and (
        evidence_node is None or _links_already(ctx, evidence_node, hypothesis, EVIDENCE_RELATION[status])
    ):
        # The same verdict with the same evidence again: nothing to write (decision 297).
        ctx.outcome.state = "unchanged"
        ctx.outcome.primary = ctx.outcome_ref(hypothesis)
        return
    updated = hypothesis
    if hypothesis.status != status.value:
        updated = ctx.update_node(hypothesis, status=status.value, tags=_status_tags(hypothesis.tags, status.value))
        ctx.outcome.changes.append(Change("status", hypothesis.status, status.value))
        _retract_overturned_evidence(ctx, hypothesis, EVIDENCE_RELATION[status])
        _settle_experiments(ctx, hypothesis, status.value)
    if evidence_node is not None:
        relation = EVIDENCE_RELATION[status]
        ctx.add_edge(evidence_node, updated, relation, 1.0)
        ctx.outcome.evidence.append(EvidenceLink(evidence_node.id, relation.value))
    ctx.mark_affected(updated)
    ctx.outcome.primary = ctx.outcome_ref(updated)


def _links_already(ctx: WriteContext, evidence: Node, hypothesis: Node, relation: EdgeType) -> bool:
    """Whether an existing evidence node already backs `hypothesis` with a live `relation` edge of
    full weight, as this verdict would link it (a new `method` node never does: this call wrote it)."""
    edge = ctx.session.get_edge(evidence.id, hypothesis.id, relation)
    return edge is not None and not edge.retracted and edge.weight == 1.0


def _settle_experiments(ctx: WriteContext, hypothesis: Node, status: str) -> None:
    """The experiments under way on `hypothesis` (`targets` it, as a `claim {method}`'s does, written
    with the claim's status `open`) take its new status: none was ever updated, and `context` showed
    "experiment · status=open" beside the settled claim, work under way that was over. History keeps
    the old status; an experiment outside a limited token's grants is left as it is."""
    sources = [e.src for e in ctx.session.live_edges([hypothesis.id], [EdgeType.TARGETS]) if e.dst == hypothesis.id]
    hidden = grants.hidden_ids(ctx.session, sources)
    for source in dict.fromkeys(s for s in sources if s not in hidden):
        node = ctx.session.get_node(source, for_update=True)
        if node is not None and not node.retracted and node.node_type == NodeType.EXPERIMENT and node.status != status:
            ctx.mark_affected(ctx.update_node(node, status=status))


#: The edges that carry a closed verdict: currentness reads `falsifies` as refuted (SPEC 1.2).
VERDICT_RELATIONS = (EdgeType.VERIFIES, EdgeType.FALSIFIES)


def _retract_overturned_evidence(ctx: WriteContext, hypothesis: Node, kept: EdgeType) -> None:
    """A verdict that changes a hypothesis's status overturns the one before: the evidence edges of
    the old verdict (`verifies` or `falsifies`, whatever initiative their source is in) are retracted
    — history keeps them — so a hypothesis now `supported` no longer reads as refuted by the
    `falsifies` edge of its earlier verdict, nor one evidence node as both verifying and falsifying it.
    A limited token leaves the edges of evidence outside its grants live and unnamed: that evidence
    is another initiative's, and the hypothesis still reads as it says, as a node superseded from
    outside the grants still reads superseded (decision 15.K2)."""
    overturned = [
        e
        for e in ctx.session.live_edges([hypothesis.id])
        if e.dst == hypothesis.id and e.edge_type in VERDICT_RELATIONS and e.edge_type != kept
    ]
    hidden = grants.hidden_ids(ctx.session, [e.src for e in overturned])
    for edge in overturned:
        if edge.src not in hidden:
            ctx.retract_edge(edge)
            ctx.outcome.changes.append(Change(f"evidence.{edge.edge_type.value}", edge.src, None))


def review(ctx: WriteContext, request: ReviewRequest) -> None:
    """Flag a node as doubted (a review note that `contradicts` it) or close its open reviews."""
    action = request.action
    target = ctx.resolve(request.target, "target")
    if action == "flag":
        reason = ctx.clean("reason", request.reason)
        if not reason or not reason.strip():
            raise InvalidArgument("flag needs a reason: what is doubtful and why", field="reason")
        note = ctx.create_node(
            node_type=NodeType.EPISODE,
            body=reason,
            name_fallback="review",
            tags=[REVIEW_TAG, "role:review"],
            layer=Layer.HOT,
        )
        ctx.add_edge(note, target, EdgeType.CONTRADICTS, 1.0)
        ctx.mark_affected(target)
        ctx.outcome.primary = ctx.outcome_ref(note)
        return
    if action != "close":
        raise InvalidArgument("action is flag or close", field="action")
    doubts = [
        e for e in ctx.session.live_edges([target.id]) if e.dst == target.id and e.edge_type == EdgeType.CONTRADICTS
    ]
    # A doubt raised from outside a limited token's grants stays open, uncounted (decision 15.K2).
    hidden = grants.hidden_ids(ctx.session, [e.src for e in doubts])
    doubts = [e for e in doubts if e.src not in hidden]
    if not doubts:
        raise NotFound(f"{target.name!r} has no open review to close", field="target")
    for edge in doubts:
        ctx.retract_edge(edge)
    ctx.outcome.changes.append(Change("open_reviews", len(doubts), 0))
    resolution = ctx.clean("resolution", request.resolution)
    if resolution and resolution.strip():
        note = ctx.create_node(
            node_type=NodeType.EPISODE,
            body=resolution,
            name_fallback="resolution",
            tags=[RESOLUTION_TAG, "role:resolution"],
        )
        reviewers = ctx.session.nodes_by_ids([e.src for e in doubts])
        for reviewer in reviewers.values():
            if not reviewer.retracted:
                ctx.add_edge(note, reviewer, EdgeType.SUPERSEDES, 1.0)
        ctx.add_edge(note, target, EdgeType.REFERS_TO, 0.8)
        ctx.outcome.primary = ctx.outcome_ref(note)
    else:
        ctx.outcome.primary = ctx.outcome_ref(target)
    ctx.mark_affected(target)


def slot(ctx: WriteContext, request: SlotRequest) -> None:
    """Take a role (a name the schema's `Slot` pattern has checked) for a node, or release it (no `node`)."""
    name = request.slot
    expected = request.expected_slot_revision
    if request.node is not None:
        holder = ctx.resolve(request.node, "node")
        change = ctx.take_slot(name, holder, expected, field="expected_slot_revision", named_in="slot")
        if change.before == holder.id:
            ctx.outcome.state = "unchanged"
            ctx.outcome.slots.append(change)
        ctx.outcome.primary = ctx.outcome_ref(holder)
        return
    state = ctx.session.get_slot(ctx.initiative.id, name, for_update=True)
    current = state.revision if state else "0"
    if expected is not None and expected != current:
        raise SlotConflict(
            f"slot {name!r} is at revision {current!r}, not {expected!r}; re-read it and retry",
            field="expected_slot_revision",
        )
    if state is None or state.node_id is None:
        ctx.outcome.state = "unchanged"
        ctx.outcome.slots.append(SlotChange(name, None, None, current))
        return
    release_slot(ctx, state)


def release_slot(ctx: WriteContext, held: SlotState) -> None:
    """Release one held slot (`held`, read in this transaction): `slot` without a node, and a node
    detached from the slot's initiative (decision 311). A holder outside a limited token's grants is
    not named (`before` None)."""
    revision = ctx.put_slot(held.initiative_id, held.slot, None, held)
    before = held.node_id
    if before is not None and before in grants.hidden_ids(ctx.session, [before]):
        before = None
    ctx.outcome.slots.append(SlotChange(held.slot, before, None, revision))


def layer(ctx: WriteContext, request: LayerRequest) -> None:
    """Set the layer and/or pin (the schema wants one) of several nodes (each a new revision)."""
    raw_nodes = request.nodes
    target_layer = Layer(request.layer) if request.layer is not None else None
    pin = request.pin
    seen: set[str] = set()
    for i, raw in enumerate(raw_nodes):
        node = ctx.resolve(raw, f"nodes[{i}]")
        if node.id in seen:
            continue
        seen.add(node.id)
        changes: dict[str, Any] = {}
        if target_layer is not None and node.layer != target_layer:
            changes["layer"] = target_layer
            ctx.outcome.changes.append(Change(f"{node.id}.layer", node.layer.value, target_layer.value))
        if pin is not None and node.pinned != bool(pin):
            changes["pinned"] = bool(pin)
            ctx.outcome.changes.append(Change(f"{node.id}.pinned", node.pinned, bool(pin)))
        if changes:
            ctx.mark_affected(ctx.update_node(node, **changes))
    if not ctx.outcome.changes:
        ctx.outcome.state = "unchanged"


def forget(ctx: WriteContext, request: ForgetRequest) -> None:
    """Retract a node and every edge touching it; history (and `read … at=` before) keeps them."""
    node = ctx.resolve(request.node, "node")
    check_revision(node, request.expected_revision, ctx.session)
    reason = ctx.clean("reason", request.reason)
    if not reason or not reason.strip():
        raise InvalidArgument("forget needs a reason (kept in the audit record)", field="reason")
    gone_edges = [ctx.retract_edge(edge) for edge in ctx.session.live_edges([node.id])]
    say_current_again(ctx, [e for e in gone_edges if e.src == node.id], f"{node.name!r} is forgotten", "node")
    granted = grants.granted_ids(ctx.session)
    for held in ctx.session.slots_held_by(node.id):
        revision = ctx.put_slot(held.initiative_id, held.slot, None, held)
        if granted is None or held.initiative_id in granted:  # another initiative's slot is not named
            ctx.outcome.slots.append(SlotChange(held.slot, node.id, None, revision))
    gone = ctx.update_node(node, retracted=True)
    ctx.changes_log.append({"forget": node.id, "reason": reason})
    ctx.outcome.changes.append(Change("currentness", "current", "retracted"))
    ctx.mark_affected(gone)
    ctx.outcome.primary = ctx.outcome_ref(gone)
