"""`timelines` answers, for every pivot, what `timeline` answers around it (decisions 143, 145):
recall's temporal channel asks around all its seeds at once — a small scope read whole, a larger one
walked (in one statement on PostgreSQL, one `timeline` a pivot on SQLite) — the same neighbours, in
the same order."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from kaeru.domain.model import NodeType
from kaeru.storage.base import Store
from kaeru.storage.sql import graph
from tests.storage.test_node_rows import distinct_node


def _fill(store: Store) -> tuple[int, int, list[tuple[str, int]]]:
    """Two initiatives; nodes written with repeated timestamps (ties go by seq), some forgotten,
    some boards (never shown), some in both initiatives."""
    rng = random.Random(143)
    with store.write() as session:
        a = session.create_initiative("alpha", "2026-01-01T00:00:00.000000Z").id
        b = session.create_initiative("beta", "2026-01-01T00:00:00.000001Z").id
        base = distinct_node((a,))
        for k in range(60):
            at = f"2026-01-02T00:00:{rng.randint(0, 20):02d}.000000Z"
            node = replace(
                base,
                id=f"0190a0a0-0000-7000-8000-{k:012d}",
                name=f"node-{k}",
                created_at=at,
                recorded_at=at,
                initiatives=rng.choice([(a,), (b,), (a, b)]),
                node_type=NodeType.BOARD if k % 17 == 5 else base.node_type,
                retracted=k % 11 == 3,
            )
            session.put_node(node, request_id=None, actor="test", new=True)
        rows = session._db.rows("SELECT created_at, seq FROM nodes ORDER BY seq")  # type: ignore[attr-defined]
    return a, b, [(str(r[0]), int(r[1])) for r in rows]


@pytest.mark.parametrize("members", [graph.TIMELINE_MEMBERS, 0], ids=["read-whole", "walked"])
def test_every_pivot_gets_the_neighbours_timeline_gives_it(
    store: Store, members: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(graph, "TIMELINE_MEMBERS", members)
    a, b, positions = _fill(store)
    rng = random.Random(7)
    pivots = [(rng.choice(positions), rng.choice([0, 1, 3]), rng.choice([0, 1, 3, 8])) for _ in range(12)]
    pivots.append((("2026-01-02T00:00:99.000000Z", 10**9), 4, 2))  # past the newest: only earlier ones
    for scope in ([a], [b], [a, b]):
        with store.read() as session:
            each = [session.timeline(scope, since=None, until=None, pivot=p, before=x, after=y) for p, x, y in pivots]
            assert session.timelines(scope, pivots) == each
            assert session.timelines(scope, []) == []
    assert any(len(found) > 3 for found in each)  # the pivots do reach neighbours on both sides
