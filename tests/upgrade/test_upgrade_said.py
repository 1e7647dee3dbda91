"""An upgrade of a large vault takes a while (the backfill of decision 493 took 90 s at a million
edge revisions on PostgreSQL), and what met it said nothing meanwhile: `kaeru migrate` printed one
line and then nothing until it was done, `kaeru serve --http` printed nothing and refused connections
until its banner, a command that waited for another process's upgrade waited in silence. Now a long
backfill says how far it got, the server says it upgrades the vault before it listens, and a command
that waits says once what for, all on stderr (stdout stays the command's one document, or the
protocol). A `kaeru migrate` that waited for another's upgrade said "2 migration(s) applied now" of
the migrations the other applied; and `kaeru doctor` said them pending while they were being applied.

`kaeru migrate` whose backfill is long runs in this process (click's runner), so that the interval
between its lines can be made short; the other commands are processes of their own, running this
checkout's code (the environment's PYTHONPATH is theirs)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner

from kaeru.cli.app import cli
from kaeru.storage import link_actors
from kaeru.storage.factory import open_store
from kaeru.storage.postgres.store import _MIGRATION_LOCK
from tests.backends import VaultSpec
from tests.cli.support import kaeru, kaeru_env
from tests.lifecycle.older_vault import migration_lock, older_vault
from tests.upgrade.old_vaults import BEFORE, copied_fixture
from tests.wire.support import STARTUP_SECONDS, http_server, subprocess_env, wait_until

SRC = Path(link_actors.__file__).parent  # src/kaeru/storage
#: The newest migration of each backend, and how many the fixture vaults (`old_vaults.BEFORE`) lack.
NEWEST = {
    backend: max(int(p.name[:3]) for p in (SRC / backend / "migrations").iterdir() if p.name[:3].isdigit())
    for backend in ("sqlite", "postgres")
}
PENDING = {backend: NEWEST[backend] - int(BEFORE[backend].name.split("-v")[1][:3]) for backend in NEWEST}

#: What a command that waits for another process's upgrade says, once.
WAITING = (
    "an upgrade of a kaeru vault in this database is under way (another process holds the migration lock): "
    "waiting for it to finish"
)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_migrate_says_how_far_a_long_backfill_got(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every revision read is "long" after no time at all: a line for each.
    monkeypatch.setattr(link_actors, "PROGRESS_S", 0.0, raising=False)
    with copied_fixture(backend, tmp_path) as spec:
        env = {"KAERU_VAULT": str(spec.vault_dir), "KAERU_DATABASE_URL": spec.database_url}
        done = CliRunner().invoke(cli, ["migrate"], obj={"open_store": open_store}, env=env)
    assert done.exit_code == 0, done.output
    lines = done.stderr.splitlines()
    assert lines[0].startswith("upgrading the vault (migrating it from schema"), done.stderr
    progress = [line for line in lines if "edge revisions read" in line]
    assert len(progress) == 15, done.stderr  # the fixture's links of the old code: 15 revisions
    assert progress[0].startswith("  naming who made each older link change from the audit log: 1 of 15 ")
    assert progress[-1].startswith("  naming who made each older link change from the audit log: 15 of 15 ")
    assert lines[-1].startswith("  named who made 15 of 15 edge revisions (in "), done.stderr
    assert f"migrated: {PENDING[backend]} migration(s) applied now" in done.stdout, done.stdout


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_serve_over_http_says_it_upgrades_the_vault_before_it_listens(backend: str, tmp_path: Path) -> None:
    with copied_fixture(backend, tmp_path) as spec, http_server(subprocess_env(spec.env()), tmp_path) as server:
        said = server.output()
    upgrading = said.find("upgrading the vault (migrating it from schema")
    assert upgrading >= 0, said
    assert upgrading < said.index("serving MCP over streamable HTTP"), said


def test_serve_on_stdio_says_it_upgrades_the_vault_beside_serving(vault: VaultSpec, tmp_path: Path) -> None:
    older_vault(vault)  # its text index due a rebuild
    log = tmp_path / "stderr.log"
    with log.open("wb") as err:
        done = subprocess.run(
            [sys.executable, "-m", "kaeru", "serve"],
            input=b"",  # no client: the server ends with its stdin
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=subprocess_env(vault.env()),
            timeout=STARTUP_SECONDS,
            check=False,
        )
    said = log.read_text()
    assert done.returncode == 0, said
    assert "upgrading the vault (rebuilding its text index) beside serving" in said, said


def _waiting_for_the_lock(url: str, count: int) -> bool:
    """Whether `count` sessions wait for an advisory lock on the database at `url`."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        ).fetchone()
    return row is not None and row[0] == count


def _started(spec: VaultSpec, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "kaeru", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=kaeru_env(spec),
    )


@pytest.mark.parametrize("backend", ["postgres"])
def test_a_command_that_waits_for_another_process_upgrade_says_so_once(vault: VaultSpec) -> None:
    older_vault(vault)
    assert vault.database_url is not None
    with migration_lock(vault):  # another process upgrading the vault
        search = _started(vault, "search", "-i", "upgrade", "kingfisher")
        try:
            wait_until(lambda: _waiting_for_the_lock(str(vault.database_url), 1), STARTUP_SECONDS, "search waiting")
        except BaseException:
            search.kill()
            raise
    out, err = search.communicate(timeout=STARTUP_SECONDS)
    assert search.returncode == 0, err
    assert "the-kingfisher-nests-by-the" in out, out
    assert err.count(WAITING) == 1, err


def test_of_two_migrates_one_says_it_applied_the_migrations_and_the_other_that_it_waited(tmp_path: Path) -> None:
    with copied_fixture("postgres", tmp_path) as spec:
        assert spec.database_url is not None
        with psycopg.connect(spec.database_url, autocommit=True) as held:
            held.execute("SELECT pg_advisory_lock(%s)", (_MIGRATION_LOCK,))  # until both wait for it
            runs = [_started(spec, "migrate"), _started(spec, "migrate")]
            try:
                wait_until(lambda: _waiting_for_the_lock(str(spec.database_url), 2), STARTUP_SECONDS, "both waiting")
            except BaseException:
                for run in runs:
                    run.kill()
                raise
            held.execute("SELECT pg_advisory_unlock(%s)", (_MIGRATION_LOCK,))
        said = [run.communicate(timeout=STARTUP_SECONDS) for run in runs]
        assert [run.returncode for run in runs] == [0, 0], said
        done = sorted(out.strip() for out, _ in said)
        # One applied both; the other found them applied once it had the lock, and says by whom.
        pending, newest = PENDING["postgres"], NEWEST["postgres"]
        assert done == [
            f"postgres vault already current ({pending} applied meanwhile by another kaeru process, which this "
            f"one waited for), newest {newest} of {newest}",
            f"postgres vault migrated: {pending} migration(s) applied now, newest {newest} of {newest}",
        ], said
        assert all(WAITING in err for _, err in said), said


def test_doctor_says_an_upgrade_is_under_way_while_another_process_holds_the_migration_lock(tmp_path: Path) -> None:
    with copied_fixture("postgres", tmp_path) as spec:
        with migration_lock(spec):
            done = kaeru(spec, "doctor", as_json=True)
        after = kaeru(spec, "doctor", as_json=True)
    checks = {c["name"]: c for c in done.json()["checks"]}
    migrations = checks["migrations"]
    assert migrations["status"] == "warn", migrations
    assert f"{PENDING['postgres']} migration(s) pending" in migrations["summary"], migrations
    assert "an upgrade of a kaeru vault in this database is under way" in migrations["summary"], migrations
    assert "wait for it to finish, then run `kaeru migrate`" in migrations["fix"], migrations
    # Nobody holds the lock: pending, and `kaeru migrate` applies them, as before.
    again = {c["name"]: c for c in after.json()["checks"]}["migrations"]
    assert "under way" not in again["summary"] and "wait for it" not in again["fix"], again
    assert "kaeru migrate" in again["fix"], again
