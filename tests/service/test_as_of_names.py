"""As-of reads name initiatives as they were named then (issue 13, defect 3): after a rename, a merge
or a delete, `read at=`, `current_state as_of` and `trail history` show the membership names of
their moment, and `metadata_is_current` is true only when those names are known exactly."""

from __future__ import annotations

import json
from dataclasses import replace
from itertools import pairwise
from pathlib import Path
from typing import Any

from kaeru.api.requests import parse
from kaeru.domain.model import NameSpan, name_at
from kaeru.domain.timefmt import fmt
from kaeru.export import archive
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec, drop_vault, new_vault
from tests.service.support import Clock


def _run(service: Service) -> Any:
    return build_server(service).registry.run


def _hit(answer: dict[str, Any]) -> dict[str, Any]:
    assert answer["state"] == "ok", answer
    hit: dict[str, Any] = answer["data"]["hits"][0]
    return hit


def test_a_read_before_a_rename_names_the_old_initiative(timed: Service, clock: Clock) -> None:
    run = _run(timed)
    node = run("note", {"initiative": "alpha", "text": "the ferry leaves at nine"})["data"]["primary"]["id"]
    before = fmt(clock.tick())
    clock.tick()
    run("initiative", {"initiative": "alpha", "action": "rename", "to": "beta"})
    after = fmt(clock.tick())

    then = _hit(run("read", {"initiative": "beta", "node": node, "at": before}))
    assert then["initiatives"] == ["alpha"] and then["metadata_is_current"] is True
    now = _hit(run("read", {"initiative": "beta", "node": node, "at": after}))
    assert now["initiatives"] == ["beta"] and now["metadata_is_current"] is True
    assert _hit(run("read", {"initiative": "beta", "node": node}))["initiatives"] == ["beta"]


def test_renames_back_and_forth_are_each_shown_at_their_time(timed: Service, clock: Clock) -> None:
    run = _run(timed)
    node = run("note", {"initiative": "alpha", "text": "the harbour closes at six"})["data"]["primary"]["id"]
    moments = []
    for name, to in (("alpha", "beta"), ("beta", "gamma"), ("gamma", "alpha")):
        moments.append(fmt(clock.tick()))
        clock.tick()
        run("initiative", {"initiative": name, "action": "rename", "to": to})
    moments.append(fmt(clock.tick()))
    seen = [_hit(run("read", {"initiative": "alpha", "node": node, "at": m}))["initiatives"] for m in moments]
    assert seen == [["alpha"], ["beta"], ["gamma"], ["alpha"]]


def test_a_read_before_a_merge_names_the_merged_initiative(timed: Service, clock: Clock) -> None:
    run = _run(timed)
    node = run("note", {"initiative": "alpha", "text": "the lantern is in the shed"})["data"]["primary"]["id"]
    run("note", {"initiative": "beta", "text": "the orchard needs water"})
    before = fmt(clock.tick())
    clock.tick()
    run("initiative", {"initiative": "alpha", "action": "merge", "to": "beta"})
    after = fmt(clock.tick())
    assert _hit(run("read", {"initiative": "beta", "node": node, "at": before}))["initiatives"] == ["alpha"]
    assert _hit(run("read", {"initiative": "beta", "node": node, "at": after}))["initiatives"] == ["beta"]
    names = [i["name"] for i in run("initiatives", {})["data"]["initiatives"]]
    assert names == ["beta"]


def test_a_read_before_a_delete_names_the_deleted_initiative(timed: Service, clock: Clock) -> None:
    run = _run(timed)
    node = run("note", {"initiative": "alpha", "text": "the quarry opens at dawn"})["data"]["primary"]["id"]
    before = fmt(clock.tick())
    clock.tick()
    run("initiative", {"initiative": "alpha", "action": "delete"})
    run("note", {"initiative": "alpha", "text": "a new alpha, not the old one"})
    then = _hit(run("read", {"initiative": "alpha", "node": node, "at": before}))
    assert then["initiatives"] == ["alpha"] and then["metadata_is_current"] is True


def test_history_entries_show_the_names_of_their_time(timed: Service, clock: Clock) -> None:
    run = _run(timed)
    node = run("note", {"initiative": "alpha", "text": "the meadow floods in spring"})["data"]["primary"]["id"]
    run("note", {"initiative": "gamma", "text": "the glacier retreats"})
    clock.tick()
    run("initiative", {"initiative": "alpha", "action": "rename", "to": "beta"})
    clock.tick()
    run("revise", {"initiative": "beta", "node": node, "patch": {"body": "the meadow floods in april"}})
    clock.tick()
    run("initiative", {"initiative": "beta", "action": "merge", "to": "gamma"})
    trail = run("trail", {"initiative": "gamma", "node": node, "kind": "history"})["data"]
    revisions = [e for e in trail["entries"] if e["kind"] == "revision"]
    assert [e["node"]["initiatives"] for e in revisions] == [["alpha"], ["beta"], ["gamma"]]
    # A rename is no membership change; the merge is, named as it was on each side.
    changed = [[c for c in e["changes"] if c["field"] == "initiatives"] for e in revisions]
    assert changed[1] == []
    assert changed[2] == [{"field": "initiatives", "before": ["beta"], "after": ["gamma"]}]
    assert trail["subject"]["initiatives"] == ["gamma"]


def test_current_state_as_of_names_the_initiative_of_its_time(timed: Service, clock: Clock) -> None:
    run = _run(timed)
    run("note", {"initiative": "alpha", "text": "the tunnel is open", "options": {"slot": "handoff"}})
    before = fmt(clock.tick())
    clock.tick()
    run("initiative", {"initiative": "alpha", "action": "rename", "to": "beta"})
    state = run("current_state", {"initiative": "beta", "slot": "handoff", "as_of": before})["data"]
    assert state["current"]["initiatives"] == ["alpha"]


def test_renames_after_the_clock_stepped_back_keep_every_name(timed: Service, clock: Clock) -> None:
    """The wall clock stepping back (NTP) between renames neither fails the rename nor overwrites a
    name: each is stamped a microsecond after the previous one began, as node revisions are."""
    run = _run(timed)
    node = run("note", {"initiative": "alpha", "text": "the ferry leaves at nine"})["data"]["primary"]["id"]
    start = clock.now
    clock.tick()
    renamed = run("initiative", {"initiative": "alpha", "action": "rename", "to": "beta"})
    assert renamed["state"] == "applied", renamed
    clock.now = start  # stepped back to before the first rename
    again = run("initiative", {"initiative": "beta", "action": "rename", "to": "gamma"})
    assert again["state"] == "applied", again
    merged_into = run("note", {"initiative": "delta", "text": "the harbour closes at six"})
    assert merged_into["state"] == "applied"
    merged = run("initiative", {"initiative": "gamma", "action": "merge", "to": "delta"})
    assert merged["state"] == "applied", merged
    with timed.store.read() as session:
        ended = [e for e in session.ended_initiatives() if e.name == "gamma"]
        assert len(ended) == 1
        spans = session.name_history([ended[0].id])[ended[0].id]
    assert [s.name for s in spans] == ["alpha", "beta", "gamma"]
    assert all(s.valid_to is not None and s.valid_from < s.valid_to for s in spans)
    assert all(a.valid_to == b.valid_from for a, b in pairwise(spans))
    assert spans[-1].valid_to == ended[0].ended_at
    then = _hit(run("read", {"initiative": "delta", "node": node, "at": fmt(start)}))
    assert then["initiatives"] == ["alpha"] and then["metadata_is_current"] is True
    assert _hit(run("read", {"initiative": "delta", "node": node}))["initiatives"] == ["delta"]


def test_an_unknown_past_name_is_said_honestly(vault: VaultSpec, tmp_path: Path) -> None:
    """A version 1 archive names a merged-away initiative `#<n>` and nothing more: imported, it is
    no initiative anyone sees, and a read of that time says its names are not current."""
    root = tmp_path / "exports"
    root.mkdir()
    node = "019de2c4-2a80-7006-86cd-6e1b020bc555"
    common: dict[str, Any] = {
        "kind": "node",
        "id": node,
        "node_type": "episode",
        "tier": "operational",
        "name": "ferry",
        "body": "the ferry leaves at nine",
        "description": None,
        "tags": [],
        "layer": "warm",
        "visibility": "local",
        "status": None,
        "properties": {},
        "created_at": "2026-05-01T09:00:00.000000Z",
        "retracted": False,
        "pinned": False,
        "request_id": None,
        "actor": "agent",
    }
    lines = [
        {"format": "amg", "version": 1, "exported_at": "2026-05-01T09:00:20.000000Z", "initiatives": ["beta"]},
        {
            "kind": "initiative",
            "name": "beta",
            "created_at": "2026-05-01T09:00:10.000000Z",
            "last_activity": "2026-05-01T09:00:20.000000Z",
            "properties": {},
        },
        common | {"rev_no": 1, "revision": "1-a", "initiatives": ["#1"], "recorded_at": "2026-05-01T09:00:00.000000Z"},
        common
        | {"rev_no": 2, "revision": "2-b", "initiatives": ["beta"], "recorded_at": "2026-05-01T09:00:20.000000Z"},
    ]
    (root / "v1.amg").write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    store = open_store(vault.settings())
    try:
        service = Service(store, vault.settings(), clock=Clock())
        archive.import_(
            store, replace(vault.settings(), export_root=root), parse("archive", {"action": "import", "path": "v1.amg"})
        )
        run = _run(service)
        assert [i["name"] for i in run("initiatives", {})["data"]["initiatives"]] == ["beta"]
        then = _hit(run("read", {"initiative": "beta", "node": node, "at": "2026-05-01T09:00:05Z"}))
        assert then["initiatives"] == [] and then["metadata_is_current"] is False
        now = _hit(run("read", {"initiative": "beta", "node": node}))
        assert now["initiatives"] == ["beta"] and now["metadata_is_current"] is True
        archive.export(
            store, replace(vault.settings(), export_root=root), parse("archive", {"action": "export", "path": "v2.amg"})
        )
        header = json.loads((root / "v2.amg").read_text().splitlines()[0])
        assert header["version"] == 2 and header["initiatives"] == ["beta"]
        assert header["counts"]["ended_initiatives"] == 1
        # ...and the v2 archive round-trips byte for byte.
        other = new_vault(vault.backend, tmp_path)
        other_store = open_store(other.settings())
        try:
            archive.import_(
                other_store,
                replace(other.settings(), export_root=root),
                parse("archive", {"action": "import", "path": "v2.amg"}),
            )
            archive.export(
                other_store,
                replace(other.settings(), export_root=root),
                parse("archive", {"action": "export", "path": "v2b.amg"}),
            )
        finally:
            other_store.close()
            drop_vault(other)
        assert (root / "v2.amg").read_bytes() == (root / "v2b.amg").read_bytes()
    finally:
        store.close()


def test_name_at_is_exact_only_inside_a_span() -> None:
    spans = [NameSpan("alpha", "2026-01-01", "2026-02-01"), NameSpan("beta", "2026-02-01", "2026-03-01")]
    assert name_at(spans, "2026-01-15") == ("alpha", True)
    assert name_at(spans, "2026-02-01") == ("beta", True)
    assert name_at(spans, "2026-04-01") == ("beta", False)  # ended by then: its last name
    assert name_at(spans, "2025-12-01") == ("alpha", False)  # before the history starts
    assert name_at([], "2026-01-01") is None
