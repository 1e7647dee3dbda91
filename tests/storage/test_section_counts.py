"""A section's size is its members counted, whatever wrote them (decision 16.P1).

`context` shows how many members each section holds beyond the ones it lists: SQLite counts the
range of the membership key (the index `memberships_facet` before 16.T1); PostgreSQL sums the counts kept in `section_counts` (migration 014),
which every node write changes in its own transaction. A random history of node writes (new nodes
in several initiatives, moves between initiatives, tiers and layers, audit events, forgotten and
restored nodes, several writes in one transaction, transactions rolled back) must leave every
section's size, every "any facet" size and `scope_size` equal to the members a model of the
history holds; on PostgreSQL the kept counts must also equal the membership rows grouped."""

from __future__ import annotations

import itertools
import threading
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kaeru.domain.model import Edge, EdgeType, Layer, Node, NodeType, Tier
from kaeru.storage.base import Store
from tests.storage.test_node_rows import distinct_node

FACETS = [f"{t.value}:{layer.value}" for t in Tier for layer in Layer]
_examples = itertools.count()

subset = st.lists(st.integers(0, 2), min_size=1, max_size=3, unique=True).map(tuple)
write = st.one_of(
    st.tuples(st.just("new"), subset, st.sampled_from(list(Tier)), st.sampled_from(list(Layer)), st.booleans()),
    st.tuples(st.just("move"), st.integers(0, 30), subset, st.sampled_from(list(Tier)), st.sampled_from(list(Layer))),
    st.tuples(st.just("forget"), st.integers(0, 30)),
    st.tuples(st.just("restore"), st.integers(0, 30)),
)
#: Transactions: their writes, and whether each commits.
transactions = st.lists(st.tuples(st.lists(write, min_size=1, max_size=3), st.sampled_from([True, True, False])))


class _RolledBack(Exception):
    pass


def _apply(nodes: list[Node], op: tuple[Any, ...], initiatives: list[int], serial: int) -> Node | None:
    """The node `op` writes (None: nothing to write), given the current `nodes`."""
    if op[0] == "new":
        _, members, tier, layer, audit = op
        base = distinct_node(tuple(initiatives[i] for i in members))
        return replace(
            base,
            id=f"0190a0a0-0000-7000-8000-{serial:012d}",
            name=f"node-{serial}",
            tier=tier,
            layer=layer,
            node_type=NodeType.AUDIT_EVENT if audit else NodeType.IDEA,
            status=None,
        )
    if not nodes:
        return None
    node = nodes[op[1] % len(nodes)]
    bumped = {"rev_no": node.rev_no + 1, "revision": f"{node.rev_no + 1}-abcdefabcdef"}
    if op[0] == "move":
        _, _, members, tier, layer = op
        return replace(node, initiatives=tuple(initiatives[i] for i in members), tier=tier, layer=layer, **bumped)
    return replace(node, retracted=op[0] == "forget", **bumped)


def _expected(nodes: dict[str, Node], initiative: int, facets: list[str] | None) -> int:
    return sum(
        1
        for n in nodes.values()
        if not n.retracted
        and n.node_type != NodeType.AUDIT_EVENT
        and initiative in n.initiatives
        and (facets is None or f"{n.tier.value}:{n.layer.value}" in facets)
    )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=transactions)
def test_section_sizes_follow_every_write(store: Store, history: list[tuple[list[tuple[Any, ...]], bool]]) -> None:
    example = next(_examples)
    with store.write() as session:
        initiatives = [session.create_initiative(f"sizes-{example}-{k}", "2026-01-01T00:00:00Z").id for k in range(3)]
    current: dict[str, Node] = {}
    serial = example * 1000
    for writes, commits in history:
        staged = dict(current)
        try:
            with store.write() as session:
                for op in writes:
                    serial += 1
                    node = _apply(list(staged.values()), op, initiatives, serial)
                    if node is None:
                        continue
                    session.put_node(node, request_id=None, actor="test", new=op[0] == "new")
                    staged[node.id] = node
                # A write's own read sees its own changes counted.
                for i in initiatives:
                    assert session.newest_members(i, None, 1)[1] == _expected(staged, i, None)
                if not commits:
                    raise _RolledBack
        except _RolledBack:
            continue
        current = staged
    with store.read() as session:
        for i in initiatives:
            for f in FACETS:
                assert session.newest_members(i, [f], 1)[1] == _expected(current, i, [f]), (i, f)
            pair = FACETS[1:3]
            assert session.newest_members(i, pair, 1)[1] == _expected(current, i, pair)
            assert session.newest_members(i, None, 1)[1] == _expected(current, i, None)
        assert session.scope_size(initiatives) == sum(_expected(current, i, None) for i in initiatives)
        assert session.scope_size(initiatives[:1]) == _expected(current, initiatives[0], None)
        db = session._db
        if db.dialect.name == "postgres":
            kept = db.rows(
                "SELECT initiative_id, facet, sum(members) FROM section_counts GROUP BY 1, 2 "
                "HAVING sum(members) <> 0 ORDER BY 1, 2"
            )
            counted = db.rows(
                "SELECT initiative_id, facet, count(*) FROM memberships WHERE facet <> '' GROUP BY 1, 2 ORDER BY 1, 2"
            )
            assert [tuple(map(str, r)) for r in kept] == [tuple(map(str, r)) for r in counted]


def test_memberships_written_outside_a_session_are_counted_by_the_trigger(store: Store) -> None:
    """PostgreSQL only: a membership row written by plain SQL (no node write set `kaeru.bulk_index`)
    changes the kept counts through the trigger, as a session's own count would."""
    with store.write() as session:
        a = session.create_initiative("alpha", "2026-01-01T00:00:00Z").id
        b = session.create_initiative("beta", "2026-01-01T00:00:00.1Z").id
        node = distinct_node((a,))
        session.put_node(node, request_id=None, actor="test", new=True)
        db = session._db
        if db.dialect.name != "postgres":
            pytest.skip("the kept counts are PostgreSQL's")
    with store.write() as session:
        db = session._db
        seq = session.get_node(node.id).seq  # type: ignore[union-attr]
        db.run("INSERT INTO memberships (initiative_id, node_seq, facet) VALUES (?, ?, 'archival:hot')", (b, seq))
        db.run("UPDATE memberships SET facet = 'operational:cold' WHERE initiative_id = ?", (a,))
        # An audit event's facet is '' (part of the key since migration 018): never counted.
        db.run("INSERT INTO memberships (initiative_id, node_seq, facet) VALUES (?, ?, '')", (b, seq + 1))
    with store.read() as session:
        assert session.newest_members(a, ["operational:cold"], 1)[1] == 1
        assert session.newest_members(a, ["archival:hot"], 1)[1] == 0
        assert session.newest_members(b, ["archival:hot"], 1)[1] == 1
        assert session.newest_members(b, None, 1)[1] == 1  # the kept count, not the rows read
    with store.write() as session:
        session._db.run("DELETE FROM memberships WHERE initiative_id = ?", (b,))
    with store.read() as session:
        assert session.newest_members(b, None, 1)[1] == 0
        assert session.newest_members(a, None, 1)[1] == 1


def test_inbound_contradictions_are_the_live_ones_into_live_members(store: Store) -> None:
    """`inbound` of one type names it in its text (PostgreSQL's partial index `edges_contradicts`
    serves it): the same edges as the query with every type, filtered to that type."""
    with store.write() as session:
        a = session.create_initiative("alpha", "2026-01-01T00:00:00Z").id
        b = session.create_initiative("beta", "2026-01-01T00:00:00.1Z").id
        made: list[Node] = []
        for k, (members, gone) in enumerate([((a,), False), ((a,), False), ((b,), False), ((a,), True), ((a,), False)]):
            node = replace(
                distinct_node(members), id=f"0190a0a0-0000-7000-8000-{k + 1:012d}", name=f"n{k}", retracted=gone
            )
            session.put_node(node, request_id=None, actor="test", new=True)
            made.append(node)
        t = "2026-01-02T00:00:00Z"
        edges = [
            (0, 1, EdgeType.CONTRADICTS, False),  # kept: live edge, live source, live member target
            (4, 1, EdgeType.CONTRADICTS, True),  # retracted edge
            (3, 0, EdgeType.CONTRADICTS, False),  # forgotten source
            (0, 2, EdgeType.CONTRADICTS, False),  # target in the other initiative
            (1, 0, EdgeType.REFERS_TO, False),  # another type
            (4, 0, EdgeType.CONTRADICTS, False),  # kept
        ]
        for src, dst, kind, gone in edges:
            session.put_edge(Edge(made[src].id, made[dst].id, kind, 1.0, 1, t, t, retracted=gone))
    with store.read() as session:
        one = session.inbound([a], [EdgeType.CONTRADICTS.value])
        every = session.inbound([a], [e.value for e in EdgeType])
        assert {k: [(e.src, e.edge_type) for e in v] for k, v in one.items()} == {
            made[0].id: [(made[4].id, EdgeType.CONTRADICTS)],
            made[1].id: [(made[0].id, EdgeType.CONTRADICTS)],
        }
        assert one == {
            k: kept for k, v in every.items() if (kept := [e for e in v if e.edge_type == EdgeType.CONTRADICTS])
        }
        db = session._db
        if db.dialect.name == "postgres":
            db.run("SET LOCAL enable_seqscan = off")
            plan = "\n".join(
                r[0]
                for r in db.rows(
                    "EXPLAIN SELECT e.src FROM edges e WHERE e.retracted = FALSE AND e.edge_type IN ('contradicts')"
                )
            )
            assert "edges_contradicts" in plan


def test_concurrent_writers_leave_the_kept_counts_exact(store: Store) -> None:
    """PostgreSQL only: writers in parallel threads (their own pooled connections, so their own
    shards or a shared one) add to the same sections; the sums are the rows, and none waits forever."""
    with store.write() as session:
        if session._db.dialect.name != "postgres":
            pytest.skip("the kept counts are PostgreSQL's")
        ids = [session.create_initiative(f"busy-{k}", "2026-01-01T00:00:00Z").id for k in range(2)]
    failures: list[BaseException] = []

    def writer(worker: int) -> None:
        try:
            for i in range(12):
                members = (ids[0],) if i % 3 == 0 else (ids[1],) if i % 3 == 1 else tuple(ids)
                node = replace(
                    distinct_node(members),
                    id=f"0190a0a0-0000-7000-8000-{worker:06d}{i:06d}",
                    name=f"w{worker}-{i}",
                    layer=list(Layer)[i % 5],
                )
                with store.write() as session:
                    session.put_node(node, request_id=None, actor="test", new=True)
                    if i % 4 == 3:  # and a move of the same node to another layer and scope
                        moved = replace(
                            node, rev_no=2, revision="2-abcdefabcdef", layer=Layer.COLD, initiatives=(ids[0],)
                        )
                        session.put_node(moved, request_id=None, actor="test")
        except BaseException as exc:  # reported below
            failures.append(exc)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures
    with store.read() as session:
        db = session._db
        kept = db.rows(
            "SELECT initiative_id, facet, sum(members) FROM section_counts WHERE initiative_id = ANY(?::bigint[]) "
            "GROUP BY 1, 2 HAVING sum(members) <> 0 ORDER BY 1, 2",
            (ids,),
        )
        counted = db.rows(
            "SELECT initiative_id, facet, count(*) FROM memberships WHERE facet <> '' "
            "AND initiative_id = ANY(?::bigint[]) GROUP BY 1, 2 ORDER BY 1, 2",
            (ids,),
        )
        assert [tuple(map(str, r)) for r in kept] == [tuple(map(str, r)) for r in counted]
        # A worker's 12 nodes: 4 in the first initiative, 4 in the second, 4 in both (16 rows); 3 of
        # them moved to the first alone (the one that was in both loses a row).
        assert sum(int(r[2]) for r in counted) == 4 * 15
        assert session.newest_members(ids[0], None, 1)[1] + session.newest_members(ids[1], None, 1)[1] == 60
