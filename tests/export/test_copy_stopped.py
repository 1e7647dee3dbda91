"""A `kaeru copy` stopped part way (killed, the machine restarted) left whole chunks in the target; run
again, it is refused as `target_not_empty`, and that refusal now says what is true: the same copy with
--force completes it, and the target then holds the source's memory, record for record. It said only
"use --force to merge into it", which reads as mixing two vaults; and a `kaeru import` of a folder
(a Markdown export) said only "no archive at …", not that `kaeru import-from kaeru-md` reads one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kaeru.export import archive, vault_io
from kaeru.export.vault_io import Screened
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec, drop_vault, new_vault
from tests.cli.support import error_object, kaeru, write_notes

pytestmark = pytest.mark.timeout(300)


class Stopped(Exception):
    """The copy's process dying part way (the records stop coming)."""


def _where(spec: VaultSpec) -> str:
    return spec.database_url or str(spec.vault_dir)


def _stopped_copy(source: VaultSpec, target: VaultSpec, tmp_path: Path) -> None:
    """What `archive.copy` leaves when its process dies in its third chunk: the source streamed out
    with its provenance records, as a copy streams it, and written until then."""
    path = tmp_path / "copy.amg"
    store = open_store(source.settings())
    try:
        with path.open("wb") as out:
            vault_io.write_amg(store, out.write, provenance=True)
    finally:
        store.close()

    def dying(records: Iterator[Screened]) -> Iterator[Screened]:
        for n, item in enumerate(records):
            if n == 5:
                raise Stopped
            yield item

    into = open_store(target.settings())
    try:
        with pytest.raises(Stopped):
            vault_io.write_records(into, dying(archive.screened(path, "allow")))
    finally:
        into.close()


def test_a_copy_stopped_part_way_is_completed_by_the_same_copy_with_force(
    vault: VaultSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vault_io, "CHUNK", 2)
    write_notes(vault, "pond", "the heron waits", "the egret wades", "the reeds bend", "the tide turns")
    target = new_vault(vault.backend, tmp_path)
    try:
        _stopped_copy(vault, target, tmp_path)
        refused = kaeru({}, "copy", "--from", _where(vault), "--to", _where(target), as_json=True)
        message = error_object(refused, "target_not_empty", 1)
        assert "a copy that stopped part way is completed so" in message, message
        done = kaeru({}, "copy", "--from", _where(vault), "--to", _where(target), "--force", as_json=True)
        assert done.code == 0, (done.stdout, done.stderr)
        stores = [open_store(spec.settings()) for spec in (vault, target)]
        try:
            source_digest, target_digest = (archive.content_digest(store) for store in stores)
        finally:
            for store in stores:
                store.close()
        assert source_digest == target_digest
    finally:
        drop_vault(target)


def test_an_import_of_a_folder_names_the_importer_of_markdown_exports(vault: VaultSpec, tmp_path: Path) -> None:
    write_notes(vault, "pond", "the heron waits")
    exports = tmp_path / "exports"
    exported = kaeru(vault, "export", str(exports / "md0"), "--format", "markdown", KAERU_EXPORT_ROOT=str(exports))
    assert exported.code == 0, exported.stderr
    refused = kaeru(vault, "import", str(exports / "md0"), KAERU_EXPORT_ROOT=str(exports))
    assert refused.code == 2, (refused.stdout, refused.stderr)
    assert "is a folder, and an amg archive is one file" in refused.stderr, refused.stderr
    assert f"kaeru import-from kaeru-md {exports / 'md0'} --initiative NAME" in refused.stderr, refused.stderr
