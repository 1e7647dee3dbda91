"""`link add` without `edge_type` makes SPEC 1.2's default edge, `refers_to` (decision 312); reweight
and remove still name the edge they change, and a chain needs two nodes."""

from __future__ import annotations

from tests.working.conftest import Call


def test_an_edge_added_without_a_type_refers_to(call: Call) -> None:
    call("note", initiative="p", text="A", name="a")
    call("note", initiative="p", text="B", name="b")
    added = call("link", initiative="p", **{"from": "a", "to": "b"}, weight=0.5)
    assert added["state"] == "applied", added["issues"]
    assert added["data"]["changes"] == [{"field": "edge.refers_to", "before": None, "after": 0.5}]
    edges = call("read", initiative="p", node="a", neighbours=True)["data"]["edges"]
    assert [(e["edge_type"], e["weight"]) for e in edges] == [("refers_to", 0.5)]
    reweighted = call("link", initiative="p", action="reweight", **{"from": "a", "to": "b"}, weight=0.7)
    assert reweighted["state"] == "rejected" and reweighted["issues"][0]["field"] == "edge_type"


def test_a_chain_from_a_node_to_itself_is_refused(call: Call) -> None:
    call("note", initiative="p", text="A", name="a")
    refused = call("link", initiative="p", action="chain", **{"from": "a", "to": "a"})
    assert refused["state"] == "rejected" and refused["issues"][0]["field"] == "to"
    assert call("search", initiatives=["p"], filters={"types": ["chain"]})["data"]["hits"] == []
