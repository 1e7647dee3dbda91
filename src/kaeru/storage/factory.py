"""The one place that picks a backend: `open_store`, and for `kaeru doctor` `open_health` (the
vault read-only) and `rebuild_text_index`."""

from __future__ import annotations

from typing import Any

from kaeru.config import Settings
from kaeru.storage.base import Store


def open_store(settings: Settings) -> Store:
    """PostgreSQL when `database_url` is set, else the embedded SQLite vault under `vault_dir`."""
    if settings.database_url:
        from kaeru.storage.postgres.store import PostgresStore  # type: ignore[import-untyped,unused-ignore]

        store: Store = PostgresStore(
            settings.database_url,
            lock_timeout_ms=settings.busy_timeout_ms,
            statement_timeout_ms=settings.pg_statement_timeout_ms,
        )
        return store
    from kaeru.storage.sqlite.store import SqliteStore

    return SqliteStore(settings.sqlite_path, busy_timeout_ms=settings.busy_timeout_ms)


def open_health(settings: Settings) -> Any:
    """The vault opened read-only for `kaeru doctor` (never created, migrated or written); the
    object answers `service.doctor.VaultHealth`. Raises NotFound or Unavailable."""
    if settings.database_url:
        from kaeru.storage.postgres.health import PostgresHealth  # type: ignore[import-untyped,unused-ignore]

        return PostgresHealth(settings.database_url)
    from kaeru.storage.sqlite.health import SqliteHealth

    return SqliteHealth(settings.sqlite_path, busy_timeout_ms=settings.busy_timeout_ms)


def rebuild_text_index(store: Store) -> int:
    """Rebuild the full-text index from the nodes (the fix for a `fulltext` failure); rows written."""
    with store.write() as session:
        rebuild: Any = session
        return int(rebuild.rebuild_text_index())
