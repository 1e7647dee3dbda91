"""Capture use cases: `note` (one node by epistemic status) and `claim` (a hypothesis with evidence)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from kaeru.domain.model import (
    NOTE_KIND_TYPES,
    RULE_TAG,
    EdgeType,
    HypothesisStatus,
    Layer,
    Node,
    NodeType,
    NoteKind,
)
from kaeru.domain.timefmt import fmt, parse_date, parse_occurred
from kaeru.errors import InvalidArgument
from kaeru.service.mutation import WriteContext
from kaeru.service.outcomes import EvidenceLink, Issue
from kaeru.service.supersession import supersede_the_current

if TYPE_CHECKING:
    from kaeru.service.requests import ClaimRequest, NoteRequest, TaskRequest

#: How far after now `occurred_at` may be without a warning: a writer's clock and the vault's
#: differ by seconds under NTP, by minutes without it, and a moment "just now" is often rounded up;
#: two zones' wall times differ by 15 minutes at least (Nepal's and India's), so a time read in the
#: wrong zone — the usual slip, with a wrong year or day — is always past it.
OCCURRED_AHEAD = timedelta(minutes=5)

EVIDENCE_RELATION = {
    HypothesisStatus.SUPPORTED: EdgeType.VERIFIES,
    HypothesisStatus.REFUTED: EdgeType.FALSIFIES,
    HypothesisStatus.OPEN: EdgeType.TARGETS,
    HypothesisStatus.INCONCLUSIVE: EdgeType.TARGETS,
}


@dataclass(frozen=True)
class CaptureOptions:
    slot: str | None = None
    layer: Layer | None = None
    expected_slot_revision: str | None = None

    @classmethod
    def parse(cls, raw: dict[str, Any] | None, field: str = "options") -> CaptureOptions:
        raw = raw or {}
        layer = raw.get("layer")
        try:
            parsed_layer = Layer(layer) if layer is not None else None
        except ValueError as exc:
            raise InvalidArgument(f"unknown layer {layer!r}", field=f"{field}.layer") from exc
        if raw.get("expected_slot_revision") is not None and not raw.get("slot"):
            raise InvalidArgument("expected_slot_revision needs slot", field=f"{field}.slot")
        return cls(raw.get("slot"), parsed_layer, raw.get("expected_slot_revision"))


def parse_reminder(raw: Any, field: str) -> dict[str, Any] | None:
    """`{after: date, window_days: N≥1}` normalised, or None."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or set(raw) != {"after", "window_days"}:
        raise InvalidArgument("reminder needs exactly {after, window_days}", field=field)
    try:
        after = parse_date(str(raw["after"])).isoformat()
    except ValueError as exc:
        raise InvalidArgument(str(exc), field=f"{field}.after") from exc
    days = raw["window_days"]
    if not isinstance(days, int) or isinstance(days, bool) or not 1 <= days <= 2_147_483_647:
        raise InvalidArgument("window_days must be a whole number ≥ 1", field=f"{field}.window_days")
    return {"after": after, "window_days": days}


def parse_applicability(ctx: WriteContext, raw: Any, field: str) -> dict[str, Any] | None:
    """`{task?: NodeRef, through?: date}` with the task resolved to its id, or None."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or not raw or not set(raw) <= {"task", "through"}:
        raise InvalidArgument("applicability needs task and/or through", field=field)
    out: dict[str, Any] = {}
    if "task" in raw:
        from kaeru.service.tasks import require_task  # here: `tasks` imports this module

        task = require_task(ctx.resolve(raw["task"], f"{field}.task"), f"{field}.task")
        out["task"] = task.id
    if "through" in raw:
        try:
            through = parse_date(str(raw["through"]))
        except ValueError as exc:
            raise InvalidArgument(str(exc), field=f"{field}.through") from exc
        out["through"] = through.isoformat()
        if through < ctx.rt.today():  # a wrong year stored a rule no re-entry would ever deliver
            ctx.outcome.issues.append(
                Issue(
                    "already_ended",
                    f"{field}.through {through.isoformat()} has already ended (today is {ctx.rt.today().isoformat()}): "
                    "stored, but never given as in force",
                    field=f"{field}.through",
                )
            )
    return out


def link_new(ctx: WriteContext, node: Node, target: Node | None, request: NoteRequest | TaskRequest) -> None:
    """The `link_to` edge of a capture (new node → target), in the capture's transaction. A new node
    that supersedes a target superseded before supersedes its current version(s) too (decision 462)."""
    if target is None:
        return
    if request.edge_type == EdgeType.SUPERSEDES.value:
        supersede_the_current(ctx, node, target, float(request.weight), "link_to")
    else:
        ctx.add_edge(node, target, EdgeType(request.edge_type), float(request.weight))


def apply_slot(ctx: WriteContext, node: Node, options: CaptureOptions) -> None:
    if options.slot:
        ctx.take_slot(options.slot, node, options.expected_slot_revision, named_in="options.slot")


def note(ctx: WriteContext, request: NoteRequest) -> None:
    """Capture one node; see the `note` tool description for the parameters."""
    kind = NoteKind(request.kind)
    options = CaptureOptions.parse(request.options)
    text = ctx.clean("text", request.text)
    assert text is not None
    if not text.strip():
        raise InvalidArgument("text must not be blank", field="text")
    name = ctx.clean_name("name", request.name) if request.name is not None else None
    tags = ctx.clean_tags("tags", request.tags)
    node_type = NOTE_KIND_TYPES[kind]
    properties: dict[str, Any] = {}
    body: str | None = text
    description: str | None = None
    source = request.source
    if source is not None:
        if kind != NoteKind.REFERENCE:
            raise InvalidArgument("source is only for kind=reference", field="source")
        source = ctx.clean("source", source)
        assert source is not None
        body, description = source, text
        properties["source"] = {
            "sha256": hashlib.sha256(source.encode()).hexdigest(),
            "chars": len(source),
            "immutable": True,
        }
    if request.url is not None:
        properties["url"] = ctx.clean("url", request.url)
    if request.branch is not None:
        properties["branch"] = ctx.clean("branch", request.branch)
    if kind == NoteKind.RULE:
        properties["constraint_state"] = "active"
        applicability = parse_applicability(ctx, request.applicability, "applicability")
        if applicability:
            properties["applicability"] = applicability
    elif request.applicability is not None:
        raise InvalidArgument("applicability is only for kind=rule", field="applicability")
    reminder = parse_reminder(request.reminder, "reminder")
    if reminder:
        properties["reminder"] = reminder
    created_at = None
    if request.occurred_at is not None:
        try:
            created_at = fmt(parse_occurred(request.occurred_at, ctx.now, ctx.rt.settings.zone()))
        except ValueError as exc:
            raise InvalidArgument(f"occurred_at: {exc}", field="occurred_at") from exc
        properties["occurred_at"] = created_at
        if created_at > fmt(ctx.now + OCCURRED_AHEAD):  # fixed-width stamps: text order is time order
            ctx.outcome.issues.append(
                Issue(
                    "in_the_future",
                    f"occurred_at {created_at} is later than now ({ctx.now_s}): stored as when it happened, "
                    "so `timeline` lists it and `read`'s `created_at` gives it then; if it is a slip (a wrong "
                    "year or day, another zone's wall time), `forget` the note and write it again",
                    field="occurred_at",
                )
            )
    kind_tags = [RULE_TAG] if kind == NoteKind.RULE else [f"kind:{kind.value}"]
    link_target = ctx.resolve(request.link_to, "link_to") if request.link_to is not None else None
    node = ctx.create_node(
        node_type=node_type,
        body=body,
        name=name,
        name_fallback=kind.value,
        description=description,
        tags=[*kind_tags, *tags],
        layer=options.layer or Layer.WARM,
        properties=properties,
        created_at=created_at,
    )
    link_new(ctx, node, link_target, request)
    apply_slot(ctx, node, options)
    ctx.outcome.primary = ctx.outcome.created[0]


def claim(ctx: WriteContext, request: ClaimRequest) -> None:
    """A hypothesis, open or with its verdict and evidence, in one atomic call."""
    options = CaptureOptions.parse(request.options)
    text = ctx.clean("text", request.text)
    assert text is not None
    if not text.strip():
        raise InvalidArgument("text must not be blank", field="text")
    status = HypothesisStatus(request.initial_status)
    about = ctx.resolve(request.about, "about") if request.about is not None else None
    evidence_arg = request.evidence
    evidence_node: Node | None = None
    method: str | None = None
    if evidence_arg is not None:
        if not isinstance(evidence_arg, dict) or len(evidence_arg) != 1:
            raise InvalidArgument("evidence is {node} or {method}", field="evidence")
        if "node" in evidence_arg:
            evidence_node = ctx.resolve(evidence_arg["node"], "evidence.node")
        elif "method" in evidence_arg:
            method = ctx.clean("evidence.method", str(evidence_arg["method"]))
            if not method or not method.strip():
                raise InvalidArgument("evidence.method must not be blank", field="evidence.method")
        else:
            raise InvalidArgument("evidence is {node} or {method}", field="evidence")
    hypothesis = ctx.create_node(
        node_type=NodeType.HYPOTHESIS,
        body=text,
        name_fallback="claim",
        tags=["kind:claim", f"status:{status.value}"],
        layer=options.layer or Layer.WARM,
        status=status.value,
    )
    ctx.outcome.primary = ctx.outcome.created[0]
    if about is not None:
        ctx.add_edge(hypothesis, about, EdgeType.REFERS_TO, 0.8)
    relation = EVIDENCE_RELATION[status]
    if method is not None:
        evidence_node = ctx.create_node(
            node_type=NodeType.EXPERIMENT,
            body=method,
            name_fallback="evidence",
            tags=["kind:experiment"],
            layer=options.layer or Layer.WARM,
            status=status.value,
        )
    if evidence_node is not None:
        ctx.add_edge(evidence_node, hypothesis, relation, 1.0)
        ctx.outcome.evidence.append(EvidenceLink(evidence_node.id, relation.value))
    apply_slot(ctx, hypothesis, options)
