"""History is immutable: after any sequence of changes, `read … at=T` returns exactly what `read`
returned at T — content, layer, tags, currentness and successors included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kaeru.domain.timefmt import fmt
from kaeru.errors import KaeruError
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.factory import open_store
from tests.backends import drop_vault, new_vault

WORDS = ["alpha", "beta", "gamma", "delta", "omega", "cache", "index", "token"]
FIELDS = (
    "revision",
    "name",
    "body",
    "description",
    "tags",
    "layer",
    "properties",
    "status",
    "currentness",
    "successors",
)

op = st.one_of(
    st.tuples(st.just("note"), st.lists(st.sampled_from(WORDS), min_size=1, max_size=4)),
    st.tuples(st.just("revise"), st.integers(0, 7), st.lists(st.sampled_from(WORDS), min_size=1, max_size=4)),
    st.tuples(st.just("link"), st.integers(0, 7), st.integers(0, 7), st.sampled_from(["refers_to", "supersedes"])),
    st.tuples(st.just("unlink"), st.integers(0, 7), st.integers(0, 7), st.sampled_from(["refers_to", "supersedes"])),
    st.tuples(st.just("layer"), st.integers(0, 7), st.sampled_from(["core", "hot", "cold"])),
    st.tuples(st.just("forget"), st.integers(0, 7)),
    st.tuples(st.just("supersede"), st.integers(0, 7), st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)),
)


def _apply(run: Any, ids: list[str], step: tuple[Any, ...]) -> None:
    kind = step[0]
    pick = (lambda i: ids[i % len(ids)]) if ids else None
    if kind == "note":
        ids.append(run("note", {"initiative": "h", "text": " ".join(step[1])})["data"]["primary"]["id"])
    elif pick is None:
        return
    elif kind == "revise":
        run("revise", {"initiative": "h", "node": pick(step[1]), "patch": {"body": " ".join(step[2])}})
    elif kind in ("link", "unlink"):
        args = {"initiative": "h", "from": pick(step[1]), "to": pick(step[2]), "edge_type": step[3]}
        if kind == "link":
            run("link", {**args, "action": "add", "weight": 0.7})
        else:
            run("link", {**args, "action": "remove"})
    elif kind == "layer":
        run("layer", {"initiative": "h", "nodes": [pick(step[1])], "layer": step[2]})
    elif kind == "forget":
        run("forget", {"initiative": "h", "node": pick(step[1]), "reason": "property test"})
    elif kind == "supersede":
        made = run(
            "evolve", {"initiative": "h", "mode": "supersede", "source": pick(step[1]), "new_body": " ".join(step[2])}
        )
        if made["state"] == "applied":
            ids.append(made["data"]["primary"]["id"])


def _observe(run: Any, ids: list[str], at: str | None) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for node_id in ids:
        args: dict[str, Any] = {"initiative": "h", "node": {"id": node_id}}
        if at:
            args["at"] = at
        answer = run("read", args)
        if answer["state"] != "ok":
            seen[node_id] = None
        else:
            hit = answer["data"]["hits"][0]
            seen[node_id] = {k: hit[k] for k in FIELDS}
    return seen


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(op, min_size=1, max_size=14))
def test_reading_the_past_returns_what_was_read_then(backend: str, tmp_path: Path, steps: list[Any]) -> None:
    spec = new_vault(backend, tmp_path)
    store = open_store(spec.settings())
    try:
        service = Service(store, spec.settings())
        run = build_server(service).registry.run
        ids: list[str] = []
        timeline: list[tuple[str, dict[str, Any]]] = []
        for step in steps:
            try:
                _apply(run, ids, step)
            except KaeruError:
                pass
            moment = fmt(service.rt.now())
            timeline.append((moment, _observe(run, ids, None)))
        for moment, then in timeline:
            now_view = _observe(run, list(then), moment)
            assert now_view == then, f"history changed for the moment {moment}"
    finally:
        store.close()
        drop_vault(spec)
