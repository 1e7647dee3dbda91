"""A source's free-form relation name → one of kaeru's edge types (the name itself is kept as a label).

Another memory's relations are facts about the world ("Kubernetes replaces Nomad"), not verdicts on
memory: `relation_edge` never makes one a verdict or bookkeeping edge (`supersedes` would hide the
target from search, `falsifies` refute it), and turns an inverse name (`blocked_by`, `after`) round so
the edge means what the relation said. `edge_type_of` reads kaeru's own edge names (kaeru-md pages).
"""

from __future__ import annotations

import re

from kaeru.domain.model import EdgeType

_SYNONYMS: dict[str, EdgeType] = {
    "part_of": EdgeType.PART_OF,
    "is_part_of": EdgeType.PART_OF,
    "belongs_to": EdgeType.PART_OF,
    "member_of": EdgeType.PART_OF,
    "is_member_of": EdgeType.PART_OF,
    "contained_in": EdgeType.PART_OF,
    "child_of": EdgeType.PART_OF,
    "derived_from": EdgeType.DERIVED_FROM,
    "based_on": EdgeType.DERIVED_FROM,
    "source": EdgeType.DERIVED_FROM,
    "cites": EdgeType.DERIVED_FROM,
    "causes": EdgeType.CAUSAL,
    "caused": EdgeType.CAUSAL,
    "leads_to": EdgeType.CAUSAL,
    "results_in": EdgeType.CAUSAL,
    "causal": EdgeType.CAUSAL,
    "blocks": EdgeType.BLOCKS,
    "precedes": EdgeType.TEMPORAL,
    "before": EdgeType.TEMPORAL,
    "followed_by": EdgeType.TEMPORAL,
    "temporal": EdgeType.TEMPORAL,
    "refers_to": EdgeType.REFERS_TO,
    "relates_to": EdgeType.REFERS_TO,
    "related_to": EdgeType.REFERS_TO,
}

#: Names whose edge points the other way: `A blocked_by B` is `B blocks A`, `A after B` is `B temporal A`.
_INVERSES: dict[str, EdgeType] = {
    "blocked_by": EdgeType.BLOCKS,
    "is_blocked_by": EdgeType.BLOCKS,
    "after": EdgeType.TEMPORAL,
    "follows": EdgeType.TEMPORAL,
    "preceded_by": EdgeType.TEMPORAL,
    "caused_by": EdgeType.CAUSAL,
    "is_caused_by": EdgeType.CAUSAL,
    "has_part": EdgeType.PART_OF,
    "contains": EdgeType.PART_OF,
    "parent_of": EdgeType.PART_OF,
    "has_member": EdgeType.PART_OF,
}

#: Edge types that judge memory (currentness, doubt, support, a consolidation's successor) or
#: belong to a claim: kaeru writes them itself, another memory's relation never becomes one.
JUDGEMENTS = frozenset(
    {
        EdgeType.SUPERSEDES,
        EdgeType.FALSIFIES,
        EdgeType.CONTRADICTS,
        EdgeType.VERIFIES,
        EdgeType.CONSOLIDATED_TO,
        EdgeType.TARGETS,
    }
)

_NORMAL = re.compile(r"[^a-z0-9]+")


def normal(relation: str) -> str:
    """`Is Part Of` / `is-part-of` / `isPartOf` → `is_part_of`."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", relation.strip())
    return _NORMAL.sub("_", spaced.lower()).strip("_")


def edge_type_of(relation: str) -> tuple[EdgeType, str | None]:
    """The edge type for `relation`, and the label to keep (None when the name is the type's own)."""
    key = normal(relation)
    try:
        return EdgeType(key), None
    except ValueError:
        pass
    return _SYNONYMS.get(key, EdgeType.REFERS_TO), relation.strip() or None


def relation_edge(relation: str) -> tuple[EdgeType, str | None, bool]:
    """Another memory's `relation` as (edge type, label, reversed): `reversed` when the edge must run
    from the relation's target to its source. A name that would be a judgement is `refers_to` with
    the name as its label, as any name kaeru has no type for."""
    key = normal(relation)
    if key in _INVERSES:
        return _INVERSES[key], relation.strip(), True
    edge_type, label = edge_type_of(relation)
    if edge_type in JUDGEMENTS:
        return EdgeType.REFERS_TO, relation.strip(), False
    return edge_type, label, False
