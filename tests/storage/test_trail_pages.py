"""A trail page is read as a page (decision 105): `history_page` and `links_page` answer one page of
a node's history or live links in the order `trail` always showed them — by offset, or past the last
place shown (the cursor's keyset) — on both engines, with the edges a token may not see left out
before paging (so its pages are full and its counts exclude them).
"""

from __future__ import annotations

import pytest

from kaeru.domain.model import Edge, EdgeType, Layer, Node, NodeType, Tier, Visibility
from kaeru.storage.base import Store
from kaeru.storage.sql.trails import HistoryItem

T = [f"2030-01-01T00:00:0{i}.000000Z" for i in range(6)]
HUB = "0190a0a0-0000-7000-8000-000000000010"
S = {i: f"0190a0a0-0000-7000-8000-00000000000{i}" for i in range(1, 7)}  # all sort before HUB
REFERS, CAUSAL = EdgeType.REFERS_TO, EdgeType.CAUSAL


def _node(node_id: str, initiative: int, at: str) -> Node:
    return Node(
        node_id, 1, "1-a", NodeType.IDEA, Tier.OPERATIONAL, f"name {node_id}", "a body", None, (),
        Layer.WARM, Visibility.SHARED, None, {}, (initiative,), at, at,
    )  # fmt: skip


def _edge(src: str, dst: str, kind: EdgeType, rev_no: int, at: str, *, gone: bool = False) -> Edge:
    return Edge(src, dst, kind, 0.5 + rev_no / 10, rev_no, at, T[0], retracted=gone)


@pytest.fixture
def hub(store: Store) -> tuple[int, int]:
    """A hub in initiative `a` with three revisions and edge events from spokes in `a` and `b`, some
    at the same moment as a revision or as each other; spoke 4 is forgotten."""
    with store.write() as session:
        a = session.create_initiative("a", T[0]).id
        b = session.create_initiative("b", T[0]).id
        hub = _node(HUB, a, T[0])
        session.put_node(hub, request_id=None, actor="t")
        for i, node_id in S.items():
            spoke = _node(node_id, b if i in (5, 6) else a, T[0])
            session.put_node(spoke, request_id=None, actor="t")
            if i == 4:
                session.put_node(spoke.evolve(rev_no=2, revision="2-a", retracted=True), request_id=None, actor="t")
        for edge in (
            _edge(S[1], HUB, REFERS, 1, T[0]),
            _edge(S[2], HUB, REFERS, 1, T[0]),
            _edge(S[4], HUB, REFERS, 1, T[1]),
            _edge(S[5], HUB, REFERS, 1, T[1]),
            _edge(HUB, S[3], CAUSAL, 1, T[1]),
            _edge(HUB, S[6], CAUSAL, 1, T[2]),
            _edge(S[1], HUB, REFERS, 2, T[3]),
            _edge(S[2], HUB, REFERS, 2, T[3], gone=True),
            _edge(S[2], HUB, REFERS, 3, T[4]),
        ):
            session.put_edge(edge)
        session.put_node(hub.evolve(rev_no=2, revision="2-a", recorded_at=T[2]), request_id=None, actor="t")
        session.put_node(hub.evolve(rev_no=3, revision="3-a", recorded_at=T[5]), request_id=None, actor="t")
    return a, b


#: The hub's whole history as `trail` orders it: by time; at one moment its revisions first, then its
#: edge events by key. Revisions as (rev_no, the one before); edge events as (source, target, rev_no,
#: whether the edge's revision before was retracted).
WHOLE = [
    (1, None),
    (S[1], HUB, 1, None),
    (S[2], HUB, 1, None),
    (S[4], HUB, 1, None),
    (S[5], HUB, 1, None),
    (HUB, S[3], 1, None),
    (2, 1),
    (HUB, S[6], 1, None),
    (S[1], HUB, 2, False),
    (S[2], HUB, 2, False),
    (S[2], HUB, 3, True),
    (3, 2),
]


def _shown(items: list[HistoryItem]) -> list[tuple[object, ...]]:
    return [
        (i.rev_no, i.previous_rev) if i.edge is None else (i.edge.src, i.edge.dst, i.edge.rev_no, i.previous_retracted)
        for i in items
    ]


def _items(store: Store, offset: int, limit: int, granted: list[int] | None) -> list[tuple[object, ...]]:
    with store.read() as session:
        return _shown(session.history_page(HUB, None, offset, limit, granted))


def _pages_after(store: Store, limit: int, granted: list[int] | None) -> list[list[HistoryItem]]:
    """The whole history a page at a time, each page past the last place of the page before."""
    pages: list[list[HistoryItem]] = []
    with store.read() as session:
        while not pages or len(pages[-1]) == limit:
            pages.append(session.history_page(HUB, pages[-1][-1].place if pages else None, 0, limit, granted))
    return pages


def test_a_history_page_is_that_slice_of_the_whole_history(store: Store, hub: tuple[int, int]) -> None:
    with store.read() as session:
        assert session.history_count(HUB, None) == len(WHOLE)
    assert _items(store, 0, 100, None) == WHOLE
    for limit in (1, 2, 5):
        pages = [_items(store, offset, limit, None) for offset in range(0, len(WHOLE), limit)]
        assert all(len(p) == limit for p in pages[:-1])
        assert [item for page in pages for item in page] == WHOLE
    assert _items(store, len(WHOLE), 5, None) == []


def test_a_page_past_a_place_follows_it_in_the_whole_historys_order(store: Store, hub: tuple[int, int]) -> None:
    for limit in (1, 2, 5):
        pages = _pages_after(store, limit, None)
        assert [item for page in pages for item in _shown(page)] == WHOLE
        assert all(len(p) == limit for p in pages[:-1])


def test_a_token_limited_to_some_initiatives_pages_and_counts_only_what_it_sees(
    store: Store, hub: tuple[int, int]
) -> None:
    a, _ = hub
    seen = [item for item in WHOLE if len(item) == 2 or {item[0], item[1]} <= {HUB, *(S[i] for i in (1, 2, 3, 4))}]
    assert len(seen) == len(WHOLE) - 2
    with store.read() as session:
        assert session.history_count(HUB, [a]) == len(seen)
    assert _items(store, 3, 3, [a]) == seen[3:6], "a full page, the hidden edge events not taking places"
    pages = _pages_after(store, 3, [a])
    assert [item for page in pages for item in _shown(page)] == seen and all(len(p) == 3 for p in pages[:-1])


def test_a_links_page_follows_the_key_after_the_last_one_shown(store: Store, hub: tuple[int, int]) -> None:
    a, _ = hub
    live = [(S[1], HUB), (S[2], HUB), (S[5], HUB), (HUB, S[3]), (HUB, S[6])]  # not spoke 4: forgotten

    def page(
        after: tuple[str, str, str] | None,
        limit: int,
        types: list[EdgeType] | None = None,
        granted: list[int] | None = None,
    ) -> tuple[list[tuple[str, str]], int]:
        with store.read() as session:
            edges, count = session.links_page(HUB, types, after, limit, granted)
        return [(e.src, e.dst) for e in edges], count

    assert page(None, 2) == (live[:2], 5)
    assert page((S[2], HUB, REFERS.value), 2) == (live[2:4], 3)
    assert page((HUB, S[3], CAUSAL.value), 2) == (live[4:], 1)
    assert page(None, 5, [CAUSAL]) == (live[3:], 2)
    assert page(None, 2, granted=[a]) == ([live[0], live[1]], 3)
    assert page((S[2], HUB, REFERS.value), 2, granted=[a]) == ([live[3]], 1)
