"""`kaeru copy --force` into a vault that holds memory of its own is verified as holding every record
of the source, so a correct merge verifies and one that lost records of the source is refused, naming
what the target lacks. Before, the target was compared whole with the source, which it cannot equal
once it held anything: every merge wrote everything, then failed `copy_not_verified`, exit 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from kaeru.export import archive
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec, drop_vault, new_vault
from tests.cli.support import error_object, kaeru, write_notes

pytestmark = pytest.mark.timeout(300)


def _where(spec: VaultSpec) -> str:
    return spec.database_url or str(spec.vault_dir)


def _read(spec: VaultSpec, node_id: str, initiative: str) -> str:
    found = kaeru(spec, "read", node_id, "-i", initiative, as_json=True)
    assert found.code == 0, found.stderr
    body: str = found.json()["data"]["hits"][0]["body"]
    return body


def test_copy_force_into_a_vault_holding_memory_verifies_that_the_source_is_in_it(
    vault: VaultSpec, tmp_path: Path
) -> None:
    [kingfisher] = write_notes(vault, "river", {"text": "the kingfisher dives", "options": {"slot": "handoff"}})
    source = new_vault(vault.backend, tmp_path)
    clashing = new_vault(vault.backend, tmp_path)
    try:
        [heron] = write_notes(source, "pond", "the heron waits by the pond")
        merged = kaeru({}, "copy", "--from", _where(source), "--to", _where(vault), "--force", as_json=True)
        assert merged.code == 0, (merged.stdout, merged.stderr)
        document = merged.json()
        assert document["ok"] is True and document["merged"] is True and document["copied"]["node_revisions"] == 1
        assert _read(vault, heron, "pond") == "the heron waits by the pond"
        assert _read(vault, kingfisher, "river") == "the kingfisher dives", "the target keeps its own memory"
        again = kaeru({}, "copy", "--from", _where(source), "--to", _where(vault), "--force")
        assert again.code == 0 and "every record of the source is in the target" in again.stdout

        # A source whose `handoff` slot history clashes with the target's: its slot revision 1 is not
        # copied (the target has its own revision 1), so the merge does not hold all of the source.
        write_notes(clashing, "river", {"text": "the otter swims", "options": {"slot": "handoff"}})
        refused = kaeru({}, "copy", "--from", _where(clashing), "--to", _where(vault), "--force", as_json=True)
        message = error_object(refused, "copy_not_verified", 1)
        assert "the target lacks 1 of the source's 1 slot revision" in message, message
    finally:
        drop_vault(source)
        drop_vault(clashing)


def test_a_copy_into_an_empty_vault_is_still_compared_whole(vault: VaultSpec, tmp_path: Path) -> None:
    """Without a merge the target must be the source: a target that holds more is refused, as before."""
    write_notes(vault, "pond", "the heron waits by the pond")
    target = new_vault(vault.backend, tmp_path)
    source_store, target_store = open_store(vault.settings()), open_store(target.settings())
    try:
        write_notes(target, "river", "the kingfisher dives")
        with pytest.raises(RuntimeError, match="copy differs from its source"):
            archive.copy(source_store, target_store)
        done = archive.copy(source_store, target_store, merge=True)
        assert done.merged and done.digest == archive.content_digest(source_store)[1]
    finally:
        source_store.close()
        target_store.close()
        drop_vault(target)
