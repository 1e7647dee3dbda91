"""`kaeru backup FILE` (decision 181): a copy of a SQLite vault made while it is written is a whole
vault as it was at one moment — every write before it, none after, nothing torn — that opens as a
vault once put in a folder; what cannot be backed up this way is refused without creating anything."""

from __future__ import annotations

import shutil
import stat
import threading
from pathlib import Path

import pytest

from kaeru.api.requests import parse
from kaeru.config import Settings
from kaeru.service import Service
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec
from tests.cli.support import kaeru

pytestmark = pytest.mark.timeout(180)


def _restored(backup: Path, folder: Path) -> dict[str, str]:
    """The backup put in a folder as its vault file; the environment that opens it."""
    folder.mkdir()
    shutil.copyfile(backup, folder / "vault.sqlite3")
    return {"KAERU_VAULT": str(folder)}


def _held(env: dict[str, str]) -> tuple[int, list[int]]:
    """How many notes the restored vault holds, and which of the writes `0..total` it holds."""
    settings = Settings.from_env(env)
    store = open_store(settings)
    try:
        service = Service(store, settings)

        def hits(text: str) -> int:
            return service.search(parse("search", {"text": text, "initiatives": ["shore"]})).total

        total = hits("weir")
        return total, [i for i in range(total + 1) if hits(f"tide{i:04d}") == 1]
    finally:
        store.close()


def test_a_backup_made_while_the_vault_is_written_is_that_vault_at_one_moment(tmp_path: Path) -> None:
    env = {"KAERU_VAULT": str(tmp_path / "vault")}
    settings = Settings.from_env(env)
    store = open_store(settings)
    service = Service(store, settings)
    written: list[int] = []
    failures: list[BaseException] = []
    stop = threading.Event()

    def writer() -> None:
        try:
            while not stop.is_set() and len(written) < 5000:
                i = len(written)
                service.note(parse("note", {"initiative": "shore", "text": f"tide{i:04d} at the weir"}))
                written.append(i)
                stop.wait(0.002)
        except BaseException as exc:  # reported by the test
            failures.append(exc)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        backups = []
        for n in range(3):
            while len(written) < 20 * (n + 1) and thread.is_alive():
                stop.wait(0.01)
            target = tmp_path / "backups" / f"b{n}.sqlite3"
            run = kaeru(env, "backup", str(target), as_json=True)
            assert run.code == 0, run.stderr
            assert run.json()["path"] == str(target)
            backups.append((target, run.json()["live_nodes"], len(written)))
            assert thread.is_alive()  # the vault was being written all along
    finally:
        stop.set()
        thread.join(60)
        store.close()
    assert not failures, failures  # the writer never waited out or failed
    assert backups[0][1] < backups[1][1] < backups[2][1] < len(written)

    for n, (target, live, written_by_then) in enumerate(backups):
        assert stat.S_IMODE(target.stat().st_mode) == 0o600
        restored = _restored(target, tmp_path / f"restored-{n}")
        total, held = _held(restored)
        # One moment: a prefix of the writes, each whole and found, as many as the backup said.
        assert held == list(range(total))
        assert total == live and 20 * (n + 1) <= live <= written_by_then
        doctor = kaeru(restored, "doctor", as_json=True)
        assert doctor.code == 0, doctor.stdout
    assert not list((tmp_path / "backups").glob(".*"))  # no hidden scraps


def test_what_cannot_be_backed_up_is_refused_and_nothing_is_created(vault: VaultSpec, tmp_path: Path) -> None:
    target = tmp_path / "out" / "copy.sqlite3"
    if vault.backend == "postgres":
        refused = kaeru(vault, "backup", str(target))
        assert refused.code == 2 and "pg_dump" in refused.stderr
        assert not target.parent.exists()
        return
    missing = kaeru(vault, "backup", str(target))
    assert missing.code == 2 and "there is no vault" in missing.stderr
    assert not vault.vault_dir.exists() and not target.parent.exists()  # neither vault nor folder made
    assert kaeru(vault, "note", "--initiative", "shore", "one tide").code == 0
    folder = kaeru(vault, "backup", str(tmp_path))
    assert folder.code == 2 and "is a folder" in folder.stderr
    # The vault file, or its live -wal or -shm (found in review: replaced, they corrupted the vault).
    for name in ("vault.sqlite3", "vault.sqlite3-wal", "vault.sqlite3-shm", "backup.sqlite3"):
        beside = kaeru(vault, "backup", str(vault.vault_dir / name))
        assert beside.code == 2 and "the vault's own folder" in beside.stderr, name
    assert kaeru(vault, "doctor").code == 0
