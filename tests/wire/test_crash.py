"""Crash safety (issue 15): `kill -9` a server during concurrent writes — alone, or one of three
sharing a vault while the others keep writing — on SQLite and PostgreSQL. After a restart every
acknowledged write is present once, nothing is applied twice, re-sending a call answers `replayed`
with the same node, and the SQLite file passes `PRAGMA integrity_check`.

The harness is `bench.crash` (its long mode runs many rounds); here a few rounds keep CI short.
The kill comes after a seeded random number of acknowledged writes, never after a sleep.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from bench.crash import Round, check, endpoint, note_args, run_round

from tests.backends import VaultSpec
from tests.wire.support import subprocess_env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

WRITERS = 6
AFTER_KILL = 8


def _sqlite_file(vault: VaultSpec) -> Path | None:
    return vault.vault_dir / "vault.sqlite3" if vault.backend == "sqlite" else None


def _assert_survived(result: Round, vault: VaultSpec) -> None:
    assert result.kills == 1
    assert result.acknowledged, "no write was acknowledged before the kill"
    assert not result.problems, result.problems[:3]
    assert not result.lost, f"acknowledged writes lost: {result.lost[:5]}"
    assert not result.duplicates, f"applied twice: {result.duplicates[:5]}"
    assert not result.strays, f"stored but never sent: {result.strays[:5]}"
    assert not result.replay_failures, result.replay_failures[:5]
    assert not result.index_mismatches, f"text index disagrees with the nodes: {result.index_mismatches[:5]}"
    assert len(set(result.acknowledged.values())) == len(result.acknowledged), "one node per request_id"
    assert 0 <= result.unanswered_present <= len(result.unanswered)
    if vault.backend == "sqlite":
        assert result.integrity == "ok"
    else:
        assert result.integrity is None


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_kill_9_the_only_server_loses_no_acknowledged_write(vault: VaultSpec, transport: str, tmp_path: Path) -> None:
    result = run_round(
        subprocess_env(vault.env()),
        tmp_path,
        seed=1501 if transport == "stdio" else 1502,
        servers=1,
        writers=WRITERS,
        transport=transport,
        sqlite_file=_sqlite_file(vault),
        label=f"solo-{transport}",
    )
    _assert_survived(result, vault)
    assert result.writes_after_kill == 0


def test_kill_9_one_of_three_servers_sharing_a_vault(vault: VaultSpec, tmp_path: Path) -> None:
    # SQLite: three stdio servers on one file (each agent spawns its own); PostgreSQL: three HTTP
    # servers on one database (a team's deployment). The other two keep writing after the kill.
    transport = "stdio" if vault.backend == "sqlite" else "http"
    result = run_round(
        subprocess_env(vault.env()),
        tmp_path,
        seed=1503,
        servers=3,
        writers=WRITERS,
        transport=transport,
        writes_after_kill=AFTER_KILL,
        sqlite_file=_sqlite_file(vault),
        label=f"shared-{transport}",
    )
    _assert_survived(result, vault)
    victim_writers = WRITERS // 3  # writer i uses server i % 3; one server's writers stop at the kill
    assert result.writes_after_kill == (WRITERS - victim_writers) * AFTER_KILL, "the survivors kept writing"


def test_the_checks_catch_a_lost_and_a_doubled_write(vault: VaultSpec, tmp_path: Path) -> None:
    """The harness is not blind: an acknowledgement with no stored note is reported lost, one call
    stored twice is reported doubled, and its replay check fails for the lost one."""
    with endpoint("stdio", subprocess_env(vault.env()), tmp_path) as server:
        first = server.call("note", note_args("twice"))
        server.call("note", {**note_args("twice"), "request_id": "twice-again"})  # the same note, stored again
        seen = Round(acknowledged={"twice": first["data"]["primary"]["id"], "ghost": "no-such-node"})
        check(server, seen)
    assert seen.lost == ["ghost"]
    assert seen.duplicates == ["twice"]
    assert [failure.split(":")[0] for failure in seen.replay_failures] == ["ghost"]
    assert seen.strays == []
    assert seen.index_mismatches == []
