"""Fusing recall's channels into one order: each channel's weighted contribution per node, then
priors, recency and layer nudges and currentness."""

from __future__ import annotations

import math

from kaeru.domain.currentness import decide
from kaeru.domain.model import Currentness, Layer, Node, NodeType
from kaeru.domain.plans import Plan
from kaeru.service.recall.updates import STEP, asks_history, newer_first
from kaeru.storage.base import Session

WINDOW = 100
LAYER_BONUS = {Layer.CORE: 1.0, Layer.HOT: 0.7, Layer.WARM: 0.3, Layer.COLD: 0.0, Layer.FROZEN: 0.0}


class Fusion:
    """Score fusion: each channel adds a weighted, normalised contribution per node.

    Lexical channels contribute their BM25 score divided by the best score of that query (so the
    best hit of a channel counts its full weight); expansion channels (temporal, graph) propagate a
    share of their seed's score, so a neighbour never outranks the hit that found it by much.
    """

    def __init__(self, plan: Plan, query: str = ""):
        self.plan = plan
        #: The query as asked (read by `updates`: whether it asks about the past).
        self.query = query
        self.scores: dict[str, dict[str, float]] = {}
        #: The query's stems and their scope idf (set by the channels; read by `updates`).
        self.query_stems: list[str] = []
        self.idf: dict[str, float] = {}
        #: The stems of a long question it is not ranked by (decision 168; set by the channels).
        self.left_out: list[str] = []
        #: Memories of the days the query names that no channel read (a crowded day, decision 471).
        self.unread = 0
        #: The words the question was searched for (set by the channels; the raw fallback asks them).
        self.words: list[str] = []

    def put(self, channel: str, node_id: str, value: float) -> None:
        weight = self.plan.weight(channel)
        if weight <= 0 or value <= 0:
            return
        parts = self.scores.setdefault(node_id, {})
        parts[channel] = max(parts.get(channel, 0.0), weight * value)

    def add_scored(self, channel: str, rows: list[tuple[str, float]]) -> None:
        if not rows:
            return
        best = rows[0][1] or -1.0
        for node_id, score in rows:
            self.put(channel, node_id, score / best if best else 0.0)

    def add_ranked(self, channel: str, ranked: list[str]) -> None:
        for rank, node_id in enumerate(ranked):
            self.put(channel, node_id, 1.0 / (1.0 + 0.1 * rank))

    def total(self, node_id: str) -> float:
        return sum(self.scores.get(node_id, {}).values())

    def ranked(self) -> list[str]:
        return sorted(self.scores, key=lambda i: -self.total(i))


def share(seed: float, top: float) -> float:
    """What a seed passes on to its neighbours: its score relative to the best seed, but never more
    than its own score, so a neighbour of a weak hit cannot outrank that hit."""
    return min(seed / top, seed)


def rank(session: Session, fusion: Fusion, pool: dict[str, Node], plan: Plan) -> tuple[list[str], int]:
    """Final order: fused score × priors, with recency/layer nudges and currentness applied; the
    first `WINDOW` ids, and how many ranked candidates fell beyond them."""
    ids = [i for i in fusion.scores if i in pool and not pool[i].retracted and pool[i].node_type != NodeType.BOARD]
    verdicts = session.verdicts_against(ids)
    by_age = sorted(ids, key=lambda i: -pool[i].seq)
    recency_rank = {node_id: r for r, node_id in enumerate(by_age)}
    final: dict[str, float] = {}
    successors: dict[str, list[str]] = {}
    for node_id in ids:
        node = pool[node_id]
        score = fusion.total(node_id)
        if plan.has_query:
            recency = plan.weight("recency") * 0.1 / (1 + 0.05 * recency_rank[node_id])
            layer = plan.weight("layer") * 0.1 * LAYER_BONUS.get(node.layer, 0.0)
            if recency:
                fusion.scores[node_id]["recency"] = recency
            if layer:
                fusion.scores[node_id]["layer"] = layer
            score += recency + layer
        prior = plan.type_priors.get(node.node_type.value, 1.0)
        for tag in node.tags:
            prior *= plan.tag_priors.get(tag, 1.0)
        if prior != 1.0:
            fusion.scores[node_id]["priors"] = round(math.log(prior), 6)
        score *= prior
        currentness, ahead = decide(node.node_type, node.status, node.retracted, verdicts.get(node_id, []))
        if ahead:
            successors[node_id] = ahead
        if currentness.value != "current":
            if plan.noncurrent_factor == 0.0:
                continue
            if currentness == Currentness.REFUTED and "failures" in fusion.scores[node_id]:
                # What a question about failures asks for: kept level, not demoted (decision 471).
                final[node_id] = score
                continue
            score *= plan.noncurrent_factor
            fusion.scores[node_id]["currentness"] = (
                round(math.log(plan.noncurrent_factor), 6) if plan.noncurrent_factor != 1.0 else 0.0
            )
        final[node_id] = score
    ranked = sorted(final, key=lambda i: (-final[i], -pool[i].seq))
    if plan.weight("updates") and not asks_history(fusion.query_stems, fusion.query):
        gains = newer_first(ranked, final, pool, fusion.query_stems, fusion.idf)
        lifted = successors_first(final, successors)
        for node_id, gain in [*gains.items(), *lifted.items()]:
            fusion.scores[node_id]["updates"] = round(fusion.scores[node_id].get("updates", 0.0) + gain, 6)
        if gains or lifted:
            ranked = sorted(final, key=lambda i: (-final[i], -pool[i].seq))
    return ranked[:WINDOW], len(ranked) - len(ranked[:WINDOW])


def successors_first(final: dict[str, float], successors: dict[str, list[str]]) -> dict[str, float]:
    """Set, in `final`, each ranked successor of a superseded hit just above it when it ranked
    below; returns each lifted hit's gain. A superseded fact is found by the words the question
    uses ("where is staging hosted?" — "Staging is hosted on Heroku"), its successor often in
    other words ("Staging moved to Fly.io"): the currentness factor alone left the stale answer
    first. A chain is followed to its end (a pass per link, bounded: a cycle of supersedes edges
    cannot lift for ever)."""
    gains: dict[str, float] = {}
    for _ in range(len(successors)):
        moved = False
        for older in sorted(successors, key=lambda i: -final.get(i, -math.inf)):
            if older not in final:
                continue
            for newer in successors[older]:
                if newer in final and final[newer] <= final[older]:
                    gains[newer] = gains.get(newer, 0.0) + final[older] + STEP - final[newer]
                    final[newer] = final[older] + STEP
                    moved = True
        if not moved:
            break
    return gains
