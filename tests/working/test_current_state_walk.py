"""`current_state` walks forward from a node to what replaces it. Now, and for a caller no token
limits, the links ahead are read in one statement and walked in memory (decision 156); as of a past
moment, or under a limited token, the walk reads each step. Both must reach the same node across the
same links and stop at the same conflict, on every shape a supersession graph takes."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from kaeru.domain.model import Edge
from kaeru.service import history
from kaeru.storage.base import Store
from tests.working.conftest import Call


def _supersede(call: Call, newer: str, older: str) -> None:
    made = call(
        "link", initiative="w", **{"from": {"id": newer}, "to": {"id": older}}, edge_type="supersedes", weight=1
    )
    assert made["state"] in ("applied", "unchanged"), made["issues"]  # a random link may exist already


def _random_graph(call: Call, seed: int) -> list[str]:
    """40 versions: a chain of 25, 14 random links (branches, shortcuts, cycles), 3 forgotten, 2 settled."""
    rng = random.Random(seed)
    ids = [call("note", initiative="w", text=f"version {i} of the fact")["data"]["primary"]["id"] for i in range(40)]
    for i in range(1, 25):  # a chain, the newer superseding the older
        _supersede(call, ids[i], ids[i - 1])
    for _ in range(14):  # branches (conflicts), shortcuts, a cycle or two
        newer, older = rng.sample(ids, 2)
        _supersede(call, newer, older)
    gone = rng.sample(ids[5:], 5)
    for node_id in gone[:3]:  # a forgotten version's links no longer count
        assert call("forget", initiative="w", node={"id": node_id}, reason="test")["state"] == "applied"
    for node_id in gone[3:]:  # a settled one is retracted, its own links stay: they no longer count either
        assert call("evolve", initiative="w", mode="settle", source={"id": node_id})["state"] == "applied"
    return ids


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_reading_the_links_ahead_at_once_walks_as_step_by_step(call: Call, store: Store, seed: int) -> None:
    ids = _random_graph(call, seed)
    checked = 0
    with store.read() as session:
        for node_id in ids:
            subject = history._view_at(session, node_id, None)
            once = history._ahead_read_once(session, subject)
            assert once is not None
            here, links, conflict = history._ahead_step_by_step(session, subject, None)
            assert once[2] == conflict
            assert once[1] == links
            if not conflict:
                assert once[0].node.id == here.node.id
                checked += 1
    assert checked > 0


def test_a_long_chain_is_read_at_once_and_reaches_the_head(call: Call, store: Store) -> None:
    ids = [call("note", initiative="w", text=f"prod runs release {i}")["data"]["primary"]["id"] for i in range(60)]
    for i in range(1, 60):
        _supersede(call, ids[i], ids[i - 1])
    answer = call("current_state", initiative="w", node={"id": ids[0]})
    assert answer["data"]["status"] == "current" and answer["data"]["current"]["id"] == ids[-1]
    with store.read() as session:
        assert len(session.verdicts_ahead(ids[0])) == 59


def _level_by_level(session: Any, _start: str, _moment: str | None) -> Callable[[list[str]], list[Edge]]:
    """The links of `_predecessors`' walk read one level at a time (the code before decision 157)."""
    return lambda frontier: session.live_edges(frontier, history._VERDICTS)


@pytest.mark.parametrize(("seed", "count"), [(1, 1000), (2, 1000), (3, 6), (4, 3)])
def test_reading_the_links_behind_at_once_counts_as_level_by_level(
    call: Call, store: Store, monkeypatch: pytest.MonkeyPatch, seed: int, count: int
) -> None:
    """The predecessors behind a node (decision 157): the same shown, counted and capped, with the
    same links, as reading each level — also when the walk's cap (`count`) stops the read early."""
    ids = _random_graph(call, seed)
    monkeypatch.setattr(history, "PREDECESSOR_COUNT", count)
    monkeypatch.setattr(history, "MAX_PREDECESSORS", 4)
    walked = 0
    with store.read() as session:
        for node_id in ids:
            once: list[Edge] = []
            views, beyond, capped = history._predecessors(session, node_id, None, once)
            with monkeypatch.context() as m:
                m.setattr(history, "_links_behind", _level_by_level)
                stepped: list[Edge] = []
                views2, beyond2, capped2 = history._predecessors(session, node_id, None, stepped)
            assert [v.node.id for v in views] == [v.node.id for v in views2]
            assert (beyond, capped, once) == (beyond2, capped2, stepped)
            walked += bool(views)
    assert walked > 0
