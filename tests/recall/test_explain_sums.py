"""`explain` says how each hit's score is made (the `explain` field's description): the channels'
parts add up, `priors` and `currentness` multiply (given as logarithms), `updates` is added last.
Read that way, the parts give back the order recall answered in — a reader who added every part
found a hit ranked above one with a larger sum (helper's probe, session 38)."""

from __future__ import annotations

import itertools
import math

import pytest

from kaeru.api.requests import parse
from kaeru.service import Service
from tests.recall.helpers import P, note

MULTIPLIERS = ("priors", "currentness")


def _score(parts: dict[str, float]) -> float:
    added = sum(v for k, v in parts.items() if k not in (*MULTIPLIERS, "updates"))
    return added * math.exp(sum(parts.get(k, 0.0) for k in MULTIPLIERS)) + parts.get("updates", 0.0)


@pytest.mark.parametrize("intent", [None, "explain_decision", "debug_failure"])
def test_the_explained_parts_give_back_the_order(service: Service, intent: str | None) -> None:
    old = note(service, "Staging is hosted on Heroku, the staging app shopfront-staging.")
    note(service, "Checked the staging database: 40 of 100 connections in use.")
    note(service, "We decided staging keeps a nightly copy of production data.")
    service.note(parse("note", {"initiative": P, "kind": "decision", "text": "Staging deploys on every merge."}))
    service.evolve(
        parse("evolve", {"initiative": P, "mode": "supersede", "source": {"id": old}, "new_body": "Moved to Fly.io."})
    )
    service.claim(
        parse("claim", {"initiative": P, "text": "staging is slower than production", "initial_status": "refuted"})
    )
    for i in range(4):
        note(service, f"Routine: the staging smoke test passed, run {i}.")
    args = {"initiatives": [P], "query": "where is staging hosted and how does it deploy", "explain": True}
    outcome = service.recall(parse("recall", {**args, **({"task_intent": intent} if intent else {})}))
    scores = [_score(outcome.explain[h.node.id]) for h in outcome.hits]
    assert len(scores) >= 5
    assert all(a >= b - 1e-9 for a, b in itertools.pairwise(scores)), list(
        zip([h.node.body for h in outcome.hits], scores, strict=True)
    )
