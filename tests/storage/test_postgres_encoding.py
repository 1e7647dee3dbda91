"""A PostgreSQL database that is not UTF-8 (decision 186): a LATIN1, EUC_JP or SQL_ASCII database —
what `createdb` makes on a cluster initialised under such a locale, or under `LANG=C` — cannot hold
every text an agent writes. kaeru refuses it when it opens, before writing anything, with the way
out; `kaeru doctor` names it; and a UTF8 database is written in UTF-8 whatever PGCLIENTENCODING
says. Before, each of these ended in a `UnicodeEncodeError` traceback on the first migration or note.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator

import psycopg
import pytest

from kaeru.storage.migrate import VaultUnusable
from kaeru.storage.postgres.store import PostgresStore
from tests.backends import postgres_admin_url
from tests.pg import database_url
from tests.wire.support import subprocess_env

pytestmark = pytest.mark.skipif(
    not postgres_admin_url(),
    reason="PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset (the README's test command sets it)",
)


@pytest.fixture(params=["LATIN1", "EUC_JP", "SQL_ASCII"])
def encoded(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """(url, encoding) of a new, empty database in that encoding."""
    admin = postgres_admin_url()
    assert admin
    name = f"kaeru_enc_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(
            f"CREATE DATABASE {name} TEMPLATE template0 ENCODING '{request.param}' LC_COLLATE 'C' LC_CTYPE 'C'".encode()
        )
    try:
        yield database_url(admin, name), request.param
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)".encode())


def _tables(url: str) -> list[str]:
    with psycopg.connect(url, autocommit=True) as conn:
        return [r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]


def test_a_database_not_in_utf8_is_refused_before_anything_is_written(encoded: tuple[str, str]) -> None:
    url, encoding = encoded
    with pytest.raises(VaultUnusable) as caught:
        PostgresStore(url, connect_timeout_s=5)
    assert f"stores text as {encoding}" in caught.value.message
    assert "ENCODING 'UTF8'" in caught.value.message and not caught.value.retryable
    assert _tables(url) == []


def test_the_cli_and_the_doctor_say_so_without_a_traceback(encoded: tuple[str, str]) -> None:
    url, encoding = encoded
    env = subprocess_env({"KAERU_DATABASE_URL": url})
    noted = subprocess.run(
        [sys.executable, "-m", "kaeru", "note", "-i", "enc", "café au lait — プロジェクト"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert noted.returncode == 1 and "Traceback" not in noted.stderr
    assert f"stores text as {encoding}" in noted.stderr
    doctor = subprocess.run(
        [sys.executable, "-m", "kaeru", "--json", "doctor"], env=env, capture_output=True, text=True, timeout=60
    )
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert doctor.returncode == 1 and checks["encoding"]["status"] == "fail"
    assert encoding in checks["encoding"]["summary"] and "UTF8" in checks["encoding"]["fix"]
    assert _tables(url) == []


def test_a_utf8_database_is_written_in_utf8_whatever_the_client_encoding_says(url: str) -> None:
    """`PGCLIENTENCODING=LATIN1` (a user's shell, an old profile) would have psycopg encode every
    statement as LATIN1."""
    env = subprocess_env({"KAERU_DATABASE_URL": url}, PGCLIENTENCODING="LATIN1")
    text = "café au lait — プロジェクトの会議"
    subprocess.run([sys.executable, "-m", "kaeru", "note", "-i", "enc", text], env=env, check=True, timeout=60)
    found = subprocess.run(
        [sys.executable, "-m", "kaeru", "--json", "search", "-i", "enc", "プロジェクトの会議"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert [hit["body"] for hit in json.loads(found.stdout)["data"]["hits"]] == [text]
    doctor = subprocess.run(
        [sys.executable, "-m", "kaeru", "--json", "doctor"], env=env, capture_output=True, text=True, timeout=60
    )
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["encoding"]["status"] == "ok", doctor.stdout
