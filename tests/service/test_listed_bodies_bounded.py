"""A node a trail or `current_state` lists shows the start of its body, not all of it (decision
377): four neighbours of 1 MB each made a 4 MB `trail`, and `current_state` answered a 1 MB node
whole, where `read` pages one body by `budget_chars`. Each cut is marked by `body_range`, the trail
says how many it cut, and `read` still shows the whole body. Both backends."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service

Run = Callable[[str, dict[str, Any]], dict[str, Any]]
BIG = "the pump report says " + "word " * 60_000  # ~300 KB


@pytest.fixture
def run(service: Service) -> Run:
    return build_server(service).registry.run


def _id(answer: dict[str, Any]) -> str:
    assert answer["state"] == "applied", answer["issues"]
    node: str = answer["data"]["primary"]["id"]
    return node


def test_a_trail_lists_long_neighbours_and_ancestors_by_their_start(run: Run) -> None:
    hub = _id(run("note", {"initiative": "p", "text": "the hub note"}))
    big = [_id(run("note", {"initiative": "p", "text": f"{i} {BIG}", "link_to": hub, "weight": 0.9})) for i in range(4)]
    derived = {"initiative": "p", "from": big[0], "to": big[1], "edge_type": "derived_from", "weight": 0.9}
    assert run("link", derived)["state"] == "applied"
    for node, kind in ((hub, "neighbours"), (big[0], "provenance")):
        answer = run("trail", {"initiative": "p", "node": node, "kind": kind})
        assert answer["state"] == "ok" and len(json.dumps(answer)) < 60_000, (kind, len(json.dumps(answer)))
        listed = [e["node"] for e in answer["data"]["entries"] if e.get("node") and e["node"]["id"] in big]
        assert listed and all(n["body_range"] and n["body"] and len(n["body"]) < 3000 for n in listed)
        assert [i["code"] for i in answer["issues"]] == ["budget_truncated"]
    whole = run("read", {"initiative": "p", "node": big[0], "budget_chars": 64000})["data"]["hits"][0]
    assert whole["body"].startswith(f"0 {BIG[:1000]}")


def test_current_state_shows_a_long_node_by_its_start(run: Run) -> None:
    old = _id(run("note", {"initiative": "p", "text": BIG}))
    new = _id(run("evolve", {"initiative": "p", "mode": "supersede", "source": old, "new_body": f"v2 {BIG}"}))
    answer = run("current_state", {"initiative": "p", "node": old})
    assert answer["data"]["current"]["id"] == new and answer["data"]["current"]["body_range"]
    assert len(json.dumps(answer)) < 40_000
