"""A folder or file named in another encoding than UTF-8 (a Latin-1 `café` copied from an old disk),
where SQLite must open or write a file: said, naming the path with its odd bytes escaped, and
nothing written — never a traceback. SQLite takes file names as UTF-8 only; Python hands such a
name over as text it cannot encode back (`kaeru backup` and every command on such a vault ended in
a `UnicodeEncodeError`; decision 440)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.cli.support import error_object, kaeru, write_notes

LATIN1 = b"caf\xe9"


def _odd(folder: Path, name: bytes = LATIN1) -> Path:
    return Path(os.fsdecode(os.fsencode(folder) + b"/" + name))


def _left(folder: Path) -> list[bytes]:
    return sorted(os.listdir(os.fsencode(folder)))


def test_a_backup_named_or_placed_outside_utf8_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    vault = {"KAERU_VAULT": str(tmp_path / "vault")}
    write_notes(vault, "shore", "one tide")
    folder = _odd(tmp_path)
    os.mkdir(folder)
    for target in (_odd(tmp_path, LATIN1 + b".sqlite3"), folder / "b.sqlite3"):
        human = kaeru(vault, "backup", os.fsencode(target))
        assert human.code == 2, (human.code, human.stderr)
        shown = os.fsencode(target).decode("utf-8", "backslashreplace")
        assert f"{shown} is not named in UTF-8" in human.stderr, human.stderr
        refused = kaeru(vault, "backup", os.fsencode(target), as_json=True)
        assert "SQLite writes only to UTF-8 file names" in error_object(refused, "invalid_argument", 2)
    assert _left(tmp_path) == sorted([b"vault", LATIN1])
    assert _left(folder) == [], "no backup and no hidden scrap"


def test_a_vault_in_a_folder_outside_utf8_is_named_by_every_command(tmp_path: Path) -> None:
    """A vault copied from an old disk into a Latin-1-named folder: each command says why it cannot
    open it; `kaeru doctor` fails its vault check and still runs the others."""
    write_notes({"KAERU_VAULT": str(tmp_path / "vault")}, "shore", "one tide")
    folder = _odd(tmp_path)
    os.rename(tmp_path / "vault", folder)
    said = "the vault folder " + os.fsencode(folder).decode("utf-8", "backslashreplace") + " is not named in UTF-8"
    for args in (("note", "-i", "shore", "two tides"), ("search", "-i", "shore", "tide"), ("serve",)):
        run = kaeru({"KAERU_VAULT": str(folder)}, *args, stdin=b"")
        assert run.code == 1, (args, run.code, run.stderr)
        assert said in run.stderr, run.stderr
    checked = kaeru({"KAERU_VAULT": str(folder)}, "doctor")
    assert checked.code == 1
    assert f"[FAIL] vault: {said}" in checked.stdout, checked.stdout
    assert "[ok  ] http" in checked.stdout  # the other checks ran
    new = _odd(tmp_path, b"new-caf\xe9")
    refused = kaeru({"KAERU_VAULT": str(new)}, "note", "-i", "shore", "one tide")
    assert refused.code == 1 and "is not named in UTF-8" in refused.stderr
    assert _left(tmp_path) == [LATIN1], "no new vault folder made"


def test_a_new_vault_named_outside_utf8_is_refused_by_copy_and_salvage(tmp_path: Path) -> None:
    vault = {"KAERU_VAULT": str(tmp_path / "vault")}
    write_notes(vault, "shore", "one tide")
    target = os.fsencode(_odd(tmp_path))
    copied = kaeru(vault, "copy", "--from", str(tmp_path / "vault"), "--to", target)
    salvaged = kaeru(vault, "salvage", target)
    for run in (copied, salvaged):
        assert run.code == 2, (run.code, run.stderr)
        assert "caf\\xe9 is not named in UTF-8" in run.stderr, run.stderr
    assert _left(tmp_path) == [b"vault"]
