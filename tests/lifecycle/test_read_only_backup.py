"""A `kaeru backup` copy read where its user cannot write: a read-only file (`chmod 444`), a read-only
folder (`chmod 555`; a read-only disk is the same to SQLite).

A probe: the backup is a rollback-journal file, and opening it switched it to WAL, which writes —
`search`, `export` and `call initiatives` failed "cannot open the vault: the vault file cannot be
written" while the doctor said reads answer. A file that cannot be written is now read as it is;
its writes are refused as a read-only vault's are. Root ignores file modes, so as root the commands
run without the capabilities that override them (`file_modes_bind`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.support import file_modes_bind, kaeru, write_notes

pytestmark = pytest.mark.timeout(300)


@pytest.mark.parametrize("locked", ["file", "folder"])
def test_a_backup_reads_from_a_read_only_file_or_folder(tmp_path: Path, locked: str) -> None:
    prefix = file_modes_bind()
    write_notes({"KAERU_VAULT": str(tmp_path / "v1")}, "ro", "the avocet sweeps the shallows")
    backup = tmp_path / "b.sqlite3"
    assert kaeru({"KAERU_VAULT": str(tmp_path / "v1")}, "backup", str(backup)).code == 0
    folder = tmp_path / "restored"
    folder.mkdir()
    (folder / "vault.sqlite3").write_bytes(backup.read_bytes())
    (folder / "vault.sqlite3").chmod(0o444) if locked == "file" else folder.chmod(0o555)
    env = {"KAERU_VAULT": str(folder)}
    try:
        found = kaeru(env, "search", "avocet", "-i", "ro", as_json=True, prefix=prefix)
        assert found.code == 0 and found.json()["data"]["total"] == 1, found.stderr
        listed = kaeru(env, "call", "initiatives", "{}", as_json=True, prefix=prefix)
        assert listed.code == 0 and listed.json()["state"] == "ok", listed.stderr
        archive = tmp_path / "out.amg"
        assert kaeru(env, "export", str(archive), prefix=prefix).code == 0
        refused = kaeru(env, "note", "-i", "ro", "a second avocet", as_json=True, prefix=prefix)
        assert refused.code == 1 and "cannot be written" in refused.json()["issues"][0]["message"]
        assert sorted(p.name for p in folder.iterdir()) == ["vault.sqlite3"]  # read as it is
        assert (folder / "vault.sqlite3").read_bytes() == backup.read_bytes()
    finally:
        folder.chmod(0o755)
