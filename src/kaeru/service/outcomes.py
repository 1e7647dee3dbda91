"""What service calls return: plain values that the wire layer (`kaeru.api`) turns into envelopes.

Mutation outcomes are also what replay stores, so they round-trip through JSON exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kaeru.domain.budget import Cut
from kaeru.domain.model import Currentness, Edge, Node


@dataclass(frozen=True, slots=True)
class Issue:
    code: str
    message: str
    field: str | None = None
    retryable: bool = False


@dataclass(frozen=True, slots=True)
class EntityRef:
    id: str
    revision: str


@dataclass(frozen=True, slots=True)
class Change:
    field: str
    before: Any
    after: Any
    #: Set when a long string value was cut to keep an answer bounded (a `revise` of a long body
    #: answered both bodies whole): the value shown is the text's start, the range how much of it.
    before_range: Cut | None = None
    after_range: Cut | None = None


def change_data(change: Change) -> dict[str, Any]:
    """A change as the wire gives it: field, before, after, and the range of a cut value (only when
    one was cut, as a node's `body_range`: every other change keeps its three keys)."""
    data: dict[str, Any] = {"field": change.field, "before": change.before, "after": change.after}
    for side, cut_range in (("before_range", change.before_range), ("after_range", change.after_range)):
        if cut_range is not None:
            data[side] = {"start": cut_range.start, "end": cut_range.end, "total": cut_range.total}
    return data


def _change(data: dict[str, Any]) -> Change:
    """`change_data` read back (replay's stored outcome): a range's text is the value shown."""
    ranges = {
        side: Cut(data[value], **data[side])
        for side, value in (("before_range", "before"), ("after_range", "after"))
        if data.get(side)
    }
    return Change(data["field"], data["before"], data["after"], **ranges)


@dataclass(frozen=True, slots=True)
class EvidenceLink:
    id: str
    relation: str


@dataclass(frozen=True, slots=True)
class FailedStep:
    step: str
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class SlotChange:
    slot: str
    before: str | None
    after: str | None
    revision: str


def _fields(value: Any) -> dict[str, Any]:
    """The fields of a flat slotted record (no nested records) as a dict."""
    return {name: getattr(value, name) for name in value.__slots__}


@dataclass
class MutationOutcome:
    state: str = "applied"
    primary: EntityRef | None = None
    created: list[EntityRef] = field(default_factory=list)
    affected: list[EntityRef] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    evidence: list[EvidenceLink] = field(default_factory=list)
    failed_steps: list[FailedStep] = field(default_factory=list)
    slots: list[SlotChange] = field(default_factory=list)
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        # By hand: `dataclasses.asdict` walks and deep-copies every value, and every mutation calls
        # this twice (the replay record and the envelope).
        return {
            "state": self.state,
            "primary": _fields(self.primary) if self.primary is not None else None,
            "created": [_fields(e) for e in self.created],
            "affected": [_fields(e) for e in self.affected],
            "changes": [change_data(c) for c in self.changes],
            "evidence": [_fields(e) for e in self.evidence],
            "failed_steps": [_fields(f) for f in self.failed_steps],
            "slots": [_fields(s) for s in self.slots],
            "artifacts": [dict(a) for a in self.artifacts],
            "issues": [_fields(i) for i in self.issues],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MutationOutcome:
        primary = data.get("primary")
        return cls(
            state=data["state"],
            primary=EntityRef(**primary) if primary else None,
            created=[EntityRef(**e) for e in data.get("created", [])],
            affected=[EntityRef(**e) for e in data.get("affected", [])],
            changes=[_change(c) for c in data.get("changes", [])],
            evidence=[EvidenceLink(**e) for e in data.get("evidence", [])],
            failed_steps=[FailedStep(**f) for f in data.get("failed_steps", [])],
            slots=[SlotChange(**s) for s in data.get("slots", [])],
            artifacts=list(data.get("artifacts", [])),
            issues=[Issue(**i) for i in data.get("issues", [])],
        )


@dataclass(frozen=True, slots=True)
class NodeView:
    """A node as shown to a caller: names of its initiatives, its currentness, its (cut) body."""

    node: Node
    initiatives: list[str]
    currentness: Currentness
    successors: list[str]
    body: str | None
    body_range: Cut | None
    #: False when some shown field is not known as of the read time: today, an initiative whose name
    #: at a past read's moment is not recorded (see docs/decisions.md 13.B2).
    metadata_is_current: bool = True
    #: Set when `node.description` was cut to fit a budget (the view's node carries the shown part).
    description_range: Cut | None = None


@dataclass(frozen=True, slots=True)
class Omission:
    section: str
    count: int
    reason: str


@dataclass
class Coverage:
    initiatives: list[str]
    complete: bool = True
    rules_complete: bool = True
    omitted: list[Omission] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Continuation:
    cursor: str
    next_arguments: dict[str, Any]


@dataclass
class ReadOutcome:
    hits: list[NodeView]
    total: int
    coverage: Coverage
    continuation: Continuation | None = None
    issues: list[Issue] = field(default_factory=list)
    edges: list[Edge] | None = None


@dataclass
class TrailEntry:
    """One line of a trail: a revision, an edge event, an ancestor, a path step, a neighbour or a member."""

    kind: str
    at: str | None = None
    node: NodeView | None = None
    edge: Edge | None = None
    changes: list[Change] = field(default_factory=list)
    actor: str | None = None
    request_id: str | None = None
    depth: int | None = None
    direction: str | None = None
    action: str | None = None


@dataclass
class TrailOutcome:
    kind: str
    subject: NodeView
    entries: list[TrailEntry]
    coverage: Coverage
    cost: float | None = None
    issues: list[Issue] = field(default_factory=list)
    #: How many entries the trail has in all (this page's when None).
    total: int | None = None
    continuation: Continuation | None = None


@dataclass
class StateOutcome:
    status: str
    coverage: Coverage
    slot: str | None = None
    slot_revision: str | None = None
    subject: NodeView | None = None
    current: NodeView | None = None
    predecessors: list[NodeView] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    candidates: list[str] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)
