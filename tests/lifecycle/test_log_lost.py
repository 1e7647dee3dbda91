"""A vault's `-shm` (or `-wal`) deleted under a running server (SQLite; `storage/sqlite/held.py`).

People delete `-wal` and `-shm`, taking them for scraps. SQLite's index of the log lives in the
`-shm`: the server goes on with the deleted one, the next process makes a new one and takes itself for
the vault's first user, and the two wrote one log through two indexes that did not see each other's
locks. A probe (a stdio server writing, the `-shm` deleted, then two CLI commands) ended in a file
that failed `quick_check` and 20 of 669 acknowledged notes lost. Now the server that held the old
index refuses to read or write, saying what happened and what to do, and never checkpoints through
it; the other processes go on through the new one.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import apsw
import pytest

from kaeru.config import Settings
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.factory import open_store
from tests.cli.support import kaeru

pytestmark = pytest.mark.timeout(300)


def _served(env: dict[str, str]) -> tuple[Any, Any]:
    settings = Settings.from_env(env)
    store = open_store(settings)
    return store, build_server(Service(store, settings)).registry.run


def _refused_for_the_lost_log(answer: dict[str, Any], lost: Path) -> None:
    assert answer["state"] == "rejected", answer
    issue = answer["issues"][0]
    assert issue["code"] == "unavailable" and issue["retryable"] is False, issue
    assert str(lost) in issue["message"] and "Stop every kaeru server on this vault" in issue["message"], issue


def _found(run: Any, word: str) -> int:
    answer = run("search", {"initiatives": ["shore"], "text": word})
    assert answer["state"] == "ok", answer
    return len(answer["data"]["hits"])


@pytest.mark.parametrize("deleted", [("-shm",), ("-wal", "-shm")])
def test_a_server_whose_shm_was_deleted_refuses_and_no_acknowledged_write_is_lost(
    tmp_path: Path, deleted: tuple[str, ...]
) -> None:
    env = {"KAERU_VAULT": str(tmp_path / "vault")}
    vault_file = Settings.from_env(env).sqlite_path
    store, run = _served(env)
    acknowledged: list[str] = []
    try:
        for i in range(20):
            assert run("note", {"initiative": "shore", "text": f"heron{i} at the weir"})["state"] == "applied"
            acknowledged.append(f"heron{i}")
        if deleted == ("-wal", "-shm"):
            store.close()  # a cleanly idle vault: its log emptied, as an idle server's is
            store, run = _served(env)
        for end in deleted:
            os.unlink(vault_file.with_name(vault_file.name + end))
        lost = vault_file.with_name(vault_file.name + "-shm")
        # The probe's sequences: one command after the deletion left the file whole, two did not.
        for k, commands in enumerate((("doctor", "note"), ("note", "search"), ("note", "note"))):
            for command in commands:
                if command == "note":
                    done = kaeru(env, "note", "-i", "shore", f"egret{k}{len(acknowledged)} on the bank", as_json=True)
                    assert done.code == 0 and done.json()["state"] == "applied", done.stderr
                    acknowledged.append(f"egret{k}{len(acknowledged)}")
                elif command == "search":
                    found = kaeru(env, "search", acknowledged[-1], "-i", "shore", as_json=True)
                    assert found.code == 0 and found.json()["data"]["total"] >= 1, found.stdout
                else:
                    assert kaeru(env, "doctor").code == 0
            _refused_for_the_lost_log(run("note", {"initiative": "shore", "text": f"kite{k} overhead"}), lost)
            _refused_for_the_lost_log(run("search", {"initiatives": ["shore"], "text": "heron"}), lost)
    finally:
        store.close()

    check = apsw.Connection(str(vault_file))
    try:
        assert list(check.execute("PRAGMA quick_check")) == [("ok",)]
    finally:
        check.close()
    store, run = _served(env)  # restarted: every acknowledged note is there, once, and writes go on
    try:
        assert [w for w in acknowledged if _found(run, w) != 1] == []
        assert run("note", {"initiative": "shore", "text": "kite after the restart"})["state"] == "applied"
    finally:
        store.close()
    assert kaeru(env, "doctor").code == 0


def test_a_server_whose_wal_was_deleted_refuses_to_write_into_a_file_no_one_else_sees(tmp_path: Path) -> None:
    """A write into a deleted `-wal` reaches no other process, and a new process's log and this one's
    would share one index: refused like a lost `-shm`."""
    env = {"KAERU_VAULT": str(tmp_path / "vault")}
    vault_file = Settings.from_env(env).sqlite_path
    store, run = _served(env)
    try:
        assert run("note", {"initiative": "shore", "text": "heron at the weir"})["state"] == "applied"
        store.close()  # idle: the log emptied into the file
        store, run = _served(env)
        lost = vault_file.with_name(vault_file.name + "-wal")
        os.unlink(lost)
        _refused_for_the_lost_log(run("note", {"initiative": "shore", "text": "kite overhead"}), lost)
        done = kaeru(env, "note", "-i", "shore", "egret on the bank", as_json=True)
        assert done.code == 0 and done.json()["state"] == "applied", done.stderr
    finally:
        store.close()
    store, run = _served(env)
    try:
        assert (_found(run, "heron"), _found(run, "egret"), _found(run, "kite")) == (1, 1, 0)
    finally:
        store.close()
