"""`timelines` answers, for every pivot, what `timeline` answers around it (decisions 143, 145):
recall's temporal channel asks around all its seeds at once — a small scope read whole, a larger one
walked (in one statement on PostgreSQL, one `timeline` a pivot on SQLite) — the same neighbours, in
the same order."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest

from kaeru.domain.model import NodeType
from kaeru.storage.base import Store
from kaeru.storage.sql import db
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


def _answers(store: Store, scope: list[int], pivots: list[tuple[tuple[str, int], int, int]]) -> tuple[Any, Any, Any]:
    """`timeline` around each pivot, `timeline` over date windows, and `timelines` of all pivots."""
    windows = [(None, None), ("2026-01-02T00:00:05.000000Z", None), (None, "2026-01-02T00:00:12.000000Z"),
               ("2026-01-02T00:00:03.000000Z", "2026-01-02T00:00:09.000000Z")]  # fmt: skip
    with store.read() as session:
        each = [session.timeline(scope, since=None, until=None, pivot=p, before=x, after=y) for p, x, y in pivots]
        dated = [
            session.timeline(scope, since=since, until=until, pivot=pivot, before=2, after=after)
            for since, until in windows
            for pivot in (None, pivots[0][0])
            for after in (0, 3, 50)
        ]
        return each, dated, session.timelines(scope, pivots)


def test_a_small_scope_read_whole_answers_as_the_walk(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b, positions = _fill(store)
    rng = random.Random(7)
    pivots = [(rng.choice(positions), rng.choice([0, 1, 3]), rng.choice([0, 1, 3, 8])) for _ in range(12)]
    pivots.append((("2026-01-02T00:00:99.000000Z", 10**9), 4, 2))  # past the newest: only earlier ones
    for scope in ([a], [b], [a, b]):
        read = _answers(store, scope, pivots)
        monkeypatch.setattr(db, "FEW_MEMBERS", 0)  # every scope walked
        walked = _answers(store, scope, pivots)
        monkeypatch.undo()
        assert read == walked
        assert read[2] == read[0]  # `timelines` is `timeline` around each pivot
        with store.read() as session:
            assert session.timelines(scope, []) == []
    assert any(len(found) > 3 for found in read[0])  # the pivots do reach neighbours on both sides
    assert len({tuple(found) for found in read[1]}) > 5  # the windows do cut the timeline differently
