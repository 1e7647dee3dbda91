"""`context` finds the current notes of a layer however many stale ones are newer (decision 465).

`warm` and `recent` show current nodes only: superseded facts and closed tasks are left out. They
were left out after reading, in windows that stopped at 5,000 nodes: when an agent had closed
thousands of tasks and superseded thousands of facts since its last decisions, the sections came
back empty, the current notes behind them never reached. The thousands of stale nodes are written
straight to the store here (through the service this would take minutes), newer than the notes.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kaeru.domain.model import Edge, EdgeType, Layer, NodeType, Tier
from kaeru.storage.base import Store
from tests.storage.test_node_rows import distinct_node
from tests.working.conftest import Call

STALE_EACH = 2600  # closed tasks, and as many superseded notes: together past the old 5,000 window


def _sections(answer: dict[str, Any]) -> dict[str, dict[str, Any]]:
    assert answer["state"] == "ok", answer
    return {s["name"]: s for s in answer["data"]["sections"]}


def test_current_notes_behind_thousands_of_stale_ones_come_back(call: Call, store: Store) -> None:
    current = [call("note", initiative="p", text=f"the staging host is h{i}")["data"]["primary"] for i in range(3)]
    at = "2026-03-02T09:00:01.000000Z"
    with store.read() as session:
        scope = session.initiative_by_name("p")
    assert scope is not None
    base = replace(distinct_node((scope.id,)), tier=Tier.OPERATIONAL, layer=Layer.WARM, pinned=False)
    with store.write() as session:
        for i in range(STALE_EACH):
            uid = f"0190a0a0-0000-7000-8000-{i:012d}"
            task = replace(base, id=uid, name=f"task {i}", node_type=NodeType.TASK, status="done", tags=())
            session.put_node(task, request_id=None, actor="test", new=True)
        for i in range(STALE_EACH):
            old = replace(base, id=f"0190a0a0-0000-7000-9000-{i:012d}", name=f"fact {i}", node_type=NodeType.IDEA)
            new = replace(old, id=f"0190a0a0-0000-7000-a000-{i:012d}", layer=Layer.COLD)
            session.put_node(old, request_id=None, actor="test", new=True)
            session.put_node(new, request_id=None, actor="test", new=True)
            session.put_edge(Edge(new.id, old.id, EdgeType.SUPERSEDES, 1.0, 1, at, at))
    sections = _sections(call("context", initiative="p", sections=["warm", "recent"]))
    assert [n["id"] for n in sections["warm"]["items"]] == [n["id"] for n in reversed(current)]
    assert sections["warm"]["total"] == 3  # the current notes, not the stale ones passed over
    assert sections["recent"]["items"] == []  # `warm` holds every current eager node
    assert sections["recent"]["total"] == 0


def test_a_stale_node_passed_over_is_not_counted_in_the_total(call: Call) -> None:
    """With fewer stale nodes than a window, the section's total is its current nodes."""
    kept = call("note", initiative="p", text="deploys go through the release train")["data"]["primary"]
    for i in range(20):
        task = call("task", initiative="p", text=f"ship part {i}")["data"]["primary"]
        assert call("task_update", initiative="p", task=task["id"], status="done")["state"] == "applied"
    port = call("note", initiative="p", text="the dev server listens on 8080")["data"]["primary"]
    moved = call(
        "evolve", initiative="p", source=port["id"], mode="supersede", new_body="the dev server listens on 9090"
    )
    assert moved["state"] == "applied", moved
    sections = _sections(call("context", initiative="p", sections=["warm"]))
    ids = [n["id"] for n in sections["warm"]["items"]]
    assert port["id"] not in ids and kept["id"] in ids
    assert sections["warm"]["total"] == len(ids)


def test_a_small_layer_counts_its_current_notes_exactly(call: Call) -> None:
    """Stale nodes between and behind the current ones are not counted: the statement's first
    window fills with current notes, and the stale ones older than it were counted as current."""

    def closed_task(i: int) -> None:
        task = call("task", initiative="p", text=f"old chore {i}")["data"]["primary"]["id"]
        assert call("layer", initiative="p", nodes=[task], layer="warm")["state"] in ("applied", "unchanged")
        assert call("task_update", initiative="p", task=task, status="done")["state"] == "applied"

    def notes(count: int, tag: str) -> None:
        for i in range(count):
            note = call("note", initiative="p", text=f"{tag} fact number {i}")["data"]["primary"]["id"]
            call("layer", initiative="p", nodes=[note], layer="warm")

    for i in range(5):
        closed_task(i)
    notes(10, "early")
    for i in range(3):
        closed_task(10 + i)
    notes(10, "late")
    warm = _sections(call("context", initiative="p", sections=["warm"]))["warm"]
    assert warm["total"] == 20  # the 20 notes; the 8 closed tasks are not current
    assert len(warm["items"]) < 20  # the section's cap: the total is more than it shows
