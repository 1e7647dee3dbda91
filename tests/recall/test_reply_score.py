"""The reply to a memory that asks what the query asks is lent the question's own score, not only its
share of the best hit — unless the asking memory is long (decision 17.M1)."""

from __future__ import annotations

from typing import Any

import pytest

from kaeru.domain.plans import TEMPORAL_WEIGHT
from kaeru.domain.text import tokens
from kaeru.service import Service
from kaeru.service.recall.channels import TEMPORAL_WORDS
from tests.recall.helpers import FILLER, note, recall


def _before(explain: dict[str, float]) -> float:
    """A memory's fused score before the temporal channel (what it lends its reply)."""
    return sum(v for k, v in explain.items() if k in ("lexical", "proximity", "name"))


def _setting(service: Service, question: str) -> dict[str, Any]:
    for i in range(30):
        note(service, f"filler turn {i} about lunch plans")
    best = note(service, "Alice: the vacation decision is made, the vacation decision is final.")
    for i in range(5):
        note(service, f"filler turn {i} about the garden")
    asked = note(service, question)
    reply = note(service, "Bob: two weeks in Lisbon, booked yesterday.")
    for i in range(5):
        note(service, f"filler turn {i} about the weather")
    other = note(service, "Carol: the vacation photos from last year are in the shared folder.")
    return {"best": best, "asked": asked, "reply": reply, "other": other}


def test_the_reply_gets_its_question_s_own_score_below_a_stronger_hit(service: Service) -> None:
    """A short question further down than the best hit lends its reply its own score (times the
    channel's weight), so the answer ranks above a memory that only shares the question's word."""
    m = _setting(service, "Dan: and what did you finally decide about the vacation?")
    answer = recall(service, "vacation decision")
    order = [h.node.id for h in answer.hits]
    ex = answer.explain
    assert order[0] == m["best"] and _before(ex[m["asked"]]) < _before(ex[m["best"]])
    assert "lexical" not in ex[m["reply"]]
    assert ex[m["reply"]]["temporal"] == pytest.approx(TEMPORAL_WEIGHT * _before(ex[m["asked"]]), abs=1e-6)
    assert order.index(m["reply"]) < order.index(m["other"])


def test_a_long_memory_ending_with_a_question_lends_a_part_of_its_score(service: Service) -> None:
    """A long memory that ends by asking is mostly something else: its reply gets `TEMPORAL_WORDS` /
    its length of the question's score (or the question's share of the best hit, when that is more)."""
    body = "Dan: " + FILLER * 3 + "And what did you finally decide about the vacation?"
    words = len(tokens(body))
    assert words > TEMPORAL_WORDS
    m = _setting(service, body)
    answer = recall(service, "vacation decision", limit=30)
    ex = answer.explain
    own = _before(ex[m["asked"]])
    share = own / _before(ex[m["best"]])
    lent = max(share, own * TEMPORAL_WORDS / words)
    assert ex[m["reply"]]["temporal"] == pytest.approx(TEMPORAL_WEIGHT * lent, abs=1e-6)
    assert ex[m["reply"]]["temporal"] < TEMPORAL_WEIGHT * own
