"""Hygiene reaches a fixed point (the third forced pass moves nothing) and never moves pinned nodes."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kaeru.service import Service
from kaeru.storage.factory import open_store
from tests.backends import drop_vault, new_vault
from tests.working.conftest import Call, Clock, make_call

LAYERS = ["core", "hot", "warm"]


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), size=st.integers(5, 40))
def test_third_pass_moves_nothing_and_pins_hold(backend: str, tmp_path: Path, seed: int, size: int) -> None:
    rng = random.Random(seed)
    spec = new_vault(backend, tmp_path)
    store = open_store(spec.settings())
    clock = Clock(datetime(2026, 1, 1, tzinfo=UTC))
    try:
        service = Service(store, spec.settings(), clock=clock)
        call = make_call(service)
        ids: list[str] = []
        pinned: dict[str, str] = {}
        for i in range(size):
            kind = rng.choice(["observation", "decision", "idea", "concept"])
            layer = rng.choice(LAYERS)
            made = call("note", initiative="h", text=f"node {i} {kind}", kind=kind, options={"layer": layer})
            ids.append(made["data"]["primary"]["id"])
            clock.advance(days=rng.randint(0, 3))
            if ids and rng.random() < 0.3:
                call(
                    "link",
                    initiative="h",
                    **{"from": rng.choice(ids), "to": ids[-1]},
                    edge_type=rng.choice(["refers_to", "supersedes", "derived_from"]),
                    weight=0.8,
                )
            if rng.random() < 0.15:
                call("layer", initiative="h", nodes=[ids[-1]], pin=True)
                pinned[ids[-1]] = layer
        clock.advance(days=45)
        service.hygiene("h")
        service.hygiene("h")
        third = service.hygiene("h")
        assert third == [], f"third pass still moved {third}"
        for node_id, layer in pinned.items():
            assert call("read", initiative="h", node=node_id)["data"]["hits"][0]["layer"] == layer
    finally:
        store.close()
        drop_vault(spec)


def test_hygiene_demotes_stale_core_and_reports_once(call: Call, timed: Service, clock: Clock) -> None:
    old = call("note", initiative="h", text="an old core belief", options={"layer": "core"})["data"]["primary"]["id"]
    kept = call("note", initiative="h", text="a pinned core rule of thumb", options={"layer": "core"})["data"][
        "primary"
    ]["id"]
    call("layer", initiative="h", nodes=[kept], pin=True)
    clock.advance(days=40)
    moves = timed.hygiene("h")
    assert [(m.node_id, m.before.value, m.after.value) for m in moves] == [(old, "core", "hot")]
    first = call("context", initiative="h")
    assert any("core for over 30 days" in n for n in first["data"]["notices"])
    assert call("context", initiative="h")["data"]["notices"] == [], "reported once"


def test_hygiene_keeps_core_under_its_ceiling_and_promotes_well_supported_warm_memory(
    call: Call, timed: Service
) -> None:
    """Above 15 core nodes the least supported (then oldest) go to hot; a warm node that five others
    support is promoted to hot, one that five others contradict is not."""

    def note(text: str, layer: str = "warm") -> str:
        node_id: str = call("note", initiative="h", text=text, options={"layer": layer})["data"]["primary"]["id"]
        return node_id

    def support(target: str, count: int, edge_type: str = "refers_to") -> None:
        for i in range(count):
            source = note(f"evidence {i} about {target}")
            linked = call(
                "link",
                initiative="h",
                **{"from": {"id": source}, "to": {"id": target}},
                edge_type=edge_type,
                weight=0.8,
            )
            assert linked["state"] == "applied", linked

    core = [note(f"core belief number {i}", "core") for i in range(17)]
    support(core[0], 1)  # the oldest, but supported: it stays
    supported = note("the vault keeps one writer at a time")
    support(supported, 5)
    doubted = note("the vault scales to any number of writers")
    support(doubted, 5, "contradicts")

    moves = {m.node_id: (m.before.value, m.after.value, m.reason) for m in timed.hygiene("h")}
    ceiling = [node for node, (_, _, reason) in moves.items() if "ceiling" in reason]
    assert ceiling == core[1:3] and all(moves[n][:2] == ("core", "hot") for n in ceiling)
    assert moves[supported] == ("warm", "hot", "5 supporting links")
    assert doubted not in moves
    layers = {
        h["id"]: h["layer"]
        for h in call("search", initiatives=["h"], filters={"layers": ["core"]}, limit=50)["data"]["hits"]
    }
    assert len(layers) == 15 and core[0] in layers
