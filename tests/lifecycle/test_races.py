"""Compare-and-set races between real processes: exactly one winner, the loser changes nothing."""

from __future__ import annotations

import multiprocessing
import os
from typing import Any

import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service
from tests.backends import VaultSpec
from tests.lifecycle.workers import call_after_barrier


def _race(vault: VaultSpec, calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    # Each racer is its own process with its own store, as two agents' servers are. They are forked
    # from a server process that imported kaeru once (a spawned racer imported it, the MCP SDK with
    # it, anew each time: most of this file's CPU — decision 416).
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["tests.lifecycle.workers"])
    barrier = ctx.Barrier(len(calls))
    out = ctx.Queue()
    env = {**os.environ, **vault.env()}
    procs = [ctx.Process(target=call_after_barrier, args=(env, barrier, tool, args, out)) for tool, args in calls]
    for proc in procs:
        proc.start()
    results = [out.get(timeout=60) for _ in procs]
    for proc in procs:
        proc.join(timeout=30)
        assert proc.exitcode == 0
    return results


@pytest.mark.slow
def test_two_processes_taking_one_slot_with_the_same_revision(vault: VaultSpec, service: Service) -> None:
    run = build_server(service).registry.run
    holder = run("note", {"initiative": "race", "text": "first holder"})["data"]["primary"]["id"]
    revision = run("slot", {"initiative": "race", "slot": "handoff", "node": holder})["data"]["slots"][0]["revision"]
    a = run("note", {"initiative": "race", "text": "contender a"})["data"]["primary"]
    b = run("note", {"initiative": "race", "text": "contender b"})["data"]["primary"]
    results = _race(
        vault,
        [
            ("slot", {"initiative": "race", "slot": "handoff", "node": a["id"], "expected_slot_revision": revision}),
            ("slot", {"initiative": "race", "slot": "handoff", "node": b["id"], "expected_slot_revision": revision}),
        ],
    )
    states = sorted(r["state"] for r in results)
    assert states == ["applied", "rejected"]
    loser = next(r for r in results if r["state"] == "rejected")
    assert loser["issues"][0]["code"] == "slot_conflict" and loser["issues"][0]["retryable"] is True
    winner = next(r for r in results if r["state"] == "applied")["data"]["slots"][0]["after"]
    loser_id = b["id"] if winner == a["id"] else a["id"]
    loser_node = run("read", {"initiative": "race", "node": loser_id})["data"]["hits"][0]
    assert loser_node["revision"] == (b if loser_id == b["id"] else a)["revision"], "the loser's node is untouched"
    previous = run("read", {"initiative": "race", "node": holder})["data"]["hits"][0]
    assert previous["layer"] == "cold" and previous["successors"] == [winner]
    state = run("current_state", {"initiative": "race", "slot": "handoff"})["data"]
    assert state["current"]["id"] == winner


@pytest.mark.slow
def test_two_processes_revising_with_the_same_expected_revision(vault: VaultSpec, service: Service) -> None:
    run = build_server(service).registry.run
    node = run("note", {"initiative": "race", "text": "the cache TTL is 60 s"})["data"]["primary"]
    calls = [
        (
            "revise",
            {
                "initiative": "race",
                "node": node["id"],
                "expected_revision": node["revision"],
                "patch": {"body": f"the cache TTL is {ttl} s"},
            },
        )
        for ttl in (30, 90)
    ]
    results = _race(vault, calls)
    assert sorted(r["state"] for r in results) == ["applied", "rejected"]
    loser = next(r for r in results if r["state"] == "rejected")
    assert loser["issues"][0]["code"] == "revision_conflict" and loser["issues"][0]["retryable"] is True
    winner = next(r for r in results if r["state"] == "applied")
    final = run("read", {"initiative": "race", "node": node["id"]})["data"]["hits"][0]
    assert final["revision"] == winner["data"]["primary"]["revision"]
    assert final["revision"] in loser["issues"][0]["message"]


@pytest.mark.slow
def test_writers_racing_to_create_one_initiative_are_told_it_is_new_once(vault: VaultSpec, service: Service) -> None:
    # On PostgreSQL every racer that found no initiative inserted with ON CONFLICT DO NOTHING, took
    # the winner's row, and still said `new_initiative` (up to 6 of 6) though one row existed.
    results = _race(vault, [("note", {"initiative": "race", "text": f"concurrent first note {i}"}) for i in range(6)])
    assert [r["state"] for r in results] == ["applied"] * 6
    told = [i for r in results for i in r["issues"] if i["code"] == "new_initiative"]
    assert len(told) == 1, told
    with service.store.read() as session:
        assert [i.name for i in session.all_initiatives()] == ["race"]
