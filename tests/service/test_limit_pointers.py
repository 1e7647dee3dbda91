"""What `read` with `neighbours` and `current_state` leave out past their limits comes with the call
that shows it: "omitted: edges 4900 (limit)" and `continuation: null` told a model that links were
missing, never how to see them (the one-initiative probe, session 52)."""

from __future__ import annotations

import json
from typing import Any

from kaeru.mcp.render import compact
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.service.history import MAX_PREDECESSORS
from kaeru.service.read import READ_EDGES


def _caller(service: Service) -> Any:
    run = build_server(service).registry.run
    return lambda tool, **args: run(tool, args)


def _pointer(text: str, label: str) -> dict[str, Any]:
    """The arguments of the `trail` call on the text's `label: trail {…}` line."""
    lines = [x for x in text.splitlines() if x.startswith(f"{label}: trail ")]
    assert len(lines) == 1, f"no `{label}: trail` line after the omission:\n{text[-400:]}"
    args: dict[str, Any] = json.JSONDecoder().raw_decode(lines[0][len(f"{label}: trail ") :])[0]
    return args


def test_a_hub_read_with_neighbours_says_which_call_pages_all_its_edges(service: Service) -> None:
    call = _caller(service)
    hub = call("note", initiative="g", text="the hub")["data"]["primary"]["id"]
    for i in range(READ_EDGES + 20):
        call("note", initiative="g", text=f"leaf {i}", link_to=hub)

    answer = call("read", initiative="g", node=hub, neighbours=True)
    assert {"section": "edges", "count": 20, "reason": "limit"} in answer["coverage"]["omitted"]
    args = _pointer(compact(answer), "all edges")
    # Followed page by page, the call gives every edge of the hub.
    edges: set[tuple[str, str]] = set()
    page = call("trail", **args)
    while True:
        edges.update((e["edge"]["from"], e["edge"]["to"]) for e in page["data"]["entries"])
        if not page["continuation"]:
            break
        page = call("trail", **page["continuation"]["next_arguments"])
    assert len(edges) == READ_EDGES + 20


def test_a_long_chain_s_current_state_says_how_to_follow_the_predecessors_it_left_out(service: Service) -> None:
    call = _caller(service)
    chain = [call("note", initiative="g", text="version 0")["data"]["primary"]["id"]]
    for i in range(1, MAX_PREDECESSORS + 6):
        made = call("note", initiative="g", text=f"version {i}", link_to=chain[-1], edge_type="supersedes")
        chain.append(made["data"]["primary"]["id"])

    answer = call("current_state", initiative="g", node=chain[0])
    shown = [p["id"] for p in answer["data"]["predecessors"]]
    assert answer["data"]["current"]["id"] == chain[-1] and len(shown) == MAX_PREDECESSORS
    assert any(o["section"] == "predecessors" and o["reason"] == "limit" for o in answer["coverage"]["omitted"])
    args = _pointer(compact(answer), "older predecessors")
    # The call names the next older version, one the answer left out.
    step = call("trail", **args)
    named = {i for e in step["data"]["entries"] for i in (e["edge"]["from"], e["edge"]["to"])}
    older = chain[chain.index(shown[-1]) - 1]
    assert older not in shown and older in named


def test_the_predecessors_pointer_comes_only_when_predecessors_were_left_out(service: Service) -> None:
    """An answer that left out only links (`edges`, limit) named a `trail` for "older predecessors"
    it had all shown. Every chain built here leaves both out together, so the answer is given that
    omission alone: the text follows the coverage it is given, not what the service does today."""
    call = _caller(service)
    chain = [call("note", initiative="g", text="version 0")["data"]["primary"]["id"]]
    for i in range(1, 4):
        made = call("note", initiative="g", text=f"version {i}", link_to=chain[-1], edge_type="supersedes")
        chain.append(made["data"]["primary"]["id"])
    answer = call("current_state", initiative="g", node=chain[0])
    assert answer["coverage"]["omitted"] == [] and len(answer["data"]["predecessors"]) == 3
    answer["coverage"]["omitted"] = [{"section": "edges", "count": 2, "reason": "limit"}]
    assert "older predecessors:" not in compact(answer)
    answer["coverage"]["omitted"].append({"section": "predecessors", "count": 1, "reason": "limit"})
    assert _pointer(compact(answer), "older predecessors")["node"] == answer["data"]["predecessors"][-1]["id"]
