"""A team's PostgreSQL as a DBA sets it up (decision 187): kaeru's own role, which does not own the
database. Since PostgreSQL 15 only the database's owner may create in `public`, so such a role's
first `kaeru note` was `internal` with the SQL quoted; now it is told which right is missing and the
three ways to give it. A schema of kaeru's own (`options=-csearch_path=…` in the URL) holds a whole
vault, and two such schemas are two independent vaults in one database.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg
import pytest

from kaeru.errors import Unavailable
from kaeru.storage.migrate import VaultUnusable
from kaeru.storage.postgres.store import PostgresStore
from tests.backends import postgres_admin_url
from tests.wire.support import subprocess_env

pytestmark = pytest.mark.skipif(
    not postgres_admin_url(),
    reason="PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset (the README's test command sets it)",
)


def _as(url: str, role: str, password: str, query: str = "") -> str:
    parts = urlsplit(url)
    host = f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname)
    return urlunsplit(parts._replace(netloc=f"{role}:{password}@{host}", query=query))


@pytest.fixture
def team() -> Iterator[tuple[str, str, str]]:
    """(admin url of a new database the admin owns, a role with CONNECT only, its url)."""
    admin = postgres_admin_url()
    assert admin
    suffix = uuid.uuid4().hex[:10]
    name, role, password = f"kaeru_team_{suffix}", f"kaeru_role_{suffix}", f"pw-{suffix}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}".encode())
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'".encode())
        conn.execute(f"GRANT CONNECT ON DATABASE {name} TO {role}".encode())
    owned = urlunsplit(urlsplit(admin)._replace(path=f"/{name}"))
    try:
        yield owned, role, _as(owned, role, password)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)".encode())
            conn.execute(f"DROP ROLE IF EXISTS {role}".encode())


def _doctor(url: str) -> tuple[int, list[dict[str, Any]]]:
    """`kaeru --json doctor` on `url`: its exit code and checks (never a traceback)."""
    done = subprocess.run(
        [sys.executable, "-m", "kaeru", "--json", "doctor"],
        env=subprocess_env({"KAERU_DATABASE_URL": url}),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, list(json.loads(done.stdout)["checks"])


def _admin(owned: str, sql: str) -> None:
    with psycopg.connect(owned, autocommit=True) as conn:
        conn.execute(sql.encode())


def test_a_role_that_may_not_create_in_public_is_told_which_right_is_missing(team: tuple[str, str, str]) -> None:
    owned, role, url = team
    with pytest.raises(VaultUnusable) as caught:
        PostgresStore(url, connect_timeout_s=5)
    message = caught.value.message
    assert "permission denied for schema public" in message and "GRANT USAGE, CREATE ON SCHEMA public" in message
    assert "CREATE TABLE" not in message and not caught.value.retryable
    noted = subprocess.run(
        [sys.executable, "-m", "kaeru", "note", "-i", "team", "the first note"],
        env=subprocess_env({"KAERU_DATABASE_URL": url}),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert noted.returncode == 1 and "Traceback" not in noted.stderr
    assert noted.stderr.startswith("error: unavailable: PostgreSQL refused the role"), noted.stderr
    _admin(owned, f"GRANT USAGE, CREATE ON SCHEMA public TO {role}")
    PostgresStore(url, connect_timeout_s=5).close()  # the fix it names is enough


def test_a_role_without_rights_on_an_existing_vault_is_told_so(team: tuple[str, str, str]) -> None:
    """The vault's tables belong to the role that made it: the schema's rights do not reach them, so
    the remedy named is the tables' (the schema's, given before, did not fix it), and the doctor says
    it as a failed check where it printed a traceback (decision 214)."""
    owned, role, url = team
    PostgresStore(owned, connect_timeout_s=5).close()  # the owner made the vault
    _admin(owned, f"GRANT USAGE ON SCHEMA public TO {role}")
    with pytest.raises(VaultUnusable) as caught:
        PostgresStore(url, connect_timeout_s=5)
    assert "permission denied for table" in caught.value.message
    assert "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO role" in caught.value.message
    code, checks = _doctor(url)
    assert code == 1
    failed = {c["name"]: c["summary"] for c in checks if c["status"] == "fail"}
    assert "permission denied for table" in failed["schema"], failed
    _admin(owned, f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}")
    _admin(owned, f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {role}")
    PostgresStore(url, connect_timeout_s=5).close()  # the fix it names is enough


def test_a_schema_the_url_names_but_nobody_made_is_said_so(team: tuple[str, str, str]) -> None:
    """The README's own-schema set-up with the `CREATE SCHEMA` forgotten or the name mistyped: was
    `internal` with kaeru's `CREATE TABLE` quoted (decision 214)."""
    owned, _, _ = team
    with pytest.raises(VaultUnusable) as caught:
        PostgresStore(owned + "?options=" + quote("-c search_path=kaeru_typo"), connect_timeout_s=5)
    assert "has no schema to hold the vault" in caught.value.message and "CREATE SCHEMA" in caught.value.message
    assert "CREATE TABLE" not in caught.value.message


@pytest.mark.parametrize(
    ("query", "said"),
    [("sslmod=require", 'invalid URI query parameter: "sslmod"'), ("connect_timeout=abc", "connect_timeout")],
)
def test_a_url_libpq_refuses_is_said_at_once(team: tuple[str, str, str], query: str, said: str) -> None:
    """A parameter libpq does not know was a traceback (`ProgrammingError`); a bad `connect_timeout`
    was hidden by kaeru's own and said 30 s later as a pool timeout (decision 214)."""
    owned, _, _ = team
    with pytest.raises(Unavailable) as caught:
        PostgresStore(f"{owned}?{query}", connect_timeout_s=5)
    assert said in caught.value.message and "PoolTimeout" not in caught.value.message, caught.value.message
    noted = subprocess.run(
        [sys.executable, "-m", "kaeru", "note", "-i", "team", "a note"],
        env=subprocess_env({"KAERU_DATABASE_URL": f"{owned}?{query}"}),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert noted.returncode == 1 and "Traceback" not in noted.stderr and said in noted.stderr, noted.stderr


def test_each_schema_of_its_own_is_an_independent_vault(team: tuple[str, str, str]) -> None:
    owned, role, url = team
    _admin(owned, f"CREATE SCHEMA alpha AUTHORIZATION {role}")
    _admin(owned, f"CREATE SCHEMA beta AUTHORIZATION {role}")
    vaults = {s: url + "?options=" + quote(f"-c search_path={s}") for s in ("alpha", "beta")}
    for schema, vault in vaults.items():
        env = subprocess_env({"KAERU_DATABASE_URL": vault})
        subprocess.run(
            [sys.executable, "-m", "kaeru", "note", "-i", "shared", f"kept only in {schema}"],
            env=env,
            check=True,
            timeout=60,
        )
    for schema, vault in vaults.items():
        env = subprocess_env({"KAERU_DATABASE_URL": vault})
        found = subprocess.run(
            [sys.executable, "-m", "kaeru", "--json", "search", "-i", "shared", "kept"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        assert [h["body"] for h in json.loads(found.stdout)["data"]["hits"]] == [f"kept only in {schema}"]
        doctor = subprocess.run(
            [sys.executable, "-m", "kaeru", "--json", "doctor"], env=env, capture_output=True, text=True, timeout=60
        )
        assert doctor.returncode == 0, doctor.stdout
    with psycopg.connect(owned, autocommit=True) as conn:
        tables = dict(
            conn.execute(
                "SELECT schemaname, count(*) FROM pg_tables WHERE schemaname IN ('public', 'alpha', 'beta') GROUP BY 1"
            ).fetchall()
        )
    assert "public" not in tables and tables["alpha"] == tables["beta"] > 10


def test_the_doctor_of_a_role_without_rights_on_the_tables_names_each_check_once(
    team: tuple[str, str, str],
) -> None:
    """A vault the admin made, read by a role with CONNECT only: the doctor said `vault: ok` and then
    `vault: fail` (monitors key on names) and dropped the `connection` and `encoding` checks it had made."""
    owned, _, url = team
    PostgresStore(owned, connect_timeout_s=5).close()  # the admin's vault, migrated
    code, found = _doctor(url)
    checks = [(c["name"], c["status"]) for c in found]
    names = [name for name, _ in checks]
    assert code == 1 and len(names) == len(set(names)), checks
    assert ("vault", "ok") in checks and ("connection", "ok") in checks and ("encoding", "ok") in checks
    assert ("schema", "fail") in checks
