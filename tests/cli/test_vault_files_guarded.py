"""A command never writes over a vault's database, nor reads another file as the vault (decision 448).

Found by a terminal user's probe: `kaeru export VAULT/vault.sqlite3` wrote an archive over the live
vault (exit 0; it no longer opened, nor salvaged); `kaeru backup OTHER/vault.sqlite3` replaced a
vault a server had open (its memory gone) or one a killed server left with its `-wal` (malformed);
`kaeru copy --from bk/monday.sqlite3` copied `bk/vault.sqlite3` — another vault — with a verified
digest, and `--to bk3/mine.sqlite3` made `bk3/vault.sqlite3` without a word; `kaeru import` of a
backup said "'utf-8' codec can't decode byte", and a failed import left an empty vault behind.
SQLite only: these are a SQLite vault's files."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from kaeru.config import Settings
from kaeru.storage.factory import open_store
from tests.cli.support import kaeru, write_notes


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _finds(folder: Path, word: str) -> bool:
    run = kaeru({"KAERU_VAULT": str(folder)}, "search", word, "-i", "doc", as_json=True)
    return run.code == 0 and len(run.json()["data"]["hits"]) == 1


def test_an_export_over_the_vaults_own_files_is_refused_and_the_vault_stays(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {"KAERU_VAULT": str(home)}
    write_notes(env, "doc", "the heron waits by the weir")
    before = _digest(home / "vault.sqlite3")
    for name in ("vault.sqlite3", "vault.sqlite3-wal", "vault.sqlite3-shm", "vault.sqlite3-journal"):
        run = kaeru(env, "export", str(home / name))
        assert run.code == 2, (name, run.stdout, run.stderr)
        assert str(home / name) in run.stderr and "nothing was written" in run.stderr, run.stderr
        assert "vault's own" in run.stderr, run.stderr
    assert _digest(home / "vault.sqlite3") == before
    assert not (home / "vault.sqlite3-journal").exists()
    assert _finds(home, "heron")
    # Beside the vault, an archive of another name is written; so is the MCP tool's, in exports/.
    assert kaeru(env, "export", str(home / "notes.amg")).code == 0
    tool = kaeru(env, "call", "archive", "-a", "action=export", "-a", "path=a.amg", as_json=True)
    assert tool.code == 0 and (home / "exports" / "a.amg").is_file(), tool.stdout


def test_a_backup_or_export_over_a_database_in_use_is_refused(tmp_path: Path) -> None:
    mine, other = {"KAERU_VAULT": str(tmp_path / "v1")}, tmp_path / "q1"
    write_notes(mine, "doc", "the kestrel hovers")
    write_notes({"KAERU_VAULT": str(other)}, "doc", "the otter dives")
    settings = Settings.from_env({"KAERU_VAULT": str(other)})
    served = open_store(settings)  # as a running server holds it: its -wal and -shm beside it
    try:
        with served.read() as session:
            assert session.all_initiatives()
        assert (other / "vault.sqlite3-shm").exists()
        for command in ("backup", "export"):
            run = kaeru(mine, command, str(other / "vault.sqlite3"))
            assert run.code == 2, (command, run.stdout, run.stderr)
            assert str(other / "vault.sqlite3") in run.stderr and "in use" in run.stderr, run.stderr
    finally:
        served.close()
    assert _finds(other, "otter") and not _finds(other, "kestrel")
    # A journal a killed writer left says the same.
    (other / "vault.sqlite3-journal").write_bytes(b"")
    run = kaeru(mine, "backup", str(other / "vault.sqlite3"))
    assert run.code == 2 and "vault.sqlite3-journal is beside it" in run.stderr, run.stderr
    (other / "vault.sqlite3-journal").unlink()
    assert _finds(other, "otter")
    # A plain earlier backup of the same name is replaced, as decision 181 promises (rotation).
    monday = tmp_path / "bk" / "monday.sqlite3"
    assert kaeru(mine, "backup", str(monday)).code == 0
    again = kaeru(mine, "backup", str(monday))
    assert again.code == 0, again.stderr
    # An archive never goes over a database, even one closed.
    run = kaeru(mine, "export", str(monday))
    assert run.code == 2 and "is a SQLite database" in run.stderr, run.stderr


def test_a_copy_reads_and_writes_vault_folders_not_other_files(tmp_path: Path) -> None:
    mine = tmp_path / "v1"
    write_notes({"KAERU_VAULT": str(mine)}, "doc", "the kestrel hovers")
    bk = tmp_path / "bk"
    write_notes({"KAERU_VAULT": str(bk)}, "doc", "the otter dives")  # another vault beside the backup
    assert kaeru({"KAERU_VAULT": str(mine)}, "backup", str(bk / "monday.sqlite3")).code == 0

    run = kaeru({}, "copy", "--from", str(bk / "monday.sqlite3"), "--to", str(tmp_path / "p7"))
    assert run.code == 2, (run.stdout, run.stderr)
    assert str(bk / "monday.sqlite3") in run.stderr and "README: Back up and restore" in run.stderr, run.stderr
    assert not (tmp_path / "p7").exists()

    run = kaeru({}, "copy", "--from", str(mine), "--to", str(tmp_path / "bk3" / "mine.sqlite3"))
    assert run.code == 2 and "name a folder with --to" in run.stderr, run.stderr
    assert not (tmp_path / "bk3").exists()

    # A vault's own file names its folder, as before.
    done = kaeru({}, "copy", "--from", str(mine / "vault.sqlite3"), "--to", str(tmp_path / "p8" / "vault.sqlite3"))
    assert done.code == 0, done.stderr
    assert _finds(tmp_path / "p8", "kestrel")


def test_a_failed_import_creates_no_vault_and_a_backup_is_named_as_one(tmp_path: Path) -> None:
    mine = {"KAERU_VAULT": str(tmp_path / "v1")}
    write_notes(mine, "doc", "the kestrel hovers")
    backup = tmp_path / "b.sqlite3"
    assert kaeru(mine, "backup", str(backup)).code == 0
    archive = tmp_path / "a.amg"
    assert kaeru(mine, "export", str(archive)).code == 0
    fresh = {"KAERU_VAULT": str(tmp_path / "new")}

    run = kaeru(fresh, "import", str(backup))
    assert run.code == 2 and "is a SQLite vault file" in run.stderr and "vault.sqlite3" in run.stderr, run.stderr
    assert "codec" not in run.stderr
    assert kaeru(fresh, "import", str(tmp_path / "missing.amg")).code == 2
    assert kaeru(fresh, "import", "-", stdin=archive.read_bytes()[:300]).code == 2
    assert not (tmp_path / "new").exists(), "a failed import made a vault"

    assert kaeru(fresh, "import", str(archive)).code == 0
    assert _finds(tmp_path / "new", "kestrel")


def test_an_export_to_a_named_pipe_or_over_a_databases_log_name(tmp_path: Path) -> None:
    """Found in review: telling a database apart opened the target to read, and opening a FIFO to
    read waits for a writer — an export to a named pipe hung; and a markdown export (a folder)
    named as a closed vault's `-wal` made that vault unopenable."""
    home = tmp_path / "home"
    env = {"KAERU_VAULT": str(home)}
    write_notes(env, "doc", "the heron waits by the weir")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert kaeru(env, "export", str(fifo)).code == 0
    other = tmp_path / "other"
    write_notes({"KAERU_VAULT": str(other)}, "doc", "the egret stands in the reeds")
    run = kaeru(env, "export", "--format", "markdown", str(other / "vault.sqlite3-wal"))
    assert run.code == 2 and "-wal file of the SQLite database beside it" in run.stderr, run.stderr
    assert _finds(other, "egret")
