"""Graph walks are bounded (decision 15.P6): `link action=chain` expands at most `MAX_EXPANDED`
nodes, however large the graph, and says so when the walk was cut before reaching its goal."""

from __future__ import annotations

from itertools import pairwise

import pytest

from kaeru.service import graph
from tests.working.conftest import Call

LENGTH = 8


def _line(call: Call) -> list[str]:
    """A line of notes n0 → n1 → … with a strong edge from each to the next."""
    ids = [
        call("note", initiative="graph", text=f"step {i} of the line")["data"]["primary"]["id"] for i in range(LENGTH)
    ]
    for a, b in pairwise(ids):
        added = call("link", initiative="graph", **{"from": {"id": a}, "to": {"id": b}}, edge_type="causal", weight=0.9)
        assert added["state"] == "applied", added
    return ids


def test_a_chain_search_cut_short_says_so(call: Call, monkeypatch: pytest.MonkeyPatch) -> None:
    ids = _line(call)
    chain = {"initiative": "graph", "action": "chain", "from": {"id": ids[0]}, "to": {"id": ids[-1]}}

    monkeypatch.setattr(graph, "MAX_EXPANDED", 3)
    cut = call("link", **chain)
    assert cut["state"] == "rejected"
    issue = cut["issues"][0]
    assert issue["code"] == "not_found" and issue["field"] == "to"
    assert "cut" in issue["message"] and "3 nodes" in issue["message"]
    near = call("link", **{**chain, "to": {"id": ids[2]}})  # within reach of the same bound
    assert near["state"] == "applied"

    monkeypatch.setattr(graph, "MAX_EXPANDED", 2_000)
    whole = call("link", **chain)
    assert whole["state"] == "applied"
    members = whole["data"]["primary"]
    assert members is not None
