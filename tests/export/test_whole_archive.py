"""An archive that does not hold what its header counts is refused whole: cut short at a line
boundary (`head -n 5`), only its header, or with records added, nothing of it is written and the
refusal names the file and what is missing. Before, a cut archive imported its first records and
answered `applied` (exit 0), and a header alone "imported" nothing, also `applied`."""

from __future__ import annotations

from pathlib import Path

import pytest

from kaeru.api.requests import parse
from kaeru.export import archive, vault_io
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.base import Store
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec, drop_vault, new_vault
from tests.cli.support import kaeru, valid_envelope

pytestmark = pytest.mark.timeout(300)


def _five_notes_and_a_link(service: Service) -> None:
    """The tester's vault: five notes in `p` and a causal link from the first to the second."""
    run = build_server(service).registry.run
    for i in range(1, 6):
        assert run("note", {"initiative": "p", "text": f"note {i}", "name": f"n{i}"})["state"] == "applied"
    link = {"initiative": "p", "action": "add", "from": "n1", "to": "n2", "edge_type": "causal", "weight": 0.9}
    assert run("link", link)["state"] == "applied"


def _full_archive(service: Service, vault: VaultSpec, root: Path) -> list[str]:
    settings = vault.settings(export_root=root)
    archive.export(service.store, settings, parse("archive", {"action": "export", "path": "full.amg"}))
    return (root / "full.amg").read_text(encoding="utf-8").splitlines()


def _holds_nothing(store: Store) -> bool:
    with store.read() as session:
        return (
            session.all_initiatives() == []
            and not any(True for _ in session.export_revisions(None))
            and not any(True for _ in session.export_edges(None))
            and not any(True for _ in session.export_audit(None))
        )


def test_an_archive_cut_short_or_grown_is_refused_whole(
    service: Service, vault: VaultSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vault_io, "CHUNK", 2)  # what is cut is chunks past the first
    _five_notes_and_a_link(service)
    root = tmp_path / "exports"
    full = _full_archive(service, vault, root)
    cases = {
        "cut.amg": (full[:5], "3 of its 5 node revisions, 0 of its 1 edge revision and 0 of its"),
        "header.amg": (full[:1], "0 of its 1 initiative, 0 of its 5 node revisions"),
        "twice.amg": (full + full[1:], "10 node revisions where its header counts 5"),
    }
    other = new_vault(vault.backend, tmp_path)
    store = open_store(other.settings(export_root=root))
    try:
        run = build_server(Service(store, other.settings(export_root=root))).registry.run
        for name, (lines, says) in cases.items():
            (root / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
            refused = run("archive", {"action": "import", "path": name})
            assert refused["state"] == "rejected", (name, refused)
            [issue] = refused["issues"]
            assert (issue["code"], issue["field"]) == ("invalid_argument", "path")
            assert str(root / name) in issue["message"] and says in issue["message"], issue
            assert "nothing of it was imported" in issue["message"]
            assert ("cut short?" in issue["message"]) == (name != "twice.amg")
            assert _holds_nothing(store), f"{name}: nothing of it is written"
        whole = run("archive", {"action": "import", "path": "full.amg"})
        assert whole["state"] == "applied"
        assert {c["field"]: c["after"] for c in whole["data"]["changes"]}["imported.node_revisions"] == 5
    finally:
        store.close()
        drop_vault(other)


def test_kaeru_import_of_a_cut_archive_exits_non_zero_and_writes_nothing(
    service: Service, vault: VaultSpec, tmp_path: Path
) -> None:
    """The tester's repro: `head -n 5 full.amg > cut.amg; kaeru import cut.amg` (and the same
    through a pipe) exits 2 naming the file and what is missing; the vault stays empty."""
    _five_notes_and_a_link(service)
    root = tmp_path / "exports"
    full = _full_archive(service, vault, root)
    cut = root / "cut.amg"
    cut.write_text("\n".join(full[:5]) + "\n", encoding="utf-8")
    target = new_vault(vault.backend, tmp_path)
    try:
        human = kaeru(target, "import", str(cut))
        assert human.code == 2, (human.stdout, human.stderr)
        assert f"invalid_argument [path]: the archive {cut} does not hold what its header counts" in human.stderr
        assert "3 of its 5 node revisions" in human.stderr and human.stdout == ""
        piped = kaeru(target, "import", "-", stdin=cut.read_bytes(), as_json=True)
        assert piped.code == 2
        [issue] = valid_envelope(piped, "archive", "mutation", "rejected")["issues"]
        assert "the archive read from standard input does not hold" in issue["message"]
        store = open_store(target.settings())
        try:
            assert _holds_nothing(store)
        finally:
            store.close()
    finally:
        drop_vault(target)
