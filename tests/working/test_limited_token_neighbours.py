"""What a token limited to some initiatives is told of nodes just outside them (decision 15.K2: it
learns nothing of other initiatives): a stale neighbour `recall` leaves out is not counted for it,
a saved chain's member outside its grants is not listed, and a successor or a slot's holder outside
them reads as no current one. The admin, calling the same way, is told of each. Both backends."""

from __future__ import annotations

from typing import Any

from kaeru.service import grants
from tests.working.conftest import Call
from tests.working.limited import LIMITED, PUB, SECRET, applied_id


def _as_limited(call: Call, tool: str, **args: Any) -> dict[str, Any]:
    with grants.acting(LIMITED):
        return call(tool, **args)


def test_a_stale_neighbour_outside_the_grants_is_not_counted_as_left_out(call: Call) -> None:
    """The admin's recall says one stale hit was left out (the cold neighbour in `secret-proj`); the
    limited token's says nothing: the count alone would tell it that something lies there."""
    seen = applied_id(call("note", initiative=PUB, text="the heron waits by the lighthouse"))
    hidden = applied_id(call("note", initiative=SECRET, text="the secret heron plan"))
    assert (
        call("link", initiative=PUB, **{"from": {"id": seen}, "to": {"id": hidden}}, weight=0.9)["state"] == "applied"
    )
    assert call("layer", initiative=SECRET, nodes=[{"id": hidden}], layer="cold")["state"] == "applied"

    admin = call("recall", initiatives=[PUB], query="heron")
    assert [h["id"] for h in admin["data"]["hits"]] == [seen]
    assert {"section": "hits", "count": 1, "reason": "stale"} in admin["coverage"]["omitted"]
    limited = _as_limited(call, "recall", initiatives=[PUB], query="heron")
    assert [h["id"] for h in limited["data"]["hits"]] == [seen]
    assert limited["coverage"]["omitted"] == [], limited["coverage"]


def test_a_saved_chain_lists_only_the_members_the_token_may_see(call: Call) -> None:
    """A chain saved while its middle step was shared with `pub`, which has left `pub` since: the
    admin's `trail kind=chain` lists the three members, the limited token's the two it may see."""
    first = applied_id(call("note", initiative=PUB, text="link 0 of the line"))
    last = applied_id(call("note", initiative=PUB, text="link 2 of the line"))
    middle = applied_id(call("note", initiative=SECRET, text="the hidden step"))
    assert call("initiative", initiative=PUB, action="attach", node={"id": middle})["state"] == "applied"
    for src, dst in ((first, middle), (middle, last)):
        linked = call(
            "link", initiative=PUB, **{"from": {"id": src}, "to": {"id": dst}}, edge_type="causal", weight=0.9
        )
        assert linked["state"] == "applied", linked
    chain = applied_id(
        call("link", initiative=PUB, action="chain", summary="why", **{"from": {"id": first}, "to": {"id": last}})
    )
    assert call("initiative", initiative=PUB, action="detach", node={"id": middle})["state"] == "applied"

    admin = call("trail", initiative=PUB, node={"id": chain}, kind="chain")
    assert [e["node"]["id"] for e in admin["data"]["entries"]] == [first, middle, last]
    limited = _as_limited(call, "trail", initiative=PUB, node={"id": chain}, kind="chain")
    assert limited["state"] == "ok", limited
    assert [e["node"]["id"] for e in limited["data"]["entries"]] == [first, last]


def test_a_successor_outside_the_grants_reads_as_no_current_one(call: Call) -> None:
    """`pub`'s ferry note superseded by a node that is in `secret-proj` alone: the admin's
    `current_state` names the successor, the limited token's says `no_current` and names nothing."""
    old = applied_id(call("note", initiative=PUB, text="the ferry leaves at nine", name="ferry"))
    new = applied_id(
        call("evolve", initiative=SECRET, mode="supersede", source={"id": old}, new_body="the ferry leaves at ten")
    )
    call("initiative", initiative=PUB, action="detach", node={"id": new})

    admin = call("current_state", initiative=PUB, node={"id": old})["data"]
    assert (admin["status"], admin["current"]["id"]) == ("current", new)
    limited = _as_limited(call, "current_state", initiative=PUB, node={"id": old})
    data = limited["data"]
    assert data["status"] == "no_current" and data.get("current") is None
    assert new not in str(limited), "the successor is not named anywhere in the answer"


def test_a_slot_holder_outside_the_grants_reads_as_no_current_one(call: Call) -> None:
    """`pub`'s handoff is held by a `secret-proj` note (the admin gave it the role): the admin is
    told the holder, the limited token that the slot has no current holder, and not which node."""
    call("note", initiative=PUB, text="a note of pub's own")
    holder = applied_id(call("note", initiative=SECRET, text="where we stopped: the parser"))
    assert call("slot", initiative=PUB, slot="handoff", node={"id": holder})["state"] == "applied"

    admin = call("current_state", initiative=PUB, slot="handoff")["data"]
    assert (admin["status"], admin["current"]["id"]) == ("current", holder)
    limited = _as_limited(call, "current_state", initiative=PUB, slot="handoff")
    assert limited["state"] == "ok", limited
    assert limited["data"]["status"] == "no_current" and limited["data"].get("current") is None
    assert holder not in str(limited)
