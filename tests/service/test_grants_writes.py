"""A token limited to some initiatives writes on its own nodes without touching or naming the nodes
of the others it reaches through an edge or a slot: a doubt raised from another initiative, the
evidence of an earlier verdict, a slot's previous holder. Those stay as they were — no retraction,
no supersession, no cooling, no new revision — and the write's answer neither names them nor
counts them, as a read would not show them (decision 15.K2). The admin's writes are unchanged."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from kaeru.domain.model import EdgeType
from kaeru.mcp.server import build_server
from kaeru.service import Service, grants
from kaeru.storage.base import Store

Run = Callable[[str, dict[str, Any]], dict[str, Any]]
PUB, SECRET = "pub", "secret-proj"
LIMITED = grants.Principal("lim", frozenset({PUB, "pub2"}))


@pytest.fixture
def run(service: Service) -> Run:
    return build_server(service).registry.run


def _id(answer: dict[str, Any]) -> str:
    assert answer["state"] == "applied", answer["issues"]
    primary: str = answer["data"]["primary"]["id"]
    return primary


def _as_limited(run: Run, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    with grants.acting(LIMITED):
        return run(tool, args)


def _unseen(answer: dict[str, Any], *hidden: str) -> None:
    """Nothing of the other initiative in the answer: neither its nodes' ids nor its name."""
    text = json.dumps(answer)
    for value in (*hidden, SECRET):
        assert value not in text, (value, answer)


def _revision(store: Store, node_id: str) -> tuple[int, str, bool]:
    with store.read() as session:
        node = session.get_node(node_id)
    assert node is not None
    return node.rev_no, node.layer.value, node.retracted


def _live(store: Store, src: str, dst: str, edge_type: EdgeType) -> bool:
    with store.read() as session:
        edge = session.get_edge(src, dst, edge_type)
    return edge is not None and not edge.retracted


def _currentness(run: Run, initiative: str, node_id: str) -> str:
    found: str = run("read", {"initiative": initiative, "node": {"id": node_id}})["data"]["hits"][0]["currentness"]
    return found


def test_closing_reviews_leaves_a_doubt_from_another_initiative_open_and_uncounted(run: Run, store: Store) -> None:
    target = _id(run("note", {"initiative": PUB, "text": "the cart total rounds half up"}))
    theirs = _id(run("review", {"initiative": SECRET, "action": "flag", "target": target, "reason": "zebulon doubts"}))
    ours = _id(run("review", {"initiative": PUB, "action": "flag", "target": target, "reason": "rounding looks off"}))
    before = _revision(store, theirs)

    closed = _as_limited(
        run, "review", {"initiative": PUB, "action": "close", "target": target, "resolution": "checked"}
    )
    assert closed["state"] == "applied"
    assert {"field": "open_reviews", "before": 1, "after": 0} in closed["data"]["changes"]
    _unseen(closed, theirs)
    # Its own doubt is closed and superseded by the resolution; the other one is as it was.
    assert not _live(store, ours, target, EdgeType.CONTRADICTS)
    assert _currentness(run, PUB, ours) == "superseded"
    assert _live(store, theirs, target, EdgeType.CONTRADICTS)
    assert _revision(store, theirs) == before and _currentness(run, SECRET, theirs) == "current"

    # Nothing more it can see to close: the same answer as for a node never doubted.
    again = _as_limited(run, "review", {"initiative": PUB, "action": "close", "target": target})
    assert again["issues"][0]["code"] == "not_found"
    assert again["issues"][0]["message"].endswith("has no open review to close")
    _unseen(again, theirs)

    # The admin closes every doubt, as before.
    admin = run("review", {"initiative": PUB, "action": "close", "target": target})
    assert {"field": "open_reviews", "before": 1, "after": 0} in admin["data"]["changes"]
    assert not _live(store, theirs, target, EdgeType.CONTRADICTS)


def test_a_new_verdict_leaves_the_evidence_of_another_initiative_linked_and_unnamed(run: Run, store: Store) -> None:
    evidence = _id(run("note", {"initiative": SECRET, "text": "zebulon measurement xylophage"}))
    ours = _id(run("note", {"initiative": PUB, "text": "our own measurement"}))
    claim = _id(
        run(
            "claim",
            {
                "initiative": PUB,
                "text": "rounding is wrong",
                "evidence": {"node": evidence},
                "initial_status": "refuted",
            },
        )
    )
    run("verdict", {"initiative": PUB, "hypothesis": claim, "status": "refuted", "evidence": {"node": ours}})
    before = _revision(store, evidence)

    changed = _as_limited(run, "verdict", {"initiative": PUB, "hypothesis": claim, "status": "supported"})
    assert changed["state"] == "applied"
    assert changed["data"]["changes"] == [
        {"field": "status", "before": "refuted", "after": "supported"},
        {"field": "evidence.falsifies", "before": ours, "after": None},
    ]
    _unseen(changed, evidence)
    assert not _live(store, ours, claim, EdgeType.FALSIFIES)
    assert _live(store, evidence, claim, EdgeType.FALSIFIES) and _revision(store, evidence) == before
    # That evidence still falsifies it: the claim reads refuted, as a node superseded from outside
    # the grants still reads superseded.
    assert _currentness(run, PUB, claim) == "refuted"


def test_taking_or_releasing_a_slot_held_by_another_initiatives_node_leaves_that_node_as_it_was(
    run: Run, store: Store
) -> None:
    holder = _id(run("note", {"initiative": SECRET, "text": "zebulon handoff notes"}))
    run("slot", {"initiative": PUB, "slot": "handoff", "node": holder})
    mine = _id(run("note", {"initiative": PUB, "text": "pub handoff notes"}))
    before = _revision(store, holder)

    taken = _as_limited(run, "slot", {"initiative": PUB, "slot": "handoff", "node": mine})
    assert taken["state"] == "applied"
    [change] = taken["data"]["slots"]
    assert (change["slot"], change["before"], change["after"]) == ("handoff", None, mine)
    _unseen(taken, holder)
    assert _revision(store, holder) == before  # no new revision: not cooled, not by `lim`
    assert _currentness(run, SECRET, holder) == "current"
    assert not _live(store, mine, holder, EdgeType.SUPERSEDES)
    state = run("current_state", {"initiative": PUB, "slot": "handoff"})
    assert state["data"]["current"]["id"] == mine  # the slot is the initiative's: it is taken

    # Given back to the other node by the admin, then released by the token: not named either.
    run("slot", {"initiative": PUB, "slot": "handoff", "node": holder})
    released = _as_limited(run, "slot", {"initiative": PUB, "slot": "handoff"})
    assert released["state"] == "applied" and released["data"]["slots"][0]["before"] is None
    _unseen(released, holder)


def test_a_merge_brings_a_slot_held_by_another_initiatives_node_without_touching_it(run: Run, store: Store) -> None:
    """`pub2`'s slot held by a `secret-proj` node, `pub`'s by its own newer holder: the merge keeps
    `pub`'s holder and leaves the other node as it was (the admin's merge supersedes and cools it)."""
    holder = _id(run("note", {"initiative": SECRET, "text": "zebulon owner notes"}))
    run("slot", {"initiative": "pub2", "slot": "owner", "node": holder})
    kept = _id(run("note", {"initiative": PUB, "text": "pub owner notes"}))
    run("slot", {"initiative": PUB, "slot": "owner", "node": kept})
    before = _revision(store, holder)

    merged = _as_limited(run, "initiative", {"initiative": "pub2", "action": "merge", "to": PUB})
    assert merged["state"] == "applied"
    assert [(s["before"], s["after"]) for s in merged["data"]["slots"]] == [(None, kept)]
    _unseen(merged, holder)
    assert _revision(store, holder) == before and _currentness(run, SECRET, holder) == "current"
    assert run("current_state", {"initiative": PUB, "slot": "owner"})["data"]["current"]["id"] == kept


def test_attaching_a_shared_node_names_only_the_granted_initiatives(run: Run) -> None:
    shared = _id(run("note", {"initiative": PUB, "text": "a fact both teams use"}))
    run("initiative", {"initiative": SECRET, "action": "attach", "node": shared})
    run("note", {"initiative": "pub2", "text": "the second project"})

    attached = _as_limited(run, "initiative", {"initiative": "pub2", "action": "attach", "node": shared})
    assert attached["data"]["changes"] == [{"field": "initiatives", "before": [PUB], "after": [PUB, "pub2"]}]
    _unseen(attached)
    detached = _as_limited(run, "initiative", {"initiative": "pub2", "action": "detach", "node": shared})
    assert detached["data"]["changes"] == [{"field": "initiatives", "before": [PUB, "pub2"], "after": [PUB]}]


def test_forgetting_a_shared_node_names_no_slot_of_another_initiative(run: Run, store: Store) -> None:
    shared = _id(run("note", {"initiative": PUB, "text": "a fact both teams use"}))
    run("initiative", {"initiative": SECRET, "action": "attach", "node": shared})
    run("slot", {"initiative": SECRET, "slot": "zebulon-lead", "node": shared})
    run("slot", {"initiative": PUB, "slot": "lead", "node": shared})

    forgotten = _as_limited(run, "forget", {"initiative": PUB, "node": shared, "reason": "wrong"})
    assert forgotten["state"] == "applied"
    assert [s["slot"] for s in forgotten["data"]["slots"]] == ["lead"]
    assert "zebulon" not in json.dumps(forgotten)
    # The forgotten node holds no slot anywhere: the other initiative's is released, unnamed.
    with store.read() as session:
        assert session.slots_held_by(shared) == []


def test_a_doubt_from_another_initiative_is_neither_counted_nor_offered_to_close(run: Run) -> None:
    """`reflect` offered a limited token the `review close` that answers `not_found` for it, counting
    the other initiative's doubt, and `context`'s reviews listed the node (decision 372)."""
    target = _id(run("note", {"initiative": PUB, "text": "the cart total rounds half up"}))
    run("review", {"initiative": SECRET, "action": "flag", "target": target, "reason": "zebulon doubts"})

    def offered(answer: dict[str, Any]) -> list[str]:
        return [i["node"] for i in answer["data"]["items"] if i["kind"] == "open_review"]

    def listed(answer: dict[str, Any]) -> list[str]:
        sections = {s["name"]: s for s in answer["data"]["sections"]}
        return [n["id"] for n in sections["reviews"]["items"]] if "reviews" in sections else []

    assert offered(run("reflect", {"initiative": PUB})) == [target]
    assert listed(run("context", {"initiative": PUB, "sections": ["reviews"]})) == [target]
    reflected = _as_limited(run, "reflect", {"initiative": PUB})
    assert offered(reflected) == [] and "doubt" not in json.dumps(reflected)
    assert listed(_as_limited(run, "context", {"initiative": PUB, "sections": ["reviews"]})) == []
