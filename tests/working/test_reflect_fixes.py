"""`reflect`'s work-list (SPEC: "each with the call that fixes it"): a stale chain, a near-duplicate
initiative, settled knowledge, old unreferenced notes and an overdue task are each listed with a
call that, run as given, succeeds, clears the item and does what its message says."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from tests.working.conftest import Call, Clock

P = "wall"


def _items(call: Call, kind: str) -> list[dict[str, Any]]:
    answer = call("reflect", initiative=P)
    assert answer["state"] == "ok", answer
    return [i for i in answer["data"]["items"] if i["kind"] == kind]


def _run_fix(call: Call, item: dict[str, Any]) -> dict[str, Any]:
    fix = item["fix"]
    done = call(fix["tool"], **fix["arguments"])
    assert done["state"] == "applied", done
    return done


def test_a_stale_chain_is_saved_again_along_the_strongest_path_as_the_same_chain(call: Call) -> None:
    ids = [call("note", initiative=P, text=f"stone {i} of the wall")["data"]["primary"]["id"] for i in range(3)]
    for a, b in [(0, 1), (1, 2)]:
        call("link", initiative=P, **{"from": {"id": ids[a]}, "to": {"id": ids[b]}}, edge_type="causal", weight=0.5)
    saved = call("link", initiative=P, action="chain", **{"from": {"id": ids[0]}, "to": {"id": ids[2]}})
    chain = saved["data"]["primary"]["id"]
    assert _items(call, "stale_chain") == []
    # A stronger direct edge: the saved path is no longer the strongest one.
    call("link", initiative=P, **{"from": {"id": ids[0]}, "to": {"id": ids[2]}}, edge_type="causal", weight=1.0)
    [stale] = _items(call, "stale_chain")
    assert stale["node"] == chain
    done = _run_fix(call, stale)
    assert done["data"]["primary"]["id"] == chain, "the same chain, not a second one"
    assert {"field": "chain.members", "before": ids, "after": [ids[0], ids[2]]} in done["data"]["changes"]
    assert _items(call, "stale_chain") == []
    steps = call("trail", initiative=P, node={"id": chain}, kind="chain")["data"]["entries"]
    assert [e["node"]["id"] for e in steps if "node" in e] == [ids[0], ids[2]]
    chains = call("search", initiatives=[P], filters={"types": ["chain"]})["data"]["hits"]
    assert [h["id"] for h in chains] == [chain]


def test_a_near_duplicate_initiative_is_merged_by_its_fix(call: Call) -> None:
    call("note", initiative=P, text="the wall stands on granite")
    stray = call("note", initiative="Wall", text="the wall needs a drain")["data"]["primary"]["id"]
    [duplicate] = _items(call, "near_duplicate_initiative")
    assert "'Wall'" in duplicate["message"]
    _run_fix(call, duplicate)
    assert [i["name"] for i in call("initiatives")["data"]["initiatives"]] == [P]
    assert call("read", initiative=P, node={"id": stray})["data"]["hits"][0]["initiatives"] == [P]
    assert _items(call, "near_duplicate_initiative") == []


def test_old_knowledge_is_settled_or_archived_by_its_fix(call: Call, clock: Clock) -> None:
    relied = call("note", initiative=P, text="granite carries the load")["data"]["primary"]["id"]
    alone = call("note", initiative=P, text="the mason came on a Tuesday")["data"]["primary"]["id"]
    user = call("note", initiative=P, text="the north face rests on granite")["data"]["primary"]["id"]
    linked = call(
        "link", initiative=P, **{"from": {"id": user}, "to": {"id": relied}}, edge_type="refers_to", weight=0.9
    )
    assert linked["state"] == "applied", linked
    assert _items(call, "settle_candidate") == [] and _items(call, "archivable") == [], "too new for either"
    clock.advance(days=15)
    settle = [i for i in _items(call, "settle_candidate") if i["node"] == relied]
    archivable = [i for i in _items(call, "archivable") if i["node"] == alone]
    assert len(settle) == 1 and len(archivable) == 1
    _run_fix(call, settle[0])
    _run_fix(call, archivable[0])
    assert call("read", initiative=P, node={"id": alone})["data"]["hits"][0]["layer"] == "cold"
    assert relied not in {i["node"] for i in _items(call, "settle_candidate")}
    assert alone not in {i["node"] for i in _items(call, "archivable")}


def test_a_chain_whose_path_is_gone_is_forgotten_by_its_fix(call: Call) -> None:
    """Decision 310: with no path left, saving the chain again is refused; its fix forgets it."""
    ids = [call("note", initiative=P, text=f"course {i} of the wall")["data"]["primary"]["id"] for i in range(3)]
    for a, b in [(0, 1), (1, 2)]:
        call("link", initiative=P, **{"from": {"id": ids[a]}, "to": {"id": ids[b]}}, edge_type="causal", weight=0.9)
    chain = call("link", initiative=P, action="chain", **{"from": {"id": ids[0]}, "to": {"id": ids[2]}})
    call("link", initiative=P, action="remove", **{"from": {"id": ids[1]}, "to": {"id": ids[2]}}, edge_type="causal")
    [stale] = _items(call, "stale_chain")
    assert stale["node"] == chain["data"]["primary"]["id"]
    _run_fix(call, stale)
    assert _items(call, "stale_chain") == []


def test_an_open_reviews_fix_closes_it_without_a_placeholder_resolution(call: Call) -> None:
    target = call("note", initiative=P, text="pool size 50 fixed the outage")["data"]["primary"]["id"]
    call("review", initiative=P, action="flag", target={"id": target}, reason="may exceed max_connections")
    [review] = _items(call, "open_review")
    assert "resolution" not in review["fix"]["arguments"]
    _run_fix(call, review)
    assert _items(call, "open_review") == []
    assert call("search", initiatives=[P], text="resolved")["data"]["hits"] == []


def test_a_settled_node_leaves_no_dangling_reference(call: Call) -> None:
    """A settle keeps its `consolidated_to` edge from the retracted source: a record, not a fault."""
    relied = call("note", initiative=P, text="the rate limit is 100 per key", name="ratelimit")["data"]["primary"]
    call("note", initiative=P, text="the SDK retries 429", link_to={"id": relied["id"]}, edge_type="derived_from")
    assert call("evolve", initiative=P, mode="settle", source={"id": relied["id"]})["state"] == "applied"
    assert _items(call, "dangling_reference") == []


def test_an_overdue_tasks_fix_moves_its_due_date_and_leaves_it_open(call: Call, clock: Clock) -> None:
    """The message offers to finish the task or move its due date; an agent that sends the fix as
    given must not close unfinished work (the fix was `status: done`)."""
    task = call("task", initiative=P, text="repoint the north face", due="2026-03-05")["data"]["primary"]["id"]
    clock.advance(days=10)
    today = date.fromisoformat(call("context", initiative=P)["data"]["today"])
    moved = (today + timedelta(days=7)).isoformat()
    [overdue] = _items(call, "overdue_task")
    assert overdue["node"] == task
    assert overdue["fix"] == {"tool": "task_update", "arguments": {"initiative": P, "task": task, "due": moved}}
    assert moved in overdue["message"] and "'done'" in overdue["message"], (
        "the message says the date and how to close it"
    )
    _run_fix(call, overdue)
    node = call("read", initiative=P, node={"id": task})["data"]["hits"][0]
    assert node["status"] == "open" and node["properties"]["due"] == moved
    tasks = {s["name"]: s for s in call("context", initiative=P)["data"]["sections"]}["tasks"]
    assert [n["id"] for n in tasks["items"]] == [task] and tasks["overdue"] == []
    assert _items(call, "overdue_task") == []
