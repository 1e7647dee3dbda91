"""A saved chain (`link action=chain`) is one node per path: saving the same path again keeps it,
a new summary edits it in place; `trail kind=path` asks for its goal and says when there is no path."""

from __future__ import annotations

from itertools import pairwise

from tests.working.conftest import Call

P = "chains"


def _line(call: Call, count: int = 3) -> list[str]:
    ids = [call("note", initiative=P, text=f"link {i} of the line")["data"]["primary"]["id"] for i in range(count)]
    for a, b in pairwise(ids):
        added = call("link", initiative=P, **{"from": {"id": a}, "to": {"id": b}}, edge_type="causal", weight=0.9)
        assert added["state"] == "applied", added
    return ids


def test_saving_a_chain_again_keeps_the_one_chain_and_a_new_summary_edits_it(call: Call) -> None:
    ids = _line(call)
    ends = {"from": {"id": ids[0]}, "to": {"id": ids[-1]}}
    first = call("link", initiative=P, action="chain", summary="why the line holds", **ends)
    assert first["state"] == "applied"
    chain = first["data"]["primary"]

    again = call("link", initiative=P, action="chain", summary="why the line holds", **ends)
    assert again["state"] == "unchanged" and again["data"]["primary"] == chain
    bare = call("link", initiative=P, action="chain", **ends)
    assert bare["state"] == "unchanged" and bare["data"]["primary"] == chain, "no summary keeps the saved one"

    edited = call(
        "link", initiative=P, action="chain", summary="the line holds because each step causes the next", **ends
    )
    assert edited["state"] == "applied"
    assert edited["data"]["primary"]["id"] == chain["id"] and edited["data"]["primary"]["revision"] != chain["revision"]
    assert edited["data"]["changes"] == [
        {"field": "body", "before": "why the line holds", "after": "the line holds because each step causes the next"}
    ]
    read = call("read", initiative=P, node={"id": chain["id"]})["data"]["hits"][0]
    assert read["body"] == "the line holds because each step causes the next"
    chains = call("search", initiatives=[P], filters={"types": ["chain"]})["data"]["hits"]
    assert [h["id"] for h in chains] == [chain["id"]]


def test_a_path_trail_needs_its_goal_and_says_when_there_is_no_path(call: Call) -> None:
    ids = _line(call)
    no_goal = call("trail", initiative=P, node={"id": ids[0]}, kind="path")
    assert no_goal["state"] == "rejected"
    assert (no_goal["issues"][0]["code"], no_goal["issues"][0]["field"]) == ("invalid_argument", "to")
    backwards = call("trail", initiative=P, node={"id": ids[-1]}, kind="path", to={"id": ids[0]})
    assert backwards["state"] == "rejected"
    assert (backwards["issues"][0]["code"], backwards["issues"][0]["field"]) == ("not_found", "to")
    forwards = call("trail", initiative=P, node={"id": ids[0]}, kind="path", to={"id": ids[-1]})
    assert [e["node"]["id"] for e in forwards["data"]["entries"]] == ids
