"""Currentness by rule, never by judgement (SPEC §1.2)."""

from __future__ import annotations

from collections.abc import Iterable

from kaeru.domain.model import Currentness, EdgeType, HypothesisStatus, NodeType


def decide(
    node_type: NodeType,
    status: str | None,
    retracted: bool,
    verdicts: Iterable[tuple[str, EdgeType]],
) -> tuple[Currentness, list[str]]:
    """Currentness and successors from the live verdict edges pointing at a node.

    `verdicts` are `(source id, edge type)` of live `supersedes`/`falsifies` edges whose source is
    live, from any initiative. A retraction wins; then supersession; then refutation.
    """
    successors: list[str] = []
    refuted = node_type == NodeType.HYPOTHESIS and status == HypothesisStatus.REFUTED
    for source, edge_type in verdicts:
        if edge_type == EdgeType.SUPERSEDES:
            successors.append(source)
        elif edge_type == EdgeType.FALSIFIES:
            refuted = True
    successors = sorted(set(successors))
    if retracted:
        return Currentness.RETRACTED, successors
    if successors:
        return Currentness.SUPERSEDED, successors
    if refuted:
        return Currentness.REFUTED, successors
    return Currentness.CURRENT, successors
