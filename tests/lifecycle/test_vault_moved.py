"""The vault file removed or replaced under a running server (SQLite).

SQLite goes on writing to a file it holds open after the file is deleted — someone removes the
vault folder to start again while an agent's server still runs — or after another file is put in
its place (a backup copied or synced in as a new file). Before, every write was acknowledged and
then lost when the server exited; now the write is refused, saying why, and nothing is lost.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from kaeru.config import Settings
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.factory import open_store


def _served(vault: Path) -> tuple[Any, Any]:
    settings = Settings.from_env({}, vault_dir=vault)
    store = open_store(settings)
    return store, build_server(Service(store, settings)).registry.run


def test_a_write_after_the_vault_folder_was_removed_is_refused(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    store, run = _served(vault)
    try:
        assert run("note", {"initiative": "moved", "text": "the heron waits"})["state"] == "applied"
        shutil.rmtree(vault)
        refused = run("note", {"initiative": "moved", "text": "the egret leaves", "request_id": "after-rm"})
        assert refused["state"] == "rejected", refused
        issue = refused["issues"][0]
        assert issue["code"] == "unavailable" and issue["retryable"] is True, issue
        assert "removed or replaced while this server ran" in issue["message"] and str(vault) in issue["message"]
        # Reads still answer from the file the server holds; nothing comes back to life at the path.
        assert run("search", {"initiatives": ["moved"], "text": "heron"})["state"] == "ok"
        assert not vault.exists()
    finally:
        store.close()
    store, run = _served(vault)  # a restart opens a new vault there, and the refused call applies
    try:
        again = run("note", {"initiative": "moved", "text": "the egret leaves", "request_id": "after-rm"})
        assert again["state"] == "applied" and again["replayed"] is False
    finally:
        store.close()


def test_a_write_after_another_file_took_the_vaults_place_is_refused(tmp_path: Path) -> None:
    vault, other = tmp_path / "vault", tmp_path / "other"
    store, run = _served(other)
    run("note", {"initiative": "moved", "text": "written in the other vault"})
    store.close()
    store, run = _served(vault)
    try:
        assert run("note", {"initiative": "moved", "text": "the heron waits"})["state"] == "applied"
        os.replace(other / "vault.sqlite3", vault / "vault.sqlite3")  # "restored from a copy"
        refused = run("note", {"initiative": "moved", "text": "the egret leaves"})
        assert refused["state"] == "rejected" and refused["issues"][0]["code"] == "unavailable", refused
    finally:
        store.close()
    store, run = _served(vault)  # the file now there is the one a restart reads and writes
    try:
        assert run("search", {"initiatives": ["moved"], "text": "other"})["data"]["hits"]
        assert run("note", {"initiative": "moved", "text": "the egret leaves"})["state"] == "applied"
    finally:
        store.close()
