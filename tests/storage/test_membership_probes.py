"""A node's memberships follow it between initiatives and layers (decisions 16.W1, 16.W3, 16.T1): the
writes that move a node, and the reads that start from a node, see every membership; replay has no
index by time or key beside its table (SQLite migration 018, PostgreSQL 012); memberships are one
b-tree keyed by (initiative, facet, node) beside `memberships_node` (SQLite 022, PostgreSQL 018)."""

from __future__ import annotations

from dataclasses import replace

from kaeru.domain.model import Layer, NodeType
from kaeru.storage.base import Store
from kaeru.storage.records import SearchQuery
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
    assert "memberships_facet" not in names  # the table's own key orders it by facet (16.T1)


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


def _found(store: Store, scope: tuple[int, ...], word: str) -> tuple[list[str], int]:
    """A rare word's hits in `scope` (the search's ranked plan) and its count there (`count_matches`)."""
    query = SearchQuery(initiative_ids=scope, tokens=[word], omit_superseded=False)
    with store.read() as session:
        session.text_cache = False  # type: ignore[attr-defined]  # PostgreSQL: SQL's plans, not the copies
        rows, _, _ = session.search(query)
        return [r.id for r in rows], session.count_matches(query)


def test_a_rare_word_is_found_in_the_initiatives_its_node_belongs_to_now(store: Store) -> None:
    """PostgreSQL tests a rare word's few matches for the scope on the node's own row (decision
    142), SQLite through `memberships`: both must follow a node that moves and is forgotten."""
    with store.write() as session:
        a, b, c = (session.create_initiative(n, f"2026-01-01T00:00:00.00000{i}Z").id for i, n in enumerate("abc"))
        node = distinct_node((a, b))
        session.put_node(node, request_id=None, actor="test", new=True)
        for k in range(8):  # "lantern" is then rare: PostgreSQL finds it through the GIN index
            other = f"0190a0a0-0000-7000-8000-0000000001{k:02d}"
            words = {"name": f"filler-{k}", "body": "filler body", "description": "filler", "tags": ("topic:filler",)}
            filler = replace(node, id=other, initiatives=(a, b, c), **words)  # type: ignore[arg-type]
            session.put_node(filler, request_id=None, actor="test", new=True)
    assert [_found(store, (i,), "lantern") for i in (a, b, c)] == [([node.id], 1), ([node.id], 1), ([], 0)]
    with store.write() as session:
        session.put_node(
            replace(node, rev_no=2, revision="2-abcdefabcdef", initiatives=(c,)), request_id=None, actor="test"
        )
    assert [_found(store, (i,), "lantern") for i in (a, b, c)] == [([], 0), ([], 0), ([node.id], 1)]
    assert _found(store, (a, b, c), "lantern") == ([node.id], 1)  # once, whatever the scope holds
    with store.write() as session:
        gone = replace(node, rev_no=3, revision="3-abcdefabcdef", initiatives=(c,), retracted=True)
        session.put_node(gone, request_id=None, actor="test")
    assert _found(store, (a, b, c), "lantern") == ([], 0)


def _membership_rows(store: Store) -> list[tuple[int, str, int]]:
    with store.read() as session:
        db = session._db
        found = db.rows("SELECT initiative_id, facet, node_seq FROM memberships ORDER BY 1, 2, 3")
    return [(int(r[0]), db.dialect.facet_of(r[1]), int(r[2])) for r in found]


def test_the_facet_in_the_key_moves_with_the_node_and_members_stay_in_seq_order(store: Store) -> None:
    """The facet is part of the membership key (16.T1): a layer move rewrites the key of each row the
    node keeps (one row per initiative, never a second), an audit event's rows carry '' and no section
    counts them, and an initiative's members are listed oldest first whatever their layers."""
    base = distinct_node(())
    with store.write() as session:
        a = session.create_initiative("alpha", "2026-01-01T00:00:00.000000Z").id
        b = session.create_initiative("beta", "2026-01-01T00:00:00.000001Z").id
        layers = (Layer.WARM, Layer.HOT, Layer.WARM, Layer.CORE)
        nodes = [
            replace(
                base, id=f"0190a0a0-0000-7000-8000-00000000010{i}", name=f"lantern-{i}", layer=layer, initiatives=(a, b)
            )
            for i, layer in enumerate(layers)
        ]
        for node in nodes:
            session.put_node(node, request_id=None, actor="test", new=True)
        event = replace(
            base,
            id="0190a0a0-0000-7000-8000-000000000199",
            name="an-event",
            node_type=NodeType.AUDIT_EVENT,
            initiatives=(a,),
        )
        session.put_node(event, request_id=None, actor="test", new=True)
    with store.read() as session:
        assert session.member_ids(a) == [n.id for n in nodes] + [event.id]
        assert session.newest_members(a, None, 10) == ([n.id for n in reversed(nodes)], 4)
        assert session.newest_members(a, ["archival:warm"], 1) == ([nodes[2].id], 2)
        assert session.scope_size([a, b]) == 8
    rows = _membership_rows(store)
    assert len(rows) == 9 and sum(1 for r in rows if r[1] == "") == 1
    # The hot node moves to warm and leaves beta: its key in alpha changes, its row in beta goes.
    moved = replace(nodes[1], rev_no=2, revision="2-abcdefabcdef", layer=Layer.WARM, initiatives=(a,))
    with store.write() as session:
        session.put_node(moved, request_id=None, actor="test")
    rows = _membership_rows(store)
    assert len(rows) == 8 and len({(i, seq) for i, _, seq in rows}) == 8
    with store.read() as session:
        assert session.member_ids(a) == [n.id for n in nodes] + [event.id]
        assert session.member_ids(b) == [nodes[0].id, nodes[2].id, nodes[3].id]
        assert session.newest_members(a, ["archival:warm"], 10) == ([nodes[2].id, nodes[1].id, nodes[0].id], 3)
        assert session.newest_members(a, ["archival:hot"], 10) == ([], 0)
        assert session.newest_members(b, None, 10) == ([nodes[3].id, nodes[2].id, nodes[0].id], 3)
        assert session.tier_counts([a, b]) == {a: {"archival": 4}, b: {"archival": 3}}
        assert session.initiatives_holding_name("lantern-1") == [a]
