"""A node's memberships follow it between initiatives and layers (decisions 16.W1, 16.W3): the writes
that move a node, and the reads that start from a node, see every membership; replay has no index
by time or key beside its table (SQLite migration 018, PostgreSQL 012)."""

from __future__ import annotations

from dataclasses import replace

from kaeru.domain.model import Layer
from kaeru.storage.base import Store
from tests.storage.test_node_rows import distinct_node


def _indexes(store: Store) -> set[str]:
    with store.read() as session:
        db = session._db
        if db.dialect.name == "sqlite":
            found = db.rows("SELECT name FROM sqlite_schema WHERE type = 'index'")
        else:
            found = db.rows("SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()")
    return {r[0] for r in found}


def test_replay_has_no_index_beside_its_key_and_memberships_keep_theirs(store: Store) -> None:
    names = _indexes(store)
    assert not {"requests_key", "requests_created"} & names
    assert "memberships_node" in names  # multi-initiative scopes probe by node (16.W3)
    assert "memberships_facet" in names


def test_a_node_moved_between_initiatives_keeps_its_memberships_exact(store: Store) -> None:
    with store.write() as session:
        a = session.create_initiative("alpha", "2026-01-01T00:00:00.000000Z").id
        b = session.create_initiative("beta", "2026-01-01T00:00:00.000001Z").id
        c = session.create_initiative("gamma", "2026-01-01T00:00:00.000002Z").id
        node = distinct_node((a, b, c))
        session.put_node(node, request_id=None, actor="test", new=True)
    with store.read() as session:
        assert session.initiatives_holding_name(node.name) == [a, b, c]
        assert [session.newest_members(i, ["archival:hot"], 10)[1] for i in (a, b, c)] == [1, 1, 1]
    # A layer move rewrites the facet of every membership the node keeps, and only those.
    moved = replace(node, rev_no=2, revision="2-abcdefabcdef", layer=Layer.WARM, initiatives=(a, c))
    with store.write() as session:
        session.put_node(moved, request_id=None, actor="test")
    with store.read() as session:
        assert session.initiatives_holding_name(node.name) == [a, c]
        assert [session.newest_members(i, ["archival:warm"], 10)[1] for i in (a, b, c)] == [1, 0, 1]
        assert [session.newest_members(i, ["archival:hot"], 10)[1] for i in (a, b, c)] == [0, 0, 0]
        assert session.member_ids(b) == [] and session.member_ids(a) == [node.id]
    forgotten = replace(moved, rev_no=3, revision="3-abcdefabcdef", retracted=True)
    with store.write() as session:
        session.put_node(forgotten, request_id=None, actor="test")
    with store.read() as session:
        assert session.initiatives_holding_name(node.name) == []
        assert [session.newest_members(i, None, 10)[1] for i in (a, b, c)] == [0, 0, 0]
