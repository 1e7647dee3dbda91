"""An import answers `unchanged` only when it wrote nothing (SPEC 2): one that brought a slot's new
holder, an initiative merged away or deleted, or audit records is `applied`, and says what it wrote.
Before, only node and edge revisions counted, so an import that moved a slot said `unchanged`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.base import Store
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec, drop_vault, new_vault

Run = Callable[[str, dict[str, Any]], dict[str, Any]]


@pytest.fixture
def other(vault: VaultSpec, tmp_path: Path) -> Iterator[tuple[Store, Run]]:
    """A second, empty vault of the test's backend, sharing the export root of the first."""
    spec = new_vault(vault.backend, tmp_path)
    settings = spec.settings(export_root=tmp_path / "exports")
    store = open_store(settings)
    yield store, build_server(Service(store, settings)).registry.run
    store.close()
    drop_vault(spec)


@pytest.fixture
def source(vault: VaultSpec, tmp_path: Path) -> Iterator[Run]:
    """The test's vault, exporting under the same root."""
    settings = vault.settings(export_root=tmp_path / "exports")
    store = open_store(settings)
    yield build_server(Service(store, settings)).registry.run
    store.close()


def _written(envelope: dict[str, Any]) -> dict[str, int]:
    return {c["field"].removeprefix("imported."): c["after"] for c in envelope["data"]["changes"]}


def test_an_import_that_brings_only_a_slot_holder_is_applied(source: Run, other: tuple[Store, Run]) -> None:
    store, run = other
    heron = source("note", {"initiative": "alpha", "text": "the heron waits by the pond"})["data"]["primary"]["id"]
    assert source("archive", {"action": "export", "path": "a.amg"})["state"] == "applied"
    assert run("archive", {"action": "import", "path": "a.amg"})["state"] == "applied"
    assert source("slot", {"initiative": "alpha", "slot": "handoff", "node": heron})["state"] == "applied"
    assert source("archive", {"action": "export", "path": "b.amg"})["state"] == "applied"

    moved = run("archive", {"action": "import", "path": "b.amg"})
    assert moved["state"] == "applied", moved
    written = _written(moved)
    assert (written["node_revisions"], written["edge_revisions"]) == (0, 0)
    assert (written["slot_revisions"], written["audit"]) == (1, 1)
    held = run("current_state", {"initiative": "alpha", "slot": "handoff"})["data"]
    assert held["status"] == "current" and held["current"]["id"] == heron
    with store.read() as session:
        imports = [a for a in session.export_audit(None) if a.operation == "import"]
    assert len(imports) == 2, "each import that wrote something records itself"

    again = run("archive", {"action": "import", "path": "b.amg"})
    assert again["state"] == "unchanged" and not any(v for k, v in _written(again).items() if k != "skipped")


def test_an_import_counts_the_ended_initiatives_it_restores(source: Run, other: tuple[Store, Run]) -> None:
    _, run = other
    source("note", {"initiative": "alpha", "text": "the heron waits by the pond"})
    source("note", {"initiative": "beta", "text": "a scratch note"})
    assert source("initiative", {"initiative": "beta", "action": "delete"})["state"] == "applied"
    assert source("archive", {"action": "export", "path": "ended.amg"})["state"] == "applied"

    first = run("archive", {"action": "import", "path": "ended.amg"})
    assert first["state"] == "applied" and _written(first)["ended_initiatives"] == 1
    again = run("archive", {"action": "import", "path": "ended.amg"})
    assert again["state"] == "unchanged" and _written(again)["ended_initiatives"] == 0


def test_an_archive_whose_revisions_differ_from_the_vaults_says_so(source: Run, other: tuple[Store, Run]) -> None:
    """Decision 315: two vaults that parted each revised one node (and gave one slot another holder);
    importing one's archive into the other keeps the vault's revisions and says which differ."""
    _, run = other
    base = source("note", {"initiative": "alpha", "text": "the shared base note", "name": "base"})["data"]["primary"]
    source("note", {"initiative": "alpha", "text": "the heron", "name": "heron"})
    source("note", {"initiative": "alpha", "text": "the otter", "name": "otter"})
    assert source("archive", {"action": "export", "path": "a.amg"})["state"] == "applied"
    assert run("archive", {"action": "import", "path": "a.amg"})["state"] == "applied"
    source("revise", {"initiative": "alpha", "node": "base", "patch": {"body": "A says X"}})
    source("slot", {"initiative": "alpha", "slot": "handoff", "node": "heron"})
    run("revise", {"initiative": "alpha", "node": "base", "patch": {"body": "B says Y"}})
    run("slot", {"initiative": "alpha", "slot": "handoff", "node": "otter"})
    assert source("archive", {"action": "export", "path": "b.amg"})["state"] == "applied"

    merged = run("archive", {"action": "import", "path": "b.amg"})
    [conflict] = merged["issues"]
    assert conflict["code"] == "import_conflict" and conflict["field"] == "path"
    assert f"node {base['id']} revision 2" in conflict["message"] and "slot 'handoff' revision 1" in conflict["message"]
    assert _written(merged)["conflicts"] == 2
    assert run("read", {"initiative": "alpha", "node": "base"})["data"]["hits"][0]["body"] == "B says Y"
    again = run("archive", {"action": "import", "path": "a.amg"})
    assert again["state"] == "unchanged" and again["issues"] == []
