"""Two vaults that parted (one archive imported into both) and then each changed the same node, edge
or slot: importing one's archive into the other keeps the other's history whole. Before, the
archive's differing revision was skipped ("this vault's were kept") but its later revisions were
written on top of the vault's: the archive's text became current, its history said it changed the
vault's text, and `trail` listed revision 3 before 2. Diverged edges were not even warned of; a
`kaeru copy --force` did the same merge and then said only `copy_not_verified`. Decision 463."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kaeru.export import archive
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.base import Store
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec, drop_vault, new_vault

Run = Callable[[str, dict[str, Any]], dict[str, Any]]


@pytest.fixture
def pair(vault: VaultSpec, tmp_path: Path) -> Iterator[tuple[tuple[Store, Run], tuple[Store, Run]]]:
    """Vault A (the test's) and vault B (another of its backend), sharing one export root, B holding
    what A held when they parted: one note in `alpha`."""
    other = new_vault(vault.backend, tmp_path)
    opened = []
    for spec in (vault, other):
        settings = spec.settings(export_root=tmp_path / "exports")
        store = open_store(settings)
        opened.append((store, build_server(Service(store, settings)).registry.run))
    try:
        yield opened[0], opened[1]
    finally:
        for store, _ in opened:
            store.close()
        drop_vault(other)


def _parted(pair: tuple[tuple[Store, Run], tuple[Store, Run]], *notes: str) -> list[str]:
    """Notes written in A, then A exported and imported into B: the vaults part here."""
    (_, a), (_, b) = pair
    ids = [a("note", {"initiative": "alpha", "text": text, "name": text})["data"]["primary"]["id"] for text in notes]
    assert a("archive", {"action": "export", "path": "parted.amg"})["state"] == "applied"
    assert b("archive", {"action": "import", "path": "parted.amg"})["state"] == "applied"
    return ids


def _import_a_into_b(pair: tuple[tuple[Store, Run], tuple[Store, Run]]) -> dict[str, Any]:
    (_, a), (_, b) = pair
    assert a("archive", {"action": "export", "path": "a.amg"})["state"] == "applied"
    return b("archive", {"action": "import", "path": "a.amg"})


def _changes(envelope: dict[str, Any]) -> dict[str, int]:
    return {c["field"].removeprefix("imported."): c["after"] for c in envelope["data"]["changes"]}


def test_a_node_both_vaults_revised_keeps_this_vaults_history(
    pair: tuple[tuple[Store, Run], tuple[Store, Run]],
) -> None:
    (_, a), (_, b) = pair
    [decision] = _parted(pair, "dbc")
    a("revise", {"initiative": "alpha", "node": "dbc", "patch": {"body": "A edit 1"}})
    a("revise", {"initiative": "alpha", "node": "dbc", "patch": {"body": "A edit 2"}})
    b("revise", {"initiative": "alpha", "node": "dbc", "patch": {"body": "B edit 1"}})

    merged = _import_a_into_b(pair)
    [conflict] = [i for i in merged["issues"] if i["code"] == "import_conflict"]
    assert f"node {decision} revisions 2 to 3" in conflict["message"], conflict
    assert "this vault's were kept" in conflict["message"]
    assert _changes(merged)["conflicts"] == 2 and _changes(merged)["node_revisions"] == 0

    [hit] = b("read", {"initiative": "alpha", "node": "dbc"})["data"]["hits"]
    assert hit["body"] == "B edit 1" and hit["revision"].startswith("2-"), hit
    entries = b("trail", {"initiative": "alpha", "node": "dbc", "kind": "history"})["data"]["entries"]
    assert [e["node"]["body"] for e in entries] == ["dbc", "B edit 1"], entries

    again = _import_a_into_b(pair)
    assert again["state"] == "unchanged" and _changes(again)["conflicts"] == 2, "the same archive says the same"


def test_a_slot_both_vaults_moved_keeps_this_vaults_holder(pair: tuple[tuple[Store, Run], tuple[Store, Run]]) -> None:
    (_, a), (_, b) = pair
    _parted(pair, "heron", "otter", "kingfisher")
    a("slot", {"initiative": "alpha", "slot": "handoff", "node": "heron"})
    a("slot", {"initiative": "alpha", "slot": "handoff", "node": "kingfisher"})
    b("slot", {"initiative": "alpha", "slot": "handoff", "node": "otter"})

    merged = _import_a_into_b(pair)
    [conflict] = [i for i in merged["issues"] if i["code"] == "import_conflict"]
    assert "slot 'handoff' revisions 1 to 2 of 'alpha'" in conflict["message"], conflict
    held = b("current_state", {"initiative": "alpha", "slot": "handoff"})["data"]
    assert held["current"]["name"] == "otter" and held["slot_revision"].startswith("1-"), held


def test_an_edge_both_vaults_changed_is_warned_of_and_keeps_this_vaults_weight(
    pair: tuple[tuple[Store, Run], tuple[Store, Run]],
) -> None:
    (_, a), (_, b) = pair
    heron, pond = _parted(pair, "heron", "pond")
    link = {"initiative": "alpha", "from": "heron", "to": "pond", "edge_type": "refers_to"}
    a("link", {**link, "weight": 0.5})
    a("link", {**link, "action": "reweight", "weight": 0.9})
    b("link", {**link, "weight": 0.3})

    merged = _import_a_into_b(pair)
    [conflict] = [i for i in merged["issues"] if i["code"] == "import_conflict"]
    assert f"edge {heron} -refers_to-> {pond} revisions 1 to 2" in conflict["message"], conflict
    assert _changes(merged)["edge_revisions"] == 0
    (store, _) = pair[1]
    with store.read() as session:
        edge = next(e for e in session.live_edges([heron]) if e.dst == pond)
    assert (edge.weight, edge.rev_no) == (0.3, 1)


def test_copy_force_between_diverged_vaults_says_which_records_diverged(
    pair: tuple[tuple[Store, Run], tuple[Store, Run]],
) -> None:
    """The merge keeps the target's diverged records (a diverged record cannot be held), writes the
    rest of the source, and is refused naming the diverged records, not only counting what is lacking."""
    (source, a), (target, b) = pair
    [decision] = _parted(pair, "dbc")
    a("revise", {"initiative": "alpha", "node": "dbc", "patch": {"body": "A edit 1"}})
    a("note", {"initiative": "alpha", "text": "a note only A has", "name": "only-a"})
    b("revise", {"initiative": "alpha", "node": "dbc", "patch": {"body": "B edit 1"}})

    with pytest.raises(RuntimeError) as refused:
        archive.copy(source, target, merge=True)
    message = str(refused.value)
    assert "the target lacks 1 of the source's" in message
    assert "diverged" in message and f"node {decision} revision 2" in message, message
    assert "the target's were kept" in message
    assert b("read", {"initiative": "alpha", "node": "dbc"})["data"]["hits"][0]["body"] == "B edit 1"
    assert b("read", {"initiative": "alpha", "node": "only-a"})["data"]["hits"], "the rest of the source was merged"
