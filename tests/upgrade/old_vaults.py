"""The newest upgrade fixture of each backend written before SQLite migration 023 / PostgreSQL 021
(tests/data/upgrade: a vault the code of that version wrote), copied for one test and not yet
opened by this code."""

from __future__ import annotations

import gzip
import importlib
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.backends import VaultSpec, postgres_admin_url

DATA = Path(__file__).resolve().parents[1] / "data" / "upgrade"
#: The newest fixture of each backend whose schema has no `tokens.expires_at` nor
#: `edge_revisions.actor`.
BEFORE = {"sqlite": DATA / "sqlite-v022", "postgres": DATA / "postgres-v020"}

#: Runs one statement on the copy (its tables named `{schema}table`) and returns its rows.
Query = Callable[[str], list[tuple[Any, ...]]]


def columns(query: Query, schema: str, table: str) -> list[str]:
    """The names of `table`'s columns, as `prepare` sees them."""
    if not schema:
        return [str(c[1]) for c in query(f"PRAGMA table_info({table})")]
    found = query(f"SELECT column_name FROM information_schema.columns WHERE table_name = '{table}'")
    return [str(c[0]) for c in found]


@contextmanager
def copied_fixture(
    backend: str, tmp_path: Path, prepare: Callable[[Query, str], None] | None = None
) -> Iterator[VaultSpec]:
    """A copy of `backend`'s fixture vault; `prepare(query, schema)` runs on it first (`schema`:
    the prefix of its table names, `public.` on PostgreSQL, whose dump empties the search path)."""
    fixture = BEFORE[backend]
    if backend == "sqlite":
        import apsw

        (tmp_path / "vault.sqlite3").write_bytes(gzip.decompress((fixture / "vault.sqlite3.gz").read_bytes()))
        db = apsw.Connection(str(tmp_path / "vault.sqlite3"))
        try:
            if prepare is not None:
                prepare(lambda sql: list(db.execute(sql)), "")
        finally:
            db.close()
        yield VaultSpec("sqlite", tmp_path)
        return
    with fixture_database(fixture) as url:
        if prepare is not None:
            import psycopg

            with psycopg.connect(url, autocommit=True) as pg:

                def query(sql: str) -> list[tuple[Any, ...]]:
                    cursor = pg.execute(sql.encode())
                    return list(cursor.fetchall()) if cursor.description is not None else []

                prepare(query, "public.")
        yield VaultSpec("postgres", tmp_path, url)


@contextmanager
def fixture_database(fixture: Path) -> Iterator[str]:
    """The URL of a new database holding `fixture`'s dump (`postgres.sql`: the old code's schema and
    rows, which names every table `public.…`), dropped afterwards."""
    import psycopg

    from tests.pg import database_url

    admin = postgres_admin_url()
    if admin is None:
        pytest.skip("PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset (make test starts one)")
    name = f"kaeru_upgrade_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin, autocommit=True) as pg:
        pg.execute(f'CREATE DATABASE "{name}"')
    try:
        url = database_url(admin, name)
        with psycopg.connect(url, autocommit=True) as pg:
            pg.execute((fixture / "postgres.sql").read_bytes())
        yield url
    finally:
        with psycopg.connect(admin, autocommit=True) as pg:
            pg.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def execute(spec: VaultSpec, sql: str) -> list[tuple[Any, ...]]:
    """Run one statement (its tables named `{schema}table`, as `prepare`'s) on the vault `spec`,
    closed by this code, and return its rows."""
    if spec.backend == "sqlite":
        import apsw

        db = apsw.Connection(str(spec.vault_dir / "vault.sqlite3"))
        try:
            return list(db.execute(sql.format(schema="")))
        finally:
            db.close()
    import psycopg

    assert spec.database_url is not None
    with psycopg.connect(spec.database_url, autocommit=True) as pg:
        cursor = pg.execute(sql.format(schema="public.").encode())
        return list(cursor.fetchall()) if cursor.description is not None else []


#: The migration that names the actors of edge revisions written before they kept them, per backend.
BACKFILL = {
    "sqlite": "kaeru.storage.sqlite.migrations.024_link_actors_backfill",
    "postgres": "kaeru.storage.postgres.migrations.022_link_actors_backfill",
}


def backfill_again(spec: VaultSpec) -> None:
    """Run the backfill migration's `up(conn)` on the vault `spec` (closed by this code) once more,
    as the store runs a migration: on the engine's own connection, inside one write transaction."""
    up = importlib.import_module(BACKFILL[spec.backend]).up
    if spec.backend == "sqlite":
        import apsw

        db = apsw.Connection(str(spec.vault_dir / "vault.sqlite3"))
        try:
            db.execute("BEGIN IMMEDIATE")
            up(db)
            db.execute("COMMIT")
        finally:
            db.close()
        return
    import psycopg

    assert spec.database_url is not None
    with psycopg.connect(spec.database_url, autocommit=True) as pg:
        pg.execute("BEGIN")
        up(pg)
        pg.execute("COMMIT")
