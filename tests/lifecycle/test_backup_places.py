"""Where `kaeru backup` cannot write, said so a person can act on it, with nothing left behind: a
target under a file names that file (it said "File exists", of a backup that did not exist, and
exit 1 as if the machine had failed); a folder the account cannot write is named with the system's
reason; a vault file that holds no kaeru schema yet (an empty file) has nothing to back up."""

from __future__ import annotations

from pathlib import Path

from tests.cli.support import error_object, file_modes_bind, kaeru, write_notes


def _left(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_backup_under_a_file_names_the_file_and_writes_nothing(tmp_path: Path) -> None:
    vault = {"KAERU_VAULT": str(tmp_path / "vault")}
    write_notes(vault, "shore", "one tide")
    (tmp_path / "notes.txt").write_text("a file, not a folder")
    for target in (tmp_path / "notes.txt" / "b.sqlite3", tmp_path / "notes.txt" / "deeper" / "b.sqlite3"):
        human = kaeru(vault, "backup", str(target))
        assert human.code == 2, (human.code, human.stderr)
        assert f"{tmp_path / 'notes.txt'} is a file, not a folder" in human.stderr, human.stderr
        assert "File exists" not in human.stderr and "Not a directory" not in human.stderr
        refused = kaeru(vault, "backup", str(target), as_json=True)
        assert "is a file, not a folder" in error_object(refused, "invalid_argument", 2)
    assert (tmp_path / "notes.txt").read_text() == "a file, not a folder"
    assert _left(tmp_path) == ["notes.txt", "vault"]


def test_a_folder_the_account_cannot_write_is_said_and_left_empty(tmp_path: Path) -> None:
    vault = {"KAERU_VAULT": str(tmp_path / "vault")}
    write_notes(vault, "shore", "one tide")
    (tmp_path / "vault").chmod(0o755)  # the process below runs without the capabilities of root
    (tmp_path / "vault" / "vault.sqlite3").chmod(0o644)
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    tmp_path.chmod(0o755)
    run = kaeru(vault, "backup", str(locked / "b.sqlite3"), prefix=file_modes_bind())
    assert run.code == 1, (run.code, run.stderr)
    assert f"cannot write the backup {locked / 'b.sqlite3'}: Permission denied; nothing was written" in run.stderr
    assert _left(locked) == []


def test_a_vault_file_without_a_schema_has_nothing_to_back_up(tmp_path: Path) -> None:
    (tmp_path / "vault").mkdir()
    (tmp_path / "vault" / "vault.sqlite3").write_bytes(b"")
    out = tmp_path / "out"
    out.mkdir()
    run = kaeru({"KAERU_VAULT": str(tmp_path / "vault")}, "backup", str(out / "b.sqlite3"), as_json=True)
    assert "holds no kaeru schema yet" in error_object(run, "invalid_argument", 2)
    assert _left(out) == [], "no backup and no hidden scrap"
    assert (tmp_path / "vault" / "vault.sqlite3").read_bytes() == b""
