"""A vault whose `schema_migrations` records a migration under a name of a former numbering still
gets every migration (decision 470).

Main shipped placeholders (`SELECT 1`) at numbers another branch's migration took at its merge, and
migrations under numbers a merge then changed: PostgreSQL 009 `reserved` (cb7b27d … bd1a5db), SQLite
018 `reserved` and 019 `fewer_btrees` (f237d73). The runner compared numbers only, so it took those
records for the migrations shipped at the same numbers, which never ran: `term_docs` missing on
PostgreSQL (every call `internal`), `vector_code_clock` on SQLite (semantic recall `internal`, the
doctor advising to restore a backup). The fixtures `postgres-v010-bd1a5db` and `sqlite-v019-f237d73`
upgrade in tests/upgrade/test_upgrade_fixtures.py; here, a SQLite vault of f237d73 that the
number-only runner had already brought to the newest number, what the doctor says of such vaults,
and a record no kaeru of this history wrote.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw
import psycopg
import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.factory import open_store
from kaeru.storage.migrate import load_migrations
from tests.backends import VaultSpec
from tests.cli.support import kaeru, write_notes
from tests.recall.test_semantic import ConceptEmbedder

DATA = Path(__file__).resolve().parents[1] / "data" / "upgrade"
SQLITE = "kaeru.storage.sqlite.migrations"

pytestmark = pytest.mark.timeout(300)


def _shipped(backend: str) -> list[tuple[int, str]]:
    return [(m.version, m.name) for m in load_migrations(f"kaeru.storage.{backend}.migrations")]


def _rows(vault: VaultSpec, sql: str) -> list[tuple[Any, ...]]:
    if vault.backend == "sqlite":
        conn = apsw.Connection(str(vault.settings().sqlite_path))
        conn.set_busy_timeout(10_000)
        try:
            return [tuple(r) for r in conn.execute(sql)]
        finally:
            conn.close()
    assert vault.database_url
    with psycopg.connect(vault.database_url, autocommit=True) as pg:
        return [tuple(r) for r in pg.execute(sql.encode()).fetchall()]


def _sql(vault: VaultSpec, statement: str) -> None:
    """Change the vault behind kaeru's back."""
    if vault.backend == "sqlite":
        _rows(vault, statement)
        return
    assert vault.database_url
    with psycopg.connect(vault.database_url, autocommit=True) as pg:
        pg.execute(statement.encode())


def _records(vault: VaultSpec) -> list[tuple[int, str]]:
    return [(int(v), str(n)) for v, n in _rows(vault, "SELECT version, name FROM schema_migrations ORDER BY version")]


def _doctor(vault: VaultSpec) -> tuple[int, dict[str, dict[str, Any]]]:
    done = kaeru(vault, "doctor", as_json=True)
    return done.code, {c["name"]: c for c in done.json()["checks"]}


def _sqlite_objects(vault: VaultSpec) -> set[str]:
    return {str(r[0]) for r in _rows(vault, "SELECT name FROM sqlite_schema")}


@pytest.fixture
def f237d73(tmp_path: Path) -> VaultSpec:
    """A copy of the SQLite vault main's f237d73 wrote (records `18 reserved`, `19 fewer_btrees`)."""
    spec = VaultSpec("sqlite", tmp_path / "f237d73")
    spec.vault_dir.mkdir()
    fixture = DATA / "sqlite-v019-f237d73" / "vault.sqlite3.gz"
    spec.settings().sqlite_path.write_bytes(gzip.decompress(fixture.read_bytes()))
    return spec


def _migrate_by_number_only(vault: VaultSpec) -> None:
    """What the runner before decision 470 did to the vault: every shipped migration whose NUMBER is
    unrecorded, applied and recorded (020-022 here; 019_vector_code_clock, whose number the vault's
    `19 fewer_btrees` holds, never)."""
    conn = apsw.Connection(str(vault.settings().sqlite_path))
    try:
        done = {int(r[0]) for r in conn.execute("SELECT version FROM schema_migrations")}
        conn.execute("BEGIN IMMEDIATE")
        for migration in load_migrations(SQLITE):
            if migration.version not in done:
                migration.apply(conn, lambda sql: list(conn.execute(sql)))
                conn.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES (?, ?)", (migration.version, migration.name)
                )
        conn.execute(f"PRAGMA user_version = {load_migrations(SQLITE)[-1].version}")
        conn.execute("COMMIT")
    finally:
        conn.close()


def test_a_sqlite_vault_of_f237d73_the_old_runner_already_migrated_gets_its_missing_migration(
    f237d73: VaultSpec,
) -> None:
    _migrate_by_number_only(f237d73)
    newest = _shipped("sqlite")[-1][0]
    assert _rows(f237d73, "SELECT max(version), count(*) FROM schema_migrations") == [(newest, newest)]
    assert "vector_code_clock" not in _sqlite_objects(f237d73)
    # The doctor says what is missing as a pending migration, not as a loss to restore from a backup.
    code, checks = _doctor(f237d73)
    migrations = checks["migrations"]
    assert migrations["status"] == "warn" and "next: 19" in migrations["summary"], migrations
    assert "018 'reserved'" in migrations["summary"] and "019 'fewer_btrees'" in migrations["summary"]
    assert "kaeru migrate" in migrations["fix"]
    assert checks["search"]["status"] == "skip" and "kaeru migrate" in checks["search"]["summary"]
    assert "schema_objects" not in checks and code == 0, checks
    # `kaeru migrate` applies it, and says so.
    done = kaeru(f237d73, "migrate", as_json=True)
    assert done.code == 0, done.stdout + done.stderr
    assert done.json()["migrations"] == {"applied": newest, "applied_now": 1, "newest": newest, "known": newest}
    assert _records(f237d73) == _shipped("sqlite")
    objects = _sqlite_objects(f237d73)
    assert {"vector_code_clock", "vector_codes_version", "vector_codes_inserted", "vector_codes_moved"} <= objects
    code, checks = _doctor(f237d73)
    assert code == 0 and {c["status"] for c in checks.values()} <= {"ok", "info", "skip"}, checks
    assert checks["migrations"]["status"] == checks["schema_objects"]["status"] == checks["search"]["status"] == "ok"


def test_semantic_recall_answers_once_a_server_opens_such_a_vault(f237d73: VaultSpec) -> None:
    """`kaeru serve` opens a vault it must upgrade on a thread of its own: the check at open notices
    the missing migration though the vault's newest number is the newest shipped."""
    _migrate_by_number_only(f237d73)
    store = open_store(f237d73.settings(), upgrade_in_background=True)
    try:
        run = build_server(Service(store, f237d73.settings(), embedder=ConceptEmbedder())).registry.run
        noted = run("note", {"initiative": "harbour", "text": "we rented an automobile in Porto"})
        assert noted["state"] == "applied", noted
        found = run("recall", {"initiatives": ["harbour"], "query": "which car did we drive"})
        assert found["state"] == "ok", found
        assert noted["data"]["primary"]["id"] in [h["id"] for h in found["data"]["hits"]]
    finally:
        store.close()
    assert _records(f237d73) == _shipped("sqlite")


@pytest.fixture
def bd1a5db(tmp_path: Path) -> Iterator[VaultSpec]:
    """A database holding the PostgreSQL vault main's bd1a5db wrote (records `9 reserved`)."""
    from tests.pg import blank_database, drop_database

    url = blank_database()
    try:
        with psycopg.connect(url, autocommit=True) as pg:
            pg.execute((DATA / "postgres-v010-bd1a5db" / "postgres.sql").read_bytes())
        yield VaultSpec("postgres", tmp_path / "bd1a5db", url)
    finally:
        drop_database(url)


def test_the_doctor_skips_the_search_of_a_postgres_vault_that_awaits_a_migration(bd1a5db: VaultSpec) -> None:
    """This kaeru's search reads `term_docs`, which migration 009 makes: on the vault before it, the
    search failed `internal` and the doctor called the vault unhealthy, advising a reindex that fails
    the same way."""
    code, checks = _doctor(bd1a5db)
    assert checks["migrations"]["status"] == "warn" and "next: 9" in checks["migrations"]["summary"], checks
    assert "009 'reserved'" in checks["migrations"]["summary"]
    search = checks["search"]
    assert search["status"] == "skip" and "migration 9" in search["summary"], search
    assert "kaeru migrate" in search["summary"] and code == 0, checks
    done = kaeru(bd1a5db, "migrate")
    assert done.code == 0, done.stdout + done.stderr
    assert _records(bd1a5db) == _shipped("postgres")
    code, checks = _doctor(bd1a5db)
    assert code == 0 and checks["search"]["status"] == "ok", checks
    found = kaeru(bd1a5db, "search", "ferry", "-i", "harbour", as_json=True)
    assert found.code == 0 and found.json()["data"]["hits"], found.stdout + found.stderr


def test_a_record_no_kaeru_of_this_history_wrote_is_refused_and_nothing_runs_over_it(vault: VaultSpec) -> None:
    """A migration this kaeru ships at a number the vault records under another, unknown name could
    run over a schema it was not written for: the vault is refused, with the record named."""
    write_notes(vault, "doc", "the heron waits by the weir")
    shipped = _shipped(vault.backend)
    newest, (number, _) = shipped[-1][0], shipped[-3]
    statements = [
        f"UPDATE schema_migrations SET name = 'from_another_branch' WHERE version = {number}",
        f"DELETE FROM schema_migrations WHERE version = {newest}",  # pending: must not run either
    ]
    for statement in statements:
        _sql(vault, statement)
    before = _records(vault)
    refused = kaeru(vault, "migrate")
    said = refused.stdout + refused.stderr
    assert refused.code != 0, said
    assert f"{number:03d} 'from_another_branch'" in said and "another branch" in said, said
    assert "export" in said, said
    assert _records(vault) == before
    code, checks = _doctor(vault)
    migrations = checks["migrations"]
    assert code == 1 and migrations["status"] == "fail", migrations
    assert f"{number:03d} 'from_another_branch'" in migrations["summary"] and "export" in migrations["fix"]
