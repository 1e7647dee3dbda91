"""An export of an initiative the vault does not hold is refused before anything is written, with
the `unknown_initiative` issue and did-you-mean that `search` and `context` give; an export already
at the path is left as it was. Before, `kaeru export f.amg -i Alpha` (only `alpha` exists) wrote an
empty archive over `f.amg` and answered `applied`, exit 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec
from tests.cli.support import kaeru, valid_envelope, write_notes

pytestmark = pytest.mark.timeout(300)


def test_the_archive_tool_refuses_an_unknown_initiative_and_keeps_the_file(vault: VaultSpec, tmp_path: Path) -> None:
    root = tmp_path / "exports"
    settings = vault.settings(export_root=root)
    store = open_store(settings)
    try:
        run = build_server(Service(store, settings)).registry.run
        assert run("note", {"initiative": "alpha", "text": "the heron waits by the pond"})["state"] == "applied"
        assert run("archive", {"action": "export", "path": "good.amg"})["state"] == "applied"
        good = (root / "good.amg").read_bytes()
        for fmt, path, names in (
            ("amg", "good.amg", ["Alpha"]),
            ("amg", "good.amg", ["alpha", "Alpha"]),
            ("markdown", "pages", ["Alpha"]),
        ):
            refused = run("archive", {"action": "export", "format": fmt, "path": path, "initiatives": names})
            assert refused["state"] == "rejected", refused
            [issue] = refused["issues"]
            assert issue["code"] == "unknown_initiative" and issue["field"] == f"initiatives[{names.index('Alpha')}]"
            assert "no initiative named 'Alpha'; did you mean 'alpha'?" in issue["message"]
        assert (root / "good.amg").read_bytes() == good
        assert sorted(p.name for p in root.iterdir()) == ["good.amg"], "no folder made, no partial file left"
        # A name as `search` reads it (trimmed) is the initiative's.
        spaced = run("archive", {"action": "export", "path": "spaced.amg", "initiatives": [" alpha "]})
        assert spaced["data"]["artifacts"][0]["nodes"] == 1
        assert json.loads((root / "spaced.amg").read_text().splitlines()[0])["initiatives"] == ["alpha"]
    finally:
        store.close()


def test_kaeru_export_of_an_unknown_initiative_exits_2_and_keeps_the_file(vault: VaultSpec, tmp_path: Path) -> None:
    write_notes(vault, "alpha", "the heron waits by the pond")
    archive = tmp_path / "f.amg"
    assert kaeru(vault, "export", str(archive)).code == 0
    good = archive.read_bytes()
    human = kaeru(vault, "export", str(archive), "-i", "Alpha")
    assert human.code == 2, (human.stdout, human.stderr)
    assert "unknown_initiative [initiatives[0]]: no initiative named 'Alpha'; did you mean 'alpha'?" in human.stderr
    enveloped = kaeru(vault, "export", str(archive), "-i", "Alpha", as_json=True)
    assert enveloped.code == 2
    assert valid_envelope(enveloped, "archive", "mutation", "rejected")["issues"][0]["code"] == "unknown_initiative"
    streamed = kaeru(vault, "export", "-", "-i", "Alpha")
    assert streamed.code == 2 and streamed.stdout == "" and "did you mean 'alpha'?" in streamed.stderr
    assert archive.read_bytes() == good
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(("f.amg", ".f.amg"))) == ["f.amg"]
