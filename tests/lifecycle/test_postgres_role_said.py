"""What an application role on a shared PostgreSQL is told when it lacks a right the vault needs, as
the right it lacks: a vault in schema `sa` whose role had the table grants `TABLE_GRANT_REMEDY` names
but no USAGE on `sa` was told the schema "does not exist: create it", the doctor that no schema of its
search_path exists and to point the URL at the schema it already named; a role that may not read
`tokens` was told by the doctor's `http` line that the vault holds no token (it held `alice`)."""

from __future__ import annotations

from urllib.parse import quote

from kaeru.storage.postgres.db import TABLE_GRANT_REMEDY
from tests.cli.support import kaeru, write_notes
from tests.cli.test_doctor_roles import _data_rights, _doctor, team
from tests.pg import NEEDS_POSTGRES, run_as_admin

pytestmark = NEEDS_POSTGRES
__all__ = ["team"]  # the fixture: a database, and an application role with CONNECT only


def test_a_schema_the_role_may_not_use_is_said_as_the_grant_it_lacks(team: tuple[str, str, str]) -> None:
    owned, role, url = team
    run_as_admin(owned, "CREATE SCHEMA sa")
    path = "?options=" + quote("-csearch_path=sa")
    write_notes({"KAERU_DATABASE_URL": owned + path}, "doc", "the heron waits by the pond in sa")
    run_as_admin(  # what TABLE_GRANT_REMEDY names, for schema sa, but its USAGE
        owned,
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA sa TO {role}",
        f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA sa TO {role}",
    )
    searched = kaeru({"KAERU_DATABASE_URL": url + path}, "search", "-i", "doc", "heron")
    said = " ".join(searched.stderr.split())
    assert searched.code != 0 and f"GRANT USAGE ON SCHEMA sa TO {role}" in said, said
    assert "does not exist" not in said, said

    code, checks = _doctor(url + path)
    writable, migrations = checks["writable"], checks["migrations"]
    assert code == 1 and f"GRANT USAGE ON SCHEMA sa TO {role}" in writable["fix"], writable
    assert "no schema" not in writable["summary"] and "may not use schema sa" in writable["summary"], writable
    assert f"GRANT USAGE ON SCHEMA sa TO {role}" in migrations["fix"], migrations
    assert "csearch_path" not in migrations["fix"], migrations  # not the URL already in use

    run_as_admin(owned, f"GRANT USAGE ON SCHEMA sa TO {role}")  # the fix, followed
    assert kaeru({"KAERU_DATABASE_URL": url + path}, "search", "-i", "doc", "heron").code == 0


def test_the_table_grants_named_for_another_schema_include_its_usage() -> None:
    assert "GRANT USAGE ON SCHEMA schema TO role" in TABLE_GRANT_REMEDY


def test_the_doctor_says_unreadable_tokens_as_unread_not_as_none(team: tuple[str, str, str]) -> None:
    owned, role, url = team
    write_notes({"KAERU_DATABASE_URL": owned}, "doc", "the heron waits by the pond")
    assert kaeru({"KAERU_DATABASE_URL": owned}, "token", "add", "alice").code == 0
    _data_rights(owned, role)
    run_as_admin(owned, f"REVOKE SELECT ON tokens FROM {role}")
    code, checks = _doctor(url)
    assert code == 1 and checks["tokens"]["status"] == "fail", checks.get("tokens")
    http = checks["http"]["summary"]
    assert "no token in the vault" not in http and "tokens could not be read" in http, http
