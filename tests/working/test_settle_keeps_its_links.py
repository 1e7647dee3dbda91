"""A settled (or unsettled) node is the same knowledge under a new identity, and keeps what held it
in place (decision 371): settling a correction left the fact it corrected reading current again —
`search` and `recall` then answered both the old and the new value as current — and settling a
superseded fact brought it back. Its doubts and its links, both ways, moved with it too."""

from __future__ import annotations

from typing import Any

from tests.working.conftest import Call


def _node(call: Call, node: str) -> dict[str, Any]:
    hit: dict[str, Any] = call("read", initiative="p", node={"id": node})["data"]["hits"][0]
    return hit


def _settle(call: Call, node: str, mode: str = "settle") -> str:
    settled = call("evolve", initiative="p", mode=mode, source={"id": node})
    assert settled["state"] == "applied", settled["issues"]
    new_id: str = settled["data"]["primary"]["id"]
    return new_id


def test_a_settled_correction_keeps_what_it_corrected_superseded(call: Call) -> None:
    old = call("note", initiative="p", text="the api rate limit is 100 per minute")["data"]["primary"]["id"]
    fix = call("evolve", initiative="p", mode="supersede", source={"id": old}, new_body="the api rate limit is 500")
    settled = _settle(call, fix["data"]["primary"]["id"])
    assert _node(call, old)["currentness"] == "superseded"
    assert _node(call, settled)["currentness"] == "current"
    hits = call("search", initiatives=["p"], text="rate limit")["data"]["hits"]
    assert [h["id"] for h in hits] == [settled]
    recalled = call("recall", initiatives=["p"], query="what is the api rate limit")["data"]["hits"]
    assert [h["currentness"] for h in recalled if h["id"] == old] in ([], ["superseded"])


def test_a_superseded_fact_settled_stays_superseded(call: Call) -> None:
    old = call("note", initiative="p", text="deploys go out on Fridays")["data"]["primary"]["id"]
    fix = call("evolve", initiative="p", mode="supersede", source={"id": old}, new_body="deploys go out on Tuesdays")
    settled_old = _settle(call, old)
    assert _node(call, settled_old)["currentness"] == "superseded"
    assert _node(call, fix["data"]["primary"]["id"])["currentness"] == "current"


def test_doubts_and_links_both_ways_move_to_the_successor(call: Call) -> None:
    target = call("note", initiative="p", text="the cache holds sessions for an hour")["data"]["primary"]["id"]
    cited = call("note", initiative="p", text="the session store is redis")["data"]["primary"]["id"]
    citing = call("note", initiative="p", text="login latency depends on the session cache")["data"]["primary"]["id"]
    link_out = {"from": {"id": target}, "to": {"id": cited}, "edge_type": "refers_to", "weight": 0.8}
    link_in = {"from": {"id": citing}, "to": {"id": target}, "edge_type": "causal", "weight": 0.9}
    assert call("link", initiative="p", **link_out)["state"] == "applied"
    assert call("link", initiative="p", **link_in)["state"] == "applied"
    flagged = call("review", initiative="p", action="flag", target={"id": target}, reason="is it an hour or a day?")
    assert flagged["state"] == "applied"
    settled = _settle(call, target)
    edges = {(e["from"], e["to"], e["edge_type"], e["weight"]) for e in _edges(call, settled)}
    assert (settled, cited, "refers_to", 0.8) in edges and (citing, settled, "causal", 0.9) in edges
    assert _node(call, settled)["currentness"] == "current"
    closed = call("review", initiative="p", action="close", target={"id": settled})
    assert closed["state"] == "applied", "the doubt moved with it and can be closed there"
    back = _settle(call, settled, "unsettle")
    edges = {(e["from"], e["to"], e["edge_type"]) for e in _edges(call, back)}
    assert (back, cited, "refers_to") in edges and (citing, back, "causal") in edges


def _edges(call: Call, node: str) -> list[dict[str, Any]]:
    found = call("read", initiative="p", node={"id": node}, neighbours=True)
    assert found["state"] == "ok", found["issues"]
    return list(found["data"]["edges"])
