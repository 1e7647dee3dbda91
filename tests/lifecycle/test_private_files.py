"""What kaeru makes on disk is its owner's alone (decision 177): a new vault's folder and files, an
export, and a client configuration it rewrites keep other accounts on the machine out, whatever the
umask; what the user made before keeps the mode they chose; `kaeru doctor` says when a vault is
readable by others."""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from kaeru.api.requests import parse
from kaeru.config import Settings
from kaeru.service import Service
from kaeru.storage.factory import open_store
from tests.cli.support import kaeru

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX file modes")

#: The most open umask a user can have: every mode bit a file is made with survives it.
OPEN_UMASK = ["sh", "-c", 'umask 000 && exec "$@"', "sh"]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_vault_is_its_owners_alone_whatever_the_umask(tmp_path: Path) -> None:
    folder = tmp_path / "deep" / "vault"
    run = kaeru(
        {"KAERU_VAULT": str(folder)},
        "note",
        "--initiative",
        "web",
        "the staging key rotates monthly",
        prefix=OPEN_UMASK,
    )
    assert run.code == 0, run.stderr
    assert mode(folder) == 0o700
    assert mode(folder / "vault.sqlite3") == 0o600


def test_the_write_ahead_log_and_shared_memory_files_are_private_too(tmp_path: Path) -> None:
    previous = os.umask(0)
    try:
        settings = Settings(vault_dir=tmp_path / "vault")
        store = open_store(settings)
        try:
            Service(store, settings).note(parse("note", {"initiative": "web", "text": "a private thought"}))
            beside = [settings.vault_dir / f"vault.sqlite3{end}" for end in ("-wal", "-shm")]
            assert all(p.exists() for p in beside)
            assert [mode(p) for p in beside] == [0o600, 0o600]
        finally:
            store.close()
    finally:
        os.umask(previous)


def test_a_folder_the_user_made_keeps_its_mode(tmp_path: Path) -> None:
    folder = tmp_path / "shared-vault"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    assert kaeru({"KAERU_VAULT": str(folder)}, "note", "--initiative", "web", "x").code == 0
    assert mode(folder) == 0o755
    assert mode(folder / "vault.sqlite3") == 0o600


def test_exports_are_private_and_a_replaced_export_keeps_the_mode_it_had(tmp_path: Path) -> None:
    env = {"KAERU_VAULT": str(tmp_path / "vault")}
    assert kaeru(env, "note", "--initiative", "web", "an exported decision").code == 0
    archive, pages = tmp_path / "out" / "all.amg", tmp_path / "out" / "pages"
    assert kaeru(env, "export", str(archive), prefix=OPEN_UMASK).code == 0
    assert kaeru(env, "export", "--format", "markdown", str(pages), prefix=OPEN_UMASK).code == 0
    assert mode(archive) == 0o600
    assert mode(pages) == 0o700
    written = [p for p in pages.rglob("*") if p.is_file()]
    assert written and {mode(p) for p in written} == {0o600}
    os.chmod(archive, 0o644)  # the user shares this one on purpose
    assert kaeru(env, "export", str(archive), prefix=OPEN_UMASK).code == 0
    assert mode(archive) == 0o644


def test_setup_write_keeps_a_private_client_configuration_private(tmp_path: Path) -> None:
    config = tmp_path / ".cursor" / "mcp.json"
    config.parent.mkdir()
    config.write_text(json.dumps({"mcpServers": {"other": {"command": "x", "env": {"API_KEY": "sk-123"}}}}))
    os.chmod(config, 0o600)
    run = kaeru(
        {"KAERU_VAULT": str(tmp_path / "vault")},
        "setup",
        "cursor",
        "--write",
        HOME=str(tmp_path),
        XDG_CONFIG_HOME=str(tmp_path / ".config"),
        prefix=OPEN_UMASK,
    )
    assert run.code == 0, run.stderr
    assert "kaeru" in json.loads(config.read_text())["mcpServers"]
    assert mode(config) == 0o600
    (saved,) = config.parent.glob("mcp.json.bak-*")
    assert mode(saved) == 0o600 and "sk-123" in saved.read_text()
    assert sorted(p.name for p in config.parent.iterdir()) == ["mcp.json", saved.name]  # no scraps
    fresh = tmp_path / "project" / ".mcp.json"  # a new file: its owner's alone too
    made = kaeru(
        {"KAERU_VAULT": str(tmp_path / "vault")},
        "setup",
        "claude-code",
        "--write",
        "--path",
        str(fresh),
        prefix=OPEN_UMASK,
    )
    assert made.code == 0, made.stderr
    assert mode(fresh) == 0o600


@pytest.fixture
def reachable() -> Iterator[Path]:
    """A folder every account may enter (pytest's own temporary folders are the owner's only, which
    would keep the vault private whatever its files' modes)."""
    made = Path(tempfile.mkdtemp(prefix="kaeru-reachable-"))
    os.chmod(made, 0o755)
    for place in made.parents:
        if not mode(place) & stat.S_IXOTH:
            shutil.rmtree(made)
            pytest.skip(f"{place} keeps other accounts out (mode {mode(place):04o})")
    yield made
    shutil.rmtree(made)


def test_doctor_warns_when_other_accounts_can_read_the_vault(reachable: Path) -> None:
    folder = reachable / "vault"
    env = {"KAERU_VAULT": str(folder)}
    assert kaeru(env, "note", "--initiative", "web", "x").code == 0

    def private_check() -> dict[str, str]:
        run = kaeru(env, "doctor", as_json=True)
        checks = {c["name"]: c for c in run.json()["checks"]}
        return checks["private"]

    assert private_check()["status"] == "ok"
    os.chmod(folder, 0o755)
    assert private_check()["status"] == "ok"  # names visible, contents not
    os.chmod(folder / "vault.sqlite3", 0o644)
    found = private_check()
    assert found["status"] == "warn"
    assert "vault.sqlite3 0644" in found["summary"]
    assert found["fix"].startswith(f"chmod 700 {folder} && chmod 600 {folder / 'vault.sqlite3'}*")
    os.chmod(folder, 0o700)  # the folder alone keeps them out
    assert private_check()["status"] == "ok"
