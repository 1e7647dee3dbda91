"""An export of some initiatives, at its edges: a link from one of its nodes to a node it does not
hold is left out and said (the artifact's and the header's `omissions`); a node it holds that is
shared with another initiative brings that initiative along on import — made in the target vault
and counted with the archive's own, where the answer said 1 initiative and 2 were made. Both
backends, through the `archive` tool."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec, drop_vault, new_vault

Run = Callable[[str, dict[str, Any]], dict[str, Any]]
LEFT_OUT = "edge revisions to nodes outside the exported initiatives"


@pytest.fixture
def exporting(vault: VaultSpec, tmp_path: Path) -> Iterator[Run]:
    settings = vault.settings(export_root=tmp_path / "exports")
    store = open_store(settings)
    try:
        yield build_server(Service(store, settings)).registry.run
    finally:
        store.close()


def _id(answer: dict[str, Any]) -> str:
    assert answer["state"] == "applied", answer
    return str(answer["data"]["primary"]["id"])


def test_a_link_to_a_node_outside_the_export_is_left_out_and_said(exporting: Run, tmp_path: Path) -> None:
    inside = _id(exporting("note", {"initiative": "alpha", "text": "the heron waits by the pond"}))
    outside = _id(exporting("note", {"initiative": "beta", "text": "the pond freezes in winter"}))
    linked = exporting("link", {"initiative": "alpha", "from": {"id": inside}, "to": {"id": outside}, "weight": 0.5})
    assert linked["state"] == "applied", linked
    exporting("link", {"initiative": "alpha", "from": {"id": inside}, "to": {"id": outside}, "weight": 0.8})

    answer = exporting("archive", {"action": "export", "initiatives": ["alpha"], "path": "alpha.amg"})
    assert answer["state"] == "applied", answer
    [artifact] = answer["data"]["artifacts"]
    assert (artifact["nodes"], artifact["edges"]) == (1, 0)
    assert artifact["omissions"] == [{"reason": LEFT_OUT, "count": 2}], "both revisions of the link"
    header = json.loads((tmp_path / "exports" / "alpha.amg").read_text().split("\n", 1)[0])
    assert header["omissions"] == artifact["omissions"] and header["counts"]["edge_revisions"] == 0

    whole = exporting("archive", {"action": "export", "path": "all.amg"})
    assert whole["data"]["artifacts"][0]["omissions"] == [] and whole["data"]["artifacts"][0]["edges"] == 1


def test_an_initiative_a_shared_node_brings_is_made_and_counted(
    exporting: Run, vault: VaultSpec, tmp_path: Path
) -> None:
    _id(exporting("note", {"initiative": "alpha", "text": "alpha's own note"}))
    shared = _id(exporting("note", {"initiative": "alpha", "text": "the frog both teams watch"}))
    _id(exporting("note", {"initiative": "beta", "text": "beta's own note"}))
    assert (
        exporting("initiative", {"initiative": "beta", "action": "attach", "node": {"id": shared}})["state"]
        == "applied"
    )
    assert (
        exporting("archive", {"action": "export", "initiatives": ["alpha"], "path": "alpha.amg"})["state"] == "applied"
    )

    other = new_vault(vault.backend, tmp_path)
    settings = other.settings(export_root=tmp_path / "exports")
    store = open_store(settings)
    try:
        run = build_server(Service(store, settings)).registry.run
        imported = run("archive", {"action": "import", "path": "alpha.amg"})
        assert imported["state"] == "applied", imported
        counts = {c["field"]: c["after"] for c in imported["data"]["changes"]}
        listed = run("initiatives", {})["data"]["initiatives"]
        assert sorted(i["name"] for i in listed) == ["alpha", "beta"]
        assert counts["imported.initiatives"] == 2, counts
        [beta] = [i for i in listed if i["name"] == "beta"]
        assert beta["counts"]["total"] == 1, "beta holds the shared node, none of its own"
        assert run("read", {"initiative": "beta", "node": {"id": shared}})["data"]["hits"][0]["initiatives"] == [
            "alpha",
            "beta",
        ]

        again = run("archive", {"action": "import", "path": "alpha.amg"})
        assert again["state"] == "unchanged", again
        assert {c["field"]: c["after"] for c in again["data"]["changes"]}["imported.initiatives"] == 0
    finally:
        store.close()
        drop_vault(other)
