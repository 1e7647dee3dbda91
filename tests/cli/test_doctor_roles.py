"""A DBA's set-up on a shared PostgreSQL: one role owns the vault's tables and runs its migrations,
kaeru's application role has only the data rights the doctor prints (decision 187). What that role
could not do was said as something else: a pending migration only the owner may apply refused its
every command with a `GRANT … CREATE ON SCHEMA` that, once given, was refused again, while the
doctor said `healthy`; a missing SELECT was told to rebuild the index; an empty database it may not
create in was `writable: ok`; a vault restored into another schema was "not a kaeru vault", with a
fix that made a second, empty one; a pooler's refusal of the URL's `options` said nothing of the
role-level `search_path` that works through it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg
import pytest

from kaeru.storage.migrate import VaultUnusable
from kaeru.storage.postgres.store import PostgresStore
from tests.backends import postgres_admin_url
from tests.cli.support import Run, kaeru, write_notes
from tests.pg import NEEDS_POSTGRES, as_role, run_as_admin
from tests.pgbouncer import pgbouncer, pgbouncer_binary

pytestmark = [pytest.mark.timeout(300), NEEDS_POSTGRES]


@pytest.fixture
def team() -> Iterator[tuple[str, str, str]]:
    """(the admin's url of a new database it owns, an application role with CONNECT only, its url)."""
    admin = postgres_admin_url()
    assert admin
    suffix = uuid.uuid4().hex[:10]
    name, role, password = f"kaeru_team_{suffix}", f"kaeru_app_{suffix}", f"pw-{suffix}"
    run_as_admin(
        admin,
        f"CREATE DATABASE {name}",
        f"CREATE ROLE {role} LOGIN PASSWORD '{password}'",
        f"GRANT CONNECT ON DATABASE {name} TO {role}",
    )
    owned = urlunsplit(urlsplit(admin)._replace(path=f"/{name}"))
    try:
        yield owned, role, as_role(owned, role, password)
    finally:
        run_as_admin(admin, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)", f"DROP ROLE IF EXISTS {role}")


def _data_rights(owned: str, role: str) -> None:
    """The grants `kaeru doctor` prints for a role that may not change the tables (DML, no DDL)."""
    run_as_admin(
        owned,
        f"GRANT USAGE ON SCHEMA public TO {role}",
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}",
        f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {role}",
    )


def _run(url: str, *args: str) -> Run:
    return kaeru({"KAERU_DATABASE_URL": url}, *args)


def _doctor(url: str) -> tuple[int, dict[str, dict[str, Any]]]:
    run = kaeru({"KAERU_DATABASE_URL": url}, "doctor", as_json=True)
    return run.code, {c["name"]: c for c in run.json()["checks"]}


def test_a_migration_only_the_tables_owner_may_apply_names_that_owner(team: tuple[str, str, str]) -> None:
    owned, role, url = team
    owner = urlsplit(owned).username
    write_notes({"KAERU_DATABASE_URL": owned}, "doc", "the heron waits by the pond")
    _data_rights(owned, role)
    assert _run(url, "search", "-i", "doc", "heron").code == 0
    # A kaeru newer than the vault: its newest migration is pending (migration 20 made these two).
    run_as_admin(
        owned,
        "DROP STATISTICS IF EXISTS nodes_reminder_stats, nodes_hygiene_stats",
        "DELETE FROM schema_migrations WHERE version = 20",
    )
    searched = _run(url, "search", "-i", "doc", "heron")
    assert searched.code == 1 and f"connect as {owner}" in searched.stderr, searched.stderr
    assert "only the role owning its tables" in searched.stderr and "GRANT USAGE, CREATE" not in searched.stderr
    # The grant the refusal named before, given: still refused, and now not told to give it again.
    run_as_admin(owned, f"GRANT CREATE ON SCHEMA public TO {role}")
    migrated = _run(url, "migrate")
    assert migrated.code == 1 and f"connect as {owner}" in migrated.stderr, migrated.stderr
    assert "give it the schema's rights" not in migrated.stderr
    code, checks = _doctor(url)
    assert code == 1, checks
    migrations = checks["migrations"]
    assert migrations["status"] == "fail" and f"the vault's tables, {owner}, may apply" in migrations["summary"]
    assert migrations["fix"].startswith(f"connect as {owner}"), migrations
    assert _run(owned, "migrate").code == 0  # the way out the fix names
    assert _run(url, "search", "-i", "doc", "heron").code == 0
    code, checks = _doctor(url)
    assert code == 0 and checks["migrations"]["status"] == "ok", checks["migrations"]


def test_a_table_the_role_may_not_read_is_granted_not_rebuilt(team: tuple[str, str, str]) -> None:
    owned, role, url = team
    write_notes({"KAERU_DATABASE_URL": owned}, "doc", "the heron waits by the pond")
    _data_rights(owned, role)
    run_as_admin(owned, f"REVOKE SELECT ON term_stats FROM {role}")
    code, checks = _doctor(url)
    assert code == 1
    writable, search = checks["writable"], checks["search"]
    assert f"the role {role} may not read table term_stats" in writable["summary"], writable
    assert "reads answer" not in writable["summary"], writable
    assert search["status"] == "fail" and "permission denied for table term_stats" in search["summary"], search
    for check in (writable, search):
        assert f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}" in check["fix"]
        assert "reindex" not in check["fix"], check
    run_as_admin(owned, f"GRANT SELECT ON term_stats TO {role}")  # the fix it names is enough
    code, checks = _doctor(url)
    assert code == 0 and checks["search"]["status"] == "ok", checks["search"]


def test_an_empty_database_the_role_may_not_create_in_is_not_writable(team: tuple[str, str, str]) -> None:
    owned, role, url = team
    code, checks = _doctor(url)
    writable = checks["writable"]
    assert code == 1 and writable["status"] == "fail", writable
    assert f"the role {role} may not create tables in schema public" in writable["summary"], writable
    assert "GRANT USAGE, CREATE ON SCHEMA public" in writable["fix"]
    assert _run(url, "migrate").code == 1  # what the check foretells
    run_as_admin(owned, f"GRANT USAGE, CREATE ON SCHEMA public TO {role}")
    code, checks = _doctor(url)
    assert checks["writable"]["status"] == "ok", checks["writable"]
    assert _run(url, "migrate").code == 0


def test_a_vault_in_another_schema_is_pointed_at_not_made_again(team: tuple[str, str, str]) -> None:
    """A `pg_dump -n sa` restored and opened without its search_path: "not a kaeru vault", fix
    `kaeru migrate`, which made a second, empty vault in `public`. The doctor names the schema it looked at."""
    owned, _, _ = team
    run_as_admin(owned, "CREATE SCHEMA sa")
    in_sa = owned + "?options=" + quote("-csearch_path=sa")
    write_notes({"KAERU_DATABASE_URL": in_sa}, "doc", "kept in schema sa")
    code, checks = _doctor(owned)
    migrations = checks["migrations"]
    assert code == 1 and "schema(s) sa of this database hold one" in migrations["summary"], migrations
    assert "?options=-csearch_path%3Dsa" in migrations["fix"] and "ALTER ROLE" in migrations["fix"], migrations
    assert "schema public" in checks["vault"]["summary"], checks["vault"]
    code, checks = _doctor(in_sa)
    assert code == 0 and "schema sa" in checks["vault"]["summary"], checks["vault"]
    with psycopg.connect(owned) as conn:
        assert conn.execute("SELECT to_regclass('public.nodes')").fetchone() == (None,)


@pytest.mark.skipif(pgbouncer_binary() is None, reason="pgbouncer is not installed (Debian's package)")
def test_a_pooler_refusing_options_is_told_the_roles_search_path(team: tuple[str, str, str]) -> None:
    """PgBouncer refuses the URL's `options`; a schema set for the role reaches the server through it."""
    owned, role, url = team
    run_as_admin(owned, f"CREATE SCHEMA sa AUTHORIZATION {role}")
    with pgbouncer(url, pool_size=1) as pooled:
        with pytest.raises(VaultUnusable) as caught:
            PostgresStore(pooled + "?options=" + quote("-csearch_path=sa"), connect_timeout_s=5)
        assert "unsupported startup parameter" in caught.value.message
        assert "ALTER ROLE name SET search_path = schema" in caught.value.message, caught.value.message
        code, checks = _doctor(pooled + "?options=" + quote("-csearch_path=sa"))
        assert code == 1 and "ALTER ROLE name SET search_path" in checks["vault"]["summary"], checks["vault"]
    # What it says, as the README says it: read when the pooler opens its next server connection.
    run_as_admin(owned, f"ALTER ROLE {role} SET search_path = sa")
    with pgbouncer(url, pool_size=1) as pooled:
        assert _run(pooled, "note", "-i", "doc", "kept in sa through the pooler").code == 0
    with psycopg.connect(owned) as conn:
        made = conn.execute("SELECT to_regclass('sa.nodes'), to_regclass('public.nodes')").fetchone()
    assert made == ("sa.nodes", None), made


def test_a_refusal_only_a_tables_owner_escapes_is_not_told_the_schemas_grant() -> None:
    """`must be owner of …` outside a migration the store explains: the schema's rights, once given,
    were refused again, and the message named them once more."""
    from kaeru.storage.postgres.db import translate

    said = translate(psycopg.errors.InsufficientPrivilege("must be owner of table nodes")).message
    assert "run `kaeru migrate` once as that role" in said and "relname = 'nodes'" in said, said
    assert "give it the schema's rights" not in said


def test_a_refused_migration_names_the_owner_of_the_table_refused(team: tuple[str, str, str]) -> None:
    """Tables of two owners: the role that owns `schema_migrations` was told to run `kaeru migrate` as
    "the role that owns `schema_migrations`", itself, which had just been refused."""
    owned, role, url = team
    other = f"{role}_b"
    run_as_admin(owned, f"GRANT USAGE, CREATE ON SCHEMA public TO {role}")
    write_notes({"KAERU_DATABASE_URL": url}, "doc", "the heron waits by the pond")  # the role owns all
    run_as_admin(
        owned,
        f"CREATE ROLE {other}",
        f"ALTER TABLE nodes OWNER TO {other}",
        "DROP STATISTICS IF EXISTS nodes_reminder_stats, nodes_hygiene_stats",
        "DELETE FROM schema_migrations WHERE version = 20",  # pending: it makes statistics on `nodes`
    )
    try:
        migrated = _run(url, "migrate")
        assert migrated.code == 1 and "must be owner of table nodes" in migrated.stderr, migrated.stderr
        said = " ".join(migrated.stderr.split())
        assert "only the owner of table nodes" in said and "tablename = 'schema_migrations'" not in said, said
        # The query it names gives the owner to run it as.
        query = said.split("(`", 1)[1].split("` names it", 1)[0]
        with psycopg.connect(owned) as conn:
            assert conn.execute(query.encode()).fetchone() == (other,)
    finally:
        run_as_admin(owned, f"ALTER TABLE nodes OWNER TO {role}")
        run_as_admin(postgres_admin_url() or "", f"DROP ROLE IF EXISTS {other}")


def test_a_vault_in_a_schema_with_capitals_is_pointed_at_from_a_url_with_a_query(team: tuple[str, str, str]) -> None:
    """The fix "add `?options=-csearch_path%3DSa`" after a URL that had a query made two `?`, and an
    unquoted `Sa` is the schema `sa`: the fix is the user's own URL, with `&` and the name quoted."""
    owned, _, _ = team
    run_as_admin(owned, 'CREATE SCHEMA "Sa"')
    write_notes({"KAERU_DATABASE_URL": owned + "?options=" + quote('-csearch_path="Sa"')}, "doc", "kept in Sa")
    given = owned + "?connect_timeout=10&application_name=doc+check"
    code, checks = _doctor(given)
    fix = checks["migrations"]["fix"]
    assert code == 1 and '"Sa"' in checks["migrations"]["summary"], checks["migrations"]
    shown = fix.split("`")[1]
    assert "?connect_timeout=10&application_name=doc+check&options=-csearch_path%3D%22Sa%22" in shown, fix
    # Followed, with the password where it says: the vault is found.
    password = urlsplit(owned).password or ""
    code, checks = _doctor(shown.replace(":***@", f":{quote(password, safe='')}@"))
    assert code == 0 and 'schema "Sa"' in checks["vault"]["summary"], checks["vault"]


def test_a_search_path_with_no_schema_is_said_so(team: tuple[str, str, str]) -> None:
    """The vault line said "schema None": no schema named, and not why."""
    owned, _, _ = team
    _, checks = _doctor(owned + "?options=" + quote("-csearch_path=nosuch"))
    summary = checks["vault"]["summary"]
    assert "None" not in summary and "schema none (no schema of search_path = nosuch exists)" in summary, summary
