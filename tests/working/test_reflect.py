"""`reflect`'s work-list for knowledge that has settled: old notes others rely on are offered for
settling, old notes nothing refers to for archiving, and hygiene's own reports are never orphans."""

from __future__ import annotations

from typing import Any

from tests.working.conftest import Call, Clock


def _items(call: Call, kind: str) -> dict[str, dict[str, Any]]:
    envelope = call("reflect", initiative="r")
    assert envelope["state"] == "ok", envelope["issues"]
    return {item["node"]: item for item in envelope["data"]["items"] if item["kind"] == kind}


def _note(call: Call, text: str, **extra: Any) -> str:
    made = call("note", initiative="r", text=text, **extra)
    assert made["state"] == "applied", made["issues"]
    node_id: str = made["data"]["primary"]["id"]
    return node_id


def _link(call: Call, src: str, dst: str, edge_type: str) -> None:
    linked = call("link", initiative="r", **{"from": {"id": src}, "to": {"id": dst}}, edge_type=edge_type, weight=1.0)
    assert linked["state"] == "applied", linked["issues"]


def test_old_knowledge_is_offered_for_settling_or_archiving_by_what_refers_to_it(call: Call, clock: Clock) -> None:
    relied = _note(call, "the webhook retry policy backs off exponentially")
    citing = _note(call, "the deploy runbook follows the webhook retry policy")
    _link(call, citing, relied, "refers_to")
    lonely = _note(call, "a thought about cache warming nobody followed up")
    # Referred to only by a note that was forgotten since: nothing live relies on it.
    abandoned = _note(call, "the staging cluster sizing assumption")
    gone = _note(call, "a draft that cited the sizing assumption")
    _link(call, gone, abandoned, "refers_to")
    assert call("forget", initiative="r", node={"id": gone}, reason="obsolete draft")["state"] == "applied"
    pinned = _note(call, "a pinned reminder of the on-call rota")
    call("layer", initiative="r", nodes=[pinned], pin=True)
    task = call("task", initiative="r", text="rotate the signing keys")["data"]["primary"]["id"]

    # Fresh knowledge is neither: it has not settled yet.
    assert _items(call, "settle_candidate") == {} and _items(call, "archivable") == {}

    clock.advance(days=15)
    settle = _items(call, "settle_candidate")
    archive = _items(call, "archivable")
    assert set(settle) == {relied}
    assert settle[relied]["fix"]["tool"] == "evolve" and settle[relied]["fix"]["arguments"]["mode"] == "settle"
    assert {lonely, abandoned, citing} <= set(archive)
    assert archive[lonely]["fix"] == {
        "tool": "layer",
        "arguments": {"initiative": "r", "nodes": [lonely], "layer": "cold"},
    }
    # A pinned note and an unfinished task are never offered; nothing is offered twice.
    assert pinned not in settle and pinned not in archive
    assert task not in settle and task not in archive
    assert not set(settle) & set(archive)


def test_hygiene_reports_are_not_orphans(call: Call, clock: Clock, timed: Any) -> None:
    stale = _note(call, "an old core belief about retries", options={"layer": "core"})
    clock.advance(days=40)
    assert [m.node_id for m in timed.hygiene("r")] == [stale]
    orphans = _items(call, "orphan")
    envelope = call("reflect", initiative="r")
    reports = [
        hit["id"] for hit in call("search", initiatives=["r"], filters={"tags": ["kind:hygiene"]})["data"]["hits"]
    ]
    assert reports, "the hygiene pass wrote its report"
    assert stale in orphans
    assert not set(reports) & set(orphans)
    assert envelope["data"]["counts"]["orphan"] == len(orphans)


def test_a_saved_chain_is_no_orphan(call: Call) -> None:
    first = _note(call, "the cache miss raises the latency")
    second = _note(call, "the latency trips the alert")
    _link(call, first, second, "causal")
    chain = call("link", initiative="r", action="chain", **{"from": {"id": first}, "to": {"id": second}})
    assert chain["state"] == "applied", chain["issues"]
    lonely = _note(call, "an unrelated thought about fonts")
    # The chain node has no edges of its own (its members are its content): linking it would fix nothing.
    assert set(_items(call, "orphan")) == {lonely}
