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
