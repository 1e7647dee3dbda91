"""Issue 15's acceptance property: a token limited to some initiatives learns nothing of the others.

For random vaults (nodes in several initiatives, some attached to a second one, edges and
supersessions across initiatives), random grants and random calls made as that token (every read
tool, audit records, and a few writes: forget, supersede, link), no answer holds anything of an
initiative outside the grants: not its name, not the id, name or text
of a node that belongs only to such initiatives — unless the caller itself passed it in. Calls
naming an initiative outside the grants are `forbidden`. Runs on both backends; the number of cases
is `KAERU_GRANTS_EXAMPLES` per backend (default 30; `docs/reliability.md` has the long run).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kaeru.mcp.server import build_server
from kaeru.service import Service, grants
from kaeru.storage.factory import open_store
from tests.backends import drop_vault, new_vault

EXAMPLES = int(os.environ.get("KAERU_GRANTS_EXAMPLES", "30"))
MAX_INITIATIVES = 4
MAX_NODES = 9
WORDS = ["alpha", "beta", "gamma", "deploy", "cache", "rule", "index"]
KINDS = ["observation", "decision", "rule", "idea", "reference"]
EDGES = ["refers_to", "derived_from", "supersedes", "causal", "part_of", "contradicts"]
TRAILS = ["history", "provenance", "neighbours"]
INTENTS = ["resume_work", "explain_decision", "debug_failure", "explore_history", "review_change"]
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

#: Counted across examples and backends, printed at the end (`-s`) for the reliability table.
TALLY = {"vaults": 0, "calls": 0, "forbidden": 0, "not_found": 0}


def initiative_name(i: int) -> str:
    return f"zv{i}init"


def decoy_name(i: int) -> str:
    """A granted name that does not exist, one letter from initiative `i` (did-you-mean bait)."""
    return f"zv{i}inat"


def marker(i: int) -> str:
    return f"mk{i}z"


node_st = st.tuples(
    st.integers(0, MAX_INITIATIVES - 1),  # home initiative
    st.one_of(st.none(), st.integers(0, MAX_INITIATIVES - 1)),  # attached to a second one
    st.sampled_from(KINDS),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
)
edge_st = st.tuples(st.integers(0, MAX_NODES - 1), st.integers(0, MAX_NODES - 1), st.sampled_from(EDGES))
#: An initiative a call names: mostly a granted one (≥ 0), else the decoy (-1) or a foreign one (-2).
scope_pick = st.one_of(st.integers(0, MAX_INITIATIVES - 1), st.integers(0, MAX_INITIATIVES - 1), st.integers(-2, -1))
scope_st = st.lists(scope_pick, min_size=1, max_size=3)
call_st = st.one_of(
    st.tuples(st.just("initiatives"), st.sampled_from(["", "zv", "zv1"])),
    st.tuples(
        st.just("search"),
        scope_st,
        st.lists(st.sampled_from([*WORDS, "mk", "link", "note", "attach"]), min_size=1, max_size=3),
        st.booleans(),  # prefix
        st.booleans(),  # audit records
    ),
    st.tuples(
        st.just("recall"), scope_st, st.lists(st.sampled_from(WORDS), min_size=1, max_size=3), st.sampled_from(INTENTS)
    ),
    st.tuples(st.just("read"), scope_pick, st.integers(0, MAX_NODES - 1), st.booleans()),
    st.tuples(st.just("trail"), scope_pick, st.integers(0, MAX_NODES - 1), st.sampled_from(TRAILS)),
    st.tuples(st.just("current_state"), scope_pick, st.integers(0, MAX_NODES - 1)),
    st.tuples(st.just("timeline"), scope_st),
    st.tuples(st.just("audit"), scope_st),
    st.tuples(st.just("context"), scope_pick),
    st.tuples(st.just("forget"), scope_pick, st.integers(0, MAX_NODES - 1)),
    st.tuples(st.just("evolve"), scope_pick, st.integers(0, MAX_NODES - 1)),
    st.tuples(st.just("link"), scope_pick, st.integers(0, MAX_NODES - 1), st.integers(0, MAX_NODES - 1)),
    st.tuples(st.just("reflect"), scope_pick),
)


def build_vault(run: Any, count: int, nodes: list[Any], edges: list[Any]) -> tuple[list[str], list[set[int]]]:
    """Write the vault as the local admin; the ids of the nodes and the initiatives each belongs to."""
    ids: list[str] = []
    members: list[set[int]] = []
    for i, (home, also, kind, words) in enumerate(nodes):
        home %= count
        made = run(
            "note", {"initiative": initiative_name(home), "kind": kind, "text": f"{marker(i)} {' '.join(words)}"}
        )
        assert made["state"] == "applied", made
        ids.append(made["data"]["primary"]["id"])
        members.append({home})
        if also is not None and also % count != home:
            attached = run(
                "initiative",
                {"initiative": initiative_name(also % count), "action": "attach", "node": {"id": ids[-1]}},
            )
            assert attached["state"] == "applied", attached
            members[-1].add(also % count)
    for src, dst, edge_type in edges:
        src, dst = src % len(ids), dst % len(ids)
        if src == dst:
            continue
        home = min(members[src])
        args = {"from": {"id": ids[src]}, "to": {"id": ids[dst]}, "edge_type": edge_type, "weight": 0.8}
        run("link", {"initiative": initiative_name(home), "action": "add", **args})
    return ids, members


def call_args(
    call: tuple[Any, ...], ids: list[str], members: list[set[int]], granted: set[int], foreign: int
) -> tuple[str, dict[str, Any]]:
    def scopes(chosen: list[int]) -> list[str]:
        return list(dict.fromkeys(scope_name(i) for i in chosen))

    def scope_name(i: int) -> str:
        if i == -1:
            return decoy_name(foreign)
        if i == -2:
            return initiative_name(foreign)
        return initiative_name(sorted(granted)[i % len(granted)])

    kind = call[0]
    if kind == "initiatives":
        return kind, {"prefix": call[1]} if call[1] else {}
    if kind == "search":
        args: dict[str, Any] = {
            "initiatives": scopes(call[1]),
            "text": " ".join(call[2]),
            "prefix": call[3],
        }
        if call[4]:
            args["filters"] = {"types": ["audit_event"]}
        return kind, args
    if kind == "recall":
        return kind, {
            "initiatives": scopes(call[1]),
            "query": " ".join(call[2]),
            "task_intent": call[3],
        }
    if kind in ("read", "trail", "current_state", "forget", "evolve", "link"):
        node = call[2] % len(ids)
        # Name the node's own initiative when granted, so the call is answered (the interesting case).
        own = sorted(members[node] & granted)
        where = initiative_name(own[0]) if own and call[1] >= 0 else scope_name(call[1])
        args = {"initiative": where, "node": {"id": ids[node]}}
        if kind == "read":
            args["neighbours"] = call[3]
        if kind == "trail":
            args["kind"] = call[3]
        if kind == "forget":
            args["reason"] = "property test"
        if kind == "evolve":
            args = {"initiative": args["initiative"], "mode": "supersede", "source": args["node"], "new_body": "next"}
        if kind == "link":
            other = {"id": ids[call[3] % len(ids)]}
            args = {"initiative": args["initiative"], "action": "add", "from": args["node"], "to": other}
            args |= {"edge_type": "refers_to", "weight": 0.5}
        return kind, args
    if kind == "audit":
        return "search", {"initiatives": scopes(call[1]), "filters": {"types": ["audit_event"]}, "limit": 50}
    if kind == "timeline":
        return kind, {"initiatives": scopes(call[1])}
    return kind, {"initiative": scope_name(call[1])}


def named_initiatives(args: dict[str, Any]) -> list[str]:
    named = list(args.get("initiatives") or [])
    if "initiative" in args:
        named.append(args["initiative"])
    return named


@pytest.mark.slow
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    count=st.integers(2, MAX_INITIATIVES),
    nodes=st.lists(node_st, min_size=2, max_size=MAX_NODES),
    edges=st.lists(edge_st, max_size=8),
    grant=st.sets(st.integers(0, MAX_INITIATIVES - 1), min_size=1, max_size=MAX_INITIATIVES - 1),
    read_only=st.booleans(),
    calls=st.lists(call_st, min_size=1, max_size=10),
)
def test_a_limited_token_learns_nothing_of_other_initiatives(
    backend: str,
    tmp_path: Path,
    count: int,
    nodes: list[Any],
    edges: list[Any],
    grant: set[int],
    read_only: bool,
    calls: list[Any],
) -> None:
    granted = {g % count for g in grant}
    if len(granted) == count:
        granted.discard(count - 1)
    foreign = min(set(range(count)) - granted)
    spec = new_vault(backend, tmp_path)
    store = open_store(spec.settings())
    try:
        run = build_server(Service(store, spec.settings())).registry.run
        ids, members = build_vault(run, count, nodes, edges)
        hidden_nodes = [i for i, m in enumerate(members) if not m & granted]
        secrets = [initiative_name(i) for i in range(count) if i not in granted]
        secrets += [marker(i) for i in hidden_nodes] + [ids[i] for i in hidden_nodes]
        names = frozenset([initiative_name(i) for i in granted] + [decoy_name(foreign)])
        principal = grants.Principal("tok-person", names, read_only)
        TALLY["vaults"] += 1
        with grants.acting(principal):
            for call in calls:
                tool, args = call_args(call, ids, members, granted, foreign)
                answer = run(tool, args)
                TALLY["calls"] += 1
                text = json.dumps(answer, ensure_ascii=False)
                given_in = json.dumps(args, ensure_ascii=False)
                leaked = [s for s in secrets if s in text and s not in given_in]
                assert not leaked, f"{tool} {args} leaked {leaked}: {text[:2000]}"
                codes = [issue["code"] for issue in answer.get("issues", [])]
                assert "internal" not in codes, (tool, args, answer)
                outside = [n for n in named_initiatives(args) if n not in names]
                if tool in ("forget", "evolve", "link") and read_only:
                    assert answer["state"] == "rejected" and codes[0] == "forbidden", (tool, args, answer)
                elif outside:
                    assert answer["state"] == "rejected" and codes[0] == "forbidden", (tool, args, answer)
                    TALLY["forbidden"] += 1
                elif answer["state"] == "rejected":
                    expected = ("not_found", "unknown_initiative", "invalid_argument", "slot_conflict")
                    assert codes[0] in expected, (tool, args, answer)
                    TALLY["not_found"] += 1
            # Writes: refused with a read-only token or outside the grants; else the token is the actor.
            mine = initiative_name(min(granted))
            wrote = run("note", {"initiative": mine, "text": "written by the token zq9tok"})
            if read_only:
                assert wrote["state"] == "rejected" and wrote["issues"][0]["code"] == "forbidden"
            else:
                assert wrote["state"] == "applied", wrote
            elsewhere = run("note", {"initiative": initiative_name(foreign), "text": "not mine"})
            assert elsewhere["state"] == "rejected" and elsewhere["issues"][0]["code"] == "forbidden"
        if not read_only:
            node = {"id": wrote["data"]["primary"]["id"]}
            history = run("trail", {"initiative": mine, "node": node, "kind": "history"})
            actors = {entry.get("actor") for entry in history["data"]["entries"]}
            assert actors == {"tok-person"}, history
    finally:
        store.close()
        drop_vault(spec)


def teardown_module() -> None:
    print(f"\ngrants isolation property: {TALLY}")
