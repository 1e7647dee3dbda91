"""Refusals a script can rely on: an empty `--vault`, a search of initiatives that are all unknown,
a backup or export path that names a folder or standard output, and a call refused before the vault
is opened (a mistyped `--vault` is not left holding an empty vault)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.backends import VaultSpec
from tests.cli.support import error_object, kaeru, valid_envelope, write_notes

pytestmark = pytest.mark.timeout(300)


def test_an_empty_vault_flag_is_refused(tmp_path: Path) -> None:
    """`--vault "$VAULT"` with VAULT unset wrote into the default vault (exit 0)."""
    home = tmp_path / "home"
    home.mkdir()
    run = kaeru({"HOME": str(home)}, "--vault", "", "note", "-i", "p", "meant for a project vault")
    assert run.code == 2 and "--vault" in run.stderr and "is empty" in run.stderr, run.stderr
    assert not list(home.rglob("vault.sqlite3"))
    # An empty KAERU_VAULT is unset, as every empty KAERU_* is: the default vault.
    assert kaeru({"HOME": str(home), "KAERU_VAULT": ""}, "note", "-i", "p", "into the default").code == 0


def test_a_search_of_only_unknown_initiatives_exits_2(vault: VaultSpec) -> None:
    """Nothing is searched when every name is unknown: exit 2, where it exited 0 as "no hits". The
    envelope is still the tool's `ok` with a warning per name (decision 20)."""
    write_notes(vault, "webshop", "the cache is Redis")
    for command in ("search", "recall"):
        typo = kaeru(vault, command, "-i", "webshp", "cache")
        assert typo.code == 2 and "did you mean 'webshop'?" in typo.stderr, (command, typo.stderr)
        typed = kaeru(vault, command, "-i", "webshp", "-i", "nope", "cache", as_json=True)
        assert typed.code == 2 and valid_envelope(typed, command, "read", "ok")["issues"][1]["code"] == (
            "unknown_initiative"
        )
        mixed = kaeru(vault, command, "-i", "webshp", "-i", "webshop", "cache")
        assert mixed.code == 0 and "Redis" in mixed.stdout, (command, mixed.stderr)


def test_backup_and_export_refuse_a_folder_path_and_backup_refuses_standard_output(
    vault: VaultSpec, tmp_path: Path
) -> None:
    """`backup DIR/` and `export DIR/` wrote a file named DIR; `backup -` a file named `-`."""
    write_notes(vault, "p", "hello")
    if vault.backend == "sqlite":
        folder = kaeru(vault, "backup", f"{tmp_path}/backups/", as_json=True)
        assert "names a folder" in error_object(folder, "invalid_argument", 2)
        dash = kaeru(vault, "backup", "-", as_json=True)
        assert "standard output" in error_object(dash, "invalid_argument", 2)
        assert not (tmp_path / "backups").exists() and not Path("-").exists()
    export = kaeru(vault, "export", f"{tmp_path}/exports/", as_json=True)
    assert export.code == 2
    issue = valid_envelope(export, "archive", "mutation", "rejected")["issues"][0]
    assert issue["field"] == "path" and "names a folder" in issue["message"]
    assert not (tmp_path / "exports").exists()
    markdown = kaeru(vault, "export", "--format", "markdown", f"{tmp_path}/md/")  # a folder, as it should be
    assert markdown.code == 0 and (tmp_path / "md").is_dir(), markdown.stderr


def test_a_refused_call_or_note_creates_no_vault(tmp_path: Path) -> None:
    """The tool's name and arguments are checked before the vault is opened (and created)."""
    typo = {"KAERU_VAULT": str(tmp_path / "typo")}
    unknown = kaeru(typo, "call", "nosuchtool")
    assert unknown.code == 2 and "no tool named 'nosuchtool'" in unknown.stderr
    missing = kaeru(typo, "call", "note", "-a", "initiative=web", as_json=True)
    assert missing.code == 2
    assert valid_envelope(missing, "note", "mutation", "rejected")["issues"][0]["code"] == "invalid_argument"
    empty = kaeru(typo, "note", "-i", "web", "")
    assert empty.code == 2 and "invalid_argument [text]" in empty.stderr
    assert not (tmp_path / "typo").exists()
    # The call that passes still creates the vault, as a first note always has.
    assert kaeru(typo, "call", "note", "-a", "initiative=web", "-a", "text=hello").code == 0
    assert (tmp_path / "typo" / "vault.sqlite3").exists()


def test_a_copy_onto_its_own_source_is_refused_as_such(tmp_path: Path) -> None:
    """It said "the target vault is not empty (use --force to merge into it)"."""
    vault = {"KAERU_VAULT": str(tmp_path / "v")}
    write_notes(vault, "p", "hello")
    for target in (str(tmp_path / "v"), f"{tmp_path}/v/vault.sqlite3", f"sqlite://{tmp_path}/v/"):
        same = kaeru(vault, "copy", "--from", str(tmp_path / "v"), "--to", target, as_json=True)
        assert "source and target are the same vault" in error_object(same, "invalid_argument", 2), target
