"""The one SQL layer (`storage/sql/`): the guards and error mappings it gives both engines alike.

SQLite serialises writers, so these stale writes are unreachable through the services there; the
shared statements carry the guards anyway, and a stale write is a retryable conflict on both
engines, never `internal` from a unique key of the revision tables.
"""

from __future__ import annotations

import pytest

from kaeru.domain.model import Edge, EdgeType, Layer, Node, NodeType, Tier, Visibility
from kaeru.errors import RevisionConflict, SlotConflict, Unavailable
from kaeru.storage.base import SlotState, Store

NOW = "2030-01-01T00:00:00.000000Z"
LATER = "2030-01-01T00:00:01.000000Z"


def _node(node_id: str, initiative: int, rev_no: int = 1, revision: str = "1-a") -> Node:
    return Node(
        node_id, rev_no, revision, NodeType.IDEA, Tier.OPERATIONAL, f"name {node_id}", "a body", None, (),
        Layer.WARM, Visibility.SHARED, None, {}, (initiative,), NOW, NOW,
    )  # fmt: skip


@pytest.fixture
def initiative(store: Store) -> int:
    with store.write() as session:
        return session.create_initiative("layer", NOW).id


def test_a_stale_node_revision_is_a_retryable_conflict(store: Store, initiative: int) -> None:
    node = _node("0190a0a0-0000-7000-8000-00000000000a", initiative)
    with store.write() as session:
        session.put_node(node, request_id=None, actor="t")
        session.put_node(node.evolve(rev_no=2, revision="2-a", recorded_at=LATER), request_id=None, actor="t")
    with pytest.raises(RevisionConflict) as caught, store.write() as session:
        session.put_node(node.evolve(rev_no=2, revision="2-b", recorded_at=LATER), request_id=None, actor="t")
    assert caught.value.retryable
    with store.read() as session:
        assert [e.node.revision for e in session.revision_log(node.id)] == ["1-a", "2-a"]


def test_a_stale_edge_revision_is_a_retryable_conflict(store: Store, initiative: int) -> None:
    a, b = (
        _node("0190a0a0-0000-7000-8000-00000000000b", initiative),
        _node("0190a0a0-0000-7000-8000-00000000000c", initiative),
    )
    edge = Edge(a.id, b.id, EdgeType.REFERS_TO, 0.5, 1, NOW, NOW)
    with store.write() as session:
        session.put_node(a, request_id=None, actor="t")
        session.put_node(b, request_id=None, actor="t")
        session.put_edge(edge)
    with pytest.raises(RevisionConflict) as caught, store.write() as session:
        session.put_edge(Edge(a.id, b.id, EdgeType.REFERS_TO, 0.9, 1, LATER, NOW))
    assert caught.value.retryable
    with store.read() as session:
        assert [(e.weight, e.rev_no) for e in session.edge_log([a.id])] == [(0.5, 1)]


def test_a_stale_slot_revision_is_a_retryable_conflict(store: Store, initiative: int) -> None:
    with store.write() as session:
        session.put_slot(SlotState(initiative, "handoff", None, 1, "1-a", NOW))
    with pytest.raises(SlotConflict) as caught, store.write() as session:
        session.put_slot(SlotState(initiative, "handoff", None, 1, "1-b", LATER))
    assert caught.value.retryable
    with store.read() as session:
        assert [s.revision for s in session.slot_history(initiative, "handoff")] == ["1-a"]


def test_a_rename_onto_a_taken_name_is_unavailable_on_both_engines(store: Store, initiative: int) -> None:
    with store.write() as session:
        session.create_initiative("taken", NOW)
    with pytest.raises(Unavailable) as caught, store.write() as session:
        session.rename_initiative(initiative, "taken", LATER)
    assert caught.value.retryable and caught.value.code == "unavailable"
    with store.read() as session:
        assert [i.name for i in session.all_initiatives()] == ["layer", "taken"]
