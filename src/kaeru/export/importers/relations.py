"""A source's free-form relation name → one of kaeru's edge types (the name itself is kept as a label)."""

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
    "blocked_by": EdgeType.BLOCKS,
    "precedes": EdgeType.TEMPORAL,
    "follows": EdgeType.TEMPORAL,
    "before": EdgeType.TEMPORAL,
    "after": EdgeType.TEMPORAL,
    "temporal": EdgeType.TEMPORAL,
    "contradicts": EdgeType.CONTRADICTS,
    "supersedes": EdgeType.SUPERSEDES,
    "replaces": EdgeType.SUPERSEDES,
    "verifies": EdgeType.VERIFIES,
    "supports": EdgeType.VERIFIES,
    "falsifies": EdgeType.FALSIFIES,
    "refutes": EdgeType.FALSIFIES,
    "targets": EdgeType.TARGETS,
    "consolidated_to": EdgeType.CONSOLIDATED_TO,
    "refers_to": EdgeType.REFERS_TO,
    "relates_to": EdgeType.REFERS_TO,
    "related_to": EdgeType.REFERS_TO,
}

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
