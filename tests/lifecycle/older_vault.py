"""An older vault, and the lock its upgrade takes: for the tests of upgrading beside serving."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import apsw
import psycopg

from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.factory import open_store
from kaeru.storage.migrate import TEXT_PENDING
from tests.backends import VaultSpec


def older_vault(vault: VaultSpec) -> None:
    """A vault with one note whose text index a migration asked to rebuild (what SQLite 020/021 and
    PostgreSQL 015/016 leave behind in every vault written before them)."""
    settings = vault.settings()
    store = open_store(settings)
    try:
        run = build_server(Service(store, settings)).registry.run
        assert run("note", {"initiative": "upgrade", "text": "the kingfisher nests by the weir"})["state"] == "applied"
        with store.write() as session:
            session._db.run("INSERT INTO meta (key, value) VALUES (?, '1')", (TEXT_PENDING,))
    finally:
        store.close()


@contextlib.contextmanager
def migration_lock(vault: VaultSpec) -> Iterator[None]:
    """Hold the lock a migration takes, as another process upgrading this vault would."""
    if vault.backend == "sqlite":
        conn = apsw.Connection(str(vault.settings().sqlite_path))
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            conn.execute("ROLLBACK")
            conn.close()
    else:
        from kaeru.storage.postgres.store import _MIGRATION_LOCK

        assert vault.database_url is not None
        with psycopg.connect(vault.database_url, autocommit=True) as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", (_MIGRATION_LOCK,))
            try:
                yield
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (_MIGRATION_LOCK,))
