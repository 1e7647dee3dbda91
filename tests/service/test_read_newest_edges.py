"""`read` with neighbours picks a hub's newest links and counts the rest in SQL
(`newest_live_edges`): it read every live edge of the node and sorted them in Python, 53,000 for
a node that many notes link to. What it shows must not change: the same edges in the same order
(by key up to `READ_EDGES`, else the newest by time, ties by key) and the same omitted count, for
the admin and for a token limited to some initiatives. The expected lists are worked out here the
way `read` did it before: every live edge (`live_edges`), the visible ones kept, sorted in Python.
On both backends."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kaeru.domain.model import Edge
from kaeru.mcp.server import build_server
from kaeru.service import Service, grants
from kaeru.service.read import READ_EDGES
from kaeru.storage.base import Store

Run = Callable[[str, dict[str, Any]], dict[str, Any]]
LIMITED = grants.Principal("lim", frozenset({"hub"}))


def _as_read_did(store: Store, node_id: str, seen: frozenset[str] | None) -> tuple[list[tuple[str, str, str]], int]:
    """The edges `read` showed before and how many it left out (its old code, step by step)."""
    with store.read() as session:
        edges: list[Edge] = session.live_edges([node_id])
        if seen is not None:
            ids = {i for n in seen for i in session.initiative_ids_named([n]).get(n, [])}
            nodes = session.nodes_by_ids([e.src for e in edges] + [e.dst for e in edges])
            visible = {i for i, n in nodes.items() if not ids.isdisjoint(n.initiatives)}
            edges = [e for e in edges if e.src in visible and e.dst in visible]
    left = 0
    if len(edges) > READ_EDGES:
        edges.sort(key=lambda e: e.recorded_at, reverse=True)
        left = len(edges) - READ_EDGES
        edges = edges[:READ_EDGES]
    return [e.key for e in edges], left


def _shown(answer: dict[str, Any]) -> tuple[list[tuple[str, str, str]], int]:
    assert answer["state"] != "rejected", answer
    edges = [(e["from"], e["to"], e["edge_type"]) for e in answer["data"]["edges"]]
    left = sum(o["count"] for o in answer["coverage"]["omitted"] if o["section"] == "edges")
    return edges, left


@pytest.fixture
def hub(service: Service) -> tuple[Run, str, str]:
    """A hub with a few hundred links both ways (some from a note in another initiative, one
    removed) and a node with a few links; (run, hub id, small node id)."""
    run: Run = build_server(service).registry.run

    def note(initiative: str, text: str, **more: Any) -> str:
        return str(run("note", {"initiative": initiative, "text": text, **more})["data"]["primary"]["id"])

    hub = note("hub", "the hub every note cites")
    spokes = [note("hub", f"spoke number {n}", link_to={"id": hub}) for n in range(240)]
    for n in range(25):
        note("elsewhere", f"outside note {n}", link_to={"id": hub})

    def link(**args: Any) -> None:
        answer = run("link", {"initiative": "hub", **args})
        assert answer["state"] == "applied", answer["issues"]

    for spoke in spokes[:30]:
        link(**{"from": {"id": hub}, "to": {"id": spoke}, "edge_type": "refers_to", "weight": 0.5})
    link(**{"action": "remove", "from": {"id": spokes[-1]}, "to": {"id": hub}, "edge_type": "refers_to"})
    small = spokes[0]
    return run, hub, small


def test_read_shows_the_same_newest_links_and_count_as_before(store: Store, hub: tuple[Run, str, str]) -> None:
    run, hub_id, small = hub
    for node_id in (hub_id, small):
        asked = {"initiative": "hub", "node": {"id": node_id}, "neighbours": True}
        shown, left = _shown(run("read", asked))
        assert (shown, left) == _as_read_did(store, node_id, None)
        with grants.acting(LIMITED):
            limited = _shown(run("read", asked))
        assert limited == _as_read_did(store, node_id, LIMITED.initiatives)
    shown, left = _shown(run("read", {"initiative": "hub", "node": {"id": hub_id}, "neighbours": True}))
    assert len(shown) == READ_EDGES and left == 240 + 25 + 30 - 1 - READ_EDGES, "the hub's links are counted"
