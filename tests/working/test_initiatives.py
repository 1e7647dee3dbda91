"""Initiatives: rename and merge keep everything reachable; misspellings are caught."""

from __future__ import annotations

from tests.working.conftest import Call


def test_rename_and_merge_keep_every_node_and_edge(call: Call) -> None:
    a = call("note", initiative="kaeru-memory", text="the vault uses WAL")["data"]["primary"]["id"]
    b = call(
        "note",
        initiative="kaeru-memory",
        text="several stdio servers share the vault",
        link_to=a,
        edge_type="causal",
        weight=0.9,
    )["data"]["primary"]["id"]
    typo = call("note", initiative="kaeru-memroy", text="a note under a misspelled name")
    warning = next(i for i in typo["issues"] if i["code"] == "new_initiative")
    assert "kaeru-memory" in warning["message"]
    c = typo["data"]["primary"]["id"]

    assert call("initiative", initiative="kaeru-memory", action="rename", to="kaeru")["state"] == "applied"
    assert call("read", initiative="kaeru", node=b, neighbours=True)["data"]["edges"][0]["to"] == a
    assert call("initiative", initiative="kaeru-memroy", action="merge", to="kaeru")["state"] == "applied"
    names = [i["name"] for i in call("initiatives")["data"]["initiatives"]]
    assert names == ["kaeru"]
    found = call("search", initiatives=["kaeru"], text="vault note misspelled")
    assert {h["id"] for h in found["data"]["hits"]} == {a, b, c}
    assert call("read", initiative="kaeru", node=c)["data"]["hits"][0]["initiatives"] == ["kaeru"]
    rename_clash = call("initiative", initiative="kaeru", action="rename", to="kaeru")
    assert rename_clash["state"] == "unchanged"


def test_delete_forgets_only_nodes_left_in_no_initiative(call: Call) -> None:
    only = call("note", initiative="scratchpad", text="only here")["data"]["primary"]["id"]
    shared = call("note", initiative="scratchpad", text="also elsewhere")["data"]["primary"]["id"]
    call("note", initiative="main", text="main exists")
    call("initiative", initiative="main", action="attach", node={"id": shared})
    call("initiative", initiative="scratchpad", action="delete")
    assert call("read", initiative="main", node={"id": shared})["state"] == "ok"
    gone = call("read", initiative="main", node={"id": only})
    assert gone["state"] == "rejected" and "forgotten" in gone["issues"][0]["message"]
    unknown = call("initiative", initiative="scratchpad", action="rename", to="x")
    assert unknown["state"] == "rejected" and unknown["issues"][0]["code"] == "unknown_initiative"


def _slot_holder(call: Call, initiative: str, text: str) -> str:
    node: str = call("note", initiative=initiative, text=text, options={"slot": "handoff"})["data"]["primary"]["id"]
    return node


def test_merge_of_two_slot_holders_keeps_the_newer_and_records_the_other(call: Call) -> None:
    """Both initiatives hold `handoff`: the holder taken last stays current, the other is its
    predecessor (superseded and cooled), whichever side of the merge it came from."""
    for newer_side in ("target", "merged"):
        old, new = f"old-{newer_side}", f"new-{newer_side}"
        if newer_side == "target":
            older = _slot_holder(call, old, "handoff of the merged scope")
            newer = _slot_holder(call, new, "handoff of the target scope")
        else:
            older = _slot_holder(call, new, "handoff of the target scope")
            newer = _slot_holder(call, old, "handoff of the merged scope")
        assert call("initiative", initiative=old, action="merge", to=new)["state"] == "applied"
        state = call("current_state", initiative=new, slot="handoff")["data"]
        assert state["current"]["id"] == newer, newer_side
        assert [p["id"] for p in state["predecessors"]] == [older], newer_side
        replaced = call("read", initiative=new, node={"id": older})["data"]["hits"][0]
        assert replaced["currentness"] == "superseded" and replaced["successors"] == [newer], newer_side
        assert replaced["layer"] == "cold", newer_side
        assert call("read", initiative=new, node={"id": newer})["data"]["hits"][0]["currentness"] == "current"


def test_merging_into_an_initiative_that_does_not_exist_is_refused(call: Call) -> None:
    """`merge` needs an existing target (a new name is a rename): refused, and nothing moves."""
    node = call("note", initiative="alpha", text="kept where it was")["data"]["primary"]["id"]
    refused = call("initiative", initiative="alpha", action="merge", to="nowhere")
    assert refused["state"] == "rejected"
    assert refused["issues"][0]["field"] == "to" and "rename instead" in refused["issues"][0]["message"]
    assert [i["name"] for i in call("initiatives")["data"]["initiatives"]] == ["alpha"]
    assert call("read", initiative="alpha", node=node)["data"]["hits"][0]["initiatives"] == ["alpha"]
