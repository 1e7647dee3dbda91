"""The membership facets `context` reads its sections through (decision 16.R1), and the tier counts
`initiatives` reads from them (decision 136), stay equal to what a search over the nodes themselves
finds, whatever moves nodes between layers, tiers and initiatives: notes, tasks (and their boards),
layer moves, settling, revising, forgetting, attaching, detaching, merging and deleting."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kaeru.domain.model import Layer, NodeType, Tier
from kaeru.service import Service
from kaeru.storage.base import SearchQuery
from tests.working.conftest import Call, make_call

LAYERS = [layer.value for layer in Layer]
TIERS = [tier.value for tier in Tier]
#: What `initiatives` counts: every node type but audit events and boards.
COUNTED = [t.value for t in NodeType if t not in (NodeType.AUDIT_EVENT, NodeType.BOARD)]


def _check(service: Service) -> None:
    """Every initiative's every facet (and all of them): the index's newest ids and count are the search's."""
    with service.rt.store.read() as session:
        for scope in session.all_initiatives():
            for tier in TIERS:
                for layer in LAYERS:
                    rows, total, _ = session.search(
                        SearchQuery(initiative_ids=[scope.id], layers=[layer], tiers=[tier], omit_superseded=False)
                    )
                    assert session.newest_members(scope.id, [f"{tier}:{layer}"], 7) == (
                        [r.id for r in rows[:7]],
                        total,
                    ), (scope.name, tier, layer)
            rows, total, _ = session.search(SearchQuery(initiative_ids=[scope.id], omit_superseded=False))
            assert session.newest_members(scope.id, None, 5) == ([r.id for r in rows[:5]], total), scope.name
            facets = [f"{t}:{x}" for t in TIERS for x in ("core", "hot")]
            rows, total, _ = session.search(
                SearchQuery(initiative_ids=[scope.id], layers=["core", "hot"], omit_superseded=False)
            )
            assert session.newest_members(scope.id, facets, 4) == ([r.id for r in rows[:4]], total), scope.name
            expected = {}
            for tier in TIERS:
                _, total, _ = session.search(
                    SearchQuery(initiative_ids=[scope.id], tiers=[tier], types=COUNTED, omit_superseded=False)
                )
                if total:
                    expected[tier] = total
            assert session.tier_counts([scope.id]) == {scope.id: expected}, scope.name


def _ok(envelope: dict[str, Any]) -> dict[str, Any]:
    assert envelope["state"] in ("applied", "unchanged", "ok"), envelope
    return envelope


@pytest.mark.parametrize("seed", [1, 2])
def test_membership_facets_follow_every_move(service: Service, seed: int) -> None:
    call: Call = make_call(service)
    rng = random.Random(seed)
    names = ["alpha", "beta", "gamma"]
    live: list[tuple[str, str]] = []  # (node id, an initiative it was written into)
    for step in range(70):
        action = rng.choice(["note"] * 4 + ["task", "layer", "settle", "revise", "forget", "attach", "detach"])
        if action == "note" or not live:
            scope = rng.choice(names)
            layer = rng.choice(["core", "hot", "warm", "cold", "frozen"])
            made = _ok(call("note", initiative=scope, text=f"note {step} {rng.random()}", options={"layer": layer}))
            live.append((made["data"]["primary"]["id"], scope))
            continue
        if action == "task":  # a board is a node of its initiative, never counted by `initiatives`
            scope = rng.choice(names)
            columns = [{"key": "todo", "label": "To do"}, {"key": "done", "label": f"Done {step}"}]
            _ok(call("initiative", initiative=scope, action="set_board", columns=columns))
            made = _ok(call("task", initiative=scope, text=f"task {step}"))
            live.append((made["data"]["primary"]["id"], scope))
            continue
        node, scope = rng.choice(live)
        if action == "layer":
            call("layer", initiative=scope, nodes=[{"id": node}], layer=rng.choice(LAYERS[:5]))
        elif action == "settle":
            settled = call("evolve", initiative=scope, mode="settle", source={"id": node})
            if settled["state"] == "applied":
                live.remove((node, scope))
                live.append((settled["data"]["primary"]["id"], scope))
        elif action == "revise":
            call("revise", initiative=scope, node={"id": node}, patch={"body": f"revised {step}"})
        elif action == "forget":
            if call("forget", initiative=scope, node={"id": node}, reason="test")["state"] == "applied":
                live.remove((node, scope))
        elif action == "attach":
            call("initiative", initiative=rng.choice(names), action="attach", node={"id": node})
        elif action == "detach":
            call("initiative", initiative=scope, action="detach", node={"id": node})
        if step % 10 == 9:
            _check(service)
    _check(service)
    _ok(call("initiative", initiative="gamma", action="merge", to="alpha"))
    _check(service)
    _ok(call("initiative", initiative="beta", action="delete"))
    _check(service)


def test_scope_size_is_the_sum_of_tier_counts(service: Service) -> None:
    call: Call = make_call(service)
    for i in range(6):
        call("note", initiative="one" if i % 2 else "two", text=f"note {i}", options={"layer": "hot"})
    _ok(call("task", initiative="one", text="a task on the board"))
    made = _ok(call("note", initiative="one", text="soon forgotten"))
    _ok(call("forget", initiative="one", node={"id": made["data"]["primary"]["id"]}, reason="test"))
    kept = _ok(call("note", initiative="two", text="in both"))
    _ok(call("initiative", initiative="one", action="attach", node={"id": kept["data"]["primary"]["id"]}))
    with service.rt.store.read() as session:
        ids = [s.id for s in session.all_initiatives()]
        counts = session.tier_counts(ids)
        for chosen in ([ids[0]], [ids[1]], ids):
            assert session.scope_size(chosen) == sum(sum(counts[i].values()) for i in chosen)


def test_reflect_finds_edges_to_forgotten_nodes_either_way(service: Service) -> None:
    """Dangling edges are found from the forgotten nodes (`nodes_forgotten`, decision 16.R2)."""
    call: Call = make_call(service)
    ids = [_ok(call("note", initiative="d", text=f"note {i}"))["data"]["primary"]["id"] for i in range(4)]
    _ok(
        call(
            "link", initiative="d", **{"from": {"id": ids[0]}, "to": {"id": ids[1]}}, edge_type="refers_to", weight=0.5
        )
    )
    _ok(
        call(
            "link", initiative="d", **{"from": {"id": ids[2]}, "to": {"id": ids[3]}}, edge_type="refers_to", weight=0.5
        )
    )
    # `forget` retracts a node's edges too; a dangling edge is one whose end was retracted without
    # them (an import, an older version): written here at the storage level.
    with service.rt.store.write() as session:
        for forgotten in (ids[1], ids[2]):
            node = session.get_node(forgotten, for_update=True)
            assert node is not None
            gone = node.evolve(retracted=True, rev_no=node.rev_no + 1, revision=f"{node.revision}x")
            session.put_node(gone, request_id=None, actor="test")
    with service.rt.store.read() as session:
        scope = session.initiative_by_name("d")
        assert scope is not None
        found = {(e.src, e.dst) for e in session.dangling_edges([scope.id], 50)}
    assert found == {(ids[0], ids[1]), (ids[2], ids[3])}
