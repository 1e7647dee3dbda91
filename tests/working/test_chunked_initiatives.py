"""Merge and delete in bounded chunks (decision 15.P5): an initiative's nodes are moved or forgotten
a chunk per write transaction, so no call holds the vault for long; a merge or delete stopped part
way is completed by the same call again, and a replay of a finished one changes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from kaeru.api.requests import parse
from kaeru.api.schemas import output_for
from kaeru.config import Settings
from kaeru.service import Service, initiatives
from kaeru.storage.factory import open_store
from tests.working.conftest import Call, LockBetweenTwoChunks, make_call

CHUNK = 5
NODES = 12


def _fill(call: Call, initiative: str, n: int) -> list[str]:
    return [call("note", initiative=initiative, text=f"egret sighting {i}")["data"]["primary"]["id"] for i in range(n)]


def _members(call: Call, initiative: str) -> set[str]:
    found = call("search", initiatives=[initiative], text="egret", limit=50, budget_chars=64000)
    return {h["id"] for h in found["data"]["hits"]}


def _changes(answer: dict[str, Any]) -> dict[str, Any]:
    return {c["field"]: c["after"] for c in answer["data"]["changes"]}


def _audit(timed: Service, operation: str = "initiative") -> list[Any]:
    with timed.store.read() as session:
        return [a for a in session.export_audit(None) if a.operation == operation]


def test_a_merge_stopped_part_way_is_completed_by_the_same_call(
    call: Call, timed: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(initiatives, "CHUNK", CHUNK)
    moving = _fill(call, "heronry", NODES)
    staying = _fill(call, "wetlands", 1)
    args = {"initiative": "heronry", "action": "merge", "to": "wetlands", "request_id": "merge-1"}

    # The process stops after one chunk: what a client sees meanwhile is a merge half done — the
    # chunk's nodes are in the target, the rest still in the initiative being merged away.
    assert initiatives.in_chunks(timed.rt, parse("initiative", args), "agent", most=1) == CHUNK
    assert len(_members(call, "heronry")) == NODES - CHUNK
    assert _members(call, "wetlands") == set(staying) | (set(moving) - _members(call, "heronry"))

    done = call("initiative", **args)
    assert done["state"] == "applied" and done["replayed"] is False
    # Every node the merge moved, over both runs: the same request_id replays the first run's chunk.
    assert _changes(done)["merged_nodes"] == NODES
    assert _members(call, "wetlands") == set(moving) | set(staying)
    assert [i["name"] for i in call("initiatives")["data"]["initiatives"]] == ["wetlands"]
    # A chunk's audit record each (two: 5, 5), and the merge's own.
    records = _audit(timed)
    assert len(records) == 3
    assert [c["after"] for r in records[:2] for c in r.changes if c["field"] == "merged_nodes"] == [CHUNK, CHUNK]

    # A replay answers the stored result and changes nothing, even once the name is taken again
    # (by an initiative renamed to it: a write to a merged name is refused, decision 333).
    call("note", initiative="new-heronry", text="egret at the new heronry")
    call("initiative", initiative="new-heronry", action="rename", to="heronry")
    audited = len(_audit(timed))
    again = call("initiative", **args)
    assert again["replayed"] is True and _changes(again) == _changes(done)
    assert len(_members(call, "heronry")) == 1
    assert len(_audit(timed)) == audited


def test_a_large_delete_goes_in_chunks_and_forgets_only_nodes_left_in_no_initiative(
    call: Call, timed: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(initiatives, "CHUNK", CHUNK)
    only = _fill(call, "scratch", NODES)
    call("note", initiative="main", text="main exists")
    call("initiative", initiative="main", action="attach", node={"id": only[0]})

    done = call("initiative", initiative="scratch", action="delete")
    assert done["state"] == "applied"
    assert _changes(done)["forgotten_nodes"] == NODES - 1
    assert _members(call, "main") == {only[0]}
    assert [i["name"] for i in call("initiatives")["data"]["initiatives"]] == ["main"]
    assert len(_audit(timed)) == 1 + 2 + 1  # the attach, two chunks, the delete


def test_a_merge_the_vault_stops_part_way_answers_partial_and_the_same_call_completes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process takes the vault's write lock between two chunks and holds it past the wait:
    the chunks already committed moved their nodes, so the answer is `partial` (how many moved, the
    failed step), not `rejected`, which says nothing was applied (SPEC 2.1, decision 213). The same
    call once the lock is free moves the rest. SQLite: its one write lock is what is held."""
    monkeypatch.setattr(initiatives, "CHUNK", CHUNK)
    settings = Settings.from_env({"KAERU_BUSY_TIMEOUT_MS": "300"}, vault_dir=tmp_path / "vault")
    store = open_store(settings)
    try:
        call = make_call(Service(store, settings))
        nodes = 8 * CHUNK  # many chunks (the other writer gets in between two), and within `_members`' 50
        moving = _fill(call, "heronry", nodes)
        _fill(call, "wetlands", 1)
        blocker = LockBetweenTwoChunks(tmp_path / "vault" / "vault.sqlite3")

        blocker.start()
        stopped = call("initiative", initiative="heronry", action="merge", to="wetlands")
        blocker.join()
        assert blocker.holding.is_set()
        assert stopped["state"] == "partial", stopped
        assert not list(Draft202012Validator(output_for("initiative", "mutation")).iter_errors(stopped))
        merged = _changes(stopped)["merged_nodes"]
        assert 0 < merged < nodes and merged % CHUNK == 0, stopped
        [step] = stopped["data"]["failed_steps"]
        assert step["code"] == "unavailable" and "the same call again completes it" in step["message"], step
        assert len(_members(call, "heronry")) == nodes - merged, "the answer counts what the vault holds"

        done = call("initiative", initiative="heronry", action="merge", to="wetlands")
        assert done["state"] == "applied" and _changes(done)["merged_nodes"] == nodes - merged, done
        assert set(moving) <= _members(call, "wetlands")
        assert [i["name"] for i in call("initiatives")["data"]["initiatives"]] == ["wetlands"]
    finally:
        store.close()
