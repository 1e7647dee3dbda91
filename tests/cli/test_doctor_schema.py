"""`kaeru doctor` checks that a vault still holds what its migrations made, and looks under the
timeouts a call runs under (decision 446).

A table, index or unique constraint dropped since the migrations ran (an "unused index" advisor's
suggestion, a hand's slip) passed the doctor and `kaeru migrate`, then every `note` failed on the
missing `audit` table, or a lost constraint let two writers make one initiative twice. A role's own
`statement_timeout` failed the doctor's look while every call passed: the store sets its own
timeouts on each connection, the doctor did not. Both run on both backends where they exist."""

from __future__ import annotations

import gzip
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest

from kaeru.storage.factory import open_health
from kaeru.storage.schema_objects import INDEXES, NAMED, REQUIRED
from tests.backends import VaultSpec, postgres_admin_url
from tests.cli.support import kaeru, write_notes
from tests.cli.test_doctor import _sql
from tests.cli.test_doctor_damage import _doctor

pytestmark = pytest.mark.timeout(300)

UPGRADES = Path(__file__).resolve().parents[1] / "data" / "upgrade"


def _admin() -> str:
    admin = postgres_admin_url()
    if admin is None:
        pytest.skip("PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset (make test starts one)")
    return admin


@pytest.fixture
def damageable(backend: str, tmp_path: Path) -> Iterator[VaultSpec]:
    """A vault whose schema the test may damage: on PostgreSQL a database of its own, dropped after
    (the suite's recycled ones are reset by their rows, not their schema)."""
    if backend == "sqlite":
        yield VaultSpec("sqlite", tmp_path / "vault")
        return
    from tests.pg import blank_database, drop_database

    _admin()
    url = blank_database()
    try:
        yield VaultSpec("postgres", tmp_path / "vault", url)
    finally:
        drop_database(url)


def _database_default(vault: VaultSpec, setting: str, value: str) -> None:
    """`ALTER DATABASE … SET`: what a session on the vault's database starts with, as a role's
    setting (`ALTER ROLE … SET`) would be, on this test's database only."""
    assert vault.database_url
    name = vault.database_url.rsplit("/", 1)[-1]
    with psycopg.connect(_admin(), autocommit=True) as admin:
        admin.execute(f"ALTER DATABASE \"{name}\" SET {setting} = '{value}'".encode())


# ------------------------------------------------------------------------------------------------
# What the migrations make (F7).
# ------------------------------------------------------------------------------------------------


def test_the_list_is_what_the_migrations_make(vault: VaultSpec) -> None:
    """`storage.schema_objects` against a freshly migrated vault's catalog: a migration that makes
    or drops an object changes the list, or the doctor fails a healthy vault (or misses a loss)."""
    write_notes(vault, "doc", "the heron waits by the weir")
    health = open_health(vault.settings())
    try:
        found, indexes = health.schema_objects()
    finally:
        health.close()
    made = {name: " ".join(statement.split()) for name, statement in indexes.items()}
    assert (found, made) == (REQUIRED[vault.backend], INDEXES[vault.backend]), (
        f"the {vault.backend} schema changed: in src/kaeru/storage/schema_objects.py, REQUIRED[{vault.backend!r}] = "
        f"frozenset({sorted(found)!r}) and INDEXES[{vault.backend!r}] = {dict(sorted(made.items()))!r}"
    )


def test_the_indexes_statements_name_are_listed() -> None:
    """SQLite's `INDEXED BY` makes a missing index an error, not a slower plan: those indexes fail
    the check (`NAMED`), and this list is read from the statements' text."""
    source = Path(__file__).resolve().parents[2] / "src" / "kaeru"
    named = {m for path in source.rglob("*.py") for m in re.findall(r"INDEXED BY (\w+)", path.read_text())}
    assert named == NAMED["sqlite"] and not NAMED["postgres"]
    assert named <= set(INDEXES["sqlite"])


def test_a_dropped_table_constraint_and_index_fail_the_doctor_named_with_the_fix(damageable: VaultSpec) -> None:
    """The probe's damage: the audit table, the constraint that keeps initiative names unique (a
    unique index on SQLite, where a constraint cannot be dropped), a full-text index. The doctor
    said healthy, and every `note` then failed."""
    vault = damageable
    write_notes(vault, "doc", "the heron waits by the weir")
    _sql(vault, "DROP TABLE audit", "DROP TABLE audit")
    if vault.backend == "sqlite":
        _sql(vault, "DROP INDEX node_vectors_node")
        _sql(vault, "DROP INDEX nodes_created")
    else:
        _sql(vault, "ALTER TABLE initiatives DROP CONSTRAINT initiatives_name_key")
        _sql(vault, "DROP INDEX nodes_tsv")
    code, checks, human = _doctor(vault)
    assert code == 1 and "unhealthy: schema_objects" in human, human
    objects = checks["schema_objects"]
    assert objects["status"] == "fail", objects
    lost = ["table audit", *(["index node_vectors_node", "index nodes_created"] if vault.backend == "sqlite" else [])]
    lost += ["unique initiatives(name)", "index nodes_tsv"] if vault.backend == "postgres" else []
    for item in lost:
        assert item in objects["summary"], objects
    assert "audit_initiative" not in objects["summary"]  # the lost table's index is said as the table
    fix = objects["fix"]
    assert ("a `kaeru backup` copy" if vault.backend == "sqlite" else "restore the database from a backup") in fix
    assert "salvage" not in fix  # salvage copies the file's own schema: the table would still be missing
    assert "KAERU_DATABASE_URL (host" not in fix
    # The checks that read other tables still run, and pass.
    assert checks["fulltext"]["status"] == checks["search"]["status"] == "ok", checks
    refused = kaeru(vault, "note", "-i", "doc", "a second note")
    assert refused.code != 0 and "audit" in refused.stdout + refused.stderr


def test_a_dropped_unique_guarantee_alone_fails_with_the_fix_that_makes_it_again(damageable: VaultSpec) -> None:
    """Every call still answers, but two writers can now make one initiative (or one vector) twice."""
    vault = damageable
    write_notes(vault, "doc", "the heron waits by the weir")
    if vault.backend == "sqlite":
        _sql(vault, "DROP INDEX node_vectors_node")
    else:
        _sql(vault, "ALTER TABLE initiatives DROP CONSTRAINT initiatives_name_key")
    code, checks, _ = _doctor(vault)
    objects = checks["schema_objects"]
    assert code == 1 and objects["status"] == "fail", objects
    said = "index node_vectors_node" if vault.backend == "sqlite" else "unique initiatives(name)"
    assert said in objects["summary"] and "table " not in objects["summary"], objects
    assert checks["fulltext"]["status"] == checks["search"]["status"] == "ok", checks
    if vault.backend == "postgres":
        assert "`kaeru copy --from" in objects["fix"]
        return
    # On SQLite the fix is the statement that makes the unique index again; run as said, the vault is whole.
    statement = objects["fix"].split("): ", 1)[1].split(" — ", 1)[0]
    assert statement.startswith("CREATE UNIQUE INDEX node_vectors_node"), objects
    _sql(vault, statement)
    code, checks, _ = _doctor(vault)
    assert code == 0 and checks["schema_objects"]["status"] == "ok", checks["schema_objects"]


def test_a_table_of_the_same_name_in_another_schema_does_not_hide_a_missing_one(damageable: VaultSpec) -> None:
    """The catalog was read over every schema of the search path, so a stray `other.audit` hid the
    vault's missing `audit` (found in review): only the vault's own schema counts."""
    vault = damageable
    if vault.backend != "postgres":
        pytest.skip("a search path of several schemas is PostgreSQL's")
    write_notes(vault, "doc", "the heron waits by the weir")
    statements = "CREATE SCHEMA other; CREATE TABLE other.audit (seq bigint PRIMARY KEY); DROP TABLE public.audit"
    _sql(vault, statements)
    assert vault.database_url
    with psycopg.connect(_admin(), autocommit=True) as admin:
        admin.execute(
            f'ALTER DATABASE "{vault.database_url.rsplit("/", 1)[-1]}" SET search_path = public, other'.encode()
        )
    code, checks, _ = _doctor(vault)
    objects = checks["schema_objects"]
    assert code == 1 and "table audit" in objects["summary"], objects


@pytest.mark.parametrize(("index", "status"), [("nodes_created", "warn"), ("nodes_head", "fail")])
def test_a_dropped_index_is_said_with_the_statement_that_makes_it_again(
    damageable: VaultSpec, index: str, status: str
) -> None:
    """A plain index lost slows calls down but loses nothing: a warning. One a statement names
    (SQLite's `INDEXED BY`) fails every search that runs it: a failure. Either fix, run as it is,
    makes the vault whole; an index a DBA added is no concern of the check."""
    vault = damageable
    if index not in INDEXES[vault.backend]:
        pytest.skip(f"{vault.backend} has no index {index}")
    write_notes(vault, "doc", "the heron waits by the weir")
    _sql(vault, f"DROP INDEX {index}")
    _sql(vault, "CREATE INDEX dba_nodes_name ON nodes (name)")
    code, checks, _ = _doctor(vault)
    objects = checks["schema_objects"]
    assert (code, objects["status"]) == ((0, "warn") if status == "warn" else (1, "fail")), objects
    assert index in objects["summary"] and "dba_nodes_name" not in objects["summary"], objects
    statement = objects["fix"].removeprefix("make it again: ")
    assert statement.startswith(f"CREATE INDEX {index} ON nodes "), objects
    _sql(vault, statement)
    code, checks, _ = _doctor(vault)
    assert code == 0 and checks["schema_objects"]["status"] == "ok", checks["schema_objects"]


@contextmanager
def _upgraded(fixture: Path, tmp_path: Path) -> Iterator[VaultSpec]:
    """A copy of an upgrade fixture's vault (`tests/upgrade`), migrated to this kaeru's schema."""
    if fixture.name.startswith("sqlite"):
        folder = tmp_path / "vault"
        folder.mkdir()
        (folder / "vault.sqlite3").write_bytes(gzip.decompress((fixture / "vault.sqlite3.gz").read_bytes()))
        spec = VaultSpec("sqlite", folder)
        assert kaeru(spec, "migrate").code == 0
        try:
            yield spec
        finally:
            shutil.rmtree(folder)
        return
    from tests.pg import blank_database, drop_database

    _admin()
    url = blank_database()
    try:
        with psycopg.connect(url, autocommit=True) as pg:
            pg.execute((fixture / "postgres.sql").read_bytes())
        spec = VaultSpec("postgres", tmp_path / "vault", url)
        assert kaeru(spec, "migrate").code == 0
        yield spec
    finally:
        drop_database(url)


@pytest.mark.parametrize(
    ("fixture", "lacks"),
    [
        ("sqlite-v001", None),
        ("postgres-v001", None),
        # Written by a kaeru whose migration was edited after (before the never-edit rule, decision
        # 15.U5): such vaults lack the index the edit added, and nothing ever made it since.
        ("sqlite-v003-56c189c", "cursors_created"),
        ("postgres-v002", "nodes_created"),
    ],
)
def test_an_upgraded_vault_holds_what_a_new_one_does(fixture: str, lacks: str | None, tmp_path: Path) -> None:
    with _upgraded(UPGRADES / fixture, tmp_path) as vault:
        run = kaeru(vault, "doctor", as_json=True)
    checks: dict[str, dict[str, Any]] = {c["name"]: c for c in run.json()["checks"]}
    objects = checks["schema_objects"]
    if lacks is None:
        assert run.code == 0 and objects["status"] == "ok", objects
    else:
        assert run.code == 0 and objects["status"] == "warn", objects
        assert re.search(rf"CREATE INDEX {lacks} ON \w+ ", objects["fix"]), objects


# ------------------------------------------------------------------------------------------------
# The timeouts a call runs under (F6): PostgreSQL only.
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["postgres"])
def test_the_doctor_looks_under_the_timeouts_a_store_sets(damageable: VaultSpec) -> None:
    """Every statement of the doctor runs under the settings' lock and statement timeouts (and
    without JIT), as a store's do — whatever the database or the role would start a session with."""
    from kaeru.storage.postgres.health import PostgresHealth
    from kaeru.storage.postgres.store import PostgresStore

    vault = damageable
    write_notes(vault, "doc", "the heron waits by the weir")
    for setting in ("lock_timeout", "statement_timeout"):
        _database_default(vault, setting, "1h")
    _database_default(vault, "jit", "on")
    shown = "SELECT current_setting('lock_timeout'), current_setting('statement_timeout'), current_setting('jit')"
    assert vault.database_url
    store = PostgresStore(vault.database_url, lock_timeout_ms=1234, statement_timeout_ms=5678)
    try:
        with store.read() as session:
            calls = session._db.one(shown)  # type: ignore[attr-defined]
    finally:
        store.close()
    assert calls == ("1234ms", "5678ms", "off")
    health = PostgresHealth(vault.database_url, lock_timeout_ms=1234, statement_timeout_ms=5678)
    try:
        assert tuple(health._rows(shown)[0]) == calls
        with health.read() as session:
            assert session._db.one(shown) == calls
        health.use_timeouts(4321, 8765)
        assert tuple(health._rows(shown)[0]) == ("4321ms", "8765ms", "off")
    finally:
        health.close()


@pytest.mark.parametrize("backend", ["postgres"])
@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({"KAERU_PG_STATEMENT_TIMEOUT_MS": "1500", "KAERU_BUSY_TIMEOUT_MS": "0"}, "ran past the statement timeout"),
        ({"KAERU_PG_STATEMENT_TIMEOUT_MS": "0", "KAERU_BUSY_TIMEOUT_MS": "1"}, "LockNotAvailable"),
    ],
)
def test_the_doctor_waits_as_long_as_a_call_and_a_timeout_is_not_the_urls_fault(
    damageable: VaultSpec, settings: dict[str, str], said: str
) -> None:
    """The probe's role with its own `statement_timeout`: calls passed, since the store sets its
    own, and the doctor, which did not, failed its schema check and sent the user to
    KAERU_DATABASE_URL. Here a statement of the doctor waits on a lock held throughout: it ends by
    the settings' timeout (the database would wait for an hour), and the fix is not the URL's."""
    vault = damageable
    write_notes(vault, "doc", "the heron waits by the weir")
    for setting in ("lock_timeout", "statement_timeout"):
        _database_default(vault, setting, "1h")
    assert vault.database_url
    with psycopg.connect(vault.database_url) as holder:
        holder.execute("LOCK TABLE nodes IN ACCESS EXCLUSIVE MODE")
        code, checks, _ = _doctor(vault, **settings)
        holder.rollback()
    failed = {name: c for name, c in checks.items() if c["status"] == "fail"}
    assert code == 1 and set(failed) == {"schema"}, failed
    schema = failed["schema"]
    assert said in schema["summary"], schema
    assert "KAERU_DATABASE_URL" not in schema["fix"] and "as the message says" in schema["fix"], schema
