"""`open_store` is the one place that picks a backend."""

from __future__ import annotations

from kaeru.config import Settings
from kaeru.storage.base import Store


def open_store(settings: Settings) -> Store:
    """PostgreSQL when `database_url` is set, else the embedded SQLite vault under `vault_dir`."""
    if settings.database_url:
        from kaeru.storage.postgres.store import PostgresStore  # type: ignore[import-untyped,unused-ignore]

        store: Store = PostgresStore(settings.database_url, lock_timeout_ms=settings.busy_timeout_ms)
        return store
    from kaeru.storage.sqlite.store import SqliteStore

    return SqliteStore(settings.sqlite_path, busy_timeout_ms=settings.busy_timeout_ms)
