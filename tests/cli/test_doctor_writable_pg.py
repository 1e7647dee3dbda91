"""`kaeru doctor` on a PostgreSQL vault kaeru can read but not write (decision 454): a database or
role whose sessions are read-only by default (a standby is said the same way, from
`pg_is_in_recovery()`), or a role granted only SELECT on the vault's tables. Every check passed —
the doctor's own connection only reads — and it said "healthy" while every write was refused."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import pytest

from tests.backends import postgres_admin_url
from tests.cli.support import kaeru, write_notes
from tests.pg import NEEDS_POSTGRES, run_as_admin

pytestmark = [pytest.mark.timeout(300), NEEDS_POSTGRES]


@pytest.fixture
def vault_url() -> Iterator[str]:
    """A blank database holding a vault with one note, as its owner made it."""
    from tests.pg import blank_database, drop_database

    url = blank_database()
    write_notes({"KAERU_DATABASE_URL": url}, "doc", "the heron waits by the pond")
    yield url
    drop_database(url)


def _doctor(url: str) -> tuple[int, dict[str, dict[str, Any]]]:
    run = kaeru({"KAERU_DATABASE_URL": url}, "doctor", as_json=True)
    return run.code, {c["name"]: c for c in run.json()["checks"]}


def test_a_database_whose_sessions_only_read_is_not_healthy(vault_url: str) -> None:
    code, checks = _doctor(vault_url)
    assert code == 0 and checks["writable"]["status"] == "ok", checks["writable"]
    name = urlsplit(vault_url).path.lstrip("/")
    run_as_admin(vault_url, f'ALTER DATABASE "{name}" SET default_transaction_read_only = on')
    code, checks = _doctor(vault_url)
    assert code == 1
    writable = checks["writable"]
    assert writable["status"] == "fail" and "default_transaction_read_only" in writable["summary"], writable
    assert "every write is refused" in writable["summary"] and "primary" in writable["fix"]
    assert checks["search"]["status"] == "ok", "reads still answer"


def test_a_role_that_may_only_select_is_not_healthy(vault_url: str) -> None:
    admin = postgres_admin_url()
    assert admin
    suffix = uuid.uuid4().hex[:10]
    role, password = f"kaeru_reader_{suffix}", f"pw-{suffix}"
    run_as_admin(admin, f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
    try:
        run_as_admin(vault_url, f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
        parts = urlsplit(vault_url)
        as_reader = urlunsplit(parts._replace(netloc=f"{role}:{quote(password)}@{parts.hostname}:{parts.port}"))
        code, checks = _doctor(as_reader)
        assert code == 1
        writable = checks["writable"]
        assert writable["status"] == "fail" and f"the role {role} may not change " in writable["summary"]
        assert "table audit" in writable["summary"] and "sequence nodes_seq_seq" in writable["summary"], writable
        assert "GRANT SELECT, INSERT, UPDATE, DELETE" in writable["fix"], writable
        run_as_admin(
            vault_url,
            f"GRANT INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}",
            f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {role}",
        )
        # Another application's table in the same schema, not granted: none of kaeru's business.
        run_as_admin(vault_url, "CREATE TABLE other_app_notes (id int)")
        code, checks = _doctor(as_reader)
        assert checks["writable"]["status"] == "ok", checks["writable"]
        note = kaeru({"KAERU_DATABASE_URL": as_reader}, "note", "the egret stands still", "-i", "doc")
        assert note.code == 0, note.stderr
    finally:
        run_as_admin(vault_url, f"REASSIGN OWNED BY {role} TO CURRENT_USER", f"DROP OWNED BY {role}")
        run_as_admin(admin, f"DROP ROLE IF EXISTS {role}")
