"""Where `kaeru export` and `kaeru import` cannot write or read, said so a person can act on it, with
nothing left behind (decisions 166, 422).

- A path under a file is the caller's to change: `kaeru export notes.txt/x.amg` answered "File
  exists" (and `notes.txt/sub/x.amg` "Not a directory"), naming neither the file nor why — the CLI
  exports to a root that is the blocking file itself, which the search for it never looked at.
- A place the account cannot write or read is the machine's refusal, `unavailable`, exit 1: an
  import from a folder it cannot enter ended in a `PermissionError` traceback (an MCP client got
  `internal`), and an archive it cannot read was "not a readable amg archive", exit 2.
- `kaeru export - | head -c 10`: the reader going away is no failure (decision 170).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec
from tests.cli.support import file_modes_bind, kaeru, kaeru_env, write_notes
from tests.cli.zygote_client import TIMEOUT_S

pytestmark = pytest.mark.timeout(300)


def _left(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_an_export_under_a_file_names_the_file_and_writes_nothing(vault: VaultSpec, tmp_path: Path) -> None:
    write_notes(vault, "shore", "one tide")
    plain = tmp_path / "notes.txt"
    plain.write_text("a file, not a folder")
    places = [
        ("amg", plain / "x.amg"),
        ("amg", plain / "x.amg.gz"),
        ("amg", plain / "deeper" / "x.amg"),
        ("markdown", plain / "pages"),
        ("markdown", plain / "deeper" / "pages"),
    ]
    for fmt, target in places:
        human = kaeru(vault.env(), "export", "--format", fmt, str(target))
        assert human.code == 2, (fmt, target, human.code, human.stderr)
        assert "invalid_argument [path]" in human.stderr
        assert f"{plain} is a file, so it cannot hold a folder or file inside it; nothing was written" in human.stderr
        assert "File exists" not in human.stderr and "Not a directory" not in human.stderr, human.stderr
    refused = kaeru(vault.env(), "export", str(plain / "x.amg"), as_json=True)
    assert refused.code == 2
    [issue] = refused.json()["issues"]
    assert (issue["code"], issue["field"]) == ("invalid_argument", "path")
    assert f"{plain} is a file" in issue["message"]
    markdown_on_it = kaeru(vault.env(), "export", "--format", "markdown", str(plain))
    assert markdown_on_it.code == 2
    assert "'notes.txt' is a file, and a markdown export writes a folder there" in markdown_on_it.stderr
    assert plain.read_text() == "a file, not a folder"
    assert [p for p in _left(tmp_path) if not p.startswith("vault")] == ["notes.txt"]


def test_an_import_under_a_file_says_the_file_is_in_the_way(vault: VaultSpec, tmp_path: Path) -> None:
    plain = tmp_path / "notes.txt"
    plain.write_text("")
    for source in (plain / "x.amg", plain / "deeper" / "x.amg"):
        run = kaeru(vault.env(), "import", str(source))
        assert run.code == 2, run.stderr
        assert f"no archive at {source}: {plain} is a file, not a folder" in run.stderr
    nowhere = kaeru(vault.env(), "import", str(tmp_path / "missing" / "x.amg"))
    assert nowhere.code == 2 and nowhere.stderr.strip().endswith(f"no archive at {tmp_path / 'missing' / 'x.amg'}")


def test_the_archive_tool_names_an_export_root_under_a_file(vault: VaultSpec, tmp_path: Path) -> None:
    """The MCP tool's export root is the server's: a file in the way of it is named, not "Not a
    directory" (a blocker inside the root is named by its path there: tests/export/test_archive.py)."""
    plain = tmp_path / "notes.txt"
    plain.write_text("")
    settings = vault.settings(export_root=plain / "exports")
    store = open_store(settings)
    try:
        run = build_server(Service(store, settings)).registry.run
        assert run("note", {"initiative": "shore", "text": "one tide"})["state"] == "applied"
        for fmt in ("amg", "markdown"):
            refused = run("archive", {"action": "export", "format": fmt, "path": "x"})
            [issue] = refused["issues"]
            assert (refused["state"], issue["code"], issue["field"]) == ("rejected", "invalid_argument", "path")
            assert f"{plain} is a file, so it cannot hold" in issue["message"], issue
    finally:
        store.close()
    assert plain.read_text() == ""


def test_a_folder_the_account_cannot_write_or_read_is_unavailable(sqlite_vault: VaultSpec, tmp_path: Path) -> None:
    """File modes, not the vault's backend, are the subject: one backend (each run under `setpriv` is
    a process started anew)."""
    vault = sqlite_vault
    write_notes(vault, "shore", "one tide")
    prefix = file_modes_bind()
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    locked.chmod(0o555)
    pages = locked / "pages"
    run = kaeru(vault.env(), "export", "--format", "markdown", str(pages), prefix=prefix)
    assert run.code == 1, (run.code, run.stderr)
    assert f"unavailable: cannot export to '{pages}': Permission denied; nothing was written" in run.stderr
    refused = kaeru(vault.env(), "export", str(locked / "x.amg"), prefix=prefix, as_json=True)
    [issue] = refused.json()["issues"]
    assert (refused.code, issue["code"], issue["retryable"]) == (1, "unavailable", True)
    assert f"cannot export to '{locked / 'x.amg'}': Permission denied; nothing was written" in issue["message"]
    assert _left(locked) == []

    shut = tmp_path / "shut"
    shut.mkdir()
    archive = shut / "x.amg"
    assert kaeru(vault.env(), "export", str(archive)).code == 0
    archive.chmod(0o000)
    unreadable = kaeru(vault.env(), "import", str(archive), prefix=prefix)
    assert unreadable.code == 1, unreadable.stderr
    assert f"unavailable: cannot read the archive '{archive}': Permission denied; nothing was imported" in (
        unreadable.stderr
    )
    archive.chmod(0o600)
    shut.chmod(0o000)  # the folder cannot be entered: `is_file` raised, a traceback
    try:
        unentered = kaeru(vault.env(), "import", str(archive), prefix=prefix, as_json=True)
    finally:
        shut.chmod(0o755)
    [issue] = unentered.json()["issues"]
    assert (unentered.code, issue["code"]) == (1, "unavailable"), unentered.stdout
    assert f"cannot read the archive '{archive}': Permission denied" in issue["message"]


def test_an_export_to_standard_output_whose_reader_goes_away_ends_quietly(
    sqlite_vault: VaultSpec, tmp_path: Path
) -> None:
    """`kaeru export - | head -c 10`: the reader takes what it wants and goes; the export stops at its
    next write, saying nothing, exit 0 (decision 170), as with `--json` (whose envelope would go to
    stderr). Before: "unavailable: cannot write the archive to standard output: Broken pipe", exit 1.
    The pipe, not the backend, is the subject: one backend (each run is a process started anew)."""
    vault = sqlite_vault
    filler = " ".join(f"word{i}" for i in range(5000))
    write_notes(vault, "shore", *(f"note {n}: {filler}" for n in range(8)))
    whole = tmp_path / "whole.amg"
    assert kaeru(vault.env(), "export", str(whole)).code == 0
    assert whole.stat().st_size > 4 * 65536, "more than a pipe holds: the export is still writing when it closes"
    for flags in ([], ["--json"]):
        with subprocess.Popen(
            [sys.executable, "-m", "kaeru", *flags, "export", "-"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=kaeru_env(vault),
        ) as proc:
            assert proc.stdout is not None and proc.stderr is not None
            head = os.read(proc.stdout.fileno(), 10)
            proc.stdout.close()
            stderr = proc.stderr.read().decode()
            code = proc.wait(timeout=TIMEOUT_S)
        assert head and head == whole.read_bytes()[: len(head)]
        assert (code, stderr) == (0, ""), (flags, code, stderr)


def test_an_export_and_a_backup_take_the_longest_name_the_file_system_takes(
    sqlite_vault: VaultSpec, tmp_path: Path
) -> None:
    """A legal file name of 244 bytes (ext4 takes 255) was refused "File name too long": the hidden
    `.partial` name the export is written under first is ~26 bytes longer (decision 426)."""
    write_notes(sqlite_vault, "shore", "one tide")
    amg = tmp_path / ("é" * 118 + "x.amg")  # 236 + 5 bytes: a multi-byte name, cut on a character's edge
    backup = tmp_path / ("b" * 244 + ".sqlite3")
    assert len(amg.name.encode()) == 241 and len(backup.name.encode()) == 252
    exported = kaeru(sqlite_vault.env(), "export", str(amg))
    assert exported.code == 0, exported.stderr
    backed = kaeru(sqlite_vault.env(), "backup", str(backup))
    assert backed.code == 0, backed.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("vault")) == sorted(
        [amg.name, backup.name]
    ), "nothing hidden is left beside them"
    imported = kaeru(sqlite_vault.env(), "import", str(amg), as_json=True)
    assert imported.code == 0, imported.stderr
