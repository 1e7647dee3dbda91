"""A throwaway database on a vault's PostgreSQL server, for `kaeru bench` (decision 70).

A team's vault must never receive benchmark notes, and `context` writes (it stamps reminders), so
the measured calls run in a database of their own on the same server — the same machine, network
and settings as the real vault — created empty and dropped afterwards, also when the run fails.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql

from kaeru.errors import Unavailable

PREFIX = "kaeru_bench_"


@contextmanager
def scratch_database(url: str) -> Iterator[str]:
    """The URL of a new, empty database beside the one `url` names; dropped when the block ends.

    Raises:
        Unavailable: the server cannot be reached, or refuses to create a database for this role.
    """
    name = f"{PREFIX}{uuid.uuid4().hex[:12]}"
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except psycopg.Error as exc:
        raise Unavailable(
            f"cannot create a scratch database on this PostgreSQL server ({type(exc).__name__}: {exc}); "
            "the role needs CREATEDB, or measure a scratch SQLite vault with --sqlite"
        ) from exc
    try:
        yield urlunsplit(urlsplit(url)._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            # FORCE ends sessions a closed pool may have left for a moment (PostgreSQL 13+).
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def analyze(url: str) -> None:
    """Gather the planner's statistics now, as autovacuum would by itself a little later: a vault
    just filled has none, and the plans chosen without them are not the ones a real vault gets."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ANALYZE")
