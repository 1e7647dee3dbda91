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

from kaeru.config import url_password_replaced
from kaeru.errors import Unavailable

PREFIX = "kaeru_bench_"


@contextmanager
def scratch_database(url: str) -> Iterator[str]:
    """The URL of a new, empty database beside the one `url` names; dropped when the block ends.

    Raises:
        Unavailable: the server cannot be reached or refuses the connection (said as such), or
            refuses to create a database (CREATEDB named only when the role lacks the privilege).
    """
    name = f"{PREFIX}{uuid.uuid4().hex[:12]}"
    # A connection that fails is said as one, as other commands say it: the CREATEDB advice is only
    # for a server that refused CREATE DATABASE for lack of privilege (decision 221; an unreachable
    # server or a wrong password was told the role needs CREATEDB).
    try:
        conn = psycopg.connect(url, autocommit=True)
    except psycopg.Error as exc:
        raise Unavailable(f"cannot connect to {url_password_replaced(url, '***')}: {str(exc).strip()}") from exc
    try:
        with conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except psycopg.errors.InsufficientPrivilege as exc:
        raise Unavailable(
            f"cannot create a scratch database on this PostgreSQL server ({type(exc).__name__}: {exc}); "
            "the role needs CREATEDB, or measure a scratch SQLite vault with --sqlite"
        ) from exc
    except psycopg.Error as exc:
        raise Unavailable(
            f"cannot create a scratch database on this PostgreSQL server ({type(exc).__name__}: "
            f"{str(exc).strip()}); measure a scratch SQLite vault with --sqlite"
        ) from exc
    scratch = urlunsplit(urlsplit(url)._replace(path=f"/{name}"))
    try:
        _create_search_path_schemas(scratch)
        yield scratch
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            # FORCE ends sessions a closed pool may have left for a moment (PostgreSQL 13+).
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def _create_search_path_schemas(url: str) -> None:
    """Create, in the new database `url` names, the schemas its search_path names (the URL's own
    `options=-csearch_path=…`, or the role's setting): a team's vault set up as the README says
    lives in a schema of its own, and the scratch database, which keeps the URL's options, had
    none, so its migrations failed with InvalidSchemaName (decision 220). Creating the schema
    rather than dropping the option keeps the benchmark measuring what the vault runs: the same
    connection options and the same schema-qualified lookups. `$user`, and schemas that exist
    (`public`), are left alone."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SHOW search_path").fetchone()
        for schema in _schemas(str(row[0]) if row else ""):
            conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))


def _schemas(search_path: str) -> list[str]:
    """The schema names of a `search_path` setting (`"$user", public`, `kaeru`), quotes removed."""
    names = []
    for part in search_path.split(","):
        name = part.strip()
        if len(name) >= 2 and name.startswith('"') and name.endswith('"'):
            name = name[1:-1].replace('""', '"')
        if name and name != "$user" and not name.startswith("pg_"):
            names.append(name)
    return names


def analyze(url: str) -> None:
    """Gather the planner's statistics now, as autovacuum would by itself a little later: a vault
    just filled has none, and the plans chosen without them are not the ones a real vault gets."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ANALYZE")
