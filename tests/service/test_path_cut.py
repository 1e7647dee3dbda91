"""A strongest-path walk cut at its bound is never told as "no path" (decision 413; the path_cut probe,
session 43). A → B is one weak edge, but A → hub → 2,001 spokes are all stronger, so the walk spends
its `MAX_EXPANDED` nodes on the spokes before it pops B: `trail kind=path` answered "no directed path
from 'A' to 'B' within 12 hops". It saw B when it expanded A, so it now answers A → B, warning that a
stronger path may lie beyond the cut (`path_search_cut`); a goal it never saw is refused saying the
search was cut, as `link action=chain` said. A path truly absent is still `not_found` as before.

The hub and its 2,001 spokes (4,002 writes) are built once per backend for the module (`hub`): each
test gives it a start of its own, saves what it saves while that start's graph is small, and only
then links the start to the hub, which cuts every later walk from it (nothing else reaches a test's
nodes, so the tests share the hub in any order)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kaeru.service import Service, graph
from kaeru.storage.factory import open_store
from tests.backends import BACKENDS, drop_vault, new_vault, postgres_admin_url
from tests.schema_checked import checked_calls
from tests.service.support import Clock
from tests.working.conftest import make_call

P = "g"
SPOKES = graph.MAX_EXPANDED + 1


def _note(run: Any, name: str) -> str:
    made = run("note", initiative=P, text=f"the note {name}", name=name)
    assert made["state"] == "applied", made["issues"]
    node: str = made["data"]["primary"]["id"]
    return node


def _link(run: Any, a: str, b: str, weight: float) -> None:
    added = run("link", initiative=P, action="add", **{"from": {"id": a}, "to": {"id": b}}, weight=weight)
    assert added["state"] == "applied", added["issues"]


def _messages(answer: dict[str, Any]) -> list[str]:
    return [i["message"] for i in answer["issues"]]


@pytest.fixture(scope="module", params=BACKENDS)
def hub(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, str]]:
    """A service on a vault of its backend holding `hub` → `SPOKES` spokes of weight 0.9, and the hub's id."""
    if request.param == "postgres" and not postgres_admin_url():
        pytest.skip("PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset (make test starts one)")
    spec = new_vault(request.param, Path(tmp_path_factory.mktemp("path-cut")))
    store = open_store(spec.settings())
    try:
        service = Service(store, spec.settings(), clock=Clock())
        build = make_call(service)
        centre = _note(build, "hub")
        for i in range(SPOKES):
            _link(build, centre, _note(build, f"s{i}"), 0.9)
        yield service, centre
    finally:
        store.close()
        drop_vault(spec)


def test_a_walk_cut_at_its_bound_answers_the_path_it_saw_or_says_it_was_cut(hub: tuple[Service, str]) -> None:
    service, centre = hub
    build, run = make_call(service), checked_calls(service)  # the answers asserted on are schema-checked
    a, b, c, d = (_note(build, name) for name in ("A", "B", "C", "D"))
    _link(build, a, b, 0.2)
    _link(build, a, c, 0.2)
    _link(build, c, d, 0.9)
    saved_before = build("link", initiative=P, action="chain", **{"from": {"id": a}, "to": {"id": d}})
    assert saved_before["state"] == "applied", saved_before["issues"]  # A → C → D, A's graph still small
    _link(build, a, centre, 0.5)  # A → hub → 2,001 spokes, all stronger than A → B and A → C

    # The walk from A is now cut before it reaches D: reflect cannot tell that chain stale, and said
    # "has no path any more: forget it".
    stale = [i for i in run("reflect", initiative=P)["data"]["items"] if i["kind"] == "stale_chain"]
    assert saved_before["data"]["primary"]["id"] not in [i["node"] for i in stale], stale

    path = run("trail", initiative=P, node={"id": a}, kind="path", to={"id": b})
    assert path["state"] == "ok", path["issues"]
    assert [e["node"]["id"] for e in path["data"]["entries"]] == [a, b]
    assert [i["code"] for i in path["issues"]] == ["path_search_cut"]
    said = path["issues"][0]["message"]
    assert f"cut after the {graph.MAX_EXPANDED} nodes" in said and "a node in between" in said
    assert not any("no directed path" in m for m in _messages(path))

    # D lies past C, which the walk never expanded: it never saw D, and says the search was cut.
    unseen = run("trail", initiative=P, node={"id": a}, kind="path", to={"id": d})
    assert unseen["state"] == "rejected"
    issue = unseen["issues"][0]
    assert (issue["code"], issue["field"]) == ("not_found", "to")
    assert (
        f"cut after the {graph.MAX_EXPANDED} nodes" in issue["message"] and "without reaching 'D'" in issue["message"]
    )
    assert "a node in between" in issue["message"] and "no directed path" not in issue["message"]

    chain = run("link", initiative=P, action="chain", **{"from": {"id": a}, "to": {"id": b}})
    assert chain["state"] == "applied", chain["issues"]
    assert [i["code"] for i in chain["issues"]] == ["path_search_cut"]
    saved = run("trail", initiative=P, node={"id": chain["data"]["primary"]["id"]}, kind="chain")
    assert [e["node"]["id"] for e in saved["data"]["entries"]] == [a, b]
    refused = run("link", initiative=P, action="chain", **{"from": {"id": a}, "to": {"id": d}})
    assert refused["state"] == "rejected" and "without reaching 'D'" in refused["issues"][0]["message"]


def test_a_path_truly_absent_in_a_small_graph_is_still_not_found(timed: Service) -> None:
    run = checked_calls(timed)
    a, b = _note(run, "A"), _note(run, "B")
    _link(run, a, b, 0.2)

    found = run("trail", initiative=P, node={"id": a}, kind="path", to={"id": b})
    assert found["state"] == "ok" and found["issues"] == []
    assert [e["node"]["id"] for e in found["data"]["entries"]] == [a, b]
    backwards = run("trail", initiative=P, node={"id": b}, kind="path", to={"id": a})
    assert backwards["state"] == "rejected"
    assert [(i["code"], i["field"], i["message"]) for i in backwards["issues"]] == [
        ("not_found", "to", "no directed path from 'B' to 'A' within 12 hops")
    ]


def test_a_cut_walk_leaves_a_chain_saved_before_between_the_same_ends(hub: tuple[Service, str]) -> None:
    """A → C → B was saved as the strongest path while the graph was small; once 2,001 stronger
    spokes cut the walk before C, saving A → B again moved that chain to the weaker A → B."""
    service, centre = hub
    build, run = make_call(service), checked_calls(service)
    a, b, c = (_note(build, name) for name in ("A2", "B2", "C2"))
    _link(build, a, b, 0.2)
    _link(build, a, c, 0.35)
    _link(build, c, b, 0.95)
    first = build("link", initiative=P, action="chain", **{"from": {"id": a}, "to": {"id": b}})
    assert first["state"] == "applied" and not first["issues"], first["issues"]
    chain = first["data"]["primary"]["id"]
    _link(build, a, centre, 0.5)  # A → hub → 2,001 stronger spokes: the walk is cut before C

    again = run("link", initiative=P, action="chain", **{"from": {"id": a}, "to": {"id": b}})
    assert again["state"] == "unchanged" and again["data"]["primary"]["id"] == chain, again
    assert [i["code"] for i in again["issues"]] == ["path_search_cut"]
    assert "kept as it was" in again["issues"][0]["message"]
    saved = run("trail", initiative=P, node={"id": chain}, kind="chain")
    assert [e["node"]["id"] for e in saved["data"]["entries"]] == [a, c, b]
