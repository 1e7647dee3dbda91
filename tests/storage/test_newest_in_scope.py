"""`newest_in_scope` is what a search without words or filters returns (decision 144): recall
normalises BM25F's lengths by these memories, read from the memberships' key ranges instead of a
walk over every newer node of the vault — the same ids in the same order, on both engines."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from kaeru.domain.model import Layer, NodeType, Tier
from kaeru.storage.base import SearchQuery, Store
from kaeru.storage.sql import sections
from tests.storage.test_node_rows import distinct_node


def _walked(store: Store, scope: list[int], limit: int) -> list[str]:
    with store.read() as session:
        session.text_cache = False  # type: ignore[attr-defined]
        rows, _, _ = session.search(
            SearchQuery(initiative_ids=scope, omit_superseded=False, window=limit, count_total=False)
        )
    return [r.id for r in rows]


@pytest.mark.parametrize("ranges", [sections.NEWEST_RANGES, 0])  # key ranges; the walk kept for broad scopes
def test_the_newest_members_are_the_unfiltered_search(
    store: Store, ranges: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sections, "NEWEST_RANGES", ranges)
    rng = random.Random(144)
    with store.write() as session:
        ids = [session.create_initiative(n, f"2026-01-01T00:00:00.00000{i}Z").id for i, n in enumerate("abcd")]
        base = distinct_node((ids[0],))
        nodes = []
        for k in range(80):
            node = replace(
                base,
                id=f"0190a0a0-0000-7000-8000-{k:012d}",
                name=f"node-{k}",
                initiatives=tuple(sorted(rng.sample(ids, rng.choice([1, 1, 2])))),
                tier=rng.choice(list(Tier)),
                layer=rng.choice(list(Layer)),
                node_type=NodeType.BOARD if k % 13 == 4 else base.node_type,
            )
            session.put_node(node, request_id=None, actor="test", new=True)
            nodes.append(node)
        # Some move to another initiative or layer, some are forgotten: their ranges must follow.
        for k in range(0, 80, 7):
            nodes[k] = replace(nodes[k], rev_no=2, revision="2-abcdefabcdef", initiatives=(ids[3],), layer=Layer.COLD)
            session.put_node(nodes[k], request_id=None, actor="test")
        for k in range(3, 80, 9):
            rev = nodes[k].rev_no + 1
            gone = replace(nodes[k], rev_no=rev, revision=f"{rev}-abcdefabcdef", retracted=True)
            session.put_node(gone, request_id=None, actor="test")
    for scope in ([ids[0]], [ids[3]], [ids[0], ids[1]], ids, [ids[2], ids[2]]):
        for limit in (1, 5, 64):
            with store.read() as session:
                found = session.newest_in_scope(scope, limit)
            assert found == _walked(store, list(dict.fromkeys(scope)), limit), (scope, limit)
    with store.read() as session:
        assert session.newest_in_scope([], 5) == [] and session.newest_in_scope(ids, 0) == []
    assert len(_walked(store, ids, 64)) == 64  # the scope does hold more than a page
