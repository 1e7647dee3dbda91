"""Tokens do not travel in an archive, and neither do their audit records: an export leaves out the
records of `kaeru token add/renew/revoke`, and an import skips them in an archive that holds them (one
written before), so `kaeru token history` in the vault that imported it lists only its own tokens,
never another vault's as its own. Before, the other vault's `token_add` showed up in the importing
vault's history, about a token it never had. Both backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.backends import VaultSpec, drop_vault, new_vault
from tests.cli.support import kaeru

pytestmark = pytest.mark.timeout(300)


def _history(vault: VaultSpec) -> list[tuple[str, str, str]]:
    found = kaeru(vault, "token", "history", as_json=True)
    assert found.code == 0, found.stderr
    return [(r["operation"], r["name"], r["actor"]) for r in found.json()["history"]]


def test_another_vaults_token_records_do_not_come_with_its_archive(vault: VaultSpec, tmp_path: Path) -> None:
    assert kaeru(vault, "token", "add", "visitor", KAERU_ACTOR="owner").code == 0
    assert kaeru(vault, "token", "revoke", "visitor", KAERU_ACTOR="owner").code == 0
    archive = tmp_path / "theirs.amg"
    exported = kaeru(vault, "export", str(archive))
    assert exported.code == 0, exported.stderr
    lines = archive.read_text(encoding="utf-8").splitlines()
    assert not [line for line in lines if '"token_' in line]

    # As an archive written before held them: the header counts the record it carries.
    header = json.loads(lines[0])
    header["counts"]["audit"] += 1
    added = {
        "kind": "audit",
        "at": "2026-01-02T03:04:05.000006Z",
        "operation": "token_add",
        "actor": "owner",
        "request_id": None,
        "initiative": None,
        "affected": [],
        "changes": [
            {"field": "token", "before": None, "after": "visitor"},
            {"field": "grant", "before": None, "after": {"initiatives": None, "read_only": False, "expires_at": None}},
        ],
    }
    older = tmp_path / "older.amg"
    older.write_text("\n".join([json.dumps(header), *lines[1:], json.dumps(added, sort_keys=True)]) + "\n")

    ours = new_vault(vault.backend, tmp_path)
    try:
        assert kaeru(ours, "token", "add", "mine", KAERU_ACTOR="me").code == 0
        for path in (archive, older):
            imported = kaeru(ours, "import", str(path))
            assert imported.code == 0, imported.stderr
        assert _history(ours) == [("added", "mine", "me")]
        assert "visitor" not in kaeru(ours, "token", "history").stdout
    finally:
        drop_vault(ours)
