"""Two ways into `recall` no other test took: a query that is a node's exact name finds that node
first even when its name holds no word the index keeps (an emoji), through the `name` channel; and
a recall without a query, filtered by layer, lists only memories of that layer — the channels that
look at other layers or types (the core/hot listing, open tasks, open claims) are narrowed to
nothing instead of leaking theirs in. Both backends, through the MCP tool."""

from __future__ import annotations

from kaeru.service import Service
from tests.working.conftest import make_call

P = "launches"


def test_a_query_that_is_a_nodes_exact_name_finds_it_first(service: Service) -> None:
    call = make_call(service)
    call("note", initiative=P, name="q3-plan", text="budget for the autumn quarter")
    rocket = call("note", initiative=P, name="🚀", text="the sign we put on launch days")["data"]["primary"]["id"]
    answer = call("recall", initiatives=[P], query="🚀", explain=True)
    assert answer["state"] == "ok", answer
    hits = answer["data"]["hits"]
    assert hits[0]["id"] == rocket
    assert answer["data"]["explain"][rocket].get("name", 0) > 0


def test_a_recall_without_a_query_filtered_by_layer_lists_only_that_layer(service: Service) -> None:
    call = make_call(service)
    call("note", initiative=P, name="pinned-plan", text="kept at hand", options={"layer": "hot"})
    call("note", initiative=P, name="old-note", text="kept warm")
    call("task", initiative=P, name="open-task", text="still to do")
    call("claim", initiative=P, text="launches on Fridays fail more")
    for layer, names in (("hot", {"pinned-plan"}), ("warm", {"old-note", "open-task"})):
        answer = call("recall", initiatives=[P], layers=[layer])
        assert answer["state"] == "ok", answer
        hits = answer["data"]["hits"]
        assert {h["layer"] for h in hits} == {layer}
        assert names <= {h["name"] for h in hits}
    tasks_only = call("recall", initiatives=[P], types=["task"], layers=["hot"])
    assert tasks_only["state"] == "ok" and tasks_only["data"]["hits"] == []
