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
