"""`kaeru doctor` on real vaults of both backends: healthy exits 0; each problem — a deleted
full-text row, a migration from a newer kaeru, an unreachable PostgreSQL, an exposed HTTP host
without a token — exits 1 and names itself and its fix; the doctor never changes or creates a vault."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import apsw
import psycopg
import pytest

from tests.backends import VaultSpec
from tests.cli.support import kaeru, kaeru_env, write_notes
from tests.cli.zygote_client import count_served_cpu, server_argv

pytestmark = pytest.mark.timeout(300)


def _sql(vault: VaultSpec, sqlite: str, postgres: str | None = None) -> None:
    """Change the vault behind kaeru's back (what a crash, a bug or a newer kaeru may leave)."""
    if vault.backend == "sqlite":
        conn = apsw.Connection(str(vault.settings().sqlite_path))
        conn.set_busy_timeout(10_000)  # an open store's checkpointer may hold the lock a moment
        conn.execute(sqlite)
        conn.close()
    else:
        assert vault.database_url
        with psycopg.connect(vault.database_url, autocommit=True) as conn:
            conn.execute((postgres or sqlite).encode())


def _scalar(vault: VaultSpec, sql: str) -> Any:
    if vault.backend == "sqlite":
        conn = apsw.Connection(str(vault.settings().sqlite_path))
        value = next(iter(conn.execute(sql)))[0]
        conn.close()
        return value
    assert vault.database_url
    with psycopg.connect(vault.database_url, autocommit=True) as conn:
        row = conn.execute(sql.encode()).fetchone()
        assert row is not None
        return row[0]


def record_future_migration(vault: VaultSpec) -> None:
    """Record migration 999, as a newer kaeru would."""
    _sql(vault, "INSERT INTO schema_migrations (version, name) VALUES (999, 'from_the_future')")


def _doctor(vault: VaultSpec | dict[str, str], **env: str) -> tuple[int, dict[str, dict[str, Any]], str]:
    """Doctor's exit code, its checks by name (from --json), and its human output (both run)."""
    as_json = kaeru(vault, "doctor", as_json=True, **env)
    human = kaeru(vault, "doctor", **env)
    assert human.code == as_json.code, (human.stdout, as_json.stdout)
    report = as_json.json()
    assert report["ok"] is (as_json.code == 0)
    checks = {c["name"]: c for c in report["checks"]}
    assert len(checks) == len(report["checks"])
    for check in report["checks"]:
        assert check["status"] in ("ok", "warn", "fail", "info", "skip")
        assert f"] {check['name']}: {check['summary']}" in human.stdout
        if check["status"] in ("fail", "warn"):
            assert check["fix"] and f"fix: {check['fix']}" in human.stdout
    return as_json.code, checks, human.stdout


def _failed(checks: dict[str, dict[str, Any]]) -> set[str]:
    return {name for name, c in checks.items() if c["status"] == "fail"}


def _populated(vault: VaultSpec) -> list[str]:
    """Three notes in initiative `doc`, written in process: what the doctor is run on, not its subject."""
    return write_notes(
        vault, "doc", "the heron waits by the pond", "a second note about herons", "a third, about the moon"
    )


def test_a_healthy_vault_passes_every_check(vault: VaultSpec) -> None:
    _populated(vault)
    code, checks, human = _doctor(vault)
    assert code == 0 and human.rstrip().endswith("healthy")
    expected = {"vault", "migrations", "schema_objects", "derived", "fulltext", "names", "search", "semantic", "http"}
    expected |= (
        {"integrity", "private", "place", "wal", "writable"}
        if vault.backend == "sqlite"
        else {"connection", "encoding", "clock", "section_counts", "writable"}
    )
    assert set(checks) == expected
    assert all(c["status"] in ("ok", "info") for c in checks.values()), checks
    assert "3 live node(s), 3 full-text row(s)" in checks["fulltext"]["summary"]
    assert "found" in checks["search"]["summary"]
    if vault.backend == "postgres":  # one machine: its clock is the server's (decision 404)
        assert "agrees with the database server" in checks["clock"]["summary"], checks["clock"]


def test_an_empty_vault_is_healthy(vault: VaultSpec) -> None:
    kaeru(vault, "migrate")
    code, checks, _ = _doctor(vault)
    assert code == 0 and "no node yet" in checks["search"]["summary"]


def test_a_deleted_full_text_row_is_found_by_id_and_fixed_by_reindex_text(vault: VaultSpec) -> None:
    ids = _populated(vault)
    victim = ids[0]
    _sql(
        vault,
        f"DELETE FROM nodes_fts WHERE rowid = (SELECT seq FROM nodes WHERE id = '{victim}')",
        f"UPDATE nodes SET tsv = NULL WHERE id = '{victim}'",
    )
    code, checks, human = _doctor(vault)
    assert code == 1 and "unhealthy: " in human
    assert "fulltext" in _failed(checks)
    fulltext = checks["fulltext"]
    assert "1 live node(s) missing from the index" in fulltext["summary"] and victim in fulltext["summary"]
    assert "kaeru reindex --text" in fulltext["fix"]

    assert kaeru(vault, "reindex", "--text").code == 0
    code, checks, _ = _doctor(vault)
    assert code == 0, checks


def test_a_drifted_section_count_is_found_and_fixed_by_reindex_text(vault: VaultSpec) -> None:
    """PostgreSQL keeps `context`'s section sizes as counts (migration 14): one that no longer
    equals its memberships is named with both figures, and `reindex --text` counts them again."""
    if vault.backend != "postgres":
        pytest.skip("the kept section sizes are PostgreSQL's (SQLite counts its memberships each time)")
    _populated(vault)
    _sql(  # one shard's row (each writing connection adds to its own)
        vault,
        "",
        "UPDATE section_counts SET members = members + 5 WHERE (initiative_id, facet, shard) IN "
        "(SELECT initiative_id, facet, shard FROM section_counts LIMIT 1)",
    )
    code, checks, _ = _doctor(vault)
    assert code == 1 and _failed(checks) == {"section_counts"}
    summary = checks["section_counts"]["summary"]
    assert "doc " in summary and "kept 8, counted 3" in summary, summary
    assert "kaeru reindex --text" in checks["section_counts"]["fix"]

    assert kaeru(vault, "reindex", "--text").code == 0
    code, checks, _ = _doctor(vault)
    assert code == 0 and checks["section_counts"]["status"] == "ok", checks


def test_a_full_text_row_of_a_gone_node_is_found(vault: VaultSpec) -> None:
    ids = _populated(vault)
    _sql(
        vault,
        f"UPDATE nodes SET retracted = 1 WHERE id = '{ids[1]}'",
        f"UPDATE nodes SET retracted = TRUE WHERE id = '{ids[1]}'",
    )
    code, checks, _ = _doctor(vault)
    assert code == 1 and "1 index row(s) of no live node" in checks["fulltext"]["summary"]
    assert ids[1] in checks["fulltext"]["summary"]


def test_a_migration_from_a_newer_kaeru_says_upgrade(vault: VaultSpec) -> None:
    _populated(vault)
    record_future_migration(vault)
    code, checks, _ = _doctor(vault)
    assert code == 1 and _failed(checks) == {"migrations"}
    assert "999" in checks["migrations"]["summary"] and "upgrade kaeru" in checks["migrations"]["fix"]
    assert checks["fulltext"]["status"] == checks["search"]["status"] == "skip"


def test_a_pending_migration_is_a_warning_and_the_doctor_does_not_apply_it(vault: VaultSpec) -> None:
    _populated(vault)
    newest = _scalar(vault, "SELECT max(version) FROM schema_migrations")
    _sql(vault, f"DELETE FROM schema_migrations WHERE version = {newest}")
    code, checks, _ = _doctor(vault)
    assert code == 0 and checks["migrations"]["status"] == "warn"
    assert (
        "1 migration(s) pending" in checks["migrations"]["summary"] and "kaeru migrate" in checks["migrations"]["fix"]
    )
    assert _scalar(vault, "SELECT max(version) FROM schema_migrations") == newest - 1  # still pending


@pytest.mark.parametrize("key", ["stem_index_pending", "text_index_pending"])
def test_a_pending_index_rebuild_is_reported_whichever_migration_asked(vault: VaultSpec, key: str) -> None:
    """A migration that changed what is indexed (the stems, or the tokens of unspaced scripts,
    decisions 85–86) leaves a rebuild for the next read-write open; the doctor says so."""
    _populated(vault)
    _sql(vault, f"INSERT INTO meta (key, value) VALUES ('{key}', '1')")
    code, checks, _ = _doctor(vault)
    assert code == 1 and checks["fulltext"]["status"] == "fail"
    assert "a rebuild is pending" in checks["fulltext"]["summary"]


def test_the_doctor_changes_nothing_and_creates_no_vault(sqlite_vault: VaultSpec, tmp_path: Path) -> None:
    _populated(sqlite_vault)
    kaeru(sqlite_vault, "migrate")  # the last process to close checkpoints the WAL into the file
    path = sqlite_vault.settings().sqlite_path
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    assert _doctor(sqlite_vault)[0] == 0
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    wal = path.with_name(path.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0

    nowhere = tmp_path / "nowhere"
    code, checks, _ = _doctor({"KAERU_VAULT": str(nowhere)})
    assert code == 1 and _failed(checks) == {"vault"}
    assert "there is no vault at" in checks["vault"]["summary"] and "never creates" in checks["vault"]["summary"]
    assert not nowhere.exists()


def test_a_vault_file_that_is_no_database_is_named_and_left_as_it_is(tmp_path: Path) -> None:
    settings_env = {"KAERU_VAULT": str(tmp_path / "v")}
    path = VaultSpec("sqlite", tmp_path / "v").settings().sqlite_path
    path.parent.mkdir(parents=True)
    path.write_bytes(b"these are not the pages of a SQLite database " * 200)
    before = path.read_bytes()
    code, checks, _ = _doctor(settings_env)
    assert code == 1 and _failed(checks) == {"vault"}
    assert f"cannot open {path} as a SQLite database" in checks["vault"]["summary"]
    assert path.read_bytes() == before


def test_an_unreachable_postgresql_names_the_url_and_the_fix(tmp_path: Path) -> None:
    # Port 1 on the loopback interface: nothing listens there, so the connection is refused at once.
    url = "postgresql://kaeru:secret@127.0.0.1:1/kaeru"
    code, checks, _ = _doctor({"KAERU_VAULT": str(tmp_path / "v"), "KAERU_DATABASE_URL": url})
    assert code == 1 and _failed(checks) == {"vault"}
    assert "cannot connect to postgresql://kaeru:***@127.0.0.1:1/kaeru" in checks["vault"]["summary"]
    assert "secret" not in checks["vault"]["summary"]
    assert "KAERU_DATABASE_URL" in checks["vault"]["fix"]


def test_a_non_loopback_host_needs_a_token(vault: VaultSpec) -> None:
    _populated(vault)
    code, checks, _ = _doctor(vault, KAERU_HOST="0.0.0.0")
    assert code == 1 and _failed(checks) == {"http"}
    assert "KAERU_HOST=0.0.0.0" in checks["http"]["summary"] and "KAERU_AUTH_TOKEN" in checks["http"]["fix"]
    code, checks, _ = _doctor(vault, KAERU_HOST="0.0.0.0", KAERU_AUTH_TOKEN="a-long-random-token")
    # Authenticated, but in clear text without TLS (decision 180): a warning, not a failure.
    assert code == 0 and checks["http"]["status"] == "warn"


def _serve_refuses(vault: VaultSpec, host: str, log: Path) -> bool:
    """Whether `kaeru serve --http --host HOST` refuses to start for want of a token (else it serves
    on a free port, and is stopped once it says so)."""
    from tests.wire.support import stop, wait_until

    env = kaeru_env(vault)
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            server_argv([sys.executable, "-m", "kaeru", "serve", "--http", "--host", host, "--port", "0"], env),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until(lambda: proc.poll() is not None or "serving MCP" in log.read_text(), 60, "serve to start or refuse")
    finally:
        stop(proc)
        count_served_cpu()
    said = log.read_text()
    assert "Traceback" not in said, said
    return "exposes the vault beyond this machine" in said


def test_a_token_in_the_vault_is_a_token_to_the_doctor_as_to_serve(vault: VaultSpec, tmp_path: Path) -> None:
    """`kaeru token add` makes `serve --http` refuse every request without a token, so it serves a
    non-loopback host; the doctor said FAIL for that host unless KAERU_AUTH_TOKEN was set. Now the
    doctor fails the host exactly when `serve --http` refuses it."""
    _populated(vault)
    for holds_token in (False, True):
        if holds_token:
            assert kaeru(vault, "token", "add", "carol").code == 0
        code, checks, _ = _doctor(vault, KAERU_HOST="0.0.0.0")
        refused = _serve_refuses(vault, "0.0.0.0", tmp_path / f"serve-{holds_token}.log")
        assert refused is not holds_token
        assert (checks["http"]["status"] == "fail") is refused, checks["http"]
        assert code == (1 if refused else 0)
    # Served, but in clear text without TLS (decision 180): a warning, as with KAERU_AUTH_TOKEN.
    assert checks["http"]["status"] == "warn" and "tokens in the vault" in checks["http"]["summary"]


def test_the_semantic_extra_is_informational_unless_asked_for(vault: VaultSpec) -> None:
    from kaeru import semantic

    _populated(vault)
    code, checks, _ = _doctor(vault)
    assert code == 0 and checks["semantic"]["status"] in ("info", "ok")
    if semantic.available():
        pytest.skip("the [semantic] extra is installed here: KAERU_SEMANTIC=1 is usable")
    code, checks, _ = _doctor(vault, KAERU_SEMANTIC="1")
    assert code == 1 and _failed(checks) == {"semantic"}
    assert "pip install 'kaeru-memory[semantic]'" in checks["semantic"]["fix"]


def test_every_problem_at_once_is_named(vault: VaultSpec) -> None:
    ids = _populated(vault)
    _sql(
        vault,
        f"DELETE FROM nodes_fts WHERE rowid = (SELECT seq FROM nodes WHERE id = '{ids[2]}')",
        f"UPDATE nodes SET stv = NULL WHERE id = '{ids[2]}'",
    )
    code, checks, human = _doctor(vault, KAERU_HOST="192.0.2.7")
    assert code == 1 and {"fulltext", "http"} <= _failed(checks)
    assert "unhealthy: " in human and "fulltext" in human.splitlines()[-1] and "http" in human.splitlines()[-1]


def test_settings_kaeru_cannot_use_are_all_named_and_the_vault_still_checked(vault: VaultSpec) -> None:
    """The doctor is where a user goes when kaeru refuses to start: a bad KAERU_HYGIENE made it refuse
    too (a usage error naming only the first bad variable). It names every one, says how to fix it,
    fails, and still checks the vault; every other command still refuses, naming the variable."""
    _populated(vault)
    bad = {"KAERU_HYGIENE": "maybe", "KAERU_REPLAY_DAYS": "0", "KAERU_TIMEZONE": "Mars/Olympus"}
    code, checks, human = _doctor(vault, **bad)
    assert code == 1 and _failed(checks) == {"settings"}
    for name in bad:
        assert name in checks["settings"]["summary"] and name in checks["settings"]["fix"]
    assert "not 'maybe'" in checks["settings"]["summary"]
    assert checks["vault"]["status"] == "ok" and "found" in checks["search"]["summary"]
    assert "Usage:" not in human
    refused = kaeru(vault, "search", "heron", "-i", "doc", KAERU_HYGIENE="maybe")
    assert refused.code == 2 and "KAERU_HYGIENE must be one of" in refused.stderr
    assert "Usage:" not in refused.stderr and "kaeru doctor" in refused.stderr


def test_a_vault_too_damaged_to_read_is_said_not_a_traceback(tmp_path: Path) -> None:
    """Found in review: `PRAGMA quick_check` itself raised on a file with pages overwritten, and the
    doctor — whose subject is exactly such a file — ended in a traceback. So did `kaeru backup`."""
    env = {"KAERU_VAULT": str(tmp_path / "vault")}
    write_notes(env, "doc", *(f"note {i} about herons and the pond at dusk" for i in range(30)))
    with (tmp_path / "vault" / "vault.sqlite3").open("r+b") as damaged:
        damaged.seek(3 * 4096)
        damaged.write(b"\xff" * 6 * 4096)
    code, checks, human = _doctor(env)
    assert code == 1 and "unhealthy: integrity" in human
    assert checks["integrity"]["status"] == "fail" and "damaged" in checks["integrity"]["summary"]
    assert checks["schema"]["status"] == "skip"
    backup = kaeru(env, "backup", str(tmp_path / "copy.sqlite3"))
    assert backup.code == 1 and "damaged" in backup.stderr and not (tmp_path / "copy.sqlite3").exists()


def test_looking_at_a_vault_leaves_its_folder_as_it_was(tmp_path: Path) -> None:
    """The doctor, a tab completion and a backup open the vault without changing it; they left an
    empty `-wal` and a `-shm` beside a vault no server had open (a read-only connection cannot
    remove them), where a clean exit leaves none (issue 16)."""
    folder = tmp_path / "vault"
    env = {"KAERU_VAULT": str(folder)}
    assert kaeru(env, "note", "-i", "doc", "the heron waits by the pond").code == 0
    assert sorted(p.name for p in folder.iterdir()) == ["vault.sqlite3"]
    before = (folder / "vault.sqlite3").read_bytes()
    assert kaeru(env, "doctor").code == 0
    assert kaeru(env, "backup", str(tmp_path / "copy.sqlite3")).code == 0
    completed = kaeru(env, _KAERU_COMPLETE="bash_complete", COMP_WORDS="kaeru context -i d", COMP_CWORD="3")
    assert completed.code == 0, completed.stderr
    assert completed.stdout.split() == ["plain,doc"]
    assert sorted(p.name for p in folder.iterdir()) == ["vault.sqlite3"]
    assert (folder / "vault.sqlite3").read_bytes() == before


def test_a_log_left_by_a_crashed_writer_is_looked_at_not_applied(tmp_path: Path) -> None:
    """Found in review: opened for writing, the doctor (or a tab completion) closed as the last
    connection and copied a crashed writer's `-wal` into the file — permanent when that log was
    left beside another file (a backup copied over a crashed vault). With a log there, it looks
    read-only and leaves both files as they are."""
    folder = tmp_path / "vault"
    env = {"KAERU_VAULT": str(folder)}
    assert kaeru(env, "note", "-i", "doc", "the heron waits by the pond").code == 0
    crash = (
        "import apsw, os, sys\n"
        "c = apsw.Connection(sys.argv[1])\n"
        "c.execute('PRAGMA wal_autocheckpoint = 0')\n"
        "c.execute('CREATE TABLE scratch (x)')\n"
        "c.execute('INSERT INTO scratch VALUES (1)')\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", crash, str(folder / "vault.sqlite3")], check=True, timeout=60)
    log = folder / "vault.sqlite3-wal"
    before = (folder / "vault.sqlite3").read_bytes(), log.read_bytes()
    assert before[1], "the crashed writer left a log"
    assert kaeru(env, "doctor").code == 0
    assert ((folder / "vault.sqlite3").read_bytes(), log.read_bytes()) == before


def test_a_word_thousands_of_nodes_hold_does_not_fail_a_healthy_vault(tmp_path: Path) -> None:
    """Found by a probe of several agents on one vault: the search check looked for the oldest node by
    its first word among the first 5,000 hits; once that word was in more nodes, the oldest ranked
    past them and a healthy vault was called unhealthy, with "reindex, export and import" as its fix."""
    env = {"KAERU_VAULT": str(tmp_path / "vault")}
    write_notes(env, "proj", *(f"deploy step {i} finished" for i in range(5050)))
    code, checks, _ = _doctor(env)
    assert checks["search"]["status"] == "ok", checks["search"]
    assert code == 0
