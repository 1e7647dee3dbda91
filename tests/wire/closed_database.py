"""A PostgreSQL vault whose database stops answering, and what the operator's log says of it: shared
by the tests of calls and token checks answered `unavailable`."""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest

from tests.backends import VaultSpec, drop_vault, new_vault, postgres_admin_url

#: A log line as the operator reads it: ISO time in UTC, level, logger, message.
STAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z WARNING kaeru\.http: "


@contextmanager
def closed(vault: VaultSpec) -> Iterator[None]:
    """The vault's database refusing new connections, its open ones ended; opened again after."""
    admin = postgres_admin_url()
    assert admin and vault.database_url
    name = urllib.parse.urlsplit(vault.database_url).path.lstrip("/")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false'.encode())
        try:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                (name,),
            )
            yield
        finally:
            conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true'.encode())


@pytest.fixture
def pg_vault(tmp_path: Path) -> Iterator[VaultSpec]:
    """A PostgreSQL vault: a database server that stops answering is PostgreSQL's (SQLite's file is held open)."""
    if not postgres_admin_url():
        pytest.skip("PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset")
    spec = new_vault("postgres", tmp_path)
    yield spec
    drop_vault(spec)


def assert_logged_bounded(log: str, answered: str, times: int, vault: VaultSpec) -> None:
    """`log` says the `times` answers to `answered` (`search`, `a token check`) of a database closed
    to connections: the first of each error class at once, the others counted, every one in fewer
    lines than answers; never the database's password, never a traceback."""
    firsts = re.findall(rf"^{STAMP}unavailable answer to {answered}: (\w+): (.+)$", log, re.MULTILINE)
    assert firsts, log[-3000:]
    for kind, said in firsts:
        assert kind == "OperationalError" and "not currently accepting connections" in said, firsts
    more = [
        int(n)
        for n in re.findall(
            rf"^{STAMP}unavailable answer to {answered} (\d+) more times since the first: \w+$", log, re.MULTILINE
        )
    ]
    assert len(firsts) + sum(more) == times, log[-3000:]
    assert len(firsts) + len(more) < times, log[-3000:]
    password = urllib.parse.urlsplit(vault.database_url or "").password
    assert not password or password not in log
    assert "Traceback" not in log, log[-3000:]
