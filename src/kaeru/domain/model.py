"""The memory model: node and edge values and their closed vocabularies (SPEC §1)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any


class NodeType(StrEnum):
    TASK = "task"
    CHECKLIST = "checklist"
    ROADMAP = "roadmap"
    EXPERIMENT = "experiment"
    HYPOTHESIS = "hypothesis"
    SCRATCH = "scratch"
    DRAFT = "draft"
    EPISODE = "episode"
    AUDIT_EVENT = "audit_event"
    CHAIN = "chain"
    BOARD = "board"
    IDEA = "idea"
    OUTCOME = "outcome"
    REFERENCE = "reference"
    CONCEPT = "concept"
    ENTITY = "entity"
    SUMMARY = "summary"


class Tier(StrEnum):
    OPERATIONAL = "operational"
    ARCHIVAL = "archival"


class Layer(StrEnum):
    CORE = "core"
    HOT = "hot"
    WARM = "warm"
    COLD = "cold"
    FROZEN = "frozen"


class Visibility(StrEnum):
    LOCAL = "local"
    SHARED = "shared"


class EdgeType(StrEnum):
    REFERS_TO = "refers_to"
    DERIVED_FROM = "derived_from"
    SUPERSEDES = "supersedes"
    CONTRADICTS = "contradicts"
    VERIFIES = "verifies"
    FALSIFIES = "falsifies"
    TARGETS = "targets"
    CONSOLIDATED_TO = "consolidated_to"
    PART_OF = "part_of"
    CAUSAL = "causal"
    TEMPORAL = "temporal"
    BLOCKS = "blocks"


class Currentness(StrEnum):
    CURRENT = "current"
    SUPERSEDED = "superseded"
    REFUTED = "refuted"
    RETRACTED = "retracted"


class HypothesisStatus(StrEnum):
    OPEN = "open"
    SUPPORTED = "supported"
    REFUTED = "refuted"
    INCONCLUSIVE = "inconclusive"


class NoteKind(StrEnum):
    """How the agent knows what it captures; each kind maps to a node type (and a `kind:` tag)."""

    OBSERVATION = "observation"
    DECISION = "decision"
    JOT = "jot"
    REFERENCE = "reference"
    RULE = "rule"
    IDEA = "idea"
    DRAFT = "draft"
    SCRATCH = "scratch"
    ENTITY = "entity"
    CONCEPT = "concept"
    CHECKLIST = "checklist"
    ROADMAP = "roadmap"


NOTE_KIND_TYPES: dict[NoteKind, NodeType] = {
    NoteKind.OBSERVATION: NodeType.EPISODE,
    NoteKind.DECISION: NodeType.EPISODE,
    NoteKind.JOT: NodeType.EPISODE,
    NoteKind.REFERENCE: NodeType.REFERENCE,
    NoteKind.RULE: NodeType.CONCEPT,
    NoteKind.IDEA: NodeType.IDEA,
    NoteKind.DRAFT: NodeType.DRAFT,
    NoteKind.SCRATCH: NodeType.SCRATCH,
    NoteKind.ENTITY: NodeType.ENTITY,
    NoteKind.CONCEPT: NodeType.CONCEPT,
    NoteKind.CHECKLIST: NodeType.CHECKLIST,
    NoteKind.ROADMAP: NodeType.ROADMAP,
}

ARCHIVAL_BY_DEFAULT = frozenset({NodeType.IDEA, NodeType.OUTCOME, NodeType.REFERENCE})

#: Edges that decide currentness: a live source pointing with one of these makes the target non-current.
VERDICT_EDGES = frozenset({EdgeType.SUPERSEDES, EdgeType.FALSIFIES})

RULE_TAG = "kind:rule"
DECISION_TAG = "kind:decision"


def default_tier(node_type: NodeType) -> Tier:
    """Archival for settled knowledge types, operational for everything in flight."""
    return Tier.ARCHIVAL if node_type in ARCHIVAL_BY_DEFAULT else Tier.OPERATIONAL


@dataclass(frozen=True, slots=True)
class Node:
    """One revision of a node: every field is versioned, so a `Node` value is a point in history.

    `initiatives` holds initiative ids (stable across renames); names are attached at read time.
    """

    id: str
    rev_no: int
    revision: str
    node_type: NodeType
    tier: Tier
    name: str
    body: str | None
    description: str | None
    tags: tuple[str, ...]
    layer: Layer
    visibility: Visibility
    status: str | None
    properties: dict[str, Any]
    initiatives: tuple[int, ...]
    created_at: str
    recorded_at: str
    retracted: bool = False
    pinned: bool = False
    seq: int = 0

    def evolve(self, **changes: Any) -> Node:
        """A copy with some fields changed (the caller assigns the new revision)."""
        return replace(self, **changes)


@dataclass(frozen=True, slots=True)
class Edge:
    """One revision of a directed, typed, weighted edge; `key` identifies it across revisions."""

    src: str
    dst: str
    edge_type: EdgeType
    weight: float
    rev_no: int
    recorded_at: str
    created_at: str
    properties: dict[str, Any] = field(default_factory=dict)
    retracted: bool = False

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.src, self.dst, self.edge_type.value)


def revision_token(key: str, rev_no: int, recorded_at: str) -> str:
    """The opaque compare-and-set token of one revision: its number plus a digest of what it is."""
    import hashlib

    digest = hashlib.sha256(f"{key}|{rev_no}|{recorded_at}".encode()).hexdigest()[:12]
    return f"{rev_no}-{digest}"


#: The revision a slot reports before anyone ever took it, so `expected_slot_revision` can claim a free slot.
FREE_SLOT_REVISION = "0"


@dataclass(frozen=True, slots=True)
class NameSpan:
    """One name an initiative held, over recorded time `[valid_from, valid_to)` (`valid_to` None: still)."""

    name: str
    valid_from: str
    valid_to: str | None = None


def name_at(spans: tuple[NameSpan, ...] | list[NameSpan], at: str) -> tuple[str, bool] | None:
    """The name an initiative had at `at`, and whether that is known exactly.

    `spans` are the initiative's names in time order. Exact when a span covers `at`; otherwise the
    name it last had before `at` (it had ended by then), or its first known name (`at` is before the
    recorded history starts) — both not exact. None when no name is known at all.
    """
    if not spans:
        return None
    before: NameSpan | None = None
    for span in spans:
        if span.valid_from <= at and (span.valid_to is None or at < span.valid_to):
            return span.name, True
        if span.valid_from <= at:
            before = span
    return (before or spans[0]).name, False
