"""A later verdict that changes a hypothesis's status overturns the earlier one: the earlier verdict's
evidence edges are retracted (history keeps them), so the hypothesis reads as its latest verdict says
— `supported` is no longer `refuted` by an old `falsifies` edge, and one evidence node does not both
verify and falsify it."""

from __future__ import annotations

from typing import Any

from tests.working.conftest import Call


def _hypothesis(call: Call, ref: str) -> dict[str, Any]:
    answer = call("read", initiative="q", node=ref, neighbours=True)
    assert answer["state"] == "ok", answer["issues"]
    return answer


def _evidence(answer: dict[str, Any], hypothesis: str) -> set[tuple[str, str]]:
    return {(e["edge_type"], e["from"]) for e in answer["data"]["edges"] if e["to"] == hypothesis}


def test_a_reversed_verdict_reads_as_the_latest_one(call: Call) -> None:
    bench = call("note", initiative="q", text="benchmark run 1 results", name="bench1")["data"]["primary"]["id"]
    other = call("note", initiative="q", text="benchmark run 2 results", name="bench2")["data"]["primary"]["id"]
    hypothesis = call("claim", initiative="q", text="caching halves latency")["data"]["primary"]["id"]

    refuted = call("verdict", initiative="q", hypothesis=hypothesis, status="refuted", evidence={"node": "bench1"})
    assert refuted["state"] == "applied"
    hit = _hypothesis(call, hypothesis)
    assert hit["data"]["hits"][0]["currentness"] == "refuted"

    supported = call("verdict", initiative="q", hypothesis=hypothesis, status="supported", evidence={"node": "bench2"})
    assert supported["state"] == "applied"
    assert {"field": "evidence.falsifies", "before": bench, "after": None} in supported["data"]["changes"]
    answer = _hypothesis(call, hypothesis)
    node = answer["data"]["hits"][0]
    assert (node["status"], node["currentness"]) == ("supported", "current")
    assert _evidence(answer, hypothesis) == {("verifies", other)}

    # The same evidence judged again the other way: one relation from it, the latest.
    again = call("verdict", initiative="q", hypothesis=hypothesis, status="refuted", evidence={"node": "bench2"})
    assert again["state"] == "applied"
    answer = _hypothesis(call, hypothesis)
    assert answer["data"]["hits"][0]["currentness"] == "refuted"
    assert _evidence(answer, hypothesis) == {("falsifies", other)}

    # Inconclusive takes back both kinds of closed verdict.
    open_again = call("verdict", initiative="q", hypothesis=hypothesis, status="inconclusive")
    assert open_again["state"] == "applied"
    answer = _hypothesis(call, hypothesis)
    assert answer["data"]["hits"][0]["currentness"] == "current"
    assert _evidence(answer, hypothesis) == set()


def test_more_evidence_for_the_same_verdict_keeps_the_earlier_evidence(call: Call) -> None:
    first = call("note", initiative="q", text="first run", name="run1")["data"]["primary"]["id"]
    second = call("note", initiative="q", text="second run", name="run2")["data"]["primary"]["id"]
    hypothesis = call("claim", initiative="q", text="the index helps")["data"]["primary"]["id"]
    for name in ("run1", "run2"):
        done = call("verdict", initiative="q", hypothesis=hypothesis, status="supported", evidence={"node": name})
        assert done["state"] == "applied"
    assert _evidence(_hypothesis(call, hypothesis), hypothesis) == {("verifies", first), ("verifies", second)}


def test_the_same_verdict_with_the_same_evidence_again_is_unchanged(call: Call) -> None:
    """A retried verdict without `request_id` (decision 297): the same status and evidence node
    write nothing and say `unchanged`, at the same revision; new evidence is still a change."""
    call("note", initiative="q", text="the SQL log shows 212 queries a request", name="sql-log")
    call("note", initiative="q", text="the profiler shows 200 ORM loads", name="profile")
    hypothesis = call("claim", initiative="q", text="checkout is slow from N+1 queries")["data"]["primary"]["id"]
    first = call("verdict", initiative="q", hypothesis=hypothesis, status="supported", evidence={"node": "sql-log"})
    again = call("verdict", initiative="q", hypothesis=hypothesis, status="supported", evidence={"node": "sql-log"})
    assert first["state"] == "applied" and again["state"] == "unchanged"
    assert again["data"]["primary"]["revision"] == first["data"]["primary"]["revision"]
    more = call("verdict", initiative="q", hypothesis=hypothesis, status="supported", evidence={"node": "profile"})
    assert more["state"] == "applied"


def test_a_hypothesis_is_not_its_own_evidence(call: Call) -> None:
    hypothesis = call("claim", initiative="q", text="the cache is cold at start")["data"]["primary"]["id"]
    answer = call("verdict", initiative="q", hypothesis=hypothesis, status="supported", evidence={"node": hypothesis})
    assert answer["state"] == "rejected" and answer["issues"][0]["field"] == "evidence.node"
    assert _hypothesis(call, hypothesis)["data"]["hits"][0]["status"] == "open"
